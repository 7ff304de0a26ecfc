"""A fast, conservative check that a schema is valid against the JSON Schema 2020-12
meta-schema.

jsonschema's ``check_schema`` walks the whole 2020-12 meta-schema (``$dynamicRef`` and all) and
costs about 9 ms per tool here, which dominated compiling large tool sets. This module answers
True only when every keyword it sees is one it knows and its value has the meta-schema's shape;
for anything else (an unknown shape, a float where an integer is expected, draft 4 or
2019-09) it answers False and the caller runs jsonschema for the authoritative verdict and
message. So it can only make validation faster, never more lenient. Drafts 6 and 7 take the
same path (see :data:`DRAFT_6_7`).
"""

from __future__ import annotations

TYPE_NAMES = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})
DRAFT_2020_12 = ("https://json-schema.org/draft/2020-12/schema",
                 "https://json-schema.org/draft/2020-12/schema#")
#: drafts 6 and 7 (zod's default) take the same fast path: every keyword of the table below
#: has the same shape in their meta-schemas, or is unknown to them (any value), and the one
#: they add, ``additionalItems``, is checked as a schema
DRAFT_6_7 = tuple(f"http://json-schema.org/draft-0{n}/schema{h}" for n in (6, 7)
                  for h in ("", "#"))

_SCHEMA = "schema"
_SCHEMA_LIST = "schema_list"          # non-empty list of schemas
_SCHEMA_MAP = "schema_map"            # object whose values are schemas
_COUNT = "count"                      # non-negative integer
_NUMBER = "number"
_POSITIVE = "positive"                # a number above 0 (multipleOf)
_STRING = "string"
_BOOL = "bool"
_ANY = "any"
_UNIQUE_STRINGS = "unique_strings"
_LIST = "list"

_KEYWORDS = {
    "description": _STRING, "title": _STRING, "$comment": _STRING, "$ref": _STRING,
    "$schema": _STRING, "format": _STRING,
    "pattern": _STRING, "contentMediaType": _STRING, "contentEncoding": _STRING,
    "default": _ANY, "const": _ANY, "examples": _LIST, "enum": _LIST,
    "deprecated": _BOOL, "readOnly": _BOOL, "writeOnly": _BOOL, "uniqueItems": _BOOL,
    "minLength": _COUNT, "maxLength": _COUNT, "minItems": _COUNT, "maxItems": _COUNT,
    "minProperties": _COUNT, "maxProperties": _COUNT, "minContains": _COUNT,
    "maxContains": _COUNT,
    "minimum": _NUMBER, "maximum": _NUMBER, "exclusiveMinimum": _NUMBER,
    "exclusiveMaximum": _NUMBER, "multipleOf": _POSITIVE,
    "required": _UNIQUE_STRINGS,
    "items": _SCHEMA, "additionalProperties": _SCHEMA, "propertyNames": _SCHEMA,
    "contains": _SCHEMA, "not": _SCHEMA, "if": _SCHEMA, "then": _SCHEMA, "else": _SCHEMA,
    "unevaluatedItems": _SCHEMA, "unevaluatedProperties": _SCHEMA,
    "anyOf": _SCHEMA_LIST, "allOf": _SCHEMA_LIST, "oneOf": _SCHEMA_LIST,
    "prefixItems": _SCHEMA_LIST,
    "properties": _SCHEMA_MAP, "patternProperties": _SCHEMA_MAP, "$defs": _SCHEMA_MAP,
    "definitions": _SCHEMA_MAP, "dependentSchemas": _SCHEMA_MAP,
}


_DRAFT_6_7_KEYWORDS = dict(_KEYWORDS, additionalItems=_SCHEMA)

# keywords whose meta-schema constraints this module does not model: always ask jsonschema
_DEFER = frozenset({"$id", "$anchor", "$dynamicAnchor", "$dynamicRef", "$vocabulary",
                    "$recursiveRef", "$recursiveAnchor", "dependencies", "contentSchema"})


def certainly_valid(schema, depth: int = 0) -> bool:
    """True only if ``schema`` is certainly a valid 2020-12 schema (see the module docstring)."""
    if depth == 0 and isinstance(schema, dict) and "$schema" in schema:
        if schema["$schema"] in DRAFT_6_7:
            return _schema(schema, depth, _DRAFT_6_7_KEYWORDS)
        if schema["$schema"] not in DRAFT_2020_12:
            return False
    return _schema(schema, depth)


def _schema(s, depth: int, table: dict = _KEYWORDS) -> bool:
    if isinstance(s, bool):
        return True
    if not isinstance(s, dict) or depth > 200:
        return False
    for key, value in s.items():
        if key == "type":
            if isinstance(value, str):
                if value not in TYPE_NAMES:
                    return False
            elif isinstance(value, list):
                if not value or not all(isinstance(v, str) and v in TYPE_NAMES for v in value) \
                        or len(set(value)) != len(value):
                    return False
            else:
                return False
            continue
        if key == "dependentRequired":
            if not isinstance(value, dict) or not all(_unique_strings(v)
                                                      for v in value.values()):
                return False
            continue
        kind = table.get(key)
        if kind is None:
            if key in _DEFER:
                return False
            continue            # unknown keywords are annotations to the meta-schema
        if not _value(kind, value, depth, table):
            return False
    return True


def _unique_strings(v) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v) and len(set(v)) == len(v)


def _value(kind: str, v, depth: int, table: dict) -> bool:
    if kind == _ANY:
        return True
    if kind == _STRING:
        return isinstance(v, str)
    if kind == _BOOL:
        return isinstance(v, bool)
    if kind == _LIST:
        return isinstance(v, list)
    if kind == _COUNT:
        return isinstance(v, int) and not isinstance(v, bool) and v >= 0
    if kind == _NUMBER:
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    if kind == _POSITIVE:
        return isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0
    if kind == _UNIQUE_STRINGS:
        return _unique_strings(v)
    if kind == _SCHEMA:
        return _schema(v, depth + 1, table)
    if kind == _SCHEMA_LIST:
        return isinstance(v, list) and bool(v) and all(_schema(x, depth + 1, table) for x in v)
    if kind == _SCHEMA_MAP:
        return isinstance(v, dict) and all(_schema(x, depth + 1, table) for x in v.values())
    return False  # pragma: no cover
