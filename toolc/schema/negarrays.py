"""The arrays that fail an array schema, as a union of array schemas merged into the schema
beside them (so that its items keep their own layout). A mixin of
:class:`~toolc.schema.algebra.AlgebraSchemas`, used by ``not`` and by ``oneOf`` where the
negated schema's automaton cannot be subtracted (its items hold objects, free-form or
recursive values: :meth:`~toolc.schema.algebra.AlgebraSchemas.complete`).

An array's items come in one order and each position holds one value, so "some item fails
``I``" is a statement about one item's value: unlike an object's members, which may repeat a
key, it needs no count and no comparison of two items. An array fails
``{"prefixItems": P, "items": I, "minItems": m, "maxItems": M, "contains": C}`` when

* it has fewer than ``m`` items (``maxItems: m - 1``) or more than ``M`` (``minItems: M + 1``);
* its item ``i < len(P)`` fails ``P[i]`` (``minItems: i + 1`` and ``prefixItems`` whose
  ``i``-th schema is ``not: P[i]``);
* an item after the prefix fails ``I`` (``contains: {not: I}``; ``I`` false: ``minItems:
  len(P) + 1``; after a prefix of either side, see :meth:`NegatedArrays._failing_after`);
* no item matches ``C`` (``items: {not: C}``, which the merge also applies to the prefix), or
  fewer than ``minContains`` do, or more than ``maxContains`` (``contains`` with the other
  bound, counted exactly by :mod:`toolc.schema.containscount`).

Each ``not`` one level down is built by ``not`` itself (objects by the rewrite of
:mod:`toolc.schema.negation`, the rest by automaton difference), met with the item schema of
the array beside it, so a nested object is written in that array's key order: the text an item
is matched on is the very text the array writes. ``uniqueItems`` (two equal items) and
``items`` after a prefix longer than ``MAX_PREFIX_SPLIT`` are refused, with the pointer.
"""

from __future__ import annotations

from ..errors import UnsupportedSchemaError
from .keywords import ANNOTATIONS
from .refs import esc, meet, merge

_NEGATABLE = ("type", "items", "prefixItems", "minItems", "maxItems", "contains",
              "minContains", "maxContains")
# a prefix of at most this many items is split from the items after it (2^n alternatives)
MAX_PREFIX_SPLIT = 4


class NegatedArrays:
    """``_negated_array`` (reached from ``not`` and ``oneOf``)."""

    def _negated_array(self, neg: dict, ptr: str, base, reading: bool = False) -> list:
        """Array schemas whose union is exactly the arrays that fail ``neg`` (restricted to
        arrays), to be merged into ``base`` (an array schema, or True); ``reading``: the
        objects inside are read as closed mode's ``oneOf`` branches are."""
        if [k for k in neg if k not in ANNOTATIONS and k != "type"] == ["anyOf"]:
            out: list = [{"type": "array"}]     # not (A or B) = not A and not B
            for i, b in enumerate(neg["anyOf"]):
                b = self._restricted(self._flat(b, f"{ptr}/anyOf/{i}"), "array")
                if b is False:
                    continue
                negs = self._negated_array(b, f"{ptr}/anyOf/{i}", base, reading)
                out = [merge(x, y, ptr) for x in out for y in negs]
            return out
        extra = [k for k in neg if k not in ANNOTATIONS and k not in _NEGATABLE]
        if extra:
            raise UnsupportedSchemaError(
                f"'not' over arrays of objects, free-form or recursive values is enforced for "
                f"'items', 'prefixItems', 'minItems', 'maxItems', 'contains', 'minContains' "
                f"and 'maxContains' only, not "
                f"{extra[0]!r}", pointer=f"{ptr}/{esc(extra[0])}",
                fix="negate item schemas and counts only")
        mine = base if isinstance(base, dict) else {}
        out = []
        lo, hi = int(neg.get("minItems", 0)), neg.get("maxItems")
        if lo > 0:
            out.append({"type": "array", "maxItems": lo - 1})
        if hi is not None:
            out.append({"type": "array", "minItems": int(hi) + 1})
        prefix = list(neg.get("prefixItems") or [])
        for i, p in enumerate(prefix):
            if p is True or p == {}:
                continue
            out.append({"type": "array", "minItems": i + 1, "prefixItems": [
                {} for _ in range(i)] + [self._item_not(p, self._item_at(mine, i), reading)]})
        items = neg.get("items", True)
        if items is False:
            out.append({"type": "array", "minItems": len(prefix) + 1})
        elif items is not True and items != {}:
            out += self._failing_after(items, len(prefix), mine, ptr, reading)
        if "contains" in neg:
            out += self._contains_failing(neg, ptr, reading)
        return out or [False]

    def _failing_after(self, items, k: int, mine: dict, ptr: str, reading: bool) -> list:
        """Arrays with an item at position ``k`` or later that fails ``items``. Where no
        prefix is in the way (``k`` 0, ``mine`` without one): ``contains: {not: items}``.
        Otherwise, with ``L`` the longer prefix: an item ``j`` in ``k..L-1`` that fails (a
        prefix alternative), or an item from ``L`` on that fails: for each set ``S`` of the
        first ``L`` positions, the items in ``S`` fail ``items`` and the others pass it, and
        at least ``|S| + 1`` items fail in all (``contains``/``minContains``, counted exactly
        by :mod:`toolc.schema.containscount`), so one of them comes after the prefix."""
        fails = self._item_not(items, mine.get("items", True), reading)
        width = max(k, len(mine.get("prefixItems") or []))
        if width == 0:
            return [{"type": "array", "contains": fails}]
        if width > MAX_PREFIX_SPLIT:
            raise UnsupportedSchemaError(
                f"'not' over arrays splits the items after a 'prefixItems' from the prefix "
                f"for prefixes of at most {MAX_PREFIX_SPLIT} items (2^n alternatives), not "
                f"{width}: over the state budget", pointer=f"{ptr}/items",
                fix="shorten the prefix, or negate a plain 'items' schema")
        sub = self._closed_copy(items) if reading else self._open_copy(items)
        # read where it passes, as closed mode compiles it (a ``not`` inside stays open)
        held = self._closed_copy(items, True) if reading else sub
        out = [{"type": "array", "minItems": j + 1, "prefixItems": [{} for _ in range(j)] + [
            self._item_not(items, self._item_at(mine, j), reading)]} for j in range(k, width)]
        # an item that passes ``items`` keeps to the keys of its own schema (closed mode's
        # closing written out, so that the merge does not declare ``items``' other keys)
        passes = [meet(self._closed_copy(self._item_at(mine, i)), held, ptr)
                  for i in range(width)]
        for bits in range(1 << width):
            n = bin(bits).count("1")
            out.append({"type": "array", "minItems": width + 1, "prefixItems": [
                {"not": sub} if bits >> i & 1 else passes[i] for i in range(width)],
                "contains": {"not": sub} if n else fails, "minContains": n + 1})
        return out

    def _contains_failing(self, neg: dict, ptr: str, reading: bool) -> list:
        """Arrays with fewer than ``minContains`` items matching ``contains`` (none: every
        item fails it) or more than ``maxContains``."""
        cond = self._closed_copy(neg["contains"], True) if reading else \
            self._open_copy(neg["contains"])
        lo, hi = int(neg.get("minContains", 1)), neg.get("maxContains")
        out = []
        if lo == 1:
            out.append({"type": "array", "items": self._item_not(neg["contains"], True,
                                                                  reading)})
        elif lo > 1:
            out.append({"type": "array", "contains": cond, "minContains": 0,
                        "maxContains": lo - 1})
        if hi is not None:
            out.append({"type": "array", "contains": cond, "minContains": int(hi) + 1})
        return out

    def _open_copy(self, schema):
        """``schema`` with JSON Schema's open reading written out (``additionalProperties:
        true`` where closed mode would close an object): a part read as ``not`` reads it,
        placed where the compiler reads schemas closed."""
        if not self.closed_objects:
            return schema
        if isinstance(schema, list):
            return list(map(self._open_copy, schema))
        if not isinstance(schema, dict):
            return schema
        out = dict(schema)
        for key in set(out) & {"anyOf", "oneOf", "allOf", "items", "contains", "prefixItems",
                               "not"}:
            out[key] = self._open_copy(out[key])
        props = out.get("properties")
        if isinstance(props, dict):
            out["properties"] = {name: self._open_copy(sub) for name, sub in props.items()}
            if props and not {"additionalProperties", "patternProperties"} & set(out):
                out["additionalProperties"] = True
        return out

    @staticmethod
    def _item_at(schema: dict, i: int):
        prefix = schema.get("prefixItems") or []
        return prefix[i] if i < len(prefix) else schema.get("items", True)

    def _item_not(self, sub, mine, reading: bool):
        """An item schema meaning "``mine``, failing ``sub``": the ``not`` met with the
        item schema of the array beside it, so that it is written in that array's layout."""
        neg = {"not": self._closed_copy(sub) if reading else sub}
        if mine is True or mine == {}:
            return neg
        return {"allOf": [mine, neg]}
