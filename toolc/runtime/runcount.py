"""Run regions at run time: a counter that resets, for an unanchored ``C{m}`` pattern.

JSON Schema's ``pattern`` searches: ``x{100000}`` means "the string holds 100,000 ``x`` in a
row". An artifact holds such a string once, as a plain string whose states are tagged (a
*run region*), and the matcher keeps one counter ``c``: the class characters written since
the last character outside the class, or ``m`` once a run of ``m`` has been written (done,
for good). Per token it reads six shared bytes by the state's phase of the JSON-string
lexer (:mod:`toolc.walk.runcounts` makes them, per class and phase, the vocabulary's):

* ``lead``: class characters at the token's start, before any other character;
* ``best``: the longest run after the first other character (0 where there is none);
* ``trail``: the run at the token's end (the counter after it, unless done);
* ``flags``: ``KEEPS`` (no character outside the class: the run goes on), ``LEAVES`` (a
  closing quote ends the string), ``OPENS`` (the token ends inside a string it opened);
* ``omax``, ``otrail``: the longest run, and the last, in the string the token opened.

So ``advance(t)``: done if ``c + lead >= m`` or ``best >= m``; else ``c + lead`` without a
break (``KEEPS``), ``trail`` with one; a closing quote needs done; a token that opens a run region
starts its counter at ``m`` if ``omax >= m``, else ``otrail``. O(1).

``mask()`` is the stored row once done; before, it is that row without the closing tokens
that do not finish a run. That depends on the counter only through ``min(m - c, FAR)``, so
a state has at most ``FAR + 1`` such rows whatever ``m``; each is made on first use and kept.
A character is counted where it starts: a raw multi-byte character or an escape is never in
the class (only ASCII characters JSON writes raw are), so a token that ends inside one ends
with a run of 0.
"""

from __future__ import annotations

import threading

import numpy as np

from .counted import Counting

from .runfile import BEST, FAR, FLAGS, KEEPS, LEAD, LEAVES, NUM_FACTS

class RunCounting:
    """The run-region tables of an artifact, and its cache of thinned rows."""

    zero = 0

    def __init__(self, arrays: dict, row_view: list, logits: int):
        self.tag = arrays["run_tag"].tolist()
        self.m = arrays["run_lo"].tolist()
        cls = arrays["run_cls"].tolist()
        P = len(arrays["run_phases"])
        pidx = {int(p): i for i, p in enumerate(arrays["run_phases"].tolist())}
        pi = [pidx.get(int(p), -1) for p in arrays["run_phase"].tolist()]
        # a state's facts row (class x phase) for its own region, as an offset; an opening
        # state reads the row of the class it opens, by its own phase (``_base``)
        self.pi, self.cls, self.P, self.logits = pi, cls, P, logits
        self.at = [(cls[g] * P + p) * logits if g >= 0 else -1 for g, p in zip(self.tag, pi)]
        self.rows: dict = {}
        self.lock = threading.Lock()
        self.row_view = row_view
        # bytes index to ints in O(1); each fact's rows are views of them (held once)
        facts = arrays.pop("run_facts")
        self.fb = [facts[:, f, :].tobytes() for f in range(NUM_FACTS)]
        self.fv = [np.frombuffer(b, np.uint8).reshape(-1, logits) for b in self.fb]
        self.lead, self.best, self.trail, self.flags, self.omax, self.otrail = self.fb

    def key(self, q: int, c: int):
        """None when (``q``, ``c``) uses the stored row (outside a region, or done); else
        (state, min(m - c, FAR))."""
        g = self.tag[q]
        if g < 0:
            return None
        m = self.m[g]
        if c >= m:
            return None
        return (q, min(m - c, FAR))

    row = Counting.row          # made on first use and kept, as a counted string's rows

    def _thin(self, q: int, rem: int) -> np.ndarray:
        stored = np.unpackbits(self.row_view[q].view(np.uint8), bitorder="little")
        r = self.at[q] // self.logits
        f = [v[r] for v in self.fv]
        m = self.m[self.tag[q]]
        finish = (f[LEAD].astype(np.int64) >= rem) | (f[BEST].astype(np.int64) >= m)
        ok = ((f[FLAGS] & LEAVES) == 0) | finish
        keep = np.zeros(len(stored), dtype=np.uint8)
        keep[:self.logits] = stored[:self.logits] & ok
        out = np.packbits(keep, bitorder="little").view("<i4")
        out.setflags(write=False)
        return out

    def _open(self, q: int, t: int, q2: int) -> int:
        """The counter of the run region ``q2`` that token ``t`` opened from state ``q``
        (0 outside one; -1 where ``q`` has no facts to say)."""
        g2 = self.tag[q2]
        if g2 < 0:
            return 0
        p = self.pi[q]
        if p < 0:
            return -1
        at = (self.cls[g2] * self.P + p) * self.logits + t
        m = self.m[g2]
        return m if self.omax[at] >= m else min(self.otrail[at], m)

    def step(self, q: int, c: int, t: int, q2: int) -> int:
        """The counter after token ``t`` leads from (``q``, ``c``) to ``q2``; -1 when the
        region forbids it (a closing quote before a run of m)."""
        g = self.tag[q]
        if g >= 0:
            at = self.at[q] + t
            m = self.m[g]
            f = self.flags[at]
            if c < m:
                lead = self.lead[at]
                if c + lead >= m or self.best[at] >= m:
                    c = m
                else:
                    c = c + lead if f & KEEPS else self.trail[at]
            if f & LEAVES:
                return self._open(q, t, q2) if c >= m else -1
            return c
        if self.tag[q2] >= 0:
            return self._open(q, t, q2)
        return 0
