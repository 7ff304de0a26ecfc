"""A tool's JSON Schema to the Expr of the arguments the model may write.

Every keyword is enforced exactly or refused with :class:`UnsupportedSchemaError` naming its
JSON pointer; annotations (descriptions, titles, examples, defaults) are ignored.

Departures from JSON Schema, all toward a narrower language (so what is accepted still
validates): properties come in schema order; an object that declares ``properties`` allows no
other keys unless it says otherwise; integers are written without a fraction or exponent; a
value from ``enum``/``const`` is written as ``json.dumps`` writes it.
"""

from __future__ import annotations

from dataclasses import dataclass

import jsonschema

from ..errors import UnsupportedSchemaError
from ..fsm import NOTHING, Expr, Subseq, alt, lit, seq
from . import json_grammar as jg

ANNOTATIONS = frozenset({
    "description", "title", "examples", "example", "default", "$comment", "$schema", "$id",
    "deprecated", "readOnly", "writeOnly",
})
TYPES = ("object", "array", "string", "integer", "number", "boolean", "null")
# keywords this compiler enforces; everything else is refused
ENFORCED = frozenset({"type", "enum", "const", "anyOf", "properties", "required",
                      "additionalProperties", "items", "minItems", "maxItems"})
# beside enum/const, these are checked value by value with jsonschema, so all are exact
FILTERABLE = ENFORCED | frozenset({
    "pattern", "format", "minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum",
    "exclusiveMaximum", "multipleOf", "uniqueItems", "minProperties", "maxProperties",
    "propertyNames", "patternProperties", "dependentRequired", "allOf", "oneOf", "not",
    "prefixItems", "contains", "minContains", "maxContains",
})
# what each unsupported keyword would need, for the error message
_WHY = {
    "$ref": "references are not resolved yet",
    "allOf": "schema intersection is not supported yet",
    "oneOf": "exclusive alternatives are not supported yet",
    "not": "negation cannot be enforced",
    "uniqueItems": "uniqueness of items is not regular",
    "multipleOf": "multipleOf is not supported",
    "pattern": "string patterns are not supported yet",
    "format": "string formats are not supported yet",
    "minLength": "string length bounds are not supported yet",
    "maxLength": "string length bounds are not supported yet",
    "minimum": "numeric bounds are not supported yet",
    "maximum": "numeric bounds are not supported yet",
    "exclusiveMinimum": "numeric bounds are not supported yet",
    "exclusiveMaximum": "numeric bounds are not supported yet",
}


def _esc(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


@dataclass(frozen=True)
class SchemaOptions:
    max_depth: int = 4      # nesting bound for free-form values ({} or a bare object/array)


class SchemaCompiler:
    """Turns one tool's ``parameters`` schema into an Expr; a new one per tool."""

    def __init__(self, options: SchemaOptions = SchemaOptions()):
        self.options = options

    def compile(self, schema, pointer: str = "") -> Expr:
        expr = self._schema(schema, pointer)
        if expr == NOTHING:
            raise UnsupportedSchemaError("no value satisfies this schema", pointer=pointer,
                                         fix="check its type, enum and const; a free-form "
                                             "object or array needs max_depth of at least 1")
        return expr

    # -- dispatch -------------------------------------------------------------------------
    def _schema(self, schema, ptr: str) -> Expr:
        if schema is True:
            return jg.any_value(self.options.max_depth)
        if schema is False:
            return NOTHING
        if not isinstance(schema, dict):
            raise UnsupportedSchemaError(f"expected a schema object, got {type(schema).__name__}",
                                         pointer=ptr)
        if "enum" in schema or "const" in schema:
            # a finite set of values: every standard keyword beside it is enforced exactly,
            # by keeping only the listed values that validate against the whole schema
            self._refuse_unknown(schema, ptr, ANNOTATIONS | FILTERABLE)
            return self._enum(schema, ptr)
        self._refuse_unknown(schema, ptr, ANNOTATIONS | ENFORCED)
        if "anyOf" in schema:
            return self._any_of(schema, ptr)
        types = self._types(schema, ptr)
        return alt(*(self._typed(t, schema, ptr) for t in types)) if types else NOTHING

    def _types(self, schema: dict, ptr: str) -> list[str]:
        t = schema.get("type")
        if t is None:
            if "properties" in schema or "required" in schema:
                return ["object"]   # an object-shaped schema without its type
            if "items" in schema:
                return ["array"]
            return list(TYPES)
        types = [t] if isinstance(t, str) else list(t)
        for x in types:
            if x not in TYPES:
                raise UnsupportedSchemaError(f"unknown type {x!r}", pointer=f"{ptr}/type",
                                             fix=f"use one of {', '.join(TYPES)}")
        return types

    def _typed(self, t: str, schema: dict, ptr: str) -> Expr:
        if t == "object":
            return self._object(schema, ptr)
        if t == "array":
            return self._array(schema, ptr)
        return {"string": jg.STRING, "integer": jg.INTEGER, "number": jg.NUMBER,
                "boolean": jg.BOOLEAN, "null": jg.NULL}[t]

    # -- keywords -------------------------------------------------------------------------
    def _enum(self, schema: dict, ptr: str) -> Expr:
        if "const" in schema:
            values, key = [schema["const"]], "const"
        else:
            values, key = schema["enum"], "enum"
        if "const" in schema and "enum" in schema:
            values = [v for v in schema["enum"] if _json_equal(v, schema["const"])]
        rest = {k: v for k, v in schema.items() if k not in ("enum", "const")}
        validator = jsonschema.Draft202012Validator(
            rest, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
        ok = [v for v in values if validator.is_valid(v)]
        if not ok:
            raise UnsupportedSchemaError(
                f"no value of {key!r} satisfies the rest of the schema", pointer=f"{ptr}/{key}",
                fix="make the listed values match the schema's type")
        return alt(*(lit(jg.render(v)) for v in ok))

    @staticmethod
    def _refuse_unknown(schema: dict, ptr: str, allowed: frozenset) -> None:
        for key in schema:
            if key not in allowed:
                why = _WHY.get(key, "toolc does not know this keyword")
                raise UnsupportedSchemaError(f"keyword {key!r} cannot be enforced: {why}",
                                             pointer=f"{ptr}/{_esc(key)}",
                                             fix="remove it, or rewrite it with supported keywords")

    def _any_of(self, schema: dict, ptr: str) -> Expr:
        siblings = [k for k in schema if k not in ANNOTATIONS and k != "anyOf"]
        if siblings:
            raise UnsupportedSchemaError(
                f"'anyOf' next to {', '.join(map(repr, siblings))} cannot be enforced yet",
                pointer=f"{ptr}/anyOf", fix="move the sibling keywords into each branch")
        branches = schema["anyOf"]
        return alt(*(self._schema(b, f"{ptr}/anyOf/{i}") for i, b in enumerate(branches)))

    def _object(self, schema: dict, ptr: str) -> Expr:
        props = schema.get("properties")
        required = list(schema.get("required", []))
        extra = schema.get("additionalProperties", False if props is not None else True)
        if not props and not required:   # no declared properties ("properties": {} too)
            if extra is True or extra == {}:
                if self.options.max_depth <= 0:
                    return NOTHING   # a free-form object is one level deep itself
                return jg.object_of(jg.any_value(self.options.max_depth - 1))
        props = props or {}
        if extra not in (False,) and props:
            raise UnsupportedSchemaError(
                "'additionalProperties' other than false next to 'properties' is not "
                "supported yet", pointer=f"{ptr}/additionalProperties",
                fix="set it to false, or remove it (toolc then allows only declared keys)")
        if extra not in (False, True, {}):
            raise UnsupportedSchemaError("'additionalProperties' as a schema is not supported yet",
                                         pointer=f"{ptr}/additionalProperties")
        for r in required:
            if r not in props:
                raise UnsupportedSchemaError(
                    f"required property {r!r} is not declared in 'properties'",
                    pointer=f"{ptr}/required", fix="declare it, or remove it from 'required'")
        items, req = [], []
        for name, sub in props.items():
            sub_ptr = f"{ptr}/properties/{_esc(name)}"
            value = self._schema(sub, sub_ptr)
            if value == NOTHING:
                if name in required:
                    raise UnsupportedSchemaError(
                        f"required property {name!r} admits no value", pointer=sub_ptr)
                raise UnsupportedSchemaError(
                    f"optional property {name!r} admits no value", pointer=sub_ptr,
                    fix="fix its schema, or remove the property")
            items.append(seq(lit(jg.render(name)), jg.KEY_SEP, value))
            req.append(name in required)
        if not items:
            return lit("{}")
        return seq(lit("{"), Subseq(tuple(items), tuple(req), jg.ITEM_SEP), lit("}"))

    def _array(self, schema: dict, ptr: str) -> Expr:
        items = schema.get("items", True)
        if isinstance(items, list):
            raise UnsupportedSchemaError("'items' as a list (tuple form) is not supported yet",
                                         pointer=f"{ptr}/items", fix="use a single schema")
        lo = int(schema.get("minItems", 0))
        hi = schema.get("maxItems")
        hi = None if hi is None else int(hi)
        if hi is not None and hi < lo:
            return NOTHING
        if items is True or items == {}:
            if self.options.max_depth <= 0:
                return NOTHING   # as for objects: the free-form array counts as one level
            item = jg.any_value(self.options.max_depth - 1)
        else:
            item = self._schema(items, f"{ptr}/items")
        if item == NOTHING:
            return lit("[]") if lo == 0 else NOTHING
        return jg.array_of(item, lo, hi)


def _json_equal(a, b) -> bool:
    return jsonschema.Draft202012Validator({"const": a}).is_valid(b)
