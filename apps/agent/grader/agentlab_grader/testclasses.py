"""The class of a test-module object, rebuilt on the candidate's side from a by-value description.

A test hands the candidate objects of classes it defines (a `Node` with methods, a `Point`
dataclass); in-process the candidate would call their methods and read their class attributes.
The candidate must never receive a live object of the judge, so the class crosses as text and
data and is rebuilt in the candidate's own interpreter:

- its methods as source: the `def`s of the class body (plain, static, class methods and
  properties; no other decorator, no annotations), re-printed from the AST, so comments and
  everything else of the hidden test file stay behind;
- its class attributes by value, only when they are plain data (numbers, text, containers of
  them); never a function, a module or another object of the judge;
- the names its methods use, each only as something the candidate resolves in its own process:
  a standard-library module or one of its globals by exact (module, name), a support module,
  another test-module data class (described in turn), or one of the candidate's own objects.
  Every other global of the test module (its data, its functions, `__file__`) is simply absent,
  so a method that would hand back a trusted-side object raises NameError in the candidate;
- a dataclass's parameters and fields (defaults by value, factories only builtin types).

The rebuilt methods run in the candidate's process under its budget, with its `os`, its files.
Each def is wrapped in `try` in the rebuilt body: a method whose default or decorator cannot be
evaluated there is missing, the rest of the class is not. The candidate keeps one class per class
number; the judge re-describes a class once per message (a fresh candidate has no cache).
Functions of wire.Codec (`self` is the codec).
"""

import ast
import builtins
import dataclasses
import inspect
import sys
import textwrap
from typing import Any

from .frames import ProtocolError
from .stdtypes import NO_IMPORT, STDLIB, global_name

REF = "OK"  # ["OK", class number, class name, description or None]
_BASES = "__agentlab_bases__"
_DECORATORS = frozenset({"staticmethod", "classmethod", "property"})
_ACCESSORS = frozenset({"setter", "getter", "deleter"})
# Default factories of dataclass fields that cross by name: builtin types only.
_FACTORIES = {t.__name__: t for t in (list, dict, set, tuple, frozenset, str, bytes, bytearray, int, float, bool)}
_DATA = (type(None), bool, int, float, complex, str, bytes)
_MAX_DATA_ITEMS = 10_000


class _Static:
    """What the judge computes once per class: the rebuilt source and the names it uses."""

    def __init__(self, cls: type):
        self.source, self.names = _methods_source(cls)
        self.bases = [b for b in cls.__bases__ if b is not object]
        self.attrs = [k for k, v in vars(cls).items() if not _dunder(k) and not _behaviour(v) and _plain_data(v)]
        self.dataclass = _dataclass_of(cls)


def _dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def _behaviour(v) -> bool:
    return callable(v) or hasattr(type(v), "__get__")


def _plain_data(v, budget=None) -> bool:
    budget = budget if budget is not None else [_MAX_DATA_ITEMS]
    budget[0] -= 1
    if budget[0] < 0:
        return False
    t = type(v)
    if t in _DATA:
        return True
    if t in (tuple, list, set, frozenset):
        return all(_plain_data(x, budget) for x in v)
    if t is dict:
        return all(_plain_data(k, budget) and _plain_data(x, budget) for k, x in v.items())
    return False


def _kept_decorators(node, defined: set) -> bool:
    for d in node.decorator_list:
        if isinstance(d, ast.Name) and d.id in _DECORATORS:
            continue
        if (
            isinstance(d, ast.Attribute)
            and d.attr in _ACCESSORS
            and isinstance(d.value, ast.Name)
            and d.value.id in defined
        ):
            continue
        return False
    return True


def _strip_annotations(fn) -> None:
    args = fn.args
    for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
        if a is not None:
            a.annotation = None
    fn.returns = None


def _methods_source(cls: type) -> tuple[str, list]:
    """The class's defs re-printed as `class Name(*bases): try: def …`, and the global names they
    load; ("", []) when the class has no source (made by type(), or its file is gone)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    except (OSError, TypeError, SyntaxError):
        return "", []
    node = next((n for n in tree.body if isinstance(n, ast.ClassDef)), None)
    if node is None or node.name != cls.__name__:
        return "", []
    body: list = []
    defined: set = set()
    for stmt in node.body:
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) or not _kept_decorators(stmt, defined):
            continue
        _strip_annotations(stmt)
        defined.add(stmt.name)
        # A def whose default or decorator fails in the candidate leaves just that method out.
        handler = ast.ExceptHandler(type=ast.Name("Exception", ast.Load()), name=None, body=[ast.Pass()])
        body.append(ast.Try(body=[stmt], handlers=[handler], orelse=[], finalbody=[]))
    names = sorted({n.id for stmt in body for n in ast.walk(stmt) if isinstance(n, ast.Name)} - {"Exception"})
    rebuilt = ast.ClassDef(
        name=cls.__name__,
        bases=[ast.Starred(ast.Name(_BASES, ast.Load()), ast.Load())],
        keywords=[],
        body=body or [ast.Pass()],
        decorator_list=[],
    )
    return ast.unparse(ast.fix_missing_locations(ast.Module(body=[rebuilt], type_ignores=[]))), names


def _dataclass_of(cls: type):
    params = vars(cls).get("__dataclass_params__")
    if params is None:
        return None
    own = vars(cls).get("__annotations__", {})
    fields = []
    for f in dataclasses.fields(cls):
        if f.name not in own:
            continue  # inherited: the base's own description carries it
        factory = None
        if f.default_factory is not dataclasses.MISSING:
            factory = next((n for n, t in _FACTORIES.items() if t is f.default_factory), None)
            if factory is None:
                return None  # a factory of the judge's: the class crosses without dataclass behaviour
        fields.append([f.name, factory, bool(f.init), bool(f.repr), bool(f.compare), bool(f.kw_only)])
    flags = [bool(getattr(params, k)) for k in ("init", "repr", "eq", "order", "unsafe_hash", "frozen")]
    return [flags, fields]


# -- the judge's side ---------------------------------------------------------------------------
def number_of(self, cls: type) -> int:
    number = self.test_classes.get(cls)
    if number is None:
        number = self.test_classes[cls] = len(self.test_classes) + 1
        self.test_class_of[number] = cls
    return number


def describe(self, cls: type, memo, depth):
    """The description of cls for this message, or None when this message already carries it."""
    number = number_of(self, cls)
    if number in memo.classes:
        return None
    memo.classes.add(number)
    static = self.test_class_static.get(cls)
    if static is None:
        static = self.test_class_static[cls] = _Static(cls)
    module = vars(sys.modules[cls.__module__]) if cls.__module__ in sys.modules else {}
    names = []
    for name in static.names:
        if name in module:
            node = _name_node(self, module[name], memo, depth)
            if node is not None:
                names.append([name, node])
    return [
        static.source,
        [class_ref(self, b, memo, depth + 1) for b in static.bases],
        [[k, self._enc(vars(cls)[k], memo, depth + 1)] for k in static.attrs],
        names,
        static.dataclass,
    ]


def class_ref(self, cls: type, memo, depth):
    return [REF, number_of(self, cls), cls.__name__, describe(self, cls, memo, depth)]


def _name_node(self, v, memo, depth):
    """What the candidate may resolve a method's global name to, in its own process; None: absent."""
    from .testobjects import sendable_class

    if type(v) is type and v.__module__ in self.test_modules:
        return class_ref(self, v, memo, depth + 1) if sendable_class(v, self.test_modules) else None
    theirs = self.handed_back(v)
    if theirs is not None:  # the candidate's own object (a name imported from its module)
        return ["Y", theirs] if type(theirs) is int else ["YN", theirs[0], theirs[1]]
    g = global_name(v, self.private)
    if g is None or g[0] in self.test_modules or g[0].split(".")[0] in self.test_modules:
        return None
    top = g[0].split(".")[0]
    if g[0] in self.shareable or (top in STDLIB and top not in NO_IMPORT):
        return ["G", g[0], g[1]]
    return None


# -- the candidate's side -----------------------------------------------------------------------
def decode_ref(self, n, memo, depth) -> type:
    if self.guarded or type(n) is not list or len(n) != 4 or n[0] != REF:
        raise ProtocolError("malformed test-module class")
    return stand_in(self, n[1], n[2], n[3], memo, depth)


def stand_in(self, number, name, desc, memo, depth) -> type:
    """The candidate's class for a judge class number: built from its description the first time."""
    if type(number) is not int or type(name) is not str:
        raise ProtocolError("malformed test-module object")
    cls = self.stand_in_class.get(number)
    if cls is not None:
        return cls
    if number in self.stand_in_building:
        raise ProtocolError("a test-module class that inherits from itself")
    self.stand_in_building.add(number)
    try:
        cls = _build(self, number, name[:100] or "TestObject", desc, memo, depth)
    finally:
        self.stand_in_building.discard(number)
    return cls


def _register(self, number, cls) -> None:
    self.stand_in_class[number] = cls
    self.stand_in_number[cls] = number
    for ns, key in self.stand_in_waiting.pop(number, ()):
        ns[key] = cls


def _build(self, number, name, desc, memo, depth) -> type:
    if type(desc) is not list or len(desc) != 5:
        bare = type(name, (), {"__module__": "<tests>"})  # no description: a bare stand-in, data only
        _register(self, number, bare)
        return bare
    source, bases_n, attrs_n, names_n, dc = desc
    bases = tuple(decode_ref(self, b, memo, depth + 1) for b in bases_n)
    ns: dict = {"__builtins__": builtins, "__name__": "<tests>"}
    for key, node in names_n:
        if type(key) is not str:
            raise ProtocolError("malformed test-module class")
        if type(node) is list and node[:1] == [REF]:
            if node[1] in self.stand_in_building:  # itself, or a class whose build this one is part of
                self.stand_in_waiting.setdefault(node[1], []).append((ns, key))
            else:
                ns[key] = decode_ref(self, node, memo, depth + 1)
        else:
            ns[key] = self._dec(node, memo, depth + 1)
    cls: Any = None
    if type(source) is str and source:
        made: dict = {}
        ns[_BASES] = bases
        try:
            exec(compile(source, "<tests>", "exec"), ns, made)  # noqa: S102  (the judge's re-printed defs)
            cls = made.get(name)
        except Exception:  # noqa: BLE001  (e.g. a base layout conflict: data only, as before)
            cls = None
        ns.pop(_BASES, None)
    if type(cls) is not type:
        cls = type(name, bases, {"__module__": "<tests>"})
    for key, node in attrs_n:
        if type(key) is str and not _dunder(key):
            setattr(cls, key, self._dec(node, memo, depth + 1))
    if type(dc) is list:
        _apply_dataclass(cls, dc)
    _register(self, number, cls)
    return cls


def _apply_dataclass(cls: type, dc: list) -> None:
    """The dataclass machinery of the candidate's own `dataclasses`, with the judge's parameters;
    when it refuses (a field without its default), the class stays as built."""
    try:
        flags, fields = dc
        annotations = {}
        for name, factory, init, rep, compare, kw_only in fields:
            annotations[str(name)] = object
            opts: dict[str, Any] = {
                "init": bool(init),
                "repr": bool(rep),
                "compare": bool(compare),
                "kw_only": bool(kw_only),
            }
            if factory is not None:
                opts["default_factory"] = _FACTORIES[factory]
            elif name in vars(cls):
                opts["default"] = vars(cls)[name]
            setattr(cls, name, dataclasses.field(**opts))
        cls.__annotations__ = annotations
        keys = ("init", "repr", "eq", "order", "unsafe_hash", "frozen")
        dataclasses.dataclass(cls, **{k: bool(v) for k, v in zip(keys, flags, strict=True)})
    except Exception:  # noqa: BLE001
        for name, value in list(vars(cls).items()):
            if isinstance(value, dataclasses.Field):  # back to the plain default (or none)
                if value.default is dataclasses.MISSING:
                    delattr(cls, name)
                else:
                    setattr(cls, name, value.default)
