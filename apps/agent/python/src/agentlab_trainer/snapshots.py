"""What every training command (train, dpo) leaves behind: immutable, hashed per-epoch adapter
snapshots and the run record's closing figures."""

from __future__ import annotations

import os
import shutil
import stat
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .common import UserError, environment_info, peak_memory_mb, pip_freeze, sha256_tree


def save_snapshot(
    model, out_dir: Path, epoch: int, meta: dict[str, Any], state_dict: dict[str, Any] | None = None
) -> tuple[Path, str, list[str]]:
    """Save the adapter to <out>/epoch-<n>/ atomically, make it read-only, and hash it.
    `state_dict`: the adapter's tensors when the model's own are shards (FSDP)."""
    import json

    final = out_dir / f"epoch-{epoch}"
    if final.exists():
        raise UserError(f"snapshot {final} already exists; snapshots are immutable (use a fresh output_dir)")
    tmp = out_dir / f".epoch-{epoch}.tmp-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    if state_dict is None:
        model.save_pretrained(tmp, safe_serialization=True)
    else:
        model.save_pretrained(tmp, safe_serialization=True, state_dict=state_dict)
    readme = tmp / "README.md"  # peft's model card: boilerplate, not part of the artifact
    if readme.exists():
        readme.unlink()
    _sort_target_modules(tmp / "adapter_config.json")
    (tmp / "agentlab-snapshot.json").write_text(json.dumps(meta, indent=2, sort_keys=True))
    digest = sha256_tree(tmp)
    files = sorted(p.relative_to(tmp).as_posix() for p in tmp.rglob("*") if p.is_file())
    os.replace(tmp, final)
    for p in final.rglob("*"):
        if p.is_file():
            p.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    return final, digest, files


def _sort_target_modules(config: Path) -> None:
    """peft writes target_modules from a set, in an order that changes with the process's string
    hashing; sorted, two runs that trained the same weights leave the same snapshot hash."""
    import json

    if not config.exists():
        return
    cfg = json.loads(config.read_text())
    if isinstance(cfg.get("target_modules"), list):
        cfg["target_modules"] = sorted(cfg["target_modules"])
        config.write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n")


def finish_record(record: dict[str, Any], device: Any, t_start: float, train_time: float, sup_tokens: int) -> None:
    """The run record's closing figures, the same for every training command (train, dpo)."""
    record["train_time_s"] = round(train_time, 4)
    record["wall_time_s"] = round(time.time() - t_start, 4)
    record["supervised_tokens"] = sup_tokens
    record["supervised_tokens_per_s"] = round(sup_tokens / train_time, 3) if train_time > 0 else 0.0
    record["peak_memory_mb"] = round(peak_memory_mb(device), 1)
    record["finished_at"] = datetime.now(timezone.utc).isoformat()
    record["environment"] = environment_info()
    record["pip_freeze"] = pip_freeze()
