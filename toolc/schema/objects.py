"""Objects: properties in schema order, required and optional keys, extra keys
(``additionalProperties``, ``patternProperties``, ``propertyNames``), counted properties and
``dependentRequired``. A mixin of :class:`~toolc.schema.compile.SchemaCompiler`."""

from __future__ import annotations

from ..errors import UnsupportedSchemaError
from ..options import spelled
from ..fsm import EMPTY, NOTHING, Counted, Expr, Graph, Subseq, alt, lit, seq, star
from . import json_grammar as jg
from .arrays import countable
from .automata import difference, intersect
from .canon import every_spelling
from .keywords import (ANNOTATIONS, EXTRA_UNLESS, MAX_DEPENDENT_VARIANTS, STRING_KEYS, NoValue,
                       pattern_search, validator)
from .refs import esc, map_type_names, meet
from .strings import ANY_CHAR, pattern_expr, string_body


def _unless(sub, matched: set, unless, ptr: str):
    """``sub`` met with each ``EXTRA_UNLESS`` schema whose patterns a name of the region
    (matching the patterns ``matched``) misses: that side's ``additionalProperties``."""
    for pats, extra in unless or ():
        if not matched & set(pats):
            sub = meet(sub, extra, f"{ptr}/additionalProperties")
    return sub


MAX_ANY_ORDER = 6      # --property-order any: 2**6 sets of keys written
MAX_OVERLAPPING_PATTERNS = 4    # overlapping patternProperties: 2**4 - 1 regions at most


class ObjectSchemas:
    """How the schema compiler writes an object (``_object``, reached from ``_typed``)."""

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
                if {"anyOf", "not", "allOf"} & set(pn):   # (a negation's, a merge's names)
                    key = self._names_expr(pn, f"{ptr}/propertyNames")
                    if declared:
                        key = difference(key, alt(*(every_spelling(n) for n in declared)))
                    return None if key == NOTHING else key
                if "enum" in pn or "const" in pn:
                    try:
                        key = self._schema(dict(pn, type="string"), f"{ptr}/propertyNames")
                    except NoValue:
                        return None     # no name passes: the object has no undeclared member
                    if [k for k in pn if k not in ANNOTATIONS] in (["enum"], ["const"]):
                        # every spelling of each name: "\u0061" is the key "a" too
                        values = [pn["const"]] if "const" in pn else pn["enum"]
                        key = alt(*(every_spelling(v) for v in values if isinstance(v, str)))
                    names = alt(*(every_spelling(n) for n in declared))
                    out = difference(key, names) if declared else key
                    return None if out == NOTHING else out
                bad = [k for k in pn if k not in ANNOTATIONS and k not in STRING_KEYS
                       and k != "type"]
                if bad:
                    raise UnsupportedSchemaError(
                        f"'propertyNames' with {bad[0]!r} is not supported: only string "
                        "keywords apply to names", pointer=f"{ptr}/propertyNames/{esc(bad[0])}")
                if pn.get("type", "string") != "string":
                    return None
                body = intersect(body, string_body(pn, f"{ptr}/propertyNames", counted=False,
                                                   leap=self.options.leap_seconds))
        key = seq(lit('"'), body, lit('"'))
        if declared:        # (keys in json.dumps form: one spelling each)
            key = difference(key, alt(*(lit(jg.render(n)) for n in declared)))
        return None if key == NOTHING else key

    def _names_expr(self, pn, ptr: str) -> Expr:
        """The keys (quoted) that a ``propertyNames`` built of ``enum``/``const``, string
        keywords, ``anyOf`` and ``not`` admits: an enum in every spelling of its names, the
        rest in json.dumps form (a ``not`` is the complement within that form; the object
        beside it is written in that form too, see ``_names_outside`` of negation.py)."""
        anykey = seq(lit('"'), star(ANY_CHAR), lit('"'))
        if pn is True or pn == {}:
            return anykey
        if pn is False or pn.get("type", "string") not in ("string", ["string"]):
            return NOTHING
        keys = [k for k in pn if k not in ANNOTATIONS and k != "type"]
        if keys == ["anyOf"]:
            return alt(*(self._names_expr(p, f"{ptr}/anyOf/{i}")
                         for i, p in enumerate(pn["anyOf"])))
        if keys == ["not"]:
            return difference(anykey, self._names_expr(pn["not"], f"{ptr}/not"))
        parts = [k for k in keys if k in ("anyOf", "not", "allOf", "enum", "const")]
        if parts and (len(keys) > 1 or parts == ["allOf"]):    # the names every part admits
            rest = {k: v for k, v in pn.items() if k not in parts}
            subs = [p for k in parts for p in (pn[k] if k == "allOf" else [{k: pn[k]}])]
            return intersect(self._names_expr(rest, ptr), *(self._names_expr(
                p, f"{ptr}/allOf" if "allOf" in parts else ptr) for p in subs))
        if keys in (["enum"], ["const"]):
            values = [pn["const"]] if "const" in pn else pn["enum"]
            return alt(*(every_spelling(v) for v in values if isinstance(v, str)))
        bad = [k for k in keys if k not in STRING_KEYS]
        if bad:
            raise UnsupportedSchemaError(
                f"'propertyNames' with {bad[0]!r} is not supported: only string keywords, "
                "'enum', 'anyOf' and 'not' apply to names", pointer=f"{ptr}/{esc(bad[0])}")
        body = string_body(pn, ptr, counted=False, leap=self.options.leap_seconds)
        return seq(lit('"'), intersect(star(ANY_CHAR), body), lit('"'))

    def _object(self, schema: dict, ptr: str) -> Expr:
        props = dict(schema.get("properties") or {})
        required = list(schema.get("required", []))
        # closed mode closes an object that declares a property; schema mode never does
        default_extra = not (self.closed_objects and props)
        extra = schema.get("additionalProperties", default_extra)
        patterns = schema.get("patternProperties") or {}
        lo = int(schema.get("minProperties", 0))
        hi = schema.get("maxProperties")
        hi = None if hi is None else int(hi)
        depth = self.options.max_depth
        if not props and not required and not patterns and (extra is True or extra == {}) \
                and not schema.get("dependentRequired"):
            if depth <= 0:
                return NOTHING   # a free-form object is one level deep itself
            if lo == 0 and hi is None and "propertyNames" not in schema:
                return jg.object_of(jg.any_value(depth - 1, self.style), self.style)
        for r in required:
            if r not in props:
                if extra is False and not patterns:
                    if "additionalProperties" not in schema:
                        props[r] = True     # closed by default only: required, any value
                        continue
                    raise NoValue(      # (inside a combination: a part that admits nothing)
                        f"required property {r!r} is not declared in 'properties' and "
                        "'additionalProperties' is false: no object satisfies this schema",
                        pointer=f"{ptr}/required", fix="declare it, or remove it from 'required'")
                # declared by being required: a pattern's schema or additionalProperties
                props[r] = True if extra is True or any(pattern_search(p, r) for p in patterns) \
                    else extra
        # an undeclared key that a dependency names is declared too: its dependency is kept
        for trigger, needed in (schema.get("dependentRequired") or {}).items():
            for r in (trigger, *needed):
                if r not in props and not (extra is False and not patterns):
                    props[r] = True if extra is True or any(pattern_search(p, r)
                                                            for p in patterns) else extra
        if "propertyNames" in schema:
            pn = schema["propertyNames"]
            check = validator(pn if isinstance(pn, dict) else {} if pn else {"not": {}})
            for name in list(props):
                if not check.is_valid(name):
                    props[name] = False
        # declared names matching a patternProperties regex must satisfy its schema too
        for pat, sub in patterns.items():
            for name in props:
                if pattern_search(pat, name):
                    props[name] = meet(props[name], sub, f"{ptr}/patternProperties/{esc(pat)}")
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
        if extras and lo > len(members) + 1 and (hi is None or lo <= hi):
            raise UnsupportedSchemaError(
                f"'minProperties' {lo} cannot be enforced on this object: it needs "
                f"{lo - len(members)} undeclared members, and at most one of them can count "
                "(two undeclared members may spell the same key, which no automaton or "
                "counter can exclude)", pointer=f"{ptr}/minProperties",
                fix="declare the properties the object must hold in 'properties' and "
                    f"'required', or lower 'minProperties' to {len(members) + 1}")
        variants = self._dependent_variants(schema, [n for n, _ in members], req, ptr)
        if self.options.property_order == "any" and len(members) > 1:
            return self._any_order(members, req, extras, lo, hi, schema, ptr)
        if (not extras and lo == 0 and hi is None and len(variants) == 1
                and not variants[0][1] and self.style.open == EMPTY):
            # the common case: declared members only, each fragment built once (a dependency
            # of a required key makes its dependents required: the one variant's flags)
            if not members:
                return self.style.empty("{}")
            return seq(lit("{"), Subseq(tuple(m for _, m in members), tuple(variants[0][0]),
                                        self.style.item_sep), lit("}"))
        out = []
        for vreq, vexcluded in variants:
            items = [(m, r) for (n, m), r in zip(members, vreq) if n not in vexcluded]
            out.append(self._object_graph(items, extras, lo, hi))
        return alt(*out)

    def _any_order(self, members, req, extras, lo, hi, schema, ptr) -> Expr:
        """``--property-order any``: the declared keys in every order, then the extra keys;
        the states are the sets of declared keys written so far (2**n of them, so n is at most
        MAX_ANY_ORDER), then, among the extra keys, the count that ``minProperties`` and
        ``maxProperties`` need (as in :meth:`_object_graph`: one extra key at most counts
        toward the minimum, since two may spell the same key). ``dependentRequired`` is a
        condition on the set written when the declared keys end. ``maxProperties`` beside
        extra keys is a counted region of kind "props", as in :meth:`_object_graph`."""
        n = len(members)
        if n > MAX_ANY_ORDER:
            raise UnsupportedSchemaError(
                f"{spelled('property_order', 'any')} cannot be enforced on this object: it "
                f"declares {n} properties (at most {MAX_ANY_ORDER})", pointer=ptr,
                fix=f"use {spelled('property_order', 'schema')} (keys in schema order), or "
                    "split the object")
        counted = None
        if hi is not None and extras and \
                countable(*(m for _, m in members), *(x for kv in extras for x in kv)):
            counted, hi = hi, None      # the member count a counter (kind "props"), not states
        names = [name for name, _ in members]
        must = sum(1 << i for i in range(n) if req[i])
        deps = []
        for trigger, needed in (schema.get("dependentRequired") or {}).items():
            if trigger in names:
                need = 0 if all(x in names for x in needed) else None
                for x in needed if need is not None else ():
                    need |= 1 << names.index(x)
                deps.append((1 << names.index(trigger), need))

        def done(q: int) -> bool:       # the declared keys may end here
            return q & must == must and all(
                not q & bit or need is not None and q & need == need for bit, need in deps)

        sep = self.style.item_sep
        size = 1 << n
        ids: dict[tuple, int] = {}
        edges = []

        def extra_node(t: int, m: int) -> int:
            key = (t if hi is not None else 1, min(m, lo))
            if key not in ids:
                ids[key] = size + len(ids)
                todo.append(key)
            return ids[key]

        todo: list = []
        for q in range(size):
            count = bin(q).count("1")
            if hi is not None and count > hi:
                continue
            for i in range(n):
                if not q & (1 << i) and (hi is None or count < hi):
                    edges.append((q, seq(sep if q else EMPTY, members[i][1]), q | (1 << i)))
            if extras and done(q) and (hi is None or count < hi):
                dest = extra_node(count + 1, count + 1)
                for key, value in extras:
                    edges.append((q, seq(sep if q else EMPTY, key, self.style.key_sep, value),
                                  dest))
        while todo:
            t, m = todo.pop()
            if hi is None or t < hi:
                dest = extra_node(t + 1, m)
                for key, value in extras:
                    edges.append((ids[(t, m)], seq(sep, key, self.style.key_sep, value), dest))
        finals = tuple(q for q in range(1, size) if done(q) and lo <= bin(q).count("1")
                       and (hi is None or bin(q).count("1") <= hi)) + \
            tuple(i for (t, m), i in ids.items() if m >= lo)
        out = []
        if finals:
            graph = Graph(size + len(ids), 0, finals, tuple(edges))
            inside = seq(self.style.open, graph, self.style.close)
            if counted is not None:
                inside = Counted(inside, 0, counted, "props")
            out.append(seq(lit("{"), inside, lit("}")))
        if not must and lo == 0:
            out.append(self.style.empty("{}"))
        return alt(*out)

    def _property_value(self, sub, sub_ptr: str, name: str, required: bool, cut: int):
        """The value Expr; None for an optional property left out; NOTHING if required and
        no value fits."""
        try:
            value = self._schema(sub, sub_ptr)
        except NoValue:
            if required or not self.options.lenient:
                raise
            value = NOTHING
        if value != NOTHING:
            return value
        if self._cutoffs > cut:
            return NOTHING if required else None     # beyond the recursion bound
        if required:
            raise NoValue(f"required property {name!r} admits no value", pointer=sub_ptr,
                          fix="fix its schema")
        if sub is False:
            return None                                # "x": false -- the key is forbidden
        # JSON Schema reads a property no value satisfies as a forbidden key ("foo": {"not":
        # {}}), so leaving the key out is exact; a notice says so, since it is often a slip
        self.notices.append({"pointer": sub_ptr, "keyword": "properties",
                             "message": f"optional property {name!r} admits no value and is "
                                        "left out (the key is forbidden)"})
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
            pat_keys.append((key, sub, pptr, pat))
        if any(intersect(pat_keys[i][0], pat_keys[j][0]) != NOTHING
               for i in range(len(pat_keys)) for j in range(i + 1, len(pat_keys))):
            regions = self._pattern_regions(pat_keys, ptr, schema.get(EXTRA_UNLESS))
        else:
            regions = [(key, self._schema(_unless(sub, {pat}, schema.get(EXTRA_UNLESS), pptr),
                                          pptr)) for key, sub, pptr, pat in pat_keys]
        out = [(key, value) for key, value in regions if key != NOTHING and value != NOTHING]
        pat_keys = [key for key, _, _, _ in pat_keys]
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

    def _pattern_regions(self, pat_keys: list, ptr: str, unless=None) -> list[tuple[Expr, Expr]]:
        """Overlapping ``patternProperties``: the names split into the regions of the
        patterns they match (each set of patterns, less the others), a name's value meeting
        every schema of its set (``allOf``, exact as :mod:`toolc.schema.allof` builds it),
        and each ``unless`` schema whose patterns the set misses (see ``EXTRA_UNLESS``)."""
        n = len(pat_keys)
        if n > MAX_OVERLAPPING_PATTERNS:
            raise UnsupportedSchemaError(
                f"more than {MAX_OVERLAPPING_PATTERNS} 'patternProperties' of which some "
                "overlap (a name matching several must satisfy each schema: one region per "
                "set of patterns)", pointer=f"{ptr}/patternProperties",
                fix="make the patterns disjoint")
        out = []
        for subset in range(1, 1 << n):
            inside = [i for i in range(n) if subset >> i & 1]
            key = intersect(*(pat_keys[i][0] for i in inside)) if len(inside) > 1 \
                else pat_keys[inside[0]][0]
            others = [pat_keys[i][0] for i in range(n) if not subset >> i & 1]
            if others and key != NOTHING:
                key = difference(key, alt(*others))
            if key == NOTHING:
                continue
            sub = pat_keys[inside[0]][1]
            for i in inside[1:]:
                sub = meet(sub, pat_keys[i][1], f"{ptr}/patternProperties")
            sub = _unless(sub, {pat_keys[i][3] for i in inside}, unless, ptr)
            out.append((key, self._schema(sub, pat_keys[inside[-1]][2])))
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

    def _object_graph(self, items, extras, lo: int, hi: int | None, counted=None) -> Expr:
        """``{`` declared members in order (optional ones may be left out), then undeclared
        members, ``}``; the member count within [lo, hi].

        The count toward ``minProperties`` takes at most one undeclared member, because two
        of them may spell the same key (duplicates cannot be excluded in a regular language),
        so only one is surely distinct. The count toward ``maxProperties`` takes all.
        """
        if hi is not None and extras and counted is None and \
                countable(*(m for m, _ in items), *(x for kv in extras for x in kv)):
            # undeclared members without end: their count toward maxProperties a counter
            # (a counted region of kind "props", see toolc.walk.itemcounts), not states
            return self._object_graph(items, extras, lo, None, counted=hi)
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
            inside = seq(self.style.open, graph, self.style.close)
            if counted is not None:
                inside = Counted(inside, 0, counted, "props")
            parts.append(seq(lit("{"), inside, lit("}")))
        if empty_ok:
            parts.append(self.style.empty("{}"))
        return alt(*parts)
