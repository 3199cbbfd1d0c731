"""The candidate template (cand_template.py) through the real runner, process backend: a session's
candidates are forked from a process that imported the task's support modules, with outcomes equal
to cold candidates', a candidate's own file always its own (shadowing), and nothing one candidate
does to a support module seen by the next. Positive controls: the runner with
--no-candidate-template, where every candidate starts cold, and a candidate that mutates and reads
in one process, which shows the probe sees a mutation where one exists."""

import json
import os
import subprocess
import sys
import tempfile

import pytest

from agentlab_grader.cand_template import imported_modules

GRADER = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIMITS = {
    "wallTimeoutS": 10,
    "testTimeoutS": 3,
    "cpuSeconds": 10,
    "memoryMb": 512,
    "pids": 64,
    "openFiles": 256,
    "tmpfsMb": 64,
    "maxOutputBytes": 65536,
}
# colorsys: a standard module the runner has not imported (see the shadowing test).
LIMITS_PY = "import colorsys, fractions\nMAX = 10\nSCALE = fractions.Fraction(1, 2)\n"
MAIN = "import limits\n\ndef f(x):\n    return min(x, limits.MAX)\n"
TESTS = [
    {
        "path": "test_public.py",
        "content": "from solution import f\n\ndef test_cap():\n    assert f(50) == 10\n",
        "layer": "public",
    },
    {
        "path": "test_hidden.py",
        "content": "from solution import f\n\ndef test_low():\n    assert f(3) == 3\n",
        "layer": "hidden",
    },
]
MUTATE = "import limits\nlimits.MAX = 99\n\ndef f(x):\n    return min(x, 10)\n"  # passes; leaves MAX = 99 behind
READ = MAIN  # passes only when limits.MAX is the pristine 10
MUTATE_AND_READ = "import limits\nlimits.MAX = 99\n\ndef f(x):\n    return min(x, limits.MAX)\n"
SHADOW = "def f(x):\n    import limits\n    return limits.MAX\n"  # with its own limits.py: MAX = 3


def _req(first: list, total: int) -> dict:
    return {
        "id": "c0",
        "candidate": first,
        "original": [{"path": "solution.py", "content": MAIN}],
        "support": [{"path": "limits.py", "content": LIMITS_PY}],
        "tests": TESTS,
        "limits": LIMITS,
        "isolation": "judge",
        "addressSpaceLimit": False,
        "session": total,
    }


def _frame(obj) -> bytes:
    data = json.dumps(obj).encode()
    return str(len(data)).encode() + b"\n" + data


def session(candidates: list, cold: bool = False) -> list[dict]:
    """One session of `candidates` (each a list of files) through runner.py --mode process."""
    with tempfile.TemporaryDirectory() as scratch:
        argv = [sys.executable, "-s", "-P", os.path.join(GRADER, "runner.py"), "--mode", "process"]
        argv += ["--ini", os.path.join(GRADER, "pytest.ini"), "--scratch", scratch]
        proc = subprocess.Popen(
            argv + (["--no-candidate-template"] if cold else []),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        )
        assert proc.stdin is not None and proc.stdout is not None
        assert json.loads(proc.stdout.readline())["ready"]
        out = []
        for i, files in enumerate(candidates):
            msg = _req(files, len(candidates)) if i == 0 else {"id": f"c{i}", "candidate": files}
            proc.stdin.write(_frame(msg))
            proc.stdin.flush()
            out.append(json.loads(proc.stdout.readline()))
        proc.stdin.close()
        proc.wait(timeout=20)
        return out


def outcome(res: dict) -> list:
    assert res["infra_error"] is None, res
    return sorted((t["id"].split("::")[-1], t["outcome"]) for t in res["junit"] if "canary" not in t["id"])


def sol(content: str, extra: list | None = None) -> list:
    return [{"path": "solution.py", "content": content}, *(extra or [])]


def test_candidates_start_forked_with_the_outcomes_of_cold_ones():
    cands = [sol(MAIN), sol("import limits\n\ndef f(x):\n    return x\n"), sol(MAIN)]
    warm, cold = session(cands), session(cands, cold=True)
    assert [r["candidate_start"] for r in warm] == ["forked"] * 3
    assert [r["candidate_start"] for r in cold] == ["imported"] * 3  # positive control
    assert [outcome(r) for r in warm] == [outcome(r) for r in cold]
    assert outcome(warm[1]) == [("test_cap", "failed"), ("test_low", "passed")]


def test_a_mutated_support_module_does_not_reach_the_next_candidate():
    warm = session([sol(MUTATE), sol(READ), sol(MUTATE_AND_READ)])
    assert [r["candidate_start"] for r in warm] == ["forked"] * 3
    assert outcome(warm[0]) == [("test_cap", "passed"), ("test_low", "passed")]
    assert outcome(warm[1]) == [("test_cap", "passed"), ("test_low", "passed")], "candidate 2 saw candidate 1's MAX"
    # Positive control: within one process the mutation is seen (MAX = 99 fails the cap).
    assert outcome(warm[2])[0] == ("test_cap", "failed")


def test_a_candidate_shipping_a_support_module_gets_what_a_cold_start_gives():
    own = [{"path": "limits.py", "content": "MAX = 3\n"}]
    cands = [sol(MAIN), sol(SHADOW, own)]
    warm, cold = session(cands), session(cands, cold=True)
    assert [r["candidate_start"] for r in warm] == ["forked", "imported"]
    assert [outcome(r) for r in warm] == [outcome(r) for r in cold]


def test_a_candidate_named_like_a_loaded_module_or_not_importing_the_support_starts_cold():
    # colorsys is loaded by the template, not by the runner: a cold candidate would get its own file.
    own_colorsys = [{"path": "colorsys.py", "content": "import limits\n"}]
    warm = session([sol(MAIN), sol("def f(x):\n    return min(x, 10)\n"), sol(MAIN, own_colorsys)])
    assert [r["candidate_start"] for r in warm] == ["forked", "imported", "imported"]
    assert outcome(warm[1]) == [("test_cap", "passed"), ("test_low", "passed")]


def test_a_support_module_that_cannot_be_imported_leaves_every_candidate_cold():
    # Its original main file imports it, but it needs the candidate's module: cold, same outcome.
    req_support = "import solution  # noqa\nMAX = 10\n"
    global LIMITS_PY
    saved, LIMITS_PY = LIMITS_PY, req_support
    try:
        warm = session([sol(MAIN), sol(MAIN)])
    finally:
        LIMITS_PY = saved
    assert [r["candidate_start"] for r in warm] == ["imported", "imported"]
    assert [outcome(r) for r in warm] == [[("test_cap", "passed"), ("test_low", "passed")]] * 2  # as cold ones


@pytest.mark.parametrize(
    ("path", "content", "expected"),
    [
        ("solution.py", "import limits\nimport os\n", {"limits"}),
        ("solution.py", "def g():\n    from limits import MAX\n", {"limits"}),
        ("pkg/solution.py", "from . import limits\nfrom .sub import x\n", {"pkg.limits", "pkg.sub"}),
        ("solution.py", "import importlib\nimportlib.import_module('limits')\n", set()),
        ("solution.py", "def broken(:\n", set()),
    ],
)
def test_imported_modules(path, content, expected):
    support = frozenset({"limits", "pkg.limits", "pkg.sub"})
    assert imported_modules([{"path": path, "content": content}], support) == expected
