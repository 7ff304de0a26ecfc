"""Subset construction, trimming, minimization and canonical numbering: Expr -> ByteDFA."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from .. import budget
from ..errors import BudgetExceededError
from .alphabet import Alphabet
from .expr import Expr
from .nfa import NFA


@dataclass(frozen=True)
class ByteDFA:
    """A minimized, canonically numbered DFA over an :class:`Alphabet`.

    ``trans[q, a]`` is the next state on alphabet index ``a`` or -1 (dead). State 0 is the start.
    ``final[q]`` marks the states where the whole language has been read (after EOS).
    Every state can still reach a final state: dead ends are trimmed away.
    """

    alphabet: Alphabet
    trans: np.ndarray   # int32[n, alphabet.size]
    final: np.ndarray   # bool[n]

    @property
    def num_states(self) -> int:
        return int(self.trans.shape[0])

    def step_bytes(self, q: int, data: bytes) -> int:
        """The state after ``data`` from ``q`` (-1 once dead); the plain, slow way."""
        for b in data:
            if q < 0:
                return -1
            q = int(self.trans[q, self.alphabet.byte_class[b]])
        return q

    def step_symbol(self, q: int, name: str) -> int:
        if q < 0 or name not in self.alphabet.symbols:
            return -1
        return int(self.trans[q, self.alphabet.symbol_index(name)])


def compile_expr(expr: Expr, *, max_states: int | None = None) -> ByteDFA:
    nfa = NFA(max_states=None if max_states is None else max_states * 8)
    start, final = nfa.build(expr)
    return determinize(nfa, start, final, max_states=max_states)


def _collect_labels(nfa: NFA):
    masks, symbols = set(), set()
    for edges in nfa.edges:
        for (kind, val), _ in edges:
            (masks if kind == "b" else symbols).add(val)
    return masks, symbols


def determinize(nfa: NFA, start: int, final: int, *, max_states: int | None = None) -> ByteDFA:
    masks, symbols = _collect_labels(nfa)
    alphabet = Alphabet.from_masks(masks, symbols)
    class_cache: dict[int, tuple[int, ...]] = {}
    # per NFA state: alphabet index -> targets
    out: list[dict[int, list[int]] | None] = [None] * len(nfa.eps)

    def out_of(s: int) -> dict[int, list[int]]:
        o = out[s]
        if o is None:
            o = {}
            for (kind, val), t in nfa.edges[s]:
                if kind == "b":
                    cs = class_cache.get(val)
                    if cs is None:
                        cs = class_cache[val] = alphabet.classes_of(val)
                else:
                    cs = (alphabet.symbol_index(val),)
                for c in cs:
                    o.setdefault(c, []).append(t)
            out[s] = o
        return o

    closure_cache: dict[int, frozenset] = {}

    def closure1(s: int) -> frozenset:
        c = closure_cache.get(s)
        if c is None:
            seen = {s}
            stack = [s]
            while stack:
                x = stack.pop()
                for y in nfa.eps[x]:
                    if y not in seen:
                        seen.add(y)
                        stack.append(y)
            # keep the kernel: states with labelled edges, and the final state
            c = frozenset(x for x in seen if nfa.edges[x] or x == final)
            closure_cache[s] = c
        return c

    def kernel(targets) -> frozenset:
        if len(targets) == 1:
            return closure1(next(iter(targets)))
        acc = set()
        for t in targets:
            acc |= closure1(t)
        return frozenset(acc)

    ids: dict[frozenset, int] = {}
    keys: list[frozenset] = []
    rows: list[dict[int, int]] = []

    def intern(k: frozenset) -> int:
        i = ids.get(k)
        if i is None:
            i = ids[k] = len(keys)
            keys.append(k)
            if max_states is not None and i >= max_states * 4:
                raise BudgetExceededError(
                    f"the automaton grew past {max_states:,} states during determinization; "
                    "raise max_states or simplify the schemas")
        return i

    intern(kernel([start]))
    i = 0
    target_cache: dict[frozenset, int] = {}
    while i < len(keys):
        if not i & 0xFF:
            budget.check("determinizing the automaton")
        moves: dict[int, set] = {}
        for s in keys[i]:
            for c, ts in out_of(s).items():
                m = moves.get(c)
                if m is None:
                    moves[c] = set(ts)
                else:
                    m.update(ts)
        row = {}
        for c, ts in moves.items():
            fs = frozenset(ts)
            j = target_cache.get(fs)
            if j is None:
                k = kernel(fs)
                j = target_cache[fs] = intern(k) if k else -1
            if j >= 0:
                row[c] = j
        rows.append(row)
        i += 1

    n = len(keys)
    trans = np.full((n, alphabet.size), -1, dtype=np.int32)
    for q, row in enumerate(rows):
        if row:
            trans[q, list(row.keys())] = list(row.values())
    is_final = np.array([final in k for k in keys], dtype=bool)
    trans, is_final = trim(trans, is_final)
    if trans.shape[0] == 0:
        raise BudgetExceededError("the grammar accepts nothing: no tool call can be completed")
    trans, is_final, start_block = minimize(trans, is_final)
    trans, is_final = canonical(trans, is_final, start_block)
    if max_states is not None and trans.shape[0] > max_states:
        raise BudgetExceededError(
            f"the automaton has {trans.shape[0]:,} states, over the budget of {max_states:,}; "
            "raise max_states or simplify the schemas")
    return ByteDFA(alphabet, trans, is_final)


def trim(trans: np.ndarray, final: np.ndarray, start: int = 0):
    """Drop states unreachable from ``start`` or unable to reach a final state."""
    n, a = trans.shape
    src = np.repeat(np.arange(n, dtype=np.int64), a)
    dst = trans.reshape(-1).astype(np.int64)
    ok = dst >= 0
    src, dst = src[ok], dst[ok]
    # co-reachable: reverse BFS from final states
    order = np.argsort(dst, kind="stable")
    rsrc, rdst = src[order], dst[order]
    ptr = np.searchsorted(rdst, np.arange(n + 1))
    alive = final.copy()
    frontier = list(np.flatnonzero(final))
    while frontier:
        nxt = []
        for q in frontier:
            for p in rsrc[ptr[q]:ptr[q + 1]]:
                if not alive[p]:
                    alive[p] = True
                    nxt.append(int(p))
        frontier = nxt
    if not alive[start]:
        return np.zeros((0, a), dtype=np.int32), np.zeros(0, dtype=bool)
    t = trans.copy()
    t[(t >= 0) & ~alive[np.maximum(t, 0)]] = -1
    t[~alive] = -1
    return t, final


def minimize(trans: np.ndarray, final: np.ndarray):
    """Moore partition refinement, vectorized: states equivalent iff same future language.

    Rows are compared through a 64-bit hash; the resulting partition is then checked to be
    stable (every block's members agree on finality and on every successor block), and on
    the astronomically unlikely hash collision the refinement is redone comparing rows byte
    for byte.
    """
    part, count = _refine(trans, final, _row_ids_hashed)
    if not _stable(trans, final, part):
        part, count = _refine(trans, final, _row_ids)
    n = trans.shape[0]
    reps = np.zeros(count, dtype=np.int64)
    reps[part[::-1]] = np.arange(n)[::-1]  # first state of each block
    t = trans[reps]
    t = np.where(t >= 0, part[np.maximum(t, 0)], -1).astype(np.int32)
    return t, final[reps], int(part[0]) if n else 0


def _refine(trans, final, row_ids):
    part = final.astype(np.int64)
    count = len(np.unique(part))
    while True:
        budget.check("minimizing the automaton")
        succ = np.where(trans >= 0, part[np.maximum(trans, 0)], -1)
        sig = np.ascontiguousarray(np.concatenate([part[:, None], succ], axis=1))
        new, c = row_ids(sig)
        part = new
        if c == count:
            return part, count
        count = c


def _stable(trans, final, part) -> bool:
    """Is ``part`` a congruence: within each block, the same finality and successor blocks?"""
    succ = np.where(trans >= 0, part[np.maximum(trans, 0)], -1)
    n = len(part)
    reps = np.zeros(int(part.max()) + 1 if n else 0, dtype=np.int64)
    reps[part] = np.arange(n)
    return bool(np.array_equal(succ, succ[reps[part]])
                and np.array_equal(final, final[reps[part]]))


_MULT = np.random.default_rng(0x7001C).integers(1, 2**63, size=4096, dtype=np.uint64) | np.uint64(1)


def _row_ids_hashed(rows: np.ndarray) -> tuple[np.ndarray, int]:
    width = rows.shape[1]
    if width > len(_MULT):
        return _row_ids(rows)
    with np.errstate(over="ignore"):
        h = (rows.astype(np.uint64) * _MULT[:width]).sum(axis=1, dtype=np.uint64)
        h ^= h >> np.uint64(29)
    _, first, inv = np.unique(h, return_index=True, return_inverse=True)
    # number blocks in order of first appearance, like _row_ids
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    return rank[inv.reshape(-1)], len(first)


def _row_ids(rows: np.ndarray) -> tuple[np.ndarray, int]:
    """Number equal rows alike (in order of first appearance); return (ids, count)."""
    seen: dict[bytes, int] = {}
    width = rows.shape[1] * rows.itemsize
    buf = rows.tobytes()
    ids = np.fromiter((seen.setdefault(buf[i:i + width], len(seen))
                       for i in range(0, len(buf), width)), dtype=np.int64, count=rows.shape[0])
    return ids, len(seen)


def canonical(trans: np.ndarray, final: np.ndarray, start: int = 0):
    """Renumber states in breadth-first order from ``start``, symbols in alphabet order."""
    n = trans.shape[0]
    new_id = np.full(n, -1, dtype=np.int64)
    order = []
    new_id[start] = 0
    order.append(start)
    dq = deque([start])
    while dq:
        q = dq.popleft()
        for r in trans[q]:
            if r >= 0 and new_id[r] < 0:
                new_id[r] = len(order)
                order.append(int(r))
                dq.append(int(r))
    order = np.array(order, dtype=np.int64)
    t = trans[order]
    t = np.where(t >= 0, new_id[np.maximum(t, 0)], -1).astype(np.int32)
    return t, final[order]
