"""The runs of a stitched DFA's blocks, each block walked once and kept.

A block (:mod:`toolc.stitch`: a tool's arguments through the special token that ends its
call) is closed under bytes, so the runs of its states are a function of the block alone:
what their bytes reach inside it. In the union the block's states are renamed (the union's
minimization merges them with equivalent states of other blocks and numbers them
canonically), and they stay distinct: every word of a block ends at its first closing token,
so two states with different languages inside the block keep different languages after it.
A union state's runs are therefore its block state's runs, targets renamed by the same map,
in the order of the standard trie's positions that both walks descend.

:func:`block_runs` gives those runs for every union state a block covers, in the form the
union's sparse walk holds them (:mod:`toolc.walk.twins`), from each block's runs kept in
memory by the block object (the ToolCache keeps the blocks themselves). A block is never
walked alone (a walk's setup alone costs more than a block's share of the union's walk): the
first union that holds it walks its states as the rest's, and :func:`keep_blocks` keeps
them, renamed into the block's numbering.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict

import numpy as np

from ..runtime.arrays import ranges
from .index import TokenIndex
from .trie import STANDARD_CLASSES, refines
from .twins import clip_segments

#: the kept walks' bytes (sparse: a twin keeps its own stretches only; a block of the
#: bench's catalogue takes about 0.27 MB, its 500 tools some 135 MB)
MAX_BYTES = 256 << 20

_walked: OrderedDict[int, tuple] = OrderedDict()
_lock = threading.Lock()
_stats = {"block_hits": 0, "block_misses": 0, "bytes": 0}


def _kept(block, vocab) -> TokenIndex | None:
    """The block's kept walk (its own numbering), if this block object's runs were kept for
    this vocabulary."""
    with _lock:
        got = _walked.get(id(block))
        if got is not None and got[0]() is block and got[1] == vocab.fingerprint:
            _walked.move_to_end(id(block))
            _stats["block_hits"] += 1
            return got[2]
    return None


def _sweep() -> None:
    """Let go of the walks of blocks no longer alive (a ToolCache let them go)."""
    with _lock:
        for k in [k for k, v in _walked.items() if v[0]() is None]:
            _stats["bytes"] -= _walked.pop(k)[3]


def _keep(block, vocab, index: TokenIndex) -> None:
    size = sum(a.nbytes for a in vars(index).values() if isinstance(a, np.ndarray)) - \
        index.order.nbytes
    with _lock:
        _stats["block_misses"] += 1
        old = _walked.pop(id(block), None)
        if old is not None:
            _stats["bytes"] -= old[3]
        _walked[id(block)] = (weakref.ref(block), vocab.fingerprint, index, size)
        _stats["bytes"] += size
        while _stats["bytes"] > MAX_BYTES and len(_walked) > 1:
            _stats["bytes"] -= _walked.popitem(last=False)[1][3]


def covering(blocks: list, n: int, vocab) -> tuple | None:
    """(covered, mine, new): bool[n], the union states a block with a kept walk covers; per
    block (as in ``blocks``: (Block, int64[its states]: their places in the union, -1:
    none)) the block states whose runs it gives and its kept walk (None for a block without
    one; the first block that covers a state gives its runs); and the blocks without one,
    whose runs the union's walk gives (:func:`keep_blocks`). None where a block's bytes are
    not read on the standard trie (the union's walk then reads another trie)."""
    covered = np.zeros(n, dtype=bool)
    mine, new = [], []
    for b, at in blocks:
        index = _kept(b, vocab)     # a kept block's bytes were read on the standard trie
        if index is None:
            if not refines(STANDARD_CLASSES, b.byte_class.astype(np.int64)):
                return None
            mine.append(None)
            new.append((b, at))
            continue
        m = at >= 0
        m[m] = ~covered[at[m]]
        covered[at[m]] = True
        mine.append((m, index))
    return covered, mine, new


def keep_blocks(new: list, index: TokenIndex, twins: dict, vocab) -> None:
    """Keep the runs of blocks first seen in this union, from its whole sparse walk
    ``index`` (``twins``: its twin fields): each block state's runs and twin fields, renamed
    into the block's numbering (a block's states keep distinct images, and their runs'
    targets and twins are images of its states: it is closed under bytes). Whichever twins
    the union chose, the kept form is a sparse walk of the block (:func:`block_runs`)."""
    _sweep()
    n = index.num_states
    t_of = twins.get("twin_of")
    done: set = set()
    inv = np.full(n, -1, dtype=np.int64)
    for b, at in new:
        if id(b) in done:
            continue
        done.add(id(b))
        nb = len(at)
        ok = np.flatnonzero(at >= 0)
        u = at[ok]
        inv[u] = ok
        cnt = index.run_ptr[u + 1] - index.run_ptr[u]
        runs = ranges(index.run_ptr[u], cnt)     # by local state: ok is increasing
        tg = inv[index.run_target[runs]]
        fields: dict | None = {}
        if t_of is not None and (t_of[u] >= 0).any():
            tw = np.full(nb, -1, dtype=np.int64)
            tw[ok] = np.where(t_of[u] >= 0, inv[np.maximum(t_of[u], 0)], -1)
            q = inv[twins["twin_q"]]
            m = q >= 0
            fields = None if ((t_of[u] >= 0) & (tw[ok] < 0)).any() else {
                "twin_of": tw, "twin_q": q[m], "twin_a": twins["twin_a"][m],
                "twin_b": twins["twin_b"][m], "twin_own": twins["twin_own"][m]}
        inv[u] = -1
        if fields is None or (tg < 0).any():
            continue
        ptr = np.zeros(nb + 1, dtype=np.int64)
        ptr[ok + 1] = cnt
        _keep(b, vocab, TokenIndex(
            num_states=nb, vocab_size=index.vocab_size, logits_size=index.logits_size,
            order=index.order, run_ptr=np.cumsum(ptr), run_lo=index.run_lo[runs],
            run_hi=index.run_hi[runs], run_target=tg, sp_ptr=np.zeros(nb + 1, dtype=np.int64),
            sp_tokens=np.zeros(0, np.int64), sp_targets=np.zeros(0, np.int64), final=b.exit,
            eos_ids=index.eos_ids, **fields))


class KeptRuns:
    """The covered states' runs, taken from the blocks' kept walks (:func:`block_runs`).

    :meth:`counts` says how many runs each union state takes from the blocks; ``clip`` holds
    the twins' runs clipped to the union's stretches (state, lo, hi, target; each state's
    runs together, in order), which the caller places with the other parts. :meth:`write`
    puts the blocks' own runs in place, block by block: a union state's runs are its block
    state's, in order, targets renamed (no gather of the runs into one list first, no sort:
    each block's runs lie by its states already)."""

    def __init__(self, pieces: list, clip: tuple):
        self.pieces = pieces
        self.clip = clip

    def counts(self, n: int) -> np.ndarray:
        """int64[n]: the runs each of the union's ``n`` states takes from the blocks."""
        out = np.zeros(n, dtype=np.int64)
        for u, cnt, _, _, _ in self.pieces:
            out[u] = cnt
        return out

    def dtypes(self) -> list:
        """Per column (lo, hi, target): the array type its runs had, listed as the whole
        list's would be (:func:`numpy.concatenate` of the blocks' runs, then ``clip``'s)."""
        out = []
        for j in (1, 2, 3):
            parts = [p[1 + j] for p in self.pieces if len(p[2])] + [self.clip[j]]
            parts = [x for x in parts if len(x)]
            out.append(np.result_type(*parts) if parts else None)
        return out

    def write(self, ptr: np.ndarray, cols: list) -> None:
        """Write the blocks' runs into ``cols`` (lo, hi, target), state ``q``'s from
        ``ptr[q]`` on."""
        for u, cnt, lo, hi, tg in self.pieces:
            at = ranges(ptr[u], cnt)
            cols[0][at] = lo
            cols[1][at] = hi
            cols[2][at] = tg


def block_runs(blocks: list, mine: list, twins: dict, span_bits: int,
               max_runs=None) -> KeptRuns | None:
    """The covered states' runs as the union's sparse walk holds them (``twins``: its twin
    fields), from the blocks' kept walks (:class:`KeptRuns`). A state that is a near twin of
    the same state in both keeps the block's sparse runs (its own stretches are the same:
    they are where the two rows differ, byte for byte); elsewhere its full runs are taken,
    clipped to the union's stretches where it is a twin there. None where a target is not in
    the union (not expected)."""
    u_twin = twins.get("twin_of")
    pieces: list = []
    clip: list[list] = [[], [], [], []]
    for (b, at), got in zip(blocks, mine):
        if got is None:
            continue
        m, index = got
        s = np.flatnonzero(m)
        ut = u_twin[at[s]] if u_twin is not None else np.full(len(s), -1)
        bt = index.twin_of[s] if index.twin_of is not None else np.full(len(s), -1)
        same = np.where(bt >= 0, at[np.maximum(bt, 0)] == ut, ut < 0)
        if same.all():
            own = s
        else:
            own = s[same]
            states = s[~same]
            idx = index.full(max_runs)
            cnt = idx.run_ptr[states + 1] - idx.run_ptr[states]
            runs = ranges(idx.run_ptr[states], cnt)
            tg = at[idx.run_target[runs]]
            if (tg < 0).any():
                return None
            for col, part in zip(clip, (np.repeat(at[states], cnt), idx.run_lo[runs],
                                        idx.run_hi[runs], tg)):
                col.append(part)
        if not len(own):
            continue
        cnt = index.run_ptr[own + 1] - index.run_ptr[own]
        if len(own) == index.num_states:        # every state: the runs as they lie
            lo, hi, tg = index.run_lo, index.run_hi, at[index.run_target]
        else:
            runs = ranges(index.run_ptr[own], cnt)
            lo, hi, tg = index.run_lo[runs], index.run_hi[runs], at[index.run_target[runs]]
        if (tg < 0).any():
            return None
        pieces.append((at[own], cnt, lo, hi, tg))
    runs = tuple(_cat(c) for c in clip)
    if clip[0]:
        runs = sparse_twins(runs, twins, span_bits, max_runs)
    return KeptRuns(pieces, runs)


def _cat(xs: list) -> np.ndarray:
    return np.concatenate(xs) if xs else np.zeros(0, np.int64)


def sparse_twins(runs: tuple, twins: dict, span_bits: int, max_runs=None) -> tuple:
    """Full ``runs`` (state, lo, hi, target; each state's together, in order) with each
    near twin's runs (``twins``: the sparse walk's fields) clipped to the stretches it walks
    itself."""
    o, lo, hi, tg = runs
    twin_of = twins.get("twin_of")
    if twin_of is None or not len(o):
        return runs
    tw = np.zeros(len(twin_of), dtype=bool)
    tw[o] = twin_of[o] >= 0
    if not tw.any():
        return runs
    plain = ~tw[o]
    k = np.flatnonzero(~plain)
    k = k[np.argsort(o[k], kind="stable")]            # the twins' runs by state, in order
    q, a, b, own = twins["twin_q"], twins["twin_a"], twins["twin_b"], twins["twin_own"]
    m = own & tw[q]
    c_o, c_cols, _ = clip_segments(o[k], (lo[k], hi[k], tg[k]), q[m], q[m], a[m], b[m],
                                   span_bits, max_runs)
    return tuple(np.concatenate([x[plain], y]) for x, y in zip(runs, (c_o, *c_cols)))


def stats() -> dict:
    """Blocks walked and found in memory, and the kept walks' bytes."""
    with _lock:
        return {**_stats, "blocks": len(_walked)}


def clear() -> None:
    with _lock:
        _walked.clear()
        _stats["bytes"] = 0
