"""Near misses ("did you mean ...?"): one finder for tool keys, schema keywords and type
names (standard library only)."""

from __future__ import annotations

import difflib


def near_miss(word: str, known, cutoff: float = 0.8) -> str | None:
    """The name in ``known`` that ``word`` most likely misspells, or None.

    A difference of case alone always counts (``minlength`` for ``minLength``); otherwise the
    closest name whose similarity ratio is at least ``cutoff``."""
    if not isinstance(word, str) or not word:
        return None
    known = sorted(known)
    for k in known:
        if k.lower() == word.lower() and k != word:
            return k
    found = difflib.get_close_matches(word, known, n=1, cutoff=cutoff)
    return found[0] if found and found[0] != word else None


def did_you_mean(word: str, known, cutoff: float = 0.8) -> str:
    """`` (did you mean 'x'?)`` or the empty string."""
    hit = near_miss(word, known, cutoff)
    return f" (did you mean {hit!r}?)" if hit else ""
