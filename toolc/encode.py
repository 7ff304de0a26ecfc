"""The encoder, compile side: a :class:`~toolc.walk.TokenIndex` to the sections of an
artifact file (the layout is specified in :mod:`toolc.runtime.fileformat`).

Everything is computed for all states at once, in numpy. A class is a mask row plus a pattern
of exceptions whose targets are named by code, not by state; classes whose exceptions repeat
an earlier class's are stored as derived from it (format 4); each distinct mask row is stored
the smallest way (ids, complement, bitmap, or a delta against a complement row).
"""

from __future__ import annotations

import numpy as np

from . import budget
from .runtime.arrays import expand_runs, ptr_of
from .runtime.fileformat import BITMAP, COMPLEMENT, DELTA, LIST, num_words
from .encode_derive import _apply_derivation, _derive_classes
from .encode_patch import twin_patches
from .encode_twins import Segments, encoded_as_twins, twin_codes, twin_segments
from .segments import group_parts, unique_keys

def _arr(a, dtype: str) -> bytes:
    return np.ascontiguousarray(a, dtype=np.dtype(dtype)).tobytes()



def encode_index(index) -> dict:
    """Sections from a TokenIndex (duck-typed: the runtime never imports the compiler).

    Everything is computed for all states at once, in numpy: the default next state of each
    state (the target of most of its tokens), its exceptions coded by target, the classes
    (equal mask row and equal coded exceptions), and the distinct mask rows. No Python loop
    runs over states; one runs over the few complement rows, to find deltas between them.
    """
    budget.check("encoding the artifact")
    twin_of = getattr(index, "twin_of", None)
    if twin_of is not None and not encoded_as_twins(index):
        index, twin_of = index.full(), None
    n = int(index.num_states)
    vocab_size, logits_size = int(index.vocab_size), int(index.logits_size)
    words = num_words(logits_size)
    order, unseen = _order_of(index.order, vocab_size)
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
    pairs, first_at, pair_of = unique_keys(key)
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
    if twin_of is not None:
        # a twin's default is its twin's: their exceptions then agree outside its own stretches
        tw = np.flatnonzero(twin_of >= 0)
        default[tw] = default[twin_of[tw]]
    exc = np.flatnonzero(p_tg != default[p_state])
    by_first = exc[np.lexsort((first_at[exc], p_state[exc]))]
    tgt = p_tg[by_first]
    tgt_ptr = ptr_of(p_state[by_first], n)
    code = np.zeros(len(pairs), dtype=np.int64)
    code[by_first] = np.arange(len(by_first)) - tgt_ptr[p_state[by_first]] + 1
    if twin_of is not None:     # a twin's codes are its twin's, and its new targets after
        tgt, tgt_ptr = twin_codes(twin_of, pairs, p_state, p_tg, first_at, default, code, tgt,
                                  tgt_ptr)
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
    e_ptr = ptr_of(e_state, n)
    sel = np.flatnonzero(a_code[nr:] > 0)
    es_state, es_tok, es_code = sp_state[sel], sp_tok[sel], a_code[nr:][sel]
    es_ptr = ptr_of(es_state, n)

    # each state's allowed positions as merged intervals (whatever their targets)
    m_ptr, m_lo, m_hi = _merged_intervals(run_ptr, run_state, run_lo, run_hi)
    segs = Segments(m_ptr, m_lo, m_hi, sp_ptr, sp_tok, e_ptr, e_lo, e_hi, e_code,
                    es_ptr, es_tok, es_code)
    seg_of = kinds = None
    if twin_of is not None:     # twins' segments from their twins' (encode_twins)
        segs, seg_of, kinds = twin_segments(index, segs, len(order).bit_length())

    # mask rows: segments with equal allowed sets (merged position intervals + special tokens)
    row_of, rows = _encode_rows(segs, order, vocab_size, words, unseen)

    # classes: equal mask row and equal coded exceptions
    nseg = len(segs.m_ptr) - 1
    class_of, class_rep = group_parts([(np.arange(nseg + 1), [row_of], np.arange(nseg)),
                                       (segs.e_ptr, [segs.e_lo, segs.e_hi, segs.e_code], None),
                                       (segs.es_ptr, [segs.es_tok, segs.es_code], None)])
    class_row = row_of[class_rep]
    patched = None
    if seg_of is not None:
        class_of_seg, class_of = class_of, class_of[seg_of]
        # twins' classes as their twins' plus a patch (encode_patch)
        patched = twin_patches(segs, kinds, class_of_seg, class_rep, class_of, tgt_ptr, order,
                               len(order).bit_length())

    # each class's exception tokens and codes, from its first segment: grouped by class (its
    # runs' tokens in position order, then its special tokens) for the derivation below,
    # then, what is left of them, sorted by token
    e_ptr, e_lo, e_hi, e_code = segs.e_ptr, segs.e_lo, segs.e_hi, segs.e_code
    es_ptr, es_tok, es_code = segs.es_ptr, segs.es_tok, segs.es_code
    e_end, es_end = e_ptr[class_rep + 1], es_ptr[class_rep + 1]
    if patched is not None:     # their own entries come from the patch
        e_end, es_end = e_end.copy(), es_end.copy()
        e_end[patched[0]] = e_ptr[class_rep[patched[0]]]
        es_end[patched[0]] = es_ptr[class_rep[patched[0]]]
    which, idx = expand_runs(e_ptr[class_rep], e_end)
    rep, pos = expand_runs(e_lo[idx], e_hi[idx])
    s_which, s_idx = expand_runs(es_ptr[class_rep], es_end)
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
        lo, hi = segs.m_ptr[q], segs.m_ptr[q + 1]
        _, pos = expand_runs(segs.m_lo[lo:hi], segs.m_hi[lo:hi])
        out[order[pos]] = True
        out[segs.s_tok[segs.s_ptr[q]:segs.s_ptr[q + 1]]] = True
        return out

    base = _derive_classes(x_class, x_tok, x_code, len(class_rep), allowed,
                           None if patched is None else patched[1])
    derived = {}
    class_base = np.full(len(class_rep), -1, dtype=np.int64)
    if base is not None:
        x_class, x_tok, x_code, tgt, tgt_ptr = _apply_derivation(
            base, x_class, x_tok, x_code, class_of, tgt, tgt_ptr)
        class_base = base[0]
    if patched is not None:
        class_base[patched[0]] = patched[1]
        x_class, x_tok, x_code = (np.concatenate([x, y]) for x, y in
                                  zip((x_class, x_tok, x_code), patched[2]))
    if np.any(class_base >= 0):
        derived = {"class_base": _arr(class_base, "<i4")}
    x_class, x_tok, x_code = _sort_exceptions(x_class, x_tok, x_code)
    return {
        "state_class": _arr(class_of, "<i4"),
        "default_next": _arr(default, "<i4"),
        "tgt_ptr": _arr(tgt_ptr, "<i4"),
        "tgt": _arr(tgt, "<i4"),
        "final": _arr(index.final, "u1"),
        "class_row": _arr(class_row, "<i4"),
        "exc_ptr": _arr(ptr_of(x_class, len(class_rep)), "<i4"),
        "exc_tokens": _arr(x_tok, "<i4"),
        "exc_code": _arr(x_code, "<i4"),
        **rows,
        **derived,
    }


def _merged_intervals(run_ptr, run_state, run_lo, run_hi):
    """Each state's allowed positions as merged intervals, whatever their targets (a run
    starts one when it starts its state or does not continue the previous run):
    (ptr, lo, hi)."""
    nr = len(run_state)
    new = np.empty(nr, dtype=bool)
    if nr:
        new[0] = True
        np.not_equal(run_lo[1:], run_hi[:-1], out=new[1:])
        new[run_ptr[:-1][run_ptr[:-1] < nr]] = True
    starts = np.flatnonzero(new)
    ends = np.append(starts[1:], nr) - 1
    return np.searchsorted(starts, run_ptr), run_lo[starts], run_hi[ends]


_ORDER_MEMO: list = []      # [(the trie's order array, vocab size, (int64 copy, unseen ids))]


def _order_of(order, vocab_size: int):
    """(the trie's position order as int64, the ids below the vocabulary size that it never
    lists): kept for the last read-only order array seen, which every compile on one trie
    shares (0.5 to 0.7 ms a request, made again each time before)."""
    for held, size, got in _ORDER_MEMO:
        if held is order and size == vocab_size:
            return got
    o64 = np.asarray(order, dtype=np.int64)
    unseen = np.ones(vocab_size, dtype=bool)
    unseen[o64[o64 < vocab_size]] = False
    got = (o64, np.flatnonzero(unseen))
    if isinstance(order, np.ndarray) and not order.flags.writeable:
        for a in got:
            if a is not order:      # the caller's array keeps its own flags
                a.setflags(write=False)
        _ORDER_MEMO[:] = [(order, vocab_size, got)]
    return got


def _encode_rows(segs, order, vocab_size, words, others):
    """(row of each segment, the row sections). Each distinct allowed set is stored the
    smallest way: its ids (LIST), the ids it forbids below the vocabulary size (COMPLEMENT),
    a bitmap, or an earlier complement row and the ids where they differ (DELTA). A row
    allowing most tokens is expanded from the gaps between its intervals, so no row costs
    more than its smaller side."""
    P = len(order)
    m_ptr, m_lo, m_hi = segs.m_ptr, segs.m_lo, segs.m_hi
    s_ptr, sp_tok = segs.s_ptr, segs.s_tok
    row_of, row_rep = group_parts([(m_ptr, [m_lo, m_hi], None), (s_ptr, [sp_tok], None)])
    R = len(row_rep)

    # per row: its intervals (from its first state), its special tokens, how many it allows
    mw, mi = expand_runs(m_ptr[row_rep], m_ptr[row_rep + 1])
    sw, si = expand_runs(s_ptr[row_rep], s_ptr[row_rep + 1])
    n_ord = np.bincount(mw, weights=m_hi[mi] - m_lo[mi], minlength=R).astype(np.int64)
    count = n_ord + np.bincount(sw, minlength=R)
    dense_side = n_ord > P // 2          # expand the gaps between intervals instead
    # allowed tokens of the rows expanded directly
    sel = ~dense_side[mw]
    rep, pos = expand_runs(m_lo[mi][sel], m_hi[mi][sel])
    t_row = np.concatenate([mw[sel][rep], sw[~dense_side[sw]]])
    t_tok = np.concatenate([order[pos], sp_tok[si][~dense_side[sw]]])
    # forbidden tokens of the others: the gaps, the special ids they do not list, and
    # every id the vocabulary walk never sees (ids past the vocabulary are left out)
    d_rows = np.flatnonzero(dense_side)
    sel = dense_side[mw]
    g_row, g_lo, g_hi = _gaps(mw[sel], m_lo[mi][sel], m_hi[mi][sel], d_rows, P)
    rep, pos = expand_runs(g_lo, g_hi)
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
    # a row forbidding a little more than a bitmap's words may still be a few flips of a
    # complement row (closed strings' partial-tag rows: a string's row and the tokens that
    # would complete the tag)
    near = dense_side & (outside == 0) & (n_forbid > words) & (n_forbid <= 2 * words)
    deltas = _complement_deltas(kind, f_row, f_tok, R, near)
    kind[list(deltas)] = DELTA
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


def _complement_deltas(kind, f_row, f_tok, R, near=None, anchors_kept: int = 16) -> dict:
    """Complement rows (and the ``near`` ones, bitmaps otherwise) close to an earlier
    complement row: {row: (that row, the ids where they differ)}. String interiors differ
    from one another in a few dozen of their ~4,600 forbidden tokens (tools80: 16 of 19 such
    rows), so each is stored as a base and a few flips. Each row is compared with the last
    few rows stored whole; a near row that is not close to one stays a bitmap."""
    f_ptr = ptr_of(f_row, R)
    anchors: list[int] = []
    member: dict[int, np.ndarray] = {}     # an anchor's ids as a bool row over the ids
    size = int(f_tok.max(initial=-1)) + 1
    deltas = {}
    cand = kind == COMPLEMENT
    if near is not None:
        cand = cand | near
    for r in np.flatnonzero(cand).tolist():
        budget.check("encoding the artifact")
        ids = f_tok[f_ptr[r]:f_ptr[r + 1]]
        # the flips against each anchor counted as |ids| + |anchor| - 2 |common| (common
        # ids read from the anchor's bool row), and listed for the first fewest only
        best, fewest = None, None
        for a in anchors[-anchors_kept:]:
            n = len(ids) + int(f_ptr[a + 1] - f_ptr[a]) - 2 * int(
                np.count_nonzero(member[a][ids]))
            if fewest is None or n < fewest:
                best, fewest = a, n
        if best is not None and 2 * (fewest + 1) <= len(ids):
            deltas[r] = (best, _xor_sorted(ids, f_tok[f_ptr[best]:f_ptr[best + 1]]))
        elif kind[r] == COMPLEMENT:
            anchors.append(r)
            member[r] = np.zeros(size, dtype=bool)
            member[r][ids] = True
            if len(anchors) > anchors_kept:
                member.pop(anchors[-anchors_kept - 1], None)
    return deltas




def _xor_sorted(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.setxor1d(a, b, assume_unique=True)``: the elements of exactly one of two arrays
    without repeats, sorted. The stable sort (timsort) merges the two arrays as the runs
    they are (a row's ids are sorted) where setxor1d's quicksort sorts from scratch."""
    aux = np.concatenate((a, b))
    aux.sort(kind="stable")
    if len(aux) < 2:
        return aux
    flag = np.empty(len(aux) + 1, dtype=bool)
    flag[0] = flag[-1] = True
    np.not_equal(aux[1:], aux[:-1], out=flag[1:-1])
    return aux[flag[1:] & flag[:-1]]


_STABLE_FROM = 1 << 22      # entries from which the exceptions' sort is the stable one


def _sort_exceptions(cls: np.ndarray, tok: np.ndarray, code: np.ndarray):
    """The exception entries sorted by (class, token), entries of equal class and token in
    their given order (a stable lexsort). One ``np.sort`` of the three packed into an int64
    where they fit: with no (class, token) twice, that is the same order, and several times
    faster on the tens of millions of entries of a long bounded string. The packed keys
    are distinct wherever they are kept, so any sort gives the same order: numpy's stable
    one (timsort) uses the stretches already in order, 0.45 s against 0.71 for the default on
    maxLength 100's 11M entries, but the default is faster on the shuffled stretches of a
    request with hermes' closed strings (250k entries: 3.0 ms against 5.3-9.3)."""
    m = len(cls)
    if m > 1 and min(cls.min(), tok.min(), code.min()) >= 0:
        cb = max(int(code.max()), 1).bit_length()
        tb = max(int(tok.max()), 1).bit_length()
        if int(cls.max()) < 1 << (62 - tb - cb):
            packed = np.left_shift(cls, tb + cb)
            packed |= np.left_shift(tok, cb)
            packed |= code
            packed.sort(kind="stable" if m > _STABLE_FROM else None)
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
        packed = (a << bb) | b
        if int(a.max()) < (1 << (31 - bb)):     # int32 keys sort about twice as fast
            packed = packed.astype(np.int32)
        packed.sort()
        packed = packed.astype(np.int64, copy=False)
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



def build_artifact(header: dict, index, counted=None):
    """An in-memory Artifact from a header and a TokenIndex (compiler side entry point), with
    the counted regions' sections when there are any (:class:`toolc.walk.counts.CountTables`)."""
    from .runtime.artifact import Artifact
    sections = encode_index(index)
    if counted is not None:
        sections.update(counted.sections())
    # the sections were made just now: their sizes, ranges and order are not checked again
    return Artifact.from_parts(header, sections, source="<compiled>", checked=False)
