#!/usr/bin/env bash
# GPU smoke test of the trainer (self-contained, < 5 min on one H200):
#   1. creates the venv if missing (scripts/setup-python.sh; set AGENTLAB_TORCH_SPEC for a CUDA
#      torch build if the default index only has CPU wheels),
#   2. builds a random-init tiny Llama-style model + tokenizer locally (no hub),
#   3. trains bf16 LoRA, and NF4 QLoRA when bitsandbytes imports,
#   4. evaluates each adapter with greedy generation,
#   5. prints each run record (method, tokens/s, peak memory, GPU, driver) as JSON.
# Exit codes: 0 ok, 2 no CUDA (nothing was trained), other = failure.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PKG="$ROOT/apps/agent/python"
PY="${AGENTLAB_PYTHON:-$PKG/.venv/bin/python}"

if [[ ! -x "$PY" ]]; then
  bash "$ROOT/scripts/setup-python.sh"
fi
if ! "$PY" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)"; then
  echo "gpu-smoke: CUDA is not available to $("$PY" -c 'import torch; print("torch", torch.__version__)') — nothing to test here (exit 2)" >&2
  exit 2
fi

WORK="$(mktemp -d "${TMPDIR:-/tmp}/agentlab-gpu-smoke-XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
cd "$PKG"
"$PY" - "$WORK" <<'PYEOF'
import json, os, subprocess, sys, time
from pathlib import Path

work = Path(sys.argv[1])
sys.path.insert(0, "tests")
from helpers import make_samples, write_jsonl  # noqa: E402

t_all = time.time()
write_jsonl(work / "train.jsonl", make_samples(400))
write_jsonl(work / "eval.jsonl", make_samples(40, offset=1000))

def cli(cmd, spec):
    f = work / f"{cmd}-{time.time_ns()}.json"
    f.write_text(json.dumps(spec))
    p = subprocess.run([sys.executable, "-m", "agentlab_trainer", cmd, "--spec", str(f)], capture_output=True, text=True, timeout=240)
    events = [json.loads(l) for l in p.stdout.splitlines() if l.strip()]
    if p.returncode != 0 or not events or events[-1].get("status") != "succeeded":
        sys.stderr.write(p.stderr[-4000:])
        raise SystemExit(f"gpu-smoke: {cmd} failed (exit {p.returncode})")
    return events

tiny = cli("tiny-model", {"output_dir": str(work / "model"), "corpus": ["tests/fixtures/corpus.py.txt"], "vocab_size": 4096,
                          "hidden_size": 512, "intermediate_size": 1408, "num_layers": 4, "num_heads": 8, "num_kv_heads": 4})[-1]["tiny_model"]
print(json.dumps({"tiny_model": {k: tiny[k] for k in ("parameters", "vocab_size", "weights_sha256")}}), flush=True)

try:
    import bitsandbytes  # noqa: F401
    quants = ["none", "nf4"]
except Exception as e:  # noqa: BLE001
    print(f"gpu-smoke: bitsandbytes not importable ({type(e).__name__}: {e}); NF4 QLoRA skipped", file=sys.stderr)
    quants = ["none"]

prompts = [{"task_id": f"t{i}", "messages": s["messages"][:-1]} for i, s in enumerate(make_samples(16, offset=1000))]
for q in quants:
    out = work / f"run-{q}"
    events = cli("train", {
        "base_model": str(work / "model"), "model_id": "gpu-smoke-tiny", "dataset": str(work / "train.jsonl"),
        "eval_dataset": str(work / "eval.jsonl"), "output_dir": str(out), "quantization": q, "device": "cuda",
        "lora": {"r": 16, "alpha": 32, "dropout": 0.0,
                 "target_modules": ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]},
        "epochs": 2, "learning_rate": 1e-3, "batch_size": 16, "grad_accum": 2, "max_length": 512, "seed": 0, "log_every_steps": 5,
    })
    rec = events[-1]["record"]
    expected = "qlora-nf4" if q == "nf4" else "lora-bf16"
    assert rec["method"] == expected, (rec["method"], expected)
    slim = {k: v for k, v in rec.items() if k not in ("pip_freeze", "config")}
    print(json.dumps({"run_record": slim}), flush=True)
    for mode in ("base", "adapter"):
        spec = {"base_model": str(work / "model"), "prompts": prompts, "max_new_tokens": 48, "batch_size": 16, "device": "cuda"}
        if mode == "adapter":
            spec["adapter"] = rec["snapshots"][-1]["path"]
        gen = cli("generate", spec)
        texts = [e["text"] for e in gen if e["event"] == "generation"]
        again = [e["text"] for e in cli("generate", spec) if e["event"] == "generation"]
        assert texts == again, "greedy generation is not deterministic"
        s = gen[-1]["generate"]
        print(json.dumps({"generate": {"method": rec["method"], "mode": mode, "backend": s["backend"], "tokens_per_s": s["tokens_per_s"],
                                       "count": s["count"], "sample": texts[0][:80]}}), flush=True)
    print(f"gpu-smoke: {rec['method']}: {rec['supervised_tokens_per_s']:.0f} supervised tokens/s, peak {rec['peak_memory_mb']:.0f} MiB, "
          f"eval loss {rec['final_eval_loss']:.3f}, GPU {rec['environment']['gpus']}, driver {rec['environment']['driver']}", flush=True)
print(f"gpu-smoke: ok in {time.time() - t_all:.0f}s", flush=True)
PYEOF
