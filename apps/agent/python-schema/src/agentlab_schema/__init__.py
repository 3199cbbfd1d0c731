"""A value checked against a JSON Schema that packages/core generated from its zod schemas.

The trainer (job specs, contracted progress events) and the grader (the grading request) read
schemas that scripts/gen-trainer-schemas.ts writes from core (`npm run gen:schemas`), so Python
reads the contract the Node side parses with. A key the schema does not define is refused
(additionalProperties: false), not ignored, and every violation names its path
(`spec.lora.targets`, `request.tests[0].layer`).

Only the keywords zod's JSON Schema output uses, instead of the `jsonschema` package: the trainer's
environment is installed offline on agent boxes with pinned wheels and the grader's venv is bound
into every sandbox, so one more dependency in either is one more thing to mirror and to trust. A
keyword this module does not know raises SchemaError, so a zod change that needs more cannot pass
silently.
"""

from __future__ import annotations

import copy
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

# Keywords that only annotate.
_ANNOTATIONS = {"$schema", "$comment", "title", "description", "default", "examples"}
_KNOWN = _ANNOTATIONS | {
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
}


class SchemaError(Exception):
    """The schema uses a keyword this validator does not implement."""


@cache
def load(path: str | Path) -> dict[str, Any]:
    """The schema in `path` (read once per process; callers must not mutate it)."""
    schema: dict[str, Any] = json.loads(Path(path).read_text(encoding="utf-8"))
    return schema


def defaults(schema: dict[str, Any]) -> dict[str, Any]:
    """Each optional top-level property of an object schema with the value it takes when left out:
    its `default` in the schema (zod's `.default(...)`), else None. Required properties are not
    listed: there is no value to take for them. Fresh copies, so a caller may change them."""
    required = set(schema.get("required", []))
    props: dict[str, Any] = schema.get("properties", {})
    return {k: copy.deepcopy(p.get("default")) for k, p in props.items() if k not in required}


def _type_ok(value: Any, t: str) -> bool:
    if t == "object":
        return isinstance(value, dict)
    if t == "array":
        return isinstance(value, list)
    if t == "string":
        return isinstance(value, str)
    if t == "boolean":
        return isinstance(value, bool)
    if t == "null":
        return value is None
    if t == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer()
        )
    if t == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    raise SchemaError(f"unknown type {t!r}")


def _length(
    value: str | list[Any],
    schema: dict[str, Any],
    lo: str,
    hi: str,
    unit: str,
    path: str,
) -> list[str]:
    out = []
    if lo in schema and len(value) < schema[lo]:
        out.append(f"{path}: must have at least {schema[lo]} {unit}")
    if hi in schema and len(value) > schema[hi]:
        out.append(f"{path}: must have at most {schema[hi]} {unit}")
    return out


def _bounds(value: float, schema: dict[str, Any], path: str) -> list[str]:
    out = []
    if "minimum" in schema and value < schema["minimum"]:
        out.append(f"{path}: must be >= {schema['minimum']}")
    if "maximum" in schema and value > schema["maximum"]:
        out.append(f"{path}: must be <= {schema['maximum']}")
    if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
        out.append(f"{path}: must be > {schema['exclusiveMinimum']}")
    if "exclusiveMaximum" in schema and value >= schema["exclusiveMaximum"]:
        out.append(f"{path}: must be < {schema['exclusiveMaximum']}")
    return out


def _object(value: dict[str, Any], schema: dict[str, Any], path: str) -> list[str]:
    out = []
    props: dict[str, Any] = schema.get("properties", {})
    for key in schema.get("required", []):
        if key not in value:
            out.append(f"{path}.{key}: required")
    extra = schema.get("additionalProperties", True)
    for key, item in value.items():
        if key in props:
            out.extend(errors(item, props[key], f"{path}.{key}"))
        elif extra is False:
            out.append(f"{path}.{key}: unknown key (not in the {path} contract)")
        elif isinstance(extra, dict):
            out.extend(errors(item, extra, f"{path}.{key}"))
    return out


def errors(value: Any, schema: dict[str, Any], path: str = "value") -> list[str]:
    """Every violation of `schema` by `value`, as 'path: message' strings (empty: valid); `path`
    names the value itself ('spec', 'request', 'progress')."""
    unknown = set(schema) - _KNOWN
    if unknown:
        raise SchemaError(f"{path}: schema keyword(s) not supported: {sorted(unknown)}")
    if "anyOf" in schema:
        branches = [errors(value, s, path) for s in schema["anyOf"]]
        if all(branches):
            return [f"{path}: matches none of the allowed forms ({'; '.join(b[0] for b in branches)})"]
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_type_ok(value, t) for t in types):
            return [f"{path}: expected {' or '.join(types)}, got {type(value).__name__}"]
    out: list[str] = []
    if "enum" in schema and value not in schema["enum"]:
        out.append(f"{path}: must be one of {schema['enum']}")
    if "const" in schema and value != schema["const"]:
        out.append(f"{path}: must be {schema['const']!r}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        out.extend(_bounds(value, schema, path))
    if isinstance(value, str):
        out.extend(_length(value, schema, "minLength", "maxLength", "character(s)", path))
        if "pattern" in schema and not re.search(schema["pattern"], value):
            out.append(f"{path}: must match {schema['pattern']}")
    if isinstance(value, list):
        out.extend(_length(value, schema, "minItems", "maxItems", "item(s)", path))
        if "items" in schema:
            for i, item in enumerate(value):
                out.extend(errors(item, schema["items"], f"{path}[{i}]"))
    if isinstance(value, dict):
        out.extend(_object(value, schema, path))
    return out
