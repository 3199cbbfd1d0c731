"""The grading request checked against its contract before anything is graded.

request.schema.json is generated from core's RunnerRequest (`npm run gen:schemas`; a unit test fails
while it is stale). The validator is agentlab_schema (apps/agent/python-schema), the one the trainer
checks its specs with, installed into the grader's venv by scripts/setup-grader.sh: unknown keys
refused, required ones present, types, enums and bounds, each violation naming its path. A keyword
it does not know raises, so a schema it cannot check fails loudly instead of passing silently.
"""

import os

from agentlab_schema import SchemaError, errors, load

SCHEMA_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "request.schema.json")


class RequestError(ValueError):
    pass


def load_schema() -> dict:
    return load(SCHEMA_PATH)


def check(value, schema: dict, at: str = "request") -> None:
    """Raises RequestError naming every violation (the grader answers with it and grades nothing)."""
    try:
        problems = errors(value, schema, at)
    except SchemaError as e:
        raise RequestError(f"the request schema uses a keyword the checker does not know: {e}") from e
    if problems:
        raise RequestError("; ".join(problems))
