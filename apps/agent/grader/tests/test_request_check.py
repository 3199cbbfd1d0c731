"""The grader refuses a request that breaks its contract (request.schema.json, generated from core's
RunnerRequest), with the key named; a request that fits passes (the positive control)."""

import copy
import os
import sys

import pytest

GRADER = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, GRADER)
import agentlab_schema  # noqa: E402

from agentlab_grader import request_check  # noqa: E402

SCHEMA = request_check.load_schema()
LIMITS = {k: 1 for k in SCHEMA["properties"]["limits"]["required"]}
REQUEST = {
    "id": "r1",
    "candidate": [{"path": "m.py", "content": "x = 1\n"}],
    "original": [{"path": "m.py", "content": "x = 0\n"}],
    "support": [],
    "tests": [{"path": "test_m.py", "content": "def test(): pass\n", "layer": "public"}],
    "limits": LIMITS,
    "isolation": "judge",
    "addressSpaceLimit": False,
}


def test_a_request_that_fits_passes():
    request_check.check(REQUEST, SCHEMA)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda r: r.update(extra=1), r"request\.extra: unknown key"),
        (lambda r: r["limits"].update(timeoutMsTypo=5), r"request\.limits\.timeoutMsTypo: unknown key"),
        (lambda r: r["tests"][0].update(hidden=True), r"request\.tests\[0\]\.hidden: unknown key"),
        (lambda r: r.pop("isolation"), r"request\.isolation: required"),
        (lambda r: r.update(isolation="none"), r"request\.isolation: must be one of"),
        (lambda r: r["tests"][0].update(layer="secret"), r"request\.tests\[0\]\.layer"),
        (lambda r: r.update(addressSpaceLimit="yes"), r"request\.addressSpaceLimit: expected boolean"),
        (lambda r: r["limits"].update(pids=0), r"request\.limits\.pids: must be > 0"),
    ],
)
def test_a_request_that_breaks_the_contract_is_refused(mutate, message):
    req = copy.deepcopy(REQUEST)
    mutate(req)
    with pytest.raises(request_check.RequestError, match=message):
        request_check.check(req, SCHEMA)


def test_a_schema_keyword_it_cannot_check_fails_loudly():
    request_check.check("x", {"type": "string", "pattern": "^x$"})  # positive control: a known keyword
    with pytest.raises(request_check.RequestError, match="does not know"):
        request_check.check({}, {"type": "object", "patternProperties": {}})


def test_the_venv_holds_the_validator_of_the_repository():
    # The grader's venv holds a copy (the sandbox sees nothing else of the repository); a copy older
    # than the source would check requests with another validator than the trainer's.
    source = os.path.join(GRADER, "..", "python-schema", "src", "agentlab_schema", "__init__.py")
    with open(source, "rb") as f, open(agentlab_schema.__file__, "rb") as g:
        assert g.read() == f.read(), "the grader venv's agentlab_schema is stale: run scripts/setup-grader.sh"
