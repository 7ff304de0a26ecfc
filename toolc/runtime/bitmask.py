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

import warnings

import numpy as np

from .tables import KEEP, listed_plan


def get_bitmask_shape(batch_size: int, vocab_size: int) -> tuple[int, int]:
    """``(batch_size, ceil(vocab_size / 32))``: the shape of a bitmask for that many rows of
    ``vocab_size`` logits (use the artifact's ``logits_size``)."""
    return (int(batch_size), (int(vocab_size) + 31) // 32)


def allocate_token_bitmask(batch_size: int, vocab_size: int) -> np.ndarray:
    """A new int32 bitmask of :func:`get_bitmask_shape`, every bit set (every token allowed)."""
    return np.full(get_bitmask_shape(batch_size, vocab_size), -1, dtype=np.int32)


def fill_next_token_bitmask(matcher, bitmask: np.ndarray, index: int = 0) -> None:
    """Copy ``matcher``'s mask into row ``index`` of an int32 ``(batch, words)`` bitmask.

    The argument order is llguidance's. ``words`` must be the artifact's
    ``ceil(logits_size / 32)``. Raises ValueError for any other array."""
    m = matcher.mask()
    if bitmask.ndim != 2 or bitmask.shape[1] != m.shape[0] or bitmask.dtype != np.int32:
        raise ValueError(f"expected an int32 bitmask of shape (batch, {m.shape[0]}), got "
                         f"{bitmask.dtype} {bitmask.shape}")
    bitmask[index] = m


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
    bits = np.unpackbits(np.ascontiguousarray(masks).view(np.uint8), axis=1,
                         bitorder="little").view(bool)
    if bits.shape[1] >= width:
        bits = bits[:, :width]
    else:
        bits = np.concatenate([bits, np.zeros((len(bits), width - bits.shape[1]), bool)], 1)
    if indices is None:
        rows[~bits] = -np.inf
    else:
        sub = rows[idx]
        sub[~bits] = -np.inf
        rows[idx] = sub
    return logits


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


