"""The automaton of :class:`~toolc.fsm.expr.Avoid`: byte strings that contain none of a few
patterns (free text that never spells a trigger), as an Aho-Corasick automaton."""

from __future__ import annotations

from .expr import ALL_BYTES


def aho_corasick(patterns):
    """The automaton of byte strings containing none of ``patterns``: None when nothing is
    accepted (the empty pattern), else (live states, per state [(next state, byte mask)]).
    State 0 is the start; every live state accepts."""
    goto: list[dict[int, int]] = [{}]
    terminal = [False]
    for p in patterns:
        cur = 0
        for b in p:
            if b not in goto[cur]:
                goto.append({})
                terminal.append(False)
                goto[cur][b] = len(goto) - 1
            cur = goto[cur][b]
        terminal[cur] = True
    fail = [0] * len(goto)
    queue = list(goto[0].values())
    while queue:
        q = queue.pop(0)
        for b, r in goto[q].items():
            f = fail[q]
            while f and b not in goto[f]:
                f = fail[f]
            fail[r] = goto[f][b] if (b in goto[f] and goto[f][b] != r) else 0
            terminal[r] = terminal[r] or terminal[fail[r]]
            queue.append(r)

    def step(q: int, b: int) -> int:
        while q and b not in goto[q]:
            q = fail[q]
        return goto[q].get(b, 0)

    if terminal[0]:
        return None
    live = [q for q in range(len(goto)) if not terminal[q]]
    moves = {}
    for q in live:
        by_target: dict[int, int] = {}
        interesting = set()
        f = q
        while True:
            interesting.update(goto[f])
            if f == 0:
                break
            f = fail[f]
        rest = ALL_BYTES
        for b in sorted(interesting):
            r = step(q, b)
            rest &= ~(1 << b)
            if not terminal[r]:
                by_target[r] = by_target.get(r, 0) | (1 << b)
        by_target[0] = by_target.get(0, 0) | rest
        moves[q] = sorted(by_target.items())
    return live, moves
