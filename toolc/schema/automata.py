"""Intersection and difference of byte languages, for keywords that constrain one value twice.

``pattern`` with ``maxLength``, ``minimum`` with ``maximum``, ``contains`` with ``maxContains``:
each part is an easy expression alone, and the keyword means all of them at once. The parts are
compiled to minimized DFAs and combined by the product construction; the result is embedded back
as a :class:`~toolc.fsm.Graph`, so the rest of the pipeline sees an ordinary expression.
"""

from __future__ import annotations

from ..errors import BudgetExceededError
from ..fsm import NOTHING, Bytes, Expr, Graph
from ..fsm.dfa import AmbiguousCountError, determinize_positions
from ..fsm.positions import FINAL, Positions

# a product bigger than this is a schema problem, not something to wait minutes for
MAX_PRODUCT_STATES = 200_000


def _dfa(e: Expr):
    """A minimized DFA of ``e``, or None when ``e`` matches nothing."""
    if e == NOTHING:
        return None
    pos = Positions(max_nodes=MAX_PRODUCT_STATES * 8)
    start = pos.build(e, frozenset((FINAL,)))
    cache: dict = {}
    seen, stack, found = set(), [pos.expand(start, cache)], False
    while stack and not found:        # can the end be reached at all?
        for n in stack.pop():
            if n == FINAL:
                found = True
                break
            if n not in seen:
                seen.add(n)
                stack.append(pos.expand(pos.cont[n], cache))
    if not found:
        return None
    if pos.tag_bounds:
        # a product of automata knows nothing of counters: build the bounds expanded instead
        raise AmbiguousCountError("a counted region inside a combination of constraints")
    return determinize_positions(pos, start, max_states=MAX_PRODUCT_STATES)


def _product(a, b, keep_b: bool, max_states: int) -> Expr:
    """Paths read by ``a`` and (``keep_b``) read by ``b`` / (not ``keep_b``) not read by ``b``."""
    if a is None:
        return NOTHING
    ca, cb = a.alphabet.byte_class, (b.alphabet.byte_class if b is not None else None)
    joint: dict[tuple[int, int], int] = {}
    for byte in range(256):
        key = (int(ca[byte]), int(cb[byte]) if cb is not None else 0)
        joint[key] = joint.get(key, 0) | (1 << byte)
    start = (0, 0 if b is not None else -1)
    ids = {start: 0}
    order = [start]
    edges = []
    finals = []
    i = 0
    while i < len(order):
        qa, qb = order[i]
        fa = bool(a.final[qa])
        fb = qb >= 0 and bool(b.final[qb])
        if fa and (fb if keep_b else not fb):
            finals.append(i)
        for (x, y), mask in joint.items():
            ra = int(a.trans[qa, x])
            if ra < 0:
                continue
            rb = int(b.trans[qb, y]) if qb >= 0 else -1
            if rb < 0 and keep_b:
                continue
            nxt = (ra, rb)
            j = ids.get(nxt)
            if j is None:
                j = ids[nxt] = len(order)
                order.append(nxt)
                if len(order) > max_states:
                    raise BudgetExceededError(
                        f"combining the constraints of one value needs more than "
                        f"{max_states:,} states; loosen its bounds or simplify its pattern")
            edges.append((i, mask, j))
        i += 1
    if not finals:
        return NOTHING
    merged: dict[tuple[int, int], int] = {}
    for s, m, t in edges:
        merged[(s, t)] = merged.get((s, t), 0) | m
    return Graph(len(order), 0, tuple(finals),
                 tuple((s, Bytes(m), t) for (s, t), m in sorted(merged.items())))


def dfa_graph(dfa) -> Expr:
    """A byte DFA (no symbols, no tags) embedded as a :class:`~toolc.fsm.Graph`."""
    bc = dfa.alphabet.byte_class
    masks = [0] * dfa.alphabet.num_byte_classes
    for byte in range(256):
        masks[int(bc[byte])] |= 1 << byte
    merged: dict[tuple[int, int], int] = {}
    for q, c in zip(*(dfa.trans[:, :len(masks)] >= 0).nonzero()):
        key = (int(q), int(dfa.trans[q, c]))
        merged[key] = merged.get(key, 0) | masks[c]
    finals = tuple(int(q) for q in dfa.final.nonzero()[0])
    if not finals:
        return NOTHING
    return Graph(dfa.num_states, 0, finals,
                 tuple((s, Bytes(m), t) for (s, t), m in sorted(merged.items())))


def intersect(*exprs: Expr, max_states: int = MAX_PRODUCT_STATES) -> Expr:
    """The byte strings every one of ``exprs`` matches (NOTHING when there are none)."""
    exprs = [e for e in exprs if e is not None]
    if not exprs:
        raise ValueError("intersect needs at least one expression")
    if any(e == NOTHING for e in exprs):
        return NOTHING
    out = exprs[0]
    for e in exprs[1:]:
        if out == e:
            continue
        out = _product(_dfa(out), _dfa(e), True, max_states)
        if out == NOTHING:
            return NOTHING
    return out


def difference(a: Expr, b: Expr, max_states: int = MAX_PRODUCT_STATES) -> Expr:
    """The byte strings ``a`` matches and ``b`` does not."""
    if b == NOTHING:
        return a
    return _product(_dfa(a), _dfa(b), False, max_states)


def is_empty(e: Expr) -> bool:
    """Whether ``e`` matches no byte string at all."""
    return _dfa(e) is None
