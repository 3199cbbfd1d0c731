"""The channel's attack classes, each with its positive control: the probe succeeds on the
unprotected path (the resolution rule the judge used before, kept here as `legacy_resolve`, or the
same candidate code run in-process on the same object) and is refused through the judge."""

import builtins
import collections
import importlib
import os
import random
import sys
import types

import pytest
from pair import Pair, RawGlobal, bare_codec

from agentlab_grader import wire
from agentlab_grader.stdtypes import ForeignGlobal

SECRET = "hidden-expected-answer-4711"

# The judge's former rule: the module (or a builtin's first component) checked, then getattr walks
# the dotted name. Kept only as the positive control of the attacks below.
LEGACY_PURE = {"calendar", "dataclasses", "random", "math", "operator", "types", "collections", "typing", "re"}
LEGACY_UNSAFE = {"exec", "eval", "open", "compile", "__import__", "getattr", "setattr", "globals", "vars"}


def legacy_resolve(module, qual):
    allowed = qual.split(".")[0] not in LEGACY_UNSAFE if module == "builtins" else module in LEGACY_PURE
    if not allowed:
        return None
    obj = sys.modules.get(module) or importlib.import_module(module)
    for part in qual.split(".") if qual else []:
        obj = getattr(obj, part)
    return obj


CHAINS = [
    ("random", "_os.system", lambda: os.system),
    ("builtins", "print.__self__.exec", lambda: builtins.exec),
    ("dataclasses", "builtins.exec", lambda: builtins.exec),
    ("calendar", "sys.stdout.close", lambda: sys.stdout.close),
    ("random", "_os", lambda: os),
    ("random", "__loader__", lambda: random.__loader__),
]


def names():
    def call_back(fn, x):
        return fn(x)

    def peek(obj, name):
        return getattr(obj, name)

    def poke(obj, name):
        setattr(obj, name, 1)

    def method(obj):
        return obj.read()

    def walk(gen):
        return gen.gi_frame.f_globals

    def first(gen):
        return next(gen)

    return {
        "make_op": lambda m, q: RawGlobal(m, q),
        "factory": lambda m, q: collections.defaultdict(RawGlobal(m, q)),
        "call_back": call_back,
        "peek": peek,
        "poke": poke,
        "method": method,
        "length": lambda obj: len(obj),
        "item": lambda obj: obj[0],
        "text": lambda obj: str(obj),
        "walk": walk,
        "first": first,
        "loader_through": lambda key, path: key(RawGlobal("random", "__loader__")).get_data(path),
    }


@pytest.fixture
def judge():
    pair = Pair(names())
    yield pair
    pair.close()


@pytest.mark.parametrize(("module", "qual", "real"), CHAINS)
def test_a_global_never_resolves_through_an_attribute_chain(judge, module, qual, real):
    assert legacy_resolve(module, qual) == real(), "positive control: the old rule resolves the real object"
    op = judge("make_op")(module, qual)
    assert type(op) is ForeignGlobal and not callable(op)
    with pytest.raises(TypeError):
        op("touch /tmp/never")  # type: ignore[operator]  # a test calling what the candidate returned runs nothing


def test_chained_calls_run_no_candidate_choice_in_the_judge(judge, tmp_path):
    """f(g(x)) with f and g the candidate's (HumanEval/38 style): f is a global it named."""
    marker = tmp_path / "ran"
    assert legacy_resolve("random", "_os.system") is os.system  # control: would be the real os.system
    with pytest.raises(TypeError):
        judge("make_op")("random", "_os.system")(f"touch {marker}")
    assert not marker.exists()


def test_defaultdict_factories_are_builtin_types_only(judge):
    assert legacy_resolve("builtins", "print.__self__.exec") is exec  # control
    for module, qual in (("builtins", "print.__self__.exec"), ("operator", "add"), ("random", "_os.system")):
        d = judge("factory")(module, qual)
        assert type(d) is collections.defaultdict and d.default_factory is None
    assert judge("factory")("builtins", "int").default_factory is int


class Workspace:
    """Stands for pytest's tmp_path or a TestCase: a judge object a test hands the candidate."""

    secret = SECRET

    def read(self):
        return SECRET

    def __len__(self):
        return 1

    def __getitem__(self, i):
        return SECRET

    def __str__(self):
        return SECRET


# (candidate function, its extra arguments, what it gets in-process from the same object)
OPAQUE = [
    ("peek", ("secret",), lambda r: r == SECRET),
    ("peek", ("read",), lambda r: r() == SECRET),
    ("method", (), lambda r: r == SECRET),
    ("poke", ("secret",), lambda r: r is None),
    ("length", (), lambda r: r == 1),
    ("item", (), lambda r: r == SECRET),
    ("text", (), lambda r: r == SECRET),
]


@pytest.mark.parametrize(("fn", "args", "reached"), OPAQUE)
def test_judge_objects_are_opaque(judge, fn, args, reached):
    assert reached(names()[fn](Workspace(), *args)), "positive control: in-process the same code reaches it"
    with pytest.raises(PermissionError, match="opaque"):
        judge(fn)(Workspace(), *args)


def test_generator_internals_are_refused(judge):
    gen = (x for x in [1, 2])
    assert "SECRET" in names()["walk"](x for x in [1]), "positive control: in-process gi_frame reaches the globals"
    with pytest.raises(PermissionError):
        judge("walk")(gen)
    assert judge("first")(gen) == 1  # advancing the iterator is what a candidate may do


def test_a_callback_returning_its_argument_makes_nothing_browsable(judge):
    loader = legacy_resolve("random", "__loader__")
    assert SECRET in loader.get_data(__file__).decode(), "positive control: a resolved loader reads any file"
    seen = []

    def key(x):
        seen.append(x)
        return x

    with pytest.raises(PermissionError, match="opaque"):
        judge("loader_through")(key, __file__)
    assert type(seen[0]) is ForeignGlobal  # the judge resolved nothing; what it returned is opaque


def test_machinery_never_crosses(judge):
    frame = sys._getframe()
    for value in (frame, frame.f_code, types.ModuleType("test_hidden"), random.__loader__, random.__spec__):
        with pytest.raises(TypeError, match="never crosses"):
            judge("call_back")(lambda x: x, value)
    with pytest.raises(TypeError, match="never crosses"):
        judge("call_back")(lambda _: sys._getframe(), 0)  # a judge callback's result is refused too


def test_the_test_modules_name_never_crosses():
    codec = bare_codec(frozenset({"solution"}), guarded=True, export=lambda v: 7)
    helper = types.FunctionType((lambda x: x).__code__, {}, "helper")
    helper.__module__ = "test_hidden"
    sys.modules["test_hidden"] = types.ModuleType("test_hidden")
    sys.modules["test_hidden"].helper = helper  # type: ignore[attr-defined]
    try:
        assert codec.encode(helper) == ["H", 7, "call"]
        assert codec.encode(len) == ["G", "builtins", "len"]
    finally:
        del sys.modules["test_hidden"]


def test_paths_outside_the_tests_tmp_never_cross(judge):
    import pathlib

    hidden = pathlib.Path(__file__)  # stands for the workspace holding the hidden tests
    assert SECRET in names()["text"](hidden.read_text()), "positive control: in-process the file is readable"
    for path in (hidden, hidden.parent, pathlib.Path("/")):
        with pytest.raises(TypeError, match="outside the test's temporary directory"):
            judge("call_back")(lambda p: p, path)


def test_exception_values_never_end_the_judges_session():
    codec = bare_codec(frozenset({"solution"}), guarded=True)
    node = ["EX", "KeyboardInterrupt", ["stop"]]
    codec.guarded = False
    assert type(codec.decode(node)) is KeyboardInterrupt  # control: without the judge's rule it is one
    codec.guarded = True
    assert type(wire.Codec.decode(codec, node)) is RuntimeError  # a test that raises it fails one test
    assert type(bare := wire.Codec.decode(codec, ["EX", "KeyError", ["k"]])) is KeyError and bare.args == ("k",)
