"""Counted arrays at run time, and artifacts that count both characters and items.

An artifact with counted arrays (``itm_*`` sections, :mod:`toolc.runtime.itemfile`) holds
each bounded array once, unbounded, the inside of its brackets tagged; the matcher's counter
is then the number of items started in the open counted array. A counted string or a
counted array may nest in a counted array's items or a counted object's members, and a
counted string in that (three levels at most), so a state is inside at most one region of
each level and, where an artifact has more than one, the counter is a fixed tuple (items,
inner items, characters) kept by :class:`~toolc.runtime.nested.Both`. The
:class:`~toolc.runtime.counted.CountedMatcher` keeps it, and the object made here answers its
three questions (``key``: which row, ``row``: that row, ``step``: the next counter), each O(1)
per kind (nested levels step inside the matcher's ``advance``,
:mod:`toolc.runtime.nestedmatch`).

Per token, a counted array reads one byte by the state's phase: ``K`` (items the token starts
before it leaves the array, low seven bits) and ``X`` (it leaves, the eighth bit). Leaving
needs ``lo <= c + K <= hi``; staying needs ``c + K + dmin <= hi`` (``dmin``: 1 where a
separator has promised an item not started yet); a token that enters a counted
array sets the counter to the items it started there (a per-(state, token) entry). The mask
is the stored row unless the counter is within one token's reach of a bound; then it is the
row thinned by ``K``, made once per (state, min(hi - c, far), max(lo - c, 0)) and kept.
"""

from __future__ import annotations

import threading

import numpy as np

from .counted import MAX_CACHED_ROWS, Counting
from .nested import nested


class ItemCounting:
    """The counted-array tables of an artifact, and its cache of thinned rows."""

    zero = 0

    def __init__(self, arrays: dict, row_view: list, logits: int, targets, prefix="itm_"):
        if prefix != "itm_":        # the nested level's sections, read by the same names
            arrays = {"itm_" + k[4:]: v for k, v in arrays.items() if k.startswith(prefix)}
        self.tag = arrays["itm_tag"].tolist()
        self.dmin = arrays["itm_dmin"].tolist()
        self.dmin_a = arrays["itm_dmin"].astype(np.int64)
        self.targets = targets
        self.lo = arrays["itm_lo"].tolist()
        self.hi = [h if h >= 0 else None for h in arrays["itm_hi"].tolist()]
        pidx = {int(p): i for i, p in enumerate(arrays["itm_phases"].tolist())}
        self.pi = [pidx.get(int(p), -1) for p in arrays["itm_phase"].tolist()]
        self.kx = arrays["itm_kx"]
        self.kxl = [row.tobytes() for row in self.kx]
        # the most items one token starts, plus one: a counter this far from a bound is free
        self.far = int((self.kx & 127).max(initial=0)) + int(self.dmin_a.max(initial=0)) + 1
        key = arrays["itm_eq"].astype(np.int64) * logits + arrays["itm_et"]
        self.entries = dict(zip(key.tolist(), arrays["itm_ev"].tolist()))
        self.rows: dict = {}          # the thinned rows (see Counting.row), and their lock
        self.lock = threading.Lock()
        self.row_view, self.logits = row_view, logits

    def key(self, q: int, c: int):
        """None when (``q``, ``c``) uses the stored row; else the key of its thinned row:
        (state, room under the maximum, items still needed for the minimum), each capped
        where a token can no longer tell the difference."""
        g = self.tag[q]
        if g < 0:
            return None
        top = self.hi[g]
        room = self.far if top is None or top - c >= self.far else top - c
        short = self.lo[g] - c
        if room == self.far and short <= 0:
            return None
        return (q, room, min(max(short, 0), self.far + 1))

    row = Counting.row          # made on first use and kept, as a counted string's rows

    def _thin(self, q: int, rem: int, need: int) -> np.ndarray:
        stored = np.unpackbits(self.row_view[q].view(np.uint8), bitorder="little")
        kx = self.kx[self.pi[q]]
        k = (kx & 127).astype(np.int64)
        # a token that stays must leave room for the item a separator promised
        after = self.dmin_a[np.maximum(self.targets(q, self.logits), 0)]
        ok = np.where(kx >= 128, (k <= rem) & (k >= need), k + after <= rem)
        keep = np.zeros(len(stored), dtype=np.uint8)
        keep[:self.logits] = stored[:self.logits] & ok
        out = np.packbits(keep, bitorder="little").view("<i4")
        out.setflags(write=False)
        return out

    def enter(self, q: int, t: int) -> int:
        """The counter after token ``t`` enters a counted array from state ``q`` (-1: none
        recorded, so not allowed)."""
        return self.entries.get(q * self.logits + t, -1)

    def step(self, q: int, c: int, t: int, q2: int) -> int:
        """The counter after token ``t`` leads from (``q``, ``c``) to ``q2``; -1 when a bound
        forbids it."""
        g = self.tag[q]
        if g >= 0:
            v = self.kxl[self.pi[q]][t]
            c2 = c + (v & 127)
            hi = self.hi[g]
            if v & 128:
                if c2 < self.lo[g] or (hi is not None and c2 > hi):
                    return -1
                return self.enter(q, t) if self.tag[q2] >= 0 else 0
            return c2 if hi is None or c2 + self.dmin[q2] <= hi else -1
        if self.tag[q2] >= 0:
            return self.enter(q, t)
        return 0


class Levels:
    """Counted regions of several kinds in one artifact where one of them is an unanchored
    run (:mod:`toolc.runtime.runcount`): the counter is a fixed tuple, one entry per level
    (items, inner items, characters, then the run), each kept by its own object: ``step``
    asks each, ``key`` thins by any. Without a run, :mod:`toolc.runtime.nested` answers the
    same questions faster, from flat tables."""

    def __init__(self, strings, items, inner=None, runs=None):
        self.s, self.i, self.n = strings, items, inner
        # run regions (toolc.runtime.runcount) are one more entry, last
        self.parts = [p for p in (items, inner, strings, runs) if p is not None]
        self.zero = (0,) * len(self.parts)
        self.pair = len(self.parts) == 2
        self.rows: dict = {}
        self.lock = threading.Lock()

    def key(self, q: int, c):
        if self.pair:               # the common case, without a generator per token
            a, b = self.parts
            ka, kb = a.key(q, c[0]), b.key(q, c[1])
            return None if ka is None and kb is None else (ka, kb)
        keys = tuple(p.key(q, x) for p, x in zip(self.parts, c))
        return None if keys.count(None) == len(keys) else keys

    def row(self, key) -> np.ndarray:
        near = [(p, k) for p, k in zip(self.parts, key) if k is not None]
        if len(near) == 1:
            return near[0][0].row(near[0][1])
        got = self.rows.get(key)        # near bounds of two levels: a token must suit both
        if got is None:
            got = near[0][0].row(near[0][1]).copy()
            for p, k in near[1:]:
                got &= p.row(k)
            got.setflags(write=False)
            with self.lock:
                if len(self.rows) >= MAX_CACHED_ROWS:
                    self.rows.clear()
                self.rows[key] = got
        return got

    def step(self, q: int, c, t: int, q2: int):
        """The tuple after token ``t`` leads from (``q``, ``c``) to ``q2``; -1 when a bound
        forbids it. Outside a region its entry of ``c`` is 0, and each level's ``step``
        reads a state outside its regions as "entering or elsewhere"."""
        if self.pair:
            a, b = self.parts
            ca = a.step(q, c[0], t, q2)
            if ca < 0:
                return -1
            cb = b.step(q, c[1], t, q2)
            return -1 if cb < 0 else (ca, cb)
        out = []
        for p, x in zip(self.parts, c):
            y = p.step(q, x, t, q2)
            if y < 0:
                return -1
            out.append(y)
        return tuple(out)


def make_counting(arrays: dict, row_view: list, logits: int, targets):
    """The counting object of an artifact's counted regions, or None when it has none."""
    strings = items = inner = None
    if "cnt_tag" in arrays:
        strings = Counting(arrays, row_view, logits, targets)
    if "itm_tag" in arrays:
        items = ItemCounting(arrays, row_view, logits, targets)
    if "itn_tag" in arrays:
        inner = ItemCounting(arrays, row_view, logits, targets, "itn_")
    runs = None
    if "run_tag" in arrays:
        from .runcount import RunCounting
        runs = RunCounting(arrays, row_view, logits)
    if runs is not None and (strings or items or inner) is not None:
        return Levels(strings, items, inner, runs)
    if inner is not None or (strings is not None and items is not None):
        return nested(arrays, strings, items, inner)
    return strings or items or runs
