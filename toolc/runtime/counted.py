"""Counted regions at run time: a :class:`CountedMatcher` is a Matcher plus one counter.

An artifact with counted strings (format 6, see :mod:`toolc.walk.counts`) holds each bounded
string once, unbounded, with its states tagged; the tag names the bounds ``lo..hi`` (in
characters). The matcher's state is the pair (DFA state, characters written so far in the
open counted string). Per token it reads three shared tables by the state's phase: ``K``
(characters started before the token leaves the string), ``X`` (it leaves) and ``S`` (the
characters of a counted string it opens). So:

* ``advance(t)`` in a counted string: leaving needs ``lo <= c + K <= hi``; staying needs
  ``c + K <= hi``, and the counter becomes ``c + K``; opening a string sets it to ``S``.
  O(1), as for any state.
* ``mask()`` is the state's stored row while the counter is more than one token's reach from
  both bounds; near them, it is that row thinned by ``K`` (the tokens too long for what is
  left, and the closing tokens too short for ``lo``). Such a row depends on the counter only
  through ``min(hi - c, 255)`` and ``max(lo - c, 0)``; it is made on first use and kept
  (shared by every matcher of the artifact), so each is computed once.
"""

from __future__ import annotations

import threading

import numpy as np

from ..errors import RejectedTokenError
from .matcher import Matcher, _token

FAR = 255           # K and S fit in a byte: a counter this far from a bound cannot reach it
MAX_CACHED_ROWS = 1024     # thinned rows kept per artifact (19 MB for Qwen3's width)


class Counting:
    """The counted-region tables of an artifact, and its cache of thinned rows."""

    zero = 0

    def __init__(self, arrays: dict, row_view: list, logits: int, targets):
        self.tag = arrays["cnt_tag"].tolist()
        self.dmin = arrays["cnt_dmin"].tolist()
        self.dmin_a = arrays["cnt_dmin"].astype(np.int64)
        # a counter this far below its maximum cannot reach it in one token, however many
        # characters the pattern still needs after it
        most = np.zeros(len(arrays["cnt_lo"]), dtype=np.int64)
        tags = arrays["cnt_tag"]
        np.maximum.at(most, tags[tags >= 0], self.dmin_a[tags >= 0])
        self.far = (FAR + most).tolist()
        self.targets = targets
        self.lo = arrays["cnt_lo"].tolist()
        self.hi = [h if h >= 0 else None for h in arrays["cnt_hi"].tolist()]
        pidx = {int(p): i for i, p in enumerate(arrays["cnt_phases"].tolist())}
        self.pi = [pidx.get(int(p), -1) for p in arrays["cnt_phase"].tolist()]
        # each state's table row as an offset into the flat tables (-1: none)
        self.at = [p * logits if p >= 0 else -1 for p in self.pi]
        # bytes index to ints in O(1) without a list of boxed ints per token (S is kept + 1);
        # the arrays become views of them, so each table is held once
        shape = arrays["cnt_k"].shape
        self.kb, self.xb, self.sb = (arrays[n].tobytes() for n in ("cnt_k", "cnt_x", "cnt_s1"))
        for n, b in (("cnt_k", self.kb), ("cnt_x", self.xb), ("cnt_s1", self.sb)):
            arrays[n] = np.frombuffer(b, np.uint8).reshape(shape)
        self.k, self.x = arrays["cnt_k"], arrays["cnt_x"]
        self.row_view = row_view
        self.logits = logits
        self.rows: dict = {}
        self.lock = threading.Lock()

    def key(self, q: int, c: int):
        """None when state ``q`` with counter ``c`` uses its stored row; else the key of the
        thinned row."""
        g = self.tag[q]
        if g < 0:
            return None
        hi = self.hi[g]
        far = self.far[g]
        rem = far if hi is None else min(hi - c, far)
        need = max(self.lo[g] - c, 0)
        if rem >= far and need == 0:
            return None
        return (q, rem, min(need, FAR + 1))

    def row(self, key) -> np.ndarray:
        got = self.rows.get(key)
        if got is None:
            got = self._thin(*key)
            with self.lock:
                if len(self.rows) >= MAX_CACHED_ROWS:
                    self.rows.clear()
                self.rows[key] = got
        return got

    def _thin(self, q: int, rem: int, need: int) -> np.ndarray:
        base = self.row_view[q]
        bits = np.unpackbits(base.view(np.uint8), bitorder="little")[:self.logits].astype(bool)
        p = self.pi[q]
        k = self.k[p].astype(np.int64)
        x = self.x[p] > 0
        # a token that stays must leave room for what the pattern still needs after it
        after = self.dmin_a[np.maximum(self.targets(q, self.logits), 0)]
        bits &= np.where(x, (k <= rem) & (k >= need), k + after <= rem)
        words = (self.logits + 31) // 32
        padded = np.zeros(words * 32, dtype=bool)
        padded[:self.logits] = bits
        out = np.packbits(padded, bitorder="little").view("<i4")
        out.setflags(write=False)
        return out

    def step(self, q: int, c: int, t: int, q2: int) -> int:
        """The counter after token ``t`` leads from (``q``, ``c``) to ``q2``; -1 when a bound
        forbids it."""
        g = self.tag[q]
        if g >= 0:
            at = self.at[q] + t     # a counted state always has a phase (checked at load)
            c2 = c + self.kb[at]
            hi = self.hi[g]
            if self.xb[at]:
                if c2 < self.lo[g] or (hi is not None and c2 > hi):
                    return -1
                return self.sb[at] - 1 if self.tag[q2] >= 0 else 0
            return c2 if hi is None or c2 + self.dmin[q2] <= hi else -1
        if self.tag[q2] >= 0:
            at = self.at[q]
            return self.sb[at + t] - 1 if at >= 0 else -1
        return 0

    def enter(self, q: int, t: int) -> int:
        """The counter after token ``t`` from state ``q`` ends in a counted string (-1: it
        cannot)."""
        at = self.at[q]
        return self.sb[at + t] - 1 if at >= 0 else -1


class CountedMatcher(Matcher):
    """A :class:`Matcher` whose state is (DFA state, counter); see the module docstring.
    The rule for rejected tokens is the Matcher's: ``advance`` raises RejectedTokenError and
    leaves the state unchanged."""

    __slots__ = ("_c", "_n", "_chist")

    def __new__(cls, artifact=None):
        """The matcher of the artifact's counting (a nested one steps every level in one
        frame, :mod:`toolc.runtime.nestedmatch`); without one (``copy.copy``), ``cls``."""
        if cls is CountedMatcher and artifact is not None:
            cls = getattr(artifact._counting, "matcher_type", cls)
        return object.__new__(cls)

    def __init__(self, artifact):
        super().__init__(artifact)
        self._n = artifact._counting
        self._c = self._n.zero
        self._chist: list[int] = []

    @property
    def counter(self):
        """Units written so far in the open counted region (0 outside one): characters of a
        string or items of an array; where an artifact counts both, the pair (items,
        characters), since a string may sit in a counted array's items."""
        return self._c

    def mask(self) -> np.ndarray:
        key = self._n.key(self._q, self._c)
        if key is None:
            return self._t.row_view[self._q]
        return self._n.row(key)

    def thinned(self) -> bool:
        """Whether the mask is a thinned row rather than the state's stored one."""
        return self._n.key(self._q, self._c) is not None

    def _next(self, t: int):
        """(next state, next counter), or None when ``t`` is not allowed."""
        code = self._code(t)
        if not code:
            return None
        h = self._t
        q2 = h.next[h.st[4 * self._q + 3] + code]
        c2 = self._n.step(self._q, self._c, t, q2)
        return None if c2 == -1 else (q2, c2)

    def accepts(self, token_id: int) -> bool:
        return self._next(token_id if type(token_id) is int else _token(token_id)) is not None

    def advance(self, token_id: int) -> None:
        t = token_id if type(token_id) is int else _token(token_id)
        code = self._code(t)        # as _next, without its call and its pair per token
        if code:
            h, q, c = self._t, self._q, self._c
            q2 = h.next[h.st[4 * q + 3] + code]
            c2 = self._n.step(q, c, t, q2)
            if c2 != -1:
                self._hist.append(q)
                self._chist.append(c)
                self._q = q2
                self._c = c2
                return
        raise RejectedTokenError(t, self._q)

    def _probe(self) -> "CountedMatcher":
        probe = CountedMatcher(self._art)
        probe._q, probe._c = self._q, self._c
        return probe

    def _only(self) -> int:
        if not self.thinned():
            return self._t.only[self._q]
        ids = np.flatnonzero(np.unpackbits(self.mask().view(np.uint8), bitorder="little"))
        return int(ids[0]) if len(ids) == 1 else -1

    def rollback(self, n: int = 1) -> None:
        super().rollback(n)         # checks n first, and changes nothing when it refuses
        if n:
            self._c = self._chist[-n]
            del self._chist[-n:]

    def reset(self) -> None:
        super().reset()
        self._c = self._n.zero
        self._chist.clear()

    def copy(self) -> "CountedMatcher":
        m = CountedMatcher(self._art)
        m._q, m._c = self._q, self._c
        m._hist = list(self._hist)
        m._chist = list(self._chist)
        return m
