"""Warm-up of a freshly built tiny model: a short full-parameter pass over chat samples
so that a random-init base writes parseable answers at all. The samples come from the caller, who
builds them from train-split text only (the demo: each train task's prompt answered with its own
buggy MAIN file unchanged, so the base learns the answer format and copying, never a repair).
Uses the trainer's own encoding (assistant-only labels, pre-flight) and loss. What it trained on is
returned as a record that `tiny-model` stores in the folder's stamp and in agentlab-warmup.json."""

from __future__ import annotations

import math
import time
from typing import Any

from . import data as D
from .common import UserError, emit, log, rss_mb, sha256_file

DEFAULTS: dict[str, Any] = {
    "steps": 300,
    "learning_rate": 3e-3,
    "batch_size": 8,
    "seed": 0,
    "max_length": 1024,
    "warmup_steps": 20,
    "full_sequence": True,
}


def normalize(spec: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(spec.get("dataset"), str) or not spec["dataset"]:
        raise UserError("warmup needs dataset: a JSONL file of {messages}")
    out = {**DEFAULTS, **{k: v for k, v in spec.items() if v is not None}}
    for k in ("steps", "batch_size", "max_length", "warmup_steps", "seed"):
        if not isinstance(out[k], int) or out[k] < 0:
            raise UserError(f"warmup.{k} must be a non-negative integer")
    if out["steps"] < 1 or out["batch_size"] < 1:
        raise UserError("warmup.steps and warmup.batch_size must be at least 1")
    if not isinstance(out["full_sequence"], bool):
        raise UserError("warmup.full_sequence must be a boolean")
    if not isinstance(out["learning_rate"], (int, float)) or not 0 < out["learning_rate"] <= 1:
        raise UserError("warmup.learning_rate must be in (0, 1]")
    return out


# A progress event every few steps: the job page and the experiment form show how far the warm-up is.
PROGRESS_EVERY = 5


def _progress(
    step: int, total: int, epoch: int, epoch_progress: float, losses: list[float], sched, tokens: int, secs: float
) -> None:
    """The warm-up's steps as the trainer's `progress` event (the tiny-model job's progress contract)."""
    recent = losses[-PROGRESS_EVERY:]
    emit(
        "progress",
        step=step,
        total_steps=total,
        epoch=epoch + 1,
        epoch_progress=round(min(1.0, epoch_progress), 6),
        loss=round(sum(recent) / len(recent), 6),
        lr=sched.get_last_lr()[0],
        tokens_per_s=round(tokens / secs, 2) if secs > 0 else 0.0,
        eta_s=round(secs / step * (total - step), 2),
        memory_mb=round(rss_mb(), 1),
    )


def run(model, tokenizer, spec: dict[str, Any]) -> dict[str, Any]:
    import torch

    from .loss import token_loss_sum

    cfg = normalize(spec)
    eot, eot_id = D.resolve_eot(tokenizer)
    samples = D.encode_dataset(tokenizer, cfg["dataset"], eot, eot_id, cfg["max_length"], where="warm-up dataset")
    if cfg["full_sequence"]:
        # Language modelling on the whole sample (prompt included), as pre-training would: the prompt
        # repeats names (instruction, code, public test), so every sample holds several copy events
        # instead of one answer, and copying is learned in far fewer steps. Train-split text only.
        samples = [D.Encoded(s.input_ids, [D.IGNORE, *s.input_ids[1:]]) for s in samples]
    pad_id = tokenizer.pad_token_id
    torch.manual_seed(cfg["seed"])
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["learning_rate"], weight_decay=0.0)
    total, warm = cfg["steps"], cfg["warmup_steps"]
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (s + 1) / warm if s < warm else 0.5 * (1 + math.cos(math.pi * (s - warm) / max(1, total - warm)))
    )
    t0 = time.time()
    step, epoch, losses, tokens = 0, 0, [], 0
    while step < total:
        # A fresh length-grouped order per pass over the samples, derived from (seed, pass).
        batches = D.length_grouped_batches(
            [len(s) for s in samples], cfg["batch_size"], cfg["seed"] * 1_000_003 + epoch
        )
        for i, idx in enumerate(batches):
            if step >= total:
                break
            batch = D.collate([samples[i] for i in idx], pad_id)
            loss_sum, n = token_loss_sum(model, batch)
            (loss_sum / max(1, n)).backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad(set_to_none=True)
            losses.append(float(loss_sum.detach()) / max(1, n))
            step += 1
            tokens += int(n)
            if step % PROGRESS_EVERY == 0 or step == total:
                _progress(step, total, epoch, (i + 1) / len(batches), losses, sched, tokens, time.time() - t0)
            if step % 50 == 0 or step == total:
                log(f"warm-up step {step}/{total} loss {sum(losses[-50:]) / len(losses[-50:]):.4f}")
        epoch += 1
    model.eval()
    tail = losses[-20:]
    return {
        "dataset_sha256": sha256_file(cfg["dataset"]),
        "samples": len(samples),
        "supervised_tokens": sum(s.n_supervised for s in samples),
        "steps": step,
        "passes": epoch,
        "learning_rate": cfg["learning_rate"],
        "full_sequence": cfg["full_sequence"],
        "batch_size": cfg["batch_size"],
        "seed": cfg["seed"],
        "first_loss": round(losses[0], 4),
        "final_loss": round(sum(tail) / len(tail), 4),
        "train_s": round(time.time() - t0, 2),
        "task_ids": list(spec.get("task_ids") or []),
        "description": str(spec.get("description") or ""),
    }
