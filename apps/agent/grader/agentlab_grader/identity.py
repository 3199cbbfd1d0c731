"""Identity across a call: the objects a request sent come back as ["I", index, new state] and are
updated in place (a reversed linked list's head IS the caller's node), and objects of the task's
support modules are rebuilt with the judge's own class, never with behaviour the candidate chose.
Functions of wire.Codec (`self` is the codec)."""

import base64
import pathlib
from typing import Any

from . import testobjects
from .allowlist import support_class
from .frames import ProtocolError
from .stdtypes import MUTABLE_STD, fill_mutable, shadows_behaviour

_STD_BY_NAME = {c.__name__: c for c in MUTABLE_STD}
_EXPECTED = {"L": list, "S": set, "D": dict, "BA": bytearray, "PA": pathlib.PosixPath}


def decode_into(self, n, memo, depth):
    """["I", index, node]: one of our objects came back; its new state replaces the old in place."""
    originals = getattr(memo, "originals", None)
    idx, node = n[1], n[2]
    if originals is None or type(idx) is not int or idx not in originals or type(node) is not list or not node:
        raise ProtocolError("an answer names an object that was not sent")
    orig, tag = originals[idx], node[0]
    kind = node[1] if tag == "X" else ""
    expected = _EXPECTED.get(tag) or _STD_BY_NAME.get(kind)
    if expected is not None and type(orig) is not expected:
        raise ProtocolError("an answer changes the type of an object that was sent")
    memo[node[2] if tag in ("X", "BA") else node[1]] = orig
    if tag == "X" and expected is not None:
        fill_mutable(orig, node, lambda x: self._dec(x, memo, depth + 1))
    elif tag == "PA" and self.guarded:
        self.paths.copy_back(orig, node[3], node[5])
    elif tag == "BA":
        orig[:] = base64.b64decode(node[1], validate=True)
    elif tag == "L":
        orig[:] = [self._dec(x, memo, depth + 1) for x in node[2]]
    elif tag == "S":
        items = [self._dec(x, memo, depth + 1) for x in node[2]]
        orig.clear()
        orig.update(items)
    elif tag == "D":
        pairs = [(self._dec(k, memo, depth + 1), self._dec(x, memo, depth + 1)) for k, x in node[2]]
        orig.clear()
        orig.update(pairs)
    elif tag == testobjects.TAG:
        testobjects.decode_into(self, orig, node, memo, depth)
    elif tag == "O":
        if type(orig).__module__ != node[2] or type(orig).__qualname__ != node[3]:
            raise ProtocolError("an answer changes the class of an object that was sent")
        attrs = {}
        for k, x in node[4]:
            if type(k) is not str:
                raise ProtocolError("attribute names must be strings")
            if self.guarded and shadows_behaviour(type(orig), k):
                raise ProtocolError(f"an answer sets {k!r}, which would hide behaviour of {type(orig).__name__}")
            attrs[k] = self._dec(x, memo, depth + 1)
        vars(orig).clear()
        vars(orig).update(attrs)
    else:
        raise ProtocolError(f"objects of kind {tag!r} are not sent back by identity")
    return orig


def decode_object(self, n, memo, depth):
    module, qual, attrs = str(n[2]), str(n[3]), n[4]
    if module not in self.shareable:
        raise ProtocolError(f"objects of module {module!r} cannot cross by value")
    cls = support_class(module, qual)
    if cls is None:
        raise ProtocolError(f"{module}.{qual} is not a class of that module")
    new: Any = cls.__new__  # the class's own allocator, as pickle does: no __init__ runs
    obj = new(cls)
    memo[n[1]] = obj
    for k, x in attrs:
        if type(k) is not str:
            raise ProtocolError("attribute names must be strings")
        if self.guarded and shadows_behaviour(cls, k):
            raise ProtocolError(f"attribute {k!r} would hide behaviour of {qual}")
        obj.__dict__[k] = self._dec(x, memo, depth + 1)
    return obj


class _Memo:
    """Encoder state: memo indices for shared and cyclic values, plus the identity bookkeeping."""

    def __init__(self, record, known):
        self.refs, self.record, self.known = {}, record, known
        self.classes: set = set()  # test-module class numbers this message already describes

    def add(self, v) -> int:
        ref = self.refs[id(v)] = len(self.refs)
        if self.record is not None:
            self.record[ref] = v
        return ref

    def wrap(self, v, node):
        theirs = self.known.get(id(v)) if self.known else None
        return ["I", theirs[0], node] if theirs is not None and theirs[1] is v else node


class _Originals(dict):
    """A decoder memo that also knows the objects our request sent (for ["I", …] answers)."""

    def __init__(self, memo, originals):
        super().__init__()
        self.inner, self.originals = memo, originals

    def __setitem__(self, k, v):
        super().__setitem__(k, v)
        self.inner[k] = v
