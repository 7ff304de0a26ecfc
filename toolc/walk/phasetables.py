"""The counting tables of a vocabulary: what each token does to a character counter when
lexed from each phase of the JSON-string lexer (:mod:`toolc.walk.counts`).

They are the vocabulary's, not an artifact's: every phase's table is made once per
vocabulary, kept for the process and in the on-disk cache beside the vocabulary's trie (one
entry for all phases, 2.6 MB on Qwen3). The phases inside an escape read a few thousand tokens
a compile, but lexing even those needs the whole vocabulary's byte arrays, some 16 ms in a
fresh process: the whole entry is read from the disk in a few.
"""

from __future__ import annotations

import hashlib
import threading

import numpy as np

from .counts import EV, IN0, INC, MAX_UNITS, NEXT, NUM_PHASES, OUT, U1, U2, U3, lex

# the tables are the vocabulary's, not an artifact's: made once per vocabulary, kept for the
# process and in the on-disk cache beside the vocabulary's trie
_LEXER_KEY = hashlib.sha256(NEXT.tobytes() + INC.tobytes() + EV.tobytes()).hexdigest()[:16]
_PHASE_TABLES: dict = {}
_PHASE_LOCK = threading.Lock()


def _special_and_starters(vocab):
    """Per ordinary token: whether it holds a quote or backslash; the running count of
    character-starting bytes over the flat bytes; each token id's ordinary position (-1:
    added). Made once per vocabulary."""
    key = f"{vocab.fingerprint}-lexing"
    with _PHASE_LOCK:
        got = _PHASE_TABLES.get(key)
    if got is None:
        got = _lexing_arrays(vocab)
        with _PHASE_LOCK:
            _PHASE_TABLES[key] = got
    return got


def _lexing_arrays(vocab):
    ids, lens, flat = vocab.ordinary_bytes()
    starts = np.concatenate([[0], np.cumsum(lens)[:-1]])
    special = np.add.reduceat(((flat == 0x22) | (flat == 0x5C)).view(np.uint8), starts,
                              dtype=np.int32) > 0
    # int32: a vocabulary's bytes number far fewer than 2**31
    starters = np.zeros(len(flat) + 1, dtype=np.int32)
    np.cumsum((flat & 0xC0) != 0x80, dtype=np.int32, out=starters[1:])
    pos_of = np.full(vocab.logits_size, -1, dtype=np.int64)
    pos_of[ids] = np.arange(len(ids))
    return ids, lens, flat, starts, special, starters, pos_of


def _plain(phase: int, lens, starts, flat, special, starters):
    """``lex`` for many tokens, quickly: a token without quote or backslash neither leaves
    nor opens a string, and starts one character per byte that is not a UTF-8 continuation
    byte (``starters``: their running count over ``flat``), from where the lexer is between
    characters or inside a raw one (inside an escape: once the escape ends)."""
    n = len(lens)
    k = np.zeros(n, dtype=np.int64)
    x = np.zeros(n, dtype=bool)
    s = np.full(n, -1, dtype=np.int64)
    fast = ~special
    if phase != OUT and fast.any():
        ls, st = lens[fast], starts[fast]
        # inside an escape, no character starts until the lexer is between characters
        # again (at most 11 bytes on: a surrogate pair's rest); from there one per byte
        at = _escape_end(phase, ls, st, flat) if phase not in (IN0, U1, U2, U3) else 0
        k[fast] = np.where(at <= ls, starters[st + ls] - starters[st + np.minimum(at, ls)], 0)
    slow = ~fast
    if slow.any():
        for a, v in zip((k, x, s), lex(phase, lens[slow], starts[slow], flat)):
            a[slow] = v
    return k, x, s


def _escape_end(phase: int, lens, starts, flat) -> np.ndarray:
    """How many bytes of each token the lexer reads from ``phase`` (inside an escape) before
    it is between characters again; more than the token's length where it never is."""
    ph = np.full(len(lens), phase, dtype=np.int8)
    at = np.zeros(len(lens), dtype=np.int64)
    go = np.ones(len(lens), dtype=bool)
    while go.any():
        go &= at < lens
        ph[go] = NEXT[ph[go], flat[starts[go] + at[go]]]
        at[go] += 1
        go &= ph != IN0
    return np.where(ph == IN0, at, lens + 1)


def phase_table(vocab, phase: int):
    """``(K, X, S)`` of every token of ``vocab`` lexed from ``phase`` (arrays over the
    logits width; added tokens 0, 0, -1), computed once per vocabulary."""
    key = f"{vocab.fingerprint}-{_LEXER_KEY}-p{phase}"
    with _PHASE_LOCK:
        got = _PHASE_TABLES.get(key)
    if got is not None:
        return got
    k, xpos, spos, sval, _ = _all_phases(vocab)
    L = vocab.logits_size
    X = np.zeros(L, dtype=np.uint8)
    S = np.full(L, -1, dtype=np.int16)
    a, b = np.searchsorted(xpos, [phase * L, (phase + 1) * L])
    X[xpos[a:b] - phase * L] = 1
    a, b = np.searchsorted(spos, [phase * L, (phase + 1) * L])
    S[spos[a:b] - phase * L] = sval[a:b]
    got = (k[phase], X, S)
    with _PHASE_LOCK:
        _PHASE_TABLES[key] = got
    return got


def _all_phases(vocab):
    """Every phase's ``K`` (uint8[phases, logits]) and, sparse over the same flat positions,
    its ``X`` (the positions where a token leaves the string) and ``S`` (positions and
    values where a token opens one), and the tokens holding a quote or a backslash
    (bool[logits]): one entry of the on-disk cache per vocabulary, some 2.6 MB on Qwen3,
    read with one check (17 tables of their own took 17 ms to read)."""
    from .. import cache

    key = f"{vocab.fingerprint}-{_LEXER_KEY}-phases"
    with _PHASE_LOCK:
        got = _PHASE_TABLES.get(key)
    if got is not None:
        return got
    L = vocab.logits_size
    data = cache.read_arrays(key, kind="count")
    names = ("k", "xpos", "spos", "sval", "quoted")
    if data is not None and all(data.get(n) is not None for n in names) \
            and data["k"].shape == (NUM_PHASES, L) and data["quoted"].shape == (L,):
        got = tuple(data[n] for n in names)
    else:
        ids, lens, flat, starts, special, starters, _ = _special_and_starters(vocab)
        K = np.zeros((NUM_PHASES, L), dtype=np.uint8)
        X = np.zeros((NUM_PHASES, L), dtype=bool)
        S = np.full((NUM_PHASES, L), -1, dtype=np.int16)
        for p in range(NUM_PHASES):
            k, x, s = _plain(p, lens, starts, flat, special, starters)
            K[p, ids] = np.minimum(k, MAX_UNITS)   # MAX_UNITS: too long to count (checked later)
            X[p, ids] = x
            S[p, ids] = np.minimum(s, MAX_UNITS)
        spos = np.flatnonzero(S.reshape(-1) >= 0)
        quoted = np.zeros(L, dtype=bool)
        quoted[ids[special]] = True
        got = (K, np.flatnonzero(X.reshape(-1)), spos, S.reshape(-1)[spos], quoted)
        cache.write_arrays(key, dict(zip(names, got)), kind="count")
        for a in got:
            a.flags.writeable = False
    with _PHASE_LOCK:
        _PHASE_TABLES[key] = got
    return got


def quote_or_backslash(vocab) -> np.ndarray:
    """bool[logits]: the ordinary tokens holding a quote or a backslash; the vocabulary's,
    kept in the phase tables' entry (read-only: shared by every caller)."""
    return _all_phases(vocab)[4]
