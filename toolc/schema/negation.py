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

from ..errors import UnsupportedSchemaError
from ..fsm import NOTHING, Expr, alt
from .automata import difference
from .keywords import ANNOTATIONS
from .refs import MergeConflict, esc, meet, merge

#: an anyOf of more branches than this stays one piece
MAX_PIECES = 8

_BUILT_FROM_PARTS = ("anyOf", "oneOf", "allOf", "if", "dependentSchemas", "not", "$ref",
                     "patternProperties", "propertyNames")


class NegatedObjects:
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
        (or an ``anyOf`` of such), else None."""
        parts = only.get("anyOf") if isinstance(only, dict) and "anyOf" in only else [only]
        if isinstance(only, dict) and "anyOf" in only and \
                [k for k in only if k not in ANNOTATIONS and k != "type"] != ["anyOf"]:
            return None
        out = []
        for p in parts:
            if not isinstance(p, dict) or [k for k in p if k not in ANNOTATIONS
                                           and k != "type"] != ["propertyNames"]:
                return None
            out.append(p["propertyNames"])
        return out

    def _names_outside(self, base, name_sets: list, ptr: str) -> Expr:
        """The objects of ``base`` that fail every ``propertyNames`` of ``name_sets``: each
        holds a key outside each set (an automaton difference, exact because ``base`` with a
        ``propertyNames`` is written in ``base``'s own layout, keys only narrowed)."""
        whole = self._or_nothing(base, ptr)
        if whole == NOTHING:
            return NOTHING
        narrowed = [self._or_nothing(merge(base, {"propertyNames": n}, ptr), ptr)
                    for n in name_sets]
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

    def _closed_copy(self, schema):
        """``schema`` with the closed reading written out (``additionalProperties: false``
        wherever closed mode closes an object), so that a ``not`` built from it keeps it."""
        if not self.closed_objects or not isinstance(schema, (dict, list)):
            return schema
        if isinstance(schema, list):
            return [self._closed_copy(x) for x in schema]
        out = {k: (self._closed_copy(v) if k in ("anyOf", "oneOf", "allOf", "items",
                                                 "prefixItems", "not") else v)
               for k, v in schema.items()}
        if isinstance(out.get("properties"), dict):
            out["properties"] = {k: self._closed_copy(v) for k, v in out["properties"].items()}
            if out["properties"] and "additionalProperties" not in out \
                    and "patternProperties" not in out:
                out["additionalProperties"] = False
        return out

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
                        reading: bool = False) -> list:
        """Object schemas whose union is exactly the objects of ``universe`` (None: any
        object) that fail ``neg`` (``properties``, ``required``, ``additionalProperties``
        false, or a schema where ``universe`` is known, and ``anyOf`` of such); ``reading``:
        on closed mode's closed reading of
        ``neg`` and of the objects inside it (``oneOf`` branches), else JSON Schema's."""
        if [k for k in neg if k not in ANNOTATIONS and k != "type"] == ["anyOf"]:
            out = [{"type": "object"}]      # not (A or B) = not A and not B
            for i, b in enumerate(neg["anyOf"]):
                b = self._restricted(self._flat(b, f"{ptr}/anyOf/{i}"), "object")
                if b is False:
                    continue
                negs = self._negated_object(b, f"{ptr}/anyOf/{i}", universe, reading)
                out = [merge(x, y, ptr) for x in out for y in negs]
            return out
        rest = neg.get("additionalProperties", True)
        extra = [k for k in neg if k not in ANNOTATIONS and k not in ("type", "properties",
                                                                      "required")
                 and not (k == "additionalProperties" and (rest in (True, False, {})
                                                          or universe is not None))]
        if extra:
            raise UnsupportedSchemaError(
                f"'not' over objects is enforced for 'properties', 'required' and "
                f"'additionalProperties' (a schema: beside a closed object) only, not "
                f"{extra[0]!r}", pointer=f"{ptr}/{esc(extra[0])}",
                fix="negate properties and required keys only")
        props = neg.get("properties") or {}
        whole = [{"type": "object"}]
        out = []
        for r in neg.get("required", []):
            if universe is not None and r not in universe:
                return whole        # no object of the universe holds r: all of them fail
            out.append({"type": "object", "properties": {r: False}})
        for name, sub in props.items():
            if sub is True or sub == {} or universe is not None and name not in universe:
                continue
            out.append({"type": "object", "required": [name], "properties": {
                name: {"not": self._closed_copy(sub) if reading else sub}}})
        if self._closed_object(neg, reading):
            if universe is None:    # holds a key outside props: see _names_outside
                out.append({"type": "object", "not": {"propertyNames": {"enum": list(props)}}})
            else:
                out += [{"type": "object", "required": [k]}
                        for k in sorted(universe - set(props))]
        elif rest not in (True, {}):    # a key outside props whose value fails the schema
            rest = self._closed_copy(rest) if reading else rest
            out += [{"type": "object", "required": [k], "properties": {k: {"not": rest}}}
                    for k in sorted(universe - set(props))]
        if not out:
            return [False]
        return out
