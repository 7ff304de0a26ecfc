"""Subset construction, trimming, minimization and canonical numbering: Expr -> ByteDFA."""

from __future__ import annotations

import contextlib
import gc
from dataclasses import dataclass

import numpy as np

from .. import budget
from ..errors import BudgetExceededError
from .alphabet import Alphabet
from .expr import Expr
from .nfa import NFA
from .positions import FINAL, Positions


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
    with collector_paused():
        pos = Positions(max_nodes=None if max_states is None else max_states * budget.NFA_FACTOR)
        start = pos.build(expr, frozenset((FINAL,)))
        return determinize_positions(pos, start, max_states=max_states)


@contextlib.contextmanager
def collector_paused():
    """Pause Python's cyclic garbage collector while the automaton is built: the build makes
    tens of thousands of long-lived frozensets, tuples and dicts (and no cycles worth
    collecting), and the collector's passes over them cost about a sixth of the build
    (schemas/tools80: ~40 ms of ~250). ``compile_tools`` pauses it for the whole compile
    (the schemas and the walk's bookkeeping cost another 11 to 15 ms on tools80, 79 ms at
    500 tools). It runs again as before afterwards; if it was off, it stays off."""
    was_on = gc.isenabled()
    if was_on:
        gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def compile_expr_thompson(expr: Expr, *, max_states: int | None = None) -> ByteDFA:
    """The same DFA through a Thompson NFA and epsilon closures (a plain twin for tests)."""
    nfa = NFA(max_states=None if max_states is None else max_states * budget.NFA_FACTOR)
    start, final = nfa.build(expr)
    return determinize(nfa, start, final, max_states=max_states)


def determinize_positions(pos: Positions, start: frozenset, *,
                          max_states: int | None = None) -> ByteDFA:
    """Subset construction over a :class:`Positions` automaton, then trim, minimize and
    number canonically."""
    masks, symbols = pos.masks_and_symbols()
    alphabet = Alphabet.from_masks(masks, symbols)
    labels, conts = pos.label, pos.cont
    class_cache: dict = {}

    def classes(lab) -> tuple:
        cs = class_cache.get(lab)
        if cs is None:
            if type(lab) is int:
                cs = alphabet.classes_of(lab)
            else:
                cs = (alphabet.symbol_index(lab),)
            class_cache[lab] = cs
        return cs

    expand_cache: dict = {}
    expand = pos.expand
    keys: list[frozenset] = []
    intern = _interner(keys, max_states)

    # the DFA state a continuation set leads to (-1: none)
    target_of: dict[frozenset, int] = {}

    def target(cont: frozenset) -> int:
        j = target_of.get(cont)
        if j is None:
            k = expand(cont, expand_cache)
            j = target_of[cont] = intern(k) if k else -1
        return j

    intern(expand(start, expand_cache))
    row_q: list[int] = []
    row_c: list[int] = []
    row_t: list[int] = []
    i = 0
    while i < len(keys):
        if not i & 0xFF:
            budget.check("determinizing the automaton")
        k = keys[i]
        nodes = [n for n in k if n != FINAL] if FINAL in k else k
        disjoint = True
        if len(nodes) > 1:
            acc, seen_syms = 0, set()
            for n in nodes:
                val = labels[n]
                if type(val) is int:
                    if acc & val:
                        disjoint = False
                        break
                    acc |= val
                elif val in seen_syms:
                    disjoint = False
                    break
                else:
                    seen_syms.add(val)
        if disjoint:
            for n in nodes:
                j = target_of.get(conts[n])
                if j is None:
                    j = target(conts[n])
                if j >= 0:
                    cs = classes(labels[n])
                    if len(cs) == 1:
                        row_q.append(i)
                        row_c.append(cs[0])
                        row_t.append(j)
                    else:
                        row_q.extend([i] * len(cs))
                        row_c.extend(cs)
                        row_t.extend([j] * len(cs))
        else:
            by_class: dict[int, list] = {}
            for n in nodes:
                for c in classes(labels[n]):
                    by_class.setdefault(c, []).append(n)
            groups: dict[tuple, list] = {}
            for c, ns in by_class.items():
                groups.setdefault(tuple(ns), []).append(c)
            for ns, cs in groups.items():
                j = target(frozenset().union(*(conts[n] for n in ns)))
                if j >= 0:
                    row_q.extend([i] * len(cs))
                    row_c.extend(cs)
                    row_t.extend([j] * len(cs))
        i += 1
    return _finish(alphabet, len(keys), row_q, row_c, row_t,
                   np.array([FINAL in k for k in keys], dtype=bool), max_states)


def _interner(keys: list, max_states: int | None):
    """A function numbering new subset-construction states (appended to ``keys``) and
    refusing, past the budget, to number more."""
    ids: dict[frozenset, int] = {}
    limit = None if max_states is None else max_states * budget.DFA_FACTOR

    def intern(k: frozenset) -> int:
        i = ids.get(k)
        if i is None:
            i = ids[k] = len(keys)
            keys.append(k)
            if limit is not None and i >= limit:
                raise BudgetExceededError(
                    f"the automaton grew past {max_states:,} states during determinization; "
                    "raise max_states or simplify the schemas")
        return i

    return intern


def _finish(alphabet, n, row_q, row_c, row_t, is_final, max_states) -> ByteDFA:
    """The transition table from its entries; trimmed, minimized, numbered canonically."""
    trans = np.full((n, alphabet.size), -1, dtype=np.int32)
    trans[np.array(row_q, dtype=np.int64), np.array(row_c, dtype=np.int64)] = row_t
    trans, is_final = reduce_table(trans, is_final)
    if max_states is not None and trans.shape[0] > max_states:
        raise BudgetExceededError(
            f"the automaton has {trans.shape[0]:,} states, over the budget of {max_states:,}; "
            "raise max_states or simplify the schemas")
    return ByteDFA(alphabet, trans, is_final)


def reduce_table(trans: np.ndarray, final: np.ndarray):
    """:func:`trim`, :func:`minimize` and :func:`canonical` in turn (the start is state 0),
    with the edge list computed once and shared, and the quotient read straight off it."""
    edges = _edges(trans)
    rev = _by_dst(edges[2], len(final))
    dist = _distances(edges, final, rev)
    if not len(final) or dist[0] < 0:
        raise BudgetExceededError("the grammar accepts nothing: no tool call can be completed")
    if (dist < 0).any():
        trans = _cut(trans, dist >= 0)
        edges = _edges(trans)
        rev = _by_dst(edges[2], len(final))
    # states with the same language are as far from a final state: start from that partition
    # (finer than final / not final, so the first rounds have less to do)
    _, init = np.unique(dist, return_inverse=True)
    part, count = _refine_incremental(trans, final, edges, rev,
                                      (init.reshape(-1).astype(np.int64), int(init.max()) + 1))
    if not _stable(trans, final, part, edges):
        part, count = _refine(trans, final, _row_ids)
    return _quotient_canonical(trans, final, part, count, edges)


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


def trim(trans: np.ndarray, final: np.ndarray, start: int = 0):
    """Drop states unreachable from ``start`` or unable to reach a final state."""
    n, a = trans.shape
    alive = _co_reachable(_edges(trans), final)
    if not alive[start]:
        return np.zeros((0, a), dtype=np.int32), np.zeros(0, dtype=bool)
    return _cut(trans, alive), final


def _co_reachable(edges, final: np.ndarray, rev=None) -> np.ndarray:
    """The states from which a final state can be reached."""
    return _distances(edges, final, rev) >= 0


def _distances(edges, final: np.ndarray, rev=None) -> np.ndarray:
    """Each state's distance (in edges) to the nearest final state, -1 if there is none: a
    backward search over the edges, a level at a time."""
    src, _, dst = edges
    by_dst, ptr = _by_dst(dst, len(final)) if rev is None else rev
    pred = src[by_dst]
    dist = np.where(final, 0, -1)
    frontier = np.flatnonzero(final)
    level = 0
    while len(frontier):
        level += 1
        p = pred[_gather(ptr, frontier)]
        p = p[dist[p] < 0]
        dist[p] = level
        frontier = np.unique(p)
    return dist


def _gather(ptr: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The positions ptr[r]..ptr[r+1]-1 of every r in ``rows``, in that order."""
    cnt = ptr[rows + 1] - ptr[rows]
    total = int(cnt.sum())
    return np.repeat(ptr[rows] - (np.cumsum(cnt) - cnt), cnt) + np.arange(total)


def _cut(trans: np.ndarray, alive: np.ndarray) -> np.ndarray:
    """``trans`` with the dead states' rows and every edge into a dead state removed."""
    t = trans.copy()
    t[(t >= 0) & ~alive[np.maximum(t, 0)]] = -1
    t[~alive] = -1
    return t


def minimize(trans: np.ndarray, final: np.ndarray):
    """Moore partition refinement, vectorized: states equivalent iff same future language.

    Rows are compared through a 64-bit hash; the resulting partition is then checked to be
    stable (every block's members agree on finality and on every successor block), and on
    the astronomically unlikely hash collision the refinement is redone comparing rows byte
    for byte.
    """
    part, count = _refine_incremental(trans, final)
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


def _refine_sparse(trans, final):
    """Moore refinement on the edge list: a state's signature is a 64-bit hash of its block
    and of its (symbol, successor block) pairs, summed edge by edge (most states have a
    handful of edges out of ~70 symbols, so this is far cheaper than hashing dense rows)."""
    n, a = trans.shape
    src, sym = np.nonzero(trans >= 0)
    dst = trans[src, sym].astype(np.int64)
    starts = np.searchsorted(src, np.arange(n))
    has_edges = starts < np.append(starts[1:], len(src))
    m_sym = _MULT[sym % len(_MULT)]
    part = final.astype(np.int64)
    count = len(np.unique(part))
    with np.errstate(over="ignore"):
        while True:
            e = (part[dst].astype(np.uint64) + np.uint64(1)) * m_sym
            e ^= e >> np.uint64(31)
            e *= np.uint64(0x9E3779B97F4A7C15)
            h = part.astype(np.uint64) * np.uint64(0xD6E8FEB86659FD93)
            if len(src):
                h[has_edges] += np.add.reduceat(e, starts[has_edges])
            _, first, inv = np.unique(h, return_index=True, return_inverse=True)
            c = len(first)
            rank = np.empty(c, dtype=np.int64)
            rank[np.argsort(first, kind="stable")] = np.arange(c)
            part = rank[inv.reshape(-1)]
            if c == count:
                return part, count
            count = c


_GOLDEN = 0x9E3779B97F4A7C15


def _refine_incremental(trans, final, edges=None, rev=None, init=None):
    """Moore refinement that only revisits what changed.

    A state's signature is the sum, over its edges, of a 64-bit hash of (symbol, successor
    block). After a round every block is uniform: its members share the block's signature
    (``block_sig``). When states move to a new block, only their predecessors' signatures
    change, so a round looks at those states alone: in each block, the ones whose signature
    now differs from the block's are grouped by signature and split off (when none of the
    block's members kept its signature, the largest group keeps the block's number instead).
    The work is proportional to the edges into moved states, never to the size of the blocks
    they split; long literal chains (property names) take many rounds, each touching a
    handful of states. Blocks are renumbered by first appearance at the end.

    ``init`` (block of each state, number of blocks) is a starting partition in place of
    final / not final; it must keep equivalent states together (and separate final states
    from the others).
    """
    n, a = trans.shape
    src, sym, dst = _edges(trans) if edges is None else edges
    m_sym = _MULT[sym % len(_MULT)]
    # edges by destination, to find the predecessors of changed states
    by_dst, dst_ptr = _by_dst(dst, n) if rev is None else rev

    def edge_hash(block_of_dst, m):
        with np.errstate(over="ignore"):
            e = (block_of_dst.astype(np.uint64) + np.uint64(1)) * m
            e ^= e >> np.uint64(31)
            e *= np.uint64(_GOLDEN)
        return e

    if init is None:
        part, count = final.astype(np.int64), 2
    else:
        part, count = init
        part = part.copy()
    e_val = edge_hash(part[dst], m_sym)
    sig = np.zeros(n, dtype=np.uint64)
    if len(src):
        # src is sorted (row-major edges): one reduceat per state with edges
        starts = np.searchsorted(src, np.arange(n))
        has_edges = starts < np.append(starts[1:], len(src))
        with np.errstate(over="ignore"):
            sig[has_edges] = np.add.reduceat(e_val, starts[has_edges])
    # block sizes and signatures, with room for every block there can be; in the first round
    # every state is a candidate, so any starting block signature will do
    size = np.zeros(n + count, dtype=np.int64)
    size[:count] = np.bincount(part, minlength=count)
    block_sig = np.zeros(n + count, dtype=np.uint64)
    candidates = np.arange(n)          # the states whose signature may have changed
    while len(candidates):
        budget.check("minimizing the automaton")
        c = candidates[sig[candidates] != block_sig[part[candidates]]]
        if not len(c):
            break
        b, h = part[c], sig[c]
        order = np.lexsort((h, b))          # stable: members stay in increasing order
        c, b, h = c[order], b[order], h[order]
        new_group = np.ones(len(c), dtype=bool)
        new_group[1:] = (b[1:] != b[:-1]) | (h[1:] != h[:-1])
        g_start = np.flatnonzero(new_group)
        g_size = np.diff(np.append(g_start, len(c)))
        g_block, g_sig, g_first = b[g_start], h[g_start], c[g_start]
        # per block: how many of its members the groups take
        new_block = np.ones(len(g_block), dtype=bool)
        new_block[1:] = g_block[1:] != g_block[:-1]
        b_start = np.flatnonzero(new_block)
        taken = np.add.reduceat(g_size, b_start)
        emptied = taken == size[g_block[b_start]]
        # in an emptied block, the largest group (the one with the smallest state among
        # equals) keeps the block's number and gives it its signature
        keeps = np.zeros(len(g_block), dtype=bool)
        if emptied.any():
            pick = np.lexsort((g_first, -g_size, g_block))
            first_in_block = np.ones(len(pick), dtype=bool)
            pb = g_block[pick]
            first_in_block[1:] = pb[1:] != pb[:-1]
            keeper = pick[first_in_block]          # one per block, in block order
            keeper = keeper[emptied]
            keeps[keeper] = True
            block_sig[g_block[keeper]] = g_sig[keeper]
        fresh = np.flatnonzero(~keeps)
        if not len(fresh):
            break
        fresh = fresh[np.argsort(g_first[fresh], kind="stable")]
        k = len(fresh)
        ids = np.arange(count, count + k)
        count += k
        np.subtract.at(size, g_block[fresh], g_size[fresh])
        size[ids] = g_size[fresh]
        block_sig[ids] = g_sig[fresh]
        g_new = np.full(len(g_block), -1, dtype=np.int64)
        g_new[fresh] = ids
        grp = np.cumsum(new_group) - 1
        mv = g_new[grp] >= 0
        moved = c[mv]
        part[moved] = g_new[grp][mv]
        # update the signatures of the predecessors of moved states
        cnt = dst_ptr[moved + 1] - dst_ptr[moved]
        total = int(cnt.sum())
        if not total:
            break
        if total * 4 > len(src):
            # most edges changed (the first rounds): recompute every signature outright
            e_val = edge_hash(part[dst], m_sym)
            new_sig = np.zeros(n, dtype=np.uint64)
            with np.errstate(over="ignore"):
                new_sig[has_edges] = np.add.reduceat(e_val, starts[has_edges])
            candidates = np.flatnonzero(new_sig != sig)
            sig = new_sig
            continue
        rep = np.repeat(dst_ptr[moved] - (np.cumsum(cnt) - cnt), cnt)
        eidx = np.sort(by_dst[rep + np.arange(total)])
        new_e = edge_hash(part[dst[eidx]], m_sym[eidx])
        with np.errstate(over="ignore"):
            delta = new_e - e_val[eidx]
        e_val[eidx] = new_e
        s = src[eidx]                       # sorted, since eidx is
        first = np.ones(len(s), dtype=bool)
        first[1:] = s[1:] != s[:-1]
        at = np.flatnonzero(first)
        candidates = s[at]
        with np.errstate(over="ignore"):
            sig[candidates] += np.add.reduceat(delta, at)
    return _renumber(part)


def _edges(trans):
    """The edge list of a table, row-major: (source, symbol, destination) arrays."""
    flat = trans.ravel()
    idx = np.flatnonzero(flat >= 0)        # flat: about half the time of a 2-D np.nonzero
    src, sym = np.divmod(idx, trans.shape[1])
    return src, sym, flat[idx].astype(np.int64)


def _by_dst(dst: np.ndarray, n: int):
    """The edges in order of destination, and where each state's incoming edges start."""
    by_dst = np.argsort(dst, kind="stable")
    return by_dst, np.searchsorted(dst[by_dst], np.arange(n + 1))


def _renumber(part):
    """Block numbers in order of first appearance, and their count."""
    _, first, inv = np.unique(part, return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    return rank[inv.reshape(-1)], len(first)


def _stable(trans, final, part, edges=None) -> bool:
    """Is ``part`` a congruence: within each block, the same finality and successor blocks?

    Each state is compared with its block's first state: the same finality, as many edges,
    and each of its edges matched by an edge of the first state on the same symbol into the
    same block (so the same symbols, too)."""
    src, sym, dst = _edges(trans) if edges is None else edges
    n = len(part)
    reps = np.zeros(int(part.max()) + 1 if n else 0, dtype=np.int64)
    reps[part[::-1]] = np.arange(n)[::-1]
    r = reps[part]
    if not np.array_equal(final, final[r]):
        return False
    deg = np.bincount(src, minlength=n)
    if not np.array_equal(deg, deg[r]):
        return False
    t = trans[r[src], sym]
    return bool((t >= 0).all() and np.array_equal(part[t], part[dst]))


def _quotient_canonical(trans, final, part, count, edges):
    """The quotient of ``trans`` by the partition ``part``, numbered canonically from the
    start's block: what :func:`canonical` makes of :func:`minimize`'s table, read straight
    off the edges of each block's first state."""
    src, sym, dst = edges
    n, a = trans.shape
    reps = np.zeros(count, dtype=np.int64)
    reps[part[::-1]] = np.arange(n)[::-1]           # first state of each block
    own = reps[part[src]] == src
    bs, bc, bd = part[src[own]], sym[own], part[dst[own]]
    order = np.argsort(bs, kind="stable")           # by block; by symbol within one
    bs, bc, bd = bs[order], bc[order], bd[order]
    ptr = np.searchsorted(bs, np.arange(count + 1))
    # breadth-first, a level at a time: a block's number is its first appearance among the
    # previous level's edges (blocks in order, symbols in order), as a queue would have it
    ids, queue = _bfs_numbering(int(part[0]), count, lambda f: bd[_gather(ptr, f)])
    t = np.full((len(queue), a), -1, dtype=np.int32)
    row = ids[bs]
    ok = row >= 0
    t[row[ok], bc[ok]] = ids[bd[ok]]
    return t, final[reps[queue]]


def _bfs_numbering(start: int, n: int, successors) -> tuple[np.ndarray, np.ndarray]:
    """Breadth-first numbers of ``n`` states from ``start``, a level at a time: a state's
    number is its first appearance in ``successors(frontier)`` (the previous level's edges,
    states in order, symbols in order), exactly as a queue would number them. Returns the
    numbers (-1 where unreached) and the states in numbering order."""
    ids = np.full(n, -1, dtype=np.int64)
    ids[start] = 0
    levels = [np.array([start], dtype=np.int64)]
    m = 1
    frontier = levels[0]
    while len(frontier):
        succ = successors(frontier)
        succ = succ[ids[succ] < 0]
        if not len(succ):
            break
        _, first = np.unique(succ, return_index=True)
        frontier = succ[np.sort(first)]
        ids[frontier] = np.arange(m, m + len(frontier))
        m += len(frontier)
        levels.append(frontier)
    return ids, np.concatenate(levels)


def _odd_multipliers(n: int, seed: int) -> np.ndarray:
    """``n`` odd 64-bit constants from a splitmix64 sequence (numpy.random costs 8 ms to
    import). They only spread hashes: the partitions they help find are checked exactly."""
    out, x, mask = [], seed, (1 << 64) - 1
    for _ in range(n):
        x = (x + 0x9E3779B97F4A7C15) & mask
        z = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        out.append((z ^ (z >> 31)) | 1)
    return np.array(out, dtype=np.uint64)


_MULT = _odd_multipliers(4096, 0x7001C)


def _row_ids(rows: np.ndarray) -> tuple[np.ndarray, int]:
    """Number equal rows alike (in order of first appearance); return (ids, count)."""
    seen: dict[bytes, int] = {}
    width = rows.shape[1] * rows.itemsize
    buf = rows.tobytes()
    ids = np.fromiter((seen.setdefault(buf[i:i + width], len(seen))
                       for i in range(0, len(buf), width)), dtype=np.int64, count=rows.shape[0])
    return ids, len(seen)


def canonical(trans: np.ndarray, final: np.ndarray, start: int = 0):
    """Renumber states in breadth-first order from ``start``, symbols in alphabet order.

    Level by level: a state's number is its first appearance in the row-major order of the
    previous level's transitions, which is exactly the order of a queue-based BFS.
    """
    def successors(frontier):
        succ = trans[frontier].reshape(-1)
        return succ[succ >= 0]

    new_id, order = _bfs_numbering(start, trans.shape[0], successors)
    t = trans[order]
    t = np.where(t >= 0, new_id[np.maximum(t, 0)], -1).astype(np.int32)
    return t, final[order]
