"""Nested counted regions at run time: one counter per level, in one fixed tuple.

A counted string or array may sit inside a counted array's items or a counted object's
members, and a counted string inside that (three levels at most: items, inner items,
characters), so a state is inside at most one region of each level and the matcher's counter
is a tuple with one entry per level the artifact has. :class:`Both` answers two of the
matcher's questions for that tuple (``key``: which row, ``row``: that row), each O(1); the
third, the next tuple, is stepped inside ``advance`` itself by the matcher it names
(:mod:`toolc.runtime.nestedmatch`, the code read and every level's step in one frame).

Both are on every token's path, so neither asks each level's own object
(:class:`~toolc.runtime.counted.Counting`, :class:`~toolc.runtime.counters.ItemCounting`):
those calls, their keys and the generator over levels cost 1.2 to 1.9 µs per token at three
levels. At load every level is read into the same shape instead (per state, one tuple of
every level's bounds; per level, a flat ``K`` and ``X`` table indexed by the state's row
offset plus the token), and ``key`` and the step are written out for two and for three
levels, one block per level, with nothing allocated but the tuple they make. A level's
object is still asked where it is rare: entering a region (its entry table) and making a
thinned row.

The mask is the state's stored row while every level's counter is more than one token's
reach from its bounds (one chained comparison per level: ``lo <= c <= hi - far``). Near a
bound of any level it is the row thinned by that level's ``K``; near bounds of two levels, a
token must suit both, so it is the AND of the two. Each such row is made once per key
(state, then per level ``min(hi - c, far)`` and ``max(lo - c, 0)`` capped), kept in a
bounded cache shared by every matcher of the artifact.
"""

from __future__ import annotations

import threading

import numpy as np

from .counted import MAX_CACHED_ROWS
from .nestedmatch import Nested2, Nested3

BIG = 1 << 62           # a bound that is not there (no maximum, or a state outside the level)


def nested(arrays: dict, strings, items, inner=None) -> "Both":
    """The counting object of an artifact with two or three levels (``arrays``: its
    decoded sections)."""
    three = sum(p is not None for p in (strings, items, inner)) == 3
    return (Both3 if three else Both)(arrays, strings, items, inner)


def _tables(p) -> tuple:
    """A level's (K, X, enter) in the shared shape: K and X flat, indexed by a state's row
    offset plus the token."""
    if hasattr(p, "kx"):            # a counted array's level: K and X share a byte
        return (p.kx & 127).tobytes(), (p.kx >> 7).tobytes(), p.enter
    return p.kb, p.xb, p.enter      # a counted string's: already flat


# a state outside a level: no row offset, free at any counter, not entered
_OUTSIDE = ((-1, 0, BIG), (-BIG, BIG), (BIG, 0, 0), (False, 0))


class Both:
    """Counted regions of two or three levels in one artifact (see the module docstring).
    ``parts`` are the levels' own objects, outermost first; ``s``, ``i`` and ``n`` name
    them (strings, items, inner items; None where the artifact has no such level)."""

    matcher_type = Nested2

    def __init__(self, arrays: dict, strings, items, inner=None):
        self.s, self.i, self.n = strings, items, inner
        levels = [(p, pre) for p, pre in ((items, "itm_"), (inner, "itn_"), (strings, "cnt_"))
                  if p is not None]
        self.parts = [p for p, _ in levels]
        self.zero = (0,) * len(self.parts)
        self.rows: dict = {}
        self.lock = threading.Lock()
        self.logits = self.parts[0].logits
        n = len(self.parts[0].tag)
        self.tabs = tuple(x for p in self.parts for x in _tables(p))     # flat: one unpack
        # per state, every level's part of each in one flat tuple (one index, one unpack);
        # the states outside every level (nearly all of a large tool set) share one
        self.steps, self.free, self.near, self.into = (
            [tuple(x for _ in levels for x in o)] * n for o in _OUTSIDE)
        some = np.unique(np.concatenate([np.flatnonzero(
            (arrays[pre + "tag"] >= 0) | (arrays[pre + "dmin"] != 0)) for _, pre in levels]))
        for q in some.tolist():
            per = [self._state(p, q) for p in self.parts]
            self.steps[q], self.free[q], self.near[q], self.into[q] = (
                tuple(x for lv in per for x in lv[j]) for j in range(4))

    def _state(self, p, q: int) -> tuple:
        """State ``q``'s (row offset, lo, hi), (free from, free to), (hi, far, lo) and
        (tagged, dmin) at the level of ``p``."""
        g = p.tag[q]
        if g < 0:
            return _OUTSIDE[:3] + ((False, p.dmin[q]),)
        lo, hi = p.lo[g], BIG if p.hi[g] is None else p.hi[g]
        if hasattr(p, "kx"):        # an array's level: one far for all, a phase per state
            far, at = p.far, p.pi[q] * self.logits
        else:
            far, at = p.far[g], p.at[q]
        return (at, lo, hi), (lo, hi - far), (hi, far, lo), (True, p.dmin[q])

    def key(self, q: int, c):
        """None when (``q``, ``c``) uses the stored row; else its thinned row's key."""
        v0, v1 = c
        l0, t0, l1, t1 = self.free[q]
        if l0 <= v0 <= t0 and l1 <= v1 <= t1:
            return None
        h0, f0, m0, h1, f1, m1 = self.near[q]
        r0, n0, r1, n1 = h0 - v0, m0 - v0, h1 - v1, m1 - v1
        return (q, f0 if r0 > f0 else r0, 0 if n0 < 0 else (f0 + 1 if n0 > f0 else n0),
                f1 if r1 > f1 else r1, 0 if n1 < 0 else (f1 + 1 if n1 > f1 else n1))

    def row(self, key) -> np.ndarray:
        got = self.rows.get(key)
        if got is None:
            got = self._make(key)
            with self.lock:
                if len(self.rows) >= MAX_CACHED_ROWS:
                    self.rows.clear()
                self.rows[key] = got
        return got

    def _make(self, key) -> np.ndarray:
        """The row of ``key``: the thinned row of each level near a bound, ANDed."""
        q = key[0]
        fars = self.near[q][1::3]
        near = [(p, (q, key[1 + 2 * j], key[2 + 2 * j]))
                for j, p in enumerate(self.parts)
                if key[1 + 2 * j] < fars[j] or key[2 + 2 * j] > 0]
        got = near[0][0].row(near[0][1])
        if len(near) > 1:           # near bounds of two levels: a token must suit both
            got = got.copy()
            for p, k in near[1:]:
                got &= p.row(k)
            got.setflags(write=False)
        return got


class Both3(Both):
    """Three levels (items, inner items, characters): ``key`` for a triple.
    Chosen by class, not by bound methods kept on the object: those would make a cycle,
    and keep the tables until the collector runs."""

    matcher_type = Nested3

    def key(self, q: int, c):
        v0, v1, v2 = c
        l0, t0, l1, t1, l2, t2 = self.free[q]
        if l0 <= v0 <= t0 and l1 <= v1 <= t1 and l2 <= v2 <= t2:
            return None
        h0, f0, m0, h1, f1, m1, h2, f2, m2 = self.near[q]
        r0, n0, r1, n1, r2, n2 = h0 - v0, m0 - v0, h1 - v1, m1 - v1, h2 - v2, m2 - v2
        return (q, f0 if r0 > f0 else r0, 0 if n0 < 0 else (f0 + 1 if n0 > f0 else n0),
                f1 if r1 > f1 else r1, 0 if n1 < 0 else (f1 + 1 if n1 > f1 else n1),
                f2 if r2 > f2 else r2, 0 if n2 < 0 else (f2 + 1 if n2 > f2 else n2))
