"""`train`: LoRA / NF4-QLoRA SFT with our own loop (no HF Trainer). The loss (supervised positions
only), gradient checkpointing and bf16 autocast live in loss.py.

Loss normalization: every micro-batch contributes sum(token CE) / N_window, where N_window is the
number of supervised tokens in the whole accumulation window (a short last window included), so an
optimizer step equals one step on the union of the window's samples with a per-token mean."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from . import data as D
from . import distributed, run_plan
from .common import (
    Canceled,
    CancelFlag,
    UserError,
    emit,
    log,
    memory_mb,
)
from .loss import (
    autocast,
    count_supervised,
    token_loss_sum,
    window_backward,
)
from .resume import restore, save_state
from .run_setup import Run, prepare_run
from .snapshots import finish_record, save_snapshot
from .spec_schema import spec_defaults

# The values of the keys a spec may leave out: the contract's (zod) defaults, read from its schema.
TRAIN_DEFAULTS: dict[str, Any] = spec_defaults("train")
LORA_DEFAULTS: dict[str, Any] = TRAIN_DEFAULTS["lora"]


def normalize_spec(spec: dict[str, Any]) -> dict[str, Any]:
    for key in ("base_model", "dataset", "output_dir"):
        if not isinstance(spec.get(key), str) or not spec[key]:
            raise UserError(f"train spec needs {key}")
    cfg = {**TRAIN_DEFAULTS, **{k: v for k, v in spec.items() if v is not None}}
    cfg["lora"] = {**LORA_DEFAULTS, **(spec.get("lora") or {})}
    ints = {"epochs": 1, "batch_size": 1, "grad_accum": 1, "max_length": 8, "log_every_steps": 1, "world_size": 1}
    ints.update({k: lo for k, lo in (("steps", 1), ("batch_tokens", 8)) if cfg[k] is not None})
    for k, lo in ints.items():
        if not isinstance(cfg[k], int) or isinstance(cfg[k], bool) or cfg[k] < lo:
            raise UserError(f"{k} must be an integer >= {lo}")
    if cfg["steps"] is not None and cfg["steps"] < cfg["epochs"]:
        raise UserError(f"steps ({cfg['steps']}) must be >= epochs ({cfg['epochs']}): each snapshot ends >= 1 step")
    if cfg["batch_tokens"] is not None and cfg["world_size"] > 1:
        raise UserError("batch_tokens needs world_size 1: several ranks deal a window's samples by count")
    if not isinstance(cfg["lora"]["r"], int) or cfg["lora"]["r"] < 1:
        raise UserError("lora.r must be an integer >= 1")
    if not (0.0 <= float(cfg["lora"]["dropout"]) < 1.0):
        raise UserError("lora.dropout must be in [0, 1)")
    if cfg["lr_schedule"] not in ("linear", "cosine", "constant"):
        raise UserError("lr_schedule must be linear, cosine or constant")
    if cfg["parallel"] not in ("ddp", "fsdp"):
        raise UserError("parallel must be ddp or fsdp")
    if cfg["parallel"] == "fsdp" and (cfg["method"] == "qlora-nf4" or cfg["quantization"] == "nf4"):
        raise UserError("parallel fsdp does not shard NF4-quantized bases: use method lora-bf16, or parallel ddp")
    if cfg["parallel"] == "fsdp" and cfg["quantization"] == "auto":
        cfg["quantization"] = "none"  # auto would pick NF4 on a CUDA box with bitsandbytes
    if cfg["quantization"] not in ("auto", "nf4", "none"):
        raise UserError("quantization must be auto, nf4 or none")
    if float(cfg["learning_rate"]) <= 0:
        raise UserError("learning_rate must be > 0")
    return cfg


# ---------------------------------------------------------------- evaluation and steps
# (the loss itself, checkpointing and autocast: loss.py)


def evaluate(model, samples: Sequence[D.Encoded], pad_id: int, device: str, batch_size: int = 8, loss_of=None) -> float:
    """Mean token loss over all supervised tokens of `samples` (sum CE / count). `loss_of(batch)`:
    the summed loss through a wrapper (FSDP: the sharded model computes only inside its forward)."""
    import torch

    was_training = model.training
    model.eval()
    total, n = 0.0, 0
    order = sorted(range(len(samples)), key=lambda i: -len(samples[i]))
    with torch.no_grad():
        for s in range(0, len(order), batch_size):
            batch = D.collate([samples[i] for i in order[s : s + batch_size]], pad_id, device)
            with autocast(device):
                loss_sum, k = (loss_of(batch), count_supervised(batch)) if loss_of else token_loss_sum(model, batch)
            total += float(loss_sum)
            n += k
    if was_training:
        model.train()
    return total / max(n, 1)


# ---------------------------------------------------------------- main loop


@dataclass
class _Totals:
    """The counters of the whole run (every epoch), for the progress events and the record."""

    step: int = 0
    sup_tokens: int = 0
    all_tokens: int = 0
    train_time: float = 0.0
    last_loss: float = float("nan")


def train(spec: dict[str, Any], cancel: CancelFlag) -> dict[str, Any]:
    """Epochs of optimizer steps over accumulation windows (or spec.steps cut into `epochs`
    segments), a snapshot after each; the record says what ran (also when canceled, carried by the
    Canceled it raises)."""
    t_start = time.time()
    started_at = datetime.now(timezone.utc).isoformat()
    run = prepare_run(normalize_spec(spec), started_at)
    totals = _Totals()
    first = 1
    if run.cfg["resume"]:
        totals = _Totals(**restore(run, run.cfg["resume"]))
        first = int(run.cfg["resume"]["epoch"]) + 1
        log(f"resumed after epoch {first - 1} (step {totals.step})", also_event=True)
    try:
        for epoch in range(first, run.cfg["epochs"] + 1):
            train_loss = _train_epoch(run, epoch, totals, cancel)
            eval_loss = _evaluate_epoch(run)
            _snapshot_epoch(run, epoch, totals.step, train_loss, eval_loss)
            if epoch < run.cfg["epochs"]:
                save_state(run, epoch, vars(totals))
        run.record["status"] = "succeeded"
    except Canceled:
        run.record["status"] = "canceled"
        raise_canceled = True
    else:
        raise_canceled = False
    finally:
        _finish(run, totals, t_start)
    if raise_canceled:
        raise Canceled(run.record)
    return run.record


def _train_epoch(run: Run, epoch: int, totals: _Totals, cancel: CancelFlag) -> float:
    """One epoch's optimizer steps (one per accumulation window), or with spec.steps one segment's
    (run_plan.py); returns its per-token train loss."""
    cfg = run.cfg
    count, windows = run_plan.segment(run.train_samples, cfg, epoch)
    epoch_loss_sum, epoch_tokens = 0.0, 0
    for w_idx, window in enumerate(windows):
        cancel.raise_if_set()
        t0 = time.perf_counter()
        loss, n, tokens = _optimizer_step(run, window, cancel)
        totals.train_time += time.perf_counter() - t0
        totals.step += 1
        totals.sup_tokens += n
        totals.all_tokens += tokens
        epoch_loss_sum += loss * n
        epoch_tokens += n
        totals.last_loss = loss
        if totals.step % cfg["log_every_steps"] == 0 or totals.step == run.total_steps:
            _emit_progress(run, totals, epoch, (w_idx + 1) / count, loss)
    return epoch_loss_sum / max(epoch_tokens, 1)


def _optimizer_step(run: Run, window: list[list[int]], cancel: CancelFlag) -> tuple[float, int, int]:
    """Backward over the window's micro-batches (this rank's share under torchrun), clip, step.
    Returns the window's loss, its supervised tokens and all its tokens."""
    import torch

    cfg, device = run.cfg, run.device
    if run.dist and run.wrapped is not None:
        share = distributed.shard_window(window, run.dist, cfg["batch_size"])
        micro, dummy = distributed.collate_share(run.train_samples, share, run.pad_id, device)
        loss, n = distributed.window_backward(run.wrapped, micro, run.dist, dummy, cancel, device)
    else:
        micro = [D.collate([run.train_samples[i] for i in b], run.pad_id, device) for b in window]
        loss, n = window_backward(run.model, micro, cancel, device)
    if cfg["max_grad_norm"] and float(cfg["max_grad_norm"]) > 0:
        torch.nn.utils.clip_grad_norm_(run.trainable, float(cfg["max_grad_norm"]))
    run.optimizer.step()
    run.scheduler.step()
    run.optimizer.zero_grad(set_to_none=True)
    if device == "cuda":
        torch.cuda.synchronize()
    return loss, n, sum(int(m["attention_mask"].sum()) for m in micro)


def _emit_progress(run: Run, totals: _Totals, epoch: int, epoch_progress: float, loss: float) -> None:
    tps = totals.sup_tokens / totals.train_time if totals.train_time > 0 else 0.0
    emit(
        "progress",
        step=totals.step,
        total_steps=run.total_steps,
        epoch=epoch,
        epoch_progress=round(epoch_progress, 6),
        loss=round(loss, 6),
        lr=run.scheduler.get_last_lr()[0],
        tokens_per_s=round(tps, 2),
        eta_s=round(totals.train_time / totals.step * (run.total_steps - totals.step), 2),
        memory_mb=round(memory_mb(run.device), 1),
    )


def _evaluate_epoch(run: Run) -> float | None:
    if not run.eval_samples:
        return None
    batch_size = run.cfg["eval_batch_size"] or run.cfg["batch_size"]
    return evaluate(run.model, run.eval_samples, run.pad_id, run.device, batch_size, run.loss_of)


def _snapshot_epoch(run: Run, epoch: int, step: int, train_loss: float, eval_loss: float | None) -> None:
    """The epoch's adapter snapshot, written by rank 0 and announced as an artifact."""
    record = run.record
    meta = {
        "epoch": epoch,
        "step": step,
        "train_loss": train_loss,
        "eval_loss": eval_loss,
        "method": run.method,
        "base_model_weights_sha256": run.base_hash,
        "chat_template_sha256": record["chat_template_sha256"],
        "dataset_sha256": record["dataset_sha256"],
    }
    # FSDP: every rank takes part in gathering the adapter's shards (the base stays sharded).
    adapter = distributed.adapter_state(run.model) if run.fsdp else None
    if run.dist and not run.dist.is_main:
        return  # rank 0 writes the snapshots (every rank holds the same weights)
    path, digest, files = save_snapshot(run.model, run.out_dir, epoch, meta, adapter)
    snap = {
        "epoch": epoch,
        "path": str(path),
        "sha256": digest,
        "files": files,
        "train_loss": train_loss,
        "eval_loss": eval_loss,
        "step": step,
    }
    record["snapshots"].append(snap)
    record["epochs_completed"] = epoch
    emit("artifact", kind="adapter", **snap)
    log(
        f"epoch {epoch}: train loss {train_loss:.4f}"
        + (f", eval loss {eval_loss:.4f}" if eval_loss is not None else "")
    )


def _finish(run: Run, totals: _Totals, t_start: float) -> None:
    """What the record says however the run ended (succeeded, canceled, or an error on its way up)."""
    record, dist = run.record, run.dist
    record["steps"] = totals.step
    record["final_train_loss"] = totals.last_loss if not math.isnan(totals.last_loss) else None
    record["final_eval_loss"] = record["snapshots"][-1]["eval_loss"] if record["snapshots"] else None
    finish_record(record, run.device, t_start, totals.train_time, totals.sup_tokens)
    record["total_tokens_per_s"] = round(totals.all_tokens / totals.train_time, 3) if totals.train_time > 0 else 0.0
    record["world_size"] = dist.world_size if dist else 1
    record["parallel"] = run.cfg["parallel"] if dist else None
    if dist:
        distributed.shutdown()


def main(spec: dict[str, Any], cancel: CancelFlag) -> None:
    record = train(spec, cancel)
    emit("result", command="train", status="succeeded", record=record)
