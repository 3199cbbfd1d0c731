"""Deterministic SFT fixtures: small code-repair chats of unequal lengths."""

from __future__ import annotations

import json
from pathlib import Path

OPS = [("add", "+", "-"), ("sub", "-", "+"), ("mul", "*", "+"), ("max2", ">", "<"), ("min2", "<", ">")]
NAMES = ["a", "b", "x", "y", "n", "m", "left", "right", "value", "count"]


def make_samples(n: int, *, offset: int = 0, system: bool = True) -> list[dict]:
    out = []
    for k in range(offset, offset + n):
        name, good, bad = OPS[k % len(OPS)]
        p, q = NAMES[k % len(NAMES)], NAMES[(k * 3 + 1) % len(NAMES)]
        if p == q:
            q = q + "2"
        extra = "\n".join(f"    # step {j}: keep {p} and {q}" for j in range(k % 4))
        if name in ("max2", "min2"):
            body_bad = f"    return {p} if {p} {bad} {q} else {q}"
            body_good = f"    return {p} if {p} {good} {q} else {q}"
        else:
            body_bad = f"    return {p} {bad} {q}"
            body_good = f"    return {p} {good} {q}"
        fn = f"def {name}_{k}({p}, {q}):\n" + (extra + "\n" if extra else "")
        msgs = []
        if system:
            msgs.append({"role": "system", "content": "You fix bugs in Python functions."})
        msgs.append(
            {"role": "user", "content": f"The function below fails its tests. Fix it.\n```python\n{fn}{body_bad}\n```"}
        )
        msgs.append({"role": "assistant", "content": f"```python\n{fn}{body_good}\n```"})
        out.append({"messages": msgs})
    return out


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path
