"""The encoder's patched classes: a twin's class stored as its twin's class plus a patch
(format 7, :mod:`toolc.runtime.fileformat`).

A kind of near twin (:mod:`toolc.encode_twins`) allows and leads where its twin does on every
token outside its own stretches of trie positions. With hermes' closed strings every string
has such twins (the states inside a partly written ``</tool_call>``), and each one's class
repeated its string's 1,700 exceptions: 87% of a request's exception entries (5 to 20 tools
of bench/dynamic.py's catalogue). A class whose first segment is a kind of twin is stored
instead as derived from its twin's class with a patch: the tokens of its own stretches and
special tokens where it differs from that class restricted to its own mask row, each with
its code (0: the token leads to the default). Only the stretches are expanded, so the
encoder never expands or sorts the repeated entries, and the loader never checks them.
"""

from __future__ import annotations

import numpy as np

from .runtime.arrays import expand_runs
from .walk.twins import clip_segments

#: patch twins' classes (a switch for tests that compare with the classes stored whole)
PATCH = True


def twin_patches(segs, kinds, class_of_seg, class_rep, class_of, tgt_ptr, order,
                 span_bits: int):
    """``(classes, bases, (cls, tok, code))``: the classes stored patched, their bases, and
    their patches' entries (grouped by class, unsorted within it); None when none is.

    A class is patched when its first segment is a kind of twin and every one of its states
    has as many targets as the base's largest code (the loader checks a patched class's
    codes against the base's)."""
    if not PATCH:
        return None
    C = len(class_rep)
    kc = np.flatnonzero(class_rep >= kinds.plain)
    if not len(kc):
        return None
    k = class_rep[kc] - kinds.plain
    p_seg = kinds.p_seg[k]
    base = class_of_seg[p_seg]
    # the base's largest code, from its twin's segment (equal to the base's first one)
    top = np.zeros(len(segs.m_ptr) - 1, dtype=np.int64)
    for ptr, code in ((segs.e_ptr, segs.e_code), (segs.es_ptr, segs.es_code)):
        filled = np.flatnonzero(ptr[1:] > ptr[:-1])
        if len(filled):
            top[filled] = np.maximum(top[filled], np.maximum.reduceat(code, ptr[filled]))
    fewest = np.full(C, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(fewest, class_of, np.diff(tgt_ptr))
    ok = (fewest[kc] >= top[p_seg]) & (base != kc)
    kc, k, p_seg, base = kc[ok], k[ok], p_seg[ok], base[ok]
    if not len(kc):
        return None
    # the own stretches of the patched classes' kinds, numbered by patched class
    at = np.full(len(kinds.p_seg), -1, dtype=np.int64)
    at[k] = np.arange(len(k))
    sel = at[kinds.kind] >= 0
    si, sa, sb = at[kinds.kind[sel]], kinds.a[sel], kinds.b[sel]
    ks = kinds.plain + k
    P = len(order)

    def clipped(ptr, cols, src):
        # only the window of segments the sources lie in is searched (the kinds' segments
        # come last, after every plain state's)
        lo, hi = int(src.min()), int(src.max()) + 1
        o = np.repeat(np.arange(lo, hi), np.diff(ptr[lo:hi + 1]))
        window = [c[ptr[lo]:ptr[hi]] for c in cols]
        so, out, _ = clip_segments(o, window, si, src[si], sa, sb, span_bits)
        return so, out

    # the kind's exceptions over its stretches, the base's, and the kind's allowed runs
    e_cols = (segs.e_lo, segs.e_hi, segs.e_code)
    ko, (klo, khi, kcode) = clipped(segs.e_ptr, e_cols, ks)
    bo, (blo, bhi, bcode) = clipped(segs.e_ptr, e_cols, p_seg)
    mo, (mlo, mhi) = clipped(segs.m_ptr, (segs.m_lo, segs.m_hi), ks)
    r, pos = expand_runs(klo, khi)
    k_key, k_code = ko[r] * (P + 1) + pos, kcode[r]
    r, pos = expand_runs(blo, bhi)
    b_key, b_code = bo[r] * (P + 1) + pos, bcode[r]
    # a base entry counts where the kind's row allows its token
    if len(mo):
        j = np.searchsorted(mo * (P + 1) + mlo, b_key, side="right") - 1
        jj = np.maximum(j, 0)
        keep = (j >= 0) & (b_key < mo[jj] * (P + 1) + mhi[jj])
    else:
        keep = np.zeros(len(b_key), dtype=bool)
    pc, pk = _diff(k_key, k_code, b_key[keep], b_code[keep])
    cls, tok, code = [pc // (P + 1)], [order[pc % (P + 1)]], [pk]
    # special tokens: the kind's own against its twin's, over the kind's allowed ones
    L = int(max(segs.s_tok.max(initial=0), segs.es_tok.max(initial=0))) + 1
    (ko, (kt, kcode)), (bo, (bt, bcode)), (so, (st,)) = (
        _segments(ptr, cols, src) for ptr, cols, src in (
            (segs.es_ptr, (segs.es_tok, segs.es_code), ks),
            (segs.es_ptr, (segs.es_tok, segs.es_code), p_seg),
            (segs.s_ptr, (segs.s_tok,), ks)))
    b_key = bo * L + bt
    keep = np.isin(b_key, so * L + st)
    pc, pk = _diff(ko * L + kt, kcode, b_key[keep], bcode[keep])
    cls.append(pc // L)
    tok.append(pc % L)
    code.append(pk)
    cls = kc[np.concatenate(cls)]
    k2 = np.argsort(cls, kind="stable")
    return kc, base, (cls[k2], np.concatenate(tok)[k2], np.concatenate(code)[k2])


def _segments(ptr, cols, idx):
    """Segments ``idx`` of (ptr, cols): (the number in ``idx`` of each element, columns)."""
    which, at = expand_runs(ptr[idx], ptr[idx + 1])
    return which, [c[at] for c in cols]


def _diff(k_key, k_code, b_key, b_code):
    """The patch entries (key, code): the kind's entries that the base lacks or codes
    otherwise, and the base's entries that the kind lacks, with code 0."""
    kk = np.argsort(k_key)
    k_key, k_code = k_key[kk], k_code[kk]
    bk = np.argsort(b_key)
    b_key, b_code = b_key[bk], b_code[bk]
    j = np.minimum(np.searchsorted(b_key, k_key), max(len(b_key) - 1, 0))
    same = (b_key[j] == k_key) & (b_code[j] == k_code) if len(b_key) else \
        np.zeros(len(k_key), dtype=bool)
    gone = ~np.isin(b_key, k_key)
    key = np.concatenate([k_key[~same], b_key[gone]])
    code = np.concatenate([k_code[~same], np.zeros(int(gone.sum()), dtype=np.int64)])
    return key, code
