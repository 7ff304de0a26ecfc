"""Subset construction: an Expr (through its :class:`~toolc.fsm.positions.Positions`
automaton) to a minimized, canonically numbered :class:`ByteDFA`."""

from __future__ import annotations

import contextlib
import gc
from dataclasses import dataclass

import numpy as np

from .. import budget
from ..errors import BudgetExceededError, ToolcError
from .alphabet import Alphabet
from .expr import Expr
from .minimize import reduce_table
from .positions import FINAL, Positions


@dataclass(frozen=True)
class ByteDFA:
    """A minimized, canonically numbered DFA over an :class:`Alphabet`.

    ``trans[q, a]`` is the next state on alphabet index ``a`` or -1 (dead). State 0 is the start.
    ``final[q]`` marks the states where the whole language has been read (after EOS).
    Every state can still reach a final state: dead ends are trimmed away.
    """

    alphabet: Alphabet
    trans: np.ndarray   # int32[n, alphabet.size]
    final: np.ndarray   # bool[n]
    # counted regions: each state's tag (-1: none) and each tag's (min, max) characters
    tags: np.ndarray | None = None
    tag_bounds: tuple = ()

    @property
    def num_states(self) -> int:
        return int(self.trans.shape[0])

    def step_bytes(self, q: int, data: bytes) -> int:
        """The state after ``data`` from ``q`` (-1 once dead); the plain, slow way."""
        for b in data:
            if q < 0:
                return -1
            q = int(self.trans[q, self.alphabet.byte_class[b]])
        return q

    def step_symbol(self, q: int, name: str) -> int:
        if q < 0 or name not in self.alphabet.symbols:
            return -1
        return int(self.trans[q, self.alphabet.symbol_index(name)])


class AmbiguousCountError(ToolcError):
    """A counted region's states are shared with text outside it (``anyOf`` of a bounded
    and an unbounded string, say): a counter could not tell which one is being written. The
    compiler then builds such bounds expanded, as chains of states."""


def compile_expr(expr: Expr, *, max_states: int | None = None, reduce: bool = True) -> ByteDFA:
    """``reduce=False`` leaves a DFA without counted regions as the subset construction made
    it (start 0; not trimmed, minimized nor numbered canonically), for a product that is
    reduced afterwards (:mod:`toolc.fsm.unspelled`): one minimization instead of two."""
    with collector_paused():
        pos = Positions(max_nodes=None if max_states is None else max_states * budget.NFA_FACTOR)
        start = pos.build(expr, frozenset((FINAL,)))
        return determinize_positions(pos, start, max_states=max_states, reduce=reduce)


@contextlib.contextmanager
def collector_paused():
    """Pause Python's cyclic garbage collector while the automaton is built: the build makes
    tens of thousands of long-lived frozensets, tuples and dicts (and no cycles worth
    collecting), and the collector's passes over them cost about a sixth of the build
    (schemas/tools80: ~40 ms of ~250). ``compile_tools`` pauses it for the whole compile
    (the schemas and the walk's bookkeeping cost another 11 to 15 ms on tools80, 79 ms at
    500 tools). It runs again as before afterwards; if it was off, it stays off."""
    was_on = gc.isenabled()
    if was_on:
        gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def determinize_positions(pos: Positions, start: frozenset, *,
                          max_states: int | None = None, reduce: bool = True) -> ByteDFA:
    """Subset construction over a :class:`Positions` automaton, then trim, minimize and
    number canonically."""
    masks, symbols = pos.masks_and_symbols()
    alphabet = Alphabet.from_masks(masks, symbols)
    labels, conts = pos.label, pos.cont
    class_cache: dict = {}

    def classes(lab) -> tuple:
        cs = class_cache.get(lab)
        if cs is None:
            if type(lab) is int:
                cs = alphabet.classes_of(lab)
            else:
                cs = (alphabet.symbol_index(lab),)
            class_cache[lab] = cs
        return cs

    expand_cache: dict = {}
    expand = pos.expand
    keys: list[frozenset] = []
    intern = _interner(keys, max_states)

    # the DFA state a continuation set leads to (-1: none)
    target_of: dict[frozenset, int] = {}

    def target(cont: frozenset) -> int:
        j = target_of.get(cont)
        if j is None:
            k = expand(cont, expand_cache)
            j = target_of[cont] = intern(k) if k else -1
        return j

    intern(expand(start, expand_cache))
    row_q: list[int] = []
    row_c: list[int] = []
    row_t: list[int] = []
    i = 0
    while i < len(keys):
        if not i & 0xFF:
            budget.check("determinizing the automaton")
        k = keys[i]
        nodes = [n for n in k if n != FINAL] if FINAL in k else k
        disjoint = True
        if len(nodes) > 1:
            acc, seen_syms = 0, set()
            for n in nodes:
                val = labels[n]
                if type(val) is int:
                    if acc & val:
                        disjoint = False
                        break
                    acc |= val
                elif val in seen_syms:
                    disjoint = False
                    break
                else:
                    seen_syms.add(val)
        if disjoint:
            for n in nodes:
                j = target_of.get(conts[n])
                if j is None:
                    j = target(conts[n])
                if j >= 0:
                    cs = classes(labels[n])
                    if len(cs) == 1:
                        row_q.append(i)
                        row_c.append(cs[0])
                        row_t.append(j)
                    else:
                        row_q.extend([i] * len(cs))
                        row_c.extend(cs)
                        row_t.extend([j] * len(cs))
        else:
            by_class: dict[int, list] = {}
            for n in nodes:
                for c in classes(labels[n]):
                    by_class.setdefault(c, []).append(n)
            groups: dict[tuple, list] = {}
            for c, ns in by_class.items():
                groups.setdefault(tuple(ns), []).append(c)
            for ns, cs in groups.items():
                j = target(frozenset().union(*(conts[n] for n in ns)))
                if j >= 0:
                    row_q.extend([i] * len(cs))
                    row_c.extend(cs)
                    row_t.extend([j] * len(cs))
        i += 1
    tags = _state_tags(pos, keys, expand, expand_cache) if pos.tag_bounds else None
    return _finish(alphabet, len(keys), row_q, row_c, row_t,
                   np.array([FINAL in k for k in keys], dtype=bool), max_states, tags,
                   tuple(pos.tag_bounds), reduce)


def _depth(bounds: tuple) -> int:
    """How many counted regions a tag's states are in (its own and those around it)."""
    return len(bounds) if isinstance(bounds[0], tuple) else 1


def _state_tags(pos: Positions, keys: list, expand, cache) -> np.ndarray:
    """The counted-region tag of each subset state: the tag its nodes share; other nodes
    (untagged, or a nested string's array) may sit beside them only where the region exits
    (the closing quote). Anything else is ambiguous (:class:`AmbiguousCountError`)."""
    exits = [frozenset().union(*(expand(k, cache) for k in ks)) for ks in pos.tag_exits]
    ntag = pos.tag
    out = np.full(len(keys), -1, dtype=np.int32)
    for i, k in enumerate(keys):
        found = {ntag[n] for n in k if n != FINAL}
        if found == {-1} or not found:
            continue
        found.discard(-1)
        tid = max(found, key=lambda g: _depth(pos.tag_bounds[g]))
        # beside a nested region's nodes, its enclosing regions' only where it exits
        b = pos.tag_bounds[tid]
        outer = {pos.tag_bounds.index(b[0] if j == 1 else b[:j]) for j in range(1, _depth(b))}
        if len(found - {tid} - outer) or \
                any(ntag[n] != tid and n not in exits[tid] for n in k):
            raise AmbiguousCountError("two counted regions share a state, or a counted "
                                      "region shares a state with other text")
        out[i] = tid
    return out


def _interner(keys: list, max_states: int | None):
    """A function numbering new subset-construction states (appended to ``keys``) and
    refusing, past the budget, to number more."""
    ids: dict[frozenset, int] = {}
    limit = None if max_states is None else max_states * budget.DFA_FACTOR

    def intern(k: frozenset) -> int:
        i = ids.get(k)
        if i is None:
            i = ids[k] = len(keys)
            keys.append(k)
            if limit is not None and i >= limit:
                raise BudgetExceededError(
                    f"the automaton grew past {max_states:,} states during determinization; "
                    "raise max_states or simplify the schemas")
        return i

    return intern


def _finish(alphabet, n, row_q, row_c, row_t, is_final, max_states, tags=None,
            tag_bounds=(), reduce=True) -> ByteDFA:
    """The transition table from its entries; trimmed, minimized, numbered canonically."""
    trans = np.full((n, alphabet.size), -1, dtype=np.int32)
    trans[np.array(row_q, dtype=np.int64), np.array(row_c, dtype=np.int64)] = row_t
    if tags is not None:
        trans, is_final, tags = reduce_table(trans, is_final, tags)
    elif reduce:
        trans, is_final = reduce_table(trans, is_final)
    if max_states is not None and trans.shape[0] > max_states:
        raise BudgetExceededError(
            f"the automaton has {trans.shape[0]:,} states, over the budget of {max_states:,}; "
            "raise max_states or simplify the schemas")
    return ByteDFA(alphabet, trans, is_final, tags, tag_bounds)
