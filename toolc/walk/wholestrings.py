"""Tokens that write a whole counted string inside themselves (``"a","``): what no counter
sees, settled once at compile time by replaying such tokens through the automaton.

A counter learns of a counted string when a token opens it and counts it until a token
leaves it; a token that does both writes the whole string without the runtime ever counting
it. The tokens with two quotes or more are replayed byte by byte (all of them at once) from
the states within their length of a counted string's opening quote, and a (state, token)
pair whose whole string breaks its bound is dropped from the walk's index: a length out of
``lo..hi`` for a counted length (:mod:`toolc.walk.counts`), no run of ``lo`` characters of
its class for a run region (:mod:`toolc.walk.runcounts`, ``member`` given).
"""

from __future__ import annotations

import numpy as np

from ..runtime.arrays import ranges
from .distances import byte_predecessors

REPLAY_CELLS = 1 << 17      # (state, token) pairs replayed at once


def whole_string_drops(dfa, tag, phase, lo, hi, vocab, member=None) -> dict:
    """state -> token ids that write a whole counted string breaking its bound, from that
    state. ``member`` (bool[tags, 256]: the bytes of each tag's class) makes the bound a run:
    the string must hold ``lo`` characters of the class in a row."""
    from .counts import IN0
    ids, lens, flat = vocab.ordinary_bytes()
    starts = np.concatenate([[0], np.cumsum(lens)[:-1]])
    # quotes per token (ordinary tokens are never empty), without a running sum over the
    # vocabulary's bytes (8 bytes each)
    two = np.add.reduceat((flat == 0x22).view(np.uint8), starts, dtype=np.int32) >= 2
    if not two.any():
        return {}
    tid, tl, ts = ids[two], lens[two], starts[two]
    width = int(tl.max())
    mat = np.zeros((len(tid), width), dtype=np.uint8)
    inside = np.arange(width)[None, :] < tl[:, None]
    # the tokens' bytes, row by row (offsets built per byte: no token x width index matrix)
    mat[inside] = flat[ranges(ts, tl)]
    bc = dfa.alphabet.byte_class.astype(np.int32)
    cls = bc[mat]
    raw = mat if member is not None else None
    del mat, inside
    states = _near_openings(dfa, tag, width)
    hi_eff = np.where(hi < 0, np.iinfo(np.int64).max, hi)
    out: dict = {}
    step = max(1, REPLAY_CELLS // len(tid))     # states replayed at once: bounded memory
    for k in range(0, len(states), step):
        _replay(states[k:k + step], tid, tl, (cls, raw), width, dfa.trans, tag, phase == IN0,
                (lo, hi_eff, member), out)
    return out


def _near_openings(dfa, tag, width: int) -> np.ndarray:
    """The states from which a counted string's opening is within ``width`` bytes, and the
    counted states."""
    # back from them a byte at a time, over the predecessor lists (a level costs the edges
    # into it, not the whole table); the openings: the uncounted states a byte leads from
    # into a counted one
    preds, ptr = byte_predecessors(dfa.trans, dfa.alphabet.num_byte_classes)
    tagged = np.flatnonzero(tag >= 0)
    opens = np.unique(preds[ranges(ptr[tagged], ptr[tagged + 1] - ptr[tagged])])
    opens = opens[tag[opens] < 0]
    near = np.zeros(len(tag), dtype=bool)
    near[opens] = True
    frontier = opens
    for _ in range(width):
        cand = preds[ranges(ptr[frontier], ptr[frontier + 1] - ptr[frontier])]
        frontier = np.unique(cand[~near[cand]])
        if not len(frontier):
            break
        near[frontier] = True
    near |= tag >= 0
    return np.flatnonzero(near)


def _replay(states, tid, tl, mats, width, trans, tag, in0, bounds, out: dict) -> None:
    """Replay every token of ``tid`` from every state of ``states``, byte by byte, and add
    to ``out`` the pairs that write a whole counted string breaking its bound. The pairs are
    kept flat and dropped once dead or at their token's end (most die within a byte or two),
    so a step costs the pairs still going, not every pair."""
    cls, raw = mats
    lo, hi_eff, member = bounds
    s = np.repeat(np.arange(len(states)), len(tid))
    k = np.tile(np.arange(len(tid)), len(states))
    cur = states[s].astype(np.int64)
    ctag = tag[cur].astype(np.int64)
    count = np.zeros(len(s), dtype=np.int64)
    run = best = count          # the run of class characters and the longest so far
    opened = np.zeros(len(s), dtype=bool)
    bad = np.zeros(len(s), dtype=bool)
    found = []                  # (state row, token index) of the pairs that break a bound
    for j in range(width + 1):
        live = (j < tl[k]) & (cur >= 0)
        if not live.all():      # settled: a dead pair is no pair, an ended one is final
            end = ~live & bad & (cur >= 0)
            found.append((s[end], k[end]))
            s, k, cur, ctag, count, run, best, opened, bad = (
                a[live] for a in (s, k, cur, ctag, count, run, best, opened, bad))
        if not len(s):
            break
        nq = trans[cur, cls[k, j]]
        nt = np.where(nq >= 0, tag[np.maximum(nq, 0)], -1)
        enter = (nt >= 0) & (ctag < 0)
        stay = (nt >= 0) & (ctag >= 0)
        leave = (nt < 0) & (ctag >= 0)
        starts = stay & in0[cur]        # a character starts at this byte
        g = np.maximum(ctag, 0)
        if member is None:
            count = np.where(enter, 0, count + starts)
            bad |= leave & opened & ((count < lo[g]) | (count > hi_eff[g]))
        else:
            inc = member[g, raw[k, j]]
            run = np.where(enter, 0, np.where(starts, np.where(inc, run + 1, 0), run))
            best = np.where(enter, 0, np.maximum(best, run))
            bad |= leave & opened & (best < lo[g])
        opened = (opened | enter) & ~leave
        ctag = np.where(enter, nt, np.where(leave, -1, ctag))
        cur = nq
    if not found:
        return
    rs = np.concatenate([f[0] for f in found])
    ks = np.concatenate([f[1] for f in found])
    order = np.lexsort((ks, rs))
    rs, ks = rs[order], ks[order]
    for r in np.unique(rs).tolist():
        out[int(states[r])] = tid[ks[np.searchsorted(rs, r):np.searchsorted(rs, r, "right")]]
