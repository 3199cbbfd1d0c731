"""Objects of classes the TEST module defines (a test builds `Node`s and hands them to the
candidate) cross by value: their instance attributes, and their class as a description.

The hidden tests never enter the candidate's process, so the candidate gets a stand-in: an
instance of a class rebuilt in its own interpreter from the judge's description (testclasses.py:
the class's defs as source, its plain-data class attributes, dataclass fields), never a live object
of the judge, never the test module's other globals, module or qualified name. A stand-in that
comes back is rebuilt with the judge's own class, and only a class the judge itself sent in this
session can be named (by a per-session number); its changes are copied back like a support-class
object's, never hiding a method or property of the class. Functions of wire.Codec (`self` is the
codec).
"""

from . import testclasses
from .frames import ProtocolError
from .stdtypes import shadows_behaviour

# The tag of such an object: ["OT", memo index, class number, class name, [[attr, value], ...]],
# and from the judge a sixth item: the class's description (testclasses.describe), or None when
# the message already carries it.
TAG = "OT"


def sendable_class(cls: type, test_modules: frozenset) -> bool:
    """A plain data class of the test module: every class of its MRO but `object` defined in a
    test module, no metaclass, no __slots__; pytest's own test classes (`Test*`) stay opaque."""
    if type(cls) is not type or cls.__name__.startswith("Test"):
        return False
    for c in cls.__mro__[:-1]:
        if c.__module__ not in test_modules or "__slots__" in c.__dict__:
            return False
    return cls.__mro__[-1] is object


def encode(self, v, memo, depth):
    """The judge's side: ["OT", …] for an object of a test-module data class, else None."""
    cls = type(v)
    if cls not in self.test_classes and not sendable_class(cls, self.test_modules):
        return None
    number = testclasses.number_of(self, cls)
    ref = memo.add(v)
    desc = testclasses.describe(self, cls, memo, depth)
    attrs = [[k, self._enc(x, memo, depth + 1)] for k, x in vars(v).items() if type(k) is str]
    return memo.wrap(v, [TAG, ref, number, cls.__name__, attrs, desc])


def encode_stand_in(self, v, memo, depth):
    """The candidate's side: a stand-in goes back under its class number."""
    number = self.stand_in_number.get(type(v))
    if number is None:
        return None
    ref = memo.add(v)
    attrs = [[k, self._enc(x, memo, depth + 1)] for k, x in vars(v).items() if type(k) is str]
    return memo.wrap(v, [TAG, ref, number, type(v).__name__, attrs])


def _attrs(self, cls, pairs, memo, depth) -> dict:
    out = {}
    for k, x in pairs:
        if type(k) is not str:
            raise ProtocolError("attribute names must be strings")
        if self.guarded and shadows_behaviour(cls, k):
            raise ProtocolError(f"attribute {k!r} would hide behaviour of {cls.__name__}")
        out[k] = self._dec(x, memo, depth + 1)
    return out


def _class(self, number, name, desc=None, memo=None, depth=0):
    if type(number) is not int or type(name) is not str:
        raise ProtocolError("malformed test-module object")
    if self.guarded:
        cls = self.test_class_of.get(number)
        if cls is None:
            raise ProtocolError("an answer names a test-module class the judge never sent")
        return cls
    # one stand-in class per judge class: type(a) is type(b) holds as in-process
    return testclasses.stand_in(self, number, name, desc, memo, depth)


def decode(self, n, memo, depth):
    cls = _class(self, n[2], n[3], n[5] if len(n) > 5 else None, memo, depth)
    new = cls.__new__  # the class's own allocator, as pickle does: no __init__ runs
    obj = new(cls)
    memo[n[1]] = obj
    obj.__dict__.update(_attrs(self, cls, n[4], memo, depth))
    return obj


def decode_into(self, orig, node, memo, depth):
    """["I", index, ["OT", …]]: an object we sent, with its new attributes."""
    if type(orig) is not _class(self, node[2], node[3]):
        raise ProtocolError("an answer changes the class of an object that was sent")
    attrs = _attrs(self, type(orig), node[4], memo, depth)
    vars(orig).clear()
    vars(orig).update(attrs)
    return orig
