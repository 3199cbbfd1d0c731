"""What crosses the channel besides plain containers: the plain values of subclasses of builtin types,
a few standard types rebuilt as themselves, and references to importable globals (with the judge's
policy for which globals it will resolve in its own interpreter)."""

import builtins
import importlib
import inspect
import sys
from collections.abc import Callable
from typing import Any

from .frames import ProtocolError

SCALARS = (type(None), bool, int, float, str)


def global_name(obj, private_modules: frozenset):
    """(module, qualname) when `obj` is a global the receiver can import itself, else None."""
    if type(obj).__name__ == "module":
        name = getattr(obj, "__name__", None)
        if isinstance(name, str) and name not in private_modules and sys.modules.get(name) is obj:
            return name, ""
        return None
    module, qual = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None) or getattr(obj, "_name", None)
    if not isinstance(module, str) or not isinstance(qual, str) or module in private_modules or "<" in qual:
        return None
    if module.split(".")[0] in private_modules:
        return None
    try:
        found = resolve_global(module, qual)
    except Exception:  # noqa: BLE001  (anything odd: not a global)
        return None
    return (module, qual) if found is obj else None


def resolve_global(module: str, qual: str):
    mod = sys.modules.get(module) or importlib.import_module(module)
    obj = mod
    for part in qual.split(".") if qual else []:
        obj = getattr(obj, part)
    return obj


# Globals the JUDGE resolves in its own interpreter when the candidate names one: pure modules and
# harmless builtins. Anything else the candidate names (os.system, subprocess.Popen, exec) arrives
# as an inert placeholder, so a test that calls what the candidate returned never runs a command,
# opens a file or imports a module in the judge.
PURE_MODULES = frozenset(
    {
        "abc",
        "array",
        "base64",
        "binascii",
        "bisect",
        "calendar",
        "cmath",
        "collections",
        "collections.abc",
        "copy",
        "dataclasses",
        "datetime",
        "decimal",
        "difflib",
        "enum",
        "fractions",
        "functools",
        "hashlib",
        "heapq",
        "itertools",
        "json",
        "keyword",
        "math",
        "numbers",
        "operator",
        "random",
        "re",
        "statistics",
        "string",
        "struct",
        "textwrap",
        "types",
        "typing",
        "unicodedata",
    }
)
UNSAFE_BUILTINS = frozenset(
    {
        "__build_class__",
        "__import__",
        "breakpoint",
        "compile",
        "copyright",
        "credits",
        "delattr",
        "eval",
        "exec",
        "exit",
        "getattr",
        "globals",
        "help",
        "input",
        "license",
        "locals",
        "open",
        "quit",
        "setattr",
        "vars",
    }
)


class ForeignGlobal:
    """What the judge gets for a global outside its policy: a name, not callable, equal only to itself."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"<{self.name}: a global the judge does not resolve for the candidate>"


def builtin_base(cls: type) -> type:
    """The nearest builtin class in an exception class's MRO (what the judge can raise faithfully)."""
    return next(c for c in cls.__mro__ if c.__module__ == "builtins")


def exception_chain(cls: type, private: frozenset) -> list:
    """[module, qualname] of each candidate-defined class in an exception class's MRO, most derived first."""
    return [[c.__module__, c.__qualname__] for c in cls.__mro__ if c.__module__ in private]


def shadows_behaviour(cls: type, name: str) -> bool:
    """True when an instance attribute `name` would hide a method, property or other behaviour of
    `cls`: the candidate may change an object's data on the judge's side, never its behaviour."""
    if name.startswith("__") and name.endswith("__"):
        return True
    attr = inspect.getattr_static(cls, name, _MISSING)
    return attr is not _MISSING and (callable(attr) or hasattr(attr, "__get__"))


_MISSING = object()


def judge_resolves(module: str, qual: str, shareable: frozenset) -> bool:
    if module == "builtins":
        return qual.split(".")[0] not in UNSAFE_BUILTINS
    return module in PURE_MODULES or module in shareable


STDLIB = frozenset(sys.stdlib_module_names)
# Standard modules whose import does something (opens a browser, prints, needs a display).
NO_IMPORT = frozenset(
    {"antigravity", "this", "idlelib", "tkinter", "turtle", "turtledemo", "webbrowser", "pydoc", "ensurepip", "venv"}
)


def _builtin_base(v):
    """The plain value of an instance of a subclass of a builtin data type, through the base
    class's own methods (never the subclass's overrides); None for anything else."""
    for base, conv in _BASES:
        if isinstance(v, base):
            return conv(v)
    return None


_BASES: tuple[tuple[type, Callable[[Any], Any]], ...] = (
    (int, lambda v: int.__add__(v, 0)),
    (float, float.__float__),
    (str, lambda v: str.__getitem__(v, slice(None))),
    (bytes, lambda v: bytes.__getitem__(v, slice(None))),
    (tuple, lambda v: tuple(tuple.__iter__(v))),
    (list, lambda v: list(list.__iter__(v))),
    (dict, lambda v: {k: dict.__getitem__(v, k) for k in dict.__iter__(v)}),
    (frozenset, lambda v: frozenset(frozenset.__iter__(v))),
    (set, lambda v: set(set.__iter__(v))),
)


def _encode_stdlib(codec, v, t, memo, depth):
    """A few standard containers and numbers, rebuilt as the same standard type on the other side."""
    import collections
    import datetime
    import decimal
    import fractions

    enc = lambda x: codec._enc(x, memo, depth + 1)  # noqa: E731
    if t is collections.deque:
        return ["X", "deque", [enc(x) for x in v], v.maxlen]
    if t is collections.Counter or t is collections.OrderedDict:
        return ["X", t.__name__, [[enc(k), enc(x)] for k, x in dict.items(v)]]
    if t is collections.defaultdict:
        factory = v.default_factory
        return ["X", "defaultdict", [[enc(k), enc(x)] for k, x in dict.items(v)], enc(factory)]
    if t is decimal.Decimal:
        return ["X", "Decimal", str(v)]
    if t is fractions.Fraction:
        return ["X", "Fraction", v.numerator, v.denominator]
    if t in (datetime.date, datetime.datetime, datetime.time, datetime.timedelta):
        if t is datetime.timedelta:
            return ["X", "timedelta", v.days, v.seconds, v.microseconds]
        if getattr(v, "tzinfo", None) is not None:
            return None
        return ["X", t.__name__, v.isoformat()]
    return None


def _decode_stdlib(codec, n, memo, depth):
    import collections
    import datetime
    import decimal
    import fractions

    kind = n[1]
    dec = lambda x: codec._dec(x, memo, depth + 1)  # noqa: E731
    if kind == "deque":
        return collections.deque((dec(x) for x in n[2]), None if n[3] is None else int(n[3]))
    if kind in ("Counter", "OrderedDict"):
        cls = collections.Counter if kind == "Counter" else collections.OrderedDict
        out: dict = cls()
        for k, x in n[2]:
            dict.__setitem__(out, dec(k), dec(x))
        return out
    if kind == "defaultdict":
        factory = dec(n[3])
        dd: dict = collections.defaultdict(factory if factory is None or callable(factory) else None)
        for k, x in n[2]:
            dd[dec(k)] = dec(x)
        return dd
    if kind == "Decimal":
        return decimal.Decimal(str(n[2]))
    if kind == "Fraction":
        return fractions.Fraction(int(n[2]), int(n[3]))
    if kind == "timedelta":
        return datetime.timedelta(days=int(n[2]), seconds=int(n[3]), microseconds=int(n[4]))
    if kind in ("date", "datetime", "time"):
        return getattr(datetime, kind).fromisoformat(str(n[2]))
    raise ProtocolError(f"unknown standard type {kind!r}")


BUILTIN_EXCEPTIONS = {n: c for n, c in vars(builtins).items() if isinstance(c, type) and issubclass(c, BaseException)}
