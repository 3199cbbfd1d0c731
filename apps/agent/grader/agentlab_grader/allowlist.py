"""The globals the JUDGE resolves in its own interpreter when the candidate names one.

A candidate's global reference is looked up as one exact (module, name) pair in a table built here
once, at import (in the zygote, before any request): value-like objects only — builtin types,
builtin exception classes and named pure functions and classes of pure standard modules. Never a
dotted name (`random._os.system`, `print.__self__.exec`), never a module, never an attribute
walked at request time, so no chain of attributes can lead from an allowed name to `os` or `exec`.
Anything else the candidate names arrives as an inert placeholder (stdtypes.ForeignGlobal).

Support modules (the task's own files) are resolved by exact name too: a class or function the
support module itself defines, nothing it imported and no nested attribute.
"""

import builtins
import importlib
import sys
import types
from typing import Any

# Builtins that are data types or pure functions of their arguments. Not here, on purpose:
# exec/eval/compile/open/__import__/getattr/setattr/vars/globals/locals/input/print/breakpoint,
# and the metaclass-level objects (type, object, super, property) whose attributes reach everything.
_BUILTINS = (
    "abs all any ascii bin bool bytearray bytes callable chr complex dict divmod enumerate filter "
    "float format frozenset hash hex id int isinstance issubclass iter len list map max min next oct "
    "ord pow range repr reversed round set slice sorted str sum tuple zip"
).split()

# Pure standard modules, with the public names they must NOT contribute: code constructors
# (types.CodeType), things that run generated code or evaluate strings (dataclasses.dataclass,
# typing.get_type_hints), attribute walkers keyed by candidate strings (operator.attrgetter,
# string.Formatter), and setters of process-wide state the tests depend on (random.seed,
# decimal.setcontext, calendar.setfirstweekday).
_MODULES = {
    "abc": (),
    "array": (),
    "base64": (),
    "binascii": (),
    "bisect": (),
    "calendar": ("setfirstweekday", "prcal", "prmonth", "main"),
    "cmath": (),
    "collections": (),
    "collections.abc": (),
    "copy": (),
    "dataclasses": ("dataclass", "make_dataclass", "replace"),
    "datetime": (),
    "decimal": ("getcontext", "setcontext", "localcontext"),
    "difflib": (),
    "enum": (),
    "fractions": (),
    "functools": ("singledispatch", "singledispatchmethod", "update_wrapper"),
    "hashlib": ("file_digest", "new"),
    "heapq": (),
    "itertools": (),
    "json": ("dump", "load"),
    "keyword": (),
    "math": (),
    "numbers": (),
    "operator": ("attrgetter", "methodcaller", "call"),
    "random": ("seed", "setstate", "getstate"),
    "re": ("purge", "template"),
    "statistics": (),
    "string": ("Formatter",),
    "struct": (),
    "textwrap": (),
    "unicodedata": (),
}
# From `types` and `typing`, only these (the rest of `types` builds code, functions and modules).
_ONLY = {
    "types": ("SimpleNamespace", "MappingProxyType"),
}
_TYPING_REFUSED = frozenset({"get_type_hints", "no_type_check", "no_type_check_decorator", "overload"})


def _value_like(obj) -> bool:
    if isinstance(obj, type):
        return True
    if not isinstance(obj, (types.BuiltinFunctionType, types.FunctionType)):
        return False
    owner = getattr(obj, "__self__", None)  # random.random is a method of the judge's own Random
    return owner is None or type(owner) is types.ModuleType


def _add(table: dict, listed: str, name: str, obj) -> None:
    """Under the listed name, and under the object's own (module, qualname), which is what an
    encoder sends (heapq.heappush says it lives in _heapq)."""
    if type(obj) is types.ModuleType:
        return
    table[(listed, name)] = obj
    own_module, own_name = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if type(own_module) is str and type(own_name) is str and "." not in own_name:
        home = sys.modules.get(own_module)
        if home is not None and getattr(home, own_name, None) is obj:
            table.setdefault((own_module, own_name), obj)


def _build() -> dict:
    table: dict = {}
    for name in _BUILTINS:
        _add(table, "builtins", name, getattr(builtins, name))
    for name, obj in vars(builtins).items():
        if isinstance(obj, type) and issubclass(obj, BaseException):
            _add(table, "builtins", name, obj)
    refused_objects = []
    for module, refused in _MODULES.items():
        mod = importlib.import_module(module)
        public = getattr(mod, "__all__", None) or [n for n in vars(mod) if not n.startswith("_")]
        refused_objects += [getattr(mod, n) for n in refused]
        for name in public:
            obj = getattr(mod, name, None)
            if name not in refused and not name.startswith("_") and _value_like(obj):
                _add(table, module, name, obj)
    for module, names in _ONLY.items():
        mod = importlib.import_module(module)
        for name in names:
            _add(table, module, name, getattr(mod, name))
    import typing

    for name in typing.__all__:
        obj = getattr(typing, name, None)
        if obj is not None and name not in _TYPING_REFUSED:
            _add(table, "typing", name, obj)
    # A refused object stays refused under any other name that exports it.
    return {k: v for k, v in table.items() if not any(v is r for r in refused_objects)}


ALLOWED = _build()
_MISSING = object()


def judge_global(module: str, name: str, shareable: frozenset):
    """The judge-side object for the candidate's reference (module, name), or None when the judge
    does not resolve it. Plain dictionary lookups; nothing is imported or walked here."""
    if "." in name or not name:
        return None
    found = ALLOWED.get((module, name), _MISSING)
    if found is not _MISSING:
        return found
    if module in shareable:
        mod = sys.modules.get(module)
        obj = vars(mod).get(name, _MISSING) if mod is not None else _MISSING
        if obj is not _MISSING and _value_like(obj) and getattr(obj, "__module__", None) == module:
            return obj
    return None


def support_class(module: str, qual: str):
    """A class of a support module by its qualified name (Outer.Inner): every step must be a class
    that module defines, so the walk never leaves the module's own classes."""
    obj: Any = sys.modules.get(module) or importlib.import_module(module)
    for part in qual.split("."):
        obj = vars(obj).get(part) if isinstance(obj, (type, types.ModuleType)) else None
        if not isinstance(obj, type) or obj.__module__ != module:
            return None
    return obj


# Defaultdict factories the judge accepts by value: builtin data types only.
FACTORIES = frozenset({int, float, complex, str, bytes, bool, list, tuple, dict, set, frozenset, bytearray})


def refused_on_judge_side(v):
    """What no judge object may become, not even an opaque handle: the interpreter's own machinery
    (frames, code, tracebacks, cells, modules, import loaders and specs). Returns a reason or None."""
    if isinstance(v, _MACHINERY):
        return type(v).__name__
    module = getattr(type(v), "__module__", "") or ""
    if module.startswith(("importlib", "_frozen_importlib", "zipimport")):
        return f"an import-system object ({type(v).__name__})"
    return None


_MACHINERY = (
    types.FrameType,
    types.CodeType,
    types.TracebackType,
    types.CellType,
    types.ModuleType,
    types.CoroutineType,
    types.AsyncGeneratorType,
)
