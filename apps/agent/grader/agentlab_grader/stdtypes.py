"""What crosses the channel besides plain containers: the plain values of subclasses of builtin types,
a few standard types rebuilt as themselves, and how an object names itself as a global (which
globals the judge resolves is allowlist.py's)."""

import builtins
import collections
import datetime
import decimal
import fractions
import importlib
import inspect
import pathlib
import sys
from collections.abc import Callable
from typing import Any

from .allowlist import FACTORIES
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
    key = (cls, name)
    known = _SHADOWS.get(key)
    if known is None:
        attr = inspect.getattr_static(cls, name, _MISSING)
        known = attr is not _MISSING and (callable(attr) or hasattr(attr, "__get__"))
        if len(_SHADOWS) > 10000:  # names come from the candidate: a bounded memo
            _SHADOWS.clear()
        _SHADOWS[key] = known
    return known


# (class, attribute) -> shadows: asked once per attribute of every object that comes back, and
# inspect.getattr_static is what a long linked list's copy-back spent most of its time in.
_SHADOWS: dict = {}


_MISSING = object()


STDLIB = frozenset(sys.stdlib_module_names)
# Standard modules whose import does something (opens a browser, prints, needs a display).
NO_IMPORT = frozenset(
    {"antigravity", "this", "idlelib", "tkinter", "turtle", "turtledemo", "webbrowser", "pydoc", "ensurepip", "venv"}
)


def _builtin_base(v):
    """The plain value of an instance of a subclass of a builtin data type, through the base
    class's own methods (never the subclass's overrides); None for anything else."""
    t = type(v)
    conv = _BASE_OF.get(t, _MISSING)
    if conv is _MISSING:
        conv = next((c for base, c in _BASES if issubclass(t, base)), None)
        if len(_BASE_OF) > 10000:
            _BASE_OF.clear()
        _BASE_OF[t] = conv
    return None if conv is None else conv(v)


_BASE_OF: dict = {}  # type -> its builtin base's converter (or None): once per type, not per object


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


_KEYS: type = type({}.keys())
_VALUES: type = type({}.values())
_ITEMS: type = type({}.items())
# Mutable standard containers: they cross with a memo index, so that a call's answer can name them
# and their new state is copied back into the caller's own object (wire.Codec._dec_into).
MUTABLE_STD = (collections.deque, collections.Counter, collections.OrderedDict, collections.defaultdict)


def _encode_stdlib(codec, v, t, memo, depth):
    """A few standard containers and numbers, rebuilt as the same standard type on the other side."""
    enc = lambda x: codec._enc(x, memo, depth + 1)  # noqa: E731
    if t in MUTABLE_STD:
        ref = memo.add(v)
        if t is collections.deque:
            node = ["X", "deque", ref, [enc(x) for x in v], v.maxlen]
        else:
            node = ["X", t.__name__, ref, [[enc(k), enc(x)] for k, x in t.items(v)]]  # exact type: its own order
            if t is collections.defaultdict:
                node.append(enc(v.default_factory))
        return memo.wrap(v, node)
    if t is _KEYS or t is _VALUES:
        return ["X", "keys" if t is _KEYS else "values", [enc(x) for x in v]]
    if t is _ITEMS:
        return ["X", "items", [[enc(k), enc(x)] for k, x in v]]
    if t is decimal.Decimal:
        return ["X", "Decimal", str(v)]
    if t is fractions.Fraction:
        return ["X", "Fraction", enc(v.numerator), enc(v.denominator)]
    if t is datetime.timedelta:
        return ["X", "timedelta", v.days, v.seconds, v.microseconds]
    if t in (datetime.date, datetime.datetime, datetime.time):
        tz = getattr(v, "tzinfo", None)
        if tz is None or type(tz) is datetime.timezone:
            return ["X", t.__name__, v.isoformat()]  # a fixed offset is part of the ISO text
        key = getattr(tz, "key", None)
        if type(tz).__module__ == "zoneinfo" and type(key) is str:
            return ["X", t.__name__, v.replace(tzinfo=None).isoformat(), key, getattr(v, "fold", 0)]
    return None


def _decode_stdlib(codec, n, memo, depth):
    kind = n[1]
    dec = lambda x: codec._dec(x, memo, depth + 1)  # noqa: E731
    if kind in _MUTABLE_KINDS:
        out = _new_mutable(codec, kind, n, dec)
        memo[n[2]] = out
        fill_mutable(out, n, dec)
        return out
    if kind in ("keys", "values"):
        items = [dec(x) for x in n[2]]
        return dict.fromkeys(items).keys() if kind == "keys" else dict(enumerate(items)).values()
    if kind == "items":
        return dict((dec(k), dec(x)) for k, x in n[2]).items()
    if kind == "path":
        return pathlib.PosixPath(str(n[2]))
    if kind == "Decimal":
        return decimal.Decimal(str(n[2]))
    if kind == "Fraction":
        return fractions.Fraction(int(dec(n[2])), int(dec(n[3])))
    if kind == "timedelta":
        return datetime.timedelta(days=int(n[2]), seconds=int(n[3]), microseconds=int(n[4]))
    if kind in ("date", "datetime", "time"):
        value = getattr(datetime, kind).fromisoformat(str(n[2]))
        if len(n) > 3:
            import zoneinfo

            value = value.replace(tzinfo=zoneinfo.ZoneInfo(str(n[3])), fold=int(n[4]))
        return value
    raise ProtocolError(f"unknown standard type {kind!r}")


_MUTABLE_KINDS = {c.__name__: c for c in MUTABLE_STD}


def _new_mutable(codec, kind, n, dec):
    if kind == "deque":
        return collections.deque((), None if n[4] is None else int(n[4]))
    if kind == "defaultdict":
        factory = dec(n[4])
        if codec.guarded and factory is not None and factory not in FACTORIES and not codec.is_remote(factory):
            factory = None  # the judge runs builtin types only; a candidate function runs over there
        return collections.defaultdict(factory if factory is None or callable(factory) else None)
    return _MUTABLE_KINDS[kind]()


def fill_mutable(out, n, dec):
    """The items of an ["X", kind, ref, …] node into `out` (fresh, or one of ours being updated)."""
    if type(out) is collections.deque:
        out.clear()
        out.extend(dec(x) for x in n[3])
        return
    pairs = [(dec(k), dec(x)) for k, x in n[3]]
    out.clear()  # the exact standard type's own methods: an OrderedDict keeps its order links
    for k, x in pairs:
        out[k] = x


BUILTIN_EXCEPTIONS = {n: c for n, c in vars(builtins).items() if isinstance(c, type) and issubclass(c, BaseException)}
