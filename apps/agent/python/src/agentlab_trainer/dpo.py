"""`dpo`: preference training (sigmoid DPO, optional SFT term on the chosen answer) with our own
loop, under the SFT guarantees: assistant-only log-probs over the full chat template, no packing,
LoRA or NF4 QLoRA through the same model loading as `train`, per-epoch immutable snapshots with
hashes, a run record. The reference policy is the frozen starting policy: its log-probs are computed
once, before the first update (the base with the adapter disabled, or the starting SFT adapter).

Dropout is off in the policy and the reference (dpo_dynamics.disable_dropout). Each epoch ends
with the train pairs' Δ log-prob of the chosen and the rejected answers against the reference, in
the epoch's last progress event and its snapshot, with a warning when the chosen one fell.

`score_only`: the reference log-probs and margins only (no training, no snapshot); pair building
stores them as each pair's margin before training. At step 1 the policy is the reference, so every
pair's loss is log 2 whatever its margin: the margin is a description, not a reason to drop a pair."""

from __future__ import annotations

import math
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from . import data as D
from .common import (
    Canceled,
    CancelFlag,
    UserError,
    emit,
    log,
    memory_mb,
    pick_device,
    sha256_file,
    sha256_text,
    sha256_tree,
)
from .dpo_data import Pair, load_pairs, reference_logps, window_backward
from .dpo_dynamics import disable_dropout, displacement_warning, logp_deltas
from .modeling import attach_lora, load_model, load_tokenizer
from .schedule import lr_lambda, order_seed, plan_windows
from .snapshots import finish_record, save_snapshot
from .spec_schema import spec_defaults

# The values of the keys a spec may leave out: the contract's (zod) defaults, read from its schema.
DPO_DEFAULTS: dict[str, Any] = spec_defaults("dpo")


def normalize_spec(spec: dict[str, Any]) -> dict[str, Any]:
    for key in ("base_model", "pairs", "output_dir"):
        if not isinstance(spec.get(key), str) or not spec[key]:
            raise UserError(f"dpo spec needs {key}")
    cfg = {**DPO_DEFAULTS, **{k: v for k, v in spec.items() if v is not None}}
    cfg["lora"] = {**DPO_DEFAULTS["lora"], **(spec.get("lora") or {})}
    if not float(cfg["beta"]) > 0:
        raise UserError("beta must be > 0")
    if float(cfg["sft_weight"]) < 0:
        raise UserError("sft_weight must be >= 0")
    if cfg["objective"] not in ("dpo", "rft"):
        raise UserError(f"objective must be dpo or rft, got {cfg['objective']!r}")
    if cfg["start_adapter"] and not Path(cfg["start_adapter"]).is_dir():
        raise UserError(f"start_adapter folder not found: {cfg['start_adapter']}")
    if cfg["expected_start_adapter_sha256"] and not cfg["start_adapter"]:
        raise UserError("expected_start_adapter_sha256 is set but start_adapter is not")
    return cfg


def load_policy(cfg: dict[str, Any], device: str):
    """(model, method, start adapter hash): a fresh LoRA on the base, or the starting adapter made
    trainable (its hash checked first, as generate checks a snapshot)."""
    model, method = load_model(
        cfg["base_model"],
        device=device,
        quantization=cfg["quantization"],
        local_files_only=cfg["local_files_only"],
        method=cfg["method"],
        revision=cfg["revision"],
    )
    if not cfg["start_adapter"]:
        return attach_lora(model, cfg["lora"], int(cfg["seed"])), method, None
    digest = sha256_tree(cfg["start_adapter"])
    want = cfg["expected_start_adapter_sha256"]
    if want and digest != want:
        raise UserError(f"start adapter hash mismatch: the folder hashes to {digest}, expected {want}")
    from peft import PeftModel

    return PeftModel.from_pretrained(model, cfg["start_adapter"], is_trainable=True), method, digest


def pair_rows(pairs: list[Pair]) -> list[dict[str, Any]]:
    """Per pair, under the reference: log-probs, their margin (chosen − rejected) and token counts."""
    return [
        {
            "pair_id": p.pair_id,
            "ref_chosen_logp": p.ref_chosen,
            "ref_rejected_logp": p.ref_rejected,
            "margin": p.ref_chosen - p.ref_rejected,
            "chosen_tokens": p.chosen.n_supervised,
            "rejected_tokens": p.rejected.n_supervised,
            "weight": p.weight,
        }
        for p in pairs
    ]


def run(spec: dict[str, Any], cancel: CancelFlag) -> dict[str, Any]:
    import torch

    t_start = time.time()
    started_at = datetime.now(timezone.utc).isoformat()
    cfg = normalize_spec(spec)
    if cfg["torch_threads"]:
        torch.set_num_threads(int(cfg["torch_threads"]))
    device = "cpu" if cfg["method"] == "lora-fp32" else pick_device(cfg["device"])
    seed = int(cfg["seed"])
    torch.manual_seed(seed)
    out_dir = Path(cfg["output_dir"])
    out_dir.mkdir(parents=True, exist_ok=True)

    tokenizer = load_tokenizer(cfg["base_model"], cfg["local_files_only"])
    eot, eot_id = D.resolve_eot(tokenizer, cfg["eot_token"])
    pairs = load_pairs(tokenizer, cfg["pairs"], eot, eot_id, cfg["max_length"], swap=bool(cfg["swap_labels"]))
    pad_id = int(tokenizer.pad_token_id)
    model, method, start_sha = load_policy(cfg, device)
    dropouts = disable_dropout(model)
    reference_logps(model, pairs, pad_id, device, int(cfg["batch_size"]), fresh_adapter=start_sha is None)
    log(f"{len(pairs)} preference pairs; reference log-probs computed", also_event=True)
    from .generate import model_identity

    base_hash = model_identity(cfg)["weights_sha256"]
    template = tokenizer.chat_template if isinstance(tokenizer.chat_template, str) else str(tokenizer.chat_template)
    record: dict[str, Any] = {
        "status": "running",
        "mode": "score" if cfg["score_only"] else "train",
        "method": method,
        "device": device,
        "config": cfg,
        "pairs_sha256": sha256_file(cfg["pairs"]),
        "chat_template_sha256": sha256_text(template),
        "model": {"id": cfg["model_id"] or cfg["base_model"], "path": cfg["base_model"], "weights_sha256": base_hash},
        "start_adapter_sha256": start_sha,
        "reference": "start_adapter" if start_sha else "base (adapter disabled)",
        "seed": seed,
        "eot_token": eot,
        "beta": float(cfg["beta"]),
        "sft_weight": objective_weights(cfg)[1],
        "objective": cfg["objective"],
        "swap_labels": bool(cfg["swap_labels"]),
        "dropout_modules_disabled": dropouts,
        "pair_count": len(pairs),
        "pairs": pair_rows(pairs),
        "trainable_parameters": sum(p.numel() for p in model.parameters() if p.requires_grad),
        "total_steps": 0,
        "steps": 0,
        "epochs_completed": 0,
        "snapshots": [],
        "started_at": started_at,
    }
    stats = {"steps": 0, "tokens": 0, "time": 0.0}
    try:
        if not cfg["score_only"]:
            train_loop(model, pairs, cfg, device, pad_id, out_dir, record, stats, cancel)
        record["status"] = "succeeded"
    except Canceled:
        record["status"] = "canceled"
        raise_canceled = True
    else:
        raise_canceled = False
    finally:
        record["steps"] = stats["steps"]
        finish_record(record, device, t_start, stats["time"], int(stats["tokens"]))
    if raise_canceled:
        raise Canceled(record)
    return record


def objective_weights(cfg: dict[str, Any]) -> tuple[float, float, float]:
    """(β, SFT weight, DPO weight): the recipe's for dpo; for rft the SFT term alone at weight 1."""
    if cfg["objective"] == "rft":
        return float(cfg["beta"]), 1.0, 0.0
    return float(cfg["beta"]), float(cfg["sft_weight"]), 1.0


def train_loop(model, pairs, cfg, device, pad_id, out_dir, record, stats, cancel: CancelFlag) -> None:
    import torch

    model.train()
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=float(cfg["learning_rate"]), weight_decay=float(cfg["weight_decay"]))
    windows_per_epoch = math.ceil(math.ceil(len(pairs) / cfg["batch_size"]) / cfg["grad_accum"])
    total_steps = windows_per_epoch * cfg["epochs"]
    record["total_steps"] = total_steps
    warmup = (
        int(cfg["warmup_steps"])
        if cfg["warmup_steps"] is not None
        else int(round(float(cfg["warmup_ratio"]) * total_steps))
    )
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda(cfg["lr_schedule"], warmup, total_steps))
    beta, sft_weight, dpo_weight = objective_weights(cfg)
    for epoch in range(1, cfg["epochs"] + 1):
        windows = plan_windows(pairs, cfg["batch_size"], cfg["grad_accum"], order_seed(int(cfg["seed"]), epoch))
        sums = {"loss": 0.0, "margin": 0.0, "accuracy": 0.0}
        for w_idx, window in enumerate(windows):
            cancel.raise_if_set()
            t0 = time.perf_counter()
            step_stats, tokens = window_backward(
                model, [[pairs[i] for i in b] for b in window], pad_id, device, beta, sft_weight, dpo_weight
            )
            if cfg["max_grad_norm"] and float(cfg["max_grad_norm"]) > 0:
                torch.nn.utils.clip_grad_norm_(trainable, float(cfg["max_grad_norm"]))
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            if device == "cuda":
                torch.cuda.synchronize()
            stats["time"] += time.perf_counter() - t0
            stats["steps"] += 1
            stats["tokens"] += tokens
            step = stats["steps"]
            for k in sums:
                sums[k] += step_stats[k]
            last = w_idx == len(windows) - 1
            # The epoch's end: what the updates did to each side's likelihood on the train pairs.
            dyn: dict[str, Any] = {}
            if last:
                deltas = logp_deltas(model, pairs, pad_id, device, int(cfg["batch_size"]))
                warning = displacement_warning(deltas)
                dyn = {k: round(v, 6) for k, v in deltas.items()}
                if warning:
                    dyn["logp_warning"] = warning
                    log(f"epoch {epoch}: {warning}")
            if step % cfg["log_every_steps"] == 0 or step == total_steps or last:
                emit(
                    "progress",
                    step=step,
                    total_steps=total_steps,
                    epoch=epoch,
                    epoch_progress=round((w_idx + 1) / len(windows), 6),
                    loss=round(step_stats["loss"], 6),
                    lr=scheduler.get_last_lr()[0],
                    tokens_per_s=round(stats["tokens"] / stats["time"], 2) if stats["time"] > 0 else 0.0,
                    eta_s=round(stats["time"] / step * (total_steps - step), 2),
                    memory_mb=round(memory_mb(device), 1),
                    dpo_loss=round(step_stats["dpo_loss"], 6),
                    sft_loss=round(step_stats["sft_loss"], 6),
                    reward_margin=round(step_stats["margin"], 6),
                    preference_accuracy=round(step_stats["accuracy"], 6),
                    chosen_reward=round(step_stats["chosen"], 6),
                    rejected_reward=round(step_stats["rejected"], 6),
                    **dyn,
                )
        n = max(len(windows), 1)
        meta = {
            "epoch": epoch,
            "step": stats["steps"],
            "train_loss": sums["loss"] / n,
            "reward_margin": sums["margin"] / n,
            "preference_accuracy": sums["accuracy"] / n,
            "method": record["method"],
            "base_model_weights_sha256": record["model"]["weights_sha256"],
            "start_adapter_sha256": record["start_adapter_sha256"],
            "chat_template_sha256": record["chat_template_sha256"],
            "pairs_sha256": record["pairs_sha256"],
            "beta": beta,
        }
        path, digest, files = save_snapshot(model, out_dir, epoch, meta)
        snap = {
            "epoch": epoch,
            "path": str(path),
            "sha256": digest,
            "files": files,
            "train_loss": meta["train_loss"],
            "eval_loss": None,
            "step": stats["steps"],
            "reward_margin": meta["reward_margin"],
            "preference_accuracy": meta["preference_accuracy"],
            "chosen_logp_delta": dyn["chosen_logp_delta"],
            "rejected_logp_delta": dyn["rejected_logp_delta"],
            "logp_warning": dyn.get("logp_warning"),
        }
        record["snapshots"].append(snap)
        record["epochs_completed"] = epoch
        emit("artifact", kind="adapter", **snap)
        log(f"epoch {epoch}: dpo loss {meta['train_loss']:.4f}, margin {meta['reward_margin']:.4f}")


def main(spec: dict[str, Any], cancel: CancelFlag) -> None:
    emit("result", command="dpo", status="succeeded", dpo=run(spec, cancel))
