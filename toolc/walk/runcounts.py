"""Run regions after the walk: what the runtime needs to count a run that resets.

An unanchored ``pattern`` that is only ``C{m}`` (``{m,}``, ``{m,n}``) of an ASCII class,
``x{100000}`` say, means "the string holds ``m`` characters of ``C`` in a row". The schema
compiler builds such a string once, as a plain string whose states carry a run tag
(:func:`toolc.schema.regex.run_form`); the automaton is the unbounded string's, whatever
``m``. What the bound adds is a counter that resets (:mod:`toolc.runtime.runcount`), which
reads six facts per token, by the state's phase of the JSON-string lexer
(:mod:`toolc.walk.counts`) and the region's class: the run the token starts with, the
longest run after that, the run it ends with, whether it breaks a run, leaves the string or
opens one, and the longest and last runs of a string it opens. They depend on the token's
bytes, the phase and the class only, so they are shared by every region of the class and
made once per vocabulary, class and phase.

What a counter cannot see is settled here, as for counted lengths: a token that writes a
whole run-region string inside itself (``"ab",``) is dropped from the walk's index where
that string holds no run of ``m``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import threading
from dataclasses import dataclass

import numpy as np

from ..fsm.dfa import AmbiguousCountError
from ..runtime.arrays import ranges
from ..runtime.runfile import KEEPS, LEAVES, NUM_FACTS, OPENS
from ..schema.regex import run_class
from .counts import (CLOSE, EV, IN0, INC, MAX_UNITS, NEXT, NUM_PHASES as NUM_PHASES_ALL, OPEN,
                     OUT, U1, U2, U3, state_phases)

FAST_PHASES = (IN0, U1, U2, U3, OUT)     # nearly every token is read there
# the facts of a fast phase are the vocabulary's: cached under the lexer's and this
# module's rule (bump the version when the facts change)
_LEXER_KEY = hashlib.sha256(NEXT.tobytes() + INC.tobytes() + EV.tobytes()
                            + b"runs-2").hexdigest()[:16]

_FACTS: dict = {}           # vocabulary, class and phase -> uint8[6, logits]
_FACTS_LOCK = threading.Lock()


def lex_runs(phase: int, lens, starts, flat, member) -> np.ndarray:
    """int64[6, tokens]: the run facts (:mod:`toolc.runtime.runcount`) of tokens given as
    lengths and offsets into ``flat``, lexed from ``phase``; ``member``: bool[256], the
    class's bytes (ASCII characters written raw, so a class character is one byte that
    starts a character between characters)."""
    n = len(lens)
    order = np.argsort(-lens, kind="stable")
    lens_s, starts_s = lens[order], starts[order]
    ph = np.full(n, phase, dtype=np.int8)
    lead, best, cur, ocur, obest = (np.zeros(n, dtype=np.int64) for _ in range(5))
    broken, left, opened = (np.zeros(n, dtype=bool) for _ in range(3))
    inside = phase != OUT
    width = int(lens_s[0]) if n else 0
    active = np.searchsorted(-lens_s, -np.arange(1, width + 1), side="right")
    for j in range(width):
        m = int(active[j])
        b = flat[starts_s[:m] + j]
        p = ph[:m]
        e = EV[p, b]
        starts_char = INC[p, b] > 0
        inc, brk = starts_char & member[b], starts_char & ~member[b]
        first = ~left[:m] if inside else np.zeros(m, dtype=bool)
        # the string the token starts in: the lead run, then the runs after a break
        fi, fb = inc & first, brk & first
        cur[:m] = np.where(fi, cur[:m] + 1, np.where(fb, 0, cur[:m]))
        lead[:m] += fi & ~broken[:m]
        broken[:m] |= fb
        best[:m] = np.where(fi & broken[:m], np.maximum(best[:m], cur[:m]), best[:m])
        left[:m] |= (e == CLOSE) & first
        # a string the token opens
        o = opened[:m]
        ocur[:m] = np.where(o & inc, ocur[:m] + 1, np.where(o & brk, 0, ocur[:m]))
        obest[:m] = np.maximum(obest[:m], np.where(o, ocur[:m], 0))
        o = (o & ~((e == CLOSE) & o)) | (e == OPEN)
        fresh = e == OPEN
        ocur[:m] = np.where(fresh, 0, ocur[:m])
        obest[:m] = np.where(fresh, 0, obest[:m])
        opened[:m] = o
        ph[:m] = NEXT[p, b]
    flags = KEEPS * ~broken + LEAVES * left + OPENS * opened
    trail = np.where(left, 0, cur)
    facts = np.stack([lead, best, trail, flags, np.where(opened, obest, 0),
                      np.where(opened, ocur, 0)])
    out = np.empty_like(facts)
    out[:, order] = facts
    return out


def plain_runs(lens, starts, flat, member) -> np.ndarray:
    """int64[6, tokens]: :func:`lex_runs` for tokens without a quote or a backslash, at once,
    from between characters or inside a raw UTF-8 character (a character starts at every
    byte that is not a continuation byte, as :mod:`toolc.walk.phasetables` counts them):
    the class characters and the other characters cut each token into groups; the first
    group's class characters are the lead, the last's the trail, the others' most the best."""
    n = len(lens)
    tok = np.repeat(np.arange(n), lens)
    brk = ((flat & 0xC0) != 0x80) & ~member[flat]
    first = np.zeros(len(flat), dtype=bool)
    first[starts] = True
    grp = np.cumsum(brk | first) - 1            # the group of each byte, from 0
    cnt = np.bincount(grp, weights=member[flat], minlength=int(grp[-1]) + 1 if n else 0)
    cnt = cnt.astype(np.int64)
    g0, g1 = grp[starts], grp[starts + lens - 1]
    at_break = brk[starts]
    lead = np.where(at_break, 0, cnt[g0])
    inner = g0 + ~at_break                      # the first group after a break
    best = np.zeros(n, dtype=np.int64)
    has = inner <= g1
    if has.any():
        idx = np.flatnonzero(has)
        best[idx] = _range_max(cnt, inner[idx], g1[idx])
    broken = np.bincount(tok, weights=brk, minlength=n) > 0
    return np.stack([lead, best, cnt[g1], KEEPS * ~broken, np.zeros(n, np.int64),
                     np.zeros(n, np.int64)])


def _range_max(vals, lo, hi) -> np.ndarray:
    """max(vals[lo[i]:hi[i] + 1]) for disjoint, increasing, non-empty ranges."""
    order = np.argsort(lo, kind="stable")
    lo_s, hi_s = lo[order], hi[order]
    bounds = np.empty(2 * len(lo_s), dtype=np.int64)
    bounds[0::2], bounds[1::2] = lo_s, hi_s + 1
    ok = bounds[-1] < len(vals)
    ext = vals if ok else np.append(vals, 0)
    got = np.maximum.reduceat(ext, bounds)[0::2]
    out = np.empty_like(got)
    out[order] = got
    return out


def _quoted(lens, starts, flat) -> np.ndarray:
    return np.add.reduceat(((flat == 0x22) | (flat == 0x5C)).view(np.uint8), starts,
                           dtype=np.int32) > 0


def run_facts(vocab, mask: int, phase: int, tokens=None) -> np.ndarray:
    """uint8[6, logits]: the run facts for the class ``mask`` (a 128-bit ASCII set) of every
    token lexed from ``phase`` (added tokens: zeros), made once per vocabulary, class and
    phase (kept for the process and in the on-disk cache); inside an escape, of ``tokens``
    only (few tokens are read there), the others 0. AmbiguousCountError where a token's run
    does not fit in a byte."""
    from .. import cache
    if phase not in FAST_PHASES:
        return _facts_of(vocab, mask, phase, tokens)
    key = f"{vocab.fingerprint}-{_LEXER_KEY}-run{mask:032x}-p{phase}"
    with _FACTS_LOCK:
        got = _FACTS.get(key)
    if got is None:
        data = cache.read_arrays(key, kind="count")
        got = data.get("f") if data is not None else None
        if got is None or got.shape != (NUM_FACTS, vocab.logits_size):
            got = _facts_of(vocab, mask, phase, None)
            cache.write_arrays(key, {"f": got}, kind="count")
        with _FACTS_LOCK:
            _FACTS[key] = got
    return got


def _facts_of(vocab, mask: int, phase: int, tokens) -> np.ndarray:
    """:func:`run_facts` made: the tokens without a quote or backslash at once (the same
    from every phase between characters or inside a raw character), the others lexed."""
    ids, lens, flat = vocab.ordinary_bytes()
    starts = np.concatenate([[0], np.cumsum(lens)[:-1]])
    member = np.array([(mask >> b) & 1 for b in range(256)], dtype=bool)
    got = np.zeros((NUM_FACTS, vocab.logits_size), dtype=np.uint8)
    if tokens is None:
        slow = _quoted(lens, starts, flat)
        if phase != OUT:        # a token without a quote does nothing outside strings
            plain = np.flatnonzero(~slow)
            _put(got, ids[plain], _plain_facts(vocab, mask, lens[plain], starts[plain], flat,
                                               member))
        sel = np.flatnonzero(slow)
    else:
        pos = np.full(vocab.logits_size, -1, dtype=np.int64)
        pos[ids] = np.arange(len(ids))
        sel = pos[tokens]
        sel = sel[sel >= 0]
    _put(got, ids[sel], lex_runs(phase, lens[sel], starts[sel], flat, member))
    got.setflags(write=False)
    return got


def _plain_facts(vocab, mask: int, lens, starts, flat, member) -> np.ndarray:
    """:func:`plain_runs` of the tokens without a quote or backslash: the same from every
    phase that reads them whole, so made once per vocabulary and class."""
    key = f"{vocab.fingerprint}-run{mask:032x}-plain"
    with _FACTS_LOCK:
        got = _FACTS.get(key)
    if got is None:
        sub = flat[ranges(starts, lens)]
        got = _fits(plain_runs(lens, np.concatenate([[0], np.cumsum(lens)[:-1]]), sub,
                               member))
        with _FACTS_LOCK:
            _FACTS[key] = got
    return got


def _fits(facts: np.ndarray) -> np.ndarray:
    """``facts`` as bytes; AmbiguousCountError where a run does not fit in one."""
    if facts.max(initial=0) >= MAX_UNITS:
        raise AmbiguousCountError("a token too long to count a run in a byte")
    return facts.astype(np.uint8)


def _put(out, ids, facts) -> None:
    out[:, ids] = _fits(facts)


@dataclass(frozen=True)
class RunTables:
    """What the artifact stores for run regions (see :mod:`toolc.runtime.runcount`)."""

    tag: np.ndarray          # int32[n]: each state's run region, -1 outside
    phase: np.ndarray        # int8[n]: the lexer phase of the states that need one, else -1
    lo: np.ndarray           # int64[T]: each region's run length
    cls: np.ndarray          # int32[T]: each region's class
    masks: list              # the classes' ASCII sets
    phases: np.ndarray       # int8[P]
    facts: np.ndarray        # uint8[C, P, 6, logits]
    drops: dict              # state -> token ids the walk allowed but a run forbids

    def sections(self) -> dict[str, bytes]:
        def arr(a, dt):
            return np.ascontiguousarray(a, dtype=np.dtype(dt)).tobytes()
        masks = b"".join(m.to_bytes(16, "little") for m in self.masks)
        flat = self.facts.transpose(2, 0, 1, 3).reshape(NUM_FACTS, -1)
        pos = np.flatnonzero(flat.any(axis=0))      # most tokens' facts are all 0
        return {"run_tag": arr(self.tag, "<i4"), "run_phase": arr(self.phase, "i1"),
                "run_lo": arr(self.lo, "<i8"), "run_cls": arr(self.cls, "<i4"),
                "run_masks": masks, "run_phases": arr(self.phases, "i1"),
                "run_fp": arr(np.diff(pos, prepend=0), "<i4"),
                "run_fv": arr(flat[:, pos].T, "u1")}


def split_runs(dfa):
    """(the DFA with only its other counted regions, or None where it has none; the DFA with
    only its run regions, or None). A run inside a counted length (``pattern`` beside
    ``minLength``) is in both: its states count characters and the run. AmbiguousCountError
    where a run sits inside a counted array or object (the compiler then builds the items as
    states)."""
    bounds = dfa.tag_bounds
    rest_of = np.full(len(bounds) + 1, -1, dtype=np.int32)
    run_of = np.full(len(bounds) + 1, -1, dtype=np.int32)
    rest, runs = [], []
    for g, b in enumerate(bounds):
        own = b[-1] if isinstance(b[0], tuple) else b
        if len(own) != 3 or run_class(own[2]) is None:
            rest_of[g] = len(rest)
            rest.append(b)
            continue
        run_of[g] = len(runs)
        runs.append(own)
        if own is not b:
            if len(b) != 2 or len(b[0]) != 2:
                raise AmbiguousCountError("a run inside a counted array")
            rest_of[g] = rest_of[bounds.index(b[0])]     # registered before it
    if not runs:
        return dfa, None

    def view(of, kept):
        if not kept:
            return None
        return dataclasses.replace(dfa, tags=of[dfa.tags], tag_bounds=tuple(kept))
    return view(rest_of, rest), view(run_of, runs)


def run_tables(dfa, index, vocab) -> RunTables:
    """The run facts of a walked DFA whose tags are run regions; AmbiguousCountError where a
    state's phase is not well defined (the compiler then builds the pattern as states)."""
    n = dfa.num_states
    tag = dfa.tags.astype(np.int32)
    phase = state_phases(dfa)
    tagged = tag >= 0
    if ((phase[tagged] < 0) | (phase[tagged] == OUT)).any():
        raise AmbiguousCountError("a run region's states are not plain JSON text")
    sp_state = np.repeat(np.arange(n), np.diff(index.sp_ptr))
    if (tag[index.sp_targets] >= 0).any() or (tag[sp_state] >= 0).any():
        raise AmbiguousCountError("a special token next to a run region")
    run_state = np.repeat(np.arange(n), np.diff(index.run_ptr))
    into = (tag[index.run_target] >= 0) & (tag[run_state] < 0)
    entries = np.unique(run_state[into])
    if (phase[entries] < 0).any():
        raise AmbiguousCountError("a run region is opened from text that is not JSON")
    needed = tagged.copy()
    needed[entries] = True
    masks, cls = [], []
    for b in dfa.tag_bounds:
        mask = run_class(b[2])
        if mask not in masks:
            masks.append(mask)
        cls.append(masks.index(mask))
    lo = np.array([b[0] for b in dfa.tag_bounds], dtype=np.int64)
    phases = np.unique(phase[needed]).astype(np.int64)
    read = _read(phases, index, tag, phase, needed, vocab.logits_size)
    facts = np.zeros((len(masks), len(phases), NUM_FACTS, vocab.logits_size), dtype=np.uint8)
    for c, mask in enumerate(masks):
        for i, p in enumerate(phases.tolist()):
            facts[c, i] = run_facts(vocab, mask, p, np.flatnonzero(read[i]))
    facts *= read[None, :, None, :]     # the entries no state reads compress to nothing
    member = np.array([[(m >> b) & 1 for b in range(256)] for m in masks], dtype=bool)
    from .wholestrings import whole_string_drops
    drops = whole_string_drops(dfa, tag, phase, lo, np.full(len(lo), -1), vocab,
                               member[np.array(cls)])
    return RunTables(tag, np.where(needed, phase, -1).astype(np.int8), lo,
                     np.array(cls, dtype=np.int32), masks, phases.astype(np.int8), facts,
                     drops)


def _read(phases, index, tag, phase, needed, logits) -> np.ndarray:
    """bool[phases, logits]: the facts some state reads (every token of a run region's
    state; the tokens that open a region, from the others): the runs of those states,
    marked at their ends and summed along the walk's token order, per phase."""
    n, N, P = len(tag), len(index.order), len(phases)
    run_state = np.repeat(np.arange(n), np.diff(index.run_ptr))
    keep = needed[run_state] & ((tag[run_state] >= 0) | (tag[index.run_target] >= 0))
    pidx = np.full(NUM_PHASES_ALL, -1, dtype=np.int64)
    pidx[phases] = np.arange(P)
    row = pidx[phase[run_state[keep]]] * (N + 1)
    ends = np.bincount(row + index.run_lo[keep], minlength=P * (N + 1)) \
        - np.bincount(row + index.run_hi[keep], minlength=P * (N + 1))
    cover = np.cumsum(ends.reshape(P, N + 1)[:, :N], axis=1) > 0
    read = np.zeros((P, logits), dtype=bool)
    read[:, index.order] = cover
    return read


def counted_all(dfa, index, vocab, counted_regions):
    """The sections of every counted region of a walked DFA, and the index with the pairs a
    bound forbids removed: lengths, items and properties by ``counted_regions`` (called as
    ``counted_regions(dfa, index)``), runs here."""
    rest, runs = split_runs(dfa)
    counted = None
    if rest is not None:
        counted, index = counted_regions(rest, index)
    if runs is not None:
        from .counts import without_pairs
        from .itemcounts import _Sections
        tables = run_tables(runs, index, vocab)
        index = without_pairs(index, tables.drops)
        counted = tables if counted is None else _Sections(counted, tables)
    return counted, index
