"""Token bitmasks: the layout, and the calls engines use to fill and apply them (numpy only).

The layout is xgrammar's and llguidance's: an int32 array of shape ``(batch, ceil(V / 32))``,
token ``t`` allowed in row ``r`` iff bit ``t % 32`` of ``bitmask[r, t // 32]`` is set. The
names and argument orders are theirs too, so an engine wired for either takes toolc's:

* :func:`get_bitmask_shape` and :func:`allocate_token_bitmask` (every token allowed, -1);
* :func:`fill_next_token_bitmask` ``(matcher, bitmask, index=0)``: copy a matcher's mask (a
  stored row) into one row;
* :func:`apply_token_bitmask_inplace` ``(logits, bitmask, indices=None)``: set every logit
  whose bit is clear to -inf (numpy; :mod:`toolc.integrations.torch` has the torch one).

:func:`apply_mask` is toolc's own one-row path, without a bitmask: it fills a logits row from
the state's stored plan. :func:`fill_bitmask` is the name of an earlier release, kept one
release as a deprecated alias of :func:`fill_next_token_bitmask`.
"""

from __future__ import annotations

import itertools
import warnings
import weakref
from operator import attrgetter

import numpy as np

from .matcher import Matcher
from .tables import KEEP, listed_plan


def get_bitmask_shape(batch_size: int, vocab_size: int) -> tuple[int, int]:
    """``(batch_size, ceil(vocab_size / 32))``: the shape of a bitmask for that many rows of
    ``vocab_size`` logits (use the artifact's ``logits_size``)."""
    return (int(batch_size), (int(vocab_size) + 31) // 32)


def allocate_token_bitmask(batch_size: int, vocab_size: int) -> np.ndarray:
    """A new int32 bitmask of :func:`get_bitmask_shape`, every bit set (every token allowed)."""
    return np.full(get_bitmask_shape(batch_size, vocab_size), -1, dtype=np.int32)


def fill_next_token_bitmask(matcher, bitmask: np.ndarray, index=0) -> None:
    """Copy masks into rows of an int32 ``(batch, words)`` bitmask; ``words`` must be the
    artifact's ``ceil(logits_size / 32)``. Raises ValueError for any other array.

    ``matcher``: one :class:`~toolc.runtime.matcher.Matcher`, whose mask goes to row ``index``
    (llguidance's argument order); or a batch, a sequence of matchers or of ``(artifact,
    state)`` pairs, whose masks go to rows ``index, index + 1, ...`` (``index`` an int) or to
    the rows ``index`` lists (a sequence, one per entry). A batch is one vectorized gather
    from the stored mask rows per artifact, not a Python copy per row (256 rows of Qwen3's
    mask: about the time of one plain copy of the whole bitmask; see bench/batch.py, and
    :class:`BitmaskFiller` to copy only the rows whose mask changed).
    """
    if _STAMPS:
        _touch(bitmask)             # a filler reuses some bitmask: this may be its memory
    if hasattr(matcher, "mask"):
        m = matcher.mask()
        _check_bitmask(bitmask, m.shape[0])
        bitmask[index] = m
        return
    _fill_batch(matcher, bitmask, index)


def _check_bitmask(bitmask, words: int) -> None:
    if not isinstance(bitmask, np.ndarray) or bitmask.ndim != 2 or bitmask.shape[1] != words \
            or bitmask.dtype != np.int32:
        raise ValueError(f"expected an int32 bitmask of shape (batch, {words}), got "
                         f"{getattr(bitmask, 'dtype', type(bitmask).__name__)} "
                         f"{getattr(bitmask, 'shape', '')}")


_Q, _ART = attrgetter("_q"), attrgetter("_art")


def batch_rows(batch) -> tuple[list, list]:
    """``(artifacts, [(artifact, positions, mask rows)])`` of a batch of matchers or
    ``(artifact, state)`` pairs: per distinct artifact, which batch entries use it and the
    index of each one's mask in the artifact's :attr:`~toolc.Artifact.mask_rows`."""
    batch = batch if isinstance(batch, list) else list(batch)
    if not batch:
        return [], []
    if hasattr(batch[0], "mask"):
        states = list(map(_Q, batch))
        arts = list(map(_ART, batch))
    else:
        try:
            arts, states = [list(x) for x in zip(*batch)]
        except (TypeError, ValueError):
            raise ValueError("a batch is a sequence of matchers or of (artifact, state) "
                             "pairs") from None
        for a, q in zip(arts, states):
            if isinstance(q, bool) or not isinstance(q, (int, np.integer)) \
                    or not 0 <= q < a.num_states:
                raise ValueError(f"state {q!r} is not one of the {a.num_states} states")
    first = arts[0]
    if arts.count(first) == len(arts):      # one artifact (the usual batch): C-speed checks
        # np.fromiter, not indexing with the list: numpy inspects a list index item by item
        # (59 µs for 256 states against about 10)
        at = np.fromiter(states, dtype=np.intp, count=len(states))
        groups = [(first, None, _state_rows(first)[at])]
    else:
        groups = []
        for a in dict.fromkeys(arts):
            pos = [i for i, b in enumerate(arts) if b is a]
            groups.append((a, pos, _state_rows(a)[[states[i] for i in pos]]))
    return arts, groups


_ROWS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _state_rows(artifact) -> np.ndarray:
    """intp[num_states]: each state's mask row (kept per artifact, made on first use)."""
    r = _ROWS.get(artifact)
    if r is None:
        r = _ROWS[artifact] = np.asarray(artifact.state_rows(), dtype=np.intp)
    return r


def _fill_batch(batch, bitmask, index) -> None:
    arts, groups = batch_rows(batch)
    n = len(arts)
    if not n:
        return
    words = arts[0].mask_rows.shape[1]
    if any(a.mask_rows.shape[1] != words for a, _, _ in groups):
        raise ValueError("the batch's artifacts have different logits sizes")
    _check_bitmask(bitmask, words)
    if isinstance(index, (int, np.integer)) and not isinstance(index, bool):
        if not 0 <= index <= bitmask.shape[0] - n:
            raise ValueError(f"{n} rows from row {index} do not fit a bitmask of "
                             f"{bitmask.shape[0]} rows")
        at = None
    else:
        at = np.asarray(index, dtype=np.intp)
        if at.shape != (n,) or ((at < 0) | (at >= bitmask.shape[0])).any():
            raise ValueError(f"expected {n} row indices below {bitmask.shape[0]}, got {index!r}")
    for a, pos, mrows in groups:
        if at is None and pos is None:
            # one gather straight into the bitmask's rows (mode clip: no second pass over
            # indices that are the artifact's own)
            np.take(a.mask_rows, mrows, axis=0, out=bitmask[index:index + n], mode="clip")
            continue
        where = np.arange(index, index + n) if at is None else at
        bitmask[where if pos is None else where[pos]] = np.take(a.mask_rows, mrows, axis=0,
                                                                mode="clip")
    for i, m in own_rows(batch):
        bitmask[index + i if at is None else at[i]] = m.mask()


def own_rows(batch) -> list:
    """``(position, matcher)`` of the batch's matchers whose mask is not their state's stored
    row (a matcher that says so with a true ``thinned()``); their rows are copied one by one
    after the gather. A batch of plain :class:`Matcher` objects (no counter) has none: one
    look at the set of their types, not a question per row."""
    if not batch or not hasattr(batch[0], "mask"):
        return []
    if set(map(type, batch)) == {Matcher}:
        return []                   # plain matchers: every mask is a stored row
    return [(i, m) for i, m in enumerate(batch)
            if getattr(m, "thinned", None) is not None and m.thinned()]


# A bitmask that a filler reuses (the engine's own): the root memory's address -> the stamp of
# the last fill of that memory by toolc (a filler's, or fill_next_token_bitmask's once a
# filler exists). A filler trusts its remembered rows only while the stamp is its own.
_STAMPS: dict[int, int] = {}
_NEXT_STAMP = itertools.count(1)


def _memory_key(a: np.ndarray) -> int:
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a.__array_interface__["data"][0]


def _touch(bitmask) -> None:
    """A fill that is no filler's wrote ``bitmask``: no filler's memory of it holds now
    (memory no filler reuses is not recorded)."""
    if isinstance(bitmask, np.ndarray):
        key = _memory_key(bitmask)
        if key in _STAMPS:
            _STAMPS[key] = next(_NEXT_STAMP)


class BitmaskFiller:
    """A bitmask of ``batch_size`` rows for ``logits_size`` logits, filled for a batch at each
    step, that copies only the rows whose mask changed since its last fill.

    A step's masks are mostly the last step's (inside a string, a request stays in the same
    mask row for many tokens), and copying a row costs far more than comparing its index.
    What a row holds is remembered as (artifact, mask row), so requests moving between rows,
    rollbacks, resets and other artifacts are all compared the same way; a matcher whose mask
    is not a stored row (``thinned()``) is copied every time.

    The filler either owns its bitmask and hands it out read-only (:attr:`bitmask`), or,
    with ``bitmask=``, reuses the engine's own int32 array (``batch_size`` rows or more).
    What it remembers of a reused array stays exact because the filler holds it:

    * it makes that array read-only between fills (the engine only reads it: apply);
      an array made writable again is filled whole at the next fill;
    * a fill of the same memory by another filler or by :func:`fill_next_token_bitmask`
      changes the memory's stamp: this filler's next fill is whole again;
    * writes it cannot see (through another view of the memory: a torch tensor sharing it,
      say) need :meth:`release` first (write access back; the next fill is whole).

        filler = BitmaskFiller(256, art.logits_size)
        bitmask = filler.fill(matchers)      # rows 0..len(matchers)-1, read-only

        filler = BitmaskFiller(256, art.logits_size, bitmask=engine_bitmask)
        filler.fill(matchers)                # writes the changed rows of engine_bitmask
    """

    def __init__(self, batch_size: int, logits_size: int, *, bitmask: np.ndarray | None = None):
        if bitmask is None:
            self._buf = allocate_token_bitmask(batch_size, logits_size)
            self.bitmask = self._buf.view()
            self._key = None
        else:
            _check_bitmask(bitmask, get_bitmask_shape(batch_size, logits_size)[1])
            if bitmask.shape[0] < batch_size or not bitmask.flags.writeable:
                raise ValueError(f"expected a writable bitmask of {batch_size} rows or more, "
                                 f"got {bitmask.shape[0]} rows"
                                 f"{'' if bitmask.flags.writeable else ', read-only'}")
            self._buf = bitmask.view()                  # the filler's own writable handle
            self.bitmask = bitmask
            self._key = _memory_key(bitmask)
            _STAMPS[self._key] = next(_NEXT_STAMP)      # not this filler's fill: none yet
        self.bitmask.flags.writeable = False
        self._stamp = 0
        self._art = None                                # the one artifact the rows hold
        self._held = np.full(batch_size, -1, dtype=np.intp)   # their mask rows (-1: unknown)

    def release(self) -> None:
        """Give a reused bitmask back to the engine (writable again); the next fill writes
        every row and holds it again."""
        self._forget()
        if self._key is not None:
            self.bitmask.flags.writeable = True

    def _forget(self) -> None:
        self._art = None
        self._held.fill(-1)

    def fill(self, batch) -> np.ndarray:
        """Fill rows ``0 .. len(batch) - 1`` from ``batch`` (matchers or ``(artifact, state)``
        pairs, as :func:`fill_next_token_bitmask` takes them); return those rows, read-only."""
        arts, groups = batch_rows(batch)
        n = len(arts)
        if n > len(self._held):
            raise ValueError(f"a batch of {n} for a filler of {len(self._held)} rows")
        if self._key is not None and (self.bitmask.flags.writeable
                                      or _STAMPS.get(self._key) != self._stamp):
            self._forget()              # written by someone else since: trust no row
        if len(groups) == 1 and groups[0][1] is None:
            a, _, mrows = groups[0]
            _check_bitmask(self._buf, a.mask_rows.shape[1])
            if a is not self._art:
                self._art = a
                self._held.fill(-1)
            held = self._held[:n]
            changed = np.flatnonzero(mrows != held)
            # a row copied by itself costs about 1.4 µs (Qwen3), a gather of every row about
            # what half of them copied one by one; a scatter (gather to a temporary, then
            # assign) was 15-20% slower than the copies (tools80, 30 to 128 rows of 256)
            if 2 * len(changed) > n:
                np.take(a.mask_rows, mrows, axis=0, out=self._buf[:n], mode="clip")
            else:
                buf, rows = self._buf, a.mask_rows
                for i, r in zip(changed.tolist(), mrows[changed].tolist()):
                    buf[i] = rows[r]
            held[:] = mrows
            for i, m in own_rows(batch):
                self._buf[i] = m.mask()
                held[i] = -1                # not a stored row: copy it again next time
        elif n:
            self._forget()
            _fill_batch(batch, self._buf, 0)
        if self._key is not None:
            self._stamp = _STAMPS[self._key] = next(_NEXT_STAMP)
            self.bitmask.flags.writeable = False
        return self.bitmask[:n]


def fill_bitmask(bitmask: np.ndarray, row: int, matcher) -> None:
    """Deprecated: use ``fill_next_token_bitmask(matcher, bitmask, row)`` (the argument
    order engines know from llguidance). Kept for one release."""
    warnings.warn("toolc.fill_bitmask is deprecated; use "
                  "toolc.fill_next_token_bitmask(matcher, bitmask, index)",
                  DeprecationWarning, stacklevel=2)
    fill_next_token_bitmask(matcher, bitmask, row)


def apply_token_bitmask_inplace(logits: np.ndarray, bitmask: np.ndarray,
                                indices=None) -> np.ndarray:
    """Set ``logits`` to -inf wherever ``bitmask`` does not allow the token; in place.

    ``logits``: float[vocab] or float[batch, vocab]; ``bitmask``: int32[words] or
    [batch, words], or [len(indices), words] with ``indices`` naming the logits rows to mask.
    Logits past the mask's last bit are masked; bits past the logits' width are ignored.
    Returns ``logits``. (The torch twin is :func:`toolc.integrations.torch.
    apply_token_bitmask_inplace`.)"""
    bitmask = np.asarray(bitmask)
    if bitmask.dtype != np.int32:
        raise TypeError(f"the bitmask must be int32, got {bitmask.dtype}")
    if logits.ndim not in (1, 2) or bitmask.ndim not in (1, 2):
        raise ValueError(f"expected 1-D or 2-D logits and bitmask, got shapes {logits.shape} "
                         f"and {bitmask.shape}")
    rows = logits[None] if logits.ndim == 1 else logits
    masks = bitmask[None] if bitmask.ndim == 1 else bitmask
    if indices is not None:
        idx = np.asarray(list(indices), dtype=np.intp)
        if logits.ndim != 2:
            raise ValueError("indices need 2-D logits")
        if len(masks) == 1 and len(idx) != 1:
            masks = np.broadcast_to(masks, (len(idx), masks.shape[1]))
        if len(masks) != len(idx):
            raise ValueError(f"bitmask has {len(masks)} rows for {len(idx)} indices")
    else:
        if bitmask.ndim == 2 and logits.ndim == 1:
            raise ValueError("a batch of bitmasks needs 2-D logits")
        if len(masks) != 1 and len(masks) != len(rows):
            raise ValueError(f"bitmask has {len(masks)} rows, logits have {len(rows)}")
        idx = None
        if len(masks) == 1:
            masks = np.broadcast_to(masks, (len(rows), masks.shape[1]))
    width = rows.shape[1]
    if indices is None:
        _forbid_rows(rows, masks, width)
    else:
        sub = rows[idx]
        _forbid_rows(sub, masks, width)
        rows[idx] = sub
    return logits


_ROWS_AT_ONCE = 8       # rows done at once: their limits stay in the processor's cache
_LIMITS: dict = {}      # dtype -> [256, 8]: per mask byte, +inf where its bit is set, else -inf


def _limits(dtype) -> np.ndarray:
    lim = _LIMITS.get(dtype)
    if lim is None:
        bits = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1,
                             bitorder="little").astype(bool)
        lim = _LIMITS[dtype] = np.where(bits, np.inf, -np.inf).astype(dtype)
    return lim


def _forbid_rows(rows: np.ndarray, masks: np.ndarray, width: int) -> None:
    """Set ``rows[i, t]`` to -inf where bit ``t`` of ``masks[i]`` is clear (or past its last
    bit), in place. Branch-free: each mask byte picks 8 limits (+inf or -inf) from a table and
    ``np.minimum`` keeps the logit or -inf, a few rows at a time. On Qwen3's 256-row batch
    this took a third to a half of the time of unpacking the bits and assigning through a
    boolean index, and a tenth on random bits (bench/batch.py). A forbidden NaN logit stays
    NaN (minimum propagates it); an allowed one is unchanged."""
    n, words = masks.shape
    if masks.strides[1] != masks.itemsize:
        masks = np.ascontiguousarray(masks)
    octets = min(width, 32 * words) // 8           # logits covered by whole mask bytes
    if octets and rows.dtype.kind == "f":
        lim = _limits(rows.dtype)
        by = masks.view(np.uint8)
        for i in range(0, n, _ROWS_AT_ONCE):
            r = np.reshape(rows[i:i + _ROWS_AT_ONCE, :8 * octets], (-1, octets, 8), copy=False)
            np.minimum(r, np.take(lim, by[i:i + _ROWS_AT_ONCE, :octets], axis=0), out=r)
        start = 8 * octets
    else:
        start = 0
    if start < width:
        tail = rows[:, start:]
        have = max(0, min(width, 32 * words) - start)   # logits the mask has bits for
        if have:
            bits = np.unpackbits(masks.view(np.uint8)[:, start // 8:], axis=1, count=have,
                                 bitorder="little")
            tail[:, :have][bits == 0] = -np.inf
        tail[:, have:] = -np.inf


def apply_mask(logits: np.ndarray, matcher, fill: float = float("-inf")) -> np.ndarray:
    """Set, in place, every logit the matcher's state forbids to ``fill``; return ``logits``.

    ``logits`` is a 1-D float array of at least ``logits_size`` entries; entries past the
    logits size are forbidden too. No bits are unpacked per call: a state that allows few
    tokens keeps their values and fills the rest, one that allows almost all fills only the
    few it forbids (:meth:`~toolc.runtime.artifact.Artifact.apply_plan`).
    """
    h = matcher._t
    L = h.logits
    if logits.ndim != 1 or logits.shape[0] < L:
        raise ValueError(f"expected 1-D logits of at least {L} entries, got shape "
                         f"{logits.shape}")
    if getattr(matcher, "thinned", None) is not None and matcher.thinned():
        # a counted string near its bound: its row is not a stored one, so it has no plan
        bits = np.unpackbits(matcher.mask().view(np.uint8), bitorder="little")[:L]
        logits[:L][bits == 0] = fill
        logits[L:] = fill
        return logits
    r = h.state_row[matcher._q]
    plan = h.plans[r]
    if plan is None:
        plan = listed_plan(h, r)
    how, ids = plan
    if how == KEEP:
        vals = logits[ids]
        logits.fill(fill)
        logits[ids] = vals
    else:
        logits[ids] = fill
        if logits.shape[0] > L:
            logits[L:] = fill
    return logits


