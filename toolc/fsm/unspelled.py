"""Keep tags from being spelled in ordinary bytes between two symbols, on a built DFA.

A hermes call runs from the added token ``<tool_call>`` to the added token ``</tool_call>``;
a parser that searches the text for the closing tag cuts the call wherever its bytes appear
inside, in a JSON string say. :func:`unspelled_within` intersects a minimized
:class:`~toolc.fsm.dfa.ByteDFA` with "between ``open`` and ``close``, no tag spelled in
bytes": the product with a small matcher of the tags (Aho-Corasick: the states are the tags'
prefixes, a completed tag is dead) that runs only inside, reset by any symbol. Outside (free
text, reasoning) the DFA is left as it is.

Built on the DFA, not on the grammar: intersecting the grammar's string bodies makes every
string a small graph that the subset construction then expands (tools80: +0.17 s of CPU,
against a few hundredths here). The product is exact (it is an intersection), then
minimized and numbered canonically like any DFA. Only the states a path can reach are
made: a partial tag exists only after the bytes that spell it.

Counted regions (tagged states) are left alone: the format closes the string bodies of a
tool that holds one in its grammar (a counter needs its region's states as they are), and the
product carries each state's tag over.
"""

from __future__ import annotations

import functools

import numpy as np

from .alphabet import Alphabet
from .dfa import ByteDFA
from .minimize import reduce_table
from .. import budget
from ..errors import BudgetExceededError


@functools.lru_cache(maxsize=32)
def tag_matcher(tags: tuple[bytes, ...]) -> tuple[np.ndarray, int]:
    """(int32[m, 256], m): the next state of each state of a minimal matcher of the tags on
    each byte (-1 once a tag is complete). Its states are the tags' prefixes (the longest
    one the text ends with), with equivalent ones merged: after ``<tool`` and after
    ``</tool`` the same bytes complete a tag. Kept per tags (read-only): the refinement's
    row sorts cost some 18 ms, and a format's tags are the same for every request."""
    prefixes = sorted({t[:i] for t in tags for i in range(len(t))}, key=lambda p: (len(p), p))
    index = {p: i for i, p in enumerate(prefixes)}
    table = np.zeros((len(prefixes), 256), dtype=np.int32)
    for p, i in index.items():
        for b in set(c for t in tags for c in t):
            text = p + bytes((b,))
            if any(text.endswith(t) for t in tags):
                table[i, b] = -1
                continue
            for k in range(len(text)):
                if text[k:] in index:
                    table[i, b] = index[text[k:]]
                    break
    # Moore's refinement (a few dozen states): equal rows of blocks, until stable
    block = np.zeros(len(prefixes), dtype=np.int64)
    while True:
        rows = np.where(table >= 0, block[np.maximum(table, 0)], -1)
        _, first, new = np.unique(np.column_stack([block, rows]), axis=0, return_index=True,
                                  return_inverse=True)
        rank = np.empty(len(first), dtype=np.int64)
        rank[np.argsort(first, kind="stable")] = np.arange(len(first))
        new = rank[new.reshape(-1)]
        if len(first) == int(block.max()) + 1 and np.array_equal(new, block):
            break
        block = new
    m = int(block.max()) + 1
    reps = np.zeros(m, dtype=np.int64)
    reps[block[::-1]] = np.arange(len(block))[::-1]
    out = np.where(table[reps] >= 0, block[np.maximum(table[reps], 0)], -1).astype(np.int32)
    out.flags.writeable = False
    return out, m


def unspelled_within(dfa: ByteDFA, tags: tuple[bytes, ...], open_sym: str, close_sym: str,
                     max_states: int | None = None) -> ByteDFA:
    """``dfa`` where no tag is spelled in bytes after symbol ``open_sym`` before the next
    ``close_sym`` (see the module docstring)."""
    a = dfa.alphabet
    nc = a.num_byte_classes
    kt, m = tag_matcher(tags)
    off = m                                         # the matcher's state outside calls
    # the product's byte classes: (the DFA's class, the matcher's column) per byte
    tag_bytes = np.zeros(256, dtype=bool)
    tag_bytes[[c for t in tags for c in t]] = True
    kcol = np.where(tag_bytes, np.arange(256), -1)
    sig = a.byte_class.astype(np.int64) * 257 + (kcol + 1)
    _, first, inv = np.unique(sig, return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    byte_class = rank[inv.reshape(-1)].astype(np.int32)
    new_nc = len(first)
    rep = np.zeros(new_nc, dtype=np.int64)
    rep[byte_class[::-1]] = np.arange(256)[::-1]    # the first byte of each new class
    old_class = a.byte_class[rep].astype(np.int64)
    alphabet = Alphabet(byte_class, new_nc, a.symbols)
    size = alphabet.size
    # the matcher over the new classes, 'off' staying off; symbols reset it (open: to 0)
    kx = np.full((m + 1, size), off, dtype=np.int64)
    kx[:m, :new_nc] = np.where(tag_bytes[rep][None, :], kt[:, rep], 0)
    syms = list(a.symbols)
    kx[:m, new_nc:] = 0
    if close_sym in syms:
        kx[:, new_nc + syms.index(close_sym)] = off
    if open_sym in syms:
        kx[:, new_nc + syms.index(open_sym)] = 0
    old_col = np.concatenate([old_class, nc + np.arange(len(syms))])
    width = m + 1
    # the DFA's table over the product's columns, its targets as pairs (state, matcher 0)
    tw = dfa.trans[:, old_col].astype(np.int64)
    tw[tw >= 0] *= width
    # counted regions: their strings are closed in the grammar (the format's job, exact), so
    # inside them the matcher is not run: a pair entering a tagged state takes matcher state
    # 0. The language is the same either way (the grammar's states already know the partial
    # tag, and the minimization would merge the pairs again); this only makes fewer pairs
    tagged = None if dfa.tags is None else np.append(dfa.tags >= 0, False)
    # breadth-first over the reachable (state, matcher state) pairs; their numbers before
    # the minimization need no order (it numbers its result canonically from the start, 0)
    ids = np.full(dfa.num_states * width, -1, dtype=np.int64)
    start = 0 * width + off
    ids[start] = 0
    frontier = np.array([start], dtype=np.int64)
    found = [frontier]
    count = 1
    src_l, col_l, dst_l = [], [], []
    while len(frontier):
        budget.check("keeping tags out of the calls")
        s, k = np.divmod(frontier, width)
        t = tw[s]                                   # frontier x product columns
        kk = kx[k]
        r, c = np.nonzero((t >= 0) & (kk >= 0))
        dst = t[r, c]
        dst = dst + (kk[r, c] if tagged is None else
                     np.where(tagged[dst // width], 0, kk[r, c]))
        src_l.append(frontier[r])
        col_l.append(c)
        dst_l.append(dst)
        new = dst[ids[dst] < 0]
        if len(new):        # one of each: the pair whose number stayed (no sort)
            slot = count + np.arange(len(new))
            ids[new] = slot
            new = new[ids[new] == slot]
            ids[new] = count + np.arange(len(new))
        count += len(new)
        if max_states is not None and count > max_states * budget.NFA_FACTOR:
            raise BudgetExceededError(
                f"keeping the tags out of the calls makes over {count:,} states, over the "
                f"budget; raise max_states or simplify the schemas")
        found.append(new)
        frontier = new
    order = np.concatenate(found)
    src, col, dst = (np.concatenate(x) for x in (src_l, col_l, dst_l))
    trans = np.full((count, size), -1, dtype=np.int32)
    trans[ids[src], col] = ids[dst]
    final = dfa.final[order // width]
    tags = None
    if dfa.tags is None:
        trans, final = reduce_table(trans, final)
    else:
        trans, final, tags = reduce_table(trans, final, dfa.tags[order // width])
    if max_states is not None and trans.shape[0] > max_states:
        raise BudgetExceededError(
            f"the automaton has {trans.shape[0]:,} states, over the budget of {max_states:,}; "
            "raise max_states or simplify the schemas")
    return ByteDFA(alphabet, trans, final, tags, dfa.tag_bounds)
