"""toolc.encode's fast paths against plain readings of what they compute (round 8's speedups).

Each helper here replaced a slower computation of the same thing; the tests compare them on
derandomized draws (fixed seeds, a few hundred small cases: no hypothesis database), so a
fast path that drifts from its meaning fails here before it changes an artifact's bytes.
"""

from __future__ import annotations

import numpy as np

from toolc import encode as E
from toolc.encode_twins import _sub, _without_then
from toolc.runtime.fileformat import COMPLEMENT, LIST


def _deltas_by_listing(kind, f_row, f_tok, R, near, anchors_kept=16):
    """The complement deltas as first written: every anchor's flips listed, the first
    fewest kept."""
    f_ptr = np.searchsorted(f_row, np.arange(R + 1))
    anchors, deltas = [], {}
    cand = (kind == COMPLEMENT) | near
    for r in np.flatnonzero(cand).tolist():
        ids = f_tok[f_ptr[r]:f_ptr[r + 1]]
        best = None
        for a in anchors[-anchors_kept:]:
            flips = np.setxor1d(ids, f_tok[f_ptr[a]:f_ptr[a + 1]], assume_unique=True)
            if best is None or len(flips) < len(best[1]):
                best = (a, flips)
        if best is not None and 2 * (len(best[1]) + 1) <= len(ids):
            deltas[r] = best
        elif kind[r] == COMPLEMENT:
            anchors.append(r)
    return deltas


def test_complement_deltas_choose_as_listing_every_anchors_flips_does():
    rng = np.random.default_rng(8)
    for case in range(60):
        R = int(rng.integers(1, 30))
        universe = int(rng.integers(20, 400))
        base = np.sort(rng.choice(universe, int(rng.integers(1, universe // 2 + 1)),
                                  replace=False))
        rows, toks = [], []
        for r in range(R):      # rows near a shared base, so that deltas and ties happen
            flip = rng.choice(universe, int(rng.integers(0, 12)), replace=False)
            ids = np.setxor1d(base, flip) if rng.random() < 0.8 else \
                np.sort(rng.choice(universe, int(rng.integers(1, universe)), replace=False))
            rows.append(np.full(len(ids), r))
            toks.append(ids)
        f_row, f_tok = np.concatenate(rows), np.concatenate(toks).astype(np.int64)
        kind = np.where(rng.random(R) < 0.6, COMPLEMENT, LIST).astype(np.uint8)
        near = (kind != COMPLEMENT) & (rng.random(R) < 0.5)
        kept = int(rng.integers(1, 5))
        got = E._complement_deltas(kind, f_row, f_tok, R, near, anchors_kept=kept)
        want = _deltas_by_listing(kind, f_row, f_tok, R, near, anchors_kept=kept)
        assert got.keys() == want.keys(), case
        for r, (a, flips) in want.items():
            assert got[r][0] == a and np.array_equal(got[r][1], flips), (case, r)


def test_sorted_pairs_match_a_lexsort_in_both_widths():
    rng = np.random.default_rng(18)
    for hi_row in (50, 1 << 13, 1 << 14, 1 << 20):     # int32 keys, either side of 31 bits
        a = rng.integers(0, hi_row, 3000)
        b = rng.integers(0, 151_936, 3000)
        a[:100], b[:100] = a[100:200], b[100:200]       # repeated pairs
        k = np.lexsort((b, a))
        ga, gb = E._sort_pairs(a, b)
        assert ga.dtype == np.int64 and gb.dtype == np.int64
        assert np.array_equal(ga, a[k]) and np.array_equal(gb, b[k]), hi_row


def test_the_order_memo_gives_what_a_fresh_reading_gives_and_cannot_be_written():
    rng = np.random.default_rng(3)
    order = rng.permutation(1000)[:900].astype(np.int32)
    order.setflags(write=False)
    o64, unseen = E._order_of(order, 950)
    assert np.array_equal(o64, order)
    seen = np.zeros(950, dtype=bool)
    seen[order[order < 950]] = True
    assert np.array_equal(unseen, np.flatnonzero(~seen))
    assert not o64.flags.writeable and not unseen.flags.writeable
    assert E._order_of(order, 950)[1] is unseen          # kept for the same array
    assert not np.array_equal(E._order_of(order, 1000)[1], unseen)  # another vocabulary size
    writable = order.copy()                             # an array that may change: not kept
    again = E._order_of(writable, 950)
    writable[0] = 999
    assert not np.array_equal(E._order_of(writable, 950)[1], again[1])


def test_twins_dropped_by_a_boolean_index_as_by_a_gather():
    rng = np.random.default_rng(11)
    for case in range(40):
        n = int(rng.integers(1, 40))
        ptr = np.concatenate([[0], np.cumsum(rng.integers(0, 6, n))]).astype(np.int64)
        cols = [rng.integers(0, 100, int(ptr[-1])) for _ in range(int(rng.integers(1, 4)))]
        drop = np.sort(rng.choice(n, int(rng.integers(0, n + 1)), replace=False))
        k_ptr = np.concatenate([[0], np.cumsum(rng.integers(0, 4, 3))]).astype(np.int64)
        k_cols = [rng.integers(0, 100, int(k_ptr[-1])) for _ in cols]
        keep = np.setdiff1d(np.arange(n), drop)
        p_ptr, p_cols = _sub(ptr, cols, keep)
        want = [np.concatenate([p_ptr, p_ptr[-1] + k_ptr[1:]])]
        want += [np.concatenate([x, y]) for x, y in zip(p_cols, k_cols)]
        got = _without_then(ptr, cols, drop, k_ptr, k_cols)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert np.array_equal(g, w), case
