"""Numbering equal segments of flat numpy arrays, all at once (compile side).

A *segment* is a slice ``ptr[i]:ptr[i+1]`` of some integer columns: a state's token runs, a
class's exceptions, a mask row's intervals. The encoder (:mod:`toolc.encode`) groups states
with equal segments into classes and rows. :func:`group_parts` hashes every segment in one
pass, then checks each against its group's first member element by element; on a hash
collision it falls back to an exact grouping (:func:`_group_exact`), so the result is exact.
"""

from __future__ import annotations

import numpy as np

from .runtime.arrays import ptr_of


def unique_keys(key: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(sorted distinct keys, index of each one's first occurrence, the key of each element
    as an index into them): ``np.unique``, but sorting the keys packed with their element
    index (one ``np.sort``, no argsort) whenever they fit in 62 bits together. The stable
    sort (timsort) makes use of the order the keys come in (the encoder's keys are sorted by
    state, only each state's targets are out of order): tools80's 631k keys sort in 5.6 ms,
    against 29 ms for the default quicksort. Packed keys are distinct: the order is the same."""
    m = len(key)
    ib = max(m - 1, 1).bit_length()
    if m and key.min() >= 0 and int(key.max()) < (1 << (62 - ib)):
        packed = np.left_shift(key, ib)
        packed |= np.arange(m)
        packed.sort(kind="stable")
        perm = packed & ((1 << ib) - 1)
        packed >>= ib
        ks = packed
    else:
        perm = np.argsort(key, kind="stable")
        ks = key[perm]
    new = np.empty(m, dtype=bool)
    new[:1] = True
    np.not_equal(ks[1:], ks[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    # int32 where it fits: the scatter below moves half the bytes
    dt = np.int32 if m < 1 << 31 else np.int64
    ids = np.cumsum(new, dtype=dt)
    ids -= 1
    inverse = np.empty(m, dtype=dt)
    inverse[perm] = ids
    return ks[starts], perm[starts], inverse


# odd 64-bit multipliers: one per column (up to four), one to mix, one for the length
_MIX = (-7046029254386353131, -4417276706812531889, 1609587929392839161, 7640891576956012809,
        -2966597023624037997, -3372029247567499371)
# odd multipliers that keep the parts of a segment apart in its hash
_PART_MIX = (-4658895280553007687, 5573281004521498261, -7723592293110705685)


def _segment_hashes(ptr: np.ndarray, cols: list) -> np.ndarray:
    """A 64-bit hash of each segment: of its length and of the multiset of its elements
    (int64 arithmetic wraps). Segments here are kept sorted, so equal multisets are equal
    segments; equality is checked exactly afterwards anyway."""
    cols = [np.asarray(c, dtype=np.int64) for c in cols]
    # every pass writes into the prefix sums' array or one scratch array (no temporaries)
    cs = np.empty(len(cols[0]) + 1, dtype=np.int64)
    cs[0] = 0
    x = cs[1:]
    np.multiply(cols[0], _MIX[0], out=x)
    tmp = np.empty_like(x)
    for i, c in enumerate(cols[1:4]):
        np.multiply(c, _MIX[i + 1], out=tmp)
        x += tmp
    np.right_shift(x, 31, out=tmp)
    x ^= tmp
    x *= _MIX[4]
    np.right_shift(x, 29, out=tmp)
    x ^= tmp
    del tmp
    np.cumsum(x, out=x)
    return (cs[ptr[1:]] - cs[ptr[:-1]]) + np.diff(ptr) * _MIX[5]


def group_parts(parts: list) -> tuple[np.ndarray, np.ndarray]:
    """Number equal segments alike: (group of each segment, first segment of each group),
    groups numbered in order of first appearance.

    Segments may be made of several parts: ``parts`` is a list of ``(ptr, cols, seg)``,
    every ``ptr`` with one entry per segment plus one, ``cols`` the part's integer columns,
    and ``seg`` the (sorted) segment number of each element of that part, or None. Segments
    are grouped by a hash, and every segment is then compared, element by element, with its
    group's first one; should a hash ever collide, the exact grouping decides instead. Two
    segments are equal
    when every part of them is: the same as one segment holding its parts one after the
    other, as long as the parts cannot be mistaken for one another. Keeping the parts apart
    spares merging them (a state's runs and its few special tokens, say) into one list."""
    parts = [(np.asarray(ptr, dtype=np.int64), cols, seg) for ptr, cols, seg in parts]
    h = None
    for i, (ptr, cols, _) in enumerate(parts):
        hp = _segment_hashes(ptr, cols)
        if i:
            hp *= _PART_MIX[(i - 1) % len(_PART_MIX)]
            h += hp
        else:
            h = hp
    _, first, group = unique_keys(h)
    order = np.argsort(first, kind="stable")        # renumber by first appearance
    rank = np.empty(len(first), dtype=np.int64)
    rank[order] = np.arange(len(first))
    group, firsts = rank[group], first[order]
    rep = firsts[group]
    if all(_equal_to_rep(ptr, cols, seg, rep) for ptr, cols, seg in parts):
        return group, firsts
    return _group_exact(*_concat_parts(parts))


def _equal_to_rep(ptr, cols, seg, rep) -> bool:
    """Is every segment of this part equal, element by element, to segment ``rep`` of it?"""
    lens = np.diff(ptr)
    if not np.array_equal(lens, lens[rep]):
        return False
    delta = ptr[rep] - ptr[:-1]
    if not delta.any():
        return True
    if seg is None:
        seg = np.repeat(np.arange(len(lens)), lens)
    at = delta[seg]
    at += np.arange(len(at))
    return all(np.array_equal(c, np.asarray(c)[at]) for c in cols)


def _concat_parts(parts: list):
    """One segment list (ptr, cols) holding each segment's parts one after the other, a
    column naming the part first (for the exact grouping after a hash collision)."""
    nseg = len(parts[0][0]) - 1
    width = max(len(cols) for _, cols, _ in parts)
    seg_all, part_all, cols_all = [], [], [[] for _ in range(width)]
    for i, (ptr, cols, _) in enumerate(parts):
        lens = np.diff(ptr)
        seg_all.append(np.repeat(np.arange(nseg), lens))
        part_all.append(np.full(int(lens.sum()), i, dtype=np.int64))
        for j in range(width):
            cols_all[j].append(np.asarray(cols[j], dtype=np.int64) if j < len(cols)
                               else np.zeros(int(lens.sum()), dtype=np.int64))
    seg = np.concatenate(seg_all)
    k = np.argsort(seg, kind="stable")
    cols = [np.concatenate(part_all)[k]] + [np.concatenate(c)[k] for c in cols_all]
    return ptr_of(seg[k], nseg), cols


def _group_exact(ptr: np.ndarray, cols: list) -> tuple[np.ndarray, np.ndarray]:
    """:func:`group_parts` for one part, without hashing: segments of one length are compared
    as byte
    strings by ``np.unique``, one call per distinct length."""
    nseg = len(ptr) - 1
    lens = np.diff(ptr)
    data = np.stack([np.asarray(c, dtype="<i8") for c in cols], axis=1)
    k = data.shape[1]
    by_len = np.argsort(lens, kind="stable")
    bounds = np.flatnonzero(np.diff(lens[by_len])) + 1
    provisional = np.empty(nseg, dtype=np.int64)
    firsts, base = [], 0
    for segs in np.split(by_len, bounds) if nseg else []:
        width = int(lens[segs[0]])
        if width == 0:
            provisional[segs] = base
            firsts.append(segs[:1])
            base += 1
            continue
        block = np.ascontiguousarray(data[ptr[segs][:, None] + np.arange(width)])
        keys = block.reshape(len(segs), width * k).view(np.dtype((np.void, width * k * 8)))
        _, first, inv = np.unique(keys.ravel(), return_index=True, return_inverse=True)
        provisional[segs] = base + inv.reshape(-1)
        firsts.append(segs[first])
        base += len(first)
    firsts = np.concatenate(firsts) if firsts else np.zeros(0, np.int64)
    by_first = np.argsort(firsts, kind="stable")
    rank = np.empty(base, dtype=np.int64)
    rank[by_first] = np.arange(base)
    return rank[provisional], firsts[by_first]
