"""Isomorphic regions of a DFA, so the vocabulary walk can walk one and rename it for the rest.

A JSON string interior is a wide state (it loops on almost every byte) with a few states that
return to it: the UTF-8 intermediate states, the escape states after ``\\`` and ``\\u``. Every
string-valued property has its own copy of that machine, and the copies differ only in where
the closing quote leads. Walking the vocabulary from each copy repeats the same work.

Here a **region** is the set of states on short cycles through a wide state ``w`` (reachable
from ``w`` within a few steps and leading back to it). Two regions are **isomorphic** when a
lockstep walk from their wide states, along class-labelled edges, pairs their states one to one
such that:

* paired states have edges on the same classes, and loop on the same classes and characters;
* an edge that stays inside the representative's region leads, from the paired state, to the
  paired target (an edge that leaves the region may lead anywhere: that is where copies differ).

Then for a token ``x`` read from a representative state ``s``: while the path stays inside the
region it ends in ``r`` exactly when the instance's path from ``φ(s)`` ends in ``φ(r)``; at the
first edge that leaves the region, the instance's path continues from ``δ(φ(p), c)``, where
``p`` is the last state inside and ``c`` the class. A wide state without copies still gets a
region of its own (its only instance is itself): origins whose paths enter it at the same
trie node can then share the rest of the walk. :func:`toolc.walk.index.walk` uses both.

Nothing here knows about JSON: any family of regions with the same shape is shared.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import budget

CYCLE_DEPTH = 16     # a region holds the states on cycles through w no longer than about 2x this
CYCLE_CAP = 2048     # and looks at no more states than this on the way
MAX_FAILURES = 4     # representatives matched in vain before a signature class is given up


@dataclass(frozen=True)
class Regions:
    """Representative regions and their instances (the representative is its own instance).

    For a state ``q`` of an instance: ``can[q]`` is the representative state it is paired with
    (-1: ``q`` is in no region), and ``base[q]`` the offset of its instance's map in ``phi``,
    so that ``phi[base[q] + loc[r]]`` is that instance's image of representative state ``r``.
    ``rid[r]`` is the region of a representative state (-1 elsewhere).
    """

    can: np.ndarray         # int64[n]
    base: np.ndarray        # int64[n]
    loc: np.ndarray         # int64[n]
    rid: np.ndarray         # int64[n]
    phi: np.ndarray         # int64[sum of instance sizes]
    num_regions: int = 0

    @property
    def num_instances(self) -> int:
        """States walked as the image of a representative state."""
        return int((self.can >= 0).sum() - (self.rid >= 0).sum())


def find_regions(trans: np.ndarray, loops: np.ndarray, charloops: np.ndarray,
                 wide: np.ndarray, depth: int = CYCLE_DEPTH) -> Regions:
    """Group the regions of the wide states into isomorphism classes.

    ``trans`` is int[n, classes] (-1 dead), ``loops`` / ``charloops`` per-state bit rows of
    the classes and characters each state loops on, ``wide`` the states that loop at all.
    """
    n = trans.shape[0]
    ws = np.flatnonzero(wide)
    if len(ws) == 0:
        return _empty(n)

    def sig(states):
        """What a state and its image must share: edges, loops, character loops."""
        return np.concatenate([np.packbits(trans[states] >= 0, axis=-1),
                               loops[states].view(np.uint8), charloops[states].view(np.uint8)],
                              axis=-1)

    # owner: the region a state belongs to, as representative or image (-1: free); the extra
    # last entry stands for the dead state (-1), never free
    owner = np.full(n + 1, -1, dtype=np.int64)
    owner[n] = -2
    region_of = np.full(n, -1, dtype=np.int64)
    loc = np.zeros(n, dtype=np.int64)
    # candidates: wide states with the same signature (a hash of it; lockstep checks it exactly)
    s = sig(ws)
    h = (s.astype(np.uint64) * _weights(s.shape[1])).sum(axis=1)
    by = np.argsort(h, kind="stable")
    bounds = np.flatnonzero(np.diff(h[by])) + 1
    regs, insts = [], []
    for members in np.split(ws[by], bounds):
        todo = members[owner[members] == -1]
        failures = 0
        while len(todo) >= 2 and failures < MAX_FAILURES:
            budget.check("grouping the automaton's regions")
            rep, rest = int(todo[0]), todo[1:]
            region, par, pcls = _bfs_order(trans, _cycle_region(trans, rep, depth, owner))
            phi = _lockstep(trans, sig, region, par, pcls, rest, owner)
            if len(phi) == 0:   # nobody matched this representative: try the next one
                todo = rest
                failures += 1
                continue
            nreg = len(regs)
            owner[region] = nreg
            region_of[region] = nreg
            loc[region] = np.arange(len(region))
            loc[phi] = np.arange(len(region))[None, :]
            owner[phi] = nreg
            regs.append(region)
            insts.append(phi)
            todo = rest[owner[rest] == -1]
    # every other wide state's region stands alone: origins that walk into it at the same
    # trie node still share that walk
    for w in ws[owner[ws] == -1].tolist():
        if owner[w] != -1:
            continue
        region = _cycle_region(trans, w, depth, owner)
        nreg = len(regs)
        owner[region] = nreg
        region_of[region] = nreg
        loc[region] = np.arange(len(region))
        regs.append(region)
        insts.append(np.zeros((0, len(region)), dtype=np.int64))
    if not regs:
        return _empty(n)
    # each region's map block: the representative's states, then each instance's images
    can = np.full(n, -1, dtype=np.int64)
    base = np.zeros(n, dtype=np.int64)
    blocks, off = [], 0
    for region, phi in zip(regs, insts):
        block = np.concatenate([region[None, :], phi])
        can[block] = region[None, :]
        base[block] = off + len(region) * np.arange(len(block))[:, None]
        blocks.append(block.reshape(-1))
        off += block.size
    return Regions(can=can, base=base, loc=loc, rid=region_of, phi=np.concatenate(blocks),
                   num_regions=len(regs))


def _weights(width: int) -> np.ndarray:
    """Fixed odd multipliers for hashing signature rows."""
    rng = np.random.default_rng(5)
    return rng.integers(1, 2**62, size=width, dtype=np.int64).astype(np.uint64) | np.uint64(1)


def _empty(n: int) -> Regions:
    none = np.full(n, -1, dtype=np.int64)
    return Regions(can=none, base=np.zeros(n, dtype=np.int64), loc=np.zeros(n, dtype=np.int64),
                   rid=none, phi=np.zeros(0, dtype=np.int64))


def _cycle_region(trans: np.ndarray, w: int, depth: int, owner: np.ndarray) -> np.ndarray:
    """The free states within ``depth`` steps of ``w`` (and among the first ``CYCLE_CAP``) that
    lead back to it, ``w`` first. The sets are small (a string interior's region is a dozen
    states), so plain Python."""
    succ = {}
    order = [w]
    frontier = [w]
    for _ in range(depth):
        new = []
        for q in frontier:
            ts = set(trans[q].tolist())
            ts.discard(-1)
            succ[q] = ts
            new.extend(t for t in ts if t not in succ and owner[t] == -1)
        frontier = list(dict.fromkeys(t for t in new if t not in succ))
        if not frontier or len(order) + len(frontier) > CYCLE_CAP:
            frontier = []
            break
        order.extend(frontier)
        for q in frontier:
            succ.setdefault(q, None)
    for q in frontier:      # the last ring: its edges, to see whether it leads back
        ts = set(trans[q].tolist())
        ts.discard(-1)
        succ[q] = ts
    back = {w}
    grew = True
    while grew:     # deeper states first: most of them lead back through deeper ones
        grew = False
        for q in reversed(order):
            if q not in back and succ[q] & back:
                back.add(q)
                grew = True
    return np.array([q for q in order if q in back], dtype=np.int64)


def _bfs_order(trans: np.ndarray, region: np.ndarray):
    """The region in breadth-first order from its first state, and for each state but the
    first the index of its parent and the class leading from there, so that lockstep images
    follow ``phi[i] = trans[phi[par[i]], pcls[i]]`` in index order."""
    m = len(region)
    where = np.full(trans.shape[0] + 1, m, dtype=np.int64)
    where[region] = np.arange(m)
    sub = where[trans[region]]                  # m x classes, local targets (m: outside)
    seen = np.zeros(m + 1, dtype=bool)
    seen[0] = seen[m] = True
    order, par, pcls = [0], [-1], [-1]
    for pos, i in enumerate(order):
        t, c = np.unique(sub[i], return_index=True)
        new = ~seen[t]
        for j, cj in zip(t[new].tolist(), c[new].tolist()):
            order.append(j)
            par.append(pos)
            pcls.append(cj)
        seen[t] = True
    return region[order], np.array(par, dtype=np.int64), np.array(pcls, dtype=np.int64)


def _lockstep(trans, sig, region, par, pcls, cands, owner) -> np.ndarray:
    """The candidates that are isomorphic copies of the region on fresh states, disjoint from
    each other: their images of the region, one row each (k x m)."""
    m = len(region)
    phi = np.zeros((len(cands), m), dtype=np.int64)
    phi[:, 0] = cands
    ok = np.ones(len(cands), dtype=bool)
    for i in range(1, m):        # parents come before children; m is small (a dozen states)
        nxt = trans[phi[:, par[i]], pcls[i]]
        ok &= nxt >= 0
        phi[:, i] = np.maximum(nxt, 0)
    phi = phi[ok]
    if len(phi) == 0:
        return phi
    # same signatures state by state
    phi = phi[(sig(phi) == sig(region)[None]).all(axis=(1, 2))]
    # in-region edges go to the paired targets (self-loops are in the signatures)
    e = trans[region]
    where = np.full(trans.shape[0] + 1, -1, dtype=np.int64)
    where[region] = np.arange(m)
    si, ci = np.nonzero((where[e] >= 0) & (e != region[:, None]))
    phi = phi[(trans[phi[:, si], ci[None, :]] == phi[:, where[e[si, ci]]]).all(axis=1)]
    # images on states no other region holds, one to one, disjoint from each other
    taken = owner[:-1] != -1
    taken[region] = True
    srt = np.sort(phi, axis=1)
    fresh = ~taken[phi].any(axis=1) & (srt[:, 1:] != srt[:, :-1]).all(axis=1)
    phi = phi[fresh]
    uses = np.bincount(phi.reshape(-1), minlength=trans.shape[0])
    return phi[(uses[phi] == 1).all(axis=1)]
