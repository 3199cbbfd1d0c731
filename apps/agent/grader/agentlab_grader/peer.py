"""One side of the judge <-> candidate channel: a symmetric, single-threaded RPC peer.

Each side owns its objects; what cannot cross by value (wire.py) crosses as a handle, and the
other side's proxy sends every operation back to the owner. While a side waits for an answer it
serves the other side's nested requests (a candidate calling a test's `key=` lambda), so calls
may nest to any depth. The judge asks the candidate about an operator only when every operand is
the candidate's own object (proxy.py): a candidate never decides whether its value equals one of
the judge's. Judge objects a test hands the candidate are opaque: it may call a callable and
advance an iterator, nothing else (no attribute: `__globals__` or `gi_frame` would expose the tests).
"""

import io
import sys
import time
from collections.abc import Callable
from typing import Any

from . import wire
from .environ import SharedEnviron
from .errors import Exceptions
from .operators import operate
from .proxy import CandidateLost, CandidateTimeout, Proxy

MAX_CAPTURE = 64 << 10


class Peer:
    def __init__(
        self, fd: int, *, judge: bool, shareable: frozenset, private: frozenset, test_modules: frozenset = frozenset()
    ):
        self.fd = fd
        self.judge = judge
        self.gen = 0
        self.objects: dict = {}
        self.ids: dict = {}
        self.deadline = float("inf")
        self.on_lost: Callable[[str, str], None] | None = None  # judge: the candidate is gone (kind, detail)
        self.before_request: Callable[[], None] | None = None  # judge: replaces a lost candidate first
        # candidate: (module, name) -> object, importing the module on first use
        self.resolve_named: Callable[[str, str], Any] | None = None
        self.events: list = []
        self.environ = SharedEnviron()
        self.errors: Exceptions  # set below: the codec's stand-in classes come from it
        self.codec = wire.Codec(
            shareable_modules=shareable,
            private_modules=private,
            export=self._export,
            local=self._local,
            local_named=self._local_named,
            remote=self._remote,
            handed_back=self._handed_back,
            guarded=judge,
            exception_class=lambda base, chain: self.errors.stand_in(base, chain),
            is_remote=self.is_remote,
            test_modules=test_modules if judge else frozenset(),
        )
        self.errors = Exceptions(self.codec, judge, lambda: self.resolve_named)
        self.proxies: dict = {}  # (generation, handle id) -> its one proxy: identities hold (b.add(x) is b)

    # -- registry -------------------------------------------------------------------------------
    def _export(self, obj):
        hid = self.ids.get(id(obj))
        if hid is None or self.objects.get(hid) is not obj:
            hid = len(self.objects) + 1
            self.objects[hid] = obj
            self.ids[id(obj)] = hid
        return hid

    def _local(self, hid):
        if hid not in self.objects:
            raise wire.ProtocolError(f"unknown handle {hid}")
        return self.objects[hid]

    def _local_named(self, module, name):
        if self.judge or self.resolve_named is None:
            raise wire.ProtocolError("named objects live on the candidate's side only")
        return self.resolve_named(module, name)

    def _remote(self, hid, kind):
        if kind not in ("iter", "call", "obj"):
            raise wire.ProtocolError(f"unknown handle kind {kind!r}")
        key = (self.gen, hid)
        proxy = self.proxies.get(key)
        if proxy is None:
            proxy = self.proxies[key] = Proxy(self, hid, self.gen, kind)
        return proxy

    def is_remote(self, v) -> bool:
        return type(v) is Proxy and object.__getattribute__(v, "_peer") is self

    def _handed_back(self, v):
        if type(v) is not Proxy or object.__getattribute__(v, "_peer") is not self:
            return None
        if v._name is not None:
            return v._name
        return v._hid if v._gen == self.gen else None

    def rebind(self, fd: int) -> None:
        """A fresh candidate replaced the old one: its handles are void, named targets survive."""
        self.fd = fd
        self.gen += 1
        self.proxies.clear()
        self.environ.sent = {}  # the fresh candidate gets the test's environment again

    # -- requests (our side asks) ----------------------------------------------------------------
    def call(self, target, args, kwargs):
        """Arguments travel as one value (identities shared between them survive); the answer is
        [result, args, kwargs] after the call, in which every object we sent comes back by
        identity with its new state: mutated arguments are updated in place, deep inside graphs
        too, and a result that is one of our objects is that object."""
        sent: dict[int, Any] = {}
        packed = self.codec.encode([list(args), dict(kwargs)], record=sent)
        reply = self._roundtrip({"op": "call", "t": target, "a": packed})
        if "e" in reply:
            if "s" in reply:  # the arguments' state at the exception: mutations before it stand
                self.codec.decode(reply["s"], originals=sent)
            raise self.errors.rebuild(reply["e"])
        out = self.codec.decode(reply.get("r"), originals=sent)
        if type(out) is not list or len(out) != 3:
            raise CandidateLost("the candidate broke the channel protocol: malformed call answer")
        return out[0]

    def next_batch(self, target, n):
        """Up to n items; (items, done, exception raised after them or None)."""
        reply = self._roundtrip({"op": "next", "t": target, "a": [], "n": n})
        items = self.codec.decode(reply.get("r", ["L", -1, []]))
        if type(items) is not list:
            raise CandidateLost("the candidate broke the channel protocol: malformed items")
        error = self.errors.rebuild(reply["e"]) if "e" in reply else None
        return items, bool(reply.get("stop")) or error is not None, error

    def request(self, op, target, args, short=False):
        msg = {"op": op, "t": target, "a": [self.codec.encode(a) for a in args]}
        return self._result(self._roundtrip(msg, short=short))

    def _result(self, reply):
        if "e" in reply:
            raise self.errors.rebuild(reply["e"])
        return self.codec.decode(reply.get("r"))

    def _roundtrip(self, msg, short=False):
        if self.before_request is not None:
            self.before_request()
        if self.judge and (msg["t"][0] == "H" and msg["t"][2] != self.gen):
            raise CandidateLost("this candidate object belonged to a candidate process that was replaced")
        deadline = min(self.deadline, time.monotonic() + 1.0) if short else self.deadline
        if self.judge:
            env = self.environ.changes()
            if env is not None:
                msg["env"] = env
        try:
            wire.send_frame(self.fd, msg)
        except wire.FrameTooLarge as e:  # our own message: nothing was sent, the peer is fine
            raise MemoryError(str(e)) from None
        except wire.ChannelClosed as e:
            self._lost("exited", str(e))
            raise CandidateLost("the candidate process exited or was killed") from None
        try:
            while True:
                frame = wire.recv_frame(self.fd, deadline)
                if type(frame) is not dict:
                    raise wire.ProtocolError("a frame must be an object")
                if "op" in frame:
                    self._serve_one(frame)
                    continue
                if self.judge:
                    self._forward_output(frame)
                return frame
        except wire.FrameTimeout:
            if short:
                raise
            self._lost("timeout", f"the candidate did not answer {msg['op']} within the test's time limit")
            raise CandidateTimeout("timeout: the candidate did not answer within the test's time limit") from None
        except wire.FrameTooLarge as e:
            self._lost("resource_limit", str(e))
            raise CandidateLost(f"the candidate's answer was too large: {e}") from None
        except wire.ProtocolError as e:
            self._lost("protocol", str(e))
            raise CandidateLost(f"the candidate broke the channel protocol: {e}") from None
        except wire.ChannelClosed as e:
            self._lost("exited", str(e))
            raise CandidateLost("the candidate process exited or was killed") from None

    def _lost(self, kind, detail):
        self.events.append({"kind": kind, "detail": detail[:300]})
        if self.on_lost is not None:
            self.on_lost(kind, detail)

    def _forward_output(self, frame):
        # What the candidate printed during the call joins the test's captured output (capsys).
        for key, stream in (("o", sys.stdout), ("x", sys.stderr)):
            text = frame.get(key)
            if type(text) is str and text:
                stream.write(text)

    # -- serving (the peer asks us) ---------------------------------------------------------------
    def serve_forever(self) -> None:
        while True:
            try:
                frame = wire.recv_frame(self.fd)
            except wire.ChannelClosed:
                return
            if type(frame) is not dict or "op" not in frame:
                return
            self._serve_one(frame)

    def _serve_one(self, frame):
        out = io.StringIO()
        reply = {}
        saved = sys.stdout, sys.stderr
        if not self.judge:
            sys.stdout = sys.stderr = out
        try:
            reply = self._dispatch(frame)
        except StopIteration:
            reply = {"stop": True}
        except wire.ProtocolError:
            raise
        except BaseException as e:  # noqa: BLE001  (whatever the code raised travels back)
            reply = {"e": self.errors.describe(e)}
        finally:
            sys.stdout, sys.stderr = saved
        text = out.getvalue()
        if text:
            reply["o"] = text[:MAX_CAPTURE]
        try:
            wire.send_frame(self.fd, reply)
        except wire.FrameTooLarge as e:
            wire.send_frame(self.fd, {"e": ["MemoryError", str(e)]})

    def _call(self, obj, packed):
        received: dict[int, tuple] = {}
        unpacked = self.codec.decode(packed, received=received)
        if (
            type(unpacked) is not list
            or len(unpacked) != 2
            or type(unpacked[0]) is not list
            or type(unpacked[1]) is not dict
        ):
            raise wire.ProtocolError("malformed call arguments")
        args, kwargs = unpacked
        if not all(type(k) is str for k in kwargs):
            raise wire.ProtocolError("keyword names must be strings")
        try:
            result = obj(*args, **kwargs)
        except BaseException as e:  # noqa: BLE001
            return {"e": self.errors.describe(e), "s": self.codec.encode([args, kwargs], known=received)}
        return {"r": self.codec.encode([result, args, kwargs], known=received)}

    def _next(self, it, n):
        n = n if type(n) is int and 1 <= n <= 256 else 1
        items, reply = [], {}
        try:
            for _ in range(n):
                items.append(next(it))
        except StopIteration:
            reply["stop"] = True
        except BaseException as e:  # noqa: BLE001  (raised after the items produced before it)
            reply["e"] = self.errors.describe(e)
        reply["r"] = self.codec.encode(items)
        return reply

    def _dispatch(self, frame):
        op, target, args = frame.get("op"), frame.get("t"), frame.get("a", [])
        if "env" in frame and not self.judge:
            self.environ.apply(frame["env"])
        obj = self._resolve(target)
        if self.judge:
            return self._on_judge_object(op, obj, args, frame)
        if op == "call":
            return self._call(obj, args)
        if type(args) is not list:
            raise wire.ProtocolError("malformed arguments")
        decoded = [self.codec.decode(a) for a in args]
        if op == "op":
            return {"r": self.codec.encode(operate(obj, decoded))}
        if op == "get":
            return {"r": self.codec.encode(getattr(obj, decoded[0]))}
        if op == "set":
            setattr(obj, decoded[0], decoded[1])
            return {"r": None}
        if op == "iter":
            return {"r": self.codec.encode(iter(obj))}
        if op == "next":
            return self._next(obj, frame.get("n", 1))
        if op == "len":
            return {"r": len(obj)}
        if op == "getitem":
            return {"r": self.codec.encode(obj[decoded[0]])}
        if op == "setitem":
            obj[decoded[0]] = decoded[1]
            return {"r": None}
        if op == "repr":
            return {"r": repr(obj)[:2000]}
        if op == "str":
            return {"r": str(obj)}
        if op == "isinstance" and not self.judge:
            return {"r": isinstance(decoded[0], obj) if isinstance(obj, type) else False}
        if op == "names":
            return {"r": self.codec.encode(_public_names(obj))}
        if op == "signature":
            return {"r": self.codec.encode(_parameters(obj))}
        raise wire.ProtocolError(f"unknown operation {op!r}")

    def _on_judge_object(self, op, obj, args, frame):
        """Judge objects are opaque to the candidate: it may call a callable and advance an
        iterator, nothing else (no attribute, item, length or text of any judge object)."""
        if op == "call" and callable(obj):
            return self._call(obj, args)
        iterator = hasattr(type(obj), "__next__")
        if op == "next" and iterator:
            return self._next(obj, frame.get("n", 1))
        if op == "iter" and iterator:
            return {"r": self.codec.encode(obj)}
        raise PermissionError(f"judge objects are opaque to the candidate: {op!r} is refused")

    def _resolve(self, target):
        if type(target) is not list or not target:
            raise wire.ProtocolError("malformed target")
        if target[0] == "H":
            return self._local(int(target[1]))
        if target[0] == "N" and not self.judge and self.resolve_named is not None:
            return self.resolve_named(str(target[1]), str(target[2]))
        raise wire.ProtocolError("unknown target")


def _parameters(obj):
    import inspect

    return [
        [p.name, int(p.kind), [] if p.default is inspect.Parameter.empty else [p.default]]
        for p in inspect.signature(obj).parameters.values()
    ]


def _public_names(module):
    names: Any = getattr(module, "__all__", None)
    if type(names) in (list, tuple) and all(type(n) is str for n in names):
        return list(names)
    return [n for n in vars(module) if not n.startswith("_")]
