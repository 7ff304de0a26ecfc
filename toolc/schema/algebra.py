"""Exact boolean combinations of schemas: ``oneOf``, ``not``, ``if``/``then``/``else`` and
``dependentSchemas``. A mixin of :class:`~toolc.schema.compile.SchemaCompiler`.

Two tools, each exact where it is used:

* **Rewriting** at the schema level, for objects: ``if``/``then``/``else`` is ``anyOf`` of
  (rest ∧ if ∧ then) and (rest ∧ not if ∧ else); a dependent schema on ``k`` is ``anyOf`` of
  (``k`` absent) and (``k`` present ∧ its schema); the objects that fail
  ``{"properties": P, "required": R}`` are those missing one ``r`` of ``R`` or holding one
  ``p`` of ``P`` whose value fails ``P[p]`` (and, for a closed one, those holding another key:
  :mod:`toolc.schema.negation`). The parts are merged into the schema beside them, so the
  object keeps one key order and its closed reading.
* **Automata** for everything else: ``oneOf`` subtracts from each branch the branches that may
  share a value with it, and ``not`` subtracts its schema from the values beside it (product
  constructions of :mod:`toolc.schema.automata`). Text-level difference is value-level
  difference only when the subtracted language holds *every* spelling of its values, so both
  sides are first narrowed to :data:`CANON`, one spelling per value (strings as ``json.dumps``
  writes them, numbers without exponent, ``-0`` or trailing fraction zeros), and the
  subtracted schema must be :func:`complete`: every canonical spelling of every value it
  admits is in its language (scalars, enums of scalars, arrays of such; not free-form values,
  which stop at the depth bound, nor objects, whose keys come in one order, nor strings with
  a ``format``, whose regex may be narrower than the format's validators).

Branches that provably share no value (:func:`disjoint`: different types, disjoint ``const``
or ``enum`` values, a required discriminator property with disjoint values, a required key the
other closed object cannot hold) need no subtraction at all; that is the common case
(pydantic's unions). What neither tool can do exactly is refused with its pointer (lenient
mode reads ``oneOf`` as ``anyOf`` there and records it).
"""

from __future__ import annotations

import json

from ..errors import UnsupportedSchemaError
from ..fsm import NOTHING, Expr, alt
from .automata import difference, intersect
from .canon import CANON, canon_value
from .negarrays import NegatedArrays
from .negation import NegatedObjects
from .keywords import (ANNOTATIONS, ARRAY_KEYS, NUMBER_KEYS, OBJECT_KEYS, STRING_KEYS, NoValue,
                       validator)
from .refs import TYPES, MergeConflict, esc, map_type_names, meet, merge, resolve
from .shared_order import reordered, shared_order, why_not_subtractable

# -- what a schema admits, at the value level ------------------------------------------------
_KIND_KEYS = {"object": OBJECT_KEYS, "array": ARRAY_KEYS, "string": STRING_KEYS,
              "number": NUMBER_KEYS}


def type_set(schema) -> set[str]:
    """The JSON types a schema may admit (``integer`` stands for integral numbers)."""
    if schema is False:
        return set()
    if not isinstance(schema, dict):
        return set(TYPES)
    out = set(TYPES)
    t = schema.get("type")
    if t is not None:
        out = {t} if isinstance(t, str) else set(t)
        if "number" in out:
            out.add("integer")
    for key in ("const", "enum"):
        if key in schema:
            values = [schema[key]] if key == "const" else schema[key]
            out &= {_type_of(v) for v in values} | {"number" for v in values
                                                    if _type_of(v) == "integer"}
    return out


MAX_NEGATED_VARIANTS = 16


def _admits_all(schema, kind: str) -> bool:
    """Whether a schema restricted to one kind admits every value of it."""
    return isinstance(schema, dict) and schema.get("type") == kind and not [
        k for k in schema if k not in ANNOTATIONS and k != "type"]


def kinds(types: set[str]) -> set[str]:
    """JSON types with ``integer`` folded into ``number``."""
    return {"number" if t == "integer" else t for t in types}


def _type_of(v) -> str:
    if isinstance(v, bool):
        return "boolean"
    if v is None:
        return "null"
    if isinstance(v, (int, float)):
        return "integer" if float(v).is_integer() else "number"
    return {str: "string", list: "array", dict: "object"}.get(type(v), "object")


class AlgebraSchemas(NegatedObjects, NegatedArrays):
    """``oneOf``, ``not``, ``if``/``then``/``else`` and ``dependentSchemas`` (reached from
    ``_resolved`` of :class:`~toolc.schema.compile.SchemaCompiler`)."""

    # -- value-level facts ----------------------------------------------------------------
    def _deref(self, schema, ptr: str, seen=()):
        """The schema with its $ref (and nothing else) followed, or None when recursive."""
        while isinstance(schema, dict) and "$ref" in schema:
            if any(k not in ANNOTATIONS for k in schema if k != "$ref") or schema["$ref"] in seen:
                return None
            seen = seen + (schema["$ref"],)
            schema, ptr = resolve(self.root, schema["$ref"], ptr)
        return map_type_names(self._uneval_clean(schema, ptr), ptr) if isinstance(schema, dict) \
            else schema

    def complete(self, schema, ptr: str = "", seen=()) -> bool:
        """Whether this schema's language holds every canonical spelling of every value it
        admits (so subtracting it removes exactly its values)."""
        s = self._deref(schema, ptr, seen)
        if s is None or s is True:
            return False        # recursive, or free-form: cut at the depth bound
        if s is False:
            return True
        if not isinstance(s, dict):
            return False
        keys = {k for k in s if k not in ANNOTATIONS}
        if '"format"' in json.dumps(s) or '"contentSchema"' in json.dumps(s):
            return False        # a format's regex may be narrower than its validators;
            # a JSON content is written in one whitespace style
        if not type_set(s) & {"object", "array"} and '"$ref"' not in json.dumps(s):
            return True     # scalars: every part of their language is complete
        if "enum" in keys or "const" in keys:
            values = [s["const"]] if "const" in s else list(s["enum"])
            return all(canon_value(v, self.style) is not None for v in values)
        if keys & {"dependentSchemas", "$ref"}:
            return False
        for key in ("not", "oneOf", "anyOf", "allOf", "if"):
            if key in keys:     # the parts that build the language must be complete
                return self._complete_parts(s, key, keys, ptr, seen)
        types = type_set(s)
        if "object" in types:
            return False
        if "array" in types:
            if "contains" in s:
                return False
            subs = list(s.get("prefixItems", []))
            hi = s.get("maxItems")
            if hi is not None and int(hi) <= len(subs):
                subs = subs[:int(hi)]
            elif s.get("items", True) is not False:
                subs.append(s.get("items", True))
            return all(self.complete(x, ptr, seen) for x in subs)
        return True

    def _complete_parts(self, s: dict, key: str, keys: set, ptr: str, seen) -> bool:
        rest = {k: s[k] for k in keys if k not in (key, "then", "else")}
        try:
            if key == "not":
                return self.complete(rest or True, ptr, seen)
            subs = [self._deref(b, ptr, seen) for b in
                    (s[key] if key != "if" else [s["if"], s.get("else", True)])]
            if any(b is None for b in subs):
                return False
            if key == "allOf":     # merged, or else a product: complete if every part is
                try:
                    merged = rest
                    for b in subs:
                        merged = merge(merged, b, ptr)
                except MergeConflict:
                    return all(self.complete(b, ptr, seen) for b in [rest or True] + subs)
                return self.complete(merged, ptr, seen)
            if key == "if":
                subs[0] = merge(subs[0], self._deref(s.get("then", True), ptr, seen) or {}, ptr)
            return all(self.complete(merge(rest, b, ptr), ptr, seen) for b in subs)
        except UnsupportedSchemaError:
            return False

    def disjoint(self, a, b, ptr: str = "", open_b: bool = False) -> bool:
        """Whether no value satisfies both schemas (a proof, so False means "maybe not");
        ``open_b``: ``b`` is read as JSON Schema reads it (a ``not``), not closed mode's
        closed reading."""
        a, b = self._deref(a, ptr), self._deref(b, ptr)
        if a is None or b is None:
            return False
        if a is False or b is False:
            return True
        if a is True or b is True:
            return False
        for x, y in ((a, b), (b, a)):
            if "const" in x or "enum" in x:
                values = [x["const"]] if "const" in x else x["enum"]
                if self._none_valid(values, y):
                    return True
        shared = type_set(a) & type_set(b)
        if not shared:
            return True
        return shared <= {"object"} and self._objects_disjoint(a, b, ptr, open_b)

    def _none_valid(self, values, schema) -> bool:
        import jsonschema
        root = self.root if isinstance(self.root, dict) else {}
        full = dict(schema, **{k: root[k] for k in ("$defs", "definitions") if k in root})
        try:
            return not any(map(validator(full).is_valid, values))
        except (jsonschema.exceptions.SchemaError, jsonschema.exceptions.RefResolutionError,
                jsonschema.exceptions._WrappedReferencingError):
            return False

    def _objects_disjoint(self, a: dict, b: dict, ptr: str, open_b: bool = False) -> bool:
        pa, pb = a.get("properties") or {}, b.get("properties") or {}
        ra, rb = set(a.get("required", [])), set(b.get("required", []))
        for name in ra & rb:        # a discriminator both require, with disjoint values
            if self.disjoint(pa.get(name, True), pb.get(name, True), ptr, open_b):
                return True
        for x, px, y, py, rx in ((a, pa, b, pb, ra), (b, pb, a, pa, rb)):
            closed = y.get("additionalProperties",
                           not (self.closed_objects and py and not (open_b and y is b))) is False
            # (a combinator inside y may declare more keys once merged: no proof then)
            if closed and not y.get("patternProperties") and not any(
                    k in y for k in ("anyOf", "oneOf", "allOf", "if", "dependentSchemas")):
                if any(name not in py and name not in y.get("required", []) for name in rx):
                    return True     # x requires a key the closed y cannot hold
            if any(py.get(name, True) is False for name in rx):
                return True
        return False

    # -- oneOf --------------------------------------------------------------------------
    def _one_of(self, schema: dict, ptr: str) -> Expr:
        rest = {k: v for k, v in schema.items() if k != "oneOf" and k not in ANNOTATIONS}
        branches = [self._flat(b, f"{ptr}/oneOf/{i}") for i, b in enumerate(schema["oneOf"])]
        if rest:
            branches = [meet(rest, b, f"{ptr}/oneOf/{i}") for i, b in enumerate(branches)]
        pieces = [[b] if all(j == i or self.disjoint(b, c, ptr) for j, c in enumerate(branches))
                  else self._pieces(b, f"{ptr}/oneOf/{i}") for i, b in enumerate(branches)]
        order = shared_order([p for ps in pieces for p in ps])
        return alt(*(self._exclusive(p, i, branches, order, ptr)
                     for i, ps in enumerate(pieces) for p in ps))

    def _exclusive(self, b, i: int, branches: list, order: list, ptr: str) -> Expr:
        """The values of ``b`` (branch ``i``, or one piece of it) that no other branch
        admits."""
        bptr = f"{ptr}/oneOf/{i}"
        others, whole, negs, shared, loose = [], set(), {}, False, False
        for j, c in enumerate(branches):
            if j == i or self.disjoint(b, c, ptr):
                continue
            try:
                sub, gone, neg, ordered, open_neg = self._overlap(b, c, f"{ptr}/oneOf/{j}",
                                                                  order)
                loose = loose or open_neg
                if loose and (shared or ordered):
                    raise UnsupportedSchemaError(
                        "'oneOf' object branches that are both open and closed cannot be "
                        "kept exclusive exactly", pointer=f"{ptr}/oneOf/{j}",
                        fix="close every object branch, or add a discriminator")
            except UnsupportedSchemaError:
                if self._lenient_drop(ptr, "oneOf", f"branches {i} and {j} may share a "
                                      "value; read as anyOf"):
                    others, whole, negs, shared = [], set(), {}, False
                    break
                raise
            others += sub
            whole |= gone
            for kind, alternatives in neg.items():
                negs.setdefault(kind, []).append(alternatives)
            shared = shared or ordered
        if shared:
            b = reordered(b, order)
        for kind in sorted(negs):
            if kind not in whole:
                b = self._without_values_of(b, kind, negs[kind], bptr)
        if whole:
            left = [t for t in TYPES if t not in whole and not (t == "integer" and
                                                                 "number" in whole)]
            b = merge(b, {"type": left}, bptr) if left else False
        expr = self._or_nothing(b, bptr)
        if expr != NOTHING and others:
            expr = difference(intersect(expr, CANON), alt(*others))
        return expr

    def _without_values_of(self, b, kind: str, negs: list, ptr: str):
        """``b`` whose values of ``kind`` (objects or arrays) also fail every schema whose
        negations ``negs`` lists (each entry: schemas of that kind whose union is the values
        failing one branch), merged into ``b`` so that it keeps its layout (one key order)."""
        combos: list = [{}]
        for alternatives in negs:
            combos = [(merge if kind == "object" else meet)(x, n, ptr) for x in combos
                      for n in alternatives]
            if len(combos) > MAX_NEGATED_VARIANTS:
                raise UnsupportedSchemaError(
                    f"'oneOf' needs more than {MAX_NEGATED_VARIANTS} {kind} variants to keep "
                    "its branches exclusive", pointer=ptr, fix="simplify the branches")
        mine = merge(b, {"type": kind}, ptr)
        rest = merge(b, {"type": [t for t in TYPES if t != kind]}, ptr)
        if kind == "object":
            mine = self._closed_here(mine)
            return {"anyOf": [self._merge_absent(mine, n, ptr) for n in combos] + [rest]}
        return {"anyOf": [meet(mine, n, ptr) for n in combos] + [rest]}

    def _overlap(self, b, c, cptr: str, order: list) -> tuple[list, set, dict, bool, bool]:
        """Automata that, subtracted from ``b``'s, remove every value ``c`` admits too; the
        kinds ``c`` admits entirely (``b`` keeps none of them); for objects and arrays (by
        kind), the schemas whose union is the values of that kind ``c`` rejects
        (:mod:`toolc.schema.negation`, :mod:`toolc.schema.negarrays`);
        whether ``b`` must write its keys in the shared ``order``
        (:mod:`toolc.schema.shared_order`); and whether a negation was made for an open
        ``b`` (it may declare keys ``b`` wrote as extra ones: no shared order then)."""
        out, whole, negs, ordered, open_neg = [], set(), {}, False, False
        for kind in sorted(kinds(type_set(b)) & kinds(type_set(c))):
            cb, cc = self._restricted(b, kind), self._restricted(c, kind)
            if cb is False or cc is False or self.disjoint(cb, cc):
                continue
            if _admits_all(cc, kind):
                whole.add(kind)
                continue
            if kind == "object":
                why = why_not_subtractable(cc, self.closed_objects,
                                           lambda x: self.complete(x, cptr)) or \
                    why_not_subtractable(cb, self.closed_objects, lambda x: True)
                if why is None:     # a plain closed c: subtracted over the shared order
                    out.append(self._or_nothing(reordered(cc, order), cptr))
                    ordered = True
                    continue
                universe = self._object_universe(cb)
                try:    # the objects c rejects, merged into b (nested objects too)
                    negs["object"] = self._negated_object(cc, cptr, universe, reading=True,
                                                             base=cb)
                    open_neg = open_neg or universe is None
                    continue
                except UnsupportedSchemaError as e:
                    why = f"{why}; and {e.message}"
                raise UnsupportedSchemaError(
                    f"'oneOf' branches may both match one object, and they cannot be kept "
                    f"exclusive: {why}", pointer=cptr,
                    fix="close both object branches over plain properties, make them "
                        "exclusive (a 'const' discriminator property both require), or use "
                        "'anyOf'")
            if kind == "array" and not self.complete(cc, cptr):
                # the arrays c rejects, merged into b's items (objects, free-form values)
                negs["array"] = self._negated_array(cc, cptr, cb, reading=True)
                continue
            if not self.complete(cc, cptr):
                raise UnsupportedSchemaError(
                    f"'oneOf' branches may both match one {kind} value, and this branch cannot "
                    f"be subtracted exactly (it holds objects, free-form or recursive values, "
                    f"or a 'format' or 'contentSchema' that toolc narrows)",
                    pointer=cptr, fix="make the branches exclusive (a 'const' discriminator "
                                      "property both require), or use 'anyOf'")
            out.append(self._or_nothing(cc, cptr))
        return out, whole, negs, ordered, open_neg

    def _or_nothing(self, schema, ptr: str) -> Expr:
        """The schema's expression; NOTHING where an enum keeps no value (inside a
        combination, an empty part is no error)."""
        with self._rewriting(ptr):
            try:
                return self._schema(schema, ptr)
            except NoValue:
                return NOTHING

    def _lenient_drop(self, ptr: str, key: str, why: str) -> bool:
        if not self.options.lenient:
            return False
        self.dropped.append({"pointer": f"{ptr}/{key}", "keyword": key, "why": why})
        return True

    # -- not ----------------------------------------------------------------------------
    def _not(self, schema: dict, ptr: str) -> Expr:
        """The values of the rest of the schema that fail ``not``, kind by kind: objects by
        rewriting, every other kind by subtracting the negated schema's automaton."""
        rest = {k: v for k, v in schema.items() if k != "not"}
        if "anyOf" in rest:     # A and not N, A = anyOf(B): anyOf(B and not N), each B as
            return self._any_of(schema, ptr)    # it reads alone (closed where it is)
        nptr = f"{ptr}/not"
        neg = self._flat(schema["not"], nptr)
        if neg is True or neg == {}:
            return NOTHING
        if isinstance(neg, dict) and [k for k in neg if k not in ANNOTATIONS] == ["not"]:
            inner = self._open_copy(self._flat(neg["not"], f"{nptr}/not"))  # read as not does
            return self._schema(merge(self._closed_copy(rest, True), inner, nptr), ptr)
        if neg is False or self.disjoint(rest or True, neg, ptr, open_b=True):
            return self._schema(rest or True, ptr)
        have = type_set(rest)
        parts = []
        for kind in ("null", "boolean", "string", "number", "array", "object"):
            if kind not in have and not (kind == "number" and "integer" in have):
                continue
            t = "integer" if kind == "number" and "number" not in have else kind
            base = merge(rest, {"type": t}, ptr)
            only = self._restricted(neg, kind)
            if only is not False and _admits_all(only, kind):
                continue
            if only is False:
                parts.append(self._or_nothing(base, ptr))
            elif kind == "object" and self._name_sets(only) is not None:
                parts.append(self._names_outside(base, self._name_sets(only), ptr))
            elif kind == "object":
                negs = self._negated_object(only, nptr, self._object_universe(base),
                                            base=base)
                base = self._closed_here(base)
                parts.append(self._or_nothing(
                    {"anyOf": [self._merge_absent(base, n, nptr) for n in negs]}, ptr))
            elif kind == "array" and not self.complete(only, nptr):
                negs = self._negated_array(only, nptr, base)
                parts.append(self._or_nothing({"anyOf": [meet(base, n, nptr) for n in negs]},
                                              ptr))
            elif not self.complete(only, nptr):
                raise UnsupportedSchemaError(
                    f"'not' cannot be enforced exactly on {kind} values: its schema holds "
                    "objects, free-form or recursive values, or a 'format' or 'contentSchema' "
                    "that toolc narrows", pointer=nptr,
                    fix="narrow the negated schema to scalars, or drop 'not'")
            else:
                expr = self._or_nothing(base, ptr)
                if expr != NOTHING:
                    expr = difference(intersect(expr, CANON), self._or_nothing(only, nptr))
                parts.append(expr)
        return alt(*parts)

    def _restricted(self, neg, kind: str):
        """``neg`` seen only on values of one JSON type ``kind`` (False: none of them pass)."""
        if neg is True:
            return {"type": kind}
        if neg is False:
            return False
        if kind not in type_set(neg) and not (kind == "number" and "integer" in type_set(neg)):
            return False
        out = {k: v for k, v in neg.items() if k not in ANNOTATIONS}
        other = [k for t, keys in _KIND_KEYS.items() if t != kind for k in keys]
        for k in other:
            out.pop(k, None)
        ts = type_set(neg) & ({"integer", "number"} if kind == "number" else {kind})
        out["type"] = "number" if "number" in ts else sorted(ts)[0]
        for key in ("enum", "const"):
            if key in out:
                values = [out[key]] if key == "const" else out[key]
                kept = [v for v in values if _type_of(v) == kind
                        or kind == "number" and _type_of(v) == "integer"]
                out.pop("const", None)
                out["enum"] = kept
        if out.get("enum", True) == []:
            return False
        return self._simplified(out, kind)

    def _simplified(self, out: dict, kind: str):
        """Combinators of a schema restricted to ``kind``, with each branch restricted too:
        a branch that admits no value of ``kind`` or all of them is settled here."""
        def sub(x):
            return self._restricted(self._deref(x, "") if isinstance(x, dict) and "$ref" in x
                                    and self._deref(x, "") is not None else x, kind)
        if "anyOf" in out:
            bs = [sub(b) for b in out["anyOf"]]
            if any(b is not False and _admits_all(b, kind) for b in bs):
                del out["anyOf"]
            else:
                bs = [b for b in bs if b is not False]
                if not bs:
                    return False
                out["anyOf"] = bs
        if "allOf" in out:
            bs = [sub(b) for b in out["allOf"]]
            if any(b is False for b in bs):
                return False
            bs = [b for b in bs if not _admits_all(b, kind)]
            out.pop("allOf")
            if bs:
                out["allOf"] = bs
        if "not" in out:
            n = sub(out["not"])
            if n is not False and _admits_all(n, kind):
                return False
            out.pop("not")
            if n is not False:
                out["not"] = n
        if "oneOf" in out:
            bs = [b for b in (sub(b) for b in out["oneOf"]) if b is not False]
            if not bs:
                return False
            out["oneOf"] = bs
        return out

    # -- if / then / else, dependentSchemas -----------------------------------------------
    def _conditional(self, schema: dict, ptr: str) -> Expr:
        rest = {k: v for k, v in schema.items() if k not in ("if", "then", "else")}
        if "if" not in schema:
            return self._schema(rest, ptr)
        cond = self._flat(schema["if"], f"{ptr}/if")
        then = self._flat(schema.get("then", True), f"{ptr}/then")
        other = self._flat(schema.get("else", True), f"{ptr}/else")
        yes = meet(meet(rest, cond, f"{ptr}/if"), then, f"{ptr}/then")
        neg = rest.get("not")
        no_base = dict(rest, **{"not": cond if neg is None else {"anyOf": [neg, cond]}})
        no = meet(no_base, other, f"{ptr}/else")
        return alt(self._or_nothing(yes, f"{ptr}/then"), self._or_nothing(no, f"{ptr}/else"))

    def _dependent_schemas(self, schema: dict, ptr: str) -> Expr:
        deps = dict(schema["dependentSchemas"])
        rest = {k: v for k, v in schema.items() if k != "dependentSchemas"}
        name, sub = next(iter(deps.items()))
        del deps[name]
        if deps:
            rest["dependentSchemas"] = deps
        dptr = f"{ptr}/dependentSchemas/{esc(name)}"
        absent = self._merge_absent(rest, {"properties": {name: False}}, dptr)
        present = meet(merge(rest, {"required": [name]}, dptr), self._flat(sub, dptr), dptr)
        return alt(self._or_nothing(absent, ptr), self._or_nothing(present, dptr))
