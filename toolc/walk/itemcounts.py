"""Counted arrays after the walk: what the runtime needs to count items.

An array with ``minItems``/``maxItems`` is built once, unbounded, the inside of its brackets
tagged as a counted region of kind "items" (:class:`~toolc.fsm.Counted`); what the bound
adds is a counter of items started. As for string lengths (:mod:`toolc.walk.counts`), what a
token does to that counter depends on the token's bytes and on a small lexical *phase* of
the state relative to its array, not on the state itself:

* the depth of nesting inside the current item (0 .. ``MAX_ITEM_DEPTH``);
* at depth 0, whether an item has started since ``[`` or the last separator
  (``BEFORE``/``ITEM``);
* inside a string, or just after its backslash (``STR``/``ESC``).

So two tables per (phase, token) are shared by every counted array of the artifact:
``K``, the items the token starts before it leaves the array, and ``X``, whether it leaves
it (a ``]`` at depth 0). An item starts at the first byte after ``[`` or a separator that
is not whitespace; ``1, 2`` starts two. A separator promises an item it has not started
yet: like a pattern's characters still needed (:mod:`toolc.walk.counts`' ``dmin``), each
counted state knows the items it must still start before its array can close
(``dmin``, 0 or 1), and a token that stays must leave room for them under the maximum.

A token that enters a counted array (its ``[``) is replayed here, byte by byte through the
automaton, from every state it could do that from: the items it starts inside the array it
ends in become that pair's entry count (``entries``), and a token that writes a whole
counted array (``[1, 2]``) or starts more items than the bound allows is dropped from the
walk's index. The runtime (:mod:`toolc.runtime.counters`) keeps the counter.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..fsm.dfa import AmbiguousCountError
from ..runtime.arrays import ranges
from ..runtime.itemfile import HALF, LEFT, LOST, MAX_ITEM_DEPTH, NUM_ITEM_PHASES
from .distances import byte_predecessors, zero_one_distances

BEFORE, ITEM, STR, ESC = range(4)          # modes; a phase is 4 * depth + mode
MAX_ITEMS_PER_TOKEN = 127                  # K fits in 7 bits (X is the eighth)
WS = b" \t\n\r"


def _lexer():
    """NEXT[phase, byte], INC[phase, byte] (an item starts), LEAVE[phase, byte]."""
    size = NUM_ITEM_PHASES + 2
    nxt = np.full((size, 256), LOST, dtype=np.int16)
    inc = np.zeros((size, 256), dtype=np.uint8)
    leave = np.zeros((size, 256), dtype=bool)
    b = np.arange(256)
    opener = (b == ord("[")) | (b == ord("{"))
    closer = (b == ord("]")) | (b == ord("}"))
    quote, backslash = b == 0x22, b == 0x5C

    for base, close, other in ((0, "]", "}"), (HALF, "}", "]")):
        def nest(d):
            return LOST if d > MAX_ITEM_DEPTH else base + 4 * d

        before, item = base + BEFORE, base + ITEM
        for d in range(MAX_ITEM_DEPTH + 1):
            s, e = base + 4 * d + STR, base + 4 * d + ESC
            nxt[s] = np.where(quote, base + 4 * d + (ITEM if d == 0 else BEFORE),
                              np.where(backslash, e, s))
            nxt[e] = s
            if d == 0:
                ws = np.isin(b, list(WS))
                nxt[before] = np.select([ws, b == ord(","), quote, opener, b == ord(other)],
                                        [before, LOST, s, nest(1), LOST], item)
                inc[before] = ~ws & (b != ord(",")) & ~closer
                nxt[item] = np.select([b == ord(","), quote, opener, b == ord(other)],
                                      [before, s, nest(1), LOST], item)
                for p in (before, item):
                    nxt[p, ord(close)] = LEFT
                    leave[p, ord(close)] = True
            else:
                nxt[base + 4 * d] = np.select(
                    [quote, opener, closer],
                    [s, nest(d + 1), item if d == 1 else base + 4 * (d - 1)], base + 4 * d)
    nxt[LEFT] = LEFT
    return nxt, inc, leave


NEXT, INC, LEAVE = _lexer()
# the bytes after which a plain token's counting needs the full lexer
SPECIAL = np.zeros(256, dtype=bool)
SPECIAL[list(b'"\\[]{},')] = True
NONWS = np.ones(256, dtype=bool)
NONWS[list(WS)] = False


def lex(phases, lens: np.ndarray, starts: np.ndarray, flat: np.ndarray):
    """K (items started before leaving), X (leaves) and the phase after (LOST: deeper than
    the cap or not JSON) of tokens given as lengths and start offsets into ``flat``, lexed
    from each of ``phases`` (all at once: arrays [phases, tokens])."""
    n = len(lens)
    ph = np.repeat(np.asarray(phases, dtype=np.int16)[:, None], n, axis=1)
    k = np.zeros(ph.shape, dtype=np.int64)
    x = np.zeros(ph.shape, dtype=bool)
    order = np.argsort(-lens, kind="stable")       # the tokens still going are a prefix
    lens, starts = lens[order], starts[order]
    ph, k, x = ph[:, order], k[:, order], x[:, order]
    width = int(lens[0]) if n else 0
    active = np.searchsorted(-lens, -np.arange(1, width + 1), side="right")
    for j in range(width):
        m = int(active[j])
        bj = flat[starts[:m] + j][None, :]
        p = ph[:, :m]
        k[:, :m] += INC[p, bj]
        x[:, :m] |= LEAVE[p, bj]
        ph[:, :m] = NEXT[p, bj]
    out = [np.empty_like(a) for a in (k, x, ph)]
    for o, a in zip(out, (k, x, ph)):
        o[:, order] = a
    return tuple(out)


def phase_tables(phases, ids, lens, flat, logits: int):
    """K and X of every ordinary token from each phase, as one uint8 per entry (K in the
    low seven bits, X the eighth), and the per-phase mask of tokens that get LOST. Tokens
    without a quote, backslash, bracket, brace or comma change nothing but, between items,
    start one if they hold a byte that is not whitespace."""
    starts = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int64)
    csum = np.concatenate([[0], np.cumsum(SPECIAL[flat])])
    special = (csum[starts + lens] - csum[starts]) > 0
    nonws = NONWS[flat]
    wsum = np.concatenate([[0], np.cumsum(nonws)])
    any_nonws = (wsum[starts + lens] - wsum[starts]) > 0
    kx = np.zeros((len(phases), logits), dtype=np.uint8)
    lost = np.zeros((len(phases), logits), dtype=bool)
    for i in np.flatnonzero(np.isin(np.asarray(phases), (BEFORE, HALF + BEFORE))).tolist():
        kx[i, ids[~special]] = any_nonws[~special]
    sel = np.flatnonzero(special)
    k, x, after = lex(phases, lens[sel], starts[sel], flat)
    if k.max(initial=0) > MAX_ITEMS_PER_TOKEN:
        raise AmbiguousCountError("a token that starts too many items to store")
    kx[:, ids[sel]] = k.astype(np.uint8) | (x.astype(np.uint8) << 7)
    lost[:, ids[sel]] = (after == LOST) & ~x
    return kx, lost


def state_phases(dfa, itag: np.ndarray, base: np.ndarray) -> np.ndarray:
    """The phase of every item-tagged state relative to its array (-1 elsewhere), from the
    states a byte enters a counted array at (phase BEFORE); AmbiguousCountError where a
    state would have two, a byte class's bytes disagree, or a byte leaves the array where
    the lexer says it does not (or the reverse)."""
    alpha = dfa.alphabet
    nb = alpha.num_byte_classes
    size = NUM_ITEM_PHASES + 2
    nextc = np.full((size, nb), -1, dtype=np.int64)
    leavec = np.zeros((size, nb), dtype=np.int64)      # 1 leaves, 0 stays, -1 disagree
    bc = alpha.byte_class
    for cl in range(nb):
        members = np.flatnonzero(bc == cl)
        col, lv = NEXT[:, members], LEAVE[:, members]
        agree = (col == col[:, :1]).all(axis=1)
        nextc[:, cl] = np.where(agree, col[:, 0], -1)
        lagree = (lv == lv[:, :1]).all(axis=1)
        leavec[:, cl] = np.where(lagree, lv[:, 0], -1)
    trans = dfa.trans
    n = dfa.num_states
    tagged = itag >= 0
    if (trans[tagged][:, nb:] >= 0).any():
        raise AmbiguousCountError("a special token inside a counted array")
    bt = trans[:, :nb]
    phase = np.full(n, -2, dtype=np.int64)
    # entered: the counted states an uncounted one has a byte edge into
    src, ptr = byte_predecessors(trans, nb)
    outside = np.concatenate([[0], np.cumsum(~tagged[src])])     # per edge, running
    first = np.flatnonzero(tagged)
    first = first[outside[ptr[first + 1]] > outside[ptr[first]]]
    phase[first] = base[itag[first]] + BEFORE
    frontier = first
    while len(frontier):
        q, c = np.nonzero(bt[frontier] >= 0)
        q = frontier[q]
        p = phase[q]
        stays = itag[bt[q, c]] == itag[q]
        lv = leavec[p, c]
        if (lv < 0).any() or (stays & (lv == 1)).any() or (~stays & (lv == 0)).any():
            raise AmbiguousCountError("a counted array's bracket is not where it closes")
        r, p2 = bt[q[stays], c[stays]].astype(np.int64), nextc[p[stays], c[stays]]
        if ((p2 < 0) | (p2 >= NUM_ITEM_PHASES)).any():
            raise AmbiguousCountError("an item deeper than the counter's lexer")
        o = np.lexsort((p2, r))
        r, p2 = r[o], p2[o]
        heads = np.flatnonzero(np.r_[True, r[1:] != r[:-1]]) if len(r) else r
        lo_p = np.minimum.reduceat(p2, heads) if len(r) else p2
        hi_p = np.maximum.reduceat(p2, heads) if len(r) else p2
        ur = r[heads]
        cur = phase[ur]
        if (lo_p != hi_p).any() or ((cur != -2) & (cur != lo_p)).any():
            raise AmbiguousCountError("a state at two places of an item")
        new = cur == -2
        phase[ur[new]] = lo_p[new]
        frontier = ur[new]
    if (phase[tagged] < 0).any():       # pragma: no cover - every tagged state is entered
        raise AmbiguousCountError("a counted array's state without a phase")
    return np.where(phase < 0, -1, phase).astype(np.int8)


def items_needed(dfa, itag: np.ndarray, phase: np.ndarray) -> np.ndarray:
    """For each counted state, the fewest items still to start before its array can close
    (a separator read, its item not started yet: 1), by a 0-1 breadth-first search back from
    the states a ``]`` leaves; 0 outside."""
    nb = dfa.alphabet.num_byte_classes
    bc = dfa.alphabet.byte_class
    incc = np.zeros((NUM_ITEM_PHASES + 2, nb), dtype=np.int64)
    for cl in range(nb):
        col = INC[:, np.flatnonzero(bc == cl)].astype(np.int64)
        incc[:, cl] = np.where((col == col[:, :1]).all(axis=1), col[:, 0], -1)
    n = len(itag)
    tagged = itag >= 0
    R = np.flatnonzero(tagged)          # only the counted states' rows are read
    tr = dfa.trans[R, :nb]
    ok = tr >= 0
    into = tagged[np.maximum(tr, 0)]
    leaves = R[(ok & ~into).any(axis=1)]
    i, cls = np.nonzero(ok & into)
    src = R[i]
    w = incc[np.maximum(phase[src], 0), cls]
    if (w < 0).any():
        raise AmbiguousCountError("a byte class that starts an item for some of its bytes")
    big = np.iinfo(np.int32).max
    dmin = zero_one_distances(src, tr[i, cls], w, n, leaves, np.zeros(len(leaves)), big)
    return np.where(tagged, np.minimum(dmin, big), 0).astype(np.int32)


@dataclass(frozen=True)
class ItemTables:
    """What the artifact stores for counted arrays (see :mod:`toolc.runtime.itemfile`)."""

    tag: np.ndarray          # int32[n]: each state's counted-array tag, -1 outside
    phase: np.ndarray        # int8[n]: the phase of tagged states, -1 elsewhere
    lo: np.ndarray           # int64[T]
    hi: np.ndarray           # int64[T], -1: no maximum
    phases: np.ndarray       # int8[P]: the phases that have tables
    dmin: np.ndarray         # int32[n]: items a counted state must still start to close
    kx: np.ndarray           # uint8[P, logits]: K | X << 7
    entries: tuple           # (states, tokens, counts): a token entering a counted array
    drops: dict              # state -> token ids the walk allowed but a bound forbids
    prefix: str = "itm_"     # "itn_": the arrays nested in a counted array's items

    def sections(self) -> dict[str, bytes]:
        def arr(a, dt):
            return np.ascontiguousarray(a, dtype=np.dtype(dt)).tobytes()
        eq, et, ev = self.entries
        out = {"itm_tag": arr(self.tag, "<i4"), "itm_phase": arr(self.phase, "i1"),
               "itm_lo": arr(self.lo, "<i8"), "itm_hi": arr(self.hi, "<i8"),
               "itm_phases": arr(self.phases, "i1"), "itm_dmin": arr(self.dmin, "<i4"),
               "itm_kx": arr(self.kx, "u1"),
               "itm_eq": arr(eq, "<i4"), "itm_et": arr(et, "<i4"), "itm_ev": arr(ev, "<i8")}
        return {self.prefix + k[4:]: v for k, v in out.items()}


def item_tags(dfa):
    """A DFA's counted regions split by kind and level: (item tags per state, their (lo, hi,
    kind) bounds) for the outer counted arrays and objects, the same for those nested in
    their items (the inner level), and (string tags per state renumbered, their bounds). A
    region nested in a counted array (its tag's bounds are (the array's bounds, its own))
    has its array's tag too."""
    tags = dfa.tags
    n = len(tags)
    levels = {"outer": ([], np.full(n, -1, dtype=np.int32)),
              "inner": ([], np.full(n, -1, dtype=np.int32)),
              "chars": ([], np.full(n, -1, dtype=np.int32))}

    def put(level, b, at, share):
        bounds, tag = levels[level]
        if not share or b not in bounds:
            bounds.append(b)
        tag[at] = bounds.index(b) if share else len(bounds) - 1

    for g, b in enumerate(dfa.tag_bounds):
        at = tags == g
        *around, own = b if isinstance(b[0], tuple) else (b,)
        for level, eb in zip(("outer", "inner"), around):
            put(level, eb, at, True)
        if len(own) == 2:
            put("chars", own, at, False)
        else:
            put(("outer", "inner")[len(around)], own, at, True)
    (ib, itag), (nb, ntag), (sb, stag) = levels.values()
    return itag, ib, ntag, nb, stag, sb


def item_tables(dfa, itag: np.ndarray, bounds: list, index, vocab) -> ItemTables:
    """The counting facts of a walked DFA with counted arrays; AmbiguousCountError where a
    counter could not be exact (the compiler then expands the bounds)."""
    n = dfa.num_states
    base = np.array([HALF if len(b) > 2 and b[2] == "props" else 0 for b in bounds],
                    dtype=np.int64)
    phase = state_phases(dfa, itag, base)
    lo = np.array([b[0] for b in bounds], dtype=np.int64)
    hi = np.array([-1 if b[1] is None else b[1] for b in bounds], dtype=np.int64)
    tagged = np.flatnonzero(itag >= 0)
    phases = np.unique(phase[tagged]).astype(np.int64)
    ids, lens, flat = vocab.ordinary_bytes()
    L = vocab.logits_size
    kx, lost = phase_tables(phases, ids, lens, flat, L)
    pidx = np.full(NUM_ITEM_PHASES, -1, dtype=np.int64)
    pidx[phases] = np.arange(len(phases))
    # a token the walk allows from a counted state must be one the lexer can follow
    if _allows_any(index, tagged, [np.flatnonzero(lost[pidx[p]]) for p in phase[tagged]]):
        raise AmbiguousCountError("a token the item lexer cannot follow")
    dmin = items_needed(dfa, itag, phase)
    drops, entries = _replay(dfa, itag, lo, hi, vocab, dmin, base)
    sp_state = np.repeat(np.arange(n), np.diff(index.sp_ptr))
    if (itag[index.sp_targets] >= 0).any() or (itag[sp_state] >= 0).any():
        raise AmbiguousCountError("a special token next to a counted array")
    return ItemTables(itag, np.where(itag >= 0, phase, -1).astype(np.int8), lo, hi,
                      phases.astype(np.int8), dmin, kx, entries, drops)


def _allows_any(index, states: np.ndarray, tokens: list) -> bool:
    """Whether any of ``states`` allows any of its ``tokens`` (a list of id arrays), by
    looking each (state, token) up among the state's runs, without expanding them."""
    sizes = np.array([len(t) for t in tokens], dtype=np.int64)
    if not sizes.sum():
        return False
    q = np.repeat(states.astype(np.int64), sizes)
    inv = np.empty(len(index.order), dtype=np.int64)
    inv[index.order] = np.arange(len(index.order))
    t = np.concatenate(tokens)
    pos = np.where(t < len(inv), inv[np.minimum(t, len(inv) - 1)], -1)
    r0 = index.run_ptr[q].astype(np.int64)
    r1 = index.run_ptr[q + 1].astype(np.int64)
    m = len(inv) + 1
    # only the runs of ``states`` (a run elsewhere never holds the pair): sorted by (state, lo)
    us = np.unique(states).astype(np.int64)
    sel = ranges(index.run_ptr[us].astype(np.int64), index.run_ptr[us + 1] - index.run_ptr[us])
    keys = np.repeat(us, index.run_ptr[us + 1] - index.run_ptr[us]) * m + index.run_lo[sel]
    o = np.argsort(keys, kind="stable")
    at = np.searchsorted(keys[o], q * m + pos, side="right") - 1
    run = sel[o[np.maximum(at, 0)]] if len(sel) else at
    hit = (at >= 0) & (run >= r0) & (run < r1) & (pos >= 0) & (pos < index.run_hi[run])
    return bool(hit.any())


def _replay(dfa, itag, lo, hi, vocab, dmin, base):
    """Every (state, token with a ``[`` or ``{``) pair that can open a counted region,
    replayed byte by byte through the automaton, all pairs at once: the drops (a whole
    region out of its bounds, or more units than its maximum) and the entries (the units
    started in the counted region the token ends in, having entered it). A pair is followed
    only while it is alive and an opening is within its remaining bytes (``dist``: the
    fewest bytes from a state to inside a counted region), or it is inside one."""
    ids, lens, flat = vocab.ordinary_bytes()
    starts = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int64)
    b_csum = np.concatenate([[0], np.cumsum((flat == ord("[")) | (flat == ord("{")))])
    has = (b_csum[starts + lens] - b_csum[starts]) > 0
    empty = (np.zeros(0, dtype=np.int64),) * 3
    if not has.any():
        return {}, empty
    tid, tl, ts = ids[has], lens[has].astype(np.int64), starts[has]
    width = int(tl.max())
    col = np.arange(width)[None, :]
    inside = col < tl[:, None]
    mat = np.zeros((len(tid), width), dtype=np.int64)
    mat[inside] = flat[(ts[:, None] + col)[inside]]
    trans, bc = dfa.trans, dfa.alphabet.byte_class.astype(np.int64)
    cls = bc[mat]
    dist = _distances_to_regions(dfa, itag, width)
    tagged = itag >= 0
    # the starting pairs: tagged states with the tokens that can leave and open again (a
    # closing byte before an opening one), others with the tokens at least as long as their
    # distance
    closing = np.isin(mat, (ord("]"), ord("}"))) & inside
    opening = np.isin(mat, (ord("["), ord("{"))) & inside
    first_close = np.where(closing.any(axis=1), closing.argmax(axis=1), width)
    last_open = width - 1 - opening[:, ::-1].argmax(axis=1)
    again = np.flatnonzero(first_close < last_open)
    order_t = np.argsort(tl, kind="stable")
    sorted_len = tl[order_t]
    qs = np.flatnonzero(~tagged & (dist <= width))
    k = np.searchsorted(sorted_len, dist[qs], side="left")
    counts = len(tid) - k
    ps = np.concatenate([np.repeat(qs, counts),
                         np.repeat(np.flatnonzero(tagged), len(again))])
    pt = np.concatenate([order_t[ranges(k, counts)],
                         np.tile(again, int(tagged.sum()))])
    start = ps.copy()
    cur = ps
    count = np.zeros(len(ps), dtype=np.int64)
    ph = np.zeros(len(ps), dtype=np.int64)
    opened = np.zeros(len(ps), dtype=bool)
    bad = np.zeros(len(ps), dtype=bool)
    hi_eff = np.where(hi < 0, np.iinfo(np.int64).max, hi)
    done = []          # (start, token index, end state, count, opened, bad) of finished pairs
    for j in range(width):
        fin = tl[pt] <= j
        if fin.any():
            done.append(tuple(a[fin] for a in (start, pt, cur, count, opened, bad)))
        keep = ~fin & (cur >= 0)
        rem = tl[pt] - j
        keep &= opened | tagged[np.maximum(cur, 0)] | (dist[np.maximum(cur, 0)] <= rem) | bad
        start, pt, cur, count, ph, opened, bad = (a[keep] for a in
                                                   (start, pt, cur, count, ph, opened, bad))
        if not len(cur):
            break
        byte = mat[pt, j]
        nq = trans[cur, cls[pt, j]]
        was = tagged[cur]
        now = (nq >= 0) & tagged[np.maximum(nq, 0)]
        enter, stay = now & ~was, now & was
        leave = ~now & was & (nq >= 0)
        g = np.maximum(itag[cur], 0)
        bad |= leave & opened & ((count < lo[g]) | (count > hi_eff[g]))
        pnow = np.minimum(ph, NUM_ITEM_PHASES + 1)
        count = np.where(enter, 0, count + np.where(stay, INC[pnow, byte], 0))
        entered = base[np.maximum(itag[np.maximum(nq, 0)], 0)] + BEFORE
        ph = np.where(enter, entered, np.where(stay, NEXT[pnow, byte], ph))
        opened = (opened | enter) & ~leave
        cur = nq
    else:
        done.append((start, pt, cur, count, opened, bad))
    if not done:
        return {}, empty
    start, pt, cur, count, opened, bad = (np.concatenate(a) for a in zip(*done))
    live = cur >= 0
    gend = np.maximum(itag[np.maximum(cur, 0)], 0)
    bad |= live & opened & (count + dmin[np.maximum(cur, 0)] > hi_eff[gend])
    bad &= live
    drops: dict = {}
    bq, bt_ = start[bad], tid[pt[bad]]
    o = np.lexsort((bt_, bq))
    bq, bt_ = bq[o], bt_[o]
    cuts = np.flatnonzero(np.diff(bq)) + 1
    for qs, ts_ in zip(np.split(bq, cuts), np.split(bt_, cuts)):
        if len(qs):
            drops[int(qs[0])] = np.unique(ts_)
    ent = live & opened & ~bad
    q, t, v = start[ent], tid[pt[ent]], count[ent]
    order = np.lexsort((t, q))
    return drops, (q[order], t[order], v[order])


def _distances_to_regions(dfa, itag, width: int) -> np.ndarray:
    """The fewest bytes from each state to inside a counted region (0 inside one), up to
    ``width`` (beyond: ``width + 1``), by a breadth-first search backwards."""
    # the sources by target: a level costs the edges into it
    src, ptr = byte_predecessors(dfa.trans, dfa.alphabet.num_byte_classes)
    dist = np.full(len(itag), width + 1, dtype=np.int64)
    frontier = np.flatnonzero(itag >= 0)
    dist[frontier] = 0
    for d in range(1, width + 1):
        hit = src[ranges(ptr[frontier], ptr[frontier + 1] - ptr[frontier])]
        frontier = np.unique(hit[dist[hit] > d])
        if not len(frontier):
            break
        dist[frontier] = d
    return dist


class _Sections:
    """Counted strings' and counted arrays' tables, written as one set of sections."""

    def __init__(self, *parts):
        self.parts = [p for p in parts if p is not None]

    def sections(self) -> dict[str, bytes]:
        out: dict = {}
        for p in self.parts:
            out.update(p.sections())
        return out


def counted_regions(dfa, index, vocab, count_tables, without_pairs):
    """The counted regions of a walked DFA split by kind: the strings' tables (from
    ``count_tables``, over a view of the DFA that knows only its string tags), the arrays'
    tables, and the index with the pairs a bound forbids removed."""
    import dataclasses
    itag, ib, ntag, nb, stag, sb = item_tags(dfa)
    strings = items = inner = None
    if sb:
        strings = count_tables(dataclasses.replace(dfa, tags=stag, tag_bounds=tuple(sb)),
                               index, vocab)
        index = without_pairs(index, strings.drops)
    if ib:
        items = item_tables(dfa, itag, ib, index, vocab)
        index = without_pairs(index, items.drops)
    if nb:      # arrays in a counted array's items: a second level of the same tables
        inner = dataclasses.replace(item_tables(dfa, ntag, nb, index, vocab), prefix="itn_")
        index = without_pairs(index, inner.drops)
    return _Sections(strings, items, inner), index
