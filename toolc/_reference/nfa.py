"""Thompson construction: an :class:`~toolc.fsm.expr.Expr` to an epsilon-NFA.

Labels are ``("b", mask)`` for a byte set or ``("s", name)`` for a special symbol. Every
fragment has an entry with no incoming edge from inside it and an exit with no outgoing edge,
so fragments can be joined by epsilon edges freely.
"""

from __future__ import annotations

from ..fsm.avoid import aho_corasick
from ..fsm.expr import Alt, Avoid, Bytes, Expr, Graph, Repeat, Seq, Subseq, Sym, Tagged
from .. import budget


class NFA:
    def __init__(self, max_states: int | None = None):
        self.eps: list[list[int]] = []
        self.edges: list[list[tuple[tuple, int]]] = []
        self.max_states = max_states

    def new(self) -> int:
        self.eps.append([])
        self.edges.append([])
        n = len(self.eps)
        budget.check_node(n, self.max_states)
        return n - 1

    def build(self, e: Expr) -> tuple[int, int]:
        """Add the fragment for ``e``; return its (entry, exit)."""
        s, f = self.new(), self.new()
        self._into(e, s, f)
        return s, f

    def _into(self, e: Expr, s: int, f: int) -> None:
        """Add states so that the paths from ``s`` to ``f`` spell exactly ``e``."""
        if isinstance(e, Bytes):
            if e.mask:
                self.edges[s].append((("b", e.mask), f))
        elif isinstance(e, Sym):
            self.edges[s].append((("s", e.name), f))
        elif isinstance(e, Seq):
            cur = s
            for i, it in enumerate(e.items):
                nxt = f if i == len(e.items) - 1 else self.new()
                self._into(it, cur, nxt)
                cur = nxt
            if not e.items:
                self.eps[s].append(f)
        elif isinstance(e, Alt):
            for it in e.items:
                a, b = self.build(it)
                self.eps[s].append(a)
                self.eps[b].append(f)
        elif isinstance(e, Repeat):
            self._repeat(e, s, f)
        elif isinstance(e, Subseq):
            self._subseq(e, s, f)
        elif isinstance(e, Avoid):
            self._avoid(e, s, f)
        elif isinstance(e, Graph):
            self._graph(e, s, f)
        elif isinstance(e, Tagged):     # the automaton's language: the counter is apart
            self._into(e.body, s, f)
        else:  # pragma: no cover - a programming error, not an input error
            raise TypeError(f"not an Expr: {e!r}")

    def _repeat(self, e: Repeat, s: int, f: int) -> None:
        if e.max is not None and e.max < e.min:
            return  # no count fits the bounds: no path from s to f
        if e.sep is not None:
            self._separated(e, s, f)
            return
        cur = s
        for _ in range(e.min):
            nxt = self.new()
            self._into(e.item, cur, nxt)
            cur = nxt
        if e.max is None:
            a, b = self.build(e.item)
            self.eps[cur].append(a)
            self.eps[b].append(a)
            self.eps[b].append(f)
            self.eps[cur].append(f)
            return
        for _ in range(e.max - e.min):
            nxt = self.new()
            self.eps[cur].append(f)
            self._into(e.item, cur, nxt)
            cur = nxt
        self.eps[cur].append(f)

    def _separated(self, e: Repeat, s: int, f: int) -> None:
        # item (sep item)*, bounded or not; the unbounded tail shares one item fragment
        if e.max == 0:
            self.eps[s].append(f)
            return
        if e.min == 0:
            self.eps[s].append(f)
        cur = s
        for _ in range(max(e.min, 1) - 1):      # the required items but the last, each + sep
            nxt, mid = self.new(), self.new()
            self._into(e.item, cur, mid)
            self._into(e.sep, mid, nxt)
            cur = nxt
        if e.max is None:
            a, b = self.build(e.item)
            sa, sb = self.build(e.sep)
            self.eps[cur].append(a)
            self.eps[b].append(f)
            self.eps[b].append(sa)
            self.eps[sb].append(a)
            return
        nxt = self.new()
        self._into(e.item, cur, nxt)           # the last required item (or the first one)
        cur = nxt
        for _ in range(e.max - max(e.min, 1)):  # the optional ones, each after a sep
            self.eps[cur].append(f)
            mid, nxt = self.new(), self.new()
            self._into(e.sep, cur, mid)
            self._into(e.item, mid, nxt)
            cur = nxt
        self.eps[cur].append(f)

    def _subseq(self, e: Subseq, s: int, f: int) -> None:
        # one separator after each item, leading to every item that may come next: the
        # separator's states are not repeated per next item, so subset construction tracks
        # one path through ", " instead of one per optional property
        n = len(e.items)
        frags = [self.build(it) for it in e.items]
        after = [self.new() for _ in range(n)]
        for j in range(n):
            self.eps[frags[j][1]].append(after[j])

        reachable, may_close = e.next_items, e.may_close

        for j in reachable(0):
            self.eps[s].append(frags[j][0])
        if may_close(0):
            self.eps[s].append(f)
        for i in range(n):
            nxt = list(reachable(i + 1))
            if nxt:
                a, b = self.build(e.sep)
                self.eps[after[i]].append(a)
                for j in nxt:
                    self.eps[b].append(frags[j][0])
            if may_close(i + 1):
                self.eps[after[i]].append(f)

    def _graph(self, e: Graph, s: int, f: int) -> None:
        node = [self.new() for _ in range(e.num_states)]
        self.eps[s].append(node[e.start])
        for q in e.finals:
            self.eps[node[q]].append(f)
        for src, label, dst in e.edges:
            if isinstance(label, Bytes):
                if label.mask:
                    self.edges[node[src]].append((("b", label.mask), node[dst]))
            else:
                a, b = self.build(label)
                self.eps[node[src]].append(a)
                self.eps[b].append(node[dst])

    def _avoid(self, e: Avoid, s: int, f: int) -> None:
        # the Aho-Corasick automaton over the patterns; every live state may stop
        ac = aho_corasick(e.patterns)
        if ac is None:
            return  # the empty pattern: every string contains it, so nothing is accepted
        live, moves = ac
        node = {q: self.new() for q in live}
        self.eps[s].append(node[0])
        for q in live:
            for r, mask in moves[q]:
                self.edges[node[q]].append((("b", mask), node[r]))
            self.eps[node[q]].append(f)
