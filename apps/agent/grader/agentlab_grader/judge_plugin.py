"""The pytest side of the judge: candidate modules as proxies, a time budget per test, restarts.

Test modules import the candidate's module as usual (`from solution import f`); a meta-path
finder answers those imports with a proxy module whose attributes are fetched from the candidate
process. What a star import brings in is decided by the task's ORIGINAL main file (public
context), not by the candidate: a candidate cannot shadow `abs` or `isclose` in the test module,
and names the original binds by import (`import math`) resolve in the judge's own interpreter.
"""

import ast
import importlib
import importlib.abc
import importlib.util
import json
import os
import socket
import time
import types

import pytest

from .peer import Peer
from .proxy import CandidateLost, Proxy


class CandidateLink:
    """The judge's connection to the current candidate process, replaced after a timeout or crash."""

    def __init__(self, peer: Peer, ctl: socket.socket, report_fd: int, id_of, max_restarts: int = 25):
        self.peer, self.ctl, self.report_fd, self.id_of = peer, ctl, report_fd, id_of
        self.max_restarts = max_restarts
        self.restarts = 0
        self.broken = False
        self.current = ""
        peer.on_lost = self._lost
        peer.before_request = self.ensure

    def _lost(self, kind: str, detail: str) -> None:
        self.broken = True
        rec = {"event": kind, "test": self.id_of(self.current) if self.current else "", "detail": detail[:300]}
        os.write(self.report_fd, (json.dumps(rec) + "\n").encode())

    def ensure(self) -> None:
        if not self.broken:
            return
        if self.restarts >= self.max_restarts:
            raise CandidateLost("the candidate process was lost too many times")
        self.ctl.send(b"R")
        msg, fds, _flags, _addr = socket.recv_fds(self.ctl, 64, 1)
        if msg != b"OK" or len(fds) != 1:
            raise CandidateLost("no fresh candidate process could be started")
        try:
            os.close(self.peer.fd)
        except OSError:
            pass
        self.peer.rebind(fds[0])
        self.restarts += 1
        self.broken = False


def original_bindings(sources: dict, private: frozenset):
    """Per main module: (what a star import brings in: the original's literal `__all__`, else the
    public names it defines or imports; {name: (module, attr)} for names it binds by importing a
    non-candidate module)."""
    out: dict[str, tuple[set, dict]] = {}
    for mod, src in sources.items():
        try:
            tree = ast.parse(src)
        except SyntaxError:
            out[mod] = (set(), {})
            continue
        defined, imported, declared = set(), {}, None
        stack = list(tree.body)
        while stack:
            node = stack.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                defined.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                    try:
                        value = ast.literal_eval(node.value) if node.value is not None else None
                    except ValueError:
                        value = None
                    if isinstance(value, (list, tuple)) and all(isinstance(n, str) for n in value):
                        declared = set(value)
                for t in targets:
                    for n in ast.walk(t):
                        if isinstance(n, ast.Name):
                            defined.add(n.id)
            elif isinstance(node, ast.Import):
                for a in node.names:
                    top = a.name.split(".")[0]
                    if top not in private:
                        imported[a.asname or top] = (a.name if a.asname else top, "")
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and node.module not in private:
                for a in node.names:
                    if a.name != "*":
                        imported[a.asname or a.name] = (node.module, a.name)
            elif isinstance(node, (ast.If, ast.Try, ast.With)):
                for field in ("body", "orelse", "finalbody", "handlers"):
                    for child in getattr(node, field, []) or []:
                        stack.extend(child.body if isinstance(child, ast.ExceptHandler) else [child])
        for name in list(imported):
            if name in defined:
                del imported[name]  # rebound by the original itself: the candidate's value counts
        public = {n for n in defined | set(imported) if not n.startswith("_")}
        out[mod] = (declared if declared is not None else public, imported)
    return out


class CandidateModule(types.ModuleType):
    def __getattr__(self, name):
        d = self.__dict__
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        judge_side = d["_agentlab_imports"].get(name)
        if judge_side is not None:
            try:
                mod = importlib.import_module(judge_side[0])
                return mod if not judge_side[1] else getattr(mod, judge_side[1])
            except Exception:  # noqa: BLE001  (the judge cannot load it: ask the candidate)
                pass
        peer, modname = d["_agentlab_peer"], self.__name__
        value = peer.request("get", ["N", modname, ""], [name])
        if type(value) is Proxy:  # module-level objects are re-resolved by name after a restart
            value = Proxy(peer, value._hid, value._gen, value._kind, name=(modname, name))
        return value


class CandidateFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, peer: Peer, bindings: dict):
        self.peer, self.bindings = peer, bindings

    def find_spec(self, fullname, path=None, target=None):
        if fullname in self.bindings:
            return importlib.util.spec_from_loader(fullname, self, is_package=False)
        return None

    def create_module(self, spec):
        return CandidateModule(spec.name)

    def exec_module(self, module):
        star, imports = self.bindings[module.__name__]
        module.__dict__.update(_agentlab_peer=self.peer, _agentlab_imports=imports)
        names = self.peer.request("names", ["N", module.__name__, ""], [])  # imports it over there
        have = set(names) if type(names) is list else set()
        module.__dict__["__all__"] = sorted(n for n in star if n in have or n in imports)


class JudgePlugin:
    """Gives every test (and every module import) its own time budget for candidate calls."""

    def __init__(self, link: CandidateLink, test_timeout_s: float):
        self.link, self.budget = link, test_timeout_s

    def _arm(self, nodeid: str) -> None:
        self.link.current = nodeid
        self.link.peer.deadline = time.monotonic() + self.budget

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        self._arm(item.nodeid)
        try:
            return (yield)
        finally:
            self.link.current = ""

    @pytest.hookimpl(wrapper=True)
    def pytest_make_collect_report(self, collector):
        self._arm(collector.nodeid)
        try:
            return (yield)
        finally:
            self.link.current = ""
