"""Cross-file tasks by AST: what counts as a use of a dependency (each rule beside its control), and
the built-in pools' count (the studies' public-context question needs 150+ such tasks in 100+ groups)."""

import gzip
import json
import os
import subprocess
import sys

GRADER = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, GRADER)
from cross_file import cross_file_uses  # noqa: E402

DATA = os.path.join(GRADER, "..", "..", "..", "data")
DEP = {"path": "limits.py", "role": "dependency", "content": "LIMIT = 5\n\ndef clamp(x):\n    return x\n"}


def task(reference: str, deps=(DEP,)) -> dict:
    return {
        "files": [{"path": "solution.py", "role": "main", "content": reference}, *deps],
        "reference": [{"path": "solution.py", "content": reference}],
    }


def test_an_imported_name_the_fix_reads_is_a_use():
    assert cross_file_uses(task("from limits import LIMIT\n\ndef f(x):\n    return x <= LIMIT\n")) == ["limits.LIMIT"]
    assert cross_file_uses(task("import limits as l\n\ndef f(x):\n    return l.clamp(x)\n")) == ["limits.clamp"]


def test_no_use_without_a_read_a_definition_or_a_dependency():
    # imported, never read
    assert cross_file_uses(task("from limits import LIMIT\n\ndef f(x):\n    return x <= 5\n")) == []
    # a name the dependency does not define
    assert cross_file_uses(task("from limits import OTHER\n\ndef f(x):\n    return x <= OTHER\n")) == []
    # the same module as a main file, not a dependency
    assert cross_file_uses(task("from limits import LIMIT\n\ndef f(x):\n    return x <= LIMIT\n", deps=())) == []
    # defined in the main file itself
    assert cross_file_uses(task("LIMIT = 5\n\ndef f(x):\n    return x <= LIMIT\n")) == []


def test_a_file_that_does_not_parse_defines_and_reads_nothing():
    fix = "from limits import LIMIT\n\ndef f(x):\n    return x <= LIMIT\n"
    broken = {**DEP, "content": "LIMIT = (\n"}
    assert cross_file_uses(task(fix, deps=(broken,))) == []
    assert cross_file_uses(task("def f(x:\n", deps=(DEP,))) == []
    # control: the same fix with a dependency that parses
    assert cross_file_uses(task(fix)) == ["limits.LIMIT"]


def test_the_cli_answers_one_line_per_task_line():
    # The admission audit's use: one task line on stdin, one answer line on stdout.
    line = {"id": "t/1", "source_group": "g1", **task("import limits\n\ndef f(x):\n    return limits.LIMIT\n")}
    out = subprocess.run(
        [sys.executable, "-I", os.path.join(GRADER, "cross_file.py")],
        input=json.dumps(line) + "\n",
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert [json.loads(x) for x in out] == [{"id": "t/1", "group": "g1", "uses": ["limits.LIMIT"]}]


def pool(name: str) -> list[dict]:
    with gzip.open(os.path.join(DATA, name), "rt") as f:
        return [json.loads(line) for line in f if line.strip()]


def test_the_learnable_pool_is_cross_file_the_builtin_pool_is_not():
    learnable = [t for t in pool("learnable-pool.jsonl.gz") if cross_file_uses(t)]
    assert len(learnable) >= 150
    assert len({t["source_group"] for t in learnable}) >= 100
    assert all(cross_file_uses(t) == ["limits.LIMIT"] for t in learnable)
    # HumanEval and MBPP tasks are single files: no dependency to read (what the question cannot use)
    assert not [t for t in pool("builtin-pool.jsonl.gz") if cross_file_uses(t)]
