"""The trusted pytest plugin and the JUnit reader of the grading runner.

Two independent channels describe a run: pytest's own JUnit XML and this plugin's hook stream.
The host requires them to agree (and the canary to fail in both), so a candidate that patches
one of pytest's report paths is caught by the other. Test ids are `<module>::<rest>` built from
JUnit's (classname, name) so that both channels (and the reference run) use one vocabulary.
"""

import json
import os
import stat
import xml.etree.ElementTree as ET

from _pytest.junitxml import mangle_test_address

MAX_JUNIT_BYTES = 4 << 20
COLLECT = "[collection]"


def test_id(classname: str, name: str, modules: dict) -> tuple:
    """(id, layer) for a JUnit address; modules maps dotted test module -> layer."""
    if classname == "" and name in modules:
        return f"{name}::{COLLECT}", modules[name]
    for mod in sorted(modules, key=len, reverse=True):
        if classname == mod or classname.startswith(mod + "."):
            rest = classname[len(mod) + 1 :]
            return f"{mod}::{rest + '::' if rest else ''}{name}", modules[mod]
    return f"{classname}::{name}", "unknown"


def module_name(path: str) -> str:
    return path[:-3].replace("/", ".") if path.endswith(".py") else path.replace("/", ".")


class TrustedPlugin:
    """Writes one JSON line per finished test (or failed collection) to a pre-opened fd."""

    def __init__(self, fd: int, modules: dict):
        self.fd = fd
        self.modules = modules
        self.seen: dict[str, str] = {}

    def id_of(self, nodeid: str) -> str:
        names = mangle_test_address(nodeid)
        return test_id(".".join(names[:-1]), names[-1], self.modules)[0]

    def _emit(self, nodeid: str, outcome: str) -> None:
        names = mangle_test_address(nodeid)
        tid, layer = test_id(".".join(names[:-1]), names[-1], self.modules)
        prev = self.seen.get(tid)
        # Mirrors JUnit: an error in setup/teardown outranks a call failure, which outranks a pass.
        rank = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}
        if prev is None or rank[outcome] > rank[prev]:
            self.seen[tid] = outcome
            os.write(self.fd, (json.dumps({"id": tid, "layer": layer, "outcome": outcome}) + "\n").encode())

    def pytest_runtest_logreport(self, report):
        if report.when == "call":
            if report.passed:
                self._emit(report.nodeid, "passed")
            elif report.skipped:
                self._emit(report.nodeid, "skipped")
            else:
                self._emit(report.nodeid, "failed")
        elif report.failed:
            self._emit(report.nodeid, "error")
        elif report.skipped and report.when == "setup":
            self._emit(report.nodeid, "skipped")

    def pytest_collectreport(self, report):
        if report.failed:
            self._emit(report.nodeid, "error")


def read_regular(path: str, limit: int):
    """A file's bytes only if it is a regular file (a FIFO or device never blocks us); None otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read(limit + 1)
    finally:
        os.close(fd)


def read_plugin_stream(path: str) -> tuple:
    """(per-test outcomes, judge events such as a candidate timeout); (None, []) if unreadable."""
    out, events = {}, []
    data = read_regular(path, MAX_JUNIT_BYTES)
    if data is None or len(data) > MAX_JUNIT_BYTES:
        return None, []
    for line in data.decode("utf-8", "replace").splitlines():
        try:
            rec = json.loads(line)
            if "event" in rec:
                events.append(
                    {
                        "kind": str(rec["event"]),
                        "test": str(rec.get("test", "")),
                        "detail": str(rec.get("detail", ""))[:300],
                    }
                )
                continue
            out[rec["id"]] = {
                "id": str(rec["id"]),
                "layer": str(rec["layer"]),
                "outcome": str(rec["outcome"]),
                "message": "",
            }
        except (ValueError, KeyError, TypeError):
            return None, events  # anything unparsable means someone else wrote to our stream
    return list(out.values()), events


def read_junit(path: str, modules: dict) -> list | None:
    data = read_regular(path, MAX_JUNIT_BYTES)
    if data is None or len(data) > MAX_JUNIT_BYTES:
        return None
    try:
        root = ET.fromstring(data)
    except ET.ParseError:
        return None
    tests = []
    for case in root.iter("testcase"):
        tid, layer = test_id(case.get("classname", ""), case.get("name", ""), modules)
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = {"failure": "failed", "error": "error", "skipped": "skipped"}[child.tag]
                message = (child.get("message") or "")[:500]
                if outcome == "error":
                    break
        tests.append({"id": tid, "layer": layer, "outcome": outcome, "message": message})
    return tests
