"""Warm an artifact's per-token path when it is built, so that the first request after a load
or a compile costs what later ones do.

Freshly built tables are out of the processor's caches and the interpreter has not yet
specialised the matcher's code: the first request's slowest ``advance`` took 9 to 11 µs where
later requests' took 2 to 3 (tools10 and tools80, Qwen3, the slowest call of the first walk
that makes a call, median over 7 loads). In an A/B in one process, reading every table once
(a byte per cache line) and running the matcher a few tokens into a call brought it to 2 to 4
µs, for 0.4 to 1 ms more per load.

The interpreter specialises each instruction on its first runs once a function has run a few
times, branch by branch: a branch that the probe walk never took (an exception's bisection,
a narrow class's dict) stayed generic until a request took it. So the probe also advances
once from a state of each kind (a wide class's default and its exception, a narrow class),
enough times for every branch of ``advance`` and ``accepts`` to be specialised, and makes
the per-artifact views that a batch's first step would otherwise make.
"""

from __future__ import annotations

import numpy as np

from .matcher import Matcher, _views

RUNS = 10       # calls of each branch: the code's warm-up, then its specialisation


def warm(artifact) -> None:
    """Touch every table the per-token calls read and run those calls on probe matchers."""
    t = artifact._t
    for arr in (t.st, t.next, t.etok, t.ecode, t.ebkt, t.wbits):
        # a byte per cache line, read by numpy: a strided memoryview's tobytes() copies item
        # by item (17-25 ms for tools80's 9 MB of bit pairs, against well under one)
        np.frombuffer(arr, dtype=np.uint8)[::64].max(initial=0)
    for _ in t.codes.values():
        pass
    specials = sorted({int(i) for ids in artifact.header.get("special_tokens", {}).values()
                       for i in ids})
    probe = [0, 1, t.logits - 1] + specials
    m = artifact.matcher()
    for _ in range(4):      # a few tokens into a call: the forced ones, else a probe token
        for _ in range(24):
            m.mask()
            m.is_accepting()
            forced = t.only[m._q]
            tok = next((x for x in ([forced] if forced >= 0 else probe[::-1])
                        if m.accepts(x)), None)
            if tok is None or m.is_terminated():
                break
            m.advance(tok)
        m.reset()
    picks = branch_picks(artifact)
    for _ in range(RUNS):
        for q, tok in picks:
            m = Matcher(artifact)
            m._q = q
            m.accepts(tok)
            m.advance(tok)
            m.mask()
    _views(artifact)
    # the engines' calls (apply_mask, the bitmask fills) live in a module of their own, made
    # on first use: imported here, a process's first request does not pay for it (0.5 ms
    # from bytecode, 4 ms where sources are compiled again)
    from . import bitmask  # noqa: F401


def branch_picks(artifact) -> list[tuple[int, int]]:
    """``(state, token)`` pairs that take each branch of ``advance``: a wide class's default
    and its exception, a narrow class's token (those the artifact has)."""
    t = artifact._t
    st = np.frombuffer(t.st, dtype=np.int64).reshape(-1, 4)
    out = []
    wide = np.flatnonzero(st[:, 0] >= 0)
    narrow = np.flatnonzero(st[:, 0] < 0)
    if len(narrow):
        q = int(narrow[0])
        ids = Matcher(artifact)
        ids._q = q
        allowed = ids.allowed_token_ids()
        if len(allowed):
            out.append((q, int(allowed[0])))
    found = {}
    for q in wide[:8].tolist():         # a wide class with exceptions, if the first has none
        row = np.frombuffer(t.wbits, dtype=np.uint16, count=t.rb, offset=2 * int(st[q, 0]))
        allowed, flags = row & 0xFF, row >> 8
        for v, bits in ((1, allowed & ~flags), (257, flags)):
            at = np.flatnonzero(bits)
            if len(at) and v not in found:      # the entry's first such token
                b = int(bits[at[0]])
                found[v] = (q, 8 * int(at[0]) + (b & -b).bit_length() - 1)
        if len(found) == 2:
            break
    out += found.values()
    return out
