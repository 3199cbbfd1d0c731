"""Shared helpers: JSON-line events on stdout, logs on stderr, errors, hashing, environment info."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import resource
import signal
import subprocess
import sys
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_USER = 3
EXIT_CANCELED = 143

_out_lock = threading.Lock()


class UserError(Exception):
    """A problem with the spec or the data: the job fails with reason user_error (exit 3)."""


class Canceled(Exception):
    """SIGTERM/SIGINT was received; the command stops at the next safe point (exit 143)."""


def emit(event: str, **fields: Any) -> None:
    """Write one JSON event line to stdout (the contract with the TS agent)."""
    line = json.dumps({"event": event, **fields}, ensure_ascii=False, allow_nan=False, default=_json_default)
    if event in _CONTRACTED_EVENTS:
        check_event(event, json.loads(line))
    with _out_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


# Events a job contract defines (schemas/<event>.json, generated from packages/core/src/jobs/progress.ts):
# the server refuses one that breaks it and fails the attempt, so the trainer refuses to emit it.
_CONTRACTED_EVENTS = {"progress", "grpo_step"}


def check_event(event: str, value: Any) -> None:
    """Raises ValueError, naming the fields, when `value` (as emitted) breaks the event's contract."""
    from .spec_schema import errors, load_schema

    problems = errors(value, load_schema(event), event)
    if problems:
        raise ValueError(f"{event} event breaks its contract: {'; '.join(problems)}")


def _json_default(o: Any) -> Any:
    if isinstance(o, Path):
        return str(o)
    if hasattr(o, "item"):
        return o.item()
    raise TypeError(f"not JSON serializable: {type(o).__name__}")


def log(message: str, *, also_event: bool = False, level: str = "info") -> None:
    """Human log to stderr; optionally also a `log` event for the job's log stream."""
    sys.stderr.write(f"[agentlab_trainer] {message}\n")
    sys.stderr.flush()
    if also_event:
        emit("log", level=level, message=message)


class CancelFlag:
    """Installs SIGTERM/SIGINT handlers that set a flag; loops poll `raise_if_set()`."""

    def __init__(self) -> None:
        self.signum: int | None = None

    def install(self) -> CancelFlag:
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self._handle)
        return self

    def _handle(self, signum: int, _frame: Any) -> None:
        if self.signum is None:
            log(f"received signal {signum}; stopping at the next safe point")
        self.signum = signum

    @property
    def is_set(self) -> bool:
        return self.signum is not None

    def raise_if_set(self) -> None:
        if self.signum is not None:
            raise Canceled(f"canceled by signal {self.signum}")


def sha256_file(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sha256_tree(root: str | Path, *, exclude: Iterable[str] = ()) -> str:
    """Deterministic hash of a folder: sorted relative POSIX paths, each followed by its contents.

    Format per file: path bytes, NUL, 8-byte big-endian length, contents. Empty folders are ignored.
    """
    root = Path(root)
    excluded = set(exclude)
    files = sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and p.relative_to(root).as_posix() not in excluded
    )
    h = hashlib.sha256()
    for rel in files:
        data = (root / rel).read_bytes()
        h.update(rel.encode("utf-8"))
        h.update(b"\0")
        h.update(len(data).to_bytes(8, "big"))
        h.update(data)
    return h.hexdigest()


def weights_hash(model_dir: str | Path) -> str | None:
    """sha256 over the weight files of a local model folder (safetensors/bin), or None for hub ids."""
    root = Path(model_dir)
    if not root.is_dir():
        return None
    files = sorted(
        p
        for p in root.iterdir()
        if p.is_file() and (p.suffix in {".safetensors", ".bin"} or p.name.endswith(".index.json"))
    )
    if not files:
        return None
    h = hashlib.sha256()
    for p in files:
        h.update(p.name.encode())
        h.update(b"\0")
        h.update(sha256_file(p).encode())
    return h.hexdigest()


def rss_mb() -> float:
    """Current resident set size of this process in MiB (Linux /proc; falls back to peak)."""
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / (1 << 20)
    except OSError:
        return peak_rss_mb()


def peak_rss_mb() -> float:
    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kb / 1024.0 if sys.platform != "darwin" else kb / (1 << 20)


def pip_freeze() -> list[str]:
    try:
        out = subprocess.run(
            [sys.executable, "-m", "pip", "freeze", "--all"], capture_output=True, text=True, timeout=60, check=False
        )
        return sorted(line for line in out.stdout.splitlines() if line.strip())
    except (OSError, subprocess.SubprocessError):
        return []


def _version(mod: str) -> str | None:
    try:
        from importlib.metadata import version

        return version(mod)
    except Exception:  # noqa: BLE001 - missing distribution
        return None


def environment_info() -> dict[str, Any]:
    """Versions and hardware that ran the job (part of the run record and of `doctor`)."""
    import torch

    info: dict[str, Any] = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda if torch.cuda.is_available() else None,
        "cuda_available": torch.cuda.is_available(),
        "driver": None,
        "gpus": [],
        "transformers": _version("transformers"),
        "peft": _version("peft"),
        "trl": _version("trl"),
        "bitsandbytes": _version("bitsandbytes"),
        "vllm": _version("vllm"),
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
    }
    if torch.cuda.is_available():
        for i in range(torch.cuda.device_count()):
            p = torch.cuda.get_device_properties(i)
            info["gpus"].append({"index": i, "name": p.name, "memory_mb": round(p.total_memory / (1 << 20))})
        try:
            out = subprocess.run(
                ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                capture_output=True,
                text=True,
                timeout=20,
                check=False,
            )
            info["driver"] = out.stdout.strip().splitlines()[0] if out.stdout.strip() else None
        except (OSError, subprocess.SubprocessError):
            pass
    return info


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    p = Path(path)
    if not p.is_file():
        raise UserError(f"file not found: {p}")
    rows: list[dict[str, Any]] = []
    opener = open
    if p.suffix == ".gz":
        import gzip

        opener = gzip.open  # type: ignore[assignment]
    with opener(p, "rt", encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise UserError(f"{p}:{n}: invalid JSON: {e}") from e
            if not isinstance(row, dict):
                raise UserError(f"{p}:{n}: expected a JSON object")
            rows.append(row)
    return rows


def load_spec(path: str | Path, command: str | None = None) -> dict[str, Any]:
    """Reads a spec file; with `command`, checks it against that command's contract (spec_schema)."""
    p = Path(path)
    if not p.is_file():
        raise UserError(f"spec file not found: {p}")
    try:
        spec = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise UserError(f"spec is not valid JSON: {e}") from e
    if not isinstance(spec, dict):
        raise UserError("spec must be a JSON object")
    if command is not None:
        from .spec_schema import validate_spec

        problems = validate_spec(command, spec)
        if problems:
            raise UserError(f"the {command} spec breaks its contract: " + "; ".join(problems[:20]))
    return spec


def pick_device(requested: str = "auto") -> str:
    import torch

    if requested == "cpu":
        return "cpu"
    if requested == "cuda":
        if not torch.cuda.is_available():
            raise UserError("device 'cuda' requested but CUDA is not available")
        return "cuda"
    return "cuda" if torch.cuda.is_available() else "cpu"


def memory_mb(device: str) -> float:
    import torch

    if device == "cuda":
        return torch.cuda.memory_allocated() / (1 << 20)
    return rss_mb()


def peak_memory_mb(device: str) -> float:
    import torch

    if device == "cuda":
        return torch.cuda.max_memory_allocated() / (1 << 20)
    return peak_rss_mb()
