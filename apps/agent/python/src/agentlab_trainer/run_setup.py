"""The SFT run as the loop works with it: device and ranks, tokenizer and samples, the model with
its adapter, optimizer and schedule, and the run record, built once (train.py runs the loop)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import data as D
from . import distributed, run_plan
from .common import (
    log,
    pick_device,
    sha256_file,
    sha256_text,
)
from .loss import (
    enable_checkpointing,
    resolve_checkpointing,
)
from .modeling import attach_lora, load_model, load_tokenizer, resolve_model
from .schedule import lr_lambda


@dataclass
class Run:
    """What the loop works with, built once by `prepare_run` (the order of its steps fixes the RNG)."""

    cfg: dict[str, Any]
    device: str
    dist: distributed.Dist | None
    fsdp: bool
    model: Any
    wrapped: Any
    loss_of: Any
    trainable: list[Any]
    optimizer: Any
    scheduler: Any
    train_samples: list[D.Encoded]
    eval_samples: list[D.Encoded] | None
    pad_id: int
    out_dir: Path
    method: str
    base_hash: str
    total_steps: int
    record: dict[str, Any]


def prepare_run(cfg: dict[str, Any], started_at: str) -> Run:
    """Device and ranks, tokenizer and samples, the model with its adapter, optimizer and schedule, and the record."""
    import torch

    if cfg["torch_threads"]:
        torch.set_num_threads(int(cfg["torch_threads"]))
    # An explicit method fixes the device too: lora-fp32 is a CPU method on every box.
    device = "cpu" if cfg["method"] == "lora-fp32" else pick_device(cfg["device"])
    # Under torchrun: one rank per GPU, global loss normalization (distributed.py).
    # init() makes "cuda" this rank's GPU; DDP is told the index.
    dist = distributed.from_env()
    rank_device = distributed.init(dist, device) if dist else device
    seed = int(cfg["seed"])
    torch.manual_seed(seed)
    out_dir = Path(cfg["output_dir"])
    out_dir.mkdir(parents=True, exist_ok=True)

    # a hub id is resolved once: tokenizer and weights come from the same snapshot
    model_path, _ = resolve_model(cfg["base_model"], cfg["revision"], cfg["local_files_only"])
    tokenizer = load_tokenizer(model_path, True)
    eot, eot_id = D.resolve_eot(tokenizer, cfg["eot_token"])
    train_samples = D.encode_dataset(tokenizer, cfg["dataset"], eot, eot_id, cfg["max_length"], "dataset")
    eval_samples = (
        D.encode_dataset(tokenizer, cfg["eval_dataset"], eot, eot_id, cfg["max_length"], "eval_dataset")
        if cfg["eval_dataset"]
        else None
    )
    pad_id = int(tokenizer.pad_token_id)
    log(
        f"{len(train_samples)} training samples, {sum(s.n_supervised for s in train_samples)} supervised tokens per epoch",
        also_event=True,
    )

    fsdp = dist is not None and cfg["parallel"] == "fsdp"
    model, method = load_model(
        model_path,
        device=device,
        quantization=cfg["quantization"],
        local_files_only=True,
        method=cfg["method"],
        # FSDP on GPUs: the base stays in host memory until fully_shard moves each layer's shard
        # to this rank's GPU, so a base larger than one GPU can still be loaded.
        place=not (fsdp and device == "cuda"),
    )
    base_parameters = sum(p.numel() for p in model.parameters())
    checkpointing = resolve_checkpointing(cfg["gradient_checkpointing"], base_parameters)
    if checkpointing:
        enable_checkpointing(model)
    model = attach_lora(model, cfg["lora"], seed)
    model.train()
    wrap = distributed.wrap_fsdp if fsdp else distributed.wrap_ddp
    wrapped = wrap(model, rank_device) if dist else None
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=float(cfg["learning_rate"]), weight_decay=float(cfg["weight_decay"]))

    total_steps = run_plan.total_steps(train_samples, cfg)
    warmup = (
        int(cfg["warmup_steps"])
        if cfg["warmup_steps"] is not None
        else int(round(float(cfg["warmup_ratio"]) * total_steps))
    )
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda(cfg["lr_schedule"], warmup, total_steps))
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()

    template = tokenizer.chat_template if isinstance(tokenizer.chat_template, str) else str(tokenizer.chat_template)
    # A hub id is hashed from its resolved snapshot in the local cache (the same rule as generate).
    from .generate import model_identity

    base_hash = model_identity(
        {"base_model": cfg["base_model"], "revision": cfg["revision"], "local_files_only": cfg["local_files_only"]}
    )["weights_sha256"]
    record: dict[str, Any] = {
        "status": "running",
        "method": method,
        "device": device,
        "config": cfg,
        "dataset_sha256": sha256_file(cfg["dataset"]),
        "eval_dataset_sha256": sha256_file(cfg["eval_dataset"]) if cfg["eval_dataset"] else None,
        "chat_template_sha256": sha256_text(template),
        "model": {"id": cfg["model_id"] or cfg["base_model"], "path": cfg["base_model"], "weights_sha256": base_hash},
        "seed": seed,
        "eot_token": eot,
        "samples": len(train_samples),
        "eval_samples": len(eval_samples) if eval_samples is not None else 0,
        "supervised_tokens_per_epoch": sum(s.n_supervised for s in train_samples),
        "trainable_parameters": sum(p.numel() for p in trainable),
        "gradient_checkpointing": checkpointing,
        "total_steps": total_steps,
        "steps": 0,
        "epochs_completed": 0,
        "snapshots": [],
        "started_at": started_at,
    }
    return Run(
        cfg=cfg,
        device=device,
        dist=dist,
        fsdp=fsdp,
        model=model,
        wrapped=wrapped,
        # FSDP: the sharded model computes only through the wrapper's forward (evaluation included).
        loss_of=wrapped if fsdp else None,
        trainable=trainable,
        optimizer=optimizer,
        scheduler=scheduler,
        train_samples=train_samples,
        eval_samples=eval_samples,
        pad_id=pad_id,
        out_dir=out_dir,
        method=method,
        base_hash=base_hash,
        total_steps=total_steps,
        record=record,
    )
