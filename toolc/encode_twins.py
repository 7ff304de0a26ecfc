"""The encoder's near twins: a twin state encoded from its twin's results, never copied.

A near twin ``q`` of ``p`` (:mod:`toolc.walk.twins`) goes where ``p`` goes on every token
outside a few stretches of trie positions (the root children where their byte rows differ).
A sparse :class:`~toolc.walk.TokenIndex` keeps only ``q``'s own runs there. The encoder
then gives ``q``:

* ``p``'s default next state, so that outside its stretches ``q``'s exceptions are exactly
  ``p``'s, with the same targets;
* ``p``'s exception codes for the targets they share, and codes after ``p``'s for the targets
  only its own stretches reach: its target list is ``p``'s, then those;
* a mask row and a class built once per *kind* of twin: twins whose ``p`` have equal allowed
  positions and exceptions, with equal stretches and equal own runs (coded as above) and
  special tokens, are alike, and one *segment* (a state's allowed intervals, special tokens
  and coded exceptions) is made for each kind, from its first twin: ``p``'s intervals and
  exceptions over the copied stretches, the twin's own over the others. The encoder groups
  those segments with the plain states' into rows and classes, exactly.

So the twins' copies are never made: hermes with closed strings (a partial ``</tool_call>``
state in every string, 2,563 twins on schemas/tools80, each with its string's 1,900 runs) is
encoded from 0.8M runs instead of 5.6M. The artifact means the same as the one encoded from
the filled-in index (the tests compare them token by token); only the codes and defaults of
twins may be laid out otherwise. A few twins (free text's partial ``<tool_call>``) are
filled in and encoded as before (:func:`encoded_as_twins`), so those artifacts stay as they
were, byte for byte.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .runtime.arrays import expand_runs, ptr_of
from .segments import group_parts
from .walk.twins import clip_segments


class Segments(NamedTuple):
    """Per segment (a state, or a kind of twin): allowed position intervals ``m``, allowed
    special tokens ``s``, exception runs ``e`` (positions, code) and special exceptions
    ``es`` (token, code), each as a pointer array and its columns."""

    m_ptr: np.ndarray
    m_lo: np.ndarray
    m_hi: np.ndarray
    s_ptr: np.ndarray
    s_tok: np.ndarray
    e_ptr: np.ndarray
    e_lo: np.ndarray
    e_hi: np.ndarray
    e_code: np.ndarray
    es_ptr: np.ndarray
    es_tok: np.ndarray
    es_code: np.ndarray


class Kinds(NamedTuple):
    """The kinds of twins, after the plain states' segments: kind ``k`` is segment
    ``plain + k``; its own stretches (where it may differ from its twin) are
    ``a[i]:b[i]`` for the ``i`` with ``kind[i] == k``, and ``p_seg[k]`` is its twin's
    segment."""

    plain: int
    kind: np.ndarray
    a: np.ndarray
    b: np.ndarray
    p_seg: np.ndarray


#: twins are encoded from their twins' results when filling them in would copy at least this
#: many runs; fewer are filled in (free text's few partial-tag states: 50k runs on tools80,
#: so artifacts without closed strings stay as they were, byte for byte)
MIN_COPIES = 100_000


def encoded_as_twins(index) -> bool:
    """Is this sparse index encoded twin-aware (else filled in first)?"""
    twin_of = getattr(index, "twin_of", None)
    if twin_of is None:
        return False
    tw = np.flatnonzero(twin_of >= 0)
    sizes = np.diff(np.asarray(index.run_ptr))
    return int(sizes[twin_of[tw]].sum()) >= MIN_COPIES


def twin_codes(twin_of, pairs, p_state, p_tg, first_at, default, code, tgt, tgt_ptr):
    """The twins' exception codes (``code``, per (state, target) pair, rewritten in place for
    the twins' pairs) and every state's target list: a twin's is its twin's, then its own
    new targets in order of first appearance. Returns (tgt, tgt_ptr)."""
    n = len(twin_of)
    sel = np.flatnonzero(twin_of[p_state] >= 0)
    code[sel] = 0
    sel = sel[p_tg[sel] != default[p_state[sel]]]
    q, t = p_state[sel], p_tg[sel]
    p = twin_of[q]
    key = p * (n + 1) + t
    at = np.minimum(np.searchsorted(pairs, key), max(len(pairs) - 1, 0))
    shared = (pairs[at] == key) & (code[at] > 0) if len(pairs) else np.zeros(len(q), bool)
    code[sel[shared]] = code[at[shared]]
    lens = np.diff(tgt_ptr)
    new = sel[~shared]
    new = new[np.lexsort((first_at[new], p_state[new]))]
    nq = p_state[new]
    starts = np.searchsorted(nq, nq, side="left")
    code[new] = lens[twin_of[nq]] + np.arange(len(new)) - starts + 1
    # the target lists: plain states keep theirs, a twin takes its twin's and its new ones
    tw = np.flatnonzero(twin_of >= 0)
    new_len = lens.copy()
    new_len[tw] = lens[twin_of[tw]] + np.bincount(nq, minlength=n)[tw]
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(new_len, out=ptr[1:])
    out = np.empty(int(ptr[-1]), dtype=np.int64)
    src = np.where(twin_of >= 0, twin_of, np.arange(n))
    _, s_at = expand_runs(tgt_ptr[src], tgt_ptr[src + 1])
    _, d_at = expand_runs(ptr[:-1], ptr[:-1] + lens[src])
    out[d_at] = tgt[s_at]
    out[ptr[nq] + code[new] - 1] = p_tg[new]
    return out, ptr


def _sub(ptr, cols, idx):
    """The segments ``idx`` of (ptr, cols): (their ptr, their columns)."""
    which, at = expand_runs(ptr[idx], ptr[idx + 1])
    return ptr_of(which, len(idx)), [c[at] for c in cols]


def _without_then(ptr, cols, drop, k_ptr, k_cols) -> list:
    """[ptr, *cols] of the segments of (ptr, cols) but ``drop`` (sorted), followed by the
    segments (k_ptr, k_cols): what ``_sub`` of the others, then a concatenation, gives, by
    one boolean index per column (the dropped segments are few: twins' own runs)."""
    lens = np.diff(ptr)
    keep_seg = np.ones(len(lens), dtype=bool)
    keep_seg[drop] = False
    out_ptr = np.empty(int(keep_seg.sum()) + len(k_ptr), dtype=np.int64)
    out_ptr[0] = 0
    np.cumsum(lens[keep_seg], out=out_ptr[1:len(out_ptr) - len(k_ptr) + 1])
    kept = int(out_ptr[len(out_ptr) - len(k_ptr)])
    out_ptr[len(out_ptr) - len(k_ptr):] = kept + k_ptr
    keep = np.ones(int(ptr[-1]), dtype=bool)
    keep[ranges_of(ptr, drop)] = False
    # boolean indexing: several times faster than np.compress(..., out=) here
    return [out_ptr] + [np.concatenate([c[keep], kc]) for c, kc in zip(cols, k_cols)]


def _merge_touching(o, lo, hi, code=None):
    """Intervals sorted by (o, lo), each merged with the next when it touches it (and has
    its code): a segment's canonical intervals."""
    if len(o) < 2:
        return o, lo, hi, code
    new = np.ones(len(o), dtype=bool)
    new[1:] = (o[1:] != o[:-1]) | (lo[1:] != hi[:-1])
    if code is not None:
        new[1:] |= code[1:] != code[:-1]
    starts = np.flatnonzero(new)
    ends = np.append(starts[1:], len(o)) - 1
    return o[starts], lo[starts], hi[ends], None if code is None else code[starts]


def twin_segments(index, segs: Segments, span_bits: int):
    """(segments, segment of each state): the plain states' segments, in state order, then
    one per kind of twin (see the module docstring). ``segs`` has one segment per state, a
    twin's holding its own runs only."""
    twin_of = np.asarray(index.twin_of)
    n = len(twin_of)
    plain = np.flatnonzero(twin_of < 0)
    tw = np.flatnonzero(twin_of >= 0)
    # the twins' twins, grouped by their allowed positions and exceptions
    ps = np.unique(twin_of[tw])
    pm_ptr, pm = _sub(segs.m_ptr, [segs.m_lo, segs.m_hi], ps)
    pe_ptr, pe = _sub(segs.e_ptr, [segs.e_lo, segs.e_hi, segs.e_code], ps)
    p_kind, _ = group_parts([(pm_ptr, pm, None), (pe_ptr, pe, None)])
    kind_of_p = np.full(n, -1, dtype=np.int64)
    kind_of_p[ps] = p_kind
    # the twins, grouped by their twin's kind, their stretches and their own parts
    st_ptr = np.searchsorted(index.twin_q, tw).astype(np.int64)
    st_ptr = np.append(st_ptr, len(index.twin_q))
    k = len(tw)
    parts = [(np.arange(k + 1), [kind_of_p[twin_of[tw]]], np.arange(k)),
             (st_ptr, [index.twin_a, index.twin_b, index.twin_own.astype(np.int64)], None)]
    for ptr, cols in ((segs.m_ptr, [segs.m_lo, segs.m_hi]), (segs.s_ptr, [segs.s_tok]),
                      (segs.e_ptr, [segs.e_lo, segs.e_hi, segs.e_code]),
                      (segs.es_ptr, [segs.es_tok, segs.es_code])):
        sp, sc = _sub(ptr, cols, tw)
        parts.append((sp, sc, None))
    kind, first = group_parts(parts)
    # one segment per kind, from its first twin: its own runs over its own stretches, its
    # twin's over the others
    reps = tw[first]
    K = len(reps)
    s_i = ranges_of(st_ptr, first)
    sq = np.repeat(np.arange(K), st_ptr[first + 1] - st_ptr[first])
    own = index.twin_own[s_i]
    src = np.where(own, reps[sq], twin_of[reps[sq]])
    a, b = index.twin_a[s_i], index.twin_b[s_i]
    m_state = np.repeat(np.arange(n), np.diff(segs.m_ptr))
    mo, (mlo, mhi), _ = clip_segments(m_state, (segs.m_lo, segs.m_hi), sq, src, a, b,
                                      span_bits)
    mo, mlo, mhi, _ = _merge_touching(mo, mlo, mhi)
    e_state = np.repeat(np.arange(n), np.diff(segs.e_ptr))
    eo, (elo, ehi, ecode), _ = clip_segments(e_state, (segs.e_lo, segs.e_hi, segs.e_code),
                                             sq, src, a, b, span_bits)
    eo, elo, ehi, ecode = _merge_touching(eo, elo, ehi, ecode)
    rs_ptr, (rs_tok,) = _sub(segs.s_ptr, [segs.s_tok], reps)
    res_ptr, (res_tok, res_code) = _sub(segs.es_ptr, [segs.es_tok, segs.es_code], reps)
    # the plain states' segments, then the kinds'
    out = []
    for ptr, cols, (k_ptr, k_cols) in (
            (segs.m_ptr, [segs.m_lo, segs.m_hi], (ptr_of(mo, K), [mlo, mhi])),
            (segs.s_ptr, [segs.s_tok], (rs_ptr, [rs_tok])),
            (segs.e_ptr, [segs.e_lo, segs.e_hi, segs.e_code],
             (ptr_of(eo, K), [elo, ehi, ecode])),
            (segs.es_ptr, [segs.es_tok, segs.es_code], (res_ptr, [res_tok, res_code]))):
        out.extend(_without_then(ptr, cols, tw, k_ptr, k_cols))
    seg_of = np.empty(n, dtype=np.int64)
    seg_of[plain] = np.arange(len(plain))
    seg_of[tw] = len(plain) + kind
    own_k = np.flatnonzero(own)
    kinds = Kinds(len(plain), sq[own_k], a[own_k], b[own_k], seg_of[twin_of[reps]])
    return Segments(*out), seg_of, kinds


def ranges_of(ptr, idx):
    """The element indices of segments ``idx`` of ``ptr``, concatenated."""
    return expand_runs(ptr[idx], ptr[idx + 1])[1]
