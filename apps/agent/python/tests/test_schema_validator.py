"""agentlab_schema, the validator the trainer and the grader share: a value that fits passes (the
positive control), and what breaks the schema is refused with the path of the field named."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from agentlab_schema import SchemaError, defaults, errors

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "lora": {
            "type": "object",
            "properties": {
                "r": {"type": "integer", "minimum": 1},
                "targets": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["r"],
            "additionalProperties": False,
            "default": {"r": 16, "targets": ["q_proj"]},
        },
        "method": {"anyOf": [{"type": "string", "enum": ["a", "b"]}, {"type": "null"}]},
        "steps": {"type": "integer", "exclusiveMinimum": 0, "default": 3},
    },
    "required": ["name"],
    "additionalProperties": False,
}
VALUE = {"name": "x", "lora": {"r": 8, "targets": ["k_proj"]}, "method": None, "steps": 2}


def test_a_value_that_fits_passes():
    assert errors(VALUE, SCHEMA, "spec") == []
    assert errors({"name": "x"}, SCHEMA, "spec") == []


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        (("extra",), 1, "spec.extra: unknown key"),
        (("lora", "alpha"), 32, "spec.lora.alpha: unknown key"),
        (("lora", "r"), "8", "spec.lora.r: expected integer, got str"),
        (("lora", "r"), True, "spec.lora.r: expected integer, got bool"),
        (("lora", "targets"), ["q", 3], "spec.lora.targets[1]: expected string, got int"),
        (("steps",), 0, "spec.steps: must be > 0"),
        (("method",), "c", "spec.method: matches none of the allowed forms"),
        (("name",), "", "spec.name: must have at least 1 character(s)"),
    ],
)
def test_a_broken_field_is_refused_by_its_path(path, value, expected):
    broken = copy.deepcopy(VALUE)
    at: Any = broken
    for key in path[:-1]:
        at = at[key]
    at[path[-1]] = value
    problems = errors(broken, SCHEMA, "spec")
    assert any(p.startswith(expected) for p in problems), problems


def test_a_missing_required_key_is_named():
    assert errors({}, SCHEMA, "spec") == ["spec.name: required"]
    assert errors({"name": "x", "lora": {}}, SCHEMA, "spec") == ["spec.lora.r: required"]


def test_an_unknown_keyword_fails_loudly():
    assert errors("x", {"type": "string", "pattern": "^x$"}) == []  # positive control: a known keyword
    with pytest.raises(SchemaError, match="patternProperties"):
        errors({}, {"type": "object", "patternProperties": {}})


def test_defaults_are_read_from_the_schema_as_fresh_copies():
    d = defaults(SCHEMA)
    assert d == {"lora": {"r": 16, "targets": ["q_proj"]}, "method": None, "steps": 3}
    d["lora"]["targets"].append("v_proj")
    assert defaults(SCHEMA)["lora"]["targets"] == ["q_proj"]
