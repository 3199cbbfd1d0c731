"""The prepared GPU check: `python -m agentlab_trainer.gpu_smoke --work DIR [--dry-run]`,
run by scripts/gpu-smoke.sh and `npm run bench -- gpu`.

On CUDA, with no downloads: a random-init model of a real architecture and size (the Qwen2.5-1.5B
config, written here) with a locally trained tokenizer; NF4 QLoRA and bf16 LoRA training steps with
gradient checkpointing, each its own trainer process (peak memory per method); greedy generation
with transformers and with vLLM serving the adapter (skipped, with the reason, when the vLLM venv is
missing); checks that base and adapter answers differ and that the adapter hash round-trips (the
generate job verifies the unpacked folder against the trained snapshot's hash). Prints ONE JSON line.
Exit 2 without CUDA. `--dry-run` runs the same code on the CPU with a tiny config of the same
architecture and fp32 LoRA (the pytest that keeps this from being dead code)."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from .common import sha256_tree

# Qwen/Qwen2.5-1.5B's config.json (architecture and sizes), written locally: no hub access.
QWEN25_1_5B: dict[str, Any] = {
    "architectures": ["Qwen2ForCausalLM"],
    "model_type": "qwen2",
    "hidden_size": 1536,
    "intermediate_size": 8960,
    "num_hidden_layers": 28,
    "num_attention_heads": 12,
    "num_key_value_heads": 2,
    "vocab_size": 151936,
    "max_position_embeddings": 32768,
    "rope_theta": 1000000.0,
    "rms_norm_eps": 1e-06,
    "tie_word_embeddings": True,
    "hidden_act": "silu",
}
# The same architecture, tiny, for --dry-run.
TINY_QWEN2: dict[str, Any] = {
    **QWEN25_1_5B,
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "max_position_embeddings": 2048,
    "vocab_size": 4096,  # the local tokenizer's size: a 151,936-row table would dwarf the rest on CPU
}
# Dense bf16 peak by GPU name, for the MFU estimate (null when the GPU is not listed).
PEAK_BF16_FLOPS = {"H200": 989e12, "H100": 989e12, "A100": 312e12, "L40S": 362e12, "A10": 125e12, "L4": 121e12}
CORPUS = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "corpus.py.txt"


def sft_rows(n: int) -> list[dict[str, Any]]:
    """Small code-repair chats of unequal lengths (the smoke needs tokens, not a task)."""
    rows = []
    for k in range(n):
        body = "\n".join(f"    total = total + x * {j}  # step {j}" for j in range(k % 7 + 1))
        fn = f"def f_{k}(x):\n    total = 0\n{body}\n    return total"
        rows.append(
            {
                "messages": [
                    {"role": "user", "content": f"Fix the bug:\n```python\n{fn.replace('+', '-', 1)}\n```"},
                    {"role": "assistant", "content": f"```python\n{fn}\n```"},
                ]
            }
        )
    return rows


# --dry-run runs the trainer's commands in this process (the same CLI entry point, its stdout
# captured): four interpreter start-ups with torch imports are most of a CPU dry run.
IN_PROCESS = {"on": False}


def cli(work: Path, command: str, spec: dict[str, Any], timeout: int = 480) -> dict[str, Any]:
    """One trainer command in its own process (so each method's peak memory is its own)."""
    f = work / f"{command}-{time.time_ns()}.json"
    f.write_text(json.dumps(spec))
    if IN_PROCESS["on"]:
        from .__main__ import main as trainer_main

        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            code = trainer_main([command, "--spec", str(f)])
        stdout, stderr = buf.getvalue(), ""
    else:
        p = subprocess.run(
            [sys.executable, "-m", "agentlab_trainer", command, "--spec", str(f)],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        code, stdout, stderr = p.returncode, p.stdout, p.stderr
    events = [json.loads(line) for line in stdout.splitlines() if line.strip()]
    if code != 0 or not events or events[-1].get("status") != "succeeded":
        sys.stderr.write(stderr[-4000:] + (json.dumps(events[-1]) if events else ""))
        raise SystemExit(f"gpu-smoke: {command} failed (exit {code})")
    return {"result": events[-1], "generations": [e for e in events if e["event"] == "generation"]}


def build_model(work: Path, config: dict[str, Any], device: str) -> tuple[Path, int]:
    """A random-init model of `config` with the tiny-model builder's locally trained tokenizer."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    tok_dir = work / "tokenizer-source"
    cli(work, "tiny-model", {"output_dir": str(tok_dir), "corpus": [str(CORPUS)], "vocab_size": 4096, "arch": "qwen2"})
    tok = AutoTokenizer.from_pretrained(tok_dir)
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    cfg = AutoConfig.for_model(
        config["model_type"],
        **{k: v for k, v in config.items() if k != "model_type"},
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
    )
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(cfg, dtype=dtype)
    out = work / "model"
    model.save_pretrained(out, safe_serialization=True)
    tok.save_pretrained(out)
    return out, sum(p.numel() for p in model.parameters())


def mfu(tokens_per_s: float, parameters: int, gpu: str | None) -> float | None:
    """Model FLOPs utilisation of LoRA training with checkpointing: forward 2N + recompute 2N +
    input-gradient backward 2N FLOPs per token (frozen weights get no weight-gradient matmuls)."""
    peak = next((v for k, v in PEAK_BF16_FLOPS.items() if gpu and k in gpu), None)
    return round(6 * parameters * tokens_per_s / peak, 4) if peak else None


def run(work: Path, dry_run: bool) -> dict[str, Any]:
    import torch

    from . import vllm_backend

    t0 = time.time()
    device = "cpu" if dry_run else "cuda"
    gpu = torch.cuda.get_device_name(0) if device == "cuda" else None
    model, parameters = build_model(work, TINY_QWEN2 if dry_run else QWEN25_1_5B, device)
    data = work / "train.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in sft_rows(32 if dry_run else 96)))
    methods = ["lora-fp32"] if dry_run else ["qlora-nf4", "lora-bf16"]
    common = {
        "base_model": str(model),
        "dataset": str(data),
        "epochs": 1,
        "batch_size": 4,
        "learning_rate": 1e-2 if dry_run else 2e-3,  # a few steps must move a random model's greedy answers
        "lora": {"r": 16, "alpha": 32, "dropout": 0.0},
        "gradient_checkpointing": True,
        "local_files_only": True,
    }
    train: dict[str, Any] = {}
    snapshots: dict[str, dict[str, Any]] = {}
    for m in methods:
        rec = cli(work, "train", {**common, "method": m, "output_dir": str(work / f"out-{m}")})["result"]["record"]
        snapshots[m] = rec["snapshots"][-1]
        train[m] = {
            "tokens_per_s": rec["total_tokens_per_s"],
            "supervised_tokens_per_s": rec["supervised_tokens_per_s"],
            "mfu_estimate": mfu(rec["total_tokens_per_s"], parameters, gpu),
            "peak_memory_mb": rec["peak_memory_mb"],
            "steps": rec["steps"],
            "gradient_checkpointing": rec.get("gradient_checkpointing"),
        }
    snap = snapshots[methods[-1]]
    prompts = [{"task_id": f"p{i}", "messages": r["messages"][:1]} for i, r in enumerate(sft_rows(4 if dry_run else 8))]
    gen = {
        "base_model": str(model),
        "prompts": prompts,
        "max_new_tokens": 16 if dry_run else 64,
        "local_files_only": True,
    }
    base = cli(work, "generate", {**gen, "backend": "transformers"})
    # the adapter hash round-trips: the folder hashes to the trained snapshot's hash, and generate
    # (which refuses a mismatch before loading) accepts it
    tuned_spec = {**gen, "adapter": snap["path"], "expected_adapter_sha256": snap["sha256"]}
    tuned = cli(work, "generate", {**tuned_spec, "backend": "transformers"})
    texts = lambda r: {g["task_id"]: g["text"] for g in r["generations"]}  # noqa: E731
    generate: dict[str, Any] = {"transformers": tuned["result"]["generate"]["tokens_per_s"], "vllm": None}
    vllm_skipped = None
    if dry_run:
        vllm_skipped = "dry run (CPU)"
    elif not vllm_backend.vllm_available():
        vllm_skipped = f"no vLLM venv at {vllm_backend.vllm_python()} (scripts/setup-python.sh on a CUDA box)"
    else:
        served = cli(work, "generate", {**tuned_spec, "backend": "vllm"})
        generate["vllm"] = served["result"]["generate"]["tokens_per_s"]
        generate["vllm_versions"] = served["result"]["generate"].get("backend_environment")
    return {
        "bench": "gpu",
        "dry_run": dry_run,
        "gpu": gpu,
        "model": {"config": "tiny qwen2" if dry_run else "Qwen2.5-1.5B (random init)", "parameters": parameters},
        "train": train,
        "generate_tokens_per_s": generate,
        "vllm_skipped": vllm_skipped,
        "checks": {
            "adapter_changes_answers": texts(base) != texts(tuned),
            "adapter_hash_round_trips": sha256_tree(snap["path"]) == snap["sha256"]
            and tuned["result"]["generate"]["adapter_sha256"] == snap["sha256"],
        },
        "wall_s": round(time.time() - t0, 1),
    }


def main(argv: list[str] | None = None) -> int:
    import torch

    parser = argparse.ArgumentParser(prog="gpu_smoke")
    parser.add_argument("--work", required=True)
    parser.add_argument("--dry-run", action="store_true", help="the same code on CPU with a tiny config")
    args = parser.parse_args(argv)
    if not args.dry_run and not torch.cuda.is_available():
        print(
            f"gpu-smoke: CUDA is not available to torch {torch.__version__}; nothing trained (exit 2)", file=sys.stderr
        )
        return 2
    IN_PROCESS["on"] = args.dry_run
    result = run(Path(args.work), args.dry_run)
    print(json.dumps(result), flush=True)
    return 0 if all(result["checks"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
