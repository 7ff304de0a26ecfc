"""The vocabulary walk: a minimized byte DFA times a Vocabulary, to per-state token
transitions (:class:`TokenIndex`).

* :mod:`.index`: :func:`walk` and :class:`TokenIndex`, all states at once, in numpy.
* :mod:`.runs`: the walk's token runs: sorting, merging, renaming group runs per member.
* :mod:`.trie`: the trie of byte-class sequences the walk descends (cached per vocabulary).
* :mod:`.regions`: isomorphic regions of the DFA, walked once as their representative.
* :mod:`.twins`: near twins, states that copy another state's runs but for a few first classes.

``toolc._reference.walk`` is the plain byte-by-byte twin the tests compare against.
"""

from .index import TokenIndex, walk

__all__ = ["TokenIndex", "walk"]
