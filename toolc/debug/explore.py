"""The token-level automaton of an artifact, as a graph: edges, distances, shortest paths,
random valid outputs. Used by ``toolc sample``, ``toolc trace`` and ``toolc graph``.

Numpy only; it reads the automaton through the Artifact's public accessors.
"""

from __future__ import annotations

import random
from collections import deque

import numpy as np

from ..errors import ToolcError
from ..runtime import Artifact


def token_edges(art: Artifact, q: int) -> tuple[dict[int, int], int]:
    """State ``q``'s exceptions (token -> next state) and its default next state (-1: none).

    Every allowed token that is not an exception goes to the default state.
    """
    return art.transitions(q)


def successors(art: Artifact, q: int) -> set[int]:
    exc, default = token_edges(art, q)
    out = set(exc.values())
    if default >= 0 and _has_default_tokens(art, q, exc):
        out.add(default)
    return out


def _has_default_tokens(art: Artifact, q: int, exc: dict[int, int]) -> bool:
    m = art.matcher(q)
    return int(np.bitwise_count(m.mask().view(np.uint32)).sum()) > len(exc)


def is_final(art: Artifact, q: int) -> bool:
    return art.is_final_state(q)


def distance_to_end(art: Artifact) -> list[int]:
    """Fewest tokens from each state to a terminated state (-1: none)."""
    n = art.num_states
    preds: list[list[int]] = [[] for _ in range(n)]
    for q in range(n):
        for r in successors(art, q):
            preds[r].append(q)
    dist = [-1] * n
    dq = deque()
    for q in range(n):
        if is_final(art, q):
            dist[q] = 0
            dq.append(q)
    while dq:
        r = dq.popleft()
        for q in preds[r]:
            if dist[q] < 0:
                dist[q] = dist[r] + 1
                dq.append(q)
    return dist


def shortest_token_paths(art: Artifact) -> list[list[int] | None]:
    """For each state, a shortest token sequence from the start that reaches it (BFS).

    Ties go to exception tokens first (they are what leaves a loop), then to the smallest
    allowed default token, so the result is deterministic.
    """
    n = art.num_states
    parent: list[tuple[int, int] | None] = [None] * n
    seen = [False] * n
    seen[0] = True
    dq = deque([0])
    while dq:
        q = dq.popleft()
        exc, default = token_edges(art, q)
        for t in sorted(exc):
            r = exc[t]
            if not seen[r]:
                seen[r] = True
                parent[r] = (q, t)
                dq.append(r)
        if default >= 0 and not seen[default]:
            t = _a_default_token(art, q, exc)
            if t is not None:
                seen[default] = True
                parent[default] = (q, t)
                dq.append(default)
    out: list[list[int] | None] = [None] * n
    out[0] = []
    for q in range(1, n):
        if not seen[q]:
            continue
        path, r = [], q
        while r != 0:
            p, t = parent[r]
            path.append(t)
            r = p
        out[q] = path[::-1]
    return out


def _a_default_token(art: Artifact, q: int, exc: dict[int, int]) -> int | None:
    m = art.matcher(q)
    for t in m.allowed_token_ids().tolist():
        if t not in exc:
            return t
    return None


def random_output(art: Artifact, rng: random.Random, dist: list[int], budget: int = 60,
                  leave_bias: float = 0.5, prefer: tuple[int, ...] = (),
                  prefer_bias: float = 0.5) -> list[int]:
    """A random token sequence the artifact accepts, ending with EOS.

    Uniform over the allowed tokens, but with probability ``leave_bias`` only over the tokens
    that leave the state's default (so strings end and calls happen), and a token of
    ``prefer`` (say, the call trigger) taken with probability ``prefer_bias`` when allowed;
    after ``budget`` tokens, only tokens that bring the end closer.
    """
    m = art.matcher()
    out: list[int] = []
    # a counted region (minLength, minItems...) may need many tokens past the budget
    for step in range(budget + 4 * art.num_states + 4106):
        if m.is_terminated():
            return out
        q = m.state
        exc, default = token_edges(art, q)
        # under a counter the state's edges are not all allowed: ask the matcher
        exc = {t: r for t, r in exc.items() if m.accepts(t)}
        wanted = [p for p in prefer if m.accepts(p)]
        if step >= budget:
            t = _closest(m, exc, default, dist)
        elif wanted and rng.random() < prefer_bias:
            t = rng.choice(wanted)
        elif exc and rng.random() < leave_bias:
            t = rng.choice(sorted(exc))
        else:
            allowed = m.allowed_token_ids()
            t = int(allowed[rng.randrange(len(allowed))])
        m.advance(t)
        out.append(t)
    raise ToolcError(f"no random output reached the end within {step + 1} tokens (a counted "
                       "minimum too large to sample, or a trimmed artifact)")


def _closest(m, exc: dict[int, int], default: int, dist: list[int]) -> int:
    best = min(exc.items(), key=lambda kv: (dist[kv[1]] if dist[kv[1]] >= 0 else 1 << 30,
                                            kv[0])) if exc else None
    if best is not None and (default < 0 or dist[default] < 0 or dist[best[1]] <= dist[default]):
        return best[0]
    for t in m.allowed_token_ids().tolist():
        if t not in exc:
            return t
    return best[0]


class Finisher:
    """Keeps a generation inside a token budget: near the end, only tokens that can still
    reach EOS in time.

    ``mask(matcher, remaining)`` returns None while every allowed token leaves enough room
    (the common case), else an int32 bitmask row of the allowed tokens whose next state can
    still reach the end within ``remaining - 1`` further tokens. As long as the start state's
    distance to the end fits the budget, some token always qualifies.
    """

    def __init__(self, art: Artifact, dist: list[int] | None = None):
        self.art = art
        self.dist = distance_to_end(art) if dist is None else dist
        self._far: dict[int, int] = {}

    def farthest(self, q: int) -> int:
        """The largest distance to the end over the states one token from ``q``."""
        d = self._far.get(q)
        if d is None:
            d = max((self.dist[r] for r in successors(self.art, q)), default=0)
            self._far[q] = d
        return d

    def mask(self, matcher, remaining: int) -> np.ndarray | None:
        q = matcher.state
        limit = remaining - 1
        if self.farthest(q) <= limit:
            return None
        exc, default = token_edges(self.art, q)
        row = np.array(matcher.mask(), dtype=np.int32, copy=True)
        if default >= 0 and not (0 <= self.dist[default] <= limit):
            row[:] = 0          # the default's tokens are out; add back the good exceptions
            keep = [t for t, r in exc.items() if 0 <= self.dist[r] <= limit]
        else:
            keep = []
            for t, r in exc.items():     # drop the exceptions that go too far
                if not (0 <= self.dist[r] <= limit):
                    row[t >> 5] &= np.int32(np.uint32(~(1 << (t & 31)) & 0xFFFFFFFF).view(np.int32))
        for t in keep:
            row[t >> 5] |= np.int32(np.uint32(1 << (t & 31)).view(np.int32))
        return row
