"""The trie classes each DFA state has an edge on: what the walk looks up among a trie node's
children instead of listing them all (:func:`toolc.walk.index.walk`).

A state's byte-class edges are expanded to the trie classes inside those byte classes.
:class:`Edges` holds them for every state at once (a CSR: ``cls[ptr[q]:ptr[q] + cnt[q]]``)
or, for a walk from a few origins (the framing's, beside kept blocks), fills a state's row when
the walk first reaches it: such a walk reaches a few hundred of a union's 20,000 states, and
the whole table's edges cost some 6 ms of an edit of tools80. Either way a state's row is the
same list in the same order.
"""

from __future__ import annotations

import numpy as np

from ..runtime.arrays import ranges


def edge_classes(trans: np.ndarray, to_dfa: np.ndarray):
    """(state, trie class) for every edge, sorted by state: each state's byte-class edges
    expanded to the trie classes inside those byte classes."""
    nc = trans.shape[1]
    by = np.argsort(to_dfa, kind="stable")
    ptr = np.searchsorted(to_dfa[by], np.arange(nc + 1))
    size = np.diff(ptr)
    state, dcls = np.divmod(np.flatnonzero(trans.reshape(-1) >= 0), nc)   # 2x np.nonzero
    cnt = size[dcls]
    at = ranges(ptr[dcls], cnt)
    return np.repeat(state.astype(np.int64), cnt), by[at]


class Edges:
    """Each state's trie classes with an edge: ``cls[ptr[q]:ptr[q] + cnt[q]]``, for the
    states :meth:`fill` was given (every state unless ``lazy``)."""

    def __init__(self, table: np.ndarray, to_dfa: np.ndarray, lazy: bool = False):
        n = table.shape[0]
        self.table, self.to_dfa = table, to_dfa
        if not lazy:
            state, self.cls = edge_classes(table, to_dfa)
            ptr = np.searchsorted(state, np.arange(n + 1))
            self.ptr, self.cnt = ptr[:-1], np.diff(ptr)
            self.todo = None
            return
        self.ptr = np.zeros(n, dtype=np.int64)
        self.cnt = np.zeros(n, dtype=np.int64)
        self.todo = np.ones(n, dtype=bool)
        self.cls = np.zeros(1024, dtype=np.int64)     # filled up to self.used, grown by doubling
        self.used = 0

    def fill(self, states: np.ndarray) -> None:
        """Make the rows of ``states`` available (a no-op for the eager form)."""
        if self.todo is None:
            return
        new = states[self.todo[states]]
        if not len(new):
            return
        new = np.unique(new)
        self.todo[new] = False
        state, cls = edge_classes(self.table[new], self.to_dfa)
        cnt = np.bincount(state, minlength=len(new))
        end = self.used + len(cls)
        if end > len(self.cls):
            grown = np.zeros(max(end, 2 * len(self.cls)), dtype=np.int64)
            grown[:self.used] = self.cls[:self.used]
            self.cls = grown
        self.cls[self.used:end] = cls
        self.ptr[new] = self.used + np.cumsum(cnt) - cnt
        self.cnt[new] = cnt
        self.used = end
