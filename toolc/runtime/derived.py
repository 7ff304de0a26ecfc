"""Derived classes in an artifact file: their checks at load, and their exceptions
expanded for tools and tests (numpy only).

A derived class (format 4) stores no exceptions: they are its base's entries whose tokens
its own row allows, with the base's codes. A patched class (format 7) is a derived class
that stores a patch as its entries: its exceptions are its entries with a code above 0,
plus its base's entries whose tokens its row allows and its entries do not name (an entry
with code 0 names a token that leads to the default).
"""

from __future__ import annotations

import numpy as np

from .arrays import expand_runs, or_words, ptr_of


def patched_classes(sections: dict) -> bool:
    """Whether a derived class stores entries (a patch: format 7). False for sections too
    damaged to tell: the checks at load refuse those."""
    raw, ptr = sections.get("class_base"), sections.get("exc_ptr")
    if not isinstance(raw, bytes) or not isinstance(ptr, bytes) or len(raw) % 4 \
            or len(ptr) != len(raw) + 4:
        return False
    base = np.frombuffer(raw, dtype="<i4")
    ep = np.frombuffer(ptr, dtype="<i4")
    return bool(np.any((base >= 0) & (ep[1:] != ep[:-1])))


#: derived classes whose bit rows are made at once (toolc.runtime.limits prices them)
CHUNK = 128


def _count(d, base, ep, out, masks, words) -> np.ndarray:
    """The number of exceptions of derived classes ``d``: their bases' tokens that their
    rows allow and their patches do not name, and their patches' coded entries."""
    a = np.unique(base[d])
    exc_bits = np.zeros((len(a), words), dtype=np.uint32)
    which, at = expand_runs(ep[a], ep[a + 1])
    tok = out["exc_tokens"][at].astype(np.int64)
    word, bits = or_words(which * words + (tok >> 5), tok & 31)
    exc_bits.reshape(-1)[word] = bits
    own = exc_bits[np.searchsorted(a, base[d])]
    del exc_bits
    own &= masks[out["class_row"][d]]
    # a patch: the tokens it names leave the base's, those with a code join
    which, at = expand_runs(ep[d], ep[d + 1])
    tok = out["exc_tokens"][at].astype(np.int64)
    named = np.zeros_like(own)
    word, bits = or_words(which * words + (tok >> 5), tok & 31)
    named.reshape(-1)[word] = bits
    own &= np.invert(named, out=named)
    return np.bitwise_count(own).sum(axis=1) + np.bincount(
        which[out["exc_code"][at] > 0], minlength=len(d))


def check_derived(raw, ep: np.ndarray, out: dict, masks: np.ndarray, max_code: np.ndarray,
                  n_exc: np.ndarray, damaged) -> np.ndarray:
    """The ``class_base`` section, checked: a base is an earlier class that is not derived
    itself. A derived class's exceptions are not expanded (the runtime reads the base's),
    but their count and largest code (the base's or its patch's) are entered in ``n_exc``
    and ``max_code`` for the checks that follow; code 0 is refused outside a patch."""
    C = len(out["class_row"])
    if not isinstance(raw, bytes) or len(raw) != 4 * C:
        raise damaged("section class_base")
    base = np.frombuffer(raw, dtype="<i4").astype(np.int64)
    d = np.flatnonzero(base >= 0)
    if np.any(base < -1) or np.any(base[d] >= d) or np.any(base[base[d]] >= 0):
        raise damaged("class_base")
    words = masks.shape[1]
    for lo in range(0, len(d), CHUNK):      # a chunk of rows at a time (limits.py)
        n_exc[d[lo:lo + CHUNK]] = _count(d[lo:lo + CHUNK], base, ep, out, masks, words)
    max_code[d] = np.maximum(max_code[base[d]], max_code[d])
    return base


def expand_derived(arrays: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every class's exceptions, derived classes' included: ``(exc_ptr, exc_tokens,
    exc_code)`` as a format-3 file would hold them (for tools and tests; the runtime reads a
    derived class's base directly)."""
    ep = arrays["exc_ptr"].astype(np.int64)
    base = arrays.get("class_base")
    if base is None or not np.any(base >= 0):
        return ep, arrays["exc_tokens"], arrays["exc_code"]
    C = len(ep) - 1
    words = arrays["masks"].shape[1]
    flat = arrays["masks"].view(np.uint32).reshape(-1)
    d = np.flatnonzero(base >= 0)
    which, at = expand_runs(ep[base[d]], ep[base[d] + 1])
    tok = arrays["exc_tokens"][at].astype(np.int64)
    row = arrays["class_row"][d[which]].astype(np.int64)
    ok = ((flat[row * words + (tok >> 5)] >> (tok & 31).astype(np.uint32)) & 1).astype(bool)
    own = np.repeat(np.arange(C), np.diff(ep))
    own_tok = arrays["exc_tokens"].astype(np.int64)
    L = int(max(own_tok.max(initial=0), tok.max(initial=0))) + 1
    ok &= ~np.isin(d[which] * L + tok, own * L + own_tok)     # named by the patch
    mine = arrays["exc_code"] > 0                               # a patch's code 0: default
    cls = np.concatenate([own[mine], d[which][ok]])
    tokens = np.concatenate([own_tok[mine], tok[ok]])
    codes = np.concatenate([arrays["exc_code"][mine], arrays["exc_code"][at][ok]])
    k = np.lexsort((tokens, cls))
    return ptr_of(cls[k], C), tokens[k].astype(np.int32), codes[k]
