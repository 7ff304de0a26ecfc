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
from .trie import NUM_STANDARD_CLASSES, STANDARD_CLASSES, build_trie, refines, standard_trie


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


def _loop_masks(dfa: ByteDFA, to_dfa: np.ndarray) -> np.ndarray:
    """uint64[states, words]: the trie classes on which each state loops to itself."""
    n, k = dfa.num_states, len(to_dfa)
    loops = dfa.trans[:, to_dfa] == np.arange(n)[:, None]
    return _bits_to_words(loops, (k + 63) // 64)


def _bits_to_words(flags: np.ndarray, words: int) -> np.ndarray:
    """bool[rows, k] -> uint64[rows, words], bit i of the row set where flags[:, i]."""
    rows, k = flags.shape
    padded = np.zeros((rows, words * 64), dtype=bool)
    padded[:, :k] = flags
    return np.packbits(padded, axis=1, bitorder="little").view("<u8").reshape(rows, words)


def _char_loops(dfa: ByteDFA, to_dfa: np.ndarray, chars: np.ndarray,
                states: np.ndarray) -> np.ndarray:
    """uint64[states, words]: the characters (class sequences) on which each of ``states``
    loops; every other state's row is zero."""
    n, nc = dfa.num_states, dfa.alphabet.num_byte_classes
    k = len(chars)
    words = max((k + 63) // 64, 1)
    out = np.zeros((n, words), dtype=np.uint64)
    if k == 0 or len(states) == 0:
        return out
    trans = np.ascontiguousarray(dfa.trans[:, :nc])
    cur = np.repeat(states[:, None], k, axis=1)
    for j in range(4):
        c = chars[:, j]
        step = (c >= 0)[None, :] & (cur >= 0)
        nxt = trans[np.maximum(cur, 0), to_dfa[np.maximum(c, 0)][None, :]]
        cur = np.where(step, nxt, cur)
    out[states] = _bits_to_words(cur == states[:, None], words)
    return out


def _child_keys(trie, ntc: int) -> list:
    """Per depth d (index d, from 1): ``parent * ntc + class`` of the nodes at depth d + 1,
    increasing (children are sorted by parent, then class), for searchsorted lookups."""
    got = getattr(trie, "_child_keys", None)
    if got is not None and got[0] == ntc:
        return got[1]
    keys = [None]
    for d in range(1, len(trie.lo)):
        cs, ce = trie.child_start[d - 1], trie.child_end[d - 1]
        parent = np.repeat(np.arange(len(cs), dtype=np.int64), ce - cs)
        keys.append(parent * ntc + trie.cls[d][:len(parent)].astype(np.int64))
    keys.append(np.zeros(0, dtype=np.int64))
    trie._child_keys = (ntc, keys)
    return keys


def walk(dfa: ByteDFA, vocab: Vocabulary, symbols: dict[str, tuple[int, ...]],
         progress=None, stats: dict | None = None) -> TokenIndex:
    """The token-level transitions of every state (see the module docstring)."""
    nc = dfa.alphabet.num_byte_classes
    trans = np.ascontiguousarray(dfa.trans[:, :nc]).reshape(-1).astype(np.int64)
    byte_class = dfa.alphabet.byte_class.astype(np.int64)
    if refines(STANDARD_CLASSES, byte_class):
        trie = standard_trie(vocab)
        to_dfa = np.zeros(NUM_STANDARD_CLASSES, dtype=np.int64)
        to_dfa[STANDARD_CLASSES] = byte_class
    else:   # a grammar that splits bytes finer (e.g. a pattern's ranges): a trie of its own
        trie = build_trie(vocab, byte_class, nc)
        to_dfa = np.arange(nc, dtype=np.int64)
    dcls = [to_dfa[c] for c in trie.cls]
    loops = _loop_masks(dfa, to_dfa)
    wide = np.any(loops != 0, axis=1)
    charloops = _char_loops(dfa, to_dfa, trie.chars, np.flatnonzero(wide))
    n = dfa.num_states
    out_o, out_lo, out_hi, out_t = [], [], [], []   # runs of sorted tokens: origin -> target
    # the trie classes each state has an edge on (CSR): a narrow state's triples are expanded
    # by looking up those classes among a node's children instead of listing every child
    ntc = len(to_dfa)
    has_edge = dfa.trans[:, to_dfa] >= 0
    a_state, a_cls = np.nonzero(has_edge)
    a_ptr = np.searchsorted(a_state, np.arange(n + 1))
    a_cnt = np.diff(a_ptr)
    keys = _child_keys(trie, ntc)

    # depth 1: the children of the root each state has an edge on
    k = trie.root_child_end
    origin, node = np.nonzero(has_edge[:, trie.cls[0][:k]])
    origin, node = origin.astype(np.int64), node.astype(np.int64)
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
        nxt = trans[cur * nc + dcls[d - 1][node]]
        ok = nxt >= 0
        origin, node, cur = origin[ok], node[ok], nxt[ok]
        # tokens ending at this node
        lo, eh = trie.lo[d - 1][node], trie.end_hi[d - 1][node]
        e = eh > lo
        out_o.append(origin[e]); out_lo.append(lo[e]); out_hi.append(eh[e]); out_t.append(cur[e])
        # settle whole subtrees whose classes all loop on the current state
        settle = np.zeros(len(node), dtype=bool)
        w = np.flatnonzero(wide[cur])
        if len(w):
            nw, cw = node[w], cur[w]
            by_class = np.all((trie.submask[d - 1][nw] & ~loops[cw]) == 0, axis=1)
            by_char = trie.chargood[d - 1][nw] & np.all(
                (trie.charmask[d - 1][nw] & ~charloops[cw]) == 0, axis=1)
            settle[w] = by_class | by_char
        has_below = trie.hi[d - 1][node] > eh
        s = settle & has_below
        out_o.append(origin[s]); out_lo.append(eh[s]); out_hi.append(trie.hi[d - 1][node][s])
        out_t.append(cur[s])
        go = ~settle & has_below
        origin, node, cur = origin[go], node[go], cur[go]
        if d == maxd:
            break
        # expand to children: list them all, or look up the classes the state has edges on,
        # whichever is fewer
        cs, ce = trie.child_start[d - 1][node], trie.child_end[d - 1][node]
        cnt = ce - cs
        acnt = a_cnt[cur]
        look = acnt < cnt
        lst = np.flatnonzero(~look)
        cnt_l = cnt[lst]
        rep = lst[np.repeat(np.arange(len(lst)), cnt_l)]
        node_l = cs[rep] + (np.arange(int(cnt_l.sum()))
                            - np.repeat(np.cumsum(cnt_l) - cnt_l, cnt_l))
        lk = np.flatnonzero(look)
        if len(lk):
            cnt_k = acnt[lk]
            rep_k = lk[np.repeat(np.arange(len(lk)), cnt_k)]
            cls = a_cls[a_ptr[cur[rep_k]] + (np.arange(int(cnt_k.sum()))
                                              - np.repeat(np.cumsum(cnt_k) - cnt_k, cnt_k))]
            key = node[rep_k] * ntc + cls
            kd = keys[d]
            pos = np.searchsorted(kd, key)
            hit = pos < len(kd)
            hit[hit] = kd[pos[hit]] == key[hit]
            rep = np.concatenate([rep, rep_k[hit]])
            node_l = np.concatenate([node_l, pos[hit]])
        node = node_l
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
