"""Supervised tokens/s of agentlab_trainer vs TRL's SFTTrainer: same tiny model, data and settings,
on CPU. Each trainer runs in its own process (clean peak RSS); the parent prints one JSON line.

    python bench/train_bench.py            # parent: builds the model/data, runs both, prints JSON
    python bench/train_bench.py ours|trl DIR  # child (internal)
"""
from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "apps" / "agent" / "python"
sys.path.insert(0, str(PKG / "tests"))

SETTINGS = {
    "epochs": 2,
    "batch_size": 4,
    "grad_accum": 2,
    "learning_rate": 2e-4,
    "lr_schedule": "cosine",
    "max_length": 512,
    "seed": 0,
    "threads": 1,  # one intra-op thread: stable on a shared 2-core box (OpenMP spin-waits collapse under load)
    "lora": {"r": 16, "alpha": 32, "dropout": 0.05, "target_modules": ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]},
    "samples": 64,
}


def child_ours(work: Path) -> dict:
    from agentlab_trainer.common import CancelFlag
    from agentlab_trainer.train import train

    s = SETTINGS
    rec = train(
        {
            "base_model": str(work / "model"), "dataset": str(work / "train.jsonl"), "output_dir": str(work / "ours"),
            "lora": s["lora"], "epochs": s["epochs"], "learning_rate": s["learning_rate"], "lr_schedule": s["lr_schedule"],
            "batch_size": s["batch_size"], "grad_accum": s["grad_accum"], "max_length": s["max_length"], "seed": s["seed"],
            "torch_threads": s["threads"], "log_every_steps": 10_000, "max_grad_norm": 1.0, "quantization": "none",
        },
        CancelFlag(),
    )
    return {
        "tokens_per_s": rec["supervised_tokens_per_s"],
        "supervised_tokens": rec["supervised_tokens"],
        "train_time_s": rec["train_time_s"],
        "final_loss": rec["final_train_loss"],
    }


def child_trl(work: Path) -> dict:
    import torch
    from datasets import Dataset
    from peft import LoraConfig
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    s = SETTINGS
    torch.set_num_threads(s["threads"])
    rows = [json.loads(line) for line in (work / "train.jsonl").read_text().splitlines()]
    tok = AutoTokenizer.from_pretrained(work / "model")
    model = AutoModelForCausalLM.from_pretrained(work / "model", dtype=torch.float32)
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
    trainer = SFTTrainer(model=model, args=cfg, train_dataset=Dataset.from_list(rows), processing_class=tok, peft_config=peft_cfg)
    # supervised tokens as TRL sees them (assistant mask, shifted like the loss)
    ds = trainer.train_dataset
    if "labels" in ds.column_names:
        per_epoch = sum(sum(1 for x in lab[1:] if x != -100) for lab in ds["labels"])
    else:
        per_epoch = sum(sum(m[1:]) for m in ds["assistant_masks"])
    t0 = time.perf_counter()
    out = trainer.train()
    dt = time.perf_counter() - t0
    return {
        "tokens_per_s": round(per_epoch * s["epochs"] / dt, 3),
        "supervised_tokens": per_epoch * s["epochs"],
        "train_time_s": round(dt, 4),
        "final_loss": out.training_loss,
    }


def run_child(kind: str, work: Path) -> dict:
    proc = subprocess.run([sys.executable, __file__, kind, str(work)], capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr[-4000:])
        raise SystemExit(f"{kind} bench failed with exit {proc.returncode}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def parent() -> None:
    from agentlab_trainer import tiny_model
    from helpers import make_samples, write_jsonl

    with tempfile.TemporaryDirectory(prefix="agentlab-bench-train-") as tmp:
        work = Path(tmp)
        tiny_model.run({"output_dir": str(work / "model"), "corpus": [str(PKG / "tests" / "fixtures" / "corpus.py.txt")], "vocab_size": 1024})
        write_jsonl(work / "train.jsonl", make_samples(SETTINGS["samples"]))
        # warm the page cache for both (imports dominate a cold start, not what we measure)
        ours = run_child("ours", work)
        trl = run_child("trl", work)
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
    sys.stderr.write(json.dumps({"settings": SETTINGS, "ours": ours, "trl": trl}, indent=1) + "\n")
    print(json.dumps({
        "bench": "train",
        "ours_tokens_per_s": ours["tokens_per_s"],
        "trl_tokens_per_s": trl["tokens_per_s"],
        "ratio": round(ours["tokens_per_s"] / trl["tokens_per_s"], 3),
        "peak_rss_mb": round(peak, 1),
        "ours_peak_rss_mb": ours["peak_rss_mb"],
        "trl_peak_rss_mb": trl["peak_rss_mb"],
        "supervised_tokens": {"ours": ours["supervised_tokens"], "trl": trl["supervised_tokens"]},
    }))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] in ("ours", "trl"):
        res = (child_ours if sys.argv[1] == "ours" else child_trl)(Path(sys.argv[2]))
        res["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1)
        sys.stdout.write("\n" + json.dumps(res) + "\n")
    else:
        parent()
