"""One level of the vocabulary walk for a narrow frontier, in plain Python.

Past the first few trie levels the walk's frontier is a dozen triples (a long run of spaces
or dashes inside a string, followed one character a level, 70 levels deep in Qwen3's trie),
and each numpy level costs some fifty calls whatever its size: most of a request-sized set's
level loop. :func:`narrow_level` does the same level triple by triple, with the same rules
as :func:`toolc.walk.index.walk`'s numpy level (settled subtrees, children listed or looked
up), and gives up (None) whenever the level needs the region bookkeeping: a group triple
leaving its region or meeting another in the same representative state at one node (they
join), a plain triple entering a region. The runs
it emits are the numpy level's (they are sorted and merged afterwards either way).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

NARROW = 48         # frontiers of at most this many triples go through narrow_level


@dataclass
class Walking:
    """What a level needs of the walk in progress (built once per walk)."""

    n: int
    nc: int
    ntc: int
    maxd: int
    trans: np.ndarray
    dcls: list
    trie: object
    wide: np.ndarray
    loops: np.ndarray
    charloops: np.ndarray
    can: np.ndarray
    rid: np.ndarray
    edges: object           # the trie classes each state has an edge on (edges.Edges)
    keys: list
    _states: dict = field(default_factory=dict)
    fill: object = None     # charloops' rows filled on first use (index._LazyCharLoops)

    def state(self, q: int) -> tuple:
        """``q``'s loop classes and loop characters as Python ints (None, None: not wide),
        and the trie classes it has an edge on."""
        got = self._states.get(q)
        if got is None:
            if self.fill and self.wide[q]:
                self.fill(np.array([q]))
            e = self.edges       # its row filled by narrow_level
            got = self._states[q] = (
                (_bits(self.loops[q]), _bits(self.charloops[q])) if self.wide[q]
                else (None, None)) + (e.cls[e.ptr[q]:e.ptr[q] + e.cnt[q]].tolist(),)
        return got


def _char_bits(trie, lo, hi) -> int:
    """The characters listed at ``trie.charids[lo:hi]`` as one Python int (bit i: character i)."""
    bits = 0
    for c in trie.charids[int(lo):int(hi)].tolist():
        bits |= 1 << c
    return bits


def _bits(words: np.ndarray) -> int:
    """A row of uint64 bit words as one Python int (bit i of the row is bit i)."""
    return int.from_bytes(words.astype("<u8", copy=False).tobytes(), "little")


def narrow_level(d: int, own: np.ndarray, node: np.ndarray, cur: np.ndarray, w: Walking):
    """Level ``d`` (from 1) for the triples ``(own, node, cur)``: ``(runs, own, node, cur)``,
    the runs as four arrays (origin, lo, hi, target) and the next level's triples; or None
    when the numpy level must do it."""
    n, trans, cls_d, rid, can = w.n, w.trans, w.dcls[d - 1], w.rid, w.can
    stepped = []
    group_nodes = set()
    for o, nd, q in zip(own.tolist(), node.tolist(), cur.tolist()):
        nx = int(trans[q * w.nc + int(cls_d[nd])])
        if nx < 0:
            continue
        if o >= n:
            at = (nd, int(can[nx]))
            if rid[nx] != rid[q] or at in group_nodes:
                return None         # a group leaving its region, or two that join here
            group_nodes.add(at)
        elif can[nx] >= 0:
            return None             # a plain triple entering a region joins a group
        stepped.append((o, nd, nx))
    if stepped:
        w.edges.fill(np.array([q for _, _, q in stepped], dtype=np.int64))
    t = w.trie
    lo_d, eh_d, hi_d = t.lo[d - 1], t.end_hi[d - 1], t.hi[d - 1]
    sub_d, cg_d = t.submask[d - 1], t.chargood[d - 1]
    clo_d, chi_d = t.charlo[d - 1], t.charhi[d - 1]
    runs = []
    listed, looked = [], []
    last = d == w.maxd
    for o, nd, q in stepped:
        lo, eh, hi = int(lo_d[nd]), int(eh_d[nd]), int(hi_d[nd])
        if eh > lo:
            runs.append((o, lo, eh, q))      # tokens ending at this node
        if hi <= eh:
            continue
        st = w.state(q)
        if st[0] is not None and (not _bits(sub_d[nd]) & ~st[0]
                                  or (cg_d[nd] and not _char_bits(t, clo_d[nd], chi_d[nd])
                                      & ~st[1])):
            runs.append((o, eh, hi, q))      # every class below loops on q: settled
            continue
        if last:
            continue
        cs, ce = int(t.child_start[d - 1][nd]), int(t.child_end[d - 1][nd])
        if len(st[2]) < ce - cs:
            kd = w.keys[d]
            for c in st[2]:
                key = nd * w.ntc + c
                pos = int(kd.searchsorted(key))
                if pos < len(kd) and kd[pos] == key:
                    looked.append((o, pos, q))
        else:
            listed.extend((o, ch, q) for ch in range(cs, ce))
    nxt = listed + looked
    r = np.array(runs, dtype=np.int64).reshape(-1, 4)
    f = np.array(nxt, dtype=np.int64).reshape(-1, 3)
    return ((r[:, 0], r[:, 1].astype(lo_d.dtype), r[:, 2].astype(lo_d.dtype), r[:, 3]),
            f[:, 0], f[:, 1], f[:, 2])
