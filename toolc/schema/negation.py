"""The objects that fail an object schema, as a union of object schemas merged into the
schema beside them (so that an object keeps one key order). A mixin of
:class:`~toolc.schema.algebra.AlgebraSchemas`, used by ``not`` and by ``oneOf``.

An object fails ``{"properties": P, "required": R}`` when it misses one ``r`` of ``R``, or holds
one ``p`` of ``P`` whose value fails ``P[p]`` (a nested ``not``, rewritten the same way one level
down, so nested objects are exact too). A *closed* schema (``additionalProperties: false``, or
closed by default under ``--additional-properties closed``) also fails every object that holds a
key outside ``P``. Which keys those can be depends on the schema beside it, its *universe*: a
closed object holds only its declared keys, so "holds ``k``" is ``required: [k]`` for each of
them; an open one may hold any key, and "holds some undeclared key" is no schema of these
keywords: it is ``not: {propertyNames: {enum: P}}``, which :meth:`NegatedObjects._names_outside`
builds as an automaton difference (the objects of the schema beside it, less those whose keys
all lie in ``P``: both written in the same layout, so the difference of texts is the difference
of values). An ``additionalProperties`` schema ``X`` fails on a key outside ``P`` whose value
fails ``X``: over a closed universe, ``required: [k]`` with ``k``'s value failing ``X``, per
key; beside an open one it is refused. Alternatives that the universe rules out are dropped (a
key it cannot hold cannot carry a failing value).

So that the universe is known, a ``oneOf`` branch built from parts is first cut into pieces
(:meth:`NegatedObjects._pieces`): an ``allOf`` that merges into one schema is that schema, and
an ``anyOf`` is its branches, each met with the keywords beside it; a value is in the branch
when it is in one piece, so each piece is kept exclusive alone and the branch is their union.
"""

from __future__ import annotations

import contextlib

from ..errors import UnsupportedSchemaError
from ..fsm import NOTHING, Expr, alt
from .automata import difference
from .keywords import ANNOTATIONS, pattern_search, validator
from .refs import MergeConflict, esc, meet, merge
from .undeclared import UndeclaredMembers

#: an anyOf of more branches than this stays one piece
MAX_PIECES = 8
#: the deepest nesting of combinations built from rewritten parts
MAX_REWRITE_DEPTH = 40
#: the most object schemas one negation may be written as
MAX_NEGATED_PARTS = 32
#: the keywords of an object schema that a negation is written for
_NEGATABLE = ("type", "properties", "required", "additionalProperties", "patternProperties",
              "minProperties", "maxProperties", "dependentRequired", "propertyNames")

_BUILT_FROM_PARTS = ("anyOf", "oneOf", "allOf", "if", "dependentSchemas", "not", "$ref",
                     "patternProperties", "propertyNames")


class NegatedObjects(UndeclaredMembers):
    """``_negated_object`` and the facts it needs (reached from ``not`` and ``oneOf``)."""

    def _pieces(self, b, ptr: str) -> list:
        """Schemas whose union is ``b``, each one schema of plain keywords where a merge or a
        split of ``allOf``/``anyOf`` makes it so (otherwise ``b`` itself)."""
        if not isinstance(b, dict):
            return [b]
        rest = {k: v for k, v in b.items() if k not in ("allOf", "anyOf")}
        if "allOf" in b:
            try:
                merged = self._merged([rest] + [self._flat(x, f"{ptr}/allOf/{k}")
                                                for k, x in enumerate(b["allOf"])], ptr)
            except MergeConflict:
                return [b]
            if "anyOf" in b:
                merged = meet(merged, {"anyOf": b["anyOf"]}, ptr)
            return self._pieces(merged, ptr) if "allOf" not in merged else [merged]
        if "anyOf" in b and len(b["anyOf"]) <= MAX_PIECES:
            out = []
            for k, x in enumerate(b["anyOf"]):
                part = meet(rest, self._flat(x, f"{ptr}/anyOf/{k}"), ptr)
                out += self._pieces(part, ptr) if part != b else [part]
            return out
        return [b]

    @staticmethod
    def _name_sets(only) -> list | None:
        """The ``propertyNames`` schemas of a negated object schema that says nothing else
        (or an ``anyOf`` of such, nested ones too), else None."""
        if not isinstance(only, dict):
            return None
        keys = [k for k in only if k not in ANNOTATIONS and k != "type"]
        if keys == ["propertyNames"]:
            return [only["propertyNames"]]
        if keys != ["anyOf"]:
            return None
        out = []
        for p in only["anyOf"]:
            got = NegatedObjects._name_sets(p)
            if got is None:
                return None
            out += got
        return out

    def _names_outside(self, base, name_sets: list, ptr: str) -> Expr:
        """The objects of ``base`` that fail every ``propertyNames`` of ``name_sets``: each
        holds a key outside each set (an automaton difference, exact because ``base`` with a
        ``propertyNames`` is written in ``base``'s own layout, keys only narrowed)."""
        if any(not isinstance(n, dict) or set(n) - set(ANNOTATIONS) - {"enum", "const"}
               for n in name_sets):
            # a set named otherwise (a pattern, its complement) holds the json.dumps form of
            # each name only: the object is written with its keys in that form too, so that
            # {"\u0061": 1} is not taken for a key outside "^a"
            base = merge(base, {"propertyNames": True}, ptr)
        whole = self._or_nothing(base, ptr)
        if whole == NOTHING:
            return NOTHING
        narrowed = [self._or_nothing(merge(base, {"maxProperties": 0} if n == {"enum": []}
                                           else {"propertyNames": n}, ptr), ptr)
                    for n in name_sets]     # (no name at all: the empty object)
        return difference(whole, alt(*narrowed))

    def _closed_object(self, schema, reading: bool = True) -> bool:
        """Whether an object schema admits no key outside its ``properties`` (``reading``
        False: only an explicit ``additionalProperties: false`` closes it, as under ``not``
        and ``if``, which JSON Schema reads open)."""
        if not isinstance(schema, dict):
            return schema is False
        props = schema.get("properties") or {}
        default = not (reading and self.closed_objects and props)
        return schema.get("additionalProperties", default) is False \
            and not schema.get("patternProperties")

    def _closed_copy(self, schema, as_compiled: bool = False):
        """``schema`` with the closed reading written out (``additionalProperties: false``
        wherever closed mode closes an object), so that a ``not`` built from it keeps it.
        ``as_compiled``: the reading closed mode compiles (a ``not`` inside stays open, as
        JSON Schema reads it; ``contains`` and member schemas are closed), so that a merge
        with another schema keeps it."""
        if not self.closed_objects or not isinstance(schema, (dict, list)):
            return schema
        if isinstance(schema, list):
            return [self._closed_copy(x, as_compiled) for x in schema]
        nested = ("anyOf", "oneOf", "allOf", "items", "prefixItems") + (
            ("contains", "additionalProperties") if as_compiled else ("not",))
        out = {k: (self._closed_copy(v, as_compiled) if k in nested else v)
               for k, v in schema.items()}
        for key in ("properties",) + (("patternProperties",) if as_compiled else ()):
            if isinstance(out.get(key), dict):
                out[key] = {k: self._closed_copy(v, as_compiled) for k, v in out[key].items()}
        if out.get("properties") and isinstance(out["properties"], dict) \
                and "additionalProperties" not in out and "patternProperties" not in out:
            out["additionalProperties"] = False
        return out

    @contextlib.contextmanager
    def _rewriting(self, ptr: str):
        """One level of combinations built from rewritten parts; past MAX_REWRITE_DEPTH
        (parts whose negations keep nesting) refused, not recursed without end."""
        depth = getattr(self, "_rewrites", 0)
        if depth >= MAX_REWRITE_DEPTH:
            raise UnsupportedSchemaError(
                f"'oneOf'/'not' rewritten more than {MAX_REWRITE_DEPTH} levels deep: the "
                "negations of these branches keep nesting", pointer=ptr,
                fix="simplify the branches, or use 'anyOf'")
        self._rewrites = depth + 1
        try:
            yield
        finally:
            self._rewrites = depth

    def _closed_here(self, base):
        """``base`` with closed mode's closing written out at its top (a property that a
        negation's part declares must not open it: the merge then forbids that key)."""
        if self.closed_objects and isinstance(base, dict) and base.get("properties") and \
                "additionalProperties" not in base:
            return dict(base, additionalProperties=False)
        return base

    def _merge_absent(self, base, part, ptr: str):
        """``merge(base, part)``; a key that ``part`` forbids leaves a free-form ``base`` open
        to the other keys (declaring it would close the object)."""
        if isinstance(base, dict) and "properties" not in base and \
                "additionalProperties" not in base and isinstance(part, dict) and \
                "properties" in part:
            part = dict(part, additionalProperties=True)
        return merge(base, part, ptr)

    def _object_universe(self, base) -> frozenset | None:
        """The keys an object of ``base`` may hold, or None when that is no finite set known
        here (an open object, or one built from parts that may declare more keys)."""
        if base is False:
            return frozenset()
        if not isinstance(base, dict) or any(k in base for k in _BUILT_FROM_PARTS) \
                or not self._closed_object(base):
            return None
        return frozenset(k for k, v in (base.get("properties") or {}).items() if v is not False)

    def _negated_object(self, neg: dict, ptr: str, universe: frozenset | None = None,
                        reading: bool = False, base=None) -> list:
        """Object schemas whose union is exactly the objects of ``universe`` (None: any
        object) that fail ``neg``; ``base``: the object schema they are merged into (its
        undeclared members decide whether "some undeclared member fails" is exact);
        ``reading``: on closed mode's closed reading of ``neg`` and of the objects inside it
        (``oneOf`` branches), else JSON Schema's."""
        if [k for k in neg if k not in ANNOTATIONS and k != "type"] == ["anyOf"]:
            out = [{"type": "object"}]      # not (A or B) = not A and not B
            for i, b in enumerate(neg["anyOf"]):
                b = self._restricted(self._flat(b, f"{ptr}/anyOf/{i}"), "object")
                if b is False:
                    continue
                negs = self._negated_object(b, f"{ptr}/anyOf/{i}", universe, reading, base)
                out = self._capped([merge(x, y, ptr) for x in out for y in negs], ptr)
            return out
        if "oneOf" in neg:
            return self._negated_one_of(neg, ptr, universe, reading, base)
        if "not" in neg or "allOf" in neg:     # not (R and not N) = not R, or N
            return self._negated_parts(neg, ptr, universe, reading, base)
        if "const" in neg or "enum" in neg:
            return self._negated_values(neg, ptr, universe, reading, base)
        if {"if", "then", "else", "dependentSchemas"} & set(neg):
            return self._negated_conditions(neg, ptr, universe, reading, base)
        extra = [k for k in neg if k not in ANNOTATIONS and k not in _NEGATABLE]
        if extra:
            raise UnsupportedSchemaError(
                f"'not' over objects is enforced for {', '.join(map(repr, _NEGATABLE[1:]))} "
                f"and 'anyOf'/'oneOf' of such only, not {extra[0]!r}",
                pointer=f"{ptr}/{esc(extra[0])}",
                fix="negate properties, required keys and counts only")
        props = neg.get("properties") or {}
        whole = [{"type": "object"}]
        out = []
        for r in neg.get("required", []):
            if universe is not None and r not in universe:
                return whole        # no object of the universe holds r: all of them fail
            out.append({"type": "object", "properties": {r: False}})
        for name, sub in props.items():
            for pat, psub in (neg.get("patternProperties") or {}).items():
                if pattern_search(pat, name):   # a declared name meets its patterns too
                    sub = meet(sub, psub, f"{ptr}/patternProperties/{esc(pat)}")
            if sub is True or sub == {} or universe is not None and name not in universe:
                continue
            out.append({"type": "object", "required": [name], "properties": {
                name: {"not": self._closed_copy(sub) if reading else sub}}})
        out += self._negated_counts(neg, ptr, universe, base)
        if self._closed_object(neg, reading):
            if universe is None:    # holds a key outside props: see _names_outside
                out.append({"type": "object", "not": {"propertyNames": {"enum": list(props)}}})
            else:
                out += [{"type": "object", "required": [k]}
                        for k in sorted(universe - set(props))]
        else:
            out += self._negated_extras(neg, ptr, universe, reading, base)
        return out or [False]

    def _negated_counts(self, neg: dict, ptr: str, universe, base) -> list:
        """The objects failing ``minProperties``, ``maxProperties``, ``dependentRequired`` or
        ``propertyNames`` (each a plain keyword of the merge, or a set of keys)."""
        out = []
        if int(neg.get("minProperties", 0)) > 0:
            out.append({"type": "object", "maxProperties": int(neg["minProperties"]) - 1})
        if "maxProperties" in neg:
            if int(neg["maxProperties"]) > 0 and universe is None and \
                    self._undeclared_regions(self._flat_object(base)) != []:
                raise UnsupportedSchemaError(
                    f"'not' over objects cannot say \"more than {neg['maxProperties']} "
                    "members\" beside an object with undeclared members: two of them may "
                    "spell one key, and no regular language tells such texts from the ones "
                    "whose keys differ", pointer=f"{ptr}/maxProperties",
                    fix="close the object beside it, or use 'anyOf'")
            out.append({"type": "object", "minProperties": int(neg["maxProperties"]) + 1})
        for trigger, needed in (neg.get("dependentRequired") or {}).items():
            out += [{"type": "object", "required": [trigger], "properties": {n: False}}
                    for n in needed if n != trigger]
        if "propertyNames" in neg:
            names = neg["propertyNames"]
            if universe is None:    # a key outside the names: an automaton difference
                out.append({"type": "object", "not": {"propertyNames": names}})
            else:
                check = validator(names if isinstance(names, dict)
                                  else {} if names else {"not": {}})
                out += [{"type": "object", "required": [k]} for k in sorted(universe)
                        if not check.is_valid(k)]
        return out

    def _negated_one_of(self, neg: dict, ptr: str, universe, reading: bool, base) -> list:
        """not (rest and exactly one of B) = not rest, or no B, or two of B (met)."""
        rest = {k: v for k, v in neg.items() if k != "oneOf"}
        out = self._negated_object(rest, ptr, universe, reading, base) \
            if [k for k in rest if k not in ANNOTATIONS and k != "type"] else []
        out = [x for x in out if x is not False]
        branches = []
        for i, b in enumerate(neg["oneOf"]):
            b = self._restricted(self._flat(b, f"{ptr}/oneOf/{i}"), "object")
            if b is not False:
                branches.append((i, self._closed_copy(b) if reading else b))
        none = [{"type": "object"}]
        for i, b in branches:
            negs = self._negated_object(b, f"{ptr}/oneOf/{i}", universe, reading, base)
            none = self._capped([merge(x, y, ptr) for x in none for y in negs if y is not False],
                                ptr)
        out += none
        out += [self._within({"type": "object", "allOf": [a, b]}, universe)
                for n, (_, a) in enumerate(branches) for _, b in branches[n + 1:]]
        return self._capped(out, ptr) or [False]

    def _negated_parts(self, neg: dict, ptr: str, universe, reading: bool, base) -> list:
        """not (R and all of A and not N) = not R, or some A failing, or N."""
        rest = {k: v for k, v in neg.items() if k not in ("not", "allOf")}
        out = self._negated_object(rest, ptr, universe, reading, base) \
            if [k for k in rest if k not in ANNOTATIONS and k != "type"] else []
        for i, a in enumerate(neg.get("allOf", [])):
            a = self._restricted(self._flat(a, f"{ptr}/allOf/{i}"), "object")
            if a is not False:
                out += self._negated_object(a, f"{ptr}/allOf/{i}", universe, reading, base)
            else:
                return [{"type": "object"}]
        if "not" in neg:
            n = self._restricted(self._flat(neg["not"], f"{ptr}/not"), "object")
            if n is not False:
                out.append(self._within({"type": "object", "allOf": [
                    self._closed_copy(n) if reading else n]}, universe))
        return self._capped([x for x in out if x is not False], ptr) or [False]

    def _negated_values(self, neg: dict, ptr: str, universe, reading: bool, base) -> list:
        """not (R and one of these objects) = not R, or none of them: each object value
        ``v`` is the closed schema of its members, ``{"properties": {k: {"const": v[k]}},
        "required": [...], "additionalProperties": false}`` (an object equals ``v`` exactly
        when it holds its keys, each with its value, and no other)."""
        key = "const" if "const" in neg else "enum"
        values = [neg["const"]] if key == "const" else list(neg["enum"])
        rest = {k: v for k, v in neg.items() if k not in ("const", "enum")}
        out = self._negated_object(rest, ptr, universe, reading, base) \
            if [k for k in rest if k not in ANNOTATIONS and k != "type"] else []
        shapes = [{"type": "object", "properties": {k: {"const": x} for k, x in v.items()},
                   "required": list(v), "additionalProperties": False}
                  for v in values if isinstance(v, dict)]
        if not shapes:
            return [{"type": "object"}]     # no object is one of them
        out += self._negated_object({"anyOf": shapes}, f"{ptr}/{key}", universe, reading, base)
        return self._capped([x for x in out if x is not False], ptr) or [False]

    def _negated_conditions(self, neg: dict, ptr: str, universe, reading: bool, base) -> list:
        """not (R and (if I then T else E) and each k: S) = not R, or I and not T, or not I
        and not E, or some k present and not S (``then``/``else`` without ``if`` mean
        nothing)."""
        cond = ("if", "then", "else", "dependentSchemas")
        rest = {k: v for k, v in neg.items() if k not in cond}
        out = self._negated_object(rest, ptr, universe, reading, base) \
            if [k for k in rest if k not in ANNOTATIONS and k != "type"] else []

        def fails(key: str, sub, p: str) -> list:   # the objects failing ``sub``
            sub = self._restricted(self._flat(sub, p), "object")
            if sub is False:
                return [{"type": "object"}]
            return [x for x in self._negated_object(sub, p, universe, reading, base)
                    if x is not False]

        if "if" in neg:
            # (read as JSON Schema reads it, unless on the closed reading: closed mode would
            # close it once merged)
            test = self._closed_copy(neg["if"]) if reading else self._open_copy(neg["if"])
            for n in fails("then", neg["then"], f"{ptr}/then") if "then" in neg else ():
                try:        # merged at the top, so that a key it forbids keeps base open
                    out.append(self._within(merge({"type": "object"}, merge(test, n, ptr),
                                                  ptr), universe))
                except MergeConflict:
                    out.append(self._within({"type": "object", "allOf": [test, n]}, universe))
            if "else" in neg:
                out += [merge(x, y, ptr) for x in fails("if", neg["if"], f"{ptr}/if")
                        for y in fails("else", neg["else"], f"{ptr}/else")]
        for k, sub in (neg.get("dependentSchemas") or {}).items():
            if universe is None or k in universe:
                out += [merge({"type": "object", "required": [k]}, n, ptr)
                        for n in fails(k, sub, f"{ptr}/dependentSchemas/{esc(k)}")]
        return self._capped([x for x in out if x is not False], ptr) or [False]

    @staticmethod
    def _within(schema: dict, universe):
        """A positive part of a negation, kept to the keys of ``universe`` (merged into a
        closed object, a ``required`` key it does not declare would declare it)."""
        if universe is None or not isinstance(schema, dict):
            return schema           # (False: an ``if: false`` met, no object)
        return dict(schema, propertyNames={"enum": sorted(universe)})

    @staticmethod
    def _capped(out: list, ptr: str) -> list:
        if len(out) > MAX_NEGATED_PARTS:
            raise UnsupportedSchemaError(
                f"'not' over objects needs more than {MAX_NEGATED_PARTS} object schemas here",
                pointer=ptr, fix="simplify the negated schema")
        return out
