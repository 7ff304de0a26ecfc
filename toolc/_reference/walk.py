"""A plain, byte-by-byte twin of the vocabulary walk in :mod:`toolc.walk.index`.

Used only by tests to check the fast walk state by state; far too slow for a whole vocabulary.
"""

from __future__ import annotations

from ..fsm import ByteDFA
from ..tokenizer import Vocabulary


def walk_state(dfa: ByteDFA, vocab: Vocabulary, symbols: dict[str, tuple[int, ...]], q: int,
               token_ids=None) -> dict[int, int]:
    """{token: next state} for every token allowed in state ``q``."""
    out = {}
    added = vocab.added_ids
    special_of = {tid: name for name, tids in symbols.items() for tid in tids}
    ids = range(vocab.vocab_size) if token_ids is None else token_ids
    for t in ids:
        if t in special_of:
            r = dfa.step_symbol(q, special_of[t])
        elif t in added or not vocab.token_bytes[t]:
            continue
        else:
            r = dfa.step_bytes(q, vocab.token_bytes[t])
        if r >= 0:
            out[t] = r
    return out
