"""Small numpy idioms that the runtime and the compiler share (numpy only).

The compiler imports these from here (it may import the runtime; the runtime never imports
the compiler), so each idiom is written once.
"""

from __future__ import annotations

import numpy as np


def ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The concatenation of ``arange(s, s + c)`` for each start ``s`` and count ``c``: the
    positions of several slices of one flat array, in one gather index."""
    counts = np.asarray(counts)
    total = int(counts.sum())
    # position starts[r] + (i - first element of slice r): one repeat of (start - first), plus i
    return np.repeat(starts - np.cumsum(counts) + counts, counts) + np.arange(total)


def expand_runs(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(run index, position) of every position covered by the runs ``lo:hi``."""
    cnt = hi - lo
    return np.repeat(np.arange(len(lo)), cnt), ranges(lo, cnt)


def ptr_of(seg: np.ndarray, count: int) -> np.ndarray:
    """Boundaries of ``count`` segments given each element's (sorted) segment number."""
    return np.searchsorted(seg, np.arange(count + 1)).astype(np.int64)


def or_words(word: np.ndarray, bit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct words of a sorted word index, each with the OR of its bits. The bits of
    one word are distinct (ids increase within a row), so the OR is a sum: a cumsum."""
    if not len(word):
        return word, np.zeros(0, np.uint32)
    ends = np.flatnonzero(np.append(word[1:] != word[:-1], True))
    cs = np.cumsum(np.left_shift(1, bit))
    return word[ends], np.diff(cs[ends], prepend=0).astype(np.uint32)


def typed_sections(sections: dict, dtypes: dict, damaged) -> dict:
    """The named sections as arrays of their dtypes (views of the bytes); ``damaged(what)``
    makes the error for a section that is missing, not bytes, or of a wrong length."""
    out = {}
    try:
        for k, dt in dtypes.items():
            if not isinstance(sections[k], bytes):
                raise TypeError(k)
            out[k] = np.frombuffer(sections[k], dtype=np.dtype(dt))
    except (KeyError, TypeError, ValueError) as e:
        raise damaged(f"section {e}") from None
    return out
