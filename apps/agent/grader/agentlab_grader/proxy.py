"""The judge's view of candidate objects (and the candidate's of judge objects): proxies whose
operations run in the owner's process, bounded read-ahead for iterators, and the errors a lost
candidate raises. Proxies never answer ==, hashing or truth for the owner (see peer.py)."""


class CandidateError(RuntimeError):
    """The candidate raised something that has no faithful counterpart on the judge's side."""


class CandidateLost(RuntimeError):
    """The candidate process is gone (it exited, crashed or was replaced after a timeout)."""


def _failed_base():
    # pytest's Failed is a BaseException: a test's `except Exception` cannot swallow a timeout.
    try:
        import pytest

        return pytest.fail.Exception
    except ImportError:  # the candidate side never needs it
        return BaseException


class CandidateTimeout(_failed_base()):  # type: ignore[misc]  # pytest's Failed, found at import time
    pass


class Proxy:
    """A handle to an object owned by the peer. Attributes live in slots so that reading our own
    bookkeeping never turns into a remote call."""

    __slots__ = ("_peer", "_hid", "_gen", "_kind", "_name", "_ahead")

    def __init__(self, peer, hid, gen, kind, name=None):
        for k, v in (("_peer", peer), ("_hid", hid), ("_gen", gen), ("_kind", kind), ("_name", name), ("_ahead", None)):
            object.__setattr__(self, k, v)

    def _target(self):
        if self._name is not None:
            return ["N", self._name[0], self._name[1]]
        return ["H", self._hid, self._gen]

    def _op(self, op, *args, **extra):
        return self._peer.request(op, self._target(), list(args), **extra)

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__") and name not in ("__name__", "__qualname__", "__doc__"):
            raise AttributeError(name)
        return self._op("get", name)

    def __setattr__(self, name, value):
        self._op("set", name, value)

    def __call__(self, *args, **kwargs):
        return self._peer.call(self._target(), args, kwargs)

    def __iter__(self):
        return self if self._kind == "iter" else self._op("iter")

    def __next__(self):
        # Bounded read-ahead: 1, 2, 4 … 256 items per round trip, so a long generator costs few
        # trips and an infinite one is never run ahead by more than 256 items.
        ahead = self._ahead
        if ahead is None:
            ahead = _ReadAhead()
            object.__setattr__(self, "_ahead", ahead)
        return ahead.next(self._peer, self._target())

    def __len__(self):
        n = self._op("len")
        if type(n) is not int or n < 0:
            raise TypeError("len() of a candidate object must be a non-negative int")
        return n

    def __getitem__(self, key):
        return self._op("getitem", key)

    def __setitem__(self, key, value):
        self._op("setitem", key, value)

    def __instancecheck__(self, obj):
        # isinstance(x, solution.Stack): only the candidate's own objects can be instances of its
        # classes (a value that crossed by value never is), so asking it forges nothing.
        if type(obj) is not Proxy or object.__getattribute__(obj, "_peer") is not self._peer:
            return False
        return self._op("isinstance", obj) is True

    def __bool__(self):
        raise TypeError("a candidate object has no truth value on the judge's side; compare its values")

    def __repr__(self):
        try:
            text = self._peer.request("repr", self._target(), [], short=True)
        except BaseException:  # noqa: BLE001  (repr must never fail an assertion message)
            text = None
        return text if type(text) is str else f"<candidate {self._kind} #{self._hid}>"

    def __str__(self):
        text = self._op("str")
        if type(text) is not str:
            raise TypeError("str() of a candidate object must be a str")
        return text


class _ReadAhead:
    def __init__(self):
        self.buf, self.batch, self.done, self.error = [], 1, False, None

    def next(self, peer, target):
        if not self.buf and not self.done:
            items, self.done, self.error = peer.next_batch(target, self.batch)
            self.buf = items[::-1]
            self.batch = min(256, self.batch * 2)
        if self.buf:
            return self.buf.pop()
        if self.error is not None:
            error, self.error = self.error, None
            raise error
        raise StopIteration
