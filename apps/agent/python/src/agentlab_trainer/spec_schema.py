"""The trainer's job-spec and event contracts (schemas/<name>.json), checked with agentlab_schema.

The schemas are generated from the zod schemas in packages/core/src/trainer/schemas.ts and
packages/core/src/jobs/progress.ts by scripts/gen-trainer-schemas.ts (`npm run gen:schemas`), so
the trainer reads the same contract as the agent: a key the spec does not define is refused, not
ignored. The validator itself (apps/agent/python-schema) is the one the grader checks its requests
with; the defaults a command fills in are read from its schema (spec_defaults), never restated.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentlab_schema import SchemaError, defaults, errors, load

__all__ = ["SchemaError", "errors", "load_schema", "spec_defaults", "validate_spec"]

SCHEMA_DIR = Path(__file__).parent / "schemas"


def load_schema(name: str) -> dict[str, Any]:
    """A command's spec schema, or a contracted event's (read once; do not mutate it)."""
    return load(SCHEMA_DIR / f"{name}.json")


def validate_spec(command: str, spec: Any) -> list[str]:
    """Violations of the command's spec contract (empty: the spec is valid)."""
    return errors(spec, load_schema(command), "spec")


def spec_defaults(command: str) -> dict[str, Any]:
    """Each optional key of the command's spec with the value it takes when left out (the zod
    default, else None): what the command's normalize_spec starts from."""
    return defaults(load_schema(command))
