"""The vocabulary walk in two parts: the free-text head, walked once and kept, and the rest.

A state's token transitions depend only on the states its bytes can reach: special tokens are
never walked by their spelling (their transitions are read off the DFA's symbol columns,
:func:`toolc.walk.index.special_entries`). The *head* of a DFA, the states its start reaches
by bytes alone, is therefore walked on its own. Where the format's trigger is a special token
(Qwen's ``<tool_call>``; Granite's, Qwen3-Coder's), the head is the free text with its guards
(a partial ``<think>``, a partial plain-text tag), the same automaton for every tool set of
one format, option set and vocabulary: some 31 states whose walk costs about 18 ms of a
12-tool set's 50 on Qwen3, paid again by every new tool set until this module kept it.

:func:`walk_parts` walks the head (or takes its walk from memory) and the rest (the DFA with
the head's rows emptied, unless the rest reaches them by bytes) as two DFAs of their own, and
merges the two walks by state. The head's walk is kept by the head's content: its
transitions over the 256 bytes in a canonical local numbering (breadth first from the start,
bytes in order), its final states and the vocabulary; the tool set's byte classes, its state
numbering and the rest of its DFA are not part of the key, so any tool set with the same free
text finds it. Kept only when the walk descends the standard trie (whose token order is the
same for every grammar).

A stitched DFA (:mod:`toolc.stitch`, with a ToolCache) is walked in three parts: the head,
its blocks (each block's walk kept by the block, :mod:`toolc.walk.blockruns`; the union's
minimization says where each block state went), and the rest, which walks only the framing
states after the trigger that no block covers (``walk(..., origins=)``) while reading every
state its tokens run into.

Where the trigger is plain text (Mistral's ``[TOOL_CALLS]`` in a vocabulary without it,
pythonic calls, bare JSON) the head runs on into the calls and holds most of the DFA: when
it holds more than half the states, the DFA is walked whole, as before.

The result is the :class:`~toolc.walk.TokenIndex` that :func:`toolc.walk.walk` gives for the
whole DFA, array for array: a state's runs are a function of what its bytes reach, in the
standard trie's order (``tests/test_assemble.py`` compares both over random tool sets,
formats and options). Every compile takes this path, with or without a
:class:`~toolc.toolcache.ToolCache`, so cached and cold compiles share one code path.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict

import numpy as np

from . import __version__
from .fsm import Alphabet, ByteDFA
from .fsm.minimize import _bfs_numbering
from . import budget
from .walk import TokenIndex, walk
from .walk.blockruns import block_runs, covering, keep_blocks
from .walk.index import special_entries
from .walk.trie import STANDARD_CLASSES, refines

#: heads kept per process (a head's walk on Qwen3: 6,000-17,000 runs, 0.1-0.4 MB; a hit: 0.5 ms)
MAX_HEADS = 32

_heads: OrderedDict[str, tuple] = OrderedDict()
_lock = threading.Lock()
_stats = {"head_hits": 0, "head_misses": 0}


def byte_closure(table: np.ndarray, seeds: np.ndarray) -> np.ndarray:
    """bool[states]: the states reached from ``seeds`` along byte edges (``table`` is the
    int[states, byte classes] part of the transition table; -1: none), ``seeds`` included."""
    seen = np.zeros(table.shape[0], dtype=bool)
    seen[seeds] = True
    frontier = np.asarray(seeds, dtype=np.int64)
    while len(frontier):
        nxt = table[frontier].reshape(-1)
        nxt = np.unique(nxt[nxt >= 0])
        nxt = nxt[~seen[nxt]]
        seen[nxt] = True
        frontier = nxt
    return seen


def _sub_dfa(dfa: ByteDFA, states: np.ndarray) -> ByteDFA:
    """The DFA of ``states`` (closed under bytes), numbered in that order, without symbols."""
    nc = dfa.alphabet.num_byte_classes
    local = np.full(dfa.num_states, -1, dtype=np.int64)
    local[states] = np.arange(len(states))
    t = dfa.trans[states, :nc]
    t = np.where(t >= 0, local[np.maximum(t, 0)], -1).astype(np.int32)
    return ByteDFA(Alphabet(dfa.alphabet.byte_class, nc, ()), t, dfa.final[states].copy())


def _head_order(dfa: ByteDFA, head: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The head's states in canonical local order (breadth first from the start, bytes in
    order), and its byte table (int32[states, 256]) in that numbering."""
    states = np.flatnonzero(head)
    local = np.full(dfa.num_states, -1, dtype=np.int64)
    local[states] = np.arange(len(states))
    t = dfa.trans[states][:, dfa.alphabet.byte_class]
    t = np.where(t >= 0, local[np.maximum(t, 0)], -1)

    def successors(frontier):
        row = t[frontier].reshape(-1)
        return row[row >= 0]

    ids, queue = _bfs_numbering(int(local[0]), len(states), successors)
    t = t[queue]
    return states[queue], np.where(t >= 0, ids[np.maximum(t, 0)], -1).astype(np.int32)


def _head_key(vocab, table256: np.ndarray, final: np.ndarray) -> str:
    h = hashlib.sha256()
    for part in (__version__, vocab.name, vocab.fingerprint, str(vocab.vocab_size),
                 str(vocab.logits_size), str(table256.shape)):
        h.update(part.encode("utf-8") + b"\0")
    h.update(table256.tobytes())
    h.update(final.astype(np.uint8).tobytes())
    return h.hexdigest()


def _runs(index: TokenIndex) -> tuple:
    """(state, lo, hi, target) of every run of ``index``, in the walk's array types."""
    state = np.repeat(np.arange(index.num_states, dtype=np.int64), np.diff(index.run_ptr))
    return state, index.run_lo, index.run_hi, index.run_target


def _dtype(*parts: np.ndarray) -> np.dtype:
    """The array type a whole walk gives for a column made of ``parts`` (the walk's type
    where any run was found; int64, as the walk's, where none was)."""
    found = [a.dtype for a in parts if len(a)]
    return found[0] if found else np.dtype(np.int64)


def _head_walk(dfa: ByteDFA, vocab, head: np.ndarray, max_runs):
    """The head's states in canonical order, and its runs in that numbering (from memory when
    a head of the same content was walked before)."""
    states, table256 = _head_order(dfa, head)
    key = _head_key(vocab, table256, dfa.final[states])
    with _lock:
        got = _heads.get(key)
        if got is not None:
            _heads.move_to_end(key)
            _stats["head_hits"] += 1
            return states, got
    runs = _runs(walk(_sub_dfa(dfa, states), vocab, {}, max_runs=max_runs))
    for a in runs:
        a.flags.writeable = False
    with _lock:
        _stats["head_misses"] += 1
        _heads[key] = runs
        while len(_heads) > MAX_HEADS:
            _heads.popitem(last=False)
    return states, runs


def walk_parts(dfa: ByteDFA, vocab, symbols: dict, progress=None,
               max_runs: int | None = None, sparse_twins: bool = False,
               blocks: list | None = None) -> TokenIndex:
    """:func:`toolc.walk.walk` of ``dfa``, the head's walk kept across tool sets (see the
    module docstring). ``max_runs`` bounds each part's walk. ``sparse_twins``: the rest's
    near twins stay sparse (``walk(..., sparse_twins=True)``; the head is always full).
    ``blocks``: where a stitched DFA's blocks went (:func:`toolc.stitch.stitched_dfa`):
    their states' runs come from each block's walk, kept (:mod:`toolc.walk.blockruns`)."""
    nc = dfa.alphabet.num_byte_classes
    table = dfa.trans[:, :nc]
    head = byte_closure(table, np.array([0]))
    if 2 * int(head.sum()) > dfa.num_states or \
            not refines(STANDARD_CLASSES, dfa.alphabet.byte_class.astype(np.int64)):
        # a plain-text trigger: the head runs on into the calls, nothing to keep apart
        return walk(dfa, vocab, symbols, progress=progress, max_runs=max_runs,
                    sparse_twins=sparse_twins)
    h_states, (h_o, h_lo, h_hi, h_t) = _head_walk(dfa, vocab, head, max_runs)
    # the rest is walked in the DFA's own numbering, the head's rows emptied (no renumbering
    # of a table that may hold thousands of states): but for the head states the rest reaches
    # by bytes (rare), which its walk must pass through
    into = np.append(head, False)[table]
    into[head] = False
    cut = head.copy()
    if into.any():
        cut &= ~byte_closure(table, np.unique(table[into]))
    rest_table = table.copy()
    rest_table[cut] = -1
    rest = ByteDFA(Alphabet(dfa.alphabet.byte_class, nc, ()), rest_table, dfa.final)
    n = dfa.num_states
    # a stitched DFA's blocks: their states' runs from each block's walk, kept; the rest walks
    # only the states no block covers (the framing after the trigger)
    cover = covering(blocks, n, vocab) if blocks else None
    index = twins = got = None
    if cover is not None:
        index = walk(rest, vocab, {}, progress=progress, max_runs=max_runs, sparse_twins=True,
                     origins=~head & ~cover[0])
        twins = _rest_twins(index, head)
        if twins is not None:
            got = block_runs(blocks, cover[1], twins, len(index.order).bit_length(), max_runs)
    if got is None:         # no blocks, or a rest that reads the head: the rest walked whole
        index = walk(rest, vocab, {}, progress=progress, max_runs=max_runs,
                     sparse_twins=sparse_twins)
        twins = _rest_twins(index, head)
        if twins is None:
            index = index.full(max_runs)
    r_o, r_lo, r_hi, r_t = _runs(index)
    if not np.array_equal(cut, head):       # the head states walked as well: not the rest's
        mine = ~head[r_o]
        r_o, r_lo, r_hi, r_t = r_o[mine], r_lo[mine], r_hi[mine], r_t[mine]
    h_o = h_states[h_o]
    parts = [(h_o, h_lo, h_hi, h_states[h_t]), (r_o, r_lo, r_hi, r_t)]
    kinds: list = [[], [], []]     # the blocks' runs, written in place block by block
    if got is not None:
        kinds = [[np.empty(0 if t is None else 1, t)] for t in got.dtypes()]
        parts.append(got.clip)
    counts = sum(np.bincount(p[0], minlength=n) for p in parts)
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts if got is None else counts + got.counts(n), out=ptr[1:])
    budget.check_walk(int(ptr[-1]), max_runs)
    places = [_places(p[0], ptr) for p in parts]
    # each state's runs come from one part, in that part's order, in the array types the
    # whole walk gives; targets renamed from each part's numbering to the DFA's
    cols = []
    for j in (1, 2, 3):
        col = np.empty(int(ptr[-1]), dtype=_dtype(parts[0][j], parts[1][j], *kinds[j - 1]))
        for p, at in zip(parts, places):
            col[at] = p[j]
        cols.append(col)
    if got is not None:
        got.write(ptr, cols)
    sp_ptr, sp_tokens, sp_targets = special_entries(dfa, symbols)
    out = TokenIndex(num_states=n, vocab_size=vocab.vocab_size, logits_size=vocab.logits_size,
                     order=index.order, run_ptr=ptr.astype(index.run_ptr.dtype),
                     run_lo=cols[0], run_hi=cols[1], run_target=cols[2], sp_ptr=sp_ptr,
                     sp_tokens=sp_tokens, sp_targets=sp_targets, final=dfa.final.copy(),
                     eos_ids=tuple(vocab.eos_ids), **(twins or {}))
    if got is not None and cover[2]:
        keep_blocks(cover[2], out, twins, vocab)    # the blocks first seen here
    return out if sparse_twins or got is None else out.full(max_runs)


def _rest_twins(index: TokenIndex, head: np.ndarray) -> dict | None:
    """The rest walk's twin fields for the merged index ({} when it has none), or None when
    they cannot be kept: a rest state copies runs from a head state (whose runs the head's
    walk replaces). Head states the rest reaches by bytes are walked in the rest as well
    (:func:`walk_parts` cuts fewer states than the head: with ``tool_choice="required"``
    the start state, which every call returns to); their runs and stretches here are dropped
    for the head walk's, which are the same rows (the head is closed under bytes)."""
    t_of = index.twin_of
    if t_of is None:
        return {}
    rest_twin = (t_of >= 0) & ~head
    if head[t_of[rest_twin]].any():
        return None
    t_of = t_of.copy()
    t_of[head] = -1           # head states are the head walk's, in full
    keep = ~head[index.twin_q]
    return {"twin_of": t_of, "twin_q": index.twin_q[keep], "twin_a": index.twin_a[keep],
            "twin_b": index.twin_b[keep], "twin_own": index.twin_own[keep]}


def _places(state: np.ndarray, ptr: np.ndarray) -> np.ndarray:
    """Where runs listed grouped by ``state`` (each state's runs together, in order) go in
    the merged arrays whose state ``q`` starts at ``ptr[q]``."""
    if not len(state):
        return state
    new = np.ones(len(state), dtype=bool)
    new[1:] = state[1:] != state[:-1]
    starts = np.flatnonzero(new)
    first = np.repeat(starts, np.diff(np.append(starts, len(state))))
    return ptr[state] + (np.arange(len(state)) - first)


def stats() -> dict:
    """Heads found in memory and walked, and how many are kept."""
    with _lock:
        return {**_stats, "heads": len(_heads)}


def clear() -> None:
    with _lock:
        _heads.clear()
