"""Trimming, minimization and canonical numbering of a DFA's transition table, in numpy.

:func:`reduce_table` is what the compiler uses: it trims dead states, refines the partition
incrementally (:func:`_refine_incremental`) from the states' distances to a final state, checks
the result exactly (:func:`_stable`; a dense refinement decides after a hash collision) and
reads the canonically numbered quotient off the edges. ``toolc._reference.minimize`` keeps the
same steps as separate, plainer passes for the tests.
"""

from __future__ import annotations

import numpy as np

from .. import budget
from ..errors import EmptyLanguageError
from ..runtime.arrays import ranges
from .trim import _by_dst, _cut_edges, _distances, _edges


def reduce_table(trans: np.ndarray, final: np.ndarray, labels: np.ndarray | None = None,
                 hint: np.ndarray | None = None, where: bool = False):
    """:func:`trim`, :func:`minimize` and :func:`canonical` in turn (the start is state 0),
    with the edge list computed once and shared, and the quotient read straight off it.

    With ``labels`` (int per state, >= -1: counted-region tags), states with different labels
    are never merged, and the labels of the result are returned too. ``hint`` (int64 per
    state) must be equal on equivalent states: the refinement starts from the partition it
    draws beside the distances (fewer rounds where it separates much; the result is the
    same, the refinement being exact from any partition that keeps equivalent states
    together). ``where``: also return each state's state in the result (-1: none)."""
    if labels is not None:
        # the label rides along in the finality key: the refinement and the checks compare
        # keys for equality only
        key = final.astype(np.int64) + 2 * (labels.astype(np.int64) + 1)
        t, k, at = _reduce(trans, final, key, hint)
        return (t, (k & 1).astype(bool), (k >> 1) - 1) + ((at,) if where else ())
    t, f, at = _reduce(trans, final, None, hint)
    return (t, f, at) if where else (t, f)


def _reduce(trans, final, key, hint=None):
    edges = _edges(trans)
    rev = _by_dst(edges[2], len(final))
    dist = _distances(edges, final, rev)
    if not len(final) or dist[0] < 0:
        raise EmptyLanguageError("the grammar accepts nothing: no tool call can be completed")
    if (dist < 0).any():
        trans, edges, rev = _cut_edges(trans, dist >= 0, edges, rev)
    # states with the same language are as far from a final state and spell the same literal
    # chains (:func:`_chain_hashes`): start from that partition, and the hint's
    fin = final if key is None else key
    base = dist.astype(np.uint64)
    if hint is not None:
        with np.errstate(over="ignore"):
            base = hint.view(np.uint64) * np.uint64(_GOLDEN) + base
    chain = _chain_hashes(final, edges, base)
    if key is None:
        # one hashed column (sorting pairs of columns costs ten times more): a collision
        # only starts two states together; the finality bit stays exact
        with np.errstate(over="ignore"):
            mixed = chain << np.uint64(1) | final.astype(np.uint64)
        _, init = np.unique(mixed, return_inverse=True)
    else:
        _, init = np.unique(np.stack([chain.view(np.int64), key]), axis=1,
                            return_inverse=True)
    part, count = _refine_incremental(trans, fin, edges, rev,
                                      (init.reshape(-1).astype(np.int64), int(init.max()) + 1))
    if not _stable(trans, fin, part, edges):
        part, count = _refine(trans, fin, _row_ids)
    return _quotient_canonical(trans, fin, part, count, edges)


_CHAIN = 0xD6E8FEB86659FD93     # odd: the chain hashes' polynomial base


def _chain_hashes(final: np.ndarray, edges, base: np.ndarray) -> np.ndarray:
    """uint64 per state: ``base`` off literal chains; on one (a state not final with one
    edge), the hash of the columns the chain reads and of ``base`` where it ends,
    ``h(q) = m(column) + B * h(next)`` (mod 2**64). Equivalent states (of a trimmed table)
    read the same column into equivalent states, so their hashes are equal wherever ``base``
    is on equivalent states; chains that spell different words start apart (the refinement
    splits them one state per round). By pointer doubling: log2 L rounds for a chain of L."""
    src, sym, dst = edges
    h = base.copy()
    q = np.flatnonzero((np.bincount(src, minlength=len(base)) == 1) & ~final)
    if not len(q):
        return h
    e = np.searchsorted(src, q)             # src is sorted: each state's only edge
    term = dst[e]
    at = np.full(len(base), -1, dtype=np.int64)
    at[q] = np.arange(len(q))
    nxt = at[term]                           # the next state's place in q; -1: chain's end
    acc = _MULT[sym[e] % len(_MULT)]
    mult = np.full(len(q), _CHAIN, dtype=np.uint64)
    for _ in range(64):
        k = np.flatnonzero(nxt >= 0)
        if not len(k):
            break
        j = nxt[k]
        with np.errstate(over="ignore"):
            acc[k] = acc[k] + mult[k] * acc[j]
            mult[k] = mult[k] * mult[j]
        term[k] = term[j]
        nxt[k] = nxt[j]
    else:       # a cycle of chain states (none in a trimmed table): base alone is valid
        return h
    with np.errstate(over="ignore"):
        h[q] = acc + mult * base[term]
    return h


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
        if len(candidates) <= _FEW:
            # the long tail of rounds (literal chains) moves a handful of states each
            _refine_few(candidates, part, count, sig, block_sig, size, e_val,
                        (src, dst, m_sym, by_dst, dst_ptr), edge_hash)
            break
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
        candidates = _moved_signatures(moved, cnt, part, e_val, sig,
                                       (src, dst, m_sym, by_dst, dst_ptr), edge_hash)
    return _renumber(part)


_FEW = 256          # candidates below which a round groups them in plain Python


def _refine_few(candidates, part, count, sig, block_sig, size, e_val, graph, edge_hash):
    """The rounds of :func:`_refine_incremental` from ``candidates`` on, the same rule and
    the same hashes, for rounds that move few states: the candidates are grouped by (block,
    signature) in Python (a numpy round costs some fifty calls, most of them for this), the
    signatures of the moved states' predecessors updated in numpy. ``part`` (and the other
    arrays) are updated in place."""
    src, dst, m_sym, by_dst, dst_ptr = graph
    bsig = block_sig.tolist()
    sz = size.tolist()
    count = int(count)
    while len(candidates):
        budget.check("minimizing the automaton")
        groups: dict = {}
        for s, b, h in zip(candidates.tolist(), part[candidates].tolist(),
                           sig[candidates].tolist()):
            if h != bsig[b]:
                g = groups.get((b, h))
                if g is None:
                    groups[b, h] = [s]
                else:
                    g.append(s)
        if not groups:
            break
        by_block: dict = {}
        for (b, h), ms in groups.items():
            g = by_block.get(b)
            if g is None:
                by_block[b] = [(h, ms)]
            else:
                g.append((h, ms))
        moved, ids = [], []
        for b, gs in by_block.items():
            keep = None
            if len(gs) == 1:            # most blocks: one group, all of it or a part
                h, ms = gs[0]
                if len(ms) == sz[b]:
                    bsig[b] = h
                    continue
            elif sum(len(ms) for _, ms in gs) == sz[b]:
                # every member changed: the largest group keeps the block and its number
                keep = max(gs, key=lambda g: len(g[1]))
                bsig[b] = keep[0]
            for g in gs:
                if g is keep:
                    continue
                h, ms = g
                sz[b] -= len(ms)
                sz[count] = len(ms)
                bsig[count] = h
                moved.extend(ms)
                ids.extend([count] * len(ms))
                count += 1
        if not moved:
            break
        moved = np.array(moved, dtype=np.int64)
        part[moved] = ids
        # the signatures of the moved states' predecessors, by the edges into them
        cnt = dst_ptr[moved + 1] - dst_ptr[moved]
        candidates = _moved_signatures(moved, cnt, part, e_val, sig, graph, edge_hash)


def _moved_signatures(moved, cnt, part, e_val, sig, graph, edge_hash) -> np.ndarray:
    """After ``moved`` states changed block (``cnt``: their in-degrees), the hashes of the
    edges into them and their sources' signatures (``e_val``, ``sig``, in place); returns
    those sources, sorted: the next round's candidates."""
    src, dst, m_sym, by_dst, dst_ptr = graph
    eidx = np.sort(by_dst[ranges(dst_ptr[moved], cnt)])
    new_e = edge_hash(part[dst[eidx]], m_sym[eidx])
    with np.errstate(over="ignore"):
        delta = new_e - e_val[eidx]
    e_val[eidx] = new_e
    s = src[eidx]                       # sorted, since eidx is
    first = np.ones(len(s), dtype=bool)
    first[1:] = s[1:] != s[:-1]
    at = np.flatnonzero(first)
    candidates = s[at]
    if len(candidates):
        with np.errstate(over="ignore"):
            sig[candidates] += np.add.reduceat(delta, at)
    return candidates


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
    start's block: what ``toolc._reference.minimize.canonical`` makes of ``minimize``'s table,
    read straight
    off the edges of each block's first state."""
    src, sym, dst = edges
    n, a = trans.shape
    reps = np.zeros(count, dtype=np.int64)
    reps[part[::-1]] = np.arange(n)[::-1]           # first state of each block
    # the first states' edges, by block, by symbol within one (the edges are by state)
    s_ptr = np.searchsorted(src, np.arange(n + 1))
    deg = s_ptr[reps + 1] - s_ptr[reps]
    at = ranges(s_ptr[reps], deg)
    bs, bc, bd = np.repeat(np.arange(count), deg), sym[at], part[dst[at]]
    # breadth-first, a level at a time: a block's number is its first appearance among the
    # previous level's edges (blocks in order, symbols in order), as a queue would have it;
    # an edge to the target of the edge before it numbers nothing (a string's state has some
    # ninety edges to a few targets), so the queue reads the others alone
    first = np.ones(len(bs), dtype=bool)
    first[1:] = (bd[1:] != bd[:-1]) | (bs[1:] != bs[:-1])
    ptr = np.searchsorted(bs[first], np.arange(count + 1))
    ids, queue = _queue_numbering(int(part[0]), count, bd[first], ptr)
    t = np.full((len(queue), a), -1, dtype=np.int32)
    row = ids[bs]
    ok = row >= 0
    t[row[ok], bc[ok]] = ids[bd[ok]]
    return t, final[reps[queue]], ids[part]


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


def _queue_numbering(start: int, n: int, succ: np.ndarray, ptr: np.ndarray):
    """:func:`_bfs_numbering` with a plain queue, for successors given as a CSR list
    (``succ[ptr[q]:ptr[q + 1]]`` in order): the same numbers. A level at a time costs eight
    numpy calls per level, and a request's automaton is a few hundred levels deep with a
    handful of states each (4.9 ms against about 1.5 ms for this loop)."""
    s, p = succ.tolist(), ptr.tolist()
    ids = [-1] * n
    ids[start] = 0
    queue = [start]
    i = 0
    while i < len(queue):
        f = queue[i]
        i += 1
        for t in s[p[f]:p[f + 1]]:
            if ids[t] < 0:
                ids[t] = len(queue)
                queue.append(t)
    return np.array(ids, dtype=np.int64), np.array(queue, dtype=np.int64)


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
