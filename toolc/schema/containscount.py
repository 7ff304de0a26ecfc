"""Arrays whose ``contains`` matches are counted exactly: ``minContains`` above 1 and
``maxContains``. A mixin of :class:`~toolc.schema.arrays.ArraySchemas`.

Each item is written in the layout of its own item schema ``S`` (``prefixItems[j]`` or
``items``) in one of two ways: as ``S`` met with ``contains`` (a match: the count goes up) or,
where a maximum is to be kept, as ``S`` met with ``not: contains`` (no match: the count stays).
Both are built by the schema compiler from the schemas, not by intersecting automata of two
layouts, so an item whose value matches is written exactly as the array writes it (an object in
the item schema's key order), and one whose value does not match can never count: the count is
the number of matching items, value for value. Without a maximum an item that is not counted is
just ``S`` (it may match: a lower bound only needs enough counted ones).

The states are (items written, matches counted), matches capped at the largest bound that
matters; priced before anything is built and refused with the pointer over the state budget.
"""

from __future__ import annotations

from .. import budget
from ..errors import BudgetExceededError
from ..fsm import EMPTY, NOTHING, Expr, Graph, alt, lit, seq
from . import json_grammar as jg
from .refs import meet

# the node budget when the schema compiler has none (as arrays.ARRAY_STATE_CAP)
_CAP = 200_000


class ContainsCounts:
    """``_contains_counted`` (reached from ``_array`` for ``minContains`` > 1 or
    ``maxContains``)."""

    def _contains_counted(self, schema: dict, ptr: str, lo: int, hi) -> Expr:
        prefix = list(schema.get("prefixItems") or [])
        items = schema.get("items", True)
        # closed mode's reading written out, on both sides of a match (``not`` reads open)
        cond = self._closed_copy(schema["contains"], True)
        cmin = int(schema.get("minContains", 1))
        cmax = schema.get("maxContains")
        cmax = None if cmax is None else int(cmax)
        if cmax is not None and cmax < cmin:
            return NOTHING
        cap = cmin if cmax is None else cmax
        p = len(prefix)
        loop_at = max(p, lo, 1)
        nodes = ((loop_at + 1) if hi is None else hi + 1) * (cap + 1)
        limit = (self.max_states or _CAP) * budget.NFA_FACTOR
        if nodes > limit:
            key = "minContains" if cmax is None else "maxContains"
            raise BudgetExceededError(
                f"counting 'contains' matches needs {nodes:,} item states, over the state "
                f"budget of {limit:,}", pointer=f"{ptr}/{key}",
                fix="lower maxItems, minContains or maxContains, or raise max_states")
        made: dict = {}

        def part(j: int, how: str) -> Expr:
            key = (min(j, p), how)
            if key not in made:
                sub = prefix[j] if j < p else items
                sptr = f"{ptr}/prefixItems/{j}" if j < p else f"{ptr}/items"
                held = self._closed_copy(sub, True)
                if how == "match":
                    made[key] = self._or_nothing(meet(held, cond, sptr), sptr)
                elif how == "miss":
                    made[key] = self._or_nothing(meet(held, {"not": cond}, sptr), sptr)
                elif sub is True or sub == {}:
                    made[key] = jg.any_value(max(self.options.max_depth - 1, 0), self.style)
                else:
                    made[key] = self._or_nothing(sub, sptr)
            return made[key]

        # every (items written, matches counted) pair is a node; from ``loop_at`` on without
        # a maximum, the item count stays put
        last = loop_at if hi is None else hi
        width = cap + 1
        sep = self.style.item_sep
        edges = []
        for j in range(last + 1):
            if hi is not None and j >= hi or items is False and j >= p:
                continue
            to = min(j + 1, last)
            label = sep if j > 0 else EMPTY
            stay = part(j, "item" if cmax is None else "miss")
            m = part(j, "match") if cap > 0 else NOTHING
            for c in range(width):
                if stay != NOTHING:
                    edges.append((j * width + c, seq(label, stay), to * width + c))
                if c < cap and m != NOTHING:
                    edges.append((j * width + c, seq(label, m), to * width + c + 1))
        finals = tuple(j * width + c for j in range(max(lo, 1), last + 1)
                       for c in range(cmin, width))
        out = []
        if finals:
            graph = Graph((last + 1) * width, 0, finals, tuple(edges))
            out.append(seq(lit("["), self.style.open, graph, self.style.close, lit("]")))
        if lo == 0 and cmin == 0:
            out.append(self.style.empty("[]"))
        return alt(*out)
