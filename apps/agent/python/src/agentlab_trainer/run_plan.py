"""Which accumulation windows each segment of an SFT run takes; a snapshot ends every segment.

By epochs (spec.steps absent): segment k is pass k over the data, in the order of (seed, k).
By steps (spec.steps set): the run takes exactly `steps` optimizer steps over passes 1, 2, ... in
the same per-pass orders, the last pass cut where the steps end, and `epochs` counts the segments:
`steps // epochs` steps each, the last one taking the remainder. Arms trained on equal tokens but
samples of different lengths then take the same number of updates, and snapshots stay numbered
1..epochs for everything that keys them by epoch (dev selection, resume, reports).

A window depends on its global step index only (never on where a run started), so a run resumed
after segment k takes the steps the lost run would have taken.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

from . import data as D
from .schedule import order_seed, plan_windows

Window = list[list[int]]


def pass_windows(samples: Sequence[D.Encoded], cfg: dict[str, Any], n: int) -> list[Window]:
    """The windows of pass n (1-based) over the data."""
    seed = order_seed(int(cfg["seed"]), n)
    return plan_windows(samples, cfg["batch_size"], cfg["grad_accum"], seed, cfg.get("batch_tokens"))


def segment_bounds(steps: int, segments: int) -> list[tuple[int, int]]:
    """[start, end) global step indices of each segment: equal parts, the last takes the remainder."""
    size = steps // segments
    return [(k * size, steps if k == segments - 1 else (k + 1) * size) for k in range(segments)]


def total_steps(samples: Sequence[D.Encoded], cfg: dict[str, Any]) -> int:
    """Optimizer steps of the whole run: the schedule's length."""
    if cfg.get("steps") is not None:
        return int(cfg["steps"])
    if cfg.get("batch_tokens") is None:  # every pass has the same number of windows
        return math.ceil(math.ceil(len(samples) / cfg["batch_size"]) / cfg["grad_accum"]) * cfg["epochs"]
    # token batches: a pass's batch count depends on its order
    return sum(len(pass_windows(samples, cfg, e)) for e in range(1, cfg["epochs"] + 1))


def segment(samples: Sequence[D.Encoded], cfg: dict[str, Any], k: int) -> tuple[int, Iterator[Window]]:
    """Segment k's (1-based) window count and its windows, in order."""
    if cfg.get("steps") is None:
        windows = pass_windows(samples, cfg, k)
        return len(windows), iter(windows)
    start, end = segment_bounds(int(cfg["steps"]), int(cfg["epochs"]))[k - 1]
    return end - start, _stream(samples, cfg, start, end)


def _stream(samples: Sequence[D.Encoded], cfg: dict[str, Any], start: int, end: int) -> Iterator[Window]:
    """The windows of global steps start..end-1, over as many passes as it takes."""
    done, n = 0, 0  # windows in passes 1..n
    while done < end:
        n += 1
        windows = pass_windows(samples, cfg, n)
        if done + len(windows) > start:
            yield from windows[max(0, start - done) : end - done]
        done += len(windows)
