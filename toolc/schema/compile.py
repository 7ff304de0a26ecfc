"""A tool's JSON Schema to the Expr of the arguments the model may write.

Every keyword is enforced exactly or refused with :class:`UnsupportedSchemaError` naming its
JSON pointer; annotations (descriptions, titles, examples, defaults) are ignored. With
``lenient``, a refused keyword is dropped instead and listed in :attr:`SchemaCompiler.dropped`.
docs/json-schema.md lists every keyword of JSON Schema 2020-12 and what toolc does with it.

Departures from JSON Schema, all toward a narrower language (so what is accepted still
validates): properties come in schema order, extra keys after the declared ones; an object
that declares ``properties`` allows no other keys unless it says otherwise; integers are
written without a fraction or exponent, bounded numbers without an exponent; a value from
``enum``/``const`` is written as ``json.dumps`` writes it; a string with a ``pattern`` or a
``format``, and an undeclared key, is written as ``json.dumps`` writes it (no optional
escapes); recursion through ``$ref`` is unrolled ``max_depth`` times.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import budget
from ..errors import BudgetExceededError, EmptyLanguageError, UnsupportedSchemaError
from ..fsm import NOTHING, EMPTY, Expr, Graph, Subseq, alt, lit, seq, star
from ..fsm.size import nfa_size
from . import json_grammar as jg
from .automata import difference, intersect
from .numbers import number_expr
from .refs import TYPES, esc, map_type_names, merge, resolve, unesc
from .strings import ANY_CHAR, pattern_expr, string_body, string_expr

ANNOTATIONS = frozenset({
    "description", "title", "examples", "example", "default", "$comment", "$schema", "$id",
    "deprecated", "readOnly", "writeOnly", "$defs", "definitions", "$anchor",
    "contentMediaType", "contentEncoding", "$vocabulary",
})
# keywords this compiler enforces; everything else is refused
ENFORCED = frozenset({
    "type", "enum", "const", "anyOf", "oneOf", "allOf", "$ref", "properties", "required",
    "additionalProperties", "patternProperties", "propertyNames", "minProperties",
    "maxProperties", "dependentRequired", "items", "prefixItems", "minItems", "maxItems",
    "contains", "minContains", "minLength", "maxLength", "pattern", "format", "minimum",
    "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
})
# beside enum/const, every standard keyword is checked value by value with jsonschema
FILTERABLE = ENFORCED | frozenset({
    "uniqueItems", "not", "maxContains", "dependentSchemas", "if", "then", "else",
    "unevaluatedItems", "unevaluatedProperties",
})
# keywords that shape the automaton; lenient mode never drops these
STRUCTURAL = frozenset({"type", "properties", "required", "items", "prefixItems", "anyOf",
                        "oneOf", "allOf", "$ref", "additionalProperties", "enum", "const"})
_WHY = {
    "not": "negation is not exact: one value has many spellings",
    "uniqueItems": "uniqueness of items is not regular",
    "maxContains": "counting non-matching items is not exact: one value has many spellings",
    "dependentSchemas": "conditional schemas are not supported",
    "if": "conditional schemas are not supported",
    "then": "conditional schemas are not supported",
    "else": "conditional schemas are not supported",
    "unevaluatedItems": "annotation-dependent keywords are not supported",
    "unevaluatedProperties": "annotation-dependent keywords are not supported",
}
_OBJECT_KEYS = ("properties", "required", "additionalProperties", "patternProperties",
                "propertyNames", "minProperties", "maxProperties", "dependentRequired")
_ARRAY_KEYS = ("items", "prefixItems", "minItems", "maxItems", "contains", "minContains")
_STRING_KEYS = ("minLength", "maxLength", "pattern", "format")
_NUMBER_KEYS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
MAX_DEPENDENT_VARIANTS = 16


@dataclass(frozen=True)
class SchemaOptions:
    max_depth: int = 4          # nesting bound for free-form values, and for $ref recursion
    whitespace: str = "model"   # model | compact | flexible
    max_ws: int = 4             # flexible: at most this many whitespace characters in a row
    lenient: bool = False       # drop what cannot be enforced (recorded), instead of failing


class _NoValue(UnsupportedSchemaError):
    """A schema part that no value can satisfy (an enum that contradicts its type)."""


class SchemaCompiler:
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

    def compile(self, schema, pointer: str = "") -> Expr:
        self.root = schema
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
        schema = map_type_names(schema, ptr, self.notices)
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
            merged = {k: v for k, v in schema.items() if k != "allOf"}
            for i, branch in enumerate(schema["allOf"]):
                merged = merge(merged, self._flat(branch, f"{ptr}/allOf/{i}"), ptr)
            return self._schema(merged, ptr)
        if "oneOf" in schema:
            rest = {k: v for k, v in schema.items() if k != "oneOf"}
            one = {"anyOf": schema["oneOf"]}
            return self._schema(merge(rest, one, ptr) if "anyOf" in rest else
                                dict(rest, anyOf=schema["oneOf"]), ptr)
        return self._plain(schema, ptr)

    def _flat(self, branch, ptr: str):
        """An allOf branch with its type names mapped and its own $ref / allOf resolved."""
        if not isinstance(branch, dict):
            return branch
        branch = map_type_names(branch, ptr, self.notices)
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
                branch = merge(self._flat(target, ptr), rest, ptr)
            finally:
                del self._active[ref]
        if isinstance(branch, dict) and "allOf" in branch:
            merged = {k: v for k, v in branch.items() if k != "allOf"}
            for i, sub in enumerate(branch["allOf"]):
                merged = merge(merged, self._flat(sub, f"{ptr}/allOf/{i}"), ptr)
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
                return self._schema(merge(self._flat(target, tptr), rest, ptr), ptr)
            return self._schema(target, tptr)
        finally:
            self._active[ref] = depth

    def _plain(self, schema: dict, ptr: str) -> Expr:
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
            for keys, kind in ((_OBJECT_KEYS, ["object"]), (_ARRAY_KEYS, ["array"]),
                               (_STRING_KEYS, ["string"]), (_NUMBER_KEYS, ["number"])):
                if any(k in schema for k in keys):
                    return kind     # a schema of one kind without its type
            return list(TYPES)
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
            return string_expr(schema, ptr)
        if t in ("integer", "number"):
            return number_expr(schema, t == "integer", ptr)
        return {"boolean": jg.BOOLEAN, "null": jg.NULL}[t]

    # -- keywords -------------------------------------------------------------------------
    def _enum(self, schema: dict, ptr: str) -> Expr:
        if "const" in schema:
            values, key = [schema["const"]], "const"
        else:
            values, key = schema["enum"], "enum"
        if "const" in schema and "enum" in schema:
            values = [v for v in schema["enum"] if _json_equal(v, schema["const"])]
        rest = {k: v for k, v in schema.items() if k not in ("enum", "const")}
        if isinstance(rest.get("pattern"), list):       # patterns merged from allOf
            rest["allOf"] = [{"pattern": p} for p in rest.pop("pattern")]
        if all(k in ANNOTATIONS or k == "type" for k in rest):
            ok = [v for v in values if _has_type(v, rest.get("type"))]   # the common case
        else:
            import jsonschema
            validator = jsonschema.Draft202012Validator(
                rest, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
            ok = [v for v in values if validator.is_valid(v)]
        if not ok:
            raise _NoValue(
                f"no value of {key!r} satisfies the rest of the schema", pointer=f"{ptr}/{key}",
                fix="make the listed values match the schema's type")
        return alt(*(lit(self._render(v)) for v in ok))

    def _render(self, value) -> bytes:
        """A literal value with this compiler's separators (model: json.dumps defaults)."""
        if self.options.whitespace == "compact":
            import json
            return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
        return jg.render(value)

    def _refuse_unknown(self, schema: dict, ptr: str, allowed: frozenset) -> None:
        for key in schema:
            if key not in allowed:
                why = _WHY.get(key, "toolc does not know this keyword")
                raise UnsupportedSchemaError(f"keyword {key!r} cannot be enforced: {why}",
                                             pointer=f"{ptr}/{esc(key)}",
                                             fix="remove it, or compile with --lenient to "
                                                 "drop it with a warning")

    def _any_of(self, schema: dict, ptr: str) -> Expr:
        rest = {k: v for k, v in schema.items() if k != "anyOf" and k not in ANNOTATIONS}
        out = []
        for i, b in enumerate(schema["anyOf"]):
            bptr = f"{ptr}/anyOf/{i}"
            if rest:      # keywords beside anyOf apply to every branch
                b = merge(self._flat(b, bptr), rest, bptr)
            out.append(self._schema(b, bptr))
        return alt(*out)

    # -- objects --------------------------------------------------------------------------
    def _key_expr(self, schema: dict, declared: list[str], ptr: str) -> Expr | None:
        """Undeclared keys, in json.dumps form, that satisfy propertyNames (None: no key)."""
        if not declared and "propertyNames" not in schema:
            return jg.STRING        # nothing to tell apart: any spelling will do
        body = star(ANY_CHAR)
        if "propertyNames" in schema:
            pn = schema["propertyNames"]
            if pn is False:
                return None
            if pn is not True:
                pn = map_type_names(pn, f"{ptr}/propertyNames", self.notices)
                if "enum" in pn or "const" in pn:
                    sub = self._schema(dict(pn, type="string"), f"{ptr}/propertyNames")
                    key = sub
                    names = alt(*(lit(jg.render(n)) for n in declared))
                    out = difference(key, names) if declared else key
                    return None if out == NOTHING else out
                bad = [k for k in pn if k not in ANNOTATIONS and k not in _STRING_KEYS
                       and k != "type"]
                if bad:
                    raise UnsupportedSchemaError(
                        f"'propertyNames' with {bad[0]!r} is not supported: only string "
                        "keywords apply to names", pointer=f"{ptr}/propertyNames/{esc(bad[0])}")
                if pn.get("type", "string") != "string":
                    return None
                body = intersect(body, string_body(pn, f"{ptr}/propertyNames"))
        key = seq(lit('"'), body, lit('"'))
        if declared:
            key = difference(key, alt(*(lit(jg.render(n)) for n in declared)))
        return None if key == NOTHING else key

    def _object(self, schema: dict, ptr: str) -> Expr:
        props = dict(schema.get("properties") or {})
        required = list(schema.get("required", []))
        default_extra = False if "properties" in schema else True
        extra = schema.get("additionalProperties", default_extra)
        patterns = schema.get("patternProperties") or {}
        lo = int(schema.get("minProperties", 0))
        hi = schema.get("maxProperties")
        hi = None if hi is None else int(hi)
        depth = self.options.max_depth
        if not props and not required and not patterns and (extra is True or extra == {}):
            if depth <= 0:
                return NOTHING   # a free-form object is one level deep itself
            if lo == 0 and hi is None and "propertyNames" not in schema:
                return jg.object_of(jg.any_value(depth - 1, self.style), self.style)
        for r in required:
            if r not in props:
                if extra is False and not patterns:
                    raise UnsupportedSchemaError(
                        f"required property {r!r} is not declared in 'properties'",
                        pointer=f"{ptr}/required", fix="declare it, or remove it from 'required'")
                # declared by being required: a pattern's schema or additionalProperties
                props[r] = True if extra is True or any(_search(p, r) for p in patterns) \
                    else extra
        if "propertyNames" in schema:
            pn = schema["propertyNames"]
            import jsonschema
            validator = jsonschema.Draft202012Validator(pn if isinstance(pn, dict) else {} if pn
                                                        else {"not": {}})
            for name in list(props):
                if not validator.is_valid(name):
                    props[name] = False
        # declared names matching a patternProperties regex must satisfy its schema too
        for pat, sub in patterns.items():
            for name in props:
                if _search(pat, name):
                    props[name] = merge(props[name], sub, f"{ptr}/patternProperties/{esc(pat)}")
        # the declared members
        members, req = [], []
        for name, sub in props.items():
            sub_ptr = f"{ptr}/properties/{esc(name)}"
            cut = self._cutoffs
            value = self._property_value(sub, sub_ptr, name, name in required, cut)
            if value is None:
                continue
            if value == NOTHING:
                return NOTHING
            members.append((name, seq(lit(self._render(name)), self.style.key_sep, value)))
            req.append(name in required)
        # the undeclared members: (key expr, value expr) pairs
        extras = self._extras(schema, ptr, list(props), extra, patterns, depth)
        variants = self._dependent_variants(schema, [n for n, _ in members], req, ptr)
        if (not extras and lo == 0 and hi is None and len(variants) == 1
                and self.style.open == EMPTY):
            # the common case: declared members only, each fragment built once
            if not members:
                return self.style.empty("{}")
            return seq(lit("{"), Subseq(tuple(m for _, m in members), tuple(req),
                                        self.style.item_sep), lit("}"))
        out = []
        for vreq, vexcluded in variants:
            items = [(m, r) for (n, m), r in zip(members, vreq) if n not in vexcluded]
            out.append(self._object_graph(items, extras, lo, hi))
        return alt(*out)

    def _property_value(self, sub, sub_ptr: str, name: str, required: bool, cut: int):
        """The value Expr; None for an optional property left out; NOTHING if required and
        no value fits."""
        try:
            value = self._schema(sub, sub_ptr)
        except _NoValue:
            if required or not self.options.lenient:
                raise
            value = NOTHING
        if value != NOTHING:
            return value
        if self._cutoffs > cut:
            return NOTHING if required else None     # beyond the recursion bound
        if required:
            raise UnsupportedSchemaError(f"required property {name!r} admits no value",
                                         pointer=sub_ptr, fix="fix its schema")
        if sub is False:
            return None                                # "x": false -- the key is forbidden
        if not self.options.lenient:
            raise UnsupportedSchemaError(
                f"optional property {name!r} admits no value", pointer=sub_ptr,
                fix="fix its schema, remove the property, or compile with --lenient to leave "
                    "it out")
        self.notices.append({"pointer": sub_ptr, "keyword": "properties",
                             "message": f"optional property {name!r} admits no value and is "
                                        "left out"})
        return None

    def _extras(self, schema, ptr, declared, extra, patterns, depth) -> list[tuple[Expr, Expr]]:
        out = []
        pat_keys = []
        for pat, sub in patterns.items():
            pptr = f"{ptr}/patternProperties/{esc(pat)}"
            key = self._key_expr(schema, declared, ptr)
            if key is None:
                continue
            key = intersect(key, seq(lit('"'), pattern_expr(pat, pptr), lit('"')))
            pat_keys.append(key)
            value = self._schema(sub, pptr)
            if key != NOTHING and value != NOTHING:
                out.append((key, value))
        for i in range(len(pat_keys)):
            for j in range(i + 1, len(pat_keys)):
                if intersect(pat_keys[i], pat_keys[j]) != NOTHING:
                    raise UnsupportedSchemaError(
                        "overlapping 'patternProperties' (a name matching two patterns must "
                        "satisfy both schemas) are not supported",
                        pointer=f"{ptr}/patternProperties",
                        fix="make the patterns disjoint")
        if extra is False:
            return out
        key = self._key_expr(schema, declared, ptr)
        if key is None:
            return out
        for pk in pat_keys:
            key = difference(key, pk)
        value = self._schema(extra, f"{ptr}/additionalProperties")
        if key != NOTHING and value != NOTHING:
            out.append((key, value))
        return out

    def _dependent_variants(self, schema, names, req, ptr):
        """(required flags, excluded names) per case of ``dependentRequired``."""
        deps = schema.get("dependentRequired") or {}
        variants = [(list(req), frozenset())]
        for trigger, needed in deps.items():
            if not needed or trigger not in names:
                continue        # absent trigger: the dependency never applies
            for n in needed:
                if n not in names:
                    needed = None
                    break
            nxt = []
            for vreq, vex in variants:
                if trigger in vex:
                    nxt.append((vreq, vex))           # left out already: nothing to require
                    continue
                ok = needed is not None and not any(n in vex for n in needed)
                if vreq[names.index(trigger)]:       # always present: needed always required
                    if ok:
                        nxt.append(([r or names[i] in needed for i, r in enumerate(vreq)], vex))
                    continue
                nxt.append((vreq, vex | {trigger}))     # the trigger left out
                if ok:
                    nxt.append(([r or names[i] in needed or names[i] == trigger
                                 for i, r in enumerate(vreq)], vex))
            variants = nxt
            if len(variants) > MAX_DEPENDENT_VARIANTS:
                raise UnsupportedSchemaError(
                    f"'dependentRequired' needs more than {MAX_DEPENDENT_VARIANTS} object "
                    "variants", pointer=f"{ptr}/dependentRequired", fix="simplify it")
        return variants

    def _object_graph(self, items, extras, lo: int, hi: int | None) -> Expr:
        """``{`` declared members in order (optional ones may be left out), then undeclared
        members, ``}``; the member count within [lo, hi].

        The count toward ``minProperties`` takes at most one undeclared member, because two
        of them may spell the same key (duplicates cannot be excluded in a regular language),
        so only one is surely distinct. The count toward ``maxProperties`` takes all.
        """
        n = len(items)
        sep = self.style.item_sep
        ids: dict[tuple, int] = {}
        order: list[tuple] = []
        edges = []

        def norm(i, t, m, x):
            return (i, t if hi is not None else min(t, 1), min(m, lo), x if lo else False)

        def node(key):
            if key not in ids:
                ids[key] = len(order)
                order.append(key)
            return ids[key]

        node(norm(0, 0, 0, False))
        k = 0
        while k < len(order):
            i, t, m, x = order[k]
            nxt_t = t + 1
            if hi is None or nxt_t <= hi:
                label_sep = sep if t > 0 else EMPTY
                if i < n:
                    member, _ = items[i]
                    edges.append((k, seq(label_sep, member), node(norm(i + 1, nxt_t, m + 1, x))))
                else:
                    for key, value in extras:
                        dest = node(norm(n, nxt_t, m + (0 if x else 1), True))
                        edges.append((k, seq(label_sep, key, self.style.key_sep, value), dest))
            if i < n and not items[i][1]:
                edges.append((k, EMPTY, node(norm(i + 1, t, m, x))))
            k += 1
        finals = tuple(q for q, (i, t, m, x) in enumerate(order) if i == n and m >= lo and t > 0)
        empty_ok = lo == 0 and all(not r for _, r in items)
        parts = []
        if finals:
            graph = Graph(len(order), 0, finals, tuple(edges))
            parts.append(seq(lit("{"), self.style.open, graph, self.style.close, lit("}")))
        if empty_ok:
            parts.append(self.style.empty("{}"))
        return alt(*parts)

    # -- arrays ---------------------------------------------------------------------------
    def _array(self, schema: dict, ptr: str) -> Expr:
        prefix = schema.get("prefixItems") or []
        items = schema.get("items", True)
        lo = int(schema.get("minItems", 0))
        hi = schema.get("maxItems")
        hi = None if hi is None else int(hi)
        if items is False:
            hi = len(prefix) if hi is None else min(hi, len(prefix))
        if hi is not None and hi < lo:
            return NOTHING
        depth = self.options.max_depth
        free = items is True or items == {}
        if free and depth <= 0 and not prefix:
            return NOTHING   # as for objects: the free-form array counts as one level
        pexprs = [self._schema(p, f"{ptr}/prefixItems/{i}") for i, p in enumerate(prefix)]
        if items is False:
            rest = NOTHING
        elif free:
            rest = jg.any_value(max(depth - 1, 0), self.style)
        else:
            rest = self._schema(items, f"{ptr}/items")
        contains = schema.get("contains")
        cmin = int(schema.get("minContains", 1)) if contains is not None else 0
        cexpr = None
        if contains is not None and cmin > 0:
            cexpr = self._schema(contains, f"{ptr}/contains")
        return self._array_graph(pexprs, rest, lo, hi, cexpr, cmin)

    def _array_graph(self, pexprs, rest, lo, hi, cexpr, cmin) -> Expr:
        """``[`` items ``]``: item j follows prefixItems[j] or else ``items``; the count within
        [lo, hi]; at least ``cmin`` items matching ``cexpr`` (when given)."""
        sep = self.style.item_sep
        p = len(pexprs)
        loop_at = max(p, lo, 1)      # from here on, states repeat (when there is no max)
        ids: dict[tuple, int] = {}
        order: list[tuple] = []
        edges = []
        matching: dict[int, Expr] = {}

        def item(j):
            return pexprs[j] if j < p else rest

        def match(j):
            key = min(j, p)
            if key not in matching:
                matching[key] = intersect(item(j), cexpr)
            return matching[key]

        def node(j, c):
            if hi is None:
                j = min(j, loop_at)
            key = (j, min(c, cmin))
            if key not in ids:
                ids[key] = len(order)
                order.append(key)
            return ids[key]

        node(0, 0)
        k = 0
        while k < len(order):
            j, c = order[k]
            k += 1
            if (hi is not None and j >= hi) or item(j) == NOTHING:
                continue
            label_sep = sep if j > 0 else EMPTY
            src = ids[(j, c)]
            edges.append((src, seq(label_sep, item(j)), node(j + 1, c)))
            if cexpr is not None and c < cmin:
                m = match(j)
                if m != NOTHING:
                    edges.append((src, seq(label_sep, m), node(j + 1, c + 1)))
        finals = tuple(q for q, (j, c) in enumerate(order) if j >= max(lo, 1) and c >= cmin)
        parts = []
        if finals:
            graph = Graph(len(order), 0, finals, tuple(edges))
            parts.append(seq(lit("["), self.style.open, graph, self.style.close, lit("]")))
        if lo == 0 and cmin == 0:
            parts.append(self.style.empty("[]"))
        return alt(*parts)


def _search(pattern: str, name: str) -> bool:
    import jsonschema
    return jsonschema.Draft202012Validator({"pattern": pattern}).is_valid(name)


def _has_type(value, types) -> bool:
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


def _json_equal(a, b) -> bool:
    import jsonschema
    return jsonschema.Draft202012Validator({"const": a}).is_valid(b)
