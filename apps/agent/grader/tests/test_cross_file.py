"""Cross-file tasks by AST: what counts as a use of a dependency (each rule beside its control), and
the built-in pools' count (the studies' public-context question needs 150+ such tasks in 100+ groups)."""

import gzip
import json
import os
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
