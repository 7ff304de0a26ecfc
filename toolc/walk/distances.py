"""Shortest distances over 0/1-weighted edges, all states at once (numpy, no Python loop per
edge): the counters' "fewest units still to start before the region can close".

The search runs backwards from the seeds, a distance at a time: at distance ``d`` it closes the
set over 0-weight edges, then the 1-weight edges out of that set give the states first
reached at ``d + 1``. Each state is settled at its least distance, so the result is the
exact minimum, whatever order a queue would have visited the states in.
"""

from __future__ import annotations

import weakref

import numpy as np

from ..runtime.arrays import ranges


def zero_one_distances(src: np.ndarray, dst: np.ndarray, w: np.ndarray, n: int,
                       seeds: np.ndarray, seed_dist: np.ndarray, big: int) -> np.ndarray:
    """int64[n]: for each state ``p``, the least ``seed_dist[i] + sum of w`` over paths of
    edges ``p = src -> dst`` ending at ``seeds[i]`` (``big`` where none, or where it would
    be ``big`` or more); ``w`` holds 0 or 1 per edge."""
    by = np.argsort(dst, kind="stable")
    ptr = np.searchsorted(dst[by], np.arange(n + 1))
    psrc, pw = src[by].astype(np.int64), w[by].astype(bool)
    dist = np.full(n, big, dtype=np.int64)
    seeds, seed_dist = seeds.astype(np.int64), seed_dist.astype(np.int64)
    keep = seed_dist < big
    seeds, seed_dist = seeds[keep], seed_dist[keep]
    np.minimum.at(dist, seeds, seed_dist)
    pending = np.unique(seed_dist)
    cur = np.zeros(0, dtype=np.int64)
    d = int(pending[0]) if len(pending) else big
    while d < big:
        start = np.union1d(cur, seeds[seed_dist == d])
        start = start[dist[start] == d]
        members, frontier = [start], start
        while len(frontier):            # closed over 0-weight edges at distance d
            at = ranges(ptr[frontier], ptr[frontier + 1] - ptr[frontier])
            cand = psrc[at[~pw[at]]]
            new = np.unique(cand[dist[cand] > d])
            dist[new] = d
            members.append(new)
            frontier = new
        group = np.concatenate(members)
        at = ranges(ptr[group], ptr[group + 1] - ptr[group])
        cand = psrc[at[pw[at]]]
        cur = np.unique(cand[dist[cand] > d + 1]) if d + 1 < big else cand[:0]
        dist[cur] = d + 1
        later = pending[pending > d]
        if len(cur):
            d += 1
        elif len(later):
            d = int(later[0])
        else:
            break
    return dist


_LAST: tuple = (None, None)     # (weak reference to a table, its predecessors)


def byte_predecessors(trans: np.ndarray, num_byte_classes: int) -> tuple[np.ndarray,
                                                                         np.ndarray]:
    """(src, ptr): the states with a byte edge into state ``r`` are ``src[ptr[r]:ptr[r+1]]``
    (once per class: a search keeps a set). The searches back from counted regions (the
    twins' reach, the openings near a counted string or array) ask it of the same table in
    one compile, so the last table's answer is kept while that table lives."""
    ref, got = _LAST
    if ref is not None and ref() is trans and got[0] == num_byte_classes:
        return got[1]
    bt = trans[:, :num_byte_classes]
    src, col = np.nonzero(bt >= 0)
    dst = bt[src, col]
    by = np.argsort(dst, kind="stable")
    out = src[by], np.searchsorted(dst[by], np.arange(trans.shape[0] + 1))
    _remember(trans, (num_byte_classes, out))
    return out


def _remember(trans, got) -> None:
    global _LAST
    _LAST = (weakref.ref(trans), got)
    weakref.finalize(trans, _forget, _LAST[0])


def _forget(ref) -> None:
    global _LAST
    if _LAST[0] is ref:
        _LAST = (None, None)
