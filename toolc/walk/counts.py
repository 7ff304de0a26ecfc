"""Counted regions after the walk: what the runtime needs to count characters.

A bounded string (``maxLength``/``minLength`` without a ``pattern``) is built once, unbounded,
with its states tagged (:class:`~toolc.fsm.Counted`); the walk treats it as any string. What
the bound adds is a counter, and a counter needs three facts per (state, token):

* ``K``: the characters the token starts inside the string it begins in, before it leaves;
* ``X``: whether it leaves that string (a closing quote);
* ``S``: the characters of the string it ends in, when it opened that string itself.

All three depend on the token's bytes and on where inside a string the state is (its
*phase*: between characters, inside a UTF-8 sequence, inside an escape), not on the state
itself. So they are tables per phase, shared by every counted string of the artifact, and
the runtime keeps one counter: ``mask()`` is the stored row unless the bound is within one
token's reach, where the row is the stored one thinned by ``K`` (:mod:`toolc.runtime.counted`).

Characters are counted as JSON Schema counts them in the decoded string: a raw UTF-8
character, an escape, and an escaped surrogate pair (``\\ud83d\\ude00``) are one each. A
character is counted where it starts, so a token that ends inside one has counted it.

What a counter cannot decide is settled here, once: a token that opens a counted string
must not already exceed its bound (``S``), and a token that writes a whole counted string
inside it (``"a","``) must give it a length within its bounds; pairs that fail are dropped
from the walk's index.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..fsm.dfa import AmbiguousCountError
from ..runtime.arrays import ranges
from .countcode import first_row
from .distances import zero_one_distances

# the phases of a JSON-string lexer; OUT is outside any string
# (the last two hex digits of a surrogate pair's low half are read as X2, X1: the automaton
# cannot tell them from an escape's, and neither starts a character)
(IN0, U1, U2, U3, ESC, X4, X3, X3D, X2, X2H, X1, X1H, P6, P5, P4, P3, OUT) = range(17)
NUM_PHASES = 17
NONE, CLOSE, OPEN = 0, 1, 2
MAX_UNITS = 255        # K and S are stored in a byte; a longer token is a reason to expand


def _lexer():
    """NEXT[phase, byte], INC[phase, byte] (a character starts), EV[phase, byte]."""
    nxt = np.zeros((NUM_PHASES, 256), dtype=np.int8)
    inc = np.zeros((NUM_PHASES, 256), dtype=np.uint8)
    ev = np.zeros((NUM_PHASES, 256), dtype=np.int8)
    b = np.arange(256)
    nxt[IN0] = np.select([b == 0x22, b == 0x5C, (b >= 0xC0) & (b < 0xE0),
                          (b >= 0xE0) & (b < 0xF0), b >= 0xF0], [OUT, ESC, U1, U2, U3], IN0)
    inc[IN0] = b != 0x22
    ev[IN0, 0x22] = CLOSE
    nxt[U1], nxt[U2], nxt[U3] = IN0, U1, U2
    nxt[ESC] = np.where(b == ord("u"), X4, IN0)
    nxt[X4] = np.where((b == ord("d")) | (b == ord("D")), X3D, X3)
    nxt[X3D] = np.where(np.isin(b, list(b"89abAB")), X2H, X2)
    nxt[X3], nxt[X2], nxt[X2H], nxt[X1], nxt[X1H] = X2, X1, X1H, IN0, P6
    nxt[P6], nxt[P5], nxt[P4], nxt[P3] = P5, P4, P3, X2
    nxt[OUT] = np.where(b == 0x22, IN0, OUT)
    ev[OUT, 0x22] = OPEN
    return nxt, inc, ev


NEXT, INC, EV = _lexer()


def lex(phase: int, lens: np.ndarray, starts: np.ndarray, flat: np.ndarray):
    """K, X, S (-1: none) and C (a whole string inside) of tokens lexed from ``phase``; the
    tokens are given as lengths and start offsets into ``flat``."""
    n = len(lens)
    order = np.argsort(-lens, kind="stable")
    lens_s, starts_s = lens[order], starts[order]
    ph = np.full(n, phase, dtype=np.int8)
    k = np.zeros(n, dtype=np.int64)
    x = np.zeros(n, dtype=bool)
    s = np.full(n, -1, dtype=np.int64)
    c = np.zeros(n, dtype=bool)
    inside = phase != OUT
    width = int(lens_s[0]) if n else 0
    active = np.searchsorted(-lens_s, -np.arange(1, width + 1), side="right")
    for j in range(width):
        m = int(active[j])
        bj = flat[starts_s[:m] + j]
        p = ph[:m]
        i, e = INC[p, bj], EV[p, bj]
        first = ~x[:m] if inside else np.zeros(m, dtype=bool)
        k[:m] += i * first
        close = e == CLOSE
        opened = s[:m] >= 0
        c[:m] |= close & opened
        x[:m] |= close & first
        sm = np.where(close, -1, np.where(opened, s[:m] + i, -1))
        s[:m] = np.where(e == OPEN, 0, sm)
        ph[:m] = NEXT[p, bj]
    out = [np.empty_like(a) for a in (k, x, s, c)]
    for o, a in zip(out, (k, x, s, c)):
        o[order] = a
    return tuple(out)


@dataclass(frozen=True)
class CountTables:
    """What the artifact stores for counted regions (see :mod:`toolc.runtime.counted`)."""

    tag: np.ndarray          # int32[n]: each state's region tag, -1 outside
    phase: np.ndarray        # int8[n]: the lexer phase of the states that need one, else -1
    lo: np.ndarray           # int64[T]
    hi: np.ndarray           # int64[T], -1: no maximum
    phases: np.ndarray       # int8[P]: the phases that have tables
    k: np.ndarray            # uint8[P, logits]
    x: np.ndarray            # uint8[P, logits]
    s: np.ndarray            # int16[P, logits]
    drops: dict              # state -> token ids the walk allowed but a bound forbids
    relevant: np.ndarray | None = None   # bool[P, logits]: the entries some state reads
    dmin: np.ndarray | None = None       # int32[n]: characters still needed to close

    def sections(self) -> dict[str, bytes]:
        """The ``cnt_*`` sections of an artifact file (format 6, see
        :mod:`toolc.runtime.countfile`): the first phase's ``K`` row (between characters,
        where nearly every token is read) whole, as nibbles with the few larger values
        apart; each other row as that row plus one offset (inside an escape a token starts
        one character or a few fewer), with the entries some state reads that differ from it
        listed; ``X`` and ``S`` as the entries some state reads."""
        def arr(a, dt):
            return np.ascontiguousarray(a, dtype=np.dtype(dt)).tobytes()
        P, L = self.k.shape
        rel = self.relevant if self.relevant is not None else np.ones((P, L), dtype=bool)
        at = np.flatnonzero(rel.reshape(-1))        # the entries some state reads
        row, tok = at // L, at % L
        k0, kd = first_row(self.k, rel, at)   # row 0 and the offsets; its free entries chosen
        d = self.k.reshape(-1)[at] - k0[tok]
        differ = (row > 0) & (d != kd[row])
        kp = at[differ]
        nib = np.zeros(L + L % 2, dtype=np.uint8)
        nib[:L] = np.minimum(k0, 15)
        big = np.flatnonzero(k0 >= 15)
        xp = at[self.x.reshape(-1)[at] > 0]
        sp = at[self.s.reshape(-1)[at] >= 0]
        dmin = self.dmin if self.dmin is not None else np.zeros(len(self.tag))
        return {"cnt_tag": arr(self.tag, "<i4"), "cnt_phase": arr(self.phase, "i1"),
                "cnt_dmin": arr(dmin, "<i4"),
                "cnt_lo": arr(self.lo, "<i8"), "cnt_hi": arr(self.hi, "<i8"),
                "cnt_phases": arr(self.phases, "i1"),
                "cnt_kn": arr(nib[0::2] | (nib[1::2] << 4) if P else nib[:0], "u1"),
                "cnt_kbv": arr(k0[big] - 15, "u1"),
                "cnt_kd": arr(kd, "u1"),
                "cnt_kp": arr(_gaps(kp), "<i4"), "cnt_kv": arr(d[differ] - kd[row[differ]], "u1"),
                "cnt_xp": arr(_gaps(xp), "<i4"),
                "cnt_sp": arr(_gaps(sp), "<i4"), "cnt_sv": arr(self.s.reshape(-1)[sp], "u1")}


def _gaps(pos: np.ndarray) -> np.ndarray:
    """Increasing positions as the first one and the gaps after it (they compress)."""
    return np.diff(pos, prepend=0) if len(pos) else pos


def state_phases(dfa) -> np.ndarray:
    """The lexer phase of every state reachable from the start (-1 where paths disagree or
    the state is not JSON text), by a breadth-first pass a level at a time."""
    alpha = dfa.alphabet
    nb = alpha.num_byte_classes
    # NEXTC[p, c]: the phase after a byte of class c, -1 when the class's bytes disagree
    nextc = np.full((NUM_PHASES + 1, alpha.size), -1, dtype=np.int64)
    bc = alpha.byte_class
    for cl in range(nb):
        members = np.flatnonzero(bc == cl)
        col = NEXT[:, members]
        agree = (col == col[:, :1]).all(axis=1)
        nextc[:NUM_PHASES, cl] = np.where(agree, col[:, 0], -1)
    nextc[:, nb:] = OUT          # a special token: JSON framing starts afresh
    n = dfa.num_states
    phase = np.full(n, -2, dtype=np.int64)
    phase[0] = OUT
    frontier = np.array([0])
    trans = dfa.trans
    while len(frontier):
        tg = trans[frontier]
        ph = np.where(phase[frontier] >= 0, phase[frontier], NUM_PHASES)[:, None]
        nxt = nextc[ph, np.arange(alpha.size)[None, :]]
        ok = tg >= 0
        t, p = tg[ok].astype(np.int64), nxt[ok]
        changed = []
        # a state reached with two phases (or an unknown one) becomes unknown: -1
        order = np.lexsort((p, t))
        t, p = t[order], p[order]
        first = np.ones(len(t), dtype=bool)
        first[1:] = t[1:] != t[:-1]
        lo_p = np.minimum.reduceat(p, np.flatnonzero(first)) if len(t) else p
        hi_p = np.maximum.reduceat(p, np.flatnonzero(first)) if len(t) else p
        ut = t[first]
        want = np.where(lo_p == hi_p, lo_p, -1)
        cur = phase[ut]
        new = np.where(cur == -2, want, np.where(cur == want, cur, -1))
        changed = ut[new != cur]
        phase[ut] = new
        frontier = changed
    return np.where(phase == -2, -1, phase).astype(np.int8)


def count_tables(dfa, index, vocab) -> CountTables:
    """The counting facts of a walked DFA with counted regions; AmbiguousCountError where a
    state's phase is not well defined (the compiler then expands the bounds)."""
    n = dfa.num_states
    tag = dfa.tags.astype(np.int32)
    phase = state_phases(dfa)
    tagged = np.flatnonzero(tag >= 0)
    if ((phase[tagged] < 0) | (phase[tagged] == OUT)).any():
        raise AmbiguousCountError("a counted string's states are not plain JSON text")
    run_state = np.repeat(np.arange(n), np.diff(index.run_ptr))
    into = (tag[index.run_target] >= 0) & (tag[run_state] < 0)
    entries = np.unique(run_state[into])
    sp_state = np.repeat(np.arange(n), np.diff(index.sp_ptr))
    if ((tag[index.sp_targets] >= 0) & (tag[sp_state] < 0)).any() or \
            (tag[sp_state] >= 0).any():
        raise AmbiguousCountError("a special token next to a counted string")
    if (phase[entries] < 0).any():
        raise AmbiguousCountError("a counted string is opened from text that is not JSON")
    lo = np.array([b[0] for b in dfa.tag_bounds], dtype=np.int64)
    hi = np.array([-1 if b[1] is None else b[1] for b in dfa.tag_bounds], dtype=np.int64)
    dmin = _closing_distances(dfa, tag, phase, lo, hi)
    needed = np.zeros(n, dtype=bool)
    needed[tagged] = True
    needed[entries] = True
    out_phase = np.where(needed, phase, -1).astype(np.int8)
    phases = np.unique(phase[needed]).astype(np.int64)

    L = vocab.logits_size
    pidx = np.full(NUM_PHASES + 1, -1, dtype=np.int64)
    pidx[phases] = np.arange(len(phases))
    # the tokens each phase's table must answer for: every token of a counted state, the
    # tokens that open a counted string from the others; all other entries stay zero
    # and, for the static drops, the pairs that can open a counted string: into a tagged
    # state, and from inside one only by a token holding a quote (kept per state: a state's
    # whole row would be the vocabulary's size)
    from .phasetables import phase_table, quote_or_backslash
    quoted = quote_or_backslash(vocab)
    relevant, trans = _relevant_and_openings(index, np.flatnonzero(needed), tag, phase,
                                             phases, quoted, L)
    P = len(phases)
    K = np.zeros((P, L), dtype=np.uint8)
    X = np.zeros((P, L), dtype=np.uint8)
    S = np.full((P, L), -1, dtype=np.int16)
    for i, p in enumerate(phases.tolist()):
        t = np.flatnonzero(relevant[i])
        k, x, s = phase_table(vocab, p)
        k, x, s = k[t], x[t], s[t]
        if k.max(initial=0) >= MAX_UNITS or s.max(initial=0) >= MAX_UNITS:
            raise AmbiguousCountError("a token too long to count in a byte")
        K[i, t], X[i, t], S[i, t] = k, x, s
    drops = _static_drops(trans, tag, phase, pidx, hi, X, S, dmin)
    from .wholestrings import whole_string_drops
    for q, bad in whole_string_drops(dfa, tag, phase, lo, hi, vocab).items():
        drops[q] = np.union1d(drops.get(q, np.zeros(0, dtype=np.int64)), bad)
    return CountTables(tag, out_phase, lo, hi, phases, K, X, S, drops, np.stack(relevant),
                       dmin)


def _relevant_and_openings(index, needed, tag, phase, phases, quoted, L):
    """Per phase, the tokens its table must answer for (every token of a counted state's
    runs, and an opening state's tokens into a counted state), and per needed state the
    (tokens, targets) that can open a counted string (into a tagged state; from a tagged
    state only tokens holding a quote), in the runs' order. All states at once: a run's
    positions are marked by a difference array, and only the opening pairs are expanded
    (a counted state's into-runs at the quoted positions alone)."""
    n_runs = (index.run_ptr[needed + 1] - index.run_ptr[needed]).astype(np.int64)
    sel = ranges(index.run_ptr[needed].astype(np.int64), n_runs)
    owner = np.repeat(needed, n_runs)
    lo, hi, tg = index.run_lo[sel], index.run_hi[sel], index.run_target[sel]
    into = tag[tg] >= 0
    inside = tag[owner] >= 0
    M = len(index.order)
    relevant = [np.zeros(L, dtype=bool) for _ in phases]
    use, ph = inside | into, phase[owner]
    for i, p in enumerate(phases.tolist()):
        pick = use & (ph == p)
        lp, hp = lo[pick], hi[pick]
        if 4 * int((hp - lp).sum()) < M:       # few positions (an escape's phase): list them
            relevant[i][index.order[ranges(lp, hp - lp)]] = True
            continue
        cover = np.cumsum(np.bincount(lp, minlength=M + 1)
                          - np.bincount(hp, minlength=M + 1))[:M]
        relevant[i][index.order[cover > 0]] = True
    # the opening pairs: a tagged state's into-runs at its quoted positions, an entry's whole
    qpos = np.flatnonzero(quoted[index.order])
    a, b = np.searchsorted(qpos, lo), np.searchsorted(qpos, hi)
    cnt = np.where(into, np.where(inside, b - a, hi - lo), 0)
    pos = np.empty(int(cnt.sum()), dtype=np.int64)
    dest = np.cumsum(cnt) - cnt
    for part, first in ((inside, None), (~inside, lo)):
        at = ranges(dest[part], cnt[part])
        got = ranges(a[part] if first is None else first[part], cnt[part])
        pos[at] = qpos[got] if first is None else got
    toks, tgts = index.order[pos], np.repeat(tg, cnt)
    ends = np.searchsorted(np.repeat(owner, cnt), needed, side="right")
    starts = np.concatenate([[0], ends[:-1]])
    trans = {q: (toks[s:e], tgts[s:e]) for q, s, e in zip(needed.tolist(), starts, ends)}
    return relevant, trans


def _static_drops(trans, tag, phase, pidx, hi, X, S, dmin) -> dict:
    """Pairs whose token opens a counted string already past its maximum (counting the
    characters its pattern still needs before it can close)."""
    drops: dict = {}
    for q, (toks, tgts) in trans.items():
        pi = pidx[phase[q]]
        new = tag[tgts] >= 0
        if tag[q] >= 0:
            new &= X[pi, toks] > 0
        bad = np.zeros(len(toks), dtype=bool)
        if new.any():
            t2 = tag[tgts[new]]
            sv = S[pi, toks[new]].astype(np.int64) + dmin[tgts[new]]
            bad[new] = (hi[t2] >= 0) & (sv > hi[t2])
        if bad.any():
            drops[q] = toks[bad]
    return drops


def _closing_distances(dfa, tag, phase, lo, hi) -> np.ndarray:
    """For each counted state, the fewest characters still to start before its string can
    close (0 outside and for plain strings), by a breadth-first search back from the states
    a closing quote leaves; ``lo`` is set to 0 where the pattern alone already makes every
    string that long. AmbiguousCountError where the counter could not be exact: a minimum
    that the pattern does not already imply, over a body with a state from which not every
    length from its shortest on can reach the close (no way through a one-character loop at
    most one character longer than the shortest); or a maximum the pattern cannot meet."""
    nb = dfa.alphabet.num_byte_classes
    trans = dfa.trans[:, :nb]
    n = len(tag)
    big = np.iinfo(np.int32).max
    # only the counted states' rows are read whole (R: those states, tr: their rows)
    R = np.flatnonzero(tag >= 0)
    tr = trans[R]
    ok = tr >= 0
    # a string closes where a quote read between characters leads out of it; the state just
    # before the quote may be untagged (its pattern admits nothing but the end)
    quote = int(dfa.alphabet.byte_class[0x22])
    qt = trans[:, quote]
    closes = (phase == IN0) & (qt >= 0) & (phase[np.maximum(qt, 0)] == OUT)
    inside = (tag >= 0) | (closes & (tag < 0))
    step = ok & inside[np.maximum(tr, 0)]
    step[:, quote] &= ~closes[R]
    i, c = np.nonzero(step)
    edges = (R[i], tr[i, c], phase[R[i]] == IN0)       # (from, to, starts a character)
    start = np.flatnonzero(closes & inside)
    dmin = zero_one_distances(*edges, n, start, np.zeros(len(start)), big)
    # just opened: a counted state an uncounted one leads to
    first = np.unique(trans[(tag < 0)[:, None] & (trans >= 0) & (tag[np.maximum(trans, 0)] >= 0)])
    loops = np.zeros(n, dtype=bool)
    loops[R] = (ok & (tr == R[:, None])).any(axis=1) & (phase[R] == IN0)
    # via[p]: the fewest characters from p to the close along a way that passes a state with
    # a one-character loop (from there, any longer length too). Where via <= dmin + 1, every
    # length from dmin up can be written (dmin itself, and via on), so a counter below the
    # minimum is never a dead end; a partial tag in a closed string (after "</", say) closes
    # at once or, one character later, is back in the looping body
    seeds = np.flatnonzero(loops)
    via = zero_one_distances(*edges, n, seeds, dmin[seeds], big)
    grows = via <= dmin + 1
    for g in range(len(lo)):
        mine = tag == g
        start = dmin[first[tag[first] == g]]
        least = int(start.min()) if len(start) else 0
        if hi[g] >= 0 and least > hi[g]:
            raise AmbiguousCountError("a bound the pattern cannot meet")
        if lo[g] <= least:
            lo[g] = 0            # implied by the pattern: no string is shorter
        elif not grows[mine & (phase == IN0)].all():
            raise AmbiguousCountError("a minimum length beside a pattern")
    return np.where(tag >= 0, np.minimum(dmin, big), 0).astype(np.int32)


def without_pairs(index, drops: dict):
    """``index`` with the ordinary tokens of ``drops`` (state -> token ids) no longer
    allowed: their runs are split around them (the other states' runs are kept as slices)."""
    if not drops:
        return index
    import dataclasses
    inv = np.empty(len(index.order), dtype=np.int64)
    inv[index.order] = np.arange(len(index.order))
    ptr, lo, hi, tg = index.run_ptr, index.run_lo, index.run_hi, index.run_target
    counts = np.diff(ptr).astype(np.int64)
    pieces, prev = [], 0
    for q in sorted(drops):
        r0, r1 = int(ptr[q]), int(ptr[q + 1])
        pieces.append((lo[prev:r0], hi[prev:r0], tg[prev:r0]))
        prev = r1
        a, b, t = _split_runs(lo[r0:r1].astype(np.int64), hi[r0:r1].astype(np.int64),
                              tg[r0:r1], np.unique(inv[drops[q]]))
        pieces.append((a.astype(lo.dtype), b.astype(hi.dtype), t))
        counts[q] = len(a)
    pieces.append((lo[prev:], hi[prev:], tg[prev:]))
    return dataclasses.replace(
        index, run_ptr=np.concatenate([[0], np.cumsum(counts)]).astype(ptr.dtype),
        run_lo=np.concatenate([p[0] for p in pieces]),
        run_hi=np.concatenate([p[1] for p in pieces]),
        run_target=np.concatenate([p[2] for p in pieces]))


def _split_runs(lo, hi, tg, cut):
    """Runs ``lo:hi`` (disjoint) with the positions ``cut`` (sorted) taken out: each run
    becomes the non-empty pieces between its cuts, in run order, with its target."""
    nr = len(lo)
    if not nr:
        return lo, hi, tg
    by_lo = np.argsort(lo, kind="stable")
    j = np.searchsorted(lo[by_lo], cut, side="right") - 1      # the run that may hold it
    run = by_lo[np.maximum(j, 0)]
    inside = (j >= 0) & (cut < hi[run])
    cut, run = cut[inside], run[inside]
    # a run's pieces start at its lo and after each cut, and end at each cut and at its hi
    start_run, start = np.concatenate([np.arange(nr), run]), np.concatenate([lo, cut + 1])
    end_run, end = np.concatenate([run, np.arange(nr)]), np.concatenate([cut, hi])
    os_, oe = np.lexsort((start, start_run)), np.lexsort((end, end_run))
    a, b, r = start[os_], end[oe], start_run[os_]
    keep = b > a
    return a[keep], b[keep], tg[r[keep]]
