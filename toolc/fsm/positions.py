"""A shared position automaton: an :class:`~toolc.fsm.expr.Expr` to an NFA without epsilons,
built right to left, with equal states shared.

Each *node* reads one label (a byte set or a special symbol) and then continues in a set of
nodes. ``build(e, K)`` returns the set of nodes that start ``e`` followed by the continuation
set ``K``; a node is keyed by (label, continuation), so two parts of the grammar that read the
same bytes and continue the same way are one node. Tools with equal tails, the closing framing
of every call, a string value before the same continuation: each is built once. Subset
construction over these nodes needs no epsilon closures, and builds fewer states than over a
Thompson NFA, because shared suffixes are already merged.

Loops (``*``, a :class:`Graph`'s cycles, free text) go through *join* nodes: a placeholder
continuation whose meaning (a set of nodes) is filled in once the loop body is built. Joins are
expanded away when a set of nodes becomes a DFA state.
"""

from __future__ import annotations

from .. import budget
from .avoid import aho_corasick
from .expr import Alt, Avoid, Bytes, Expr, Graph, Repeat, Seq, Subseq, Sym, Counted

FINAL = 0          # the node that marks the end of the language: no label, no continuation
EMPTY_SET: frozenset = frozenset()


class Positions:
    """The nodes: ``label[n]`` is a byte mask (int), a symbol name (str), or None for FINAL and
    joins;
    ``cont[n]`` the frozenset of nodes after it; ``join[n]`` a join's meaning (a frozenset)."""

    def __init__(self, max_nodes: int | None = None):
        self.label: list = [None]
        self.cont: list = [EMPTY_SET]
        self.is_join: list = [False]
        self.join: dict[int, frozenset] = {}
        self._ids: dict[tuple, int] = {}
        self._memo: dict[tuple, frozenset] = {}
        self.max_nodes = max_nodes
        # counted regions (:class:`Counted`): the tag of each node (-1: none), the bounds of
        # each tag, the continuations each tag's regions exit to, the tag being built
        self.tag: list = [-1]
        self.tag_bounds: list[tuple] = []
        self.tag_exits: list[list] = []
        self._tag = -1

    # -- nodes -------------------------------------------------------------------------------

    def _new(self, label, cont: frozenset, join: bool = False) -> int:
        n = len(self.label)
        self.label.append(label)
        self.cont.append(cont)
        self.is_join.append(join)
        self.tag.append(self._tag)
        budget.check_node(n, self.max_nodes)
        return n

    def node(self, label, cont: frozenset) -> int:
        key = (label, cont) if self._tag < 0 else (label, cont, self._tag)
        n = self._ids.get(key)
        if n is None:
            n = self._ids[key] = self._new(label, cont)
        return n

    def new_join(self) -> int:
        return self._new(None, EMPTY_SET, join=True)

    # -- building ----------------------------------------------------------------------------

    def build(self, e: Expr, k: frozenset) -> frozenset:
        """The nodes that start ``e`` followed by ``k``."""
        t = type(e)
        if t is Bytes:
            return frozenset((self.node(e.mask, k),)) if e.mask else EMPTY_SET
        if t is Sym:
            return frozenset((self.node(e.name, k),))
        if t is Seq:
            ids = self._ids
            tag = self._tag
            for it in reversed(e.items):
                if type(it) is Bytes:          # self.build(it, k), inline: literals are long
                    m = it.mask
                    if not m:
                        k = EMPTY_SET
                        continue
                    key = (m, k) if tag < 0 else (m, k, tag)
                    n = ids.get(key)
                    if n is None:
                        n = ids[key] = self._new(m, k)
                    k = frozenset((n,))
                else:
                    k = self.build(it, k)
            return k
        key = (e, k) if self._tag < 0 else (e, k, self._tag)
        got = self._memo.get(key)
        if got is not None:
            return got
        if t is Alt:
            out = frozenset().union(*(self.build(it, k) for it in e.items))
        elif t is Repeat:
            out = self._repeat(e, k) if e.sep is None else self._separated(e, k)
        elif t is Subseq:
            out = self._subseq(e, k)
        elif t is Avoid:
            out = self._avoid(e, k)
        elif t is Graph:
            out = self._graph(e, k)
        elif t is Counted:
            out = self._counted(e, k)
        else:  # pragma: no cover - a programming error, not an input error
            raise TypeError(f"not an Expr: {e!r}")
        self._memo[key] = out
        return out

    def _loop(self, body, k: frozenset) -> frozenset:
        """{J}, for a join J that stands for the set X = k | body({J}). Anything built after
        the loop continues in {J}, so that it shares the nodes the loop body built."""
        j = self.new_join()
        jset = frozenset((j,))
        self.join[j] = (k | body(jset)) - {j}
        return jset

    def _repeat(self, e: Repeat, k: frozenset) -> frozenset:
        if e.max is not None and e.max < e.min:
            return EMPTY_SET
        if e.max is None:
            x = self._loop(lambda j: self.build(e.item, j), k)
        else:
            x = k
            for _ in range(e.max - e.min):      # the optional copies, innermost first
                x = k | self.build(e.item, x)
        for _ in range(e.min):
            x = self.build(e.item, x)
        return x

    def _separated(self, e: Repeat, k: frozenset) -> frozenset:
        # item (sep item)*, between min and max items
        if e.max is not None and e.max < e.min:
            return EMPTY_SET
        if e.max == 0:
            return k
        if e.max is None:
            rest = self._loop(lambda j: self.build(e.sep, self.build(e.item, j)), k)
        else:
            rest = k
            for _ in range(e.max - max(e.min, 1)):
                rest = k | self.build(e.sep, self.build(e.item, rest))
        for _ in range(max(e.min, 1) - 1):
            rest = self.build(e.sep, self.build(e.item, rest))
        out = self.build(e.item, rest)
        return out | k if e.min == 0 else out

    def _subseq(self, e: Subseq, k: frozenset) -> frozenset:
        n = len(e.items)

        reachable, may_close = e.next_items, e.may_close

        cont: list = [None] * n      # cont[i]: what may follow item i
        entry: list = [None] * n     # entry[j]: item j, then what may follow it
        for i in range(n - 1, -1, -1):
            c = k if may_close(i + 1) else EMPTY_SET
            nxt = list(reachable(i + 1))
            if nxt:
                c = c | self.build(e.sep, frozenset().union(*(entry[j] for j in nxt)))
            cont[i] = c
            entry[i] = self.build(e.items[i], c)
        out = k if may_close(0) else EMPTY_SET
        return out.union(*(entry[j] for j in reachable(0)))

    def _graph(self, e: Graph, k: frozenset) -> frozenset:
        joins = [self.new_join() for _ in range(e.num_states)]
        finals = set(e.finals)
        acc: list[set] = [set(k) if q in finals else set() for q in range(e.num_states)]
        for src, label, dst in e.edges:
            target = frozenset((joins[dst],))
            if isinstance(label, Bytes):
                if label.mask:
                    acc[src].add(self.node(label.mask, target))
            else:
                acc[src] |= self.build(label, target)
        for q, j in enumerate(joins):
            self.join[j] = frozenset(acc[q]) - {j}
        return frozenset(acc[e.start])

    def _counted(self, e: Counted, k: frozenset) -> frozenset:
        # a counted array's tag is (lo, hi, "items"); a string's stays (lo, hi); a string
        # inside a counted array or object is a tag of its own, (outer tag, string's bounds)
        bounds = (e.lo, e.hi) if e.kind == "chars" else (e.lo, e.hi, e.kind)
        outer = self._tag
        if outer >= 0:
            # a nested region's bounds: the enclosing regions' own bounds, outermost first,
            # then its own (an array in an array, a string in either, three levels at most)
            ob = self.tag_bounds[outer]
            path = ob if isinstance(ob[0], tuple) else (ob,)
            if e.kind.startswith("run:"):
                # a run (toolc.walk.runcounts) nests in a counted length only
                if len(path) != 1 or len(path[0]) != 2:
                    from .dfa import AmbiguousCountError
                    raise AmbiguousCountError("a run inside a counted array or object")
            elif len(path[-1]) != 3 or len(path) > 2 or (len(path) == 2 and e.kind != "chars"):
                # pragma: no cover - the schema compiler nests only so (arrays.countable)
                raise TypeError("a counted region nests in a counted array or object, with "
                                "a counted string at most below two of them")
            bounds = (*path, bounds)
        if bounds not in self.tag_bounds:
            self.tag_bounds.append(bounds)
            self.tag_exits.append([])
        tid = self.tag_bounds.index(bounds)
        self.tag_exits[tid].append(k)
        self._tag = tid
        try:
            return self.build(e.body, k)
        finally:
            self._tag = outer

    def _avoid(self, e: Avoid, k: frozenset) -> frozenset:
        ac = aho_corasick(e.patterns)
        if ac is None:
            return EMPTY_SET
        live, moves = ac
        joins = {q: self.new_join() for q in live}
        for q in live:
            nodes = {self.node(mask, frozenset((joins[r],))) for r, mask in moves[q]}
            self.join[joins[q]] = k | frozenset(nodes)
        return self.join[joins[0]]

    # -- reading -----------------------------------------------------------------------------

    def expand(self, s: frozenset, cache: dict) -> frozenset:
        """``s`` with its joins replaced by what they stand for (recursively)."""
        got = cache.get(s)
        if got is not None:
            return got
        is_join = self.is_join
        for x in s:
            if is_join[x]:
                break
        else:
            cache[s] = s
            return s
        out, seen = set(), set()
        stack = list(s)
        while stack:
            x = stack.pop()
            if is_join[x]:
                if x not in seen:
                    seen.add(x)
                    stack.extend(self.join[x])
            else:
                out.add(x)
        got = cache[s] = frozenset(out)
        return got

    def masks_and_symbols(self):
        labels = set(self.label)        # a few hundred distinct labels among many nodes
        labels.discard(None)
        masks = {lab for lab in labels if type(lab) is int}
        return masks, labels - masks
