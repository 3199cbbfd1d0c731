"""Honest styles that grade in the judge as they do in-process: operators between the candidate's
own objects, identity of handles, copy-back of standard containers, exceptions with their
arguments, test-module functions as callbacks, big integers, dict views, aware datetimes."""

import collections
import datetime
import os
import types
import zoneinfo

import pytest
from pair import Pair


def names():
    class Point:
        def __init__(self, x, y):
            self.x, self.y = x, y

        def __eq__(self, o):
            return isinstance(o, Point) and (self.x, self.y) == (o.x, o.y)

        def __lt__(self, o):
            return (self.x, self.y) < (o.x, o.y)

        def __add__(self, o):
            return Point(self.x + o.x, self.y + o.y)

        def __hash__(self):
            return hash((self.x, self.y))

        def __bool__(self):
            return bool(self.x or self.y)

        def __format__(self, spec):
            return format(f"({self.x}, {self.y})", spec)

    class Bag:
        def __init__(self):
            self.items = []

        def add(self, x):
            self.items.append(x)
            return self

    class Resource:
        log: list = []

        def __enter__(self):
            Resource.log.append("enter")
            return self

        def __exit__(self, kind, value, tb):
            Resource.log.append(f"exit {kind.__name__ if kind else None}")
            return kind is ValueError or kind is AssertionError  # swallows both, if allowed

        def entries(self):
            return list(Resource.log)

    class Invalid(ValueError):
        def __init__(self, field, code):
            super().__init__(field)
            self.field, self.code = field, code

        def __str__(self):
            return f"invalid {self.field}"

    Invalid.__module__ = "solution"  # defined by the candidate's module

    def grow(d):
        if isinstance(d, collections.deque):
            d.appendleft(0)
        elif isinstance(d, collections.OrderedDict):
            d.move_to_end("new", last=False)
            d["new"] += 1
        elif isinstance(d, bytearray):
            d.extend(b"!")
        else:
            d["new"] += 1
        return d

    def raise_key(k):
        raise KeyError(k)

    def raise_invalid():
        raise Invalid("age", 42)

    def write_to(path):
        path.write_text("written by the candidate")
        return path

    def refresh(folder):
        (folder / "new.txt").write_text("new")
        (folder / "old.txt").unlink()
        (folder / "sub").mkdir()
        return folder / "new.txt", sorted(p.name for p in folder.iterdir())

    return {
        "Point": Point,
        "Bag": Bag,
        "Resource": Resource,
        "Invalid": Invalid,
        "grow": grow,
        "raise_key": raise_key,
        "raise_invalid": raise_invalid,
        "apply": lambda fn, x: fn(x),
        "square": lambda n: n * n,
        "keys": lambda d: d.keys(),
        "items": lambda d: d.items(),
        "shift": lambda t: t + datetime.timedelta(hours=1),
        "write_to": write_to,
        "line_count": lambda p: len(p.read_text().splitlines()),
        "refresh": refresh,
        "line_count_text": lambda s, echo=False: (s + s) if echo else len(s),
    }


@pytest.fixture
def judge():
    pair = Pair(names())
    yield pair
    pair.close()


def test_operators_between_the_candidates_own_objects(judge):
    P = judge("Point")
    a, b = P(1, 2), P(1, 2)
    assert a == b and not (a != b) and a < P(2, 0)
    assert (a + b) == P(2, 4) and (a + b).x == 2
    assert hash(a) == hash((1, 2)) and len({a, b}) == 1
    assert bool(a) and not bool(P(0, 0))
    assert f"{a:>8}" == "  (1, 2)"
    assert a != (1, 2) and not (a == (1, 2))  # a judge value on one side: identity, the candidate is not asked
    with pytest.raises(TypeError):
        a + 1  # noqa: B018  (arithmetic with a judge value is never delegated)


def test_with_blocks_and_what_they_may_swallow(judge):
    r = judge("Resource")()
    with r as inside:
        assert inside is r  # one proxy per handle: __enter__'s `self` is the same object
    with r:
        raise ValueError("swallowed by the candidate's __exit__, as in-process")
    with pytest.raises(AssertionError):
        with r:
            raise AssertionError("a failed assert is never swallowed")
    assert r.entries() == ["enter", "exit None", "enter", "exit ValueError", "enter", "exit AssertionError"]


def test_one_proxy_per_handle(judge):
    b = judge("Bag")()
    assert b.add(1) is b and b.add(2).add(3) is b
    assert b.items == [1, 2, 3]


@pytest.mark.parametrize(
    "value",
    [
        collections.deque([1, 2]),
        collections.Counter({"new": 1}),
        collections.OrderedDict(first=0, new=1),
        collections.defaultdict(int),
        bytearray(b"ab"),
    ],
)
def test_standard_containers_are_copied_back(judge, value):
    expected = names()["grow"](type(value)(value) if type(value) is not collections.defaultdict else value.copy())
    inner = [value]
    result = judge("grow")(value)
    assert result is value and inner[0] is value and value == expected and type(value) is type(expected)


def test_exceptions_carry_args_and_public_attributes(judge):
    with pytest.raises(KeyError) as e:
        judge("raise_key")("k")
    assert e.value.args == ("k",) and str(e.value) == "'k'"
    with pytest.raises(judge("Invalid"), match="invalid age") as e2:
        judge("raise_invalid")()
    assert isinstance(e2.value, ValueError) and e2.value.args == ("age",)
    assert getattr(e2.value, "field", None) == "age" and getattr(e2.value, "code", None) == 42


def test_a_test_module_function_is_a_callback(judge):
    def double(x):
        return 2 * x

    helper = types.FunctionType(double.__code__, {}, "double")
    helper.__module__ = __name__  # a function of the test module itself, not importable over there
    globals()["double"] = helper
    assert judge("apply")(helper, 21) == 42


def test_big_integers_dict_views_and_aware_datetimes(judge):
    big = 7**60000
    assert judge("square")(big) == big * big and judge("square")(-(2**70)) == 2**140
    keys = judge("keys")({"a": 1, "b": 2})
    assert type(keys) is type({}.keys()) and keys == {"a", "b"} and list(keys) == ["a", "b"]
    assert judge("items")({"a": 1}) == {("a", 1)}
    for tz in (datetime.timezone(datetime.timedelta(hours=2)), zoneinfo.ZoneInfo("Europe/Paris")):
        t = datetime.datetime(2024, 3, 31, 1, 30, tzinfo=tz)
        shifted = judge("shift")(t)
        assert shifted == t + datetime.timedelta(hours=1) and shifted.tzinfo == t.tzinfo


def test_paths_cross_as_files_and_come_back(judge, tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("a\nb\nc\n")
    assert judge("line_count")(src) == 3
    out = tmp_path / "out.txt"
    assert judge("write_to")(out) is out and out.read_text() == "written by the candidate"
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "old.txt").write_text("old")
    new, listing = judge("refresh")(folder)
    assert listing == ["new.txt", "sub"] and new == folder / "new.txt" and new.read_text() == "new"
    assert sorted(p.name for p in folder.iterdir()) == ["new.txt", "sub"]


def test_messages_beyond_one_frame_stream(judge):
    from agentlab_grader import frames

    big = "x" * (frames.MAX_FRAME + (3 << 20))  # one argument and one answer over 16 MiB each
    assert judge("line_count_text")(big) == len(big)
    with pytest.raises(MemoryError, match="limit of 64 MiB"):
        judge("line_count_text")("y" * (frames.MAX_MESSAGE // 2 + 1), echo=True)  # the answer is too big
    with pytest.raises(MemoryError, match="limit of 64 MiB"):
        judge("line_count_text")("y" * (frames.MAX_MESSAGE + 1))  # the test's own argument is
    assert judge("line_count_text")("ok") == 2  # and the candidate is still there


def test_signatures_of_candidate_functions(judge):
    import inspect

    sig = inspect.signature(judge("line_count_text"))
    assert list(sig.parameters) == ["s", "echo"] and sig.parameters["echo"].default is False
    assert str(sig) == str(inspect.signature(names()["line_count_text"]))  # as in-process


def test_the_tests_environment_reaches_the_candidate(monkeypatch):
    from agentlab_grader.environ import SharedEnviron

    monkeypatch.delenv("GREETING", raising=False)
    judge_side, candidate_side = SharedEnviron(), SharedEnviron()
    monkeypatch.setenv("GREETING", "hola")
    monkeypatch.setenv("PYTEST_SECRET_NAME", "test_hidden::test_x")  # pytest's own: never sent
    sent = judge_side.changes()
    assert sent == {"GREETING": "hola"} and judge_side.changes() is None  # sent once, until it changes
    monkeypatch.setenv("GREETING", "other")  # stands for the candidate process's own value
    candidate_side.apply(sent)
    assert os.environ["GREETING"] == "hola"
    candidate_side.apply({})  # the test's monkeypatch undone: the candidate's own start value again
    assert "GREETING" not in os.environ
