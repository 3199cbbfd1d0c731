"""The optimizer schedule every training command shares (train, dpo): the learning-rate curve, the
per-epoch data order and the accumulation windows."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence

from . import data as D


def lr_lambda(schedule: str, warmup: int, total: int):
    def f(step: int) -> float:  # step = optimizer steps already taken
        if warmup > 0 and step < warmup:
            return (step + 1) / warmup
        if schedule == "constant":
            return 1.0
        progress = (step - warmup) / max(1, total - warmup)
        progress = min(max(progress, 0.0), 1.0)
        if schedule == "linear":
            return max(0.0, 1.0 - progress)
        return 0.5 * (1.0 + math.cos(math.pi * progress))

    return f


def order_seed(seed: int, epoch: int) -> int:
    """The data-order RNG seed of (seed, epoch): a hash, so that no two pairs share an order
    (`seed + epoch` gave seed 0 / epoch 2 the order of seed 1 / epoch 1)."""
    return int.from_bytes(hashlib.sha256(f"agentlab-data-order:{seed}:{epoch}".encode()).digest()[:8], "big")


def plan_windows(
    samples: Sequence[D.Encoded], batch_size: int, grad_accum: int, seed: int, batch_tokens: int | None = None
) -> list[list[list[int]]]:
    """One pass's accumulation windows: `grad_accum` micro-batches each (the last may be short), the
    micro-batches of `batch_size` samples, or packed to `batch_tokens` tokens when that is set."""
    lengths = [len(s) for s in samples]
    batches = (
        D.token_batches(lengths, batch_tokens, seed)
        if batch_tokens is not None
        else D.length_grouped_batches(lengths, batch_size, seed)
    )
    return [batches[i : i + grad_accum] for i in range(0, len(batches), grad_accum)]
