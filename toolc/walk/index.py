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
* **Region sharing.** Isomorphic regions (every string interior with its escape and UTF-8
  states, see :mod:`toolc.walk.regions`) are walked once, as their representative. A *group*
  triple stands for several origins at once, each in its own instance of the region: it walks
  the representative's states, and its runs are renamed into each member's instance at the
  end. When the representative's path leaves the region (a closing quote), each member goes
  on alone from its own exit; when paths from several origins meet in a region at the same
  trie node (a key's ``": "`` then string content, free text after any of its partial
  ``<tool_call>`` states), they join one group.
* **Near twins.** A state whose byte-class row differs from its fallback state's in a few
  classes (a partial tag: free text after ``<tool``, a closed string after ``</to``) walks
  only the tokens starting with those classes and copies the rest of its runs from the
  fallback state (:mod:`toolc.walk.twins`).

Special symbols (``<tool_call>``, EOS) are added from the DFA's symbol columns: added tokens
are never walked by their spelling. ``toolc._reference.walk`` holds a plain twin used by tests.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np

from .. import budget
from ..fsm import ByteDFA
from ..runtime.arrays import expand_runs, ranges
from .runs import _assemble_runs, _cat, _Groups, _join
from .edges import Edges
from .narrow import NARROW, Walking, narrow_level
from .regions import _empty as no_regions, find_regions
from .twins import copy_twins, fill_twins, find_twins, twin_stretches
from ..tokenizer import Vocabulary
from .trie import (NUM_STANDARD_CLASSES, STANDARD_CLASSES, partition_trie, refines,
                   standard_trie)


#: a walk from origins with at most this many wide states finds no regions
FEW_WIDE = 32


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
    # a *sparse* index (``walk(..., sparse_twins=True)``) keeps a near twin's runs only where
    # its row differs from its twin's (``twin_of[q]``): the stretches ``twin_a:twin_b`` of
    # twin ``twin_q`` (sorted) are its own where ``twin_own``, else its twin's. Only the
    # encoder reads a sparse index; :meth:`full` copies the twins' runs in.
    twin_of: np.ndarray | None = None
    twin_q: np.ndarray | None = None
    twin_a: np.ndarray | None = None
    twin_b: np.ndarray | None = None
    twin_own: np.ndarray | None = None

    def full(self, max_runs: int | None = None, near: np.ndarray | None = None) -> "TokenIndex":
        """This index with every twin's runs copied in (itself when it is not sparse); more
        than ``max_runs`` runs raise BudgetExceededError, as the walk does.

        With ``near`` (bool per state), only the twins in ``near`` or whose twin is in it are
        filled in; the others stay sparse (their twins, outside ``near``, keep every run)."""
        if self.twin_of is None:
            return self
        n = self.num_states
        twin_of = self.twin_of
        fill = twin_of >= 0
        if near is not None:
            fill &= near | near[np.maximum(twin_of, 0)]
            if not fill.any():
                return self
        keep = fill[self.twin_q]        # the stretches of the twins filled in
        o = np.repeat(np.arange(n, dtype=np.int64), np.diff(self.run_ptr))
        o, lo, hi, tg = fill_twins(o, self.run_lo, self.run_hi, self.run_target, n,
                                   np.where(fill, twin_of, -1), self.twin_q[keep],
                                   self.twin_a[keep], self.twin_b[keep], self.twin_own[keep],
                                   len(self.order).bit_length(), max_runs)
        rest = twin_of >= 0
        rest &= ~fill
        sparse = {"twin_of": None, "twin_q": None, "twin_a": None, "twin_b": None,
                  "twin_own": None}
        if rest.any():
            sparse = {"twin_of": np.where(rest, twin_of, -1).astype(twin_of.dtype),
                      "twin_q": self.twin_q[~keep], "twin_a": self.twin_a[~keep],
                      "twin_b": self.twin_b[~keep], "twin_own": self.twin_own[~keep]}
        return replace(self, run_ptr=np.searchsorted(o, np.arange(n + 1)).astype(np.int64),
                       run_lo=lo, run_hi=hi, run_target=tg, **sparse)

    def num_allowed(self, q: int) -> int:
        r0, r1 = self.run_ptr[q], self.run_ptr[q + 1]
        return int((self.run_hi[r0:r1] - self.run_lo[r0:r1]).sum()) + \
            int(self.sp_ptr[q + 1] - self.sp_ptr[q])

    def transitions(self, q: int) -> tuple[np.ndarray, np.ndarray]:
        """(tokens, next states) of state ``q``, sorted by token."""
        r0, r1 = self.run_ptr[q], self.run_ptr[q + 1]
        lo, hi = self.run_lo[r0:r1], self.run_hi[r0:r1]
        rep, pos = expand_runs(lo, hi)
        s0, s1 = self.sp_ptr[q], self.sp_ptr[q + 1]
        toks = np.concatenate([self.order[pos], self.sp_tokens[s0:s1]])
        tg = np.concatenate([self.run_target[r0:r1][rep], self.sp_targets[s0:s1]])
        k = np.argsort(toks, kind="stable")
        return toks[k].astype(np.int64), tg[k].astype(np.int64)

    def allowed(self, q: int) -> np.ndarray:
        return self.transitions(q)[0]


def _loop_masks(trans: np.ndarray, to_dfa: np.ndarray):
    """The trie classes on which each state loops to itself, as uint64[states, words] bit rows,
    and the states that loop at all (``trans`` is the int[states, byte classes] table)."""
    n = trans.shape[0]
    loop = trans == np.arange(n, dtype=trans.dtype)[:, None]
    wide = np.flatnonzero(loop.any(axis=1))
    words = (len(to_dfa) + 63) // 64
    out = np.zeros((n, words), dtype=np.uint64)
    out[wide] = _bits_to_words(loop[wide][:, to_dfa], words)
    return out, wide


def _bits_to_words(flags: np.ndarray, words: int) -> np.ndarray:
    """bool[rows, k] -> uint64[rows, words], bit i of the row set where flags[:, i]."""
    rows, k = flags.shape
    padded = np.zeros((rows, words * 64), dtype=bool)
    padded[:, :k] = flags
    return np.packbits(padded, axis=1, bitorder="little").view("<u8").reshape(rows, words)


def _char_loops(trans: np.ndarray, to_dfa: np.ndarray, chars: np.ndarray,
                states: np.ndarray) -> np.ndarray:
    """uint64[states, words]: the characters (class sequences) on which each of ``states``
    loops; every other state's row is zero."""
    out = np.zeros((trans.shape[0], max((len(chars) + 63) // 64, 1)), dtype=np.uint64)
    if len(chars) and len(states):
        out[states] = _char_loop_rows(trans, to_dfa, chars, states, out.shape[1])
    return out


def _char_loop_rows(trans, to_dfa, chars, states, words: int) -> np.ndarray:
    k = len(chars)
    cur = np.repeat(states[:, None], k, axis=1)
    for j in range(4):
        c = chars[:, j]
        step = (c >= 0)[None, :] & (cur >= 0)
        nxt = trans[np.maximum(cur, 0), to_dfa[np.maximum(c, 0)][None, :]]
        cur = np.where(step, nxt, cur)
    return _bits_to_words(cur == states[:, None], words)


class _LazyCharLoops:
    """:func:`_char_loops`' rows, each computed when a walk first reaches its state (a walk
    from a few origins, the framing's, reaches few of the wide states)."""

    def __init__(self, trans, to_dfa, chars, wide: np.ndarray):
        self.args = (trans, to_dfa, chars)
        self.rows = np.zeros((trans.shape[0], max((len(chars) + 63) // 64, 1)), np.uint64)
        self.todo = wide.copy()

    def fill(self, states: np.ndarray) -> None:
        new = states[self.todo[states]]
        if len(new) and len(self.args[2]):
            new = np.unique(new)
            self.rows[new] = _char_loop_rows(*self.args, new, self.rows.shape[1])
            self.todo[new] = False


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


def special_entries(dfa: ByteDFA, symbols: dict[str, tuple[int, ...]]):
    """The special tokens' transitions, from the DFA's symbol columns (never walked by their
    spelling): only the token(s) the format maps each symbol to. (sp_ptr, tokens, targets),
    sorted by state, then token."""
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
    ss, st, sg = _cat(s_states), _cat(s_tokens), _cat(s_targets)
    k = np.lexsort((st, ss))
    ss, st, sg = ss[k], st[k], sg[k]
    return np.searchsorted(ss, np.arange(dfa.num_states + 1)).astype(np.int64), st, sg


def walk(dfa: ByteDFA, vocab: Vocabulary, symbols: dict[str, tuple[int, ...]],
         progress=None, stats: dict | None = None, max_runs: int | None = None,
         twins: bool = True, sparse_twins: bool = False,
         origins: np.ndarray | None = None) -> TokenIndex:
    """The token-level transitions of every state (see the module docstring). ``stats``, if
    given, receives figures about the walk: triples per trie level, regions, CPU seconds.
    More than ``max_runs`` runs, or triples at one trie level, raise BudgetExceededError
    (:func:`toolc.budget.check_walk`) before they take the memory. ``twins=False`` walks
    near twins in full (:mod:`toolc.walk.twins`; the tests compare both ways);
    ``sparse_twins=True`` returns a sparse index (:class:`TokenIndex`), the twins' runs not
    copied. ``origins`` (bool per state): only these states' tokens are walked (the others
    get no runs; their states are still read on the way)."""
    clock = [time.process_time()]
    nc = dfa.alphabet.num_byte_classes
    table = np.ascontiguousarray(dfa.trans[:, :nc])
    trans = table.reshape(-1)       # int32 states; indexed by cur * nc + class, in int64
    byte_class = dfa.alphabet.byte_class.astype(np.int64)
    if refines(STANDARD_CLASSES, byte_class):
        trie = standard_trie(vocab)
        to_dfa = np.zeros(NUM_STANDARD_CLASSES, dtype=np.int64)
        to_dfa[STANDARD_CLASSES] = byte_class
    else:   # a grammar that splits bytes finer (e.g. a pattern's ranges): a trie of its own
        trie = partition_trie(vocab, byte_class, nc)
        to_dfa = np.arange(nc, dtype=np.int64)
    dcls = [to_dfa[c] for c in trie.cls]
    n = dfa.num_states
    loops, wide_states = _loop_masks(table, to_dfa)
    wide = np.zeros(n, dtype=bool)
    wide[wide_states] = True
    few = origins is not None and int(origins[wide_states].sum()) <= FEW_WIDE
    lazy = _LazyCharLoops(table, to_dfa, trie.chars, wide) if few else None
    charloops = lazy.rows if few else _char_loops(table, to_dfa, trie.chars, wide_states)
    # the trie classes each state has an edge on (CSR): a narrow state's triples are expanded
    # by looking up those classes among a node's children instead of listing every child
    ntc = len(to_dfa)
    edges = Edges(table, to_dfa, lazy=few)
    keys = _child_keys(trie, ntc)
    # isomorphic regions (string interiors and the like): a path inside an instance is walked
    # once, as its representative, for every origin whose path is there (see _Groups)
    # (origins with few wide states, the framing's after a trigger: regions would share
    # little, and finding them costs more than that walk)
    reg = no_regions(n) if few else find_regions(table, loops, charloops, wide)
    can, rbase, rloc, rid, phi = reg.can, reg.base, reg.loc, reg.rid, reg.phi
    groups = _Groups()
    # near twins: states that copy another state's runs but for a few first classes
    twin_of, differs = find_twins(table, dcls[0], trie.hi[0] - trie.lo[0]) if twins else \
        (np.full(n, -1, dtype=np.int64), np.zeros((n, nc), dtype=bool))
    is_twin = twin_of >= 0
    if stats is not None:
        stats["regions"], stats["instances"] = reg.num_regions, reg.num_instances
        stats["twins"] = int(is_twin.sum())

    # A triple is (own, node, cur). A plain one: ``own`` is the origin state, ``cur`` the state
    # reached. A group triple: ``own`` is n + a group, ``cur`` a representative state, and
    # every member origin has reached that state's image in its own instance.
    # Roots: a plain triple per state outside regions, a group per representative state.
    # Twins are plain roots, whatever their region, and walk only their differing classes.
    roots = np.ones(n, dtype=bool) if origins is None else origins
    r_own = np.flatnonzero(((can < 0) | is_twin) & roots)
    r_cur = r_own
    in_reg = np.flatnonzero((can >= 0) & ~is_twin & roots)
    if len(in_reg):
        rep_states, member_of = np.unique(can[in_reg], return_inverse=True)
        first = groups.add(member_of.reshape(-1), in_reg, rbase[in_reg])
        r_own = np.concatenate([r_own, n + first + np.arange(len(rep_states))])
        r_cur = np.concatenate([r_cur, rep_states])
    # depth 1: the children of the root each root triple's state has an edge on
    k = trie.root_child_end
    root_node = np.full(ntc, -1, dtype=np.int64)
    root_node[trie.cls[0][:k]] = np.arange(k)
    edges.fill(r_cur)
    cnt = edges.cnt[r_cur]
    rep = np.repeat(np.arange(len(r_cur)), cnt)
    node = root_node[edges.cls[ranges(edges.ptr[r_cur], cnt)]]
    keep = node >= 0
    rep, node = rep[keep], node[keep]
    own, cur = r_own[rep].astype(np.int64), r_cur[rep].astype(np.int64)
    keep = ~is_twin[np.minimum(own, n - 1)] | (own >= n)
    keep[~keep] = differs[own[~keep], dcls[0][node[~keep]]]
    own, node, cur = own[keep], node[keep], cur[keep]
    out_o, out_lo, out_hi, out_t = [], [], [], []   # runs: own -> target
    emitted = 0
    maxd = len(trie.lo)
    ctx = Walking(n, nc, ntc, maxd, trans, dcls, trie, wide, loops, charloops, can, rid, edges,
                  keys, fill=lazy and lazy.fill)
    clock.append(time.process_time())
    for d in range(1, maxd + 1):
        budget.check("walking the vocabulary")
        if progress:
            progress(d, maxd)
        if len(node) == 0:
            break
        budget.check_walk(len(node), max_runs, "triples at one trie level")
        if stats is not None:
            stats.setdefault("frontier", []).append(len(node))
        got = narrow_level(d, own, node, cur, ctx) if len(node) <= NARROW else None
        if got is not None:
            runs, own, node, cur = got
            for out, col in zip((out_o, out_lo, out_hi, out_t), runs):
                out.append(col)
            emitted += len(runs[0])
            budget.check_walk(emitted, max_runs)
            continue
        c = dcls[d - 1][node]
        nxt = trans[cur * np.int64(nc) + c]
        x = np.flatnonzero(own >= n)
        if len(x):
            # group triples leaving their region: each member continues from its own exit
            x = x[(nxt[x] >= 0) & (rid[np.maximum(nxt[x], 0)] != rid[cur[x]])]
        if len(x):
            m_o, m_b, m_ptr = groups.arrays()
            g = own[x] - n
            cnt = m_ptr[g + 1] - m_ptr[g]
            rx = np.repeat(x, cnt)
            row = ranges(m_ptr[g], cnt)
            cx = trans[phi[m_b[row] + rloc[cur[rx]]] * nc + c[rx]]
            live = cx >= 0
            nxt[x] = -1
            ok = nxt >= 0
            own = np.concatenate([own[ok], m_o[row[live]]])
            node = np.concatenate([node[ok], node[rx[live]]])
            cur = np.concatenate([nxt[ok], cx[live]])
            if stats is not None:
                stats["exits"] = stats.get("exits", 0) + int(live.sum())
        else:
            ok = nxt >= 0
            own, node, cur = own[ok], node[ok], nxt[ok]
        grp = own >= n
        y = np.flatnonzero(grp | (can[cur] >= 0))
        if len(y):
            # a group triple alone at its node stays as it is
            y = y[~grp[y] | (np.bincount(node[y], minlength=len(trie.lo[d - 1]))[node[y]] > 1)]
        if len(y):
            # triples in a region: one group per (node, representative state), so that
            # origins whose paths meet there walk on together (plain triples entering join)
            keys_y, member_of, size = np.unique(node[y] * n + can[cur[y]], return_inverse=True,
                                                return_counts=True)
            member_of = member_of.reshape(-1)
            fresh = size > 1
            fresh[member_of[~grp[y]]] = True
            if fresh.any():
                sel = fresh[member_of]
                y, member_of = y[sel], (np.cumsum(fresh) - 1)[member_of[sel]]
                own, node, cur = _join(groups, y, member_of, keys_y[fresh] // n,
                                       keys_y[fresh] % n, own, node, cur, rbase, n)
                if stats is not None:
                    stats["joins"] = stats.get("joins", 0) + len(y)
        # tokens ending at this node
        lo, eh = trie.lo[d - 1][node], trie.end_hi[d - 1][node]
        e = eh > lo
        for out, col in ((out_o, own), (out_lo, lo), (out_hi, eh), (out_t, cur)):
            out.append(col[e])
        # settle whole subtrees whose classes all loop on the current state
        settle = np.zeros(len(node), dtype=bool)
        w = np.flatnonzero(wide[cur])
        if len(w):
            nw, cw = node[w], cur[w]
            by_class = np.all((trie.submask[d - 1][nw] & ~loops[cw]) == 0, axis=1)
            if lazy is not None:
                lazy.fill(cw)
            by_char = trie.chargood[d - 1][nw] & trie.chars_loop(d, nw, charloops, cw)
            settle[w] = by_class | by_char
        hi = trie.hi[d - 1][node]
        has_below = hi > eh
        s = settle & has_below
        for out, col in ((out_o, own), (out_lo, eh), (out_hi, hi), (out_t, cur)):
            out.append(col[s])
        emitted += int(e.sum()) + int(s.sum())       # a group's runs count once here
        budget.check_walk(emitted, max_runs)
        go = ~settle & has_below
        own, node, cur = own[go], node[go], cur[go]
        if d == maxd:
            break
        # expand to children: list them all, or look up the classes the state has edges on,
        # whichever is fewer
        cs, ce = trie.child_start[d - 1][node], trie.child_end[d - 1][node]
        cnt = ce - cs
        edges.fill(cur)
        acnt = edges.cnt[cur]
        look = acnt < cnt
        lst = np.flatnonzero(~look)
        cnt_l = cnt[lst]
        rep = np.repeat(lst, cnt_l)
        node_l = ranges(cs[lst], cnt_l)
        lk = np.flatnonzero(look)
        if len(lk):
            cnt_k = acnt[lk]
            rep_k = np.repeat(lk, cnt_k)
            cls = edges.cls[ranges(edges.ptr[cur[lk]], cnt_k)]
            key = node[rep_k] * ntc + cls
            kd = keys[d]
            pos = np.searchsorted(kd, key)
            hit = pos < len(kd)
            hit[hit] = kd[pos[hit]] == key[hit]
            rep = np.concatenate([rep, rep_k[hit]])
            node_l = np.concatenate([node_l, pos[hit]])
        node = node_l
        own, cur = own[rep], cur[rep]

    clock.append(time.process_time())
    o = _cat(out_o)
    o, lo, hi, tg = _assemble_runs(o, _cat(out_lo), _cat(out_hi), _cat(out_t), o >= n, n, groups,
                                   phi, rloc, len(trie.order).bit_length(), stats, max_runs)
    sparse = {}
    if sparse_twins and is_twin.any():
        sparse = dict(zip(("twin_q", "twin_a", "twin_b", "twin_own"), twin_stretches(
            twin_of, differs, trie.lo[0], trie.hi[0], dcls[0])), twin_of=twin_of)
    else:
        o, lo, hi, tg = copy_twins(o, lo, hi, tg, n, twin_of, differs, trie.lo[0],
                                   trie.hi[0], dcls[0], len(trie.order).bit_length(), max_runs)
    run_ptr = np.searchsorted(o, np.arange(n + 1)).astype(np.int64)
    sp_ptr, st, sg = special_entries(dfa, symbols)
    if stats is not None:
        clock.append(time.process_time())
        stats["seconds"] = dict(zip(("setup", "levels", "runs"), np.diff(clock).tolist()))
    return TokenIndex(num_states=n, vocab_size=vocab.vocab_size, logits_size=vocab.logits_size,
                      order=trie.order, run_ptr=run_ptr, run_lo=lo, run_hi=hi, run_target=tg,
                      sp_ptr=sp_ptr, sp_tokens=st, sp_targets=sg,
                      final=dfa.final.copy(), eos_ids=tuple(vocab.eos_ids), **sparse)
