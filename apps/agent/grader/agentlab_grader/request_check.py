"""The grading request checked against its contract before anything is graded.

request.schema.json is generated from core's RunnerRequest (`npm run gen:schemas`; a unit test fails
while it is stale). This checks what the grader relies on: object keys (unknown ones refused,
required ones present), types, enums and numeric bounds. A keyword it does not know raises, so a
schema it cannot check fails loudly instead of passing silently.
"""

import json
import os

SCHEMA_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "request.schema.json")
_TYPES: dict[str, type | tuple[type, ...]] = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
    "integer": int,
    "number": (int, float),
}
_IGNORED = {"$schema", "$comment", "title", "description", "default"}
_CHECKED = {"type", "properties", "required", "additionalProperties", "items", "enum", "maximum", "minimum"}
_CHECKED |= {"exclusiveMinimum", "exclusiveMaximum"}


class RequestError(ValueError):
    pass


def load_schema() -> dict:
    with open(SCHEMA_PATH, encoding="utf-8") as f:
        return json.load(f)


def _type_ok(value, name: str) -> bool:
    if isinstance(value, bool) and name in ("integer", "number"):
        return False
    if name == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _TYPES[name])


def check(value, schema: dict, at: str = "request") -> None:
    unknown = set(schema) - _IGNORED - _CHECKED
    if unknown:
        raise RequestError(f"{at}: schema keyword(s) this checker does not know: {sorted(unknown)}")
    t = schema.get("type")
    if t is not None and not _type_ok(value, t):
        raise RequestError(f"{at}: expected {t}, got {type(value).__name__}")
    if "enum" in schema and value not in schema["enum"]:
        raise RequestError(f"{at}: {value!r} is not one of {schema['enum']}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "maximum" in schema and value > schema["maximum"]:
            raise RequestError(f"{at}: {value} is above {schema['maximum']}")
        if "minimum" in schema and value < schema["minimum"]:
            raise RequestError(f"{at}: {value} is below {schema['minimum']}")
        if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
            raise RequestError(f"{at}: {value} must be above {schema['exclusiveMinimum']}")
        if "exclusiveMaximum" in schema and value >= schema["exclusiveMaximum"]:
            raise RequestError(f"{at}: {value} must be below {schema['exclusiveMaximum']}")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        if schema.get("additionalProperties") is False:
            extra = sorted(set(value) - set(props))
            if extra:
                raise RequestError(f"{at}: unknown key(s) {extra}")
        missing = [k for k in schema.get("required", []) if k not in value]
        if missing:
            raise RequestError(f"{at}: missing key(s) {missing}")
        for k, sub in props.items():
            if k in value:
                check(value[k], sub, f"{at}.{k}")
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            check(item, schema["items"], f"{at}[{i}]")
