"""Supervised tokens/s of agentlab_trainer vs TRL's SFTTrainer (a fair comparison).

Same model, data, batch, accumulation, assistant-only mask, fp32 precision and one thread on both
sides; the same timed scope: optimizer steps after a warm-up epoch, measured on both sides by one
global torch optimizer step hook (the end of the warm-up epoch's last step to the end of the last
step), over exactly the same supervised tokens (every sample once per timed epoch). Our per-epoch
snapshot save, which falls inside that window and which TRL (save_strategy "no") does not do, is
timed and subtracted. Each trainer runs in its own process; >= 3 repetitions alternate the order
(ours/trl, trl/ours, ...); median and spread (min-max) per model; two models: the 0.43 M tiny
model and a ~20 M one. The ~20 M model runs fewer steps (24 samples, no accumulation, one timed
epoch of 6 optimizer steps after the warm-up epoch) so that a run takes ≈ 2-3 minutes on a
2-core box at load ≈ 12 instead of > 10 (its settings are the same on both sides). The parent prints
one JSON line.

    python bench/train_bench.py                    # parent
    python bench/train_bench.py ours|trl DIR MODEL # child (internal)
"""
from __future__ import annotations

import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "apps" / "agent" / "python"
sys.path.insert(0, str(PKG / "tests"))

REPS = int(os.environ.get("AGENTLAB_BENCH_REPS", "3"))
MODELS = {
    "tiny": {"arch": {"vocab_size": 1024}, "samples": 64},
    # ~20 M parameters: 6 layers of 512, vocab 4096 (tied embeddings); fewer steps (see above)
    "m20": {
        "arch": {"vocab_size": 4096, "hidden_size": 512, "intermediate_size": 1408, "num_layers": 6, "num_heads": 8, "num_kv_heads": 4},
        "samples": 24,
        "settings": {"epochs": 2, "grad_accum": 1},
    },
}
SETTINGS = {
    "epochs": 3,  # epoch 1 warms up, epochs 2-3 are timed
    "batch_size": 4,
    "grad_accum": 2,
    "learning_rate": 2e-4,
    "lr_schedule": "cosine",
    "max_length": 512,
    "seed": 0,
    "threads": 1,  # one intra-op thread: stable on a shared 2-core box (OpenMP spin-waits collapse under load)
    "lora": {"r": 16, "alpha": 32, "dropout": 0.05, "target_modules": ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]},
}


def settings(model: str) -> dict:
    """The shared settings with the model's own overrides (the same for ours and TRL)."""
    return {**SETTINGS, **MODELS[model].get("settings", {})}


class StepClock:
    """Time at the end of every optimizer step of any optimizer (torch's global post-step hook): the
    same instrument on both sides."""

    def __init__(self, s: dict) -> None:
        from torch.optim.optimizer import register_optimizer_step_post_hook

        self.epochs = s["epochs"]
        self.ends: list[float] = []
        register_optimizer_step_post_hook(lambda *_: self.ends.append(time.perf_counter()))

    def timed(self, steps_per_epoch: int, excluded: float = 0.0) -> float:
        """Seconds from the end of the warm-up epoch to the end of the last step, less `excluded`."""
        if len(self.ends) != steps_per_epoch * self.epochs:
            raise SystemExit(f"expected {steps_per_epoch * self.epochs} optimizer steps, saw {len(self.ends)}")
        return self.ends[-1] - self.ends[steps_per_epoch - 1] - excluded


def steps_per_epoch(samples: int, s: dict) -> int:
    return math.ceil(math.ceil(samples / s["batch_size"]) / s["grad_accum"])


def child_ours(work: Path, model: str) -> dict:
    from agentlab_trainer import train as T
    from agentlab_trainer.common import CancelFlag

    s = settings(model)
    clock = StepClock(s)
    saves: list[tuple[float, float]] = []
    save = T.save_snapshot

    def timed_save(*args, **kwargs):  # the per-epoch snapshot: inside the window, not training
        t0 = time.perf_counter()
        try:
            return save(*args, **kwargs)
        finally:
            saves.append((t0, time.perf_counter()))

    T.save_snapshot = timed_save
    rec = T.train(
        {
            "base_model": str(work / model), "dataset": str(work / f"{model}.jsonl"), "output_dir": str(work / f"ours-{time.time_ns()}"),
            "lora": s["lora"], "epochs": s["epochs"], "learning_rate": s["learning_rate"], "lr_schedule": s["lr_schedule"],
            "batch_size": s["batch_size"], "grad_accum": s["grad_accum"], "max_length": s["max_length"], "seed": s["seed"],
            "torch_threads": s["threads"], "log_every_steps": 10_000, "max_grad_norm": 1.0, "quantization": "none",
        },
        CancelFlag(),
    )
    spe = steps_per_epoch(rec["samples"], s)
    inside = sum(b - a for a, b in saves if a >= clock.ends[spe - 1] and b <= clock.ends[-1])
    dt = clock.timed(spe, inside)
    tokens = rec["supervised_tokens_per_epoch"] * (s["epochs"] - 1)
    return {"tokens_per_s": round(tokens / dt, 3), "timed_tokens": tokens, "timed_s": round(dt, 4), "final_loss": rec["final_train_loss"]}


def child_trl(work: Path, model: str) -> dict:
    import torch
    from datasets import Dataset
    from peft import LoraConfig
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    s = settings(model)
    torch.set_num_threads(s["threads"])
    rows = [json.loads(line) for line in (work / f"{model}.jsonl").read_text().splitlines()]
    tok = AutoTokenizer.from_pretrained(work / model)
    lm = AutoModelForCausalLM.from_pretrained(work / model, dtype=torch.float32)
    cfg = SFTConfig(
        output_dir=str(work / "trl"), per_device_train_batch_size=s["batch_size"], gradient_accumulation_steps=s["grad_accum"],
        num_train_epochs=s["epochs"], learning_rate=s["learning_rate"], lr_scheduler_type=s["lr_schedule"], warmup_steps=0,
        max_grad_norm=1.0, weight_decay=0.0, seed=s["seed"], max_length=s["max_length"], packing=False, padding_free=False,
        assistant_only_loss=True, gradient_checkpointing=False, train_sampling_strategy="group_by_length",
        use_cpu=True, bf16=False, fp16=False, save_strategy="no", eval_strategy="no", report_to="none",
        logging_steps=10_000, dataloader_num_workers=0, disable_tqdm=True,
    )
    peft_cfg = LoraConfig(r=s["lora"]["r"], lora_alpha=s["lora"]["alpha"], lora_dropout=s["lora"]["dropout"],
                          target_modules=s["lora"]["target_modules"], bias="none", task_type="CAUSAL_LM")
    trainer = SFTTrainer(model=lm, args=cfg, train_dataset=Dataset.from_list(rows), processing_class=tok, peft_config=peft_cfg)
    # supervised tokens as TRL sees them (assistant mask, shifted like the loss)
    ds = trainer.train_dataset
    if "labels" in ds.column_names:
        per_epoch = sum(sum(1 for x in lab[1:] if x != -100) for lab in ds["labels"])
    else:
        per_epoch = sum(sum(m[1:]) for m in ds["assistant_masks"])
    clock = StepClock(s)
    out = trainer.train()
    dt = clock.timed(steps_per_epoch(len(rows), s))
    tokens = per_epoch * (s["epochs"] - 1)
    return {"tokens_per_s": round(tokens / dt, 3), "timed_tokens": tokens, "timed_s": round(dt, 4), "final_loss": out.training_loss}


def run_child(kind: str, work: Path, model: str) -> dict:
    proc = subprocess.run([sys.executable, __file__, kind, str(work), model], capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr[-4000:])
        raise SystemExit(f"{kind} bench failed with exit {proc.returncode}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def summary(xs: list[float]) -> dict:
    return {"median": round(statistics.median(xs), 3), "min": round(min(xs), 3), "max": round(max(xs), 3)}


def parent() -> None:
    from agentlab_trainer import tiny_model
    from helpers import make_samples, write_jsonl

    out: dict = {"bench": "train", "reps": REPS, "threads": SETTINGS["threads"]}
    only = [m for m in os.environ.get("AGENTLAB_BENCH_MODELS", ",".join(MODELS)).split(",") if m]
    with tempfile.TemporaryDirectory(prefix="agentlab-bench-train-") as tmp:
        work = Path(tmp)
        for name in only:
            m = MODELS[name]
            built = tiny_model.run({"output_dir": str(work / name), "corpus": [str(PKG / "tests" / "fixtures" / "corpus.py.txt")], **m["arch"]})
            write_jsonl(work / f"{name}.jsonl", make_samples(m["samples"]))
            runs: dict[str, list[dict]] = {"ours": [], "trl": []}
            for rep in range(REPS):  # alternate who goes first: load drifts, order must not favour one side
                for kind in (("ours", "trl") if rep % 2 == 0 else ("trl", "ours")):
                    runs[kind].append(run_child(kind, work, name))
            if runs["ours"][0]["timed_tokens"] != runs["trl"][0]["timed_tokens"]:
                sys.stderr.write(f"note: supervised tokens differ ({runs['ours'][0]['timed_tokens']} vs {runs['trl'][0]['timed_tokens']})\n")
            ratios = [o["tokens_per_s"] / t["tokens_per_s"] for o, t in zip(runs["ours"], runs["trl"], strict=True)]
            s = settings(name)
            out[name] = {
                "parameters": built["parameters"],
                "samples": m["samples"],
                "timed_steps": steps_per_epoch(m["samples"], s) * (s["epochs"] - 1),
                "ours_tokens_per_s": summary([r["tokens_per_s"] for r in runs["ours"]]),
                "trl_tokens_per_s": summary([r["tokens_per_s"] for r in runs["trl"]]),
                "ratio": summary(ratios),
                "timed_tokens": {"ours": runs["ours"][0]["timed_tokens"], "trl": runs["trl"][0]["timed_tokens"]},
                "peak_rss_mb": {"ours": max(r["peak_rss_mb"] for r in runs["ours"]), "trl": max(r["peak_rss_mb"] for r in runs["trl"])},
            }
            sys.stderr.write(json.dumps({name: runs}) + "\n")
    print(json.dumps(out))


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] in ("ours", "trl"):
        res = (child_ours if sys.argv[1] == "ours" else child_trl)(Path(sys.argv[2]), sys.argv[3])
        res["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1)
        sys.stdout.write("\n" + json.dumps(res) + "\n")
    else:
        parent()
