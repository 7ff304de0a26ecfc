"""Arrays: ``prefixItems`` then ``items``, ``minItems``/``maxItems``, ``contains`` (with
``minContains``/``maxContains``: :mod:`toolc.schema.containscount`). A mixin of
:class:`~toolc.schema.compile.SchemaCompiler`."""

from __future__ import annotations

import contextlib
import contextvars

from .. import budget
from ..errors import UnsupportedSchemaError
from ..options import spelled
from ..fsm import EMPTY, NOTHING, Counted, Expr, Graph, alt, lit, seq
from ..fsm.expr import Alt, Repeat, Seq, Subseq
from . import json_grammar as jg
from .automata import intersect
from .containscount import ContainsCounts
from .keywords import json_equal, validator
from .strings import _COUNTED as _LENGTHS_COUNTED

MAX_UNIQUE_DOMAIN = 10      # 2**10 subsets


# the node budget when the schema compiler has none (a format compiling values on its own)
ARRAY_STATE_CAP = 200_000

# an item count is counted when its states would hold this many NFA states or more (below, a
# few states cost less than the count pass over the whole automaton: on schemas/tools80.json,
# 66 arrays of 3 to 20 small items, counting saved 2,800 states but cost 0.2 s more)
COUNT_ABOVE = 4000
COUNT_FROM = 32          # and always from this many items on (maxItems: 100 of integers)

# whether minItems/maxItems become counted regions (the default) or one state per item count
_COUNTED = contextvars.ContextVar("toolc_counted_items", default=True)


@contextlib.contextmanager
def expanded_items():
    """Within this block, ``minItems``/``maxItems`` compile to one graph node per item count,
    as before counting existed: the slow twin the tests compare counted arrays with, and
    the compiler's fallback where a counter would be ambiguous."""
    token = _COUNTED.set(False)
    try:
        yield
    finally:
        _COUNTED.reset(token)


def countable(*parts: Expr) -> bool:
    """Whether a region made of ``parts`` may be counted: counting is on, and no part holds
    a counted array or object of its own (a counted string may: it nests, one level, and
    the runtime keeps a counter for each). Lengths built as states (``expanded_lengths``:
    the slow twins, the compiler's fallback) build item and member counts as states too: an
    automaton alone then holds every bound."""
    if not (_COUNTED.get() and _LENGTHS_COUNTED.get()):
        return False
    memo: dict = {}
    return not any(has_counted(e, memo, NESTS) for e in parts)


# the kinds of counted region that may sit inside a counted one (an array or object holding
# at most counted strings; a string holding nothing counted)
NESTS = ("chars", "items", "props")


def has_counted(e: Expr, memo: dict | None = None, nests: tuple = ()) -> bool:
    """Whether ``e`` holds a counted region, other than of the kinds ``nests``."""
    memo = {} if memo is None else memo
    key = id(e)
    if key in memo:
        return memo[key]
    t = type(e)
    if t is Counted:
        # below a nested array or object, a counted string still nests (three levels)
        out = e.kind not in nests or \
            has_counted(e.body, {}, () if e.kind == "chars" or nests == ("chars",)
                        else ("chars",))
    elif t in (Seq, Alt, Subseq):
        out = any(has_counted(x, memo, nests) for x in e.items) or \
            (t is Subseq and has_counted(e.sep, memo, nests))
    elif t is Repeat:
        out = has_counted(e.item, memo, nests) or \
            (e.sep is not None and has_counted(e.sep, memo, nests))
    elif t is Graph:
        out = any(has_counted(lab, memo, nests) for _, lab, _ in e.edges)
    else:
        out = False
    memo[key] = out
    return out


class ArraySchemas(ContainsCounts):
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
        if schema.get("uniqueItems") is True:
            return self._unique_array(schema, ptr, lo, hi)
        depth = self.options.max_depth
        free = items is True or items == {}
        if free and depth <= 0 and not prefix:
            return NOTHING   # as for objects: the free-form array counts as one level
        if schema.get("contains") is not None and (
                "maxContains" in schema or "minContains" in schema):
            return self._contains_counted(schema, ptr, lo, hi)     # matches counted exactly
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
            cexpr = self._contains_matcher(prefix, items, pexprs, rest, contains, ptr)
        if self._countable(pexprs, rest, lo, hi, cexpr):
            return self._counted_array(pexprs, rest, lo, hi)
        # one graph node per item count (and per count of contains matches): priced before
        # anything is built, so maxItems 1e9 is refused at once, not after gigabytes
        nodes = ((max(len(pexprs), lo, 1) + 1) if hi is None else hi + 1) * (cmin + 1)
        budget.check_subschema(nodes, self.max_states or ARRAY_STATE_CAP, ptr)
        return self._array_graph(pexprs, rest, lo, hi, cexpr, cmin)

    def _contains_matcher(self, prefix, items, pexprs, rest, contains, ptr: str):
        """``match(j)``: the texts of item ``j`` that match ``contains``. Where ``contains``
        holds every spelling of its values, or item ``j`` is free-form (every spelling of
        every value), that is the intersection of the two automata. Otherwise (an object
        item, whose keys come in its own order) ``contains`` is met with the item's schema
        (one schema, written in the item's key order, closed mode's reading written out on
        both sides), so a value both admit is written as the array writes it."""
        cexpr = self._schema(contains, f"{ptr}/contains")
        exact = self.complete(contains, f"{ptr}/contains")
        memo: dict = {}

        def match(j: int) -> Expr:
            key = min(j, len(pexprs))
            if key not in memo:
                sub = prefix[key] if key < len(pexprs) else items
                mine = pexprs[key] if key < len(pexprs) else rest
                if exact or sub is True or sub == {}:
                    memo[key] = intersect(mine, cexpr)
                else:
                    met = {"allOf": [self._closed_copy(sub, True),
                                     self._closed_copy(contains, True)]}
                    try:
                        memo[key] = self._schema(met, f"{ptr}/contains")
                    except UnsupportedSchemaError as e:
                        raise UnsupportedSchemaError(
                            f"'contains' is met with the item schema, so that a match is "
                            f"written in the item's key order: {e.message}",
                            pointer=f"{ptr}/contains", fix=e.fix) from None
            return memo[key]
        return match

    @staticmethod
    def _countable(pexprs, rest, lo, hi, cexpr) -> bool:
        """Whether the item count is a counted region: a bound beyond what the item graph
        must spell out anyway, no ``contains``, no counted region inside an item."""
        if cexpr is not None or rest == NOTHING:
            return False
        if hi is None and lo <= max(len(pexprs), 1):
            return False
        from ..fsm.size import nfa_size
        memo: dict = {}
        bound = max(lo, hi or 0)
        # what the item graph would hold: the prefix items it reaches, then ``rest`` for each
        # count past them (a tuple whose maxItems is its prefix never writes ``rest``)
        cost = sum(nfa_size(e, memo) + 1 for e in pexprs[:bound]) \
            + max(bound - len(pexprs), 0) * (nfa_size(rest, memo) + 1)
        if bound < COUNT_FROM and cost < COUNT_ABOVE:
            return False
        return countable(*pexprs, rest)

    def _counted_array(self, pexprs, rest, lo, hi) -> Expr:
        """``[`` items ``]`` built once, unbounded (the prefix then ``rest`` repeated), its
        inside a counted region of kind "items": the runtime counts item starts (see
        :mod:`toolc.walk.itemcounts`), so the bound costs no states."""
        sep, p = self.style.item_sep, len(pexprs)
        loop_at = max(p, 1)
        edges = tuple((j, seq(sep if j else EMPTY, pexprs[j] if j < p else rest),
                       min(j + 1, loop_at)) for j in range(loop_at + 1))
        graph = Graph(loop_at + 1, 0, tuple(range(1, loop_at + 1)), edges)
        inside = Counted(seq(self.style.open, graph, self.style.close), lo, hi, "items")
        parts = [seq(lit("["), inside, lit("]"))]
        if lo == 0:
            parts.append(self.style.empty("[]"))
        return alt(*parts)

    def _array_graph(self, pexprs, rest, lo, hi, cexpr, cmin) -> Expr:
        """``[`` items ``]``: item j follows prefixItems[j] or else ``items``; the count within
        [lo, hi]; at least ``cmin`` items matching ``contains`` (``cexpr(j)``: the texts of
        item ``j`` that match, when given)."""
        sep = self.style.item_sep
        p = len(pexprs)
        loop_at = max(p, lo, 1)      # from here on, states repeat (when there is no max)
        ids: dict[tuple, int] = {}
        order: list[tuple] = []
        edges = []

        def item(j):
            return pexprs[j] if j < p else rest

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
                m = cexpr(j)
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

    def _unique_array(self, schema: dict, ptr: str, lo: int, hi) -> Expr:
        """``uniqueItems`` over a finite item domain (``set[Literal[...]]``, ``set[Enum]``):
        the states are the subsets of values written so far, so no value comes twice."""
        values = self._finite_items(schema, ptr)
        n = len(values)
        hi = n if hi is None else min(hi, n)
        if hi < lo:
            return NOTHING
        sep = self.style.item_sep
        exprs = [self._value_literal(v) for v in values]
        edges = []
        for subset in range(1 << n):
            for i in range(n):
                if not subset & (1 << i) and bin(subset).count("1") < hi:
                    edges.append((subset, seq(sep if subset else EMPTY, exprs[i]),
                                  subset | (1 << i)))
        finals = tuple(q for q in range(1, 1 << n) if lo <= bin(q).count("1") <= hi)
        parts = []
        if finals:
            graph = Graph(1 << n, 0, finals, tuple(edges))
            parts.append(seq(lit("["), self.style.open, graph, self.style.close, lit("]")))
        if lo == 0:
            parts.append(self.style.empty("[]"))
        return alt(*parts)

    def _finite_items(self, schema: dict, ptr: str) -> list:
        """The distinct values an item may take, when they are few; else a refusal."""
        refuse = UnsupportedSchemaError(
            "keyword 'uniqueItems' is enforced over a finite item domain only (an 'enum', "
            f"'const' or boolean items schema of at most {MAX_UNIQUE_DOMAIN} values, without "
            "'prefixItems' or 'contains')", pointer=f"{ptr}/uniqueItems",
            fix=f"give items an enum, or drop it with a warning: "
                f"{spelled('ignore', 'uniqueItems')} for this keyword, {spelled('lenient')} "
                "for all")
        if "prefixItems" in schema or "contains" in schema:
            raise refuse
        items = self._deref(schema.get("items", True), f"{ptr}/items")
        if not isinstance(items, dict):
            raise refuse
        if "enum" in items or "const" in items:
            values = [items["const"]] if "const" in items else list(items["enum"])
        elif items.get("type") == "boolean":
            values = [True, False]
        elif items.get("type") == "null":
            values = [None]
        else:
            raise refuse
        rest = {k: v for k, v in items.items() if k not in ("enum", "const")}
        check = validator(rest)
        distinct: list = []
        for v in values:
            if check.is_valid(v) and not any(json_equal(v, w) for w in distinct):
                distinct.append(v)
        if len(distinct) > MAX_UNIQUE_DOMAIN:
            raise refuse
        return distinct
