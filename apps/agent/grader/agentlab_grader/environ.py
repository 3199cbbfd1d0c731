"""Environment variables a test sets (monkeypatch.setenv, os.environ[...] = ...) reach the candidate,
as they would in-process: before each request the judge sends what differs from its environment at
start, the candidate applies it over its own. Pytest's bookkeeping (PYTEST_*, which names the
current hidden test) and the judge's own directories (HOME, TMPDIR) never cross."""

import os

_KEPT = ("HOME", "TMPDIR")


class SharedEnviron:
    def __init__(self):
        self.baseline = dict(os.environ)
        self.sent: dict = {}  # judge: the changes last sent; candidate: the changes applied

    def changes(self):
        """Judge: {name: value or None when unset} relative to the start, or None if nothing new."""
        now: dict[str, str | None] = {k: v for k, v in os.environ.items() if self.baseline.get(k) != v and _crosses(k)}
        now.update({k: None for k in self.baseline if k not in os.environ and _crosses(k)})
        if now == self.sent:
            return None
        self.sent = now
        return now

    def apply(self, changes) -> None:
        """Candidate: the judge's current changes over our own start environment."""
        if type(changes) is not dict:
            return
        for k in self.sent:
            if k not in changes:
                _set(k, self.baseline.get(k))
        for k, v in changes.items():
            if type(k) is str and _crosses(k) and (v is None or type(v) is str):
                _set(k, v)
        self.sent = dict(changes)


def _crosses(name: str) -> bool:
    return not name.startswith("PYTEST_") and name not in _KEPT and "\0" not in name and "=" not in name


def _set(name, value) -> None:
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value
