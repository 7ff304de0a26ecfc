"""Matchers of artifacts with nested counted regions: the code read, every level's step and
the commit in one frame.

:class:`~toolc.runtime.nested.Both` reads every level into flat per-state tuples at load;
the matchers here walk them. ``advance`` is written out for two and for three levels: it
reads the token's code inline (as :meth:`~toolc.runtime.matcher.Matcher._code` does: a wide
class's default and its exceptions, a narrow class's dict), steps each level and commits, with
no call on the common path and nothing allocated but the new counter tuple. At two levels a
wide class's default takes 0.91 µs where three calls took 1.08, a string's closing quote
(an exception) 1.36 µs where they took 1.47 (docs/performance.md, round 6).

One level's step, for a state inside its region (a row offset ``a``): the token adds
``K[a + t]`` units and may leave (``X``): leaving needs ``lo <= c + K <= hi`` and lands in a
region of the level again only through its entry table (``e``); staying needs
``c + K + dmin(q2) <= hi``. Outside, the entry is 0 unless the token enters a region.

``accepts`` asks ``advance`` and undoes it: the step is written once per count of levels.
"""

from __future__ import annotations

from bisect import bisect_left

from ..errors import RejectedTokenError
from .counted import CountedMatcher
from .matcher import _token
from .tables import EXC_BUCKET_BITS


class Nested(CountedMatcher):
    """A :class:`~toolc.runtime.counted.CountedMatcher` whose counter is a pair or a triple
    (one entry per level)."""

    __slots__ = ()

    def _next(self, t: int):
        try:
            self.advance(t)
        except RejectedTokenError:
            return None
        got = self._q, self._c
        self.rollback(1)
        return got


class Nested2(Nested):
    """Two levels (items then characters, or items then inner items)."""

    __slots__ = ()

    def advance(self, token_id: int) -> None:
        t = token_id if type(token_id) is int else _token(token_id)
        h = self._t
        q = self._q
        st = h.st
        i = 4 * q
        o = st[i]
        if not 0 <= t < h.logits:
            raise RejectedTokenError(t, q)
        if o >= 0:                              # a wide class (see build_transitions)
            v = (h.wbits[o + (t >> 3)] >> (t & 7)) & 257
            if v == 1:
                q2 = st[i + 2]                  # the commonest: the default, beside the state
            elif v:
                j = st[i + 1] + ((t >> EXC_BUCKET_BITS) << 1)
                b = h.ebkt
                q2 = h.next[st[i + 3] + h.ecode[bisect_left(h.etok, t, b[j], b[j + 1])]]
            else:
                raise RejectedTokenError(t, q)
        else:                                   # a narrow class: a dict of its tokens
            v = h.codes.get(t - o, 0)
            if not v:
                raise RejectedTokenError(t, q)
            q2 = h.next[st[i + 3] + v]
        n = self._n
        a0, l0, h0, a1, l1, h1 = n.steps[q]
        g0, d0, g1, d1 = n.into[q2]
        k0, x0, e0, k1, x1, e1 = n.tabs
        c = self._c
        v0, v1 = c
        if a0 >= 0:
            a0 += t
            v0 += k0[a0]
            if x0[a0]:
                if v0 < l0 or v0 > h0:
                    raise RejectedTokenError(t, q)
                v0 = e0(q, t) if g0 else 0
            elif v0 + d0 > h0:
                raise RejectedTokenError(t, q)
        else:
            v0 = e0(q, t) if g0 else 0
        if a1 >= 0:
            a1 += t
            v1 += k1[a1]
            if x1[a1]:
                if v1 < l1 or v1 > h1:
                    raise RejectedTokenError(t, q)
                v1 = e1(q, t) if g1 else 0
            elif v1 + d1 > h1:
                raise RejectedTokenError(t, q)
        else:
            v1 = e1(q, t) if g1 else 0
        if v0 < 0 or v1 < 0:
            raise RejectedTokenError(t, q)
        self._hist.append(q)
        self._chist.append(c)
        self._q = q2
        self._c = (v0, v1)


class Nested3(Nested):
    """Three levels (items, inner items, characters)."""

    __slots__ = ()

    def advance(self, token_id: int) -> None:
        t = token_id if type(token_id) is int else _token(token_id)
        h = self._t
        q = self._q
        st = h.st
        i = 4 * q
        o = st[i]
        if not 0 <= t < h.logits:
            raise RejectedTokenError(t, q)
        if o >= 0:
            v = (h.wbits[o + (t >> 3)] >> (t & 7)) & 257
            if v == 1:
                q2 = st[i + 2]
            elif v:
                j = st[i + 1] + ((t >> EXC_BUCKET_BITS) << 1)
                b = h.ebkt
                q2 = h.next[st[i + 3] + h.ecode[bisect_left(h.etok, t, b[j], b[j + 1])]]
            else:
                raise RejectedTokenError(t, q)
        else:
            v = h.codes.get(t - o, 0)
            if not v:
                raise RejectedTokenError(t, q)
            q2 = h.next[st[i + 3] + v]
        n = self._n
        a0, l0, h0, a1, l1, h1, a2, l2, h2 = n.steps[q]
        g0, d0, g1, d1, g2, d2 = n.into[q2]
        k0, x0, e0, k1, x1, e1, k2, x2, e2 = n.tabs
        c = self._c
        v0, v1, v2 = c
        if a0 >= 0:
            a0 += t
            v0 += k0[a0]
            if x0[a0]:
                if v0 < l0 or v0 > h0:
                    raise RejectedTokenError(t, q)
                v0 = e0(q, t) if g0 else 0
            elif v0 + d0 > h0:
                raise RejectedTokenError(t, q)
        else:
            v0 = e0(q, t) if g0 else 0
        if a1 >= 0:
            a1 += t
            v1 += k1[a1]
            if x1[a1]:
                if v1 < l1 or v1 > h1:
                    raise RejectedTokenError(t, q)
                v1 = e1(q, t) if g1 else 0
            elif v1 + d1 > h1:
                raise RejectedTokenError(t, q)
        else:
            v1 = e1(q, t) if g1 else 0
        if a2 >= 0:
            a2 += t
            v2 += k2[a2]
            if x2[a2]:
                if v2 < l2 or v2 > h2:
                    raise RejectedTokenError(t, q)
                v2 = e2(q, t) if g2 else 0
            elif v2 + d2 > h2:
                raise RejectedTokenError(t, q)
        else:
            v2 = e2(q, t) if g2 else 0
        if v0 < 0 or v1 < 0 or v2 < 0:
            raise RejectedTokenError(t, q)
        self._hist.append(q)
        self._chist.append(c)
        self._q = q2
        self._c = (v0, v1, v2)
