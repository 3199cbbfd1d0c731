"""Operators the judge delegates to the candidate when every operand is the candidate's own
object (proxy.py decides that); run here, on the candidate's side, against its real objects."""

import operator
from collections.abc import Callable
from typing import Any

from . import wire

# Operators the judge delegates to the candidate when every operand is the candidate's own object
# (proxy.py decides that; the candidate checks the name against this list).
BINARY = frozenset("eq ne lt le gt ge add sub mul matmul truediv floordiv mod pow lshift rshift and or xor".split())
UNARY = frozenset("hash bool format neg pos abs invert int float index enter exit".split())


_BUILTIN_UNARY: dict[str, Callable[[Any], Any]] = {"hash": hash, "bool": bool, "int": int, "float": float, "abs": abs}


def operate(obj, decoded):
    """An operator the judge delegated (both operands are ours): [name] or [name, other] or
    [name, spec] for format, ["exit", exception or None]."""
    name = decoded[0] if decoded and type(decoded[0]) is str else ""
    if name in BINARY and len(decoded) == 2:
        return getattr(operator, name + "_" if name in ("and", "or") else name)(obj, decoded[1])
    if name not in UNARY:
        raise wire.ProtocolError(f"unknown operator {name!r}")
    if name == "format":
        return format(obj, decoded[1] if len(decoded) > 1 and type(decoded[1]) is str else "")
    if name == "enter":
        return obj.__enter__()
    if name == "exit":
        exc = decoded[1] if len(decoded) > 1 and isinstance(decoded[1], BaseException) else None
        return bool(obj.__exit__(type(exc) if exc is not None else None, exc, None))
    if name in ("hash", "bool", "int", "float", "abs"):
        return _BUILTIN_UNARY[name](obj)
    return getattr(operator, name)(obj)
