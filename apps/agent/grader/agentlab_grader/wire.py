"""The judge <-> candidate channel: length-prefixed JSON frames and a by-value codec.

Only plain data crosses: None, bool, int, float, complex, str, bytes, bytearray, list, tuple, dict,
set, frozenset, range, slice, a few standard types (stdtypes.py), paths as their files (paths.py),
instances of the task's own (non-candidate) classes rebuilt from their attributes, and references
to globals that the receiver resolves in its OWN interpreter (the judge: one exact (module, name)
of its allowlist, allowlist.py). Every type check is exact (`type(x) is int`), so a subclass with
a forged `__eq__` never passes as data. Anything else crosses as a handle: the receiver gets a
proxy whose operations run back in the owner's process (see peer.py); the judge's own objects are
opaque to the candidate (call or advance only), and its interpreter's machinery never crosses.

Encoding: JSON scalars stand for themselves; every JSON array is a tagged node `[tag, ...]`.
"""

import base64
import pathlib
import sys
from typing import Any

from . import testobjects
from .allowlist import judge_global, refused_on_judge_side
from .frames import (
    MAX_DEPTH,
    MAX_FRAME,
    ChannelClosed,
    FrameTimeout,
    FrameTooLarge,
    ProtocolError,
    _deep_enough,
    recv_frame,
    send_frame,
)
from .identity import _Memo, _Originals, decode_into, decode_object
from .paths import Paths, snapshot
from .stdtypes import (
    BUILTIN_EXCEPTIONS,
    MUTABLE_STD,
    NO_IMPORT,
    SCALARS,
    STDLIB,
    ForeignGlobal,
    _builtin_base,
    _decode_stdlib,
    _encode_stdlib,
    builtin_base,
    exception_chain,
    global_name,
    resolve_global,
    shadows_behaviour,
)

# Integers beyond this cross as hexadecimal text: JSON's decimal digits are capped (and quadratic).
_BIG = 1 << 64
# What a call's answer may name by identity (["I", …]) and update in place.
_BY_IDENTITY = (list, set, dict, bytearray, pathlib.PosixPath, *MUTABLE_STD)


class Codec:
    """Encodes local values for the peer and decodes the peer's values, per one message."""

    def __init__(
        self,
        *,
        shareable_modules: frozenset,
        private_modules: frozenset,
        export,
        local,
        local_named,
        remote,
        handed_back,
        guarded: bool = False,
        exception_class=None,
        is_remote=None,
        test_modules: frozenset = frozenset(),
    ):
        self.guarded = guarded  # the judge's side: globals only from its allowlist (allowlist.judge_global)
        self.is_remote = is_remote or (lambda v: False)  # v is a proxy for one of the peer's objects
        self.paths = Paths(judge=guarded)
        self._class_names: dict = {}  # support class -> (module, qualname): once per class, not per object
        self.exception_class = exception_class  # judge: (builtin base, chain) -> its stand-in class
        self.shareable = shareable_modules  # modules both sides load from the same pristine source
        self.private = private_modules  # modules only the candidate has: their objects never cross by value
        self.export = export  # obj -> handle id in our registry
        self.local = local  # handle id -> our own object (the peer hands back one of ours)
        self.local_named = local_named  # (module, name) -> our module-level object, by name
        self.remote = remote  # (handle id, kind) -> proxy for the peer's object
        self.handed_back = handed_back  # obj -> the peer's handle id when obj is a proxy of theirs
        # Objects of the test modules' data classes (testobjects.py): the judge numbers each class
        # it sends; the candidate keeps one stand-in class per number.
        self.test_modules = test_modules
        self.test_classes: dict = {}
        self.test_class_of: dict = {}
        self.stand_in_class: dict = {}
        self.stand_in_number: dict = {}
        self.test_class_static: dict = {}  # judge: class -> what its description needs, computed once
        self.stand_in_building: set = set()  # candidate: class numbers being rebuilt (testclasses.py)
        self.stand_in_waiting: dict = {}  # candidate: number -> namespaces that name it, until built

    # -- encoding -------------------------------------------------------------------------------
    def encode(self, value, record=None, known=None):
        """`record` (a dict) receives memo index -> object for every mutable object sent by value,
        so that the answer can name them; `known` (id -> (index, object)) marks the peer's objects
        received in the request being answered: they go back as ["I", their index, new state]."""
        with _deep_enough():
            return self._enc(value, _Memo(record, known), 0)

    def _enc(self, v, memo, depth):
        t = type(v)
        if t in SCALARS:
            return v if t is not int or -_BIG < v < _BIG else ["N", format(v, "x")]
        if depth > MAX_DEPTH:
            raise ValueError("value nested too deeply to cross the judge boundary")
        key = id(v)
        if key in memo.refs:
            return ["R", memo.refs[key]]
        if t is list or t is set or t is dict:
            ref = memo.add(v)
            if t is dict:
                node = [
                    "D",
                    ref,
                    [[self._enc(k, memo, depth + 1), self._enc(x, memo, depth + 1)] for k, x in v.items()],
                ]
            else:
                items = v if t is list else list(v)
                body = items if _plain(items) else [self._enc(x, memo, depth + 1) for x in items]
                node = ["L" if t is list else "S", ref, body]
            return memo.wrap(v, node)
        if t is tuple or t is frozenset:
            ref = memo.add(v) if t is frozenset else -1
            items = list(v)
            body = items if _plain(items) else [self._enc(x, memo, depth + 1) for x in items]
            return ["T" if t is tuple else "F", ref, body]
        if t is bytes:
            return ["B", base64.b64encode(v).decode()]
        if t is bytearray:
            return memo.wrap(v, ["BA", base64.b64encode(bytes(v)).decode(), memo.add(v)])
        if t is complex:
            return ["C", v.real, v.imag]
        if t is range:
            return ["RG", v.start, v.stop, v.step]
        if t is slice:
            return [
                "SL",
                self._enc(v.start, memo, depth + 1),
                self._enc(v.stop, memo, depth + 1),
                self._enc(v.step, memo, depth + 1),
            ]
        if t is pathlib.PosixPath:
            return self._enc_path(v, memo)
        theirs = self.handed_back(v)
        if theirs is not None:  # one of the peer's own objects, handed back
            return ["Y", theirs] if type(theirs) is int else ["YN", theirs[0], theirs[1]]
        if not self.guarded and t in self.stand_in_number:
            return testobjects.encode_stand_in(self, v, memo, depth)
        std = _encode_stdlib(self, v, t, memo, depth)
        if std is not None:
            return std
        base = _builtin_base(v)
        if base is not None:  # a subclass of a builtin data type crosses as its plain value
            return self._enc(base, memo, depth)
        cls_name = getattr(t, "__module__", None)
        if self.guarded and cls_name in self.test_modules:
            node = testobjects.encode(self, v, memo, depth)
            if node is not None:
                return node
        if cls_name in self.shareable and hasattr(v, "__dict__") and getattr(v, "__slots__", None) is None:
            g = self._class_names.get(t, _UNSEEN)
            if g is _UNSEEN:
                g = self._class_names[t] = global_name(t, self.private)
            if g is not None:
                ref = memo.add(v)
                attrs = [[k, self._enc(x, memo, depth + 1)] for k, x in vars(v).items() if type(k) is str]
                return memo.wrap(v, ["O", ref, g[0], g[1], attrs])
        if type(v) is type and issubclass(v, BaseException) and v.__module__ in self.private:
            return ["E", builtin_base(v).__name__, exception_chain(v, self.private)]  # the judge builds a stand-in
        if t in _EXCEPTION_TYPES and _plain(v.args):
            return ["EX", t.__name__, list(v.args)]
        g = global_name(v, self.private)
        if g is not None and (not self.guarded or _importable_by_peer(g[0], self.shareable)):
            return ["G", g[0], g[1]]
        if self.guarded:
            why = refused_on_judge_side(v)
            if why is not None:
                raise TypeError(f"{why} never crosses to the candidate")
        kind = "iter" if hasattr(t, "__next__") else ("call" if callable(v) else "obj")
        return ["H", self.export(v), kind]

    def _enc_path(self, v, memo):
        """The judge sends a path's files (paths.py); the candidate answers with its copy's new
        state, names a path under its copy by number, and any other path by its text."""
        if self.guarded:
            return ["PA", memo.add(v), *self.paths.send(v)]
        where = self.paths.locate(v)
        if where is None:
            return ["X", "path", str(v)]
        if where[1]:
            return ["PR", where[0], where[1]]
        kind, tree = snapshot(str(v))
        return memo.wrap(v, ["PA", memo.add(v), where[0], kind, v.name, tree])

    # -- decoding -------------------------------------------------------------------------------
    def decode(self, node, originals=None, received=None):
        """`originals` (index -> object, from encode's `record`) resolves the peer's ["I", …] answers:
        the original object is updated in place and returned, so identities survive a call.
        `received` (a dict) collects id -> (index, object) of every mutable object decoded."""
        memo: dict[int, Any] = {}
        with _deep_enough():
            out = self._dec(node, memo if originals is None else _Originals(memo, originals), 0)
        if received is not None:
            for ref, obj in memo.items():
                if (
                    type(obj) in _BY_IDENTITY
                    or (hasattr(obj, "__dict__") and type(obj).__module__ in self.shareable)
                    or type(obj) in self.stand_in_number
                    or type(obj) in self.test_classes
                ):
                    received[id(obj)] = (ref, obj)
        return out

    def _dec(self, n, memo, depth):
        if type(n) is not list:
            if type(n) in SCALARS:
                return n
            raise ProtocolError(f"unexpected JSON value of type {type(n).__name__}")
        if depth > MAX_DEPTH or not n or type(n[0]) is not str:
            raise ProtocolError("malformed value")
        tag = n[0]
        try:
            if tag in ("L", "S", "F", "T"):
                ref, body = n[1], n[2]
                if tag == "L":
                    items_l: list = []
                    if ref >= 0:
                        memo[ref] = items_l
                    items_l.extend(self._dec(x, memo, depth + 1) for x in body)
                    return items_l
                if tag == "S":
                    items_s: set = set()
                    memo[ref] = items_s
                    items_s.update(self._dec(x, memo, depth + 1) for x in body)
                    return items_s
                items = [self._dec(x, memo, depth + 1) for x in body]
                if tag == "F":
                    memo[ref] = frozenset(items)
                    return memo[ref]
                return tuple(items)
            if tag == "D":
                items_d: dict = {}
                memo[n[1]] = items_d
                for k, x in n[2]:
                    items_d[self._dec(k, memo, depth + 1)] = self._dec(x, memo, depth + 1)
                return items_d
            if tag == "I":
                return decode_into(self, n, memo, depth)
            if tag == "R":
                if n[1] not in memo:
                    raise ProtocolError("reference to an object that is not yet complete")
                return memo[n[1]]
            if tag == "B":
                return base64.b64decode(n[1], validate=True)
            if tag == "BA":
                out_ba = bytearray(base64.b64decode(n[1], validate=True))
                memo[n[2]] = out_ba
                return out_ba
            if tag == "N":
                return int(str(n[1]), 16)
            if tag == "EX":
                return _builtin_exception(n[1], [self._dec(x, memo, depth + 1) for x in n[2]], self.guarded)
            if tag == "C":
                return complex(float(n[1]), float(n[2]))
            if tag == "RG":
                return range(int(n[1]), int(n[2]), int(n[3]))
            if tag == "SL":
                return slice(*(self._dec(x, memo, depth + 1) for x in n[1:4]))
            if tag == "O":
                return decode_object(self, n, memo, depth)
            if tag == testobjects.TAG:
                return testobjects.decode(self, n, memo, depth)
            if tag == "G":
                return self._dec_global(n[1], n[2])
            if tag == "H":
                return self.remote(int(n[1]), str(n[2]))
            if tag == "Y":
                return self.local(int(n[1]))
            if tag == "YN":
                return self.local_named(str(n[1]), str(n[2]))
            if tag == "PA":
                if self.guarded:
                    orig = self.paths.original(n[2])
                    self.paths.copy_back(orig, n[3], n[5])
                    return orig
                memo[n[1]] = made = self.paths.materialize(n[2], n[3], n[4], n[5])
                return made
            if tag == "PR" and self.guarded:
                return self.paths.original(n[1], n[2])
            if tag == "X":
                return _decode_stdlib(self, n, memo, depth)
            if tag == "E" and self.exception_class is not None:
                return self.exception_class(n[1], n[2])
        except ProtocolError:
            raise
        except (TypeError, ValueError, IndexError, KeyError, RecursionError) as e:
            raise ProtocolError(f"malformed {tag!r} value: {e}") from None
        raise ProtocolError(f"unknown tag {tag!r}")

    def _dec_global(self, module, qual):
        if type(module) is not str or type(qual) is not str:
            raise ProtocolError("malformed global reference")
        if module in self.private or module.split(".")[0] in self.private:
            raise ProtocolError(f"global of a candidate module {module!r} cannot cross by reference")
        if self.guarded:
            found = judge_global(module, qual, self.shareable)
            return found if found is not None else ForeignGlobal(f"{module}.{qual}" if qual else module)
        top = module.split(".")[0]
        if module not in sys.modules and module not in self.shareable and (top not in STDLIB or top in NO_IMPORT):
            raise ProtocolError(f"module {module!r} is neither loaded nor importable standard library")
        try:
            return resolve_global(module, qual)
        except Exception as e:  # noqa: BLE001
            raise ProtocolError(f"cannot resolve {module}.{qual}: {type(e).__name__}") from None


def _plain(items) -> bool:
    return all(type(x) in SCALARS and (type(x) is not int or -_BIG < x < _BIG) for x in items)


def _importable_by_peer(module: str, shareable: frozenset) -> bool:
    """A judge-side global goes by name only when the candidate can load the same thing (standard
    library, support files); a test module's function goes as a handle, its module name unsent."""
    top = module.split(".")[0]
    return module in shareable or (top in STDLIB and top not in NO_IMPORT)


def _builtin_exception(name, args, guarded):
    cls = BUILTIN_EXCEPTIONS.get(name) if type(name) is str else None
    if cls is None:
        raise ProtocolError("malformed exception value")
    if guarded and not issubclass(cls, Exception):  # a SystemExit a test raised would end its session
        return RuntimeError(name, *args)
    try:
        return cls(*args)
    except Exception:  # noqa: BLE001  (a constructor that wants other arguments)
        return cls(*(str(a) for a in args))


_EXCEPTION_TYPES = frozenset(BUILTIN_EXCEPTIONS.values())
_UNSEEN = object()


__all__ = [
    "BUILTIN_EXCEPTIONS",
    "MAX_DEPTH",
    "MAX_FRAME",
    "SCALARS",
    "ChannelClosed",
    "Codec",
    "ForeignGlobal",
    "FrameTimeout",
    "FrameTooLarge",
    "ProtocolError",
    "builtin_base",
    "exception_chain",
    "global_name",
    "recv_frame",
    "resolve_global",
    "send_frame",
    "shadows_behaviour",
]
