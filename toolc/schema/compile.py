"""A tool's JSON Schema to the Expr of the arguments the model may write.

Every keyword is enforced exactly or refused with :class:`UnsupportedSchemaError` naming its
JSON pointer; annotations (descriptions, titles, examples, defaults) are ignored. With
``lenient``, a refused keyword is dropped instead and listed in :attr:`SchemaCompiler.dropped`.
docs/json-schema.md lists every keyword of JSON Schema 2020-12 and what toolc does with it.

Departures from JSON Schema, all toward a narrower language (so what is accepted still
validates): properties come in schema order (``property_order="any"``: every order, up to 6
keys), extra keys after the declared ones; an object that declares a property allows no other
keys unless it says otherwise (``additional_properties="closed"``, the default); integers are
written without a fraction or exponent, bounded numbers without an exponent; a value from
``enum``/``const`` is written as ``json.dumps`` writes it; a string with a ``pattern`` or a
``format``, and an undeclared key, is written as ``json.dumps`` writes it (no optional
escapes); recursion through ``$ref`` is unrolled ``max_depth`` times.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import budget
from ..errors import BudgetExceededError, EmptyLanguageError, UnsupportedSchemaError
from ..fsm import NOTHING, Expr, alt, lit, seq
from ..fsm.size import nfa_size
from ..options import spelled
from . import json_grammar as jg
from .numbers import number_expr
from .refs import TYPES, MergeConflict, esc, map_type_names, meet, merge, resolve, unesc
from .automata import intersect
from .content import escaped_body, is_json_content
from .strings import string_body, string_expr
from .algebra import AlgebraSchemas
from .allof import AllOfSchemas
from .canon import canon_number
from .arrays import ArraySchemas
from .keywords import (ANNOTATIONS, ARRAY_KEYS, ENFORCED, EXTRA_UNLESS, FILTERABLE,  # noqa: F401
                       NUMBER_KEYS, OBJECT_KEYS, STRING_KEYS, STRUCTURAL, WHY, NoValue,
                       has_type, json_equal, validator)
from .objects import ObjectSchemas
from .drafts import DRAFT2020
from .uris import localized
from .unevaluated import UnevaluatedSchemas


@dataclass(frozen=True)
class SchemaOptions:
    max_depth: int = 4          # nesting bound for free-form values, and for $ref recursion
    whitespace: str = "model"   # model | compact | flexible
    max_ws: int = 4             # flexible: at most this many whitespace characters in a row
    lenient: bool = False       # drop what cannot be enforced (recorded), instead of failing
    additional_properties: str = "closed"   # closed | schema (JSON Schema: open by default)
    property_order: str = "schema"          # schema | any (every order, up to 6 properties)
    ignore: tuple = ()          # keywords dropped everywhere (recorded); see vocabulary.py
    leap_seconds: bool = False  # date-time/time admit second 60 (formats.leap_seconds)


class SchemaCompiler(ObjectSchemas, ArraySchemas, AlgebraSchemas, AllOfSchemas,
                     UnevaluatedSchemas):
    """Turns one tool's ``parameters`` schema into an Expr; a new one per tool.

    After :meth:`compile`, :attr:`notices` lists the non-standard readings (type names,
    optional properties left out) and :attr:`dropped` what lenient mode did not enforce, each
    as ``{"pointer", "keyword", ...}`` relative to the schema given.
    """

    def __init__(self, options: SchemaOptions = SchemaOptions(), *,
                 max_states: int | None = None, max_nesting: int | None = None,
                 memo: dict | None = None):
        """``max_states`` refuses, at its own pointer, any subschema whose automaton alone
        exceeds the NFA budget; ``max_nesting`` bounds the nesting of subschemas; ``memo``
        caches expression sizes (shared with the whole grammar's check). The deadline of
        :func:`toolc.budget.deadline` is checked per subschema."""
        self.options = options
        self.max_states = max_states
        self.max_nesting = max_nesting
        self._level = 0
        self._memo: dict = {} if memo is None else memo
        self.style = jg.Style.of(options.whitespace, options.max_ws)
        self.notices: list[dict] = []
        self.dropped: list[dict] = []
        self.root = None
        self._active: dict[str, int] = {}
        self._cutoffs = 0

    @property
    def closed_objects(self) -> bool:
        """Whether an object that declares properties admits no other keys by default."""
        return self.options.additional_properties == "closed"

    def compile(self, schema, pointer: str = "", *, root=None) -> Expr:
        """``schema``'s Expr; ``$ref`` resolves against ``root`` (default: ``schema``), so one
        property of a tool's parameters can be compiled alone with its ``#/$defs``. Without
        ``root``, each ``$ref`` through an ``$id`` or an anchor is first written as a pointer
        (:func:`toolc.schema.uris.localized`)."""
        if root is None:
            schema = localized(schema, DRAFT2020)
        self.root = schema if root is None else root
        if isinstance(schema, dict) and "type" not in schema and "properties" in schema:
            schema = dict(schema, type="object")    # the arguments, as tools.py reads them
        expr = self._schema(schema, pointer)
        if expr == NOTHING:
            raise UnsupportedSchemaError("no value satisfies this schema", pointer=pointer,
                                         fix="check its type, enum and const; a free-form "
                                             "object or array needs max_depth of at least 1")
        return expr

    # -- dispatch -------------------------------------------------------------------------
    def _schema(self, schema, ptr: str) -> Expr:
        """Every subschema comes through here: the budgets of :mod:`toolc.budget` are
        checked around :meth:`_value_schema`."""
        budget.check("compiling this schema", pointer=ptr)
        budget.check_nesting(self._level, self.max_nesting, ptr)
        self._level += 1
        try:
            expr = self._value_schema(schema, ptr)
        finally:
            self._level -= 1
        if self.max_states is not None:
            budget.check_subschema(nfa_size(expr, self._memo), self.max_states, ptr)
        return expr

    def _value_schema(self, schema, ptr: str) -> Expr:
        if schema is True:
            return jg.any_value(self.options.max_depth, self.style)
        if schema is False:
            return NOTHING
        if not isinstance(schema, dict):
            raise UnsupportedSchemaError(f"expected a schema object, got {type(schema).__name__}",
                                         pointer=ptr)
        schema = map_type_names(self._uneval_clean(schema, ptr), ptr, self.notices)
        if schema.get("uniqueItems") is False:      # asks for nothing
            schema = {k: v for k, v in schema.items() if k != "uniqueItems"}
        while True:
            try:
                return self._resolved(schema, ptr)
            except (BudgetExceededError, EmptyLanguageError) as e:
                raise e if e.pointer is not None else e.located(pointer_prefix=ptr) from None
            except UnsupportedSchemaError as e:
                key = self._droppable(e, schema, ptr)
                if key is None:
                    raise
                self.dropped.append({"pointer": f"{ptr}/{esc(key)}", "keyword": key,
                                     "why": e.message})
                schema = {k: v for k, v in schema.items() if k != key}

    def _droppable(self, e: UnsupportedSchemaError, schema: dict, ptr: str) -> str | None:
        if not self.options.lenient or not e.pointer or not e.pointer.startswith(ptr + "/"):
            return None
        key = unesc(e.pointer[len(ptr) + 1:].split("/")[0])
        if key in schema and key not in STRUCTURAL and key not in ANNOTATIONS:
            return key
        return None

    def _resolved(self, schema: dict, ptr: str) -> Expr:
        if "$ref" in schema:
            return self._ref(schema, ptr)
        if "allOf" in schema:
            return self._all_of(schema, ptr)
        if "dependentSchemas" in schema:
            return self._dependent_schemas(schema, ptr)
        if "if" in schema or "then" in schema or "else" in schema:
            return self._conditional(schema, ptr)
        if "oneOf" in schema:
            return self._one_of(schema, ptr)
        if "not" in schema:
            return self._not(schema, ptr)
        return self._plain(schema, ptr)

    def _flat(self, branch, ptr: str):
        """An allOf branch with its type names mapped and its own $ref / allOf resolved (an
        ``allOf`` that cannot be merged stays one: :mod:`toolc.schema.allof` builds it)."""
        if not isinstance(branch, dict):
            return branch
        branch = map_type_names(self._uneval_clean(branch, ptr), ptr, self.notices)
        if "$ref" in branch:
            ref = branch["$ref"]
            if self._active.get(ref):
                raise UnsupportedSchemaError("a recursive '$ref' inside 'allOf' cannot be "
                                             "merged", pointer=f"{ptr}/$ref",
                                             fix="move the recursion out of 'allOf'")
            target, _ = resolve(self.root, ref, ptr)
            self._active[ref] = 1
            try:
                rest = {k: v for k, v in branch.items() if k != "$ref"}
                branch = meet(self._flat(target, ptr), rest, ptr)
            finally:
                del self._active[ref]
        if isinstance(branch, dict) and "allOf" in branch:
            merged = {k: v for k, v in branch.items() if k != "allOf"}
            try:
                for i, sub in enumerate(branch["allOf"]):
                    merged = merge(merged, self._flat(sub, f"{ptr}/allOf/{i}"), ptr)
            except MergeConflict:
                return branch
            branch = merged
        return branch

    def _ref(self, schema: dict, ptr: str) -> Expr:
        ref = schema["$ref"]
        target, tptr = resolve(self.root, ref, ptr)
        depth = self._active.get(ref, 0)
        if depth >= max(self.options.max_depth, 1):
            self._cutoffs += 1
            return NOTHING          # recursion unrolled to the depth bound
        self._active[ref] = depth + 1
        try:
            rest = {k: v for k, v in schema.items() if k != "$ref" and k not in ANNOTATIONS}
            if rest:
                return self._schema(meet(self._flat(target, tptr), rest, ptr), ptr)
            return self._schema(target, tptr)
        finally:
            self._active[ref] = depth

    def _plain(self, schema: dict, ptr: str) -> Expr:
        if "enum" in schema or "const" in schema:
            # a finite set of values: every standard keyword beside it is enforced exactly,
            # by keeping only the listed values that validate against the whole schema
            self._refuse_unknown(schema, ptr, ANNOTATIONS | FILTERABLE)
            return self._enum(schema, ptr)
        self._refuse_unknown(schema, ptr, ANNOTATIONS | ENFORCED | {EXTRA_UNLESS})
        if "anyOf" in schema:
            return self._any_of(schema, ptr)
        types = self._types(schema, ptr)
        if len(types) <= 1:
            return self._typed(types[0], schema, ptr) if types else NOTHING
        return self._each_type(types, schema, ptr)

    def _each_type(self, types: list, schema: dict, ptr: str) -> Expr:
        """The values of each of several types. Where one type has none (an object whose
        required key admits no value, beside no ``type`` or a list), the others stand, as
        JSON Schema reads it (a notice says so); where none has any, the first error."""
        parts, empty = [], []
        for t in types:
            try:
                parts.append(self._typed(t, schema, ptr))
            except NoValue as e:
                empty.append((t, e))
        if empty and not parts:
            raise empty[0][1]
        for t, e in empty:
            self.notices.append({"pointer": e.pointer or ptr, "keyword": "type", "message":
                                 f"no {t} satisfies this schema ({e.message}); its values of "
                                 f"the other types are built"})
        return alt(*parts)

    def _types(self, schema: dict, ptr: str) -> list[str]:
        t = schema.get("type")
        if t is None:       # each keyword governs its own type; the other types are free
            return [x for x in TYPES if x != "integer"]
        types = [t] if isinstance(t, str) else list(t)
        for x in types:
            if x not in TYPES:
                raise UnsupportedSchemaError(f"unknown type {x!r}", pointer=f"{ptr}/type",
                                             fix=f"use one of {', '.join(TYPES)}")
        if "integer" in types and "number" in types:
            types.remove("integer")     # every integer is a number
        return types

    def _typed(self, t: str, schema: dict, ptr: str) -> Expr:
        if t == "object":
            return self._object(schema, ptr)
        if t == "array":
            return self._array(schema, ptr)
        if t == "string":
            if is_json_content(schema):
                return self._json_content(schema, ptr)
            return string_expr(schema, ptr, leap=self.options.leap_seconds)
        if t in ("integer", "number"):
            return number_expr(schema, t == "integer", ptr)
        return {"boolean": jg.BOOLEAN, "null": jg.NULL}[t]

    def _json_content(self, schema: dict, ptr: str) -> Expr:
        """A string holding a JSON text of ``contentSchema`` (:mod:`toolc.schema.content`)."""
        body = escaped_body(self._schema(schema["contentSchema"], f"{ptr}/contentSchema"))
        rest = {k: v for k, v in schema.items() if k in STRING_KEYS and k != "contentSchema"}
        if rest and body != NOTHING:
            body = intersect(body, string_body(rest, ptr,
                                                leap=self.options.leap_seconds))
        return NOTHING if body == NOTHING else seq(lit('"'), body, lit('"'))

    # -- keywords -------------------------------------------------------------------------
    def _enum(self, schema: dict, ptr: str) -> Expr:
        if "const" in schema:
            values, key = [schema["const"]], "const"
        else:
            values, key = schema["enum"], "enum"
        if "const" in schema and "enum" in schema:
            values = [v for v in schema["enum"] if json_equal(v, schema["const"])]
        rest = {k: v for k, v in schema.items() if k not in ("enum", "const")}
        if all(k in ANNOTATIONS or k == "type" for k in rest):
            ok = [v for v in values if has_type(v, rest.get("type"))]   # the common case
        else:
            import jsonschema
            check = validator(rest, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
            ok = [v for v in values if check.is_valid(v)]
        if not ok:
            raise NoValue(
                f"no value of {key!r} satisfies the rest of the schema", pointer=f"{ptr}/{key}",
                fix="make the listed values match the schema's type")
        return alt(*(self._value_literal(v) for v in ok))

    def _value_literal(self, v) -> Expr:
        """One value as the model writes it; a number also in its canonical spelling."""
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return alt(lit(self._render(v)), lit(canon_number(v)))
        return lit(self._render(v))

    def _render(self, value) -> bytes:
        """A literal value with this compiler's separators (model: json.dumps defaults)."""
        if self.options.whitespace == "compact":
            import json
            return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
        return jg.render(value)

    def _refuse_unknown(self, schema: dict, ptr: str, allowed: frozenset) -> None:
        for key in schema:
            if key not in allowed:
                why = WHY.get(key, "toolc does not know this keyword")
                raise UnsupportedSchemaError(f"keyword {key!r} cannot be enforced: {why}",
                                             pointer=f"{ptr}/{esc(key)}",
                                             fix=f"remove it, or drop it with a warning: "
                                                 f"{spelled('ignore', key)} for this keyword, "
                                                 f"{spelled('lenient')} for all")

    def _any_of(self, schema: dict, ptr: str) -> Expr:
        rest = {k: v for k, v in schema.items() if k != "anyOf" and k not in ANNOTATIONS}
        out = []
        for i, b in enumerate(schema["anyOf"]):
            bptr = f"{ptr}/anyOf/{i}"
            if rest:      # keywords beside anyOf apply to every branch
                b = meet(self._flat(b, bptr), rest, bptr)
            out.append(self._or_nothing(b, bptr))
        return alt(*out)
