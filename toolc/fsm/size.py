"""How many states an expression's Thompson NFA has, computed without building it.

The compile budgets (:mod:`toolc.budget`) are stated in these states: a subschema, or the
whole grammar, whose count passes ``max_states`` x NFA_FACTOR is refused before anything is
built. ``toolc._reference.nfa`` builds the NFA itself, so the tests check the count exactly.
"""

from __future__ import annotations

from .expr import Alt, Avoid, Bytes, Expr, Graph, Repeat, Seq, Subseq, Sym, Tagged


def nfa_size(expr: Expr, memo: dict | None = None) -> int:
    """The number of states :class:`toolc._reference.nfa.NFA` adds for ``expr`` (without its own
    entry and exit), computed in time linear in the expression's distinct nodes."""
    memo = {} if memo is None else memo
    return _size(expr, memo)


def _size(e: Expr, memo: dict) -> int:
    if type(e) is Bytes or type(e) is Sym:
        return 0
    key = id(e)
    hit = memo.get(key)
    if hit is not None:
        return hit[0]
    if isinstance(e, Seq):
        n = len(e.items) - 1 if e.items else 0
        for it in e.items:
            if type(it) is not Bytes:
                n += _size(it, memo)
    elif isinstance(e, Alt):
        n = 2 * len(e.items) + sum(_size(it, memo) for it in e.items)
    elif isinstance(e, Repeat) and e.sep is not None:
        item, sep = _size(e.item, memo), _size(e.sep, memo)
        if (e.max is not None and e.max < e.min) or e.max == 0:
            n = 0
        elif e.max is None:
            k = max(e.min, 1) - 1
            n = k * (2 + item + sep) + 4 + item + sep
        else:
            k = max(e.min, 1) - 1
            n = k * (2 + item + sep) + 1 + item + (e.max - max(e.min, 1)) * (2 + item + sep)
    elif isinstance(e, Repeat):
        item = _size(e.item, memo)
        if e.max is not None and e.max < e.min:
            n = 0
        else:
            copies = e.min + (1 if e.max is None else e.max - e.min)
            n = e.min + (2 if e.max is None else e.max - e.min) + copies * item
    elif isinstance(e, Subseq):
        k = len(e.items)
        # each item's fragment, an "after" state per item, and one separator after every item
        # but the last (see NFA._subseq)
        n = sum(_size(it, memo) + 2 for it in e.items) + k \
            + max(k - 1, 0) * (_size(e.sep, memo) + 2)
    elif isinstance(e, Avoid):   # one state per proper prefix of the patterns
        n = len({p[:i] for p in e.patterns for i in range(len(p))})
    elif isinstance(e, Tagged):  # built once, unbounded: the bound is a counter
        n = _size(e.body, memo)
    elif isinstance(e, Graph):   # its states, and a fragment (entry, exit) per non-byte label
        n = e.num_states + sum(2 + _size(label, memo) for _, label, _ in e.edges
                               if type(label) is not Bytes)
    else:  # pragma: no cover - a programming error
        raise TypeError(f"not an Expr: {e!r}")
    memo[key] = (n, e)   # keep e alive so its id is not reused
    return n
