"""The classes of test-module objects reach the candidate rebuilt from a description
(agentlab_grader/testclasses.py): methods, properties, static and class methods, super(),
class attributes, dataclass behaviour, other test classes and standard modules the methods use.
Each style is first shown honest in-process (the candidate's function called on the test's own
object); its positive control is the judge without the rule (no test module named), where the
object is opaque and the style fails.

The attacks: methods of a test-module class that would hand the candidate a trusted-side object
(a function, a lock and the data of the test module, its globals, its file name, its module).
Positive control: in-process each returns the trusted object; in the judge none is reachable,
because the method runs in the candidate's interpreter with only what the description named."""

import math
import threading
from dataclasses import dataclass, field
from math import sqrt

import pytest
from pair import Pair

SECRET = "expected answers of the hidden test"
LOCK = threading.Lock()


def hidden_helper():
    return SECRET


class Stack:
    kind = "lifo"  # plain data: crosses by value
    limits = {"max": 3}

    def __init__(self, items=None):
        self.items = list(items or [])

    def push(self, x):
        self.items.append(x)
        return self

    def top(self):
        return self.items[-1]

    @property
    def size(self):
        return len(self.items)

    @staticmethod
    def norm(x, y):
        return sqrt(x * x + y * y) + math.floor(0.5)

    @classmethod
    def of(cls, *xs):
        return cls(xs)

    def copy(self):
        return Stack(self.items)  # a test-module class named by a method: rebuilt too

    def __len__(self):
        return len(self.items)

    def __eq__(self, other):
        return type(other) is type(self) and other.items == self.items

    __hash__ = None  # type: ignore[assignment]  # unhashable, as __eq__ makes it


class Counted(Stack):
    def push(self, x):
        self.pushed = getattr(self, "pushed", 0) + 1
        return super().push(x)


@dataclass(order=True)
class Point:
    x: int
    y: int = 0
    tags: list = field(default_factory=list)


class Leaky:
    """A test class whose methods would give the candidate trusted-side objects."""

    lock = LOCK  # not plain data: never sent

    def __init__(self):
        self.v = 1

    def helper(self):
        return hidden_helper

    def data(self):
        return SECRET

    def module_globals(self):
        return globals()

    def file(self):
        return __file__

    def module(self):
        import sys

        return sys.modules[__name__]

    def by_default(self, found=hidden_helper):
        return found

    def class_lock(self):
        return type(self).lock


def candidate_names():
    def call(obj, name, *args):
        return getattr(obj, name)(*args)

    def read(obj, name):
        return getattr(obj, name)

    def styles(stack, point):
        more = type(stack).of(4, 5)
        return [
            stack.push(3).top(),
            stack.size,
            len(stack),
            type(stack).kind,
            stack.limits["max"],
            type(stack).norm(3, 4),
            more.items,
            stack.copy() == stack,
            type(stack.copy()).__name__,
            repr(point),
            point < type(point)(point.x + 1),
            type(point)(7).tags,
        ]

    def counted(c):
        c.push(1).push(2)
        return c.pushed, c.items

    def make(stack):
        return type(stack).of(9)

    def globals_of(obj, name):
        fn = getattr(type(obj), name)
        return sorted(k for k in fn.__globals__ if not k.startswith("__"))

    return {
        "call": call,
        "read": read,
        "styles": styles,
        "counted": counted,
        "make": make,
        "globals_of": globals_of,
    }


EXPECTED_STYLES = [3, 3, 3, "lifo", 3, 5.0, [4, 5], True, "Stack", "Point(x=1, y=2, tags=[])", True, []]


@pytest.fixture
def judge():
    pair = Pair(candidate_names(), test_modules=frozenset({__name__}))
    yield pair
    pair.close()


def test_methods_and_class_attributes_reach_the_candidate(judge):
    assert candidate_names()["styles"](Stack([1, 2]), Point(1, 2)) == EXPECTED_STYLES  # in-process
    stack = Stack([1, 2])
    assert judge("styles")(stack, Point(1, 2)) == EXPECTED_STYLES
    assert stack.items == [1, 2, 3]  # the candidate's push came back


def test_positive_control_without_the_rule_the_methods_are_out_of_reach():
    pair = Pair(candidate_names())
    try:
        assert candidate_names()["call"](Stack([1, 2]), "top") == 2  # in-process
        with pytest.raises(PermissionError, match="opaque"):
            pair("call")(Stack([1, 2]), "top")
    finally:
        pair.close()


def test_super_and_objects_the_candidate_makes_come_back_as_the_tests_classes(judge):
    c = Counted()
    assert judge("counted")(c) == (2, [1, 2]) and c.pushed == 2 and c.items == [1, 2]
    made = judge("make")(Stack())
    assert type(made) is Stack and made.items == [9]


def test_positive_control_in_process_the_methods_reach_trusted_objects():
    call, read = candidate_names()["call"], candidate_names()["read"]
    leaky = Leaky()
    assert call(leaky, "helper") is hidden_helper
    assert call(leaky, "data") == SECRET
    assert call(leaky, "module_globals")["SECRET"] == SECRET
    assert call(leaky, "file").endswith(".py")
    assert call(leaky, "module").SECRET == SECRET
    assert call(leaky, "by_default") is hidden_helper
    assert call(leaky, "class_lock") is LOCK and read(leaky, "lock") is LOCK


def test_methods_of_the_test_module_reach_no_trusted_object(judge):
    leaky = Leaky()
    for name in ("helper", "data", "file"):
        with pytest.raises(NameError):
            judge("call")(leaky, name)
    assert "SECRET" not in judge("call")(leaky, "module_globals")
    with pytest.raises(KeyError):
        judge("call")(leaky, "module")  # its module is "<tests>", which the candidate never has
    with pytest.raises(AttributeError):
        judge("call")(leaky, "by_default")  # a default it cannot evaluate: that method is missing
    with pytest.raises(AttributeError):
        judge("read")(leaky, "lock")  # not plain data: the class attribute is not sent
    assert judge("globals_of")(leaky, "data") == []  # the methods' globals: nothing of the test module
    assert judge("globals_of")(Stack(), "norm") == ["Stack", "math", "sqrt"]
