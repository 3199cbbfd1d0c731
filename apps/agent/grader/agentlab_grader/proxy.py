"""The judge's view of candidate objects (and the candidate's of judge objects): proxies whose
operations run in the owner's process, bounded read-ahead for iterators, and the errors a lost
candidate raises.

Operators: the judge asks the candidate only when EVERY operand is the candidate's own live object
(`a == b`, `a < b`, `a + b` between two of its objects; `hash(a)`, `bool(a)`, `format(a)`, `with a`).
When one side is the judge's value the candidate is never asked: `f(x) == 3` compares by identity
and `f(x) - 3` is a TypeError, so an always-equal or always-zero object forges nothing. The
candidate's `__exit__` may not swallow an AssertionError or pytest's outcomes.
"""


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
        if name == "__signature__" and self._peer.judge and self._kind == "call":
            return _signature(self._op("signature"))
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
        if not self._peer.judge:
            return True  # a judge object, opaque: truthy as any plain object
        return _typed(self._op("op", "bool"), bool, "__bool__")

    def __hash__(self):
        if not self._peer.judge:
            return object.__hash__(self)
        return _typed(self._op("op", "hash"), int, "__hash__")

    def __format__(self, spec):
        if not self._peer.judge:
            return object.__repr__(self)
        return _typed(self._op("op", "format", spec), str, "__format__")

    def __enter__(self):
        return self._op("op", "enter")

    def __exit__(self, kind, value, tb):
        suppress = self._op("op", "exit", _plain_exception(value)) is True
        return suppress and isinstance(value, Exception) and not isinstance(value, AssertionError)

    def _ours(self, other) -> bool:
        """Both operands are live objects of the candidate (never one of the judge's values)."""
        peer = self._peer
        return (
            peer.judge
            and type(other) is Proxy
            and object.__getattribute__(other, "_peer") is peer
            and peer._handed_back(self) is not None
            and peer._handed_back(other) is not None
        )

    def _binary(self, name, other):
        return self._op("op", name, other) if self._ours(other) else NotImplemented

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


def _binary_dunder(name):
    def dunder(self, other):
        return self._binary(name, other)

    dunder.__name__ = f"__{name}__"
    return dunder


def _unary_dunder(name, kind):
    def dunder(self):
        if not self._peer.judge:
            raise TypeError(f"{name}() of a judge object is not available to the candidate")
        value = self._op("op", name)
        return value if kind is None else _typed(value, kind, f"__{name}__")

    dunder.__name__ = f"__{name}__"
    return dunder


for _name in "eq ne lt le gt ge add sub mul matmul truediv floordiv mod pow lshift rshift and or xor".split():
    setattr(Proxy, f"__{_name}__", _binary_dunder(_name))
for _name, _kind in (
    ("neg", None),
    ("pos", None),
    ("abs", None),
    ("invert", None),
    ("int", int),
    ("float", float),
    ("index", int),
):
    setattr(Proxy, f"__{_name}__", _unary_dunder(_name, _kind))


def _signature(params):
    """inspect.signature(candidate_function): its parameters' names, kinds and defaults (by value);
    annotations stay over there (they would be the candidate's objects)."""
    import inspect

    if type(params) is not list:
        raise ValueError("no signature")
    out = []
    for p in params:
        if type(p) is not list or len(p) != 3 or type(p[0]) is not str or type(p[1]) is not int:
            raise ValueError("malformed signature")
        default = inspect.Parameter.empty if p[2] == [] else p[2][0]
        out.append(inspect.Parameter(p[0], inspect._ParameterKind(p[1]), default=default))
    return inspect.Signature(out)


def _typed(value, kind, what):
    if type(value) is not kind:
        raise TypeError(f"{what} of a candidate object must return {kind.__name__}")
    return value


def _plain_exception(value: BaseException | None):
    """The exception a `with` block raised, as a plain builtin exception the candidate can rebuild."""
    if value is None:
        return None
    from .stdtypes import BUILTIN_EXCEPTIONS, builtin_base

    base = builtin_base(type(value))
    if type(value) is base and all(type(a) in (type(None), bool, int, float, str) for a in value.args):
        return value
    try:
        return BUILTIN_EXCEPTIONS.get(base.__name__, Exception)(str(value))
    except Exception:  # noqa: BLE001
        return Exception(str(value))


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
