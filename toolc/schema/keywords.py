"""What the schema compiler knows of JSON Schema's keywords: which it enforces, which are
annotations, why the others are refused; and the value tests (type, equality, pattern) that
``enum``/``const`` filtering and object keys need.
"""

from __future__ import annotations

from ..errors import UnsupportedSchemaError

ANNOTATIONS = frozenset({
    "description", "title", "examples", "example", "default", "$comment", "$schema", "$id",
    "deprecated", "readOnly", "writeOnly", "$defs", "definitions", "$anchor",
    "contentMediaType", "contentEncoding", "$vocabulary",
    # an anchor for $ref (toolc.schema.uris); only $dynamicRef, refused, would read it otherwise
    "$dynamicAnchor",
})
# keywords this compiler enforces; everything else is refused
ENFORCED = frozenset({
    "type", "enum", "const", "anyOf", "oneOf", "allOf", "$ref", "properties", "required",
    "additionalProperties", "patternProperties", "propertyNames", "minProperties",
    "maxProperties", "dependentRequired", "items", "prefixItems", "minItems", "maxItems",
    "contains", "minContains", "minLength", "maxLength", "pattern", "format", "minimum",
    "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "not", "if", "then",
    "else", "dependentSchemas", "uniqueItems", "contentSchema", "maxContains",
})
# internal, never in a user's schema (the keyword pass drops unknown keys): written by the
# allOf of two objects whose additionalProperties meet the other side's patterns. Its value
# is a list of [patterns, X]: a member whose name ``properties`` does not declare and that
# matches none of ``patterns`` must also satisfy X (one side's additionalProperties)
EXTRA_UNLESS = "$toolc:extraUnless"
# beside enum/const, every standard keyword is checked value by value with jsonschema
FILTERABLE = ENFORCED | frozenset({
    "uniqueItems", "not", "maxContains", "dependentSchemas", "if", "then", "else",
    "unevaluatedItems", "unevaluatedProperties",
})
# keywords that shape the automaton; lenient mode never drops these
STRUCTURAL = frozenset({"type", "properties", "required", "items", "prefixItems", "anyOf",
                        "oneOf", "allOf", "$ref", "additionalProperties", "enum", "const"})
# (unevaluated.py rewrites both before compilation; one left here was not reached by it)
WHY = {
    "unevaluatedItems": "it was not rewritten (its schema's root does not hold it)",
    "unevaluatedProperties": "it was not rewritten (its schema's root does not hold it)",
}
OBJECT_KEYS = ("properties", "required", "additionalProperties", "patternProperties",
                "propertyNames", "minProperties", "maxProperties", "dependentRequired")
ARRAY_KEYS = ("items", "prefixItems", "minItems", "maxItems", "contains", "minContains",
              "uniqueItems", "maxContains")
STRING_KEYS = ("minLength", "maxLength", "pattern", "format", "contentSchema")
NUMBER_KEYS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
MAX_DEPENDENT_VARIANTS = 16


class NoValue(UnsupportedSchemaError):
    """A schema part that no value can satisfy (an enum that contradicts its type)."""



def validator(schema, **kw):
    """jsonschema's 2020-12 validator of a schema as toolc holds it: ``pattern`` lists (the
    patterns ``allOf`` merged, all of which must match) are written as ``allOf``."""
    import jsonschema

    def plain(node):
        if isinstance(node, list):
            return [plain(x) for x in node]
        if not isinstance(node, dict):
            return node
        out = {k: plain(v) for k, v in node.items()}
        if isinstance(out.get("pattern"), list):
            out["allOf"] = out.get("allOf", []) + [{"pattern": p} for p in out.pop("pattern")]
        return out
    return jsonschema.Draft202012Validator(plain(schema), **kw)


def pattern_search(pattern: str, name: str) -> bool:
    import jsonschema
    return jsonschema.Draft202012Validator({"pattern": pattern}).is_valid(name)


def has_type(value, types) -> bool:
    """JSON Schema's ``type`` test (an integer-valued float is an integer)."""
    if types is None:
        return True
    for t in ([types] if isinstance(types, str) else types):
        if t == "string" and isinstance(value, str) \
                or t == "boolean" and isinstance(value, bool) \
                or t == "null" and value is None \
                or t == "object" and isinstance(value, dict) \
                or t == "array" and isinstance(value, list):
            return True
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if t == "number" or t == "integer" and (isinstance(value, int)
                                                    or float(value).is_integer()):
                return True
    return False


def json_equal(a, b) -> bool:
    import jsonschema
    return jsonschema.Draft202012Validator({"const": a}).is_valid(b)
