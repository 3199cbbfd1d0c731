"""Resuming an SFT run from its last finished epoch after the run was lost (agent gone, box rebooted).

After each epoch the trainer writes, beside the adapter snapshot, the state the next epoch starts
from: the optimizer's moments, the schedule's position, torch's RNG (LoRA dropout draws from it)
and the run's counters. The data order of an epoch depends on (seed, epoch) only (schedule.py), and
a step-counted run's window on its global step index only (run_plan.py), so a run resumed from
epoch (segment) k with that state takes the same steps as the run that was lost: on one CPU process
the resumed adapter is bit-identical (tests/test_resume.py, tests/test_train_steps.py).

Only one-process runs write or read this state: a multi-rank run's optimizer state is per rank
(sharded under FSDP), and a lost multi-rank run restarts from step 0, as before.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from .common import UserError, emit, sha256_tree

STATE_FILE = "trainer_state.pt"
# Spec keys that name this box's files or threads, not the run: they may differ after a resumption.
_LOCAL_KEYS = ("output_dir", "dataset", "eval_dataset", "base_model", "torch_threads", "resume")
META_FILE = "agentlab-trainer-state.json"
_LATER_KEYS = ("steps", "batch_tokens")


def resumable(run: Any) -> bool:
    return run.dist is None


def save_state(run: Any, epoch: int, counters: dict[str, Any]) -> None:
    """Writes <out>/state-epoch-<k>/ atomically and announces it with a `trainer_state` event."""
    import torch

    if not resumable(run):
        return
    final = run.out_dir / f"state-epoch-{epoch}"
    tmp = run.out_dir / f".state-epoch-{epoch}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    state = {
        "optimizer": run.optimizer.state_dict(),
        "scheduler": run.scheduler.state_dict(),
        "rng": torch.get_rng_state(),
        "cuda_rng": torch.cuda.get_rng_state_all() if run.device == "cuda" else [],
    }
    torch.save(state, tmp / STATE_FILE)
    meta = {"epoch": epoch, "counters": counters, "identity": _identity(run)}
    (tmp / META_FILE).write_text(json.dumps(meta, indent=2, sort_keys=True))
    digest = sha256_tree(tmp)
    os.replace(tmp, final)
    emit("trainer_state", epoch=epoch, path=str(final), sha256=digest)


def _identity(run: Any) -> dict[str, Any]:
    """What must not change between the lost run and its resumption: the base, the data and the recipe."""
    # Keys added later count only when set, so a state written before them still matches.
    cfg = {k: v for k, v in run.cfg.items() if k not in _LOCAL_KEYS and not (k in _LATER_KEYS and v is None)}
    return {
        "base_model_weights_sha256": run.base_hash,
        "dataset_sha256": run.record["dataset_sha256"],
        "eval_dataset_sha256": run.record["eval_dataset_sha256"],
        "config": json.loads(json.dumps(cfg, sort_keys=True, default=str)),
    }


def restore(run: Any, resume: dict[str, Any]) -> dict[str, Any]:
    """Loads the adapter and the trainer state of epoch `resume["epoch"]` into the run and returns
    the counters to continue from. Refuses (UserError) a state written by a different run."""
    import torch
    from peft import set_peft_model_state_dict
    from safetensors.torch import load_file

    if not resumable(run):
        raise UserError("resume: a multi-rank run cannot resume (its optimizer state is per rank)")
    epoch = int(resume["epoch"])
    state_dir, adapter_dir = Path(resume["state"]), Path(resume["adapter"])
    meta = json.loads((state_dir / META_FILE).read_text())
    if int(meta["epoch"]) != epoch:
        raise UserError(f"resume: the trainer state is of epoch {meta['epoch']}, not {epoch}")
    mismatch = [k for k, v in _identity(run).items() if meta["identity"].get(k) != v]
    if mismatch:
        raise UserError(
            f"resume: the trainer state of epoch {epoch} is from another run ({', '.join(mismatch)} differ)"
        )
    if epoch >= int(run.cfg["epochs"]):
        raise UserError(f"resume: epoch {epoch} is the run's last ({run.cfg['epochs']} epochs)")
    missing = set_peft_model_state_dict(run.model, load_file(str(adapter_dir / "adapter_model.safetensors")))
    unexpected = getattr(missing, "unexpected_keys", [])
    if unexpected:
        raise UserError(f"resume: the adapter of epoch {epoch} has weights this run lacks: {unexpected[:3]}")
    # weights_only: the state holds tensors and numbers only, so no pickled code runs on load.
    state = torch.load(state_dir / STATE_FILE, map_location=run.device, weights_only=True)
    run.optimizer.load_state_dict(state["optimizer"])
    run.scheduler.load_state_dict(state["scheduler"])
    torch.set_rng_state(state["rng"].cpu())
    if run.device == "cuda" and state["cuda_rng"]:
        torch.cuda.set_rng_state_all([s.cpu() for s in state["cuda_rng"]])
    run.record["snapshots"] = list(resume.get("snapshots") or [])
    run.record["epochs_completed"] = epoch
    run.record["resumed_from_epoch"] = epoch
    return dict(meta["counters"])
