"""Unit tests of the judge <-> candidate channel (wire.py, peer.py), over a real socketpair with
the candidate side in a thread. The integration tests (tests/integration/judge-*.test.ts) run the
same code in the sandbox; these pin the codec's rules down one by one."""

import collections
import decimal
import os
import socket
import sys
import threading

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import pair  # noqa: E402

from agentlab_grader import wire  # noqa: E402
from agentlab_grader.peer import Peer  # noqa: E402
from agentlab_grader.proxy import CandidateLost, Proxy  # noqa: E402

SHARE = frozenset({"nodes_for_test"})


class Node:  # stands for a support-file class: shareable under the module name below
    def __init__(self, value, nxt=None):
        self.value, self.nxt = value, nxt


Node.__module__ = "nodes_for_test"
sys.modules["nodes_for_test"] = type(sys)("nodes_for_test")
sys.modules["nodes_for_test"].Node = Node  # type: ignore[attr-defined]  # a module made here


def candidate_module():
    class AlwaysEq:
        def __eq__(self, other):
            return True

    class FakeInt(int):
        def __eq__(self, other):
            return True

    def gen(n):
        yield from range(n)

    def reverse(head):
        prev = None
        while head:
            head.nxt, prev, head = prev, head, head.nxt
        return prev

    def sort_in_place(xs):
        xs.sort()

    def boom():
        raise KeyError("missing")

    def call_back(fn, x):
        return fn(x)

    def peek(obj, name):
        return getattr(obj, name)

    def poke(obj, name):
        setattr(obj, name, lambda *a, **k: None)

    return {
        "always_eq": lambda: AlwaysEq(),
        "fake_int": lambda: FakeInt(5),
        "gen": gen,
        "reverse": reverse,
        "sort_in_place": sort_in_place,
        "boom": boom,
        "call_back": call_back,
        "peek": peek,
        "poke": poke,
        "counter": collections.Counter("aab"),
        "dec": decimal.Decimal("1.10"),
        "exit": lambda: sys.exit(3),
    }


def bare_codec(private: frozenset, guarded: bool) -> wire.Codec:
    return pair.bare_codec(private, guarded, shareable=SHARE)


@pytest.fixture
def judge():
    a, b = socket.socketpair()
    names = candidate_module()
    cand = Peer(b.fileno(), judge=False, shareable=SHARE, private=frozenset({"solution"}))
    module = type(sys)("solution")
    module.__dict__.update(names)
    cand.resolve_named = lambda mod, name: module if name == "" else names[name]
    t = threading.Thread(target=cand.serve_forever, daemon=True)
    t.start()
    peer = Peer(a.fileno(), judge=True, shareable=SHARE, private=frozenset({"solution"}))
    peer.deadline = float("inf")

    def named(name):
        value = peer.request("get", ["N", "solution", ""], [name])
        return (
            Proxy(peer, value._hid, value._gen, value._kind, name=("solution", name)) if type(value) is Proxy else value
        )

    yield named
    a.close()
    t.join(2)
    b.close()


def test_forged_equality_never_crosses(judge):
    assert judge("always_eq")() != 3  # a handle: compared by identity on the judge's side
    assert not (judge("always_eq")() == 3) and not (3 == judge("always_eq")())
    with pytest.raises(TypeError):
        judge("always_eq")() - 3  # arithmetic with a judge value is never delegated
    value = judge("fake_int")()
    assert type(value) is int and value == 5 and value != 6  # the subclass crossed as its base value


def test_generators_are_lazy_and_batched(judge):
    g = judge("gen")(10**9)  # effectively infinite: only read-ahead is produced
    assert [next(g) for _ in range(5)] == [0, 1, 2, 3, 4]
    assert sum(judge("gen")(5000)) == sum(range(5000))


def test_identity_survives_a_call_and_mutation_is_copied_back(judge):
    n1 = Node(1)
    n3 = Node(3, Node(2, n1))
    head = judge("reverse")(n3)
    assert head is n1 and n1.nxt.nxt is n3 and n3.nxt is None
    xs = [3, 1, 2]
    inner = [xs]
    judge("sort_in_place")(xs)
    assert inner[0] is xs and xs == [1, 2, 3]


def test_exceptions_and_exits(judge):
    with pytest.raises(KeyError, match="missing"):
        judge("boom")()
    with pytest.raises(RuntimeError, match="SystemExit"):
        judge("exit")()


def test_callbacks_and_private_attributes(judge):
    assert judge("call_back")(lambda v: v * 7, 6) == 42

    class Probe:
        public = 1
        _expected = 42

    # The candidate may call what a test hands it; judge objects are otherwise opaque to it.
    for name in ("public", "_expected"):
        with pytest.raises(PermissionError):
            judge("peek")(Probe(), name)
    with pytest.raises(AttributeError):
        judge("peek")(lambda: 0, "__globals__")


def test_data_may_change_behaviour_may_not(judge):
    class Checker:
        def check(self, x):
            return x == 42

    c = Checker()
    with pytest.raises(PermissionError):
        judge("poke")(c, "check")  # would make c.check a candidate function
    assert c.check(41) is False
    codec = bare_codec(frozenset(), guarded=True)
    Node.describe = lambda self: "node"  # type: ignore[attr-defined]  # a method added for this test
    try:
        with pytest.raises(wire.ProtocolError):
            codec.decode(["O", 0, "nodes_for_test", "Node", [["describe", "forged"]]])
        assert codec.decode(["O", 0, "nodes_for_test", "Node", [["value", 1]]]).value == 1
    finally:
        delattr(Node, "describe")


def test_standard_types_rebuild_as_themselves(judge):
    c = judge("counter")
    assert type(c) is collections.Counter and c == {"a": 2, "b": 1}
    assert type(judge("dec")) is decimal.Decimal


def test_deep_structures_cross():
    codec = bare_codec(frozenset(), guarded=False)
    head = None
    for i in range(9000):  # a 9,000-node linked list (QuixBugs-style tests build long ones)
        head = Node(i, head)
    back = codec.decode(codec.encode(head))
    n = 0
    while back is not None:
        n, back = n + 1, back.nxt
    assert n == 9000


def test_the_judge_resolves_only_pure_globals():
    import math

    judge = bare_codec(frozenset({"solution"}), guarded=True)
    assert judge.decode(["G", "math", "sqrt"]) is math.sqrt
    assert judge.decode(["G", "builtins", "len"]) is len
    for module, name in (
        ("os", "system"),
        ("subprocess", "Popen"),
        ("builtins", "exec"),
        ("builtins", "open"),
        ("os", ""),
    ):
        value = judge.decode(["G", module, name])
        assert type(value) is wire.ForeignGlobal and not callable(value)


def test_malformed_frames_are_protocol_errors():
    a, b = socket.socketpair()
    os.write(b.fileno(), (5).to_bytes(4, "big") + b"{oops")
    with pytest.raises(wire.ProtocolError):
        wire.recv_frame(a.fileno())
    os.write(b.fileno(), (wire.MAX_FRAME + 1).to_bytes(4, "big"))
    with pytest.raises(wire.FrameTooLarge):
        wire.recv_frame(a.fileno())
    codec = bare_codec(frozenset({"solution"}), guarded=False)
    for bad in (
        ["O", 0, "os", "system", []],
        ["G", "solution", "f"],
        ["G", "antigravity", ""],
        ["I", 3, ["L", 0, []]],
        ["Q"],
    ):
        with pytest.raises(wire.ProtocolError):
            codec.decode(bad)
    a.close()
    b.close()


def test_a_dead_candidate_is_lost_not_a_verdict():
    a, b = socket.socketpair()
    peer = Peer(a.fileno(), judge=True, shareable=SHARE, private=frozenset({"solution"}))
    b.close()
    with pytest.raises(CandidateLost):
        Proxy(peer, 0, 0, "call", name=("solution", "f"))()
    assert peer.events and peer.events[0]["kind"] == "exited"
