"""Exceptions across the channel: what the raising side describes (builtin base, text, the
candidate classes of its MRO, and from the candidate its arguments and public attributes by value),
and what the judge rebuilds from it (a stand-in class with no candidate code for a class the
candidate defined, so `pytest.raises(solution.BadInput)` and `e.value.args[0]` both work)."""

from . import wire
from .proxy import CandidateError


class Exceptions:
    """One side's view of exceptions; the judge keeps one stand-in class per candidate class."""

    def __init__(self, codec, judge: bool, resolve_named):
        self.codec, self.judge, self.resolve_named = codec, judge, resolve_named
        self.stand_ins: dict = {}  # judge: (module, qualname) -> stand-in exception class

    def rebuild(self, e):
        ok = type(e) is list and 2 <= len(e) <= 5 and type(e[0]) is str and type(e[1]) is str
        if not ok:
            return CandidateError("malformed exception")
        name, message = e[0], e[1]
        cls = wire.BUILTIN_EXCEPTIONS.get(name)
        if cls is None or not issubclass(cls, Exception) or cls is StopIteration:
            return CandidateError(f"{name}: {message}")
        stand_in = len(e) >= 3 and bool(e[2])
        if stand_in:
            cls = self.stand_in(name, e[2])
        return rebuild_exception(cls, message, e, self.codec, stand_in)

    def stand_in(self, base_name, chain):
        """A judge-side stand-in for a candidate's exception class: same module and name, the same
        candidate-class hierarchy, the same builtin base, and no candidate code. What the test's
        `pytest.raises(solution.InvalidInput)` sees, and what a raised InvalidInput becomes."""
        if not self.judge and self.resolve_named() is not None:  # the candidate's own class, by name
            try:
                real = self.resolve_named()(str(chain[0][0]), str(chain[0][1]))
            except Exception:  # noqa: BLE001
                real = None
            if isinstance(real, type) and issubclass(real, Exception):
                return real
        base = wire.BUILTIN_EXCEPTIONS.get(base_name) if type(base_name) is str else None
        if base is None or not issubclass(base, Exception) or base is StopIteration or type(chain) is not list:
            raise wire.ProtocolError("malformed exception class")
        parent = base
        for entry in reversed(chain[:20]):
            if (
                type(entry) is not list
                or len(entry) != 2
                or not all(type(x) is str for x in entry)
                or entry[0] not in self.codec.private
            ):
                raise wire.ProtocolError("malformed exception class")
            key = (entry[0], entry[1])
            if key not in self.stand_ins:
                self.stand_ins[key] = type(
                    entry[1].rsplit(".", 1)[-1],
                    (parent,),
                    {"__module__": entry[0], "__qualname__": entry[1], "__str__": _stand_in_str},
                )
            parent = self.stand_ins[key]
        return parent

    def describe(self, e):
        """[builtin base name, message, candidate classes of its MRO] of an exception raised here."""
        chain = wire.exception_chain(type(e), self.codec.private)
        described = [_builtin_name(e), _message(e) if not chain else _plain_message(e), chain]
        if not self.judge:  # its arguments and public attributes, by value (a judge error: text only)
            try:
                attrs = [[k, v] for k, v in vars(e).items() if type(k) is str and not k.startswith("_")][:50]
                described += [self.codec.encode(list(e.args)), self.codec.encode(attrs)]
            except Exception:  # noqa: BLE001  (unencodable: the text still travels)
                pass
        return described


def rebuild_exception(cls, message, e, codec, stand_in):
    """The judge's copy of a candidate's exception: built from its arguments when they came (so
    `e.args[0]` holds), with its public attributes set (never one that hides behaviour); a stand-in
    class shows the candidate's own text, a builtin one falls back to the text when the arguments
    would print differently."""
    made = None
    if len(e) >= 5:
        try:
            args, attrs = codec.decode(e[3]), codec.decode(e[4])
            made = cls(*args) if type(args) is list else None
            if made is not None and not stand_in and str(made) != message:
                made = None
            if made is not None and type(attrs) is list:
                for pair in attrs:
                    if type(pair) is list and len(pair) == 2 and type(pair[0]) is str:
                        if not pair[0].startswith("_") and not wire.shadows_behaviour(cls, pair[0]):
                            setattr(made, pair[0], pair[1])
        except Exception:  # noqa: BLE001  (a constructor that wants other arguments: the text)
            made = None
    if made is None:
        try:
            made = cls(message)
        except Exception:  # noqa: BLE001  (an exception class whose constructor wants more)
            return CandidateError(f"{e[0]}: {message}")
    if stand_in:
        made.__dict__["_agentlab_message"] = message
    return made


def _stand_in_str(self):
    text = self.__dict__.get("_agentlab_message")
    return text if type(text) is str else Exception.__str__(self)


def _builtin_name(e):
    for cls in type(e).__mro__:
        if cls.__module__ == "builtins":
            return cls.__name__ if cls is type(e) else cls.__name__
    return "RuntimeError"


def _plain_message(e):
    try:
        return str(e)[:2000]
    except BaseException:  # noqa: BLE001
        return "<unprintable exception>"


def _message(e):
    try:
        text = str(e)
    except BaseException:  # noqa: BLE001
        text = "<unprintable exception>"
    if type(e).__module__ != "builtins":
        text = f"{type(e).__name__}: {text}"
    return text[:2000]
