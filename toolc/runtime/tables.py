"""The tables a :class:`~toolc.runtime.matcher.Matcher` reads per token, built once per artifact
from its decoded sections (numpy and the standard library only).
"""

from __future__ import annotations

from array import array
from operator import itemgetter

import numpy as np

from .arrays import expand_runs, or_words
from .fileformat import COMPLEMENT, DELTA, LIST

# a class whose mask row lists at most this many tokens has all of them in the code dict; a
# wider one is two bit tests (allowed? an exception?) and, for an exception, a bisection
DICT_MAX = 64
# a wide class's exceptions are bisected within buckets of 2**EXC_BUCKET_BITS token ids
EXC_BUCKET_BITS = 8
# class keys are multiples of this odd number, larger than any token id: an int hashes to
# itself, so keys (class << k) | token would all share their low bits with the token and
# collide in the dict's table (measured on tools80: 236 ns a lookup, 71 with this stride)
KEY_STRIDE = 2654435761
# wide classes' 16-bit rows are made this many at a time (toolc.runtime.limits prices them)
ROWS_AT_ONCE = 128
KEEP, DROP = 0, 1        # apply plans (see toolc.runtime.bitmask.apply_mask)


def _pick(items: list, idx: np.ndarray) -> list:
    """``[items[i] for i in idx]`` at C speed."""
    if len(idx) == 0:
        return []
    if len(idx) == 1:
        return [items[int(idx[0])]]
    return list(itemgetter(*idx.tolist())(items))


class Tables:
    """What the per-token calls read, in slots (one fixed offset per attribute, however the
    Artifact's own attributes change). Built once per artifact, shared by its matchers."""

    __slots__ = ("logits", "row_view", "st", "codes", "wbits", "rb", "etok", "ecode", "ebkt",
                 "next", "accepting", "final", "only", "state_row", "plans", "num_states",
                 "row_bounds", "row_ids")


def build_tables(header: dict, arrays: dict, masks: np.ndarray, vocab_size: int) -> Tables:
    """Every table of :class:`Tables`, from the decoded sections."""
    t = Tables()
    t.logits = int(header["logits_size"])
    t.num_states = int(header["num_states"])
    state_class = arrays["state_class"].astype(np.int64)
    class_row = arrays["class_row"].astype(np.int64)
    state_row = class_row[state_class]
    t.state_row = state_row.tolist()
    t.row_view = _pick(list(masks), state_row)     # mask(): a stored row view
    # apply_mask's plans, per mask row (None: a listed row, made on first use)
    t.plans = make_plans(t, arrays, masks, vocab_size)
    t.final = arrays["final"].astype(bool).tolist()
    t.accepting = arrays["row_eos"][state_row].tolist()
    t.only = arrays["row_only"][state_row].tolist()
    build_transitions(t, arrays, masks, state_class, class_row)
    return t


def listed_plan(t: Tables, row: int) -> tuple[int, np.ndarray]:
    """The apply plan of a listed row (its stored ids, a view), made and kept on first use."""
    plan = t.plans[row]
    if plan is None:
        lo, hi = t.row_bounds[row], t.row_bounds[row + 1]
        plan = t.plans[row] = (KEEP, t.row_ids[lo:hi])
    return plan


def build_transitions(t: Tables, arrays: dict, masks: np.ndarray,
                      state_class: np.ndarray, class_row: np.ndarray) -> None:
    """The tables ``advance`` reads: arrays and one dict.

    A token ``t`` gets a code ``c`` in state ``q``: 0 if ``t`` is not allowed, 1 if it
    leads to the default next state, ``k + 1`` for exception code ``k``; the next state
    is then ``next[base + c]``. Per state, ``st[4q:4q+4]`` holds ``off, lo, default,
    base`` (32 bytes: one cache line), ``default`` being ``next[base + 1]`` again, so that
    the commonest advance reads no other table line than the state's and its token's.

    A narrow class (a mask row listing at most DICT_MAX tokens) has every allowed token in
    one dict, keyed by ``t`` plus the class's key, ``(class + 1) * KEY_STRIDE``; ``off``
    is minus that key. A wide class has a 16-bit entry per 8 tokens in ``wbits`` from
    entry ``off`` (>= 0): token ``t``'s is entry ``off + (t >> 3)``, whose low byte is the
    mask row's and high byte the exception flags' for tokens ``t & ~7`` on, so
    ``(entry >> (t & 7)) & 0x101`` is 0 for a token the row does not allow, 1 for one that
    leads to the default and 0x101 for an exception (one read, where the row and the flags
    side by side were two cache lines apart). An exception's code is found by bisecting the
    class's sorted
    exceptions ``etok`` within the bucket of ids ``t >> EXC_BUCKET_BITS``: the bucket's
    entries are ``ebkt[j]:ebkt[j + 1]`` for ``j = lo + 2 * (t >> EXC_BUCKET_BITS)`` (a
    start and an end per bucket). A derived class (format 4) has its base's flags masked by
    its own row, and its base's ``lo``: it reads the base's buckets and exceptions, never a
    copy of them. A patched class (format 7) has those flags changed by its patch, and
    buckets of its own that point into its base's entries, but for the few buckets where
    its patch sets a code: those hold a merged copy (:func:`_merge_patches`). A JSON
    string's 1,500 exits make buckets of two or three, so the bisection reads one or two
    cache lines where a bisection of all of them read a dozen: after ``apply_mask`` has
    written a row of logits the caches are cold, and that was advance's slowest path
    (tools80: p50 2.6 µs, p99 7.7 µs, against 1.5 / 4.7 for a narrow class). A dict of
    the exceptions was as fast but doubled the time to build the tables, and a bounded
    string's 100k+ exceptions per class made it huge. Arrays rather than lists: an array
    entry is one memory read where a list entry is two (the slot, then the int object).
    """
    C = len(class_row)
    kind, row_ptr = arrays["row_kind"], arrays["row_ptr"].astype(np.int64)
    count = arrays["row_count"]
    et = arrays["exc_tokens"].astype(np.int64)
    ep = arrays["exc_ptr"].astype(np.int64)
    code = arrays["exc_code"].astype(np.int64) + 1
    e_class = np.repeat(np.arange(C), np.diff(ep))
    # a derived class (format 4) reads its base's exceptions: both are wide
    base = arrays.get("class_base")
    if base is None:
        base = np.full(C, -1, dtype=np.int64)
    derived = base >= 0
    dc = np.flatnonzero(derived)
    shared = np.zeros(C, dtype=bool)
    shared[base[dc]] = True
    narrow = (kind[class_row] == LIST) & (count[class_row] <= DICT_MAX) & ~derived & ~shared
    # narrow classes: {(class + 1) * KEY_STRIDE + token: code} for every allowed token
    ckey = (np.arange(C, dtype=np.int64) + 1) * KEY_STRIDE
    nc = np.flatnonzero(narrow)
    which, at = expand_runs(row_ptr[class_row[nc]], row_ptr[class_row[nc] + 1])
    keys = ckey[nc][which] + arrays["row_data"][at].astype(np.int64)
    vals = np.ones(len(keys), dtype=np.int64)
    sel = narrow[e_class]
    vals[np.searchsorted(keys, ckey[e_class[sel]] + et[sel])] = code[sel]
    t.codes = dict(zip(keys.tolist(), vals.tolist()))
    # wide classes: their exceptions (sorted by class, then token) and bucket bounds; a
    # patched class's entries are its patch, merged into its base's buckets below
    wc = np.flatnonzero(~narrow)
    patch = derived[e_class]
    wsel = ~sel & ~patch
    etok, ecode = et[wsel], code[wsel]
    nb = ((t.logits - 1) >> EXC_BUCKET_BITS) + 2          # buckets + 1 per class
    rank = np.cumsum(~narrow) - 1                        # a wide class's rank
    # bound p (class rank * nb + bucket) = how many exceptions lie in earlier buckets;
    # bucket p's entries are ebkt[2p]:ebkt[2p + 1]
    cnt = np.bincount(rank[e_class[wsel]] * nb + (et[wsel] >> EXC_BUCKET_BITS),
                      minlength=len(wc) * nb)
    bound = np.zeros(len(wc) * nb + 1, dtype=np.int64)
    np.cumsum(cnt, out=bound[1:])
    ebkt = np.empty(2 * len(wc) * nb, dtype="=i4")
    ebkt[0::2], ebkt[1::2] = bound[:-1], bound[1:]
    if patch.any():
        etok, ecode = _merge_patches(ebkt, etok, ecode, nb, rank * nb, base,
                                     e_class[patch], et[patch], code[patch])
    t.etok = array("i", etok.astype("=i4").tobytes())
    t.ecode = array("i", ecode.astype("=i4").tobytes())
    t.ebkt = array("i", ebkt.tobytes())
    # wide classes: mask row bits and exception flags, side by side
    words = masks.shape[1]
    wpos = np.full(C, -1, dtype=np.int64)
    wpos[wc] = np.arange(len(wc))
    flags = np.zeros((len(wc), words), dtype=np.uint32)
    sel = wsel
    word, bits = or_words(wpos[e_class[sel]] * words + (et[sel] >> 5), et[sel] & 31)
    flags.reshape(-1)[word] = bits
    if len(dc):     # the base's exception flags where the derived class's row allows
        flags[wpos[dc]] = flags[wpos[base[dc]]] & masks[class_row[dc]].view(np.uint32)
        # and a patch's: every token it names leaves them, those with a code join again
        sel = patch
        word, bits = or_words(wpos[e_class[sel]] * words + (et[sel] >> 5), et[sel] & 31)
        flags.reshape(-1)[word] &= ~bits
        sel = patch & (code > 1)
        word, bits = or_words(wpos[e_class[sel]] * words + (et[sel] >> 5), et[sel] & 31)
        flags.reshape(-1)[word] |= bits
    # per 8 tokens, one 16-bit entry: the row's byte, then the flags' byte above it
    # written into the array in chunks of classes: no copy of the whole (limits.py)
    t.wbits = array("H", [0]) * (len(wc) * words * 4)
    if len(wc):
        view = np.frombuffer(t.wbits, dtype=np.uint16).reshape(len(wc), words * 4)
        for lo in range(0, len(wc), ROWS_AT_ONCE):
            hi = min(lo + ROWS_AT_ONCE, len(wc))
            np.left_shift(flags[lo:hi].view(np.uint8), 8, out=view[lo:hi], dtype=np.uint16)
            view[lo:hi] |= masks[class_row[wc[lo:hi]]].view(np.uint8)
        del view
    t.rb = words * 4                    # entries per wide class
    n = len(state_class)
    tgt_ptr = arrays["tgt_ptr"].astype(np.int64)
    per_class = np.zeros((C, 3), dtype=np.int64)
    per_class[:, 0] = -ckey
    per_class[wc, 0] = wpos[wc] * t.rb
    per_class[wc, 1] = np.arange(len(wc)) * 2 * nb
    plain_dc = dc[np.diff(ep)[dc] == 0]                 # derived, with no patch
    per_class[plain_dc, 1] = per_class[base[plain_dc], 1]          # the base's buckets
    per_state = np.empty((n, 4), dtype="=i8")
    per_state[:, :3] = np.take(per_class, state_class, axis=0)
    first = tgt_ptr[:-1] + np.arange(n)         # where each state's default goes
    per_state[:, 3] = first - 1
    per_state[:, 2] = arrays["default_next"]
    t.st = array("q", per_state.tobytes())
    # per state: its default next state, then its exception targets
    nxt = np.empty(n + len(arrays["tgt"]), dtype="=i8")
    is_default = np.zeros(len(nxt), dtype=bool)
    is_default[first] = True
    nxt[first] = arrays["default_next"]
    nxt[~is_default] = arrays["tgt"]
    t.next = array("q", nxt.tobytes())


def _merge_patches(ebkt, etok, ecode, nb, first, base, p_cls, p_tok, p_code):
    """A patched class's buckets (``first[c]``: class ``c``'s first bucket): its base's
    (``ebkt`` pairs, copied), but those where its patch sets a code, which hold the base's
    entries there less the tokens the patch names, plus the patch's coded entries, sorted,
    after the others. Returns (etok, ecode)."""
    for c in np.unique(p_cls).tolist():         # untouched buckets read the base's entries
        lo, b = 2 * int(first[c]), 2 * int(first[base[c]])
        ebkt[lo:lo + 2 * nb] = ebkt[b:b + 2 * nb]
    coded = p_code > 1
    key = np.unique(p_cls[coded] * nb + (p_tok[coded] >> EXC_BUCKET_BITS))
    cls, bkt = key // nb, key % nb
    src = 2 * (first[base[cls]] + bkt)
    which, at = expand_runs(ebkt[src].astype(np.int64), ebkt[src + 1].astype(np.int64))
    b_cls, b_tok, b_code = cls[which], etok[at], ecode[at]
    L = int(max(p_tok.max(), b_tok.max(initial=0))) + 1
    keep = ~np.isin(b_cls * L + b_tok, p_cls * L + p_tok)
    m_cls = np.concatenate([b_cls[keep], p_cls[coded]])
    m_tok = np.concatenate([b_tok[keep], p_tok[coded]])
    m_code = np.concatenate([b_code[keep], p_code[coded]])
    k = np.lexsort((m_tok, m_cls))
    m_key = m_cls[k] * nb + (m_tok[k] >> EXC_BUCKET_BITS)
    slot = 2 * (first[cls] + bkt)
    ebkt[slot] = len(etok) + np.searchsorted(m_key, key, side="left")
    ebkt[slot + 1] = len(etok) + np.searchsorted(m_key, key, side="right")
    return np.concatenate([etok, m_tok[k]]), np.concatenate([ecode, m_code[k]])


def make_plans(t: Tables, arrays: dict, masks: np.ndarray, vocab_size: int) -> list:
    """Every row's apply plan but the listed rows' (a view of their stored ids, made on
    first use in about a microsecond), so that no first use of a row costs more: a
    complement row, or one differing from a complement by a few ids, lists its forbidden
    ids; any other row comes from its bits (50 to 100 µs each, now at load). tools80:
    its 20 such rows in about 0.3 ms."""
    a, L, V = arrays, t.logits, vocab_size
    kind, data = a["row_kind"], a["row_data"]
    ptr = t.row_bounds = a["row_ptr"].astype(np.int64).tolist()
    ids = t.row_ids = data.astype(np.intp)
    past = np.arange(V, L, dtype=np.intp)
    plans = [None] * len(kind)
    for r in np.flatnonzero(kind != LIST).tolist():
        lo, hi = ptr[r], ptr[r + 1]
        base = int(data[lo]) if kind[r] == DELTA else -1
        if kind[r] == COMPLEMENT:
            plans[r] = (DROP, np.concatenate([ids[lo:hi], past]))
        elif base >= 0 and kind[base] == COMPLEMENT and (hi == lo + 1 or
                                                         int(data[hi - 1]) < V):
            # a complement row with a few ids flipped: still a complement. Its forbidden
            # ids are the base's but the flipped ones, plus the flipped ones the base
            # allowed (both lists are sorted: no sort needed)
            b, d = ids[ptr[base]:ptr[base + 1]], ids[lo + 1:hi]
            at = np.searchsorted(b, d)
            hit = at < len(b)
            hit[hit] = b[at[hit]] == d[hit]
            keep = np.ones(len(b), dtype=bool)
            keep[at[hit]] = False
            plans[r] = (DROP, np.concatenate([b[keep], d[~hit], past]))
        else:
            bits = np.unpackbits(masks[r].view(np.uint8), count=L,
                                 bitorder="little").view(bool)
            plans[r] = ((KEEP, np.flatnonzero(bits)) if 2 * int(a["row_count"][r]) <= L
                        else (DROP, np.flatnonzero(~bits)))
    return plans

