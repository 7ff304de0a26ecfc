"""The :class:`Matcher`: one generation's walk through an artifact, token by token.

Standard library only at run time; it reads the tables of :mod:`toolc.runtime.tables`.
"""

from __future__ import annotations

import weakref
from bisect import bisect_left
from operator import attrgetter

import numpy as np

from ..errors import RejectedTokenError
from .tables import EXC_BUCKET_BITS


class Matcher:
    """Walks one generation through an artifact's automaton, one token at a time.

    The rule for rejected tokens, once: :meth:`advance` raises :class:`RejectedTokenError`
    (a ``ValueError``) for a token the mask does not allow and leaves the state unchanged;
    :meth:`accepts` asks the same question without raising.

    Token ids are Python or numpy integers (``bool`` and ``numpy.bool_`` are not); anything
    else (a float, a str, an array) is a ``TypeError``, raised before the state is touched.
    An id outside ``[0, logits_size)`` is not allowed anywhere. :meth:`rollback` takes such an
    integer too, at least 0 and at most :attr:`num_consumed`.

    After EOS (:meth:`is_terminated`) nothing may follow: the mask is all zeros, so
    ``apply_mask`` fills every logit, :meth:`accepts` is False for every token and
    :meth:`advance` raises. An engine stops at EOS; one that samples on gets no token the
    grammar allows (llguidance's ``compute_mask`` does the same).
    """

    __slots__ = ("_art", "_t", "_q", "_hist")

    def __init__(self, artifact):
        self._art = artifact
        self._t = artifact._t
        self._q = 0
        self._hist: list[int] = []

    @property
    def state(self) -> int:
        return self._q

    def mask(self) -> np.ndarray:
        """int32[ceil(logits_size / 32)], read-only: token t allowed iff bit t%32 of word t//32.

        A view of the stored row, not a copy: O(1).
        """
        return self._t.row_view[self._q]

    def allowed_token_ids(self) -> np.ndarray:
        bits = np.unpackbits(self.mask().view(np.uint8), bitorder="little")
        return np.flatnonzero(bits).astype(np.int32)

    def _code(self, t: int) -> int:
        """0 if token ``t`` is not allowed here, else its code (see build_transitions)."""
        h = self._t
        if 0 <= t < h.logits:
            st = h.st
            i = 4 * self._q
            o = st[i]
            if o < 0:
                return h.codes.get(t - o, 0)
            v = (h.wbits[o + (t >> 3)] >> (t & 7)) & 257
            if v == 257:
                j = st[i + 1] + ((t >> EXC_BUCKET_BITS) << 1)
                return h.ecode[bisect_left(h.etok, t, h.ebkt[j], h.ebkt[j + 1])]
            return v
        return 0

    def accepts(self, token_id: int) -> bool:
        return self._code(token_id if type(token_id) is int else _token(token_id)) != 0

    def advance(self, token_id: int) -> None:
        """Consume one token; raise RejectedTokenError (state unchanged) if it is not allowed,
        TypeError if it is not an integer."""
        t = token_id if type(token_id) is int else _token(token_id)
        h = self._t
        q = self._q
        if 0 <= t < h.logits:
            st = h.st
            i = 4 * q
            o = st[i]
            if o >= 0:          # a wide class: the token's two bits (see build_transitions)
                v = (h.wbits[o + (t >> 3)] >> (t & 7)) & 257
                if v == 1:      # the commonest advance: the default, kept beside the state
                    self._hist.append(q)
                    self._q = st[i + 2]
                    return
                if v:
                    j = st[i + 1] + ((t >> EXC_BUCKET_BITS) << 1)
                    bk = h.ebkt
                    c = h.ecode[bisect_left(h.etok, t, bk[j], bk[j + 1])]
                else:
                    c = 0
            else:
                c = h.codes.get(t - o, 0)
            if c:
                self._hist.append(q)
                self._q = h.next[st[i + 3] + c]
                return
        raise RejectedTokenError(t, q)

    def is_accepting(self) -> bool:
        """Generation may end here: EOS is in the mask."""
        return self._t.accepting[self._q]

    def is_terminated(self) -> bool:
        """EOS has been consumed."""
        return self._t.final[self._q]

    def forced_tokens(self) -> list[int]:
        """The tokens that are the only choice from here, in order (for jump-forward)."""
        h = self._t
        out = []
        probe = self._probe()
        for _ in range(h.num_states + 1):
            t = probe._only()
            if t < 0:
                break
            out.append(t)
            probe.advance(t)
            if h.final[probe._q]:
                break
        return out

    def _probe(self) -> "Matcher":
        """A matcher at this one's state, without its history."""
        probe = Matcher(self._art)
        probe._q = self._q
        return probe

    def _only(self) -> int:
        """The one token allowed here, or -1."""
        return self._t.only[self._q]

    def rollback(self, n: int = 1) -> None:
        """Undo the last ``n`` advances (a non-negative integer, at most num_consumed)."""
        n = n if type(n) is int else _token(n, "rollback count")
        if n < 0 or n > len(self._hist):
            raise ValueError(f"cannot roll back {n} tokens; {len(self._hist)} were consumed")
        if n:
            self._q = self._hist[-n]
            del self._hist[-n:]

    def reset(self) -> None:
        self._q = 0
        self._hist.clear()

    def copy(self) -> "Matcher":
        m = Matcher(self._art)
        m._q = self._q
        m._hist = list(self._hist)
        return m

    @property
    def num_consumed(self) -> int:
        return len(self._hist)



def advance_batch(matchers, tokens) -> None:
    """Advance ``matchers[i]`` by ``tokens[i]`` for every ``i``: a batch's step in one call.

    All or nothing: a rejected token raises
    :class:`RejectedTokenError` (its ``batch_index`` says which entry) with every matcher
    unchanged. ``tokens`` is a sequence or a numpy array of integers, one per matcher. The
    loop reads each plain matcher's tables directly (no method call per row); a counted
    matcher advances at once (one :meth:`~Matcher.advance`, not a check and then a step) and
    is rolled back if a later row is rejected.
    """
    ms = matchers if isinstance(matchers, list) else list(matchers)
    toks = tokens.tolist() if isinstance(tokens, np.ndarray) else list(tokens)
    if len(toks) != len(ms):
        raise ValueError(f"{len(toks)} tokens for {len(ms)} matchers")
    if len(ms) >= _VECTOR_MIN and set(map(type, ms)) == {Matcher} \
            and set(map(type, toks)) == {int}:
        arts = list(map(_ART, ms))
        if arts.count(arts[0]) == len(arts):
            return _advance_vector(ms, toks, arts[0])
    new = []
    put = new.append
    moved = []          # the counted matchers already advanced, undone if a later row fails
    try:
        for i, (m, t) in enumerate(zip(ms, toks)):
            if type(t) is not int:
                t = toks[i] = _token(t)
            if type(m) is Matcher:
                c = m._code(t)
                if not c:
                    raise RejectedTokenError(t, m._q)
                h = m._t
                put(h.next[h.st[4 * m._q + 3] + c])
            else:
                m.advance(t)        # one step; a rejected token leaves it unchanged
                moved.append(m)
                put(-1)
    except (RejectedTokenError, TypeError) as err:
        for done in reversed(moved):
            done.rollback(1)
        if isinstance(err, RejectedTokenError):
            err.batch_index = i
        raise
    for m, q in zip(ms, new):
        if q >= 0:
            m._hist.append(m._q)
            m._q = q


_VECTOR_MIN = 16        # from this many plain matchers of one artifact, the lookups in numpy
_Q, _ART = attrgetter("_q"), attrgetter("_art")
_VIEWS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _views(artifact) -> tuple:
    """numpy views of the tables ``advance`` reads (made once per artifact)."""
    v = _VIEWS.get(artifact)
    if v is None:
        h = artifact._t
        v = _VIEWS[artifact] = (np.frombuffer(h.st, dtype=np.int64).reshape(-1, 4),
                                np.frombuffer(h.wbits, dtype=np.uint16),
                                np.frombuffer(h.next, dtype=np.int64))
    return v


def _advance_vector(ms: list, toks: list, artifact) -> None:
    """:func:`advance_batch` for plain matchers of one artifact: the table lookups of every
    row at once in numpy (their memory reads overlap, where a Python loop waits for each), a
    Python step only for the rows that need one (a narrow class's dict, an exception's
    bisection). Same codes as :meth:`Matcher._code`, all or nothing."""
    h = artifact._t
    st, wb, nxt = _views(artifact)
    n = len(ms)
    q = np.fromiter(map(_Q, ms), dtype=np.int64, count=n)
    t = np.array(toks, dtype=np.int64)
    rows = st[q]
    o = rows[:, 0]
    code = np.zeros(n, dtype=np.int64)
    inside = (t >= 0) & (t < h.logits)
    wide = np.flatnonzero(inside & (o >= 0))
    if len(wide):
        tw = t[wide]
        v = (wb[o[wide] + (tw >> 3)] >> (tw & 7).astype(np.uint16)) & 257
        code[wide] = v != 0
        for i in wide[np.flatnonzero(v == 257)].tolist():
            ti = toks[i]
            j = int(rows[i, 1]) + ((ti >> EXC_BUCKET_BITS) << 1)
            code[i] = h.ecode[bisect_left(h.etok, ti, h.ebkt[j], h.ebkt[j + 1])]
    narrow = np.flatnonzero(inside & (o < 0))
    if len(narrow):
        get = h.codes.get
        code[narrow] = [get(x, 0) for x in (t[narrow] - o[narrow]).tolist()]
    bad = np.flatnonzero(code == 0)
    if len(bad):
        i = int(bad[0])
        err = RejectedTokenError(toks[i], ms[i]._q)
        err.batch_index = i
        raise err
    for m, q2 in zip(ms, nxt[rows[:, 3] + code].tolist()):
        m._hist.append(m._q)
        m._q = q2


def _token(value, what: str = "token id") -> int:
    """``value`` as an int if it is a Python or numpy integer (not a bool), else TypeError."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return int(value)
    raise TypeError(f"{what} must be an integer, got {type(value).__name__} {value!r:.40}")
