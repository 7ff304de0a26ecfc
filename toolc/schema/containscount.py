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
        cond = schema["contains"]
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
                if how == "match":
                    made[key] = self._or_nothing(meet(sub, cond, sptr), sptr)
                elif how == "miss":
                    made[key] = self._or_nothing(meet(sub, {"not": cond}, sptr), sptr)
                elif sub is True or sub == {}:
                    made[key] = jg.any_value(max(self.options.max_depth - 1, 0), self.style)
                else:
                    made[key] = self._or_nothing(sub, sptr)
            return made[key]

        sep = self.style.item_sep
        ids: dict[tuple, int] = {}
        order: list[tuple] = []
        edges = []

        def node(j, c):
            key = (min(j, loop_at) if hi is None else j, c)
            if key not in ids:
                ids[key] = len(order)
                order.append(key)
            return ids[key]

        node(0, 0)
        k = 0
        while k < len(order):
            j, c = order[k]
            k += 1
            if not k & 0xFFF:
                budget.check("building an array's contains counts")
            if hi is not None and j >= hi or (items is False and j >= p):
                continue
            label = sep if j > 0 else EMPTY
            src = ids[(j, c)]
            stay = part(j, "item" if cmax is None else "miss")
            if stay != NOTHING:
                edges.append((src, seq(label, stay), node(j + 1, c)))
            if c < cap:
                m = part(j, "match")
                if m != NOTHING:
                    edges.append((src, seq(label, m), node(j + 1, min(c + 1, cap))))
        finals = tuple(q for q, (j, c) in enumerate(order) if j >= max(lo, 1) and c >= cmin)
        out = []
        if finals:
            graph = Graph(len(order), 0, finals, tuple(edges))
            out.append(seq(lit("["), self.style.open, graph, self.style.close, lit("]")))
        if lo == 0 and cmin == 0:
            out.append(self.style.empty("[]"))
        return alt(*out)
