"""How the count tables' ``K`` rows are written (:meth:`toolc.walk.counts.CountTables.sections`;
the format is :mod:`toolc.runtime.countfile`'s).

The first phase's row (between characters) is stored whole, as nibbles; every other row as
that row plus one offset, with the entries that differ listed. An entry no state reads is
free: the runtime never looks at it (a row is thinned, and a counter moves, only for the
tokens the state's stored row allows). This module chooses the free entries of the first row
so that they cost least: where another row reads the token, the value that row needs there
(less its offset), so the entry is not listed; elsewhere the value read last before it,
capped below the nibbles' escape, so that runs repeat and zlib finds them.

On Qwen3 and ``maxLength: 64`` (its 12 phase-0 states read 146,996 of 151,936 tokens), the
free entries held zeros: the first row took 57.6 KB after zlib and the other rows' listed
differences 2.4 KB. Chosen as here, 56.5 KB and 1.8 KB; the file, 112,962 bytes before,
is 110,931 (the other rows' values alone took 0.9 KB off, the runs 1.1 KB; uncapped runs
lose 30 bytes to listed values of 15 or more). The values any state reads are unchanged, so
the format is too.
"""

from __future__ import annotations

import numpy as np

NIBBLE_ESCAPE = 15        # a nibble of 15 stands for 15 or more (the value listed apart)


def first_row(k: np.ndarray, read: np.ndarray,
              at: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(row 0 as stored, each row's offset from it): ``k`` is uint8[P, L], ``read``
    bool[P, L] the entries some state reads (``at``: their flat positions, when the caller
    has them). Every entry some state reads comes out of ``row 0 + offset`` or the listed
    differences exactly as before; only free ones move."""
    P, L = k.shape
    if not P:
        return np.zeros(L, dtype=np.uint8), np.zeros(0, dtype=np.uint8)
    k0 = np.where(read[0], k[0], 0).astype(np.uint8)
    # each row's most common offset from row 0 (uint8: mod 256) over the entries it reads
    if at is None:
        at = np.flatnonzero(read.reshape(-1))
    row, tok = at // L, at % L
    d = k.reshape(-1)[at] - k0[tok]
    kd = np.bincount(row * 256 + d, minlength=P * 256).reshape(P, 256).argmax(axis=1)
    kd[:1] = 0
    kd = kd.astype(np.uint8)
    other = np.zeros(L, dtype=bool)
    if P > 1:
        # the tokens only other rows read, each with the first such row: from the listed
        # entries (rows past the first read a few thousand tokens, not the whole width)
        later = row >= 1
        r1, t1 = row[later], tok[later]
        by = np.argsort(t1, kind="stable")          # rows stay ascending within a token
        t1, r1 = t1[by], r1[by]
        first = np.ones(len(t1), dtype=bool)
        first[1:] = t1[1:] != t1[:-1]
        t1, r1 = t1[first], r1[first]
        only = ~read[0][t1]
        t1, r1 = t1[only], r1[only]
        k0[t1] = k[r1, t1] - kd[r1]
        other[t1] = True
    free = ~read[0] & ~other
    if free.any() and not free.all():
        last = np.maximum.accumulate(np.where(free, 0, np.arange(L)))
        k0[free] = np.minimum(k0[last[free]], NIBBLE_ESCAPE - 1)
    return k0, kd
