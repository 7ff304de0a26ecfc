"""Arrays: ``prefixItems`` then ``items``, ``minItems``/``maxItems``, ``contains`` with
``minContains``. A mixin of :class:`~toolc.schema.compile.SchemaCompiler`."""

from __future__ import annotations

from .. import budget
from ..fsm import EMPTY, NOTHING, Expr, Graph, alt, lit, seq
from . import json_grammar as jg
from .automata import intersect


# the node budget when the schema compiler has none (a format compiling values on its own)
ARRAY_STATE_CAP = 200_000


class ArraySchemas:
    """How the schema compiler writes an array (``_array``, reached from ``_typed``)."""

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
        # one graph node per item count (and per count of contains matches): priced before
        # anything is built, so maxItems 1e9 is refused at once, not after gigabytes
        nodes = ((max(len(pexprs), lo, 1) + 1) if hi is None else hi + 1) * (cmin + 1)
        budget.check_subschema(nodes, self.max_states or ARRAY_STATE_CAP, ptr)
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
            if not k & 0xFFF:
                budget.check("building an array's item counts")
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
