"""Trimming a DFA's transition table: its edge list, each state's distance to a final
state, and the table without the states that reach none (what :func:`toolc.fsm.minimize.
reduce_table` does first)."""

from __future__ import annotations

import numpy as np

from ..runtime.arrays import ranges


def trimmed(trans: np.ndarray, final: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``trans`` and ``final`` without the states that reach no final state and the edges
    into them, the others numbered on in order (the start, 0, stays 0 where it reaches a
    final state; where it reaches none, the edges are cut and the numbers kept): what
    :func:`toolc.fsm.minimize.reduce_table` trims first, for a table that is hashed before
    it is reduced (:mod:`toolc.stitch`)."""
    edges = _edges(trans)
    alive = _distances(edges, final) >= 0
    if alive.all():
        return trans, final
    if not alive[0]:
        return _cut(trans, alive), final
    new = np.cumsum(alive) - 1
    t = trans[alive]
    ok = t >= 0
    ok[ok] = alive[t[ok]]
    return np.where(ok, new[np.maximum(t, 0)], -1).astype(trans.dtype), final[alive]


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


def _distances(edges, final: np.ndarray, rev=None) -> np.ndarray:
    """Each state's distance (in edges) to the nearest final state, -1 if there is none: a
    backward search over each state's distinct predecessors, a level at a time. A level of
    a few states (most of them: a request's automaton is a hundred or more levels deep with
    a dozen states each) is read in plain Python, a wide one in numpy (eight calls, whatever
    its size); a state is found once either way."""
    src, _, dst = edges
    by_dst, ptr = _by_dst(dst, len(final)) if rev is None else rev
    pred = src[by_dst]
    # the distinct predecessors of each state: src is sorted within each state's edges (the
    # order by destination is stable), so repeats are adjacent (a string state's ninety
    # edges into the next state are one)
    keep = np.ones(len(pred), dtype=bool)
    keep[1:] = pred[1:] != pred[:-1]
    keep[ptr[:-1][ptr[:-1] < len(pred)]] = True
    pred = pred[keep]
    ptr = np.concatenate([[0], np.cumsum(keep)])[ptr]
    dist = np.where(final, 0, -1)
    seen = final.tolist()
    frontier = np.flatnonzero(final)
    lists = None
    level = 0
    while len(frontier):
        level += 1
        if len(frontier) > _NARROW:
            frontier = np.asarray(frontier, dtype=np.int64)
            p = pred[ranges(ptr[frontier], ptr[frontier + 1] - ptr[frontier])]
            p = p[dist[p] < 0]
            dist[p] = level
            frontier = np.unique(p)
            for q in frontier.tolist():
                seen[q] = True
            continue
        if lists is None:
            lists = pred.tolist(), ptr.tolist()
        pl, pp = lists
        nxt = []
        for q in (frontier if type(frontier) is list else frontier.tolist()):
            for s in pl[pp[q]:pp[q + 1]]:
                if not seen[s]:
                    seen[s] = True
                    nxt.append(s)
        dist[nxt] = level
        frontier = nxt
    return dist


_NARROW = 64        # a level of at most this many states is read in Python (_distances)


def _cut(trans: np.ndarray, alive: np.ndarray) -> np.ndarray:
    """``trans`` with the dead states' rows and every edge into a dead state removed."""
    t = trans.copy()
    t[(t >= 0) & ~alive[np.maximum(t, 0)]] = -1
    t[~alive] = -1
    return t


def _cut_edges(trans, alive, edges, rev):
    """:func:`_cut` with the edge list and its order by destination filtered along (the
    table's cells are its edges: no pass over the whole table, no sort again)."""
    src, sym, dst = edges
    keep = alive[src] & alive[dst]
    t = trans.copy()
    gone = ~keep
    t[src[gone], sym[gone]] = -1         # a dead state's row: all its edges are gone
    at = np.cumsum(keep) - 1             # each kept edge's place among the kept
    by_dst = rev[0]
    by_dst = at[by_dst[keep[by_dst]]]    # a stable order stays one when filtered
    dst = dst[keep]
    ptr = np.zeros(len(alive) + 1, dtype=np.int64)
    np.cumsum(np.bincount(dst, minlength=len(alive)), out=ptr[1:])
    return t, (src[keep], sym[keep], dst), (by_dst, ptr)
