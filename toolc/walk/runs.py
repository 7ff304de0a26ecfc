"""The vocabulary walk's token runs: how the walk records, sorts and merges what it finds.

A *run* maps the tokens at sorted trie positions ``lo:hi`` to one target, from one origin
state. The walk emits runs for plain triples and for *group* triples (one walk of a region's
representative standing for several origins, see :class:`_Groups`); :func:`_assemble_runs`
renames each group's runs into every member's instance of the region, and
:func:`_sorted_runs` sorts all of them by (origin, lo) and merges adjacent ones.
"""

from __future__ import annotations

import sys

import numpy as np

from .. import budget
from ..runtime.arrays import ranges


def _run_keys(o, lo, hi, tg, span_bits: int, key=None, payload=None):
    """Runs as a sort key (origin, lo) and a payload (hi, target) in two int64 arrays."""
    key = np.left_shift(o, span_bits, out=key, dtype=np.int64)
    key += lo
    payload = np.left_shift(hi, 32, out=payload, dtype=np.int64)
    payload |= tg
    return key, payload


_LOW_HALF = 0 if sys.byteorder == "little" else 1   # the int32 half of an int64 with its low bits


def _sorted_runs(key, payload, span_bits: int, lo_dtype):
    """Runs (key and payload as from :func:`_run_keys`; the keys are distinct) sorted by
    (origin, lo), adjacent runs of one origin to one target merged: (origin, lo, hi, target).

    The key and the row index are packed into one int64 where they fit: a plain sort is
    several times faster than an argsort, and the sorted key gives back origin and lo. The
    keys arrive as a few thousand sorted stretches (the walk's blocks), which the stable sort
    (timsort) merges: tools80's 656k runs sort in 3.4 ms, against 32 ms for the default
    quicksort. The keys are distinct, so either sort gives the same order."""
    bits = max(len(key).bit_length(), 1)
    if len(key) and int(key.max()) < 1 << (62 - bits):
        key = np.left_shift(key, bits)
        key |= np.arange(len(key))
        key.sort(kind="stable")
        k = key & ((1 << bits) - 1)
        key >>= bits
    else:
        k = np.argsort(key, kind="stable")
        key = key[k]
    payload = payload[k]
    del k
    # the four columns straight from the packed words (little-endian halves: payload's high
    # half is hi, its low half the target; lo is in key's low half, below the origin's bits)
    words = payload.view(np.int32).reshape(-1, 2)
    low = (1 << span_bits) - 1
    if span_bits < 32:
        lo = np.bitwise_and(key.view(np.int32).reshape(-1, 2)[:, _LOW_HALF], low)
    else:
        lo = key & low
    lo = lo.astype(lo_dtype, copy=False)
    hi = words[:, 1 - _LOW_HALF].astype(lo_dtype)
    tg = words[:, _LOW_HALF].astype(np.int64)
    o = key
    o >>= span_bits
    return _merge_adjacent(o, lo, hi, tg)


def _merge_adjacent(o, lo, hi, tg, joints=None):
    """Runs sorted by (origin, lo), each merged with the runs that continue it (only runs at
    ``joints`` where given: the others are known to continue none)."""
    if len(o) > 1:
        # a run continues the previous one: same origin, starting where it ended, same target
        if joints is None:
            cont = lo[1:] == hi[:-1]
            cont &= tg[1:] == tg[:-1]
            cont &= o[1:] == o[:-1]
        else:
            j = joints[joints > 0]
            cont = np.zeros(len(o) - 1, dtype=bool)
            cont[j - 1] = (lo[j] == hi[j - 1]) & (tg[j] == tg[j - 1]) & (o[j] == o[j - 1])
        if cont.any():
            # merged: the first run's origin, lo and target (the same all along), the last's hi
            new = np.ones(len(o), dtype=bool)
            new[1:] = ~cont
            last = np.ones(len(o), dtype=bool)
            last[:-1] = new[1:]
            o, lo, hi, tg = o[new], lo[new], hi[last], tg[new]
    return o, lo, hi, tg


def _cat(xs: list) -> np.ndarray:
    """The arrays of ``xs`` concatenated (an empty int64 array for none)."""
    return np.concatenate(xs) if xs else np.zeros(0, np.int64)


class _Groups:
    """The members of triple groups: group ``g`` stands for the origins
    ``origin[ptr[g]:ptr[g+1]]``, each in its own instance of a region (map offset ``base``)."""

    def __init__(self):
        self._o, self._b, self._cnt = [], [], []
        self.count = 0
        self._arrays = None

    def add(self, group: np.ndarray, origin: np.ndarray, base: np.ndarray) -> int:
        """New groups ``first + group`` (``group`` numbers them from 0); returns ``first``."""
        k = int(group.max()) + 1
        by = np.argsort(group, kind="stable")
        self._o.append(origin[by])
        self._b.append(base[by])
        self._cnt.append(np.bincount(group, minlength=k))
        first, self.count = self.count, self.count + k
        self._arrays = None
        return first

    def arrays(self):
        """(origin, base, ptr) over all groups so far."""
        if self._arrays is None:
            cnt = np.concatenate(self._cnt) if self._cnt else np.zeros(0, np.int64)
            ptr = np.zeros(len(cnt) + 1, dtype=np.int64)
            np.cumsum(cnt, out=ptr[1:])
            self._arrays = (_cat(self._o), _cat(self._b), ptr)
        return self._arrays


def _join(groups: _Groups, y, member_of, g_node, g_cur, own, node, cur, rbase, n: int):
    """Replace triples ``y`` by new groups (``member_of`` numbers them, at ``g_node`` and
    representative state ``g_cur``), whose members are the plain triples' origins and the
    group triples' members."""
    plain = own[y] < n
    yp, yg = y[plain], y[~plain]
    m_o, m_b, m_ptr = groups.arrays()
    g = own[yg] - n
    cnt = m_ptr[g + 1] - m_ptr[g]
    row = ranges(m_ptr[g], cnt)
    first = groups.add(np.concatenate([member_of[plain], np.repeat(member_of[~plain], cnt)]),
                       np.concatenate([own[yp], m_o[row]]),
                       np.concatenate([rbase[cur[yp]], m_b[row]]))
    stay = np.ones(len(own), dtype=bool)
    stay[y] = False
    return (np.concatenate([own[stay], n + first + np.arange(len(g_node))]),
            np.concatenate([node[stay], g_node]),
            np.concatenate([cur[stay], g_cur]))


# :func:`_assemble_runs` renames the group runs of blocks under _SMALL_BLOCK rows together,
# in gathers of about _CHUNK rows
_SMALL_BLOCK = 4096
_CHUNK = 1 << 20


def _assemble_runs(o, lo, hi, tg, g, n: int, groups: _Groups, phi, rloc, span_bits: int,
                   stats, max_runs: int | None = None):
    """The walk's runs, sorted by (origin, lo) and merged: each group's runs become runs of
    every member, targets renamed into the member's instance (``g`` marks group runs, whose
    ``o`` is n + the group)."""
    if not g.any():
        return _sorted_runs(*_run_keys(o, lo, hi, tg, span_bits), span_bits, lo.dtype)
    p = ~g
    gg, glo, ghi, gt = _sorted_runs(*_run_keys(o[g] - n, lo[g], hi[g], tg[g], span_bits),
                                    span_bits, lo.dtype)
    m_o, m_b, m_ptr = groups.arrays()
    n_plain = int(p.sum())
    total = n_plain + int((m_ptr[gg + 1] - m_ptr[gg]).sum())
    budget.check_walk(total, max_runs)
    key = np.empty(total, dtype=np.int64)
    payload = np.empty(len(key), dtype=np.int64)
    _run_keys(o[p], lo[p], hi[p], tg[p], span_bits, key[:n_plain], payload[:n_plain])
    # group by group, a (members x runs) block, member-major. A block costs six numpy calls
    # (some 1,400 groups for a request's set, most of them small): the small blocks are
    # built together, by one gather per chunk of about a million rows; the large ones (the
    # bulk of tools80's 656k rows) one by one, where the broadcast writes are the fastest
    ga = np.concatenate([[0], np.flatnonzero(np.diff(gg)) + 1])
    cols = np.diff(np.append(ga, len(gg)))
    m0 = m_ptr[gg[ga]]
    rows = m_ptr[gg[ga] + 1] - m0
    sizes = rows * cols
    at = n_plain + np.cumsum(sizes) - sizes          # where each block starts in key
    g_lo, g_hi, g_loc = glo.astype(np.int64), ghi.astype(np.int64) << 32, rloc[gt]
    m_key = m_o << span_bits
    small = np.flatnonzero(sizes < _SMALL_BLOCK)
    ends = np.cumsum(sizes[small])
    j = 0
    while j < len(small):
        budget.check("walking the vocabulary")
        k = max(j + 1, int(np.searchsorted(ends, ends[j] - sizes[small[j]] + _CHUNK, "right")))
        ch = small[j:k]
        sz = sizes[ch]
        e = np.repeat(np.arange(len(ch)), sz)
        i = ranges(np.zeros(len(ch), dtype=np.int64), sz)      # the row in its block
        c = cols[ch][e]
        m = m0[ch][e] + i // c
        r = ga[ch][e] + i % c
        dest = at[ch][e] + i
        key[dest] = m_key[m] | g_lo[r]
        payload[dest] = g_hi[r] | phi[m_b[m] + g_loc[r]]
        j = k
    for g_ in np.flatnonzero(sizes >= _SMALL_BLOCK).tolist():
        budget.check("walking the vocabulary")
        a, b, mm0, mm1 = int(ga[g_]), int(ga[g_] + cols[g_]), int(m0[g_]), int(m0[g_] + rows[g_])
        blk = slice(int(at[g_]), int(at[g_] + sizes[g_]))
        np.bitwise_or(m_key[mm0:mm1, None], g_lo[None, a:b],
                      out=key[blk].reshape(mm1 - mm0, b - a))
        np.bitwise_or(g_hi[None, a:b], phi[m_b[mm0:mm1, None] + g_loc[None, a:b]],
                      out=payload[blk].reshape(mm1 - mm0, b - a))
    if stats is not None:
        stats["rows"] = len(key)
    return _sorted_runs(key, payload, span_bits, lo.dtype)
