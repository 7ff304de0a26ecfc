"""Near twins: states whose token results are another state's, but for a few first bytes.

A state ``q`` is a **near twin** of a state ``p`` when their byte-class rows differ in a few
classes ``B`` only. For a token whose first byte's class is not in ``B``, reading that byte
from ``q`` lands where reading it from ``p`` lands (or both die), so the token ends where it
ends from ``p``: ``q``'s runs over the trie positions of every root child outside ``B`` are
``p``'s runs there, clipped. Only the tokens starting with a class in ``B`` are walked from
``q``.

The partial-match states of a tag kept out of a string (:mod:`toolc.formats.closure`: after
``</to`` inside a JSON string, the automaton falls back to the string body on every byte but
``o``) are such twins of the string body, and so are free text's partial ``<tool_call>``
states: the walk would otherwise descend the whole vocabulary from each of them.

The candidate ``p`` for ``q`` is the live target most of ``q``'s classes lead to (the state a
KMP-style fallback returns to). A twin's ``p`` is walked in full, never a twin itself, and
``q`` is a twin only where the tokens it walks are few and those it copies many
(:data:`MAX_WALKED`, :data:`MIN_COPIED`). The runs come out identical to the plain walk's:
both are the maximal runs of the same map, position -> target.
"""

from __future__ import annotations

import numpy as np

from .. import budget
from ..runtime.arrays import ranges
from .distances import byte_predecessors
from .runs import _merge_adjacent

#: a twin walks at most this share of the trie's positions itself (the rest it copies)
MAX_WALKED = 0.25
#: and copies live tokens from at least this share (a narrow state is cheaper walked)
MIN_COPIED = 0.5


def find_twins(table: np.ndarray, root_class: np.ndarray, root_size: np.ndarray):
    """(twin_of, differs): ``twin_of[q]`` is the state whose runs ``q`` copies (-1: none),
    ``differs[q]`` the byte classes on which ``q``'s row differs from it (bool[n, classes];
    all False where ``q`` is no twin).

    ``table`` is int[n, classes] (-1 dead); ``root_class`` and ``root_size`` give, per child
    of the trie's root, its byte class and its number of tokens."""
    n, nc = table.shape
    twin_of = np.full(n, -1, dtype=np.int64)
    differs = np.zeros((n, nc), dtype=bool)
    # integer products (a float one would wake BLAS threads that spin on a shared machine),
    # of a uint8 view (half the time of an int64 copy of the flags)
    per_class = np.bincount(root_class, weights=root_size, minlength=nc).astype(np.int64)
    total = max(int(root_size.sum()), 1)
    # only a state with many live tokens can copy many: the others are not looked at
    qs = np.flatnonzero((table >= 0).view(np.uint8) @ per_class >= MIN_COPIED * total)
    if len(qs) == 0:
        return twin_of, differs
    rows = table[qs]
    cand = _most_frequent(rows, n)
    diff = rows != table[np.maximum(cand, 0)]
    walked = diff.view(np.uint8) @ per_class
    diff_live = (rows >= 0) & ~diff
    copied = diff_live.view(np.uint8) @ per_class
    ok = (cand >= 0) & (cand != qs) & (walked <= MAX_WALKED * total) & \
        (copied >= MIN_COPIED * total)
    twin_of[qs[ok]] = cand[ok]
    # the copied state is walked in full
    twin_of[qs[ok & (twin_of[np.maximum(cand, 0)] >= 0)]] = -1
    ok = twin_of[qs] >= 0
    differs[qs[ok]] = diff[ok]
    return twin_of, differs


def _most_frequent(rows: np.ndarray, n: int) -> np.ndarray:
    """Per row of ``rows`` (int[k, classes], states < ``n``, -1 dead), the live state most of
    its classes hold (ties: the smallest state), -1 where none is live: each row sorted, each
    run of equal values scored (its length, then the smaller value) and the best one taken."""
    k, nc = rows.shape
    srt = np.sort(rows, axis=1)
    new = np.ones(srt.shape, dtype=bool)
    new[:, 1:] = srt[:, 1:] != srt[:, :-1]
    col = np.arange(nc, dtype=np.int64)
    # the start of the next run, for each position: the smallest start after it
    nxt = np.where(new, col, nc)
    nxt = np.minimum.accumulate(nxt[:, ::-1], axis=1)[:, ::-1]
    end = np.full(srt.shape, nc, dtype=np.int64)
    end[:, :-1] = nxt[:, 1:]
    score = (end - col) * np.int64(n + 1) + (n - srt.astype(np.int64))
    score[~new | (srt < 0)] = -1
    best = score.max(axis=1)
    return np.where(best >= 0, n - best % (n + 1), -1).astype(np.int64)


def twin_stretches(twin_of, differs, root_lo, root_hi, root_class):
    """Each twin's stretches of trie positions, in (twin, position) order: ``(q, a, b, own)``,
    ``q``'s runs over ``a:b`` its own where ``own`` (the root children its row differs on),
    else its ``p``'s. A twin's stretches cover every position."""
    twins = np.flatnonzero(twin_of >= 0)
    d = differs[twins][:, root_class]                       # twins x root children
    k, nroot = d.shape
    change = np.ones((k, nroot), dtype=bool)
    change[:, 1:] = d[:, 1:] != d[:, :-1]
    t_i, c_i = np.nonzero(change)                          # stretch starts, (twin, child) order
    c_end = np.append(c_i[1:], nroot)
    c_end[np.append(t_i[1:] != t_i[:-1], True)] = nroot
    a, b = root_lo[c_i].astype(np.int64), root_hi[c_end - 1].astype(np.int64)
    return twins[t_i], a, b, d[t_i, c_i]


def copy_twins(o, lo, hi, tg, n: int, twin_of, differs, root_lo, root_hi, root_class,
               span_bits: int, max_runs: int | None = None):
    """The walk's runs (origin, lo, hi, target; sorted and merged), which hold a twin's runs
    only over the root children its row differs on, completed with the copies of its ``p``'s
    runs everywhere else: sorted and merged like the plain walk's."""
    if not (twin_of >= 0).any():
        return o, lo, hi, tg
    q, a, b, own = twin_stretches(twin_of, differs, root_lo, root_hi, root_class)
    return fill_twins(o, lo, hi, tg, n, twin_of, q, a, b, own, span_bits, max_runs)


def fill_twins(o, lo, hi, tg, n: int, twin_of, q, a, b, own, span_bits: int,
               max_runs: int | None = None):
    """:func:`copy_twins` from the twins' stretches (:func:`twin_stretches`).

    No sort: the output is a sequence of *segments*, each a slice of the input runs, clipped
    to a stretch of trie positions: a plain state's own runs, and per twin, stretch by
    stretch, its own runs (where its row differs) or ``p``'s."""
    src = np.where(own, q, twin_of[q])
    plain = np.flatnonzero(twin_of < 0)
    span = np.int64(1) << span_bits
    seg_o = np.concatenate([plain, q])
    seg_src = np.concatenate([plain, src])
    seg_a = np.concatenate([np.zeros(len(plain), np.int64), a])
    seg_b = np.concatenate([np.full(len(plain), span, np.int64), b])
    out_o, cols, first = clip_segments(o, (lo, hi, tg), seg_o, seg_src, seg_a, seg_b,
                                       span_bits, max_runs)
    # the segments' own runs are merged already: only where two segments meet can runs merge
    return _merge_adjacent(out_o, *cols, joints=first)


def clip_segments(o, cols, seg_o, seg_src, seg_a, seg_b, span_bits: int,
                  max_runs: int | None = None):
    """Runs grouped by origin (``o`` sorted, then ``lo``; ``cols`` = (lo, hi, *rest)) copied
    segment by segment: segment ``i`` takes origin ``seg_src[i]``'s runs over positions
    ``seg_a[i]:seg_b[i]``, clipped to them, as runs of ``seg_o[i]``. Output sorted by
    (``seg_o``, ``seg_a``): (origin, cols, index of each non-empty segment's first run)."""
    lo, hi = cols[0], cols[1]
    span = np.int64(1) << span_bits
    # the source's runs overlapping [a, b): from the first ending after a (by (origin, hi)) to
    # the last starting before b (by (origin, lo))
    i0 = np.searchsorted(o * span + hi, seg_src * span + seg_a, side="right")
    i1 = np.searchsorted(o * span + lo, seg_src * span + seg_b, side="left")
    cnt = np.maximum(i1 - i0, 0)
    order = np.lexsort((seg_a, seg_o))
    seg_o, seg_a, seg_b, at, cnt = seg_o[order], seg_a[order], seg_b[order], i0[order], \
        cnt[order]
    budget.check_walk(int(cnt.sum()), max_runs)
    out_o = np.repeat(seg_o, cnt)
    out = _gather(cols, at, cnt)
    # clip each segment's first and last run to its stretch
    full = np.flatnonzero(cnt > 0)
    first = (np.cumsum(cnt) - cnt)[full]
    last = first + cnt[full] - 1
    out[0][first] = np.maximum(out[0][first], seg_a[full])
    out[1][last] = np.minimum(out[1][last], seg_b[full])
    return out_o, out, first


#: at most this many slices are copied one by one (memcpy); more are gathered by index
MAX_SLICES = 4096


def _gather(arrays, at, cnt):
    """Each array's slices ``at:at+cnt``, concatenated. Consecutive slices that continue each
    other are copied as one (a few twins leave the plain states' runs in long stretches)."""
    keep = cnt > 0
    at, cnt = at[keep], cnt[keep]
    if len(at) == 0:
        return [a[:0].copy() for a in arrays]
    start = np.ones(len(at), dtype=bool)
    start[1:] = at[1:] != at[:-1] + cnt[:-1]
    heads = np.flatnonzero(start)
    c_at = at[heads]
    c_cnt = np.add.reduceat(cnt, heads)
    if len(heads) > MAX_SLICES:
        idx = ranges(c_at, c_cnt)
        return [a[idx] for a in arrays]
    bounds = list(zip(c_at.tolist(), (c_at + c_cnt).tolist()))
    return [np.concatenate([a[i:j] for i, j in bounds]) for a in arrays]


def within_reach(trans: np.ndarray, num_byte_classes: int, marked: np.ndarray,
                 depth: int) -> np.ndarray:
    """bool per state: those from which at most ``depth`` bytes lead to a ``marked`` state
    (the marked ones included). A token of at most ``depth`` bytes that touches a marked
    state (ends in one, or passes through one) starts in such a state."""
    src, ptr = byte_predecessors(trans, num_byte_classes)
    seen = marked.copy()
    frontier = np.flatnonzero(marked)
    for _ in range(depth):
        if not len(frontier):
            break
        pred = src[ranges(ptr[frontier], ptr[frontier + 1] - ptr[frontier])]
        pred = np.unique(pred[~seen[pred]])
        seen[pred] = True
        frontier = pred
    return seen
