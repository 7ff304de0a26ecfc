"""Trimming, Moore minimization and canonical numbering as separate, plain passes: the twin
of :func:`toolc.fsm.minimize.reduce_table`, for tests."""

from __future__ import annotations

import numpy as np

from ..fsm.minimize import (_MULT, _bfs_numbering, _refine, _refine_incremental, _row_ids,
                            _stable)
from ..fsm.trim import _cut, _distances, _edges


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

