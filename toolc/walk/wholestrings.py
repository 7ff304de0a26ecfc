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
    nb = dfa.alphabet.num_byte_classes
    byte_t = dfa.trans[:, :nb]
    opens = np.flatnonzero(((tag[np.maximum(byte_t, 0)] >= 0) & (byte_t >= 0)).any(axis=1)
                           & (tag < 0))
    near = np.zeros(len(tag), dtype=bool)
    near[opens] = True
    # back from them a byte at a time, over the predecessor lists (a level costs the edges
    # into it, not the whole table)
    src, col = np.nonzero(byte_t >= 0)
    dst = byte_t[src, col]
    order = np.argsort(dst, kind="stable")
    preds, ptr = src[order], np.searchsorted(dst[order], np.arange(len(tag) + 1))
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
    to ``out`` the pairs that write a whole counted string breaking its bound."""
    cls, raw = mats
    lo, hi_eff, member = bounds
    shape = (len(states), len(tid))
    cur = np.repeat(states[:, None], len(tid), axis=1)
    ctag = np.repeat(tag[states][:, None].astype(np.int64), len(tid), axis=1)
    count = np.zeros(shape, dtype=np.int64)
    if member is not None:      # the run of class characters, and the longest so far
        run = np.zeros(shape, dtype=np.int64)
        best = np.zeros(shape, dtype=np.int64)
    opened = np.zeros(shape, dtype=bool)
    bad = np.zeros(shape, dtype=bool)
    for j in range(width):
        act = (j < tl)[None, :] & (cur >= 0)
        safe = np.maximum(cur, 0)
        nq = np.where(act, trans[safe, cls[:, j][None, :]], cur)
        nt = np.where(nq >= 0, tag[np.maximum(nq, 0)], -1)
        enter = act & (nt >= 0) & (ctag < 0)
        stay = act & (nt >= 0) & (ctag >= 0)
        leave = act & (nt < 0) & (ctag >= 0)
        starts = stay & in0[safe]       # a character starts at this byte
        g = np.maximum(ctag, 0)
        if member is None:
            count = np.where(enter, 0, count + starts)
            bad |= leave & opened & ((count < lo[g]) | (count > hi_eff[g]))
        else:
            inc = member[g, raw[:, j][None, :]]
            run = np.where(enter, 0, np.where(starts, np.where(inc, run + 1, 0), run))
            best = np.where(enter, 0, np.maximum(best, run))
            bad |= leave & opened & (best < lo[g])
        opened = (opened | enter) & ~leave
        ctag = np.where(enter, nt, np.where(leave, -1, ctag))
        cur = nq
    bad &= cur >= 0
    for r in np.flatnonzero(bad.any(axis=1)).tolist():
        out[int(states[r])] = tid[bad[r]]
