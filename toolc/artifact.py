"""The artifact file: a deterministic msgpack document, verified before it is trusted.

Runtime side: imports numpy and msgpack only.

Layout (one msgpack map)::

    {"magic": "toolc-artifact", "version": 3 or 4, "compression": "zlib",
     "body": <bin: zlib(msgpack [header, sections])>, "sha256": <bin: sha256 of body>}

``sections`` maps names to little-endian arrays. For ``n`` states, ``C`` transition classes
and ``R`` distinct mask rows:

    state_class   int32[n]      the transition class of each state
    default_next  int32[n]      where an allowed token that is not an exception leads (-1: none)
    tgt_ptr       int32[n + 1]  state q's exception targets are tgt[tgt_ptr[q]:tgt_ptr[q+1]]
    tgt           int32[...]    exception code k of state q leads to tgt[tgt_ptr[q] + k - 1]
    final         uint8[n]      1 where EOS has been consumed
    class_row     int32[C]      the mask row of each class
    exc_ptr       int32[C + 1]  class c's exceptions are exc_ptr[c]:exc_ptr[c+1]
    exc_tokens    int32[...]    allowed tokens that do not lead to the default, sorted per class
    exc_code      int32[...]    their codes, 1-based
    row_kind      uint8[R]      how each row is stored: 0 = sorted ids of the allowed tokens,
                                1 = sorted ids of the tokenizer's range that are *not* allowed,
                                2 = int32 bit words, 3 = an earlier row of another kind (its
                                index first) and the sorted ids where this row differs
    row_ptr       int32[R + 1]  row r is row_data[row_ptr[r]:row_ptr[r+1]]
    row_data      int32[...]
    class_base    int32[C]      version 4 only: the earlier class each class derives from, or
                                -1. A derived class stores no exceptions: its exceptions are
                                its base's entries whose tokens its own row allows, with the
                                base's codes (the base is never derived itself), and its
                                states' target lists cover every code of the base

A class is a mask row plus a pattern of exceptions whose targets are named by code, not by
state. All string interiors of a tool set, for instance, allow the same tokens and leave the
string on the same tokens; they differ only in where a closing quote leads. So the exception
tokens are stored once per class (tools80: 1,352 classes for 17,177 states, 41k exception
entries instead of 608k) and each state keeps only its short list of targets.

A bounded string (``maxLength``) is a chain of states, one per character position, whose
tokens lead by length to the positions after it: 100k+ exceptions per class. The positions
near the bound allow fewer lengths, so each has a class of its own, which repeats most of a
longer one's exceptions. Such a class is stored as derived from the longer one (version 4):
maxLength 100 goes from 11M exception entries and 22.5 MB to 379k entries and 1.2 MB. The
runtime reads a derived class's exceptions from its base (the base's exception flags masked
by the derived row), so loading takes 0.05 s and 150 MB where the expanded 11M entries took
1.15 s and 1.1 GB. A file without derived classes is written as version 3, byte for byte as
before.

The bit layout of a mask row is xgrammar's: token ``t`` is allowed iff bit ``t % 32`` of word
``t // 32`` is set.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import zlib

import msgpack
import numpy as np

from .errors import ArtifactError

MAGIC = "toolc-artifact"
FORMAT_VERSION = 3
# version 4 is version 3 plus a ``class_base`` section (classes derived from earlier ones);
# a file is written as version 4 only when it has derived classes
DERIVED_VERSION = 4
ZLIB_LEVEL = 6
# a body larger than this is compressed at level 1: a bounded string's 92 MB body (maxLength
# 100) took 6.4 s at level 6 and takes 0.9 s at level 1, for a file 7.5% larger (24.2 MB
# against 22.5); every tool set of schemas/ is far below it (tools80: 0.9 MB)
ZLIB_FAST_ABOVE = 8 << 20
# the inflated body is never allowed to grow past this (a forged stream cannot exhaust memory)
MAX_BODY_BYTES = 1 << 30
LIST, COMPLEMENT, BITMAP, DELTA = 0, 1, 2, 3
# a forged length must not make the loader allocate more than this
MAX_FILE_BYTES = 1 << 31
MAX_LOGITS = 1 << 24          # sixteen million logits: far beyond any tokenizer
MAX_MASK_BYTES = 1 << 30      # the expanded mask matrix (distinct rows x logits / 8)
_HEADER_TYPES = {"num_states": int, "vocab_size": int, "logits_size": int, "fingerprint": str,
                 "tokenizer": str, "format": str, "tools": list, "eos_token_ids": list}
_SECTION_DTYPES = {"state_class": "<i4", "default_next": "<i4", "tgt_ptr": "<i4", "tgt": "<i4",
                   "final": "u1", "class_row": "<i4", "exc_ptr": "<i4", "exc_tokens": "<i4",
                   "exc_code": "<i4", "row_kind": "u1", "row_ptr": "<i4", "row_data": "<i4"}


def num_words(logits_size: int) -> int:
    return (logits_size + 31) // 32


def _arr(a, dtype: str) -> bytes:
    return np.ascontiguousarray(a, dtype=np.dtype(dtype)).tobytes()


def _expand_runs(lo: np.ndarray, hi: np.ndarray):
    """(run index, position) of every position covered by the runs ``lo:hi``."""
    cnt = hi - lo
    rep = np.repeat(np.arange(len(lo)), cnt)
    # position lo[r] + (i - start of run r) for element i: one repeat of lo - start, plus i
    pos = np.repeat(lo - np.cumsum(cnt) + cnt, cnt)
    pos += np.arange(len(pos), dtype=pos.dtype)
    return rep, pos


def _ptr(seg: np.ndarray, count: int) -> np.ndarray:
    """Boundaries of ``count`` segments given each element's (sorted) segment number."""
    return np.searchsorted(seg, np.arange(count + 1)).astype(np.int64)


def _unique(key: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(sorted distinct keys, index of each one's first occurrence, the key of each element
    as an index into them): ``np.unique``, but sorting the keys packed with their element
    index (one ``np.sort``, no argsort) whenever they fit in 62 bits together. The stable
    sort (timsort) makes use of the order the keys come in (encode_index's keys are sorted by
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
    x = np.multiply(cols[0], _MIX[0])
    for i, c in enumerate(cols[1:4]):
        x += np.multiply(c, _MIX[i + 1])
    x ^= x >> 31
    x *= _MIX[4]
    x ^= x >> 29
    cs = np.zeros(len(x) + 1, dtype=np.int64)
    np.cumsum(x, out=cs[1:])
    return (cs[ptr[1:]] - cs[ptr[:-1]]) + np.diff(ptr) * _MIX[5]


def group_segments(ptr: np.ndarray, cols: list) -> tuple[np.ndarray, np.ndarray]:
    """Number equal segments alike: (group of each segment, first segment of each group).

    Segment ``i`` is the rows ``ptr[i]:ptr[i+1]`` of the integer columns ``cols``; groups are
    numbered in order of first appearance. Segments are grouped by a hash, and every segment
    is then compared element by element with its group's first one; should a hash ever
    collide, the exact grouping (:func:`_group_exact`) decides instead.
    """
    return group_parts([(ptr, cols, None)])


def group_parts(parts: list) -> tuple[np.ndarray, np.ndarray]:
    """:func:`group_segments` for segments made of several parts: ``parts`` is a list of
    ``(ptr, cols, seg)``, every ``ptr`` with one entry per segment plus one, and ``seg`` the
    (sorted) segment number of each element of that part, or None. Two segments are equal
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
    _, first, group = _unique(h)
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
    return _ptr(seg[k], nseg), cols


def _group_exact(ptr: np.ndarray, cols: list) -> tuple[np.ndarray, np.ndarray]:
    """:func:`group_segments` without hashing: segments of one length are compared as byte
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


def encode_index(index) -> dict:
    """Sections from a TokenIndex (duck-typed: the runtime never imports the compiler).

    Everything is computed for all states at once, in numpy: the default next state of each
    state (the target of most of its tokens), its exceptions coded by target, the classes
    (equal mask row and equal coded exceptions), and the distinct mask rows. No Python loop
    runs over states; one runs over the few complement rows, to find deltas between them.
    """
    n = int(index.num_states)
    vocab_size, logits_size = int(index.vocab_size), int(index.logits_size)
    words = num_words(logits_size)
    order = np.asarray(index.order, dtype=np.int64)
    run_lo = np.asarray(index.run_lo, dtype=np.int64)
    run_hi = np.asarray(index.run_hi, dtype=np.int64)
    run_tg = np.asarray(index.run_target, dtype=np.int64)
    run_ptr = np.asarray(index.run_ptr, dtype=np.int64)
    sp_ptr = np.asarray(index.sp_ptr, dtype=np.int64)
    run_state = np.repeat(np.arange(n), np.diff(run_ptr))
    sp_state = np.repeat(np.arange(n), np.diff(sp_ptr))
    sp_tok = np.asarray(index.sp_tokens, dtype=np.int64)
    sp_tg = np.asarray(index.sp_targets, dtype=np.int64)
    k = np.lexsort((sp_tok, sp_state))
    sp_state, sp_tok, sp_tg = sp_state[k], sp_tok[k], sp_tg[k]

    # every allowed (state, run of positions or special token, target): the runs in state
    # order, then the special tokens in state order
    nr = len(run_state)
    key = np.empty(nr + len(sp_state), dtype=np.int64)
    np.multiply(run_state, n + 1, out=key[:nr])
    key[:nr] += run_tg
    key[nr:] = sp_state * (n + 1) + sp_tg

    # (state, target) pairs. The default next state is the target with the most tokens (ties:
    # the smallest state); a state's other targets are its exceptions, coded 1, 2, ... in
    # order of first appearance (its runs in position order, then its special tokens)
    pairs, first_at, pair_of = _unique(key)
    del key
    weight = np.bincount(pair_of, weights=np.concatenate([run_hi - run_lo,
                                                          np.ones(len(sp_state))]),
                         minlength=len(pairs))
    p_state, p_tg = pairs // (n + 1), pairs % (n + 1)
    default = np.full(n, -1, dtype=np.int64)
    if len(pairs):
        new = np.ones(len(pairs), dtype=bool)
        new[1:] = p_state[1:] != p_state[:-1]
        grp = np.cumsum(new) - 1
        best = weight == np.maximum.reduceat(weight, np.flatnonzero(new))[grp]
        cand = np.flatnonzero(best)                     # targets ascending within a state
        top = cand[np.concatenate([[True], grp[cand][1:] != grp[cand][:-1]])]
        default[p_state[top]] = p_tg[top]
    exc = np.flatnonzero(p_tg != default[p_state])
    by_first = exc[np.lexsort((first_at[exc], p_state[exc]))]
    tgt = p_tg[by_first]
    tgt_ptr = _ptr(p_state[by_first], n)
    code = np.zeros(len(pairs), dtype=np.int64)
    code[by_first] = np.arange(len(by_first)) - tgt_ptr[p_state[by_first]] + 1
    a_code = code[pair_of]
    del pair_of
    # the exceptions, in state order: runs of positions (canonical: adjacent runs of one state
    # with one code become one), and special tokens apart (they never continue a run)
    sel = np.flatnonzero(a_code[:nr] > 0)
    e_state, e_lo, e_hi, e_code = run_state[sel], run_lo[sel], run_hi[sel], a_code[sel]
    if len(e_state) > 1:
        new = np.empty(len(e_state), dtype=bool)
        new[0] = True
        new[1:] = ((e_state[1:] != e_state[:-1]) | (e_code[1:] != e_code[:-1])
                   | (e_lo[1:] != e_hi[:-1]))
        if not new.all():
            starts = np.flatnonzero(new)
            ends = np.append(starts[1:], len(e_state)) - 1
            e_state, e_lo, e_hi, e_code = (e_state[starts], e_lo[starts], e_hi[ends],
                                           e_code[starts])
    e_ptr = _ptr(e_state, n)
    sel = np.flatnonzero(a_code[nr:] > 0)
    es_state, es_tok, es_code = sp_state[sel], sp_tok[sel], a_code[nr:][sel]
    es_ptr = _ptr(es_state, n)

    # mask rows: states with equal allowed sets (merged position intervals + special tokens)
    row_of, rows = _encode_rows(n, run_ptr, run_state, run_lo, run_hi, sp_ptr, sp_state,
                                sp_tok, order, vocab_size, words)

    # classes: equal mask row and equal coded exceptions
    class_of, class_rep = group_parts([(np.arange(n + 1), [row_of], np.arange(n)),
                                       (e_ptr, [e_lo, e_hi, e_code], e_state),
                                       (es_ptr, [es_tok, es_code], es_state)])

    # each class's exception tokens and codes, from its first state: grouped by class (its
    # runs' tokens in position order, then its special tokens) for the derivation below,
    # then, what is left of them, sorted by token
    which, idx = _expand_runs(e_ptr[class_rep], e_ptr[class_rep + 1])
    rep, pos = _expand_runs(e_lo[idx], e_hi[idx])
    s_which, s_idx = _expand_runs(es_ptr[class_rep], es_ptr[class_rep + 1])
    x_class = np.concatenate([which[rep], s_which])
    x_tok = np.concatenate([order[pos], es_tok[s_idx]])
    x_code = np.concatenate([e_code[idx][rep], es_code[s_idx]])
    if len(s_which):        # two stretches sorted by class: one merge
        k = np.argsort(x_class, kind="stable")
        x_class, x_tok, x_code = x_class[k], x_tok[k], x_code[k]

    def allowed(c: int) -> np.ndarray:
        """The tokens class ``c``'s mask row allows, as a bool row."""
        q = int(class_rep[c])
        out = np.zeros(logits_size, dtype=bool)
        lo, hi = run_ptr[q], run_ptr[q + 1]
        _, pos = _expand_runs(run_lo[lo:hi], run_hi[lo:hi])
        out[order[pos]] = True
        out[sp_tok[sp_ptr[q]:sp_ptr[q + 1]]] = True
        return out

    base = _derive_classes(x_class, x_tok, x_code, len(class_rep), allowed)
    derived = {}
    if base is not None:
        x_class, x_tok, x_code, tgt, tgt_ptr = _apply_derivation(
            base, x_class, x_tok, x_code, class_of, tgt, tgt_ptr)
        derived = {"class_base": _arr(base[0], "<i4")}
    x_class, x_tok, x_code = _sort_exceptions(x_class, x_tok, x_code)
    return {
        "state_class": _arr(class_of, "<i4"),
        "default_next": _arr(default, "<i4"),
        "tgt_ptr": _arr(tgt_ptr, "<i4"),
        "tgt": _arr(tgt, "<i4"),
        "final": _arr(index.final, "u1"),
        "class_row": _arr(row_of[class_rep], "<i4"),
        "exc_ptr": _arr(_ptr(x_class, len(class_rep)), "<i4"),
        "exc_tokens": _arr(x_tok, "<i4"),
        "exc_code": _arr(x_code, "<i4"),
        **rows,
        **derived,
    }


# a class with at least this many exceptions may be stored as derived from an earlier one
DERIVE_MIN = 4096
DERIVE_TRIES = 8       # earlier classes tried as the base of one, largest first


def _derive_classes(x_class, x_tok, x_code, C: int, allowed):
    """Classes whose exceptions are exactly an earlier class's, restricted to their own mask
    row, with the codes renamed one to one (the entries grouped by class, each class's in
    one order that all classes share, e.g. trie position): ``(base, sigma)``, ``base[c]``
    the class that ``c`` derives from (-1: none) and ``sigma[c]`` its code renaming
    (``sigma[c][k]`` is the base's code for ``c``'s code ``k``), or None when no class
    derives.

    A bounded string is where this pays: each character position is a state whose tokens
    lead, by length, to the positions after it, so its class holds 100k+ exceptions, and
    the positions near the bound, which allow fewer lengths, each had a class of their own
    that repeated the others' exceptions (maxLength 100: 168 classes, 11M entries). Only
    classes of DERIVE_MIN exceptions or more are looked at, so ordinary tool sets (string
    interiors: 1,540) are stored as they were."""
    ptr = _ptr(x_class, C)
    size = np.diff(ptr)
    cand = np.flatnonzero(size >= DERIVE_MIN).tolist()
    if len(cand) < 2:
        return None
    base = np.full(C, -1, dtype=np.int64)
    sigma: dict[int, np.ndarray] = {}
    bases: list[int] = []           # classes that stay whole, largest first
    for b in cand:
        eb, cb = x_tok[ptr[b]:ptr[b + 1]], x_code[ptr[b]:ptr[b + 1]]
        ok = None
        row = None
        for a in bases[:DERIVE_TRIES]:
            if size[a] < size[b]:
                break
            if row is None:
                row = allowed(b)
            ea = x_tok[ptr[a]:ptr[a + 1]]
            sel = row[ea]
            if int(sel.sum()) != len(eb) or not np.array_equal(ea[sel], eb):
                continue
            ca = x_code[ptr[a]:ptr[a + 1]][sel]
            sg = np.zeros(int(cb.max()) + 1, dtype=np.int64)
            sg[cb] = ca
            # one base code per code of b, and no two codes of b on one base code
            if np.array_equal(sg[cb], ca) and len(np.unique(sg[1:])) == len(sg) - 1 \
                    and np.all(sg[1:] > 0):
                ok = (a, sg)
                break
        if ok is None:
            bases.append(b)
            bases.sort(key=lambda c: (-int(size[c]), c))
        else:
            base[b], sigma[b] = ok
    if not sigma:
        return None
    return base, sigma


def _apply_derivation(derivation, x_class, x_tok, x_code, class_of, tgt, tgt_ptr):
    """Drop the derived classes' exceptions and rename their states' targets to the base's
    codes: code ``k`` of a derived class becomes its base's ``sigma[k]``, so a state's target
    list is laid out by the base's codes, as long as the base's (slots no token of the class
    uses hold the state's first target: a valid state that nothing reads). Every code of the
    base is then within the list, which is what the loader checks."""
    base, sigma = derivation
    ptr = _ptr(x_class, len(base))
    full = {c: int(x_code[ptr[base[c]]:ptr[base[c] + 1]].max()) for c in sigma}
    keep = base[x_class] < 0
    x_class, x_tok, x_code = x_class[keep], x_tok[keep], x_code[keep]
    n = len(class_of)
    lens = np.diff(tgt_ptr)
    new_len = lens.copy()
    for c in sigma:
        new_len[class_of == c] = full[c]
    new_ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(new_len, out=new_ptr[1:])
    new_tgt = np.empty(int(new_ptr[-1]), dtype=np.int64)
    plain = np.ones(n, dtype=bool)
    for c, sg in sigma.items():
        qs = np.flatnonzero(class_of == c)
        plain[qs] = False
        m = len(sg) - 1
        old = tgt[tgt_ptr[qs][:, None] + np.arange(m)[None, :]]
        new = np.repeat(old[:, :1], full[c], axis=1)
        new[:, sg[1:] - 1] = old
        new_tgt[(new_ptr[qs][:, None] + np.arange(new.shape[1])[None, :]).ravel()] = new.ravel()
    qs = np.flatnonzero(plain)
    _, src = _expand_runs(tgt_ptr[qs], tgt_ptr[qs + 1])
    _, dst = _expand_runs(new_ptr[qs], new_ptr[qs + 1])
    new_tgt[dst] = tgt[src]
    return x_class, x_tok, x_code, new_tgt, new_ptr


def _encode_rows(n, run_ptr, run_state, run_lo, run_hi, sp_ptr, sp_state, sp_tok, order,
                 vocab_size, words):
    """(row of each state, the row sections). Each distinct allowed set is stored the
    smallest way: its ids (LIST), the ids it forbids below the vocabulary size (COMPLEMENT),
    a bitmap, or an earlier complement row and the ids where they differ (DELTA). A row
    allowing most tokens is expanded from the gaps between its intervals, so no row costs
    more than its smaller side."""
    P = len(order)
    # merged intervals of allowed positions, whatever their targets: a run starts one when
    # it starts its state or does not continue the previous run
    nr = len(run_state)
    new = np.empty(nr, dtype=bool)
    if nr:
        new[0] = True
        np.not_equal(run_lo[1:], run_hi[:-1], out=new[1:])
        new[run_ptr[:-1][run_ptr[:-1] < nr]] = True
    starts = np.flatnonzero(new)
    ends = np.append(starts[1:], nr) - 1
    m_state, m_lo, m_hi = run_state[starts], run_lo[starts], run_hi[ends]
    m_ptr = np.searchsorted(starts, run_ptr)
    s_ptr = sp_ptr
    row_of, row_rep = group_parts([(m_ptr, [m_lo, m_hi], m_state),
                                   (s_ptr, [sp_tok], sp_state)])
    R = len(row_rep)

    # per row: its intervals (from its first state), its special tokens, how many it allows
    mw, mi = _expand_runs(m_ptr[row_rep], m_ptr[row_rep + 1])
    sw, si = _expand_runs(s_ptr[row_rep], s_ptr[row_rep + 1])
    n_ord = np.bincount(mw, weights=m_hi[mi] - m_lo[mi], minlength=R).astype(np.int64)
    count = n_ord + np.bincount(sw, minlength=R)
    dense_side = n_ord > P // 2          # expand the gaps between intervals instead
    # allowed tokens of the rows expanded directly
    sel = ~dense_side[mw]
    rep, pos = _expand_runs(m_lo[mi][sel], m_hi[mi][sel])
    t_row = np.concatenate([mw[sel][rep], sw[~dense_side[sw]]])
    t_tok = np.concatenate([order[pos], sp_tok[si][~dense_side[sw]]])
    # forbidden tokens of the others: the gaps, the special ids they do not list, and
    # every id the vocabulary walk never sees (ids past the vocabulary are left out)
    unseen = np.ones(vocab_size, dtype=bool)
    unseen[order[order < vocab_size]] = False
    others = np.flatnonzero(unseen)
    d_rows = np.flatnonzero(dense_side)
    sel = dense_side[mw]
    g_row, g_lo, g_hi = _gaps(mw[sel], m_lo[mi][sel], m_hi[mi][sel], d_rows, P)
    rep, pos = _expand_runs(g_lo, g_hi)
    o_row = np.repeat(d_rows, len(others))
    o_tok = np.tile(others, len(d_rows))
    listed_sp = np.isin(o_row * (vocab_size + 1) + o_tok,
                        sw * (vocab_size + 1) + sp_tok[si])
    f_row = np.concatenate([g_row[rep], o_row[~listed_sp]])
    f_tok = np.concatenate([order[pos], o_tok[~listed_sp]])
    outside = np.bincount(sw[sp_tok[si] >= vocab_size], minlength=R)

    kind = np.full(R, LIST, dtype=np.uint8)
    n_forbid = np.where(dense_side, np.bincount(f_row, minlength=R), 0)
    kind[~dense_side & (count > words)] = BITMAP
    kind[dense_side] = np.where((n_forbid[dense_side] <= words) & (outside[dense_side] == 0),
                                COMPLEMENT, BITMAP)
    # ids, per row in increasing order
    t_row, t_tok = _sort_pairs(t_row, t_tok)
    f_row, f_tok = _sort_pairs(f_row, f_tok)
    bitmap = np.flatnonzero(kind == BITMAP)
    bits = np.zeros((len(bitmap), words * 32), dtype=bool)
    at = np.full(R, -1, dtype=np.int64)
    at[bitmap] = np.arange(len(bitmap))
    keep = at[t_row] >= 0
    bits[at[t_row[keep]], t_tok[keep]] = True
    dense_bm = bitmap[dense_side[bitmap]]
    bits[at[dense_bm], :vocab_size] = True
    keep = at[f_row] >= 0
    bits[at[f_row[keep]], f_tok[keep]] = False
    sp_out = sp_tok[si] >= vocab_size                  # listed special ids past the vocabulary
    keep = (at[sw] >= 0) & sp_out
    bits[at[sw[keep]], sp_tok[si][keep]] = True
    bm_words = np.packbits(bits, axis=1, bitorder="little").view("<i4")

    deltas = _complement_deltas(kind, f_row, f_tok, R)
    kind[list(deltas)] = DELTA

    sizes = np.where(kind == LIST, count, np.where(kind == COMPLEMENT, n_forbid, words))
    for r, (_, flips) in deltas.items():
        sizes[r] = 1 + len(flips)
    row_ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    data = np.empty(int(row_ptr[-1]), dtype="<i4")
    lst = kind[t_row] == LIST
    data[row_ptr[t_row[lst]] + _rank_in_group(t_row[lst])] = t_tok[lst]
    comp = kind[f_row] == COMPLEMENT
    data[row_ptr[f_row[comp]] + _rank_in_group(f_row[comp])] = f_tok[comp]
    if len(bitmap):
        data[(row_ptr[bitmap][:, None] + np.arange(words)).ravel()] = bm_words.ravel()
    for r, (base, flips) in deltas.items():
        data[row_ptr[r]] = base
        data[row_ptr[r] + 1:row_ptr[r + 1]] = flips
    return row_of, {"row_kind": _arr(kind, "u1"), "row_ptr": _arr(row_ptr, "<i4"),
                    "row_data": data.tobytes()}


def _complement_deltas(kind, f_row, f_tok, R, anchors_kept: int = 16) -> dict:
    """Complement rows close to an earlier complement row: {row: (that row, the ids where
    they differ)}. String interiors differ from one another in a few dozen of their ~4,600
    forbidden tokens (tools80: 16 of 19 such rows), so each is stored as a base and a few
    flips. Each row is compared with the last few rows stored whole."""
    f_ptr = _ptr(f_row, R)
    anchors: list[int] = []
    deltas = {}
    for r in np.flatnonzero(kind == COMPLEMENT).tolist():
        ids = f_tok[f_ptr[r]:f_ptr[r + 1]]
        best = None
        for a in anchors[-anchors_kept:]:
            flips = np.setxor1d(ids, f_tok[f_ptr[a]:f_ptr[a + 1]], assume_unique=True)
            if best is None or len(flips) < len(best[1]):
                best = (a, flips)
        if best is not None and 2 * (len(best[1]) + 1) <= len(ids):
            deltas[r] = best
        else:
            anchors.append(r)
    return deltas


def _merge_by_state(r_state, r_sel, r_cols, s_state, s_sel, s_cols):
    """The selected elements of two state-sorted lists, merged in state order (within a
    state, the first list's before the second's): (their states, their columns)."""
    ridx, sidx = np.flatnonzero(r_sel), np.flatnonzero(s_sel)
    rs = r_state[ridx]
    pos = np.searchsorted(rs, s_state[sidx], side="right") + np.arange(len(sidx))
    total = len(ridx) + len(sidx)
    if not len(sidx):
        return rs, [c[ridx] for c in r_cols]
    if not len(ridx):
        return s_state[sidx], [c[sidx] for c in s_cols]
    from_r = np.ones(total, dtype=bool)
    from_r[pos] = False
    gather = np.zeros(total, dtype=np.int64)
    gather[from_r] = ridx
    out = []
    for rc, sc in zip([r_state] + list(r_cols), [s_state] + list(s_cols)):
        col = rc[gather]
        col[pos] = sc[sidx]
        out.append(col)
    return out[0], out[1:]


def _sort_exceptions(cls: np.ndarray, tok: np.ndarray, code: np.ndarray):
    """The exception entries sorted by (class, token), entries of equal class and token in
    their given order (a stable lexsort). One ``np.sort`` of the three packed into an int64
    where they fit: with no (class, token) twice, that is the same order, and several times
    faster on the tens of millions of entries of a long bounded string. The sort is numpy's
    stable one (timsort), which uses the stretches already in order: 0.45 s against 0.71 for
    the default on maxLength 100's 11M entries (tools80's 36k: 0.4 ms against 1.1)."""
    m = len(cls)
    if m > 1 and min(cls.min(), tok.min(), code.min()) >= 0:
        cb = max(int(code.max()), 1).bit_length()
        tb = max(int(tok.max()), 1).bit_length()
        if int(cls.max()) < 1 << (62 - tb - cb):
            packed = np.left_shift(cls, tb + cb)
            packed |= np.left_shift(tok, cb)
            packed |= code
            packed.sort(kind="stable")
            ct = packed >> cb
            if not np.any(ct[1:] == ct[:-1]):
                return ct >> tb, ct & ((1 << tb) - 1), packed & ((1 << cb) - 1)
    k = np.lexsort((tok, cls))
    return cls[k], tok[k], code[k]


def _sort_pairs(a: np.ndarray, b: np.ndarray):
    """``a``, ``b`` sorted by (a, b), by one ``np.sort`` of packed keys where they fit."""
    if not len(a):
        return a, b
    bb = max(int(b.max()), 1).bit_length()
    if int(a.max()) < (1 << (62 - bb)) and a.min() >= 0 and b.min() >= 0:
        packed = np.sort((a << bb) | b)
        return packed >> bb, packed & ((1 << bb) - 1)
    k = np.lexsort((b, a))
    return a[k], b[k]


def _gaps(row, lo, hi, rows, P):
    """The position intervals of ``rows`` (each 0..P) not covered by their sorted, disjoint
    intervals ``lo:hi`` (grouped by ``row``)."""
    g_row = np.concatenate([rows, row])
    g_lo = np.concatenate([np.zeros(len(rows), np.int64), hi])
    k = np.argsort(g_row, kind="stable")
    g_row, g_lo = g_row[k], g_lo[k]
    nxt_row = np.concatenate([row, rows])
    nxt_lo = np.concatenate([lo, np.full(len(rows), P, np.int64)])
    k = np.argsort(nxt_row, kind="stable")
    g_hi = nxt_lo[k]
    keep = g_hi > g_lo
    return g_row[keep], g_lo[keep], g_hi[keep]


def _rank_in_group(g: np.ndarray) -> np.ndarray:
    """For a sorted group array, each element's index within its group."""
    if not len(g):
        return g
    new = np.ones(len(g), dtype=bool)
    new[1:] = g[1:] != g[:-1]
    starts = np.flatnonzero(new)
    return np.arange(len(g)) - np.repeat(starts, np.diff(np.append(starts, len(g))))


def pack(header: dict, sections: dict) -> bytes:
    raw = msgpack.packb([header, sections], use_bin_type=True)
    body = zlib.compress(raw, ZLIB_LEVEL if len(raw) <= ZLIB_FAST_ABOVE else 1)
    version = DERIVED_VERSION if "class_base" in sections else FORMAT_VERSION
    return msgpack.packb({"magic": MAGIC, "version": version, "compression": "zlib",
                          "body": body, "sha256": hashlib.sha256(body).digest()},
                         use_bin_type=True)


def unpack(data: bytes, source: str = "artifact") -> tuple[dict, dict]:
    """Verify and decode an artifact file's bytes; raise ArtifactError on any damage."""
    if len(data) > MAX_FILE_BYTES:
        raise ArtifactError(f"{source}: {len(data):,} bytes is larger than any artifact")
    try:
        outer = msgpack.unpackb(data, raw=False, max_bin_len=len(data), max_str_len=1 << 16,
                                max_array_len=16, max_map_len=16, strict_map_key=True)
    except Exception as e:  # msgpack raises several kinds for damaged input
        what = "truncated or damaged" if "incomplete" in str(e).lower() else "damaged"
        raise ArtifactError(f"{source}: {what} artifact, or not a toolc artifact "
                            f"(unreadable msgpack: {e})") from None
    if not isinstance(outer, dict) or outer.get("magic") != MAGIC:
        raise ArtifactError(f"{source}: not a toolc artifact (bad magic)")
    version = outer.get("version")
    if type(version) is not int or version not in (FORMAT_VERSION, DERIVED_VERSION):
        raise ArtifactError(f"{source}: artifact format version {version!r}, but this toolc "
                            f"reads versions {FORMAT_VERSION} and {DERIVED_VERSION}; recompile it")
    body, digest = outer.get("body"), outer.get("sha256")
    if not isinstance(body, bytes) or not isinstance(digest, bytes):
        raise ArtifactError(f"{source}: damaged artifact (missing body or checksum)")
    if hashlib.sha256(body).digest() != digest:
        raise ArtifactError(f"{source}: damaged artifact (checksum mismatch)")
    if outer.get("compression") != "zlib":
        raise ArtifactError(f"{source}: unknown compression {outer.get('compression')!r}")
    try:
        inflater = zlib.decompressobj()
        body = inflater.decompress(body, MAX_BODY_BYTES)
        if inflater.unconsumed_tail or not inflater.eof:
            raise ValueError("the body does not inflate within the size limit")
    except (zlib.error, ValueError) as e:
        raise ArtifactError(f"{source}: damaged artifact body ({e})") from None
    try:
        # every length is bounded by the body's size, and extension types are refused, so a
        # forged length cannot make msgpack allocate more than the file holds
        header, sections = msgpack.unpackb(
            body, raw=False, strict_map_key=True, max_bin_len=len(body), max_str_len=len(body),
            max_array_len=len(body), max_map_len=len(body), max_ext_len=0)
    except Exception as e:
        raise ArtifactError(f"{source}: damaged artifact body ({type(e).__name__})") from None
    if isinstance(sections, dict) and ("class_base" in sections) != (version == DERIVED_VERSION):
        raise ArtifactError(f"{source}: damaged artifact (format version {version} "
                            f"{'without' if version == DERIVED_VERSION else 'with'} derived "
                            "classes)")
    return header, sections


def decode_sections(header: dict, sections: dict, source: str = "artifact") -> dict:
    """The arrays the runtime uses, with every size, range and order checked, and the
    distinct mask rows expanded into one matrix (``masks``, int32[R, words])."""
    _check_header(header, source)

    def damaged(what: str):
        return ArtifactError(f"{source}: damaged artifact ({what})")

    try:
        n = int(header["num_states"])
        logits_size = int(header["logits_size"])
        vocab_size = int(header["vocab_size"])
        out = {}
        for k, dt in _SECTION_DTYPES.items():
            if not isinstance(sections[k], bytes):
                raise TypeError(k)
            out[k] = np.frombuffer(sections[k], dtype=np.dtype(dt))
    except (KeyError, TypeError, ValueError) as e:
        raise damaged(f"section {e}") from None
    words = num_words(logits_size)
    C, R = len(out["class_row"]), len(out["row_kind"])
    expect = {"state_class": n, "default_next": n, "tgt_ptr": n + 1, "final": n,
              "exc_ptr": C + 1, "exc_code": len(out["exc_tokens"]), "row_ptr": R + 1}
    for k, size in expect.items():
        if len(out[k]) != size:
            raise damaged(f"section {k} has {len(out[k])} entries, expected {size}")
    if R > max(n, 1) or C > max(n, 1) or R * words * 4 > MAX_MASK_BYTES:
        raise damaged(f"{R:,} mask rows for {n:,} states would take {R * words * 4:,} bytes")
    for p, data in (("tgt_ptr", "tgt"), ("exc_ptr", "exc_tokens"), ("row_ptr", "row_data")):
        ptr = out[p]
        if ptr[0] != 0 or ptr[-1] != len(out[data]) or np.any(ptr[1:] < ptr[:-1]):
            raise damaged(f"inconsistent {p}")
    for k, lo, hi in (("state_class", 0, C), ("class_row", 0, R), ("default_next", -1, n),
                      ("tgt", 0, n), ("exc_tokens", 0, logits_size), ("exc_code", 1, n + 1)):
        a = out[k]
        if len(a) and (a.min() < lo or a.max() >= hi):
            raise damaged(f"value out of range in {k}")

    # mask rows
    kind, row_ptr, row_data = out["row_kind"], out["row_ptr"].astype(np.int64), out["row_data"]
    lens = np.diff(row_ptr)
    if len(kind) and kind.max() > DELTA:
        raise damaged(f"mask row {int(np.argmax(kind > DELTA))} kind {int(kind.max())}")
    if np.any(lens[kind == BITMAP] != words):
        raise damaged(f"mask row {int(np.flatnonzero((kind == BITMAP) & (lens != words))[0])} "
                      "size")
    masks = np.zeros((R, words), dtype=np.uint32)
    flat = masks.reshape(-1)
    count = np.zeros(R, dtype=np.int64)
    eos = np.unique(np.array(header["eos_token_ids"], dtype=np.int64))
    row_eos = np.zeros(R, dtype=bool)       # the row allows an EOS token
    row_only = np.full(R, -1, dtype=np.int64)       # the one token a row allows, if one
    for kd, limit in ((LIST, logits_size), (COMPLEMENT, vocab_size)):
        rows = np.flatnonzero(kind == kd)
        which, at = _expand_runs(row_ptr[rows], row_ptr[rows + 1])
        ids = row_data[at].astype(np.int64)
        r_of = rows[which]
        if len(ids):
            if ids.min() < 0 or ids.max() >= limit:
                r = int(r_of[np.argmax((ids < 0) | (ids >= limit))])
                raise damaged(f"token out of range, row {r}")
            if np.any((ids[1:] <= ids[:-1]) & (r_of[1:] == r_of[:-1])):
                raise damaged("mask row ids out of order")
        word, bits = _or_words(r_of * words + (ids >> 5), ids & 31)
        if kd == LIST:
            flat[word] = bits
            count[rows] = lens[rows]
            row_eos[r_of[np.isin(ids, eos)]] = True
            one = rows[lens[rows] == 1]
            row_only[one] = row_data[row_ptr[one]]
        else:
            full = np.zeros(words * 32, dtype=bool)
            full[:vocab_size] = True
            masks[rows] = np.packbits(full, bitorder="little").view("<u4")
            flat[word] &= ~bits
            count[rows] = vocab_size - lens[rows]
    bm = np.flatnonzero(kind == BITMAP)
    if len(bm):
        masks[bm] = row_data[row_ptr[bm][:, None] + np.arange(words)].view(np.uint32)
        if logits_size % 32 and np.any(masks[bm, -1] >> np.uint32(logits_size % 32)):
            raise damaged("mask row bits past the logits size")
        count[bm] = np.bitwise_count(masks[bm]).sum(axis=1)
    dl = np.flatnonzero(kind == DELTA)
    if len(dl):
        if np.any(lens[dl] < 1):
            raise damaged("delta row without a base")
        base = row_data[row_ptr[dl]].astype(np.int64)
        if np.any((base < 0) | (base >= dl)) or np.any(kind[base] == DELTA):
            raise damaged("delta row base")
        which, at = _expand_runs(row_ptr[dl] + 1, row_ptr[dl + 1])
        ids = row_data[at].astype(np.int64)
        if len(ids) and (ids.min() < 0 or ids.max() >= logits_size
                         or np.any((ids[1:] <= ids[:-1]) & (which[1:] == which[:-1]))):
            raise damaged("delta row ids out of range or order")
        masks[dl] = masks[base]
        word, bits = _or_words(dl[which] * words + (ids >> 5), ids & 31)
        flat[word] ^= bits
        count[dl] = np.bitwise_count(masks[dl]).sum(axis=1)
    dense = np.flatnonzero(kind != LIST)          # rows written whole: read EOS from the bits
    if len(eos) and len(dense):
        row_eos[dense] = ((masks[dense][:, eos >> 5] >> (eos & 31).astype(np.uint32)) & 1).any(1)
    # a row stored as a complement or bitmap that allows one token: find it in the bits
    for r in np.flatnonzero((count == 1) & (kind != LIST)).tolist():
        w = int(np.flatnonzero(masks[r])[0])
        row_only[r] = w * 32 + int(masks[r, w]).bit_length() - 1

    # exceptions: sorted per class, allowed by the class's row, codes within every state's
    # targets; and a state whose row allows more than its exceptions must have a default
    et, ep = out["exc_tokens"].astype(np.int64), out["exc_ptr"].astype(np.int64)
    e_class = np.repeat(np.arange(C), np.diff(ep))
    if np.any((et[1:] <= et[:-1]) & (e_class[1:] == e_class[:-1])):
        raise damaged("exception tokens out of order")
    e_row = out["class_row"][e_class].astype(np.int64)
    if len(et) and not np.all((flat[e_row * words + (et >> 5)] >> (et & 31).astype(np.uint32))
                              & 1):
        raise damaged("an exception token that its mask row does not allow")
    max_code = np.zeros(C, dtype=np.int64)
    filled = np.flatnonzero(ep[1:] > ep[:-1])
    if len(filled):
        max_code[filled] = np.maximum.reduceat(out["exc_code"], ep[filled])
    n_exc = np.diff(ep)
    if "class_base" in sections:
        out["class_base"] = _check_derived(sections["class_base"], ep, out, masks, max_code,
                                           n_exc, damaged)
    sc = out["state_class"]
    if n and np.any(max_code[sc] > np.diff(out["tgt_ptr"])):
        raise damaged("exception code beyond the state's targets")
    if n and np.any((count[out["class_row"][sc]] > n_exc[sc]) & (out["default_next"] < 0)):
        raise damaged("a state without default allows tokens that lead nowhere")
    out["masks"] = masks.view(np.int32)
    out["row_count"] = count
    out["row_eos"] = row_eos
    out["row_only"] = row_only
    out["class_max_code"] = max_code
    return out



def _check_derived(raw, ep: np.ndarray, out: dict, masks: np.ndarray, max_code: np.ndarray,
                   n_exc: np.ndarray, damaged) -> np.ndarray:
    """The ``class_base`` section, checked: a base is an earlier class that is not derived
    itself, and a derived class stores no entries of its own. A derived class's exceptions
    are its base's entries whose tokens its own row allows, with the base's codes; they are
    not expanded (the runtime reads the base's), but their count and the base's largest code
    are entered in ``n_exc`` and ``max_code`` for the checks that follow."""
    C = len(out["class_row"])
    if not isinstance(raw, bytes) or len(raw) != 4 * C:
        raise damaged("section class_base")
    base = np.frombuffer(raw, dtype="<i4").astype(np.int64)
    d = np.flatnonzero(base >= 0)
    if np.any(base < -1) or np.any(base[d] >= d) or np.any(base[base[d]] >= 0) \
            or np.any(ep[d + 1] > ep[d]):
        raise damaged("class_base")
    a = np.unique(base[d])
    words = masks.shape[1]
    exc_bits = np.zeros((len(a), words), dtype=np.uint32)
    which, at = _expand_runs(ep[a], ep[a + 1])
    tok = out["exc_tokens"][at].astype(np.int64)
    word, bits = _or_words(which * words + (tok >> 5), tok & 31)
    exc_bits.reshape(-1)[word] = bits
    own = exc_bits[np.searchsorted(a, base[d])] & masks[out["class_row"][d]]
    n_exc[d] = np.bitwise_count(own).sum(axis=1)
    max_code[d] = max_code[base[d]]
    return base


def expand_derived(arrays: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every class's exceptions, derived classes' included: ``(exc_ptr, exc_tokens,
    exc_code)`` as a format-3 file would hold them (for tools and tests; the runtime reads a
    derived class's base directly)."""
    ep = arrays["exc_ptr"].astype(np.int64)
    base = arrays.get("class_base")
    if base is None or not np.any(base >= 0):
        return ep, arrays["exc_tokens"], arrays["exc_code"]
    C = len(ep) - 1
    words = arrays["masks"].shape[1]
    flat = arrays["masks"].view(np.uint32).reshape(-1)
    d = np.flatnonzero(base >= 0)
    which, at = _expand_runs(ep[base[d]], ep[base[d] + 1])
    tok = arrays["exc_tokens"][at].astype(np.int64)
    row = arrays["class_row"][d[which]].astype(np.int64)
    ok = ((flat[row * words + (tok >> 5)] >> (tok & 31).astype(np.uint32)) & 1).astype(bool)
    own = np.repeat(np.arange(C), np.diff(ep))
    cls = np.concatenate([own, d[which][ok]])
    k = np.argsort(cls, kind="stable")       # a class's entries stay sorted by token
    tokens = np.concatenate([arrays["exc_tokens"], arrays["exc_tokens"][at][ok]])[k]
    codes = np.concatenate([arrays["exc_code"], arrays["exc_code"][at][ok]])[k]
    return _ptr(cls[k], C), tokens, codes


def _or_words(word: np.ndarray, bit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct words of a sorted word index, each with the OR of its bits. The bits of
    one word are distinct (ids increase within a row), so the OR is a sum: a cumsum."""
    if not len(word):
        return word, np.zeros(0, np.uint32)
    ends = np.flatnonzero(np.append(word[1:] != word[:-1], True))
    cs = np.cumsum(np.left_shift(1, bit))
    return word[ends], np.diff(cs[ends], prepend=0).astype(np.uint32)


def _check_header(header: dict, source: str) -> None:
    """Refuse a header whose fields have the wrong types or impossible sizes."""
    for key, typ in _HEADER_TYPES.items():
        v = header.get(key)
        if not isinstance(v, typ) or isinstance(v, bool):
            raise ArtifactError(f"{source}: damaged artifact (header field {key!r} is "
                                f"{type(v).__name__}, expected {typ.__name__})")
    n, vocab, logits = header["num_states"], header["vocab_size"], header["logits_size"]
    if not (0 < n and 0 <= vocab <= logits <= MAX_LOGITS):
        raise ArtifactError(f"{source}: damaged artifact (impossible sizes: {n} states, "
                            f"{vocab} tokens, {logits} logits)")
    eos = header["eos_token_ids"]
    if not all(isinstance(t, int) and not isinstance(t, bool) and 0 <= t < logits for t in eos):
        raise ArtifactError(f"{source}: damaged artifact (EOS token ids out of range)")
    if not all(isinstance(t, str) for t in header["tools"]):
        raise ArtifactError(f"{source}: damaged artifact (tool names)")


def write_atomic(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temp file in the same folder and a rename."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".toolc-", suffix=".tmp", dir=folder)
    umask = os.umask(0)
    os.umask(umask)
    try:
        os.fchmod(fd, 0o666 & ~umask)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def build_artifact(header: dict, index):
    """An in-memory Artifact from a header and a TokenIndex (compiler side entry point)."""
    from .runtime import Artifact
    sections = encode_index(index)
    return Artifact.from_parts(header, sections, source="<compiled>")
