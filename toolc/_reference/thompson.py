"""Subset construction over a Thompson NFA with epsilon closures: the plain twin of
:func:`toolc.fsm.dfa.determinize_positions`, for tests."""

from __future__ import annotations

import numpy as np

from .. import budget
from ..fsm.alphabet import Alphabet
from ..fsm.dfa import ByteDFA, _finish, _interner
from ..fsm.expr import Expr
from .nfa import NFA


def _collect_labels(nfa: NFA):
    masks, symbols = set(), set()
    for edges in nfa.edges:
        for (kind, val), _ in edges:
            (masks if kind == "b" else symbols).add(val)
    return masks, symbols


def determinize(nfa: NFA, start: int, final: int, *, max_states: int | None = None) -> ByteDFA:
    """Subset construction over a Thompson NFA with epsilon closures: the plain twin of
    :func:`determinize_positions`, kept for tests."""
    masks, symbols = _collect_labels(nfa)
    alphabet = Alphabet.from_masks(masks, symbols)
    class_cache: dict[int, tuple[int, ...]] = {}
    edges, eps = nfa.edges, nfa.eps
    # per NFA state: [(targets, alphabet indices)], each index in one group, built on first use
    out: list[list | None] = [None] * len(eps)

    def classes(mask: int) -> tuple[int, ...]:
        cs = class_cache.get(mask)
        if cs is None:
            cs = class_cache[mask] = alphabet.classes_of(mask)
        return cs

    def out_of(s: int) -> list:
        o = out[s]
        if o is None:
            # usually the edges' labels are disjoint: group them by target, a mask each
            acc, disjoint = 0, True
            byte_groups: dict[int, int] = {}
            sym_groups: dict[int, list] = {}
            for (kind, val), t in edges[s]:
                if kind == "b":
                    if acc & val:
                        disjoint = False
                        break
                    acc |= val
                    byte_groups[t] = byte_groups.get(t, 0) | val
                else:
                    c = alphabet.symbol_index(val)
                    if any(c in cs for cs in sym_groups.values()):
                        disjoint = False
                        break
                    sym_groups.setdefault(t, []).append(c)
            if disjoint:
                o = [((t,), classes(m)) for t, m in byte_groups.items()]
                o += [((t,), tuple(cs)) for t, cs in sym_groups.items()]
            else:
                by: dict[int, list[int]] = {}
                for (kind, val), t in edges[s]:
                    cs = classes(val) if kind == "b" else (alphabet.symbol_index(val),)
                    for c in cs:
                        ts = by.setdefault(c, [])
                        if t not in ts:
                            ts.append(t)
                regroup: dict[tuple, list] = {}
                for c, ts in by.items():
                    regroup.setdefault(tuple(sorted(ts)), []).append(c)
                o = [(ts, tuple(cs)) for ts, cs in regroup.items()]
            out[s] = o
        return o

    closure_cache: dict[int, frozenset] = {}

    def closure1(s: int) -> frozenset:
        # the kernel of s's epsilon closure: states with labelled edges, and the final state;
        # closures already computed are reused whole instead of walked again
        c = closure_cache.get(s)
        if c is None:
            if not eps[s]:
                c = closure_cache[s] = frozenset((s,)) if (edges[s] or s == final) else \
                    frozenset()
                return c
            seen = {s}
            stack = [s]
            acc = set()
            while stack:
                x = stack.pop()
                if x != s:
                    done = closure_cache.get(x)
                    if done is not None:
                        acc |= done
                        continue
                if edges[x] or x == final:
                    acc.add(x)
                for y in eps[x]:
                    if y not in seen:
                        seen.add(y)
                        stack.append(y)
            c = closure_cache[s] = frozenset(acc)
        return c

    keys: list[frozenset] = []
    intern = _interner(keys, max_states)

    # the DFA state a set of NFA targets leads to (-1: none)
    by_targets: dict[frozenset, int] = {}
    intern(closure1(start))
    row_q: list[int] = []
    row_c: list[int] = []
    row_t: list[int] = []
    i = 0
    while i < len(keys):
        if not i & 0xFF:
            budget.check("determinizing the automaton")
        moves: dict[int, set] = {}
        for s in keys[i]:
            for ts, cs in out_of(s):
                for c in cs:
                    moves.setdefault(c, set()).update(ts)
        for c, ts in moves.items():
            fs = frozenset(ts)
            j = by_targets.get(fs)
            if j is None:
                kk = frozenset().union(*map(closure1, fs))
                j = by_targets[fs] = intern(kk) if kk else -1
            if j >= 0:
                row_q.append(i)
                row_c.append(c)
                row_t.append(j)
        i += 1
    return _finish(alphabet, len(keys), row_q, row_c, row_t,
                   np.array([final in k for k in keys], dtype=bool), max_states)


def compile_expr_thompson(expr: Expr, *, max_states: int | None = None) -> ByteDFA:
    """The same DFA through a Thompson NFA and epsilon closures (a plain twin for tests)."""
    nfa = NFA(max_states=None if max_states is None else max_states * budget.NFA_FACTOR)
    start, final = nfa.build(expr)
    return determinize(nfa, start, final, max_states=max_states)
