"""A judge peer and a candidate peer over a real socketpair, the candidate serving in a thread.
The candidate's codec can be made hostile: a RawGlobal it returns goes out as whatever global
reference it names (a real attacker patches its own codec the same way)."""

import os
import socket
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from agentlab_grader import wire  # noqa: E402
from agentlab_grader.peer import Peer  # noqa: E402
from agentlab_grader.proxy import Proxy  # noqa: E402


class RawGlobal:
    """What a hostile candidate sends as ["G", module, qual]; callable so it may be a factory."""

    def __init__(self, module: str, qual: str):
        self.module, self.qual = module, qual

    def __call__(self, *a):
        return None


def bare_codec(private: frozenset, guarded: bool, shareable: frozenset = frozenset(), export=id) -> wire.Codec:
    """A codec with no peer behind it: for values that need no handles."""
    return wire.Codec(
        shareable_modules=shareable,
        private_modules=private,
        export=export,
        local=None,
        local_named=None,
        remote=None,
        handed_back=lambda v: None,
        guarded=guarded,
    )


class Pair:
    def __init__(self, names: dict, shareable: frozenset = frozenset(), test_modules: frozenset = frozenset()):
        self.a, self.b = socket.socketpair()
        self.cand = Peer(self.b.fileno(), judge=False, shareable=shareable, private=frozenset({"solution"}))
        module = type(sys)("solution")
        module.__dict__.update(names)
        self.cand.resolve_named = lambda mod, name: module if name == "" else names[name]
        plain = self.cand.codec._enc

        def hostile(v, memo, depth):
            if type(v) is RawGlobal:
                return ["G", v.module, v.qual]
            return plain(v, memo, depth)

        self.cand.codec._enc = hostile  # type: ignore[method-assign]  # the attacker's own codec
        self.thread = threading.Thread(target=self.cand.serve_forever, daemon=True)
        self.thread.start()
        self.judge = Peer(
            self.a.fileno(), judge=True, shareable=shareable, private=frozenset({"solution"}), test_modules=test_modules
        )

    def __call__(self, name: str):
        """`from solution import name`, as the judge's proxy module does it."""
        value = self.judge.request("get", ["N", "solution", ""], [name])
        if type(value) is Proxy:
            return Proxy(self.judge, value._hid, value._gen, value._kind, name=("solution", name))
        return value

    def close(self) -> None:
        self.a.close()
        self.thread.join(2)
        self.b.close()
