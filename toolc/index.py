"""The vocabulary walk: a ByteDFA times a Vocabulary, to per-state token transitions.

For every state ``q`` and token ``t`` the walk finds ``δ*(q, bytes(t))``, for all states at
once, in numpy:

* **A trie of byte-class sequences.** Tokens are sorted by the sequence of the DFA's byte
  classes they spell; a trie node is then a contiguous run of sorted tokens, and tokens with
  the same class sequence behave identically. The trie is walked level by level for all
  (origin state, current state, node) triples at once; a dead triple prunes its subtree.
* **Self-loop factoring.** Each trie node knows the set of classes used anywhere below it. When
  the current state loops on every one of them, every token below ends in the current state:
  the whole run is settled at once. Inside a JSON string or in free text that is nearly the
  whole vocabulary.

Special symbols (``<tool_call>``, EOS) are added from the DFA's symbol columns: added tokens
are never walked by their spelling. ``toolc._slow`` holds a plain twin used by tests.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import budget
from .fsm import ByteDFA
from .tokenizer import Vocabulary


@dataclass(frozen=True)
class TokenIndex:
    """Every allowed (state, token) pair and where it leads.

    Ordinary tokens are kept as runs of the trie order (``order[pos]`` is a token id): state
    ``q``'s runs are ``run_ptr[q]:run_ptr[q+1]``, each mapping the tokens at sorted positions
    ``lo:hi`` to ``target``. Special tokens are listed one by one (``sp_*``), sorted per state.
    """

    num_states: int
    vocab_size: int
    logits_size: int
    order: np.ndarray       # int64[ordinary tokens]: trie position -> token id
    run_ptr: np.ndarray     # int64[num_states + 1]
    run_lo: np.ndarray
    run_hi: np.ndarray
    run_target: np.ndarray
    sp_ptr: np.ndarray      # int64[num_states + 1]
    sp_tokens: np.ndarray
    sp_targets: np.ndarray
    final: np.ndarray       # bool[num_states]: the language is complete (EOS consumed)
    eos_ids: tuple

    def num_allowed(self, q: int) -> int:
        r0, r1 = self.run_ptr[q], self.run_ptr[q + 1]
        return int((self.run_hi[r0:r1] - self.run_lo[r0:r1]).sum()) + \
            int(self.sp_ptr[q + 1] - self.sp_ptr[q])

    def transitions(self, q: int) -> tuple[np.ndarray, np.ndarray]:
        """(tokens, next states) of state ``q``, sorted by token."""
        r0, r1 = self.run_ptr[q], self.run_ptr[q + 1]
        lo, hi = self.run_lo[r0:r1], self.run_hi[r0:r1]
        cnt = hi - lo
        rep = np.repeat(np.arange(len(lo)), cnt)
        pos = lo[rep] + (np.arange(int(cnt.sum())) - np.repeat(np.cumsum(cnt) - cnt, cnt))
        s0, s1 = self.sp_ptr[q], self.sp_ptr[q + 1]
        toks = np.concatenate([self.order[pos], self.sp_tokens[s0:s1]])
        tg = np.concatenate([self.run_target[r0:r1][rep], self.sp_targets[s0:s1]])
        k = np.argsort(toks, kind="stable")
        return toks[k].astype(np.int64), tg[k].astype(np.int64)

    def allowed(self, q: int) -> np.ndarray:
        return self.transitions(q)[0]


@dataclass
class _Trie:
    order: np.ndarray           # sorted position -> token id
    # per level d (1-based: index d-1): the nodes at depth d
    lo: list                    # first sorted position of the node's run
    hi: list                    # one past the last
    end_hi: list                # tokens ending exactly here are lo:end_hi
    cls: list                   # class of the edge into the node
    child_start: list           # per node at depth d: its children's index range at depth d+1
    child_end: list
    submask: list               # uint64[nodes, words]: classes used strictly below the node
    root_child_end: int


def build_trie(vocab: Vocabulary, byte_class: np.ndarray, num_classes: int) -> _Trie:
    ids, lens, flat = vocab.ordinary_bytes()
    maxlen = int(lens.max()) if len(lens) else 0
    if num_classes > 255:  # pragma: no cover - at most 256 byte classes, and 0 is padding
        raise ValueError("too many byte classes")
    # class + 1 per byte, 0 as padding: rows compare as byte strings in trie order
    mat = np.zeros((len(ids), max(maxlen, 1)), dtype=np.uint8)
    rows = np.repeat(np.arange(len(ids)), lens)
    cols = np.arange(len(flat)) - np.repeat(np.cumsum(lens) - lens, lens)
    mat[rows, cols] = byte_class[flat] + 1
    order = np.argsort(mat.view(f"S{mat.shape[1]}").ravel(), kind="stable")
    del mat
    cls_flat = byte_class[flat].astype(np.int64)
    start = (np.cumsum(lens) - lens)[order]
    lens = lens[order]
    words = (num_classes + 63) // 64
    t = _Trie(order=ids[order], lo=[], hi=[], end_hi=[], cls=[], child_start=[], child_end=[],
              submask=[], root_child_end=0)
    # the sorted tokens still long enough at this depth, and their parent nodes
    act = np.arange(len(ids))
    p_act = np.zeros(len(ids), dtype=np.int64)
    for d in range(1, maxlen + 1):
        keep = lens[act] >= d
        act, p = act[keep], p_act[keep]
        c = cls_flat[start[act] + (d - 1)]
        new = np.ones(len(act), dtype=bool)
        new[1:] = (p[1:] != p[:-1]) | (c[1:] != c[:-1])
        starts = np.flatnonzero(new)
        node_of = np.cumsum(new) - 1
        lo = act[starts]
        hi = np.append(act[starts[1:] - 1] + 1, act[-1] + 1) if len(act) else lo
        ends_here = (lens[act] == d)
        end_count = np.add.reduceat(ends_here.astype(np.int64), starts) if len(starts) else lo
        t.lo.append(lo)
        t.hi.append(hi)
        t.end_hi.append(lo + end_count)
        t.cls.append(c[starts])
        # children ranges for the previous depth's nodes
        pp = p[starts]
        n_prev = 1 if d == 1 else len(t.lo[d - 2])
        cs = np.searchsorted(pp, np.arange(n_prev), side="left")
        ce = np.searchsorted(pp, np.arange(n_prev), side="right")
        if d == 1:
            t.root_child_end = int(ce[0])
        else:
            t.child_start.append(cs)
            t.child_end.append(ce)
        p_act = node_of
    if maxlen:
        n_last = len(t.lo[-1])
        t.child_start.append(np.zeros(n_last, dtype=np.int64))
        t.child_end.append(np.zeros(n_last, dtype=np.int64))
    # classes used strictly below each node, bottom-up
    below = None
    for d in range(maxlen, 0, -1):
        n = len(t.lo[d - 1])
        m = np.zeros((n, words), dtype=np.uint64)
        if below is not None:
            cls_child = t.cls[d]
            edge = np.zeros((len(cls_child), words), dtype=np.uint64)
            edge[np.arange(len(cls_child)), cls_child // 64] = \
                np.left_shift(np.uint64(1), (cls_child % 64).astype(np.uint64))
            own = edge | below
            has = t.child_end[d - 1] > t.child_start[d - 1]
            if has.any():
                m[has] = np.bitwise_or.reduceat(own, t.child_start[d - 1][has], axis=0)
        t.submask.insert(0, m)
        below = m
    return t


def _loop_masks(dfa: ByteDFA) -> np.ndarray:
    """uint64[states, words]: the byte classes on which each state loops to itself."""
    n, nc = dfa.num_states, dfa.alphabet.num_byte_classes
    words = (nc + 63) // 64
    loops = dfa.trans[:, :nc] == np.arange(n)[:, None]
    out = np.zeros((n, words), dtype=np.uint64)
    for c in range(nc):
        out[loops[:, c], c // 64] |= np.uint64(1 << (c % 64))
    return out


def walk(dfa: ByteDFA, vocab: Vocabulary, symbols: dict[str, tuple[int, ...]],
         progress=None, stats: dict | None = None) -> TokenIndex:
    """The token-level transitions of every state (see the module docstring)."""
    nc = dfa.alphabet.num_byte_classes
    A = dfa.alphabet.size
    trans = np.ascontiguousarray(dfa.trans[:, :nc]).reshape(-1).astype(np.int64)
    trie = build_trie(vocab, dfa.alphabet.byte_class, nc)
    loops = _loop_masks(dfa)
    n = dfa.num_states
    out_o, out_lo, out_hi, out_t = [], [], [], []   # runs of sorted tokens: origin -> target

    # depth 1: children of the root, for every state
    k = trie.root_child_end
    origin = np.repeat(np.arange(n, dtype=np.int64), k)
    node = np.tile(np.arange(k, dtype=np.int64), n)
    cur = origin.copy()
    maxd = len(trie.lo)
    for d in range(1, maxd + 1):
        budget.check("walking the vocabulary")
        if progress:
            progress(d, maxd)
        if len(node) == 0:
            break
        if stats is not None:
            stats.setdefault("frontier", []).append(len(node))
        nxt = trans[cur * nc + trie.cls[d - 1][node]]
        ok = nxt >= 0
        origin, node, cur = origin[ok], node[ok], nxt[ok]
        # tokens ending at this node
        lo, eh = trie.lo[d - 1][node], trie.end_hi[d - 1][node]
        e = eh > lo
        out_o.append(origin[e]); out_lo.append(lo[e]); out_hi.append(eh[e]); out_t.append(cur[e])
        # settle whole subtrees whose classes all loop on the current state
        sub = trie.submask[d - 1][node]
        settle = np.all((sub & ~loops[cur]) == 0, axis=1)
        has_below = trie.hi[d - 1][node] > eh
        s = settle & has_below
        out_o.append(origin[s]); out_lo.append(eh[s]); out_hi.append(trie.hi[d - 1][node][s])
        out_t.append(cur[s])
        go = ~settle & has_below
        origin, node, cur = origin[go], node[go], cur[go]
        if d == maxd:
            break
        # expand to children
        cs, ce = trie.child_start[d - 1][node], trie.child_end[d - 1][node]
        cnt = ce - cs
        total = int(cnt.sum())
        rep = np.repeat(np.arange(len(node)), cnt)
        offs = np.arange(total) - np.repeat(np.cumsum(cnt) - cnt, cnt)
        node = cs[rep] + offs
        origin, cur = origin[rep], cur[rep]

    cat = (lambda xs: np.concatenate(xs) if xs else np.zeros(0, np.int64))
    o, lo, hi, tg = cat(out_o), cat(out_lo), cat(out_hi), cat(out_t)
    k = np.argsort(o * (len(trie.order) + 1) + lo)
    o, lo, hi, tg = o[k], lo[k], hi[k], tg[k]
    # merge adjacent runs of one state that lead to the same target
    if len(o):
        new = np.ones(len(o), dtype=bool)
        new[1:] = (o[1:] != o[:-1]) | (tg[1:] != tg[:-1]) | (lo[1:] != hi[:-1])
        starts = np.flatnonzero(new)
        ends = np.append(starts[1:], len(o)) - 1
        o, lo, hi, tg = o[starts], lo[starts], hi[ends], tg[starts]
    run_ptr = np.searchsorted(o, np.arange(n + 1)).astype(np.int64)
    # special symbols: only the token(s) the format maps each symbol to
    s_states, s_tokens, s_targets = [], [], []
    for name, tids in symbols.items():
        if name not in dfa.alphabet.symbols:
            continue
        col = dfa.trans[:, dfa.alphabet.symbol_index(name)]
        qs = np.flatnonzero(col >= 0)
        for tid in tids:
            s_states.append(qs)
            s_tokens.append(np.full(len(qs), tid, dtype=np.int64))
            s_targets.append(col[qs].astype(np.int64))
    ss, st, sg = cat(s_states), cat(s_tokens), cat(s_targets)
    k = np.lexsort((st, ss))
    ss, st, sg = ss[k], st[k], sg[k]
    sp_ptr = np.searchsorted(ss, np.arange(n + 1)).astype(np.int64)
    return TokenIndex(num_states=n, vocab_size=vocab.vocab_size, logits_size=vocab.logits_size,
                      order=trie.order, run_ptr=run_ptr, run_lo=lo, run_hi=hi, run_target=tg,
                      sp_ptr=sp_ptr, sp_tokens=st, sp_targets=sg,
                      final=dfa.final.copy(), eos_ids=tuple(vocab.eos_ids))
