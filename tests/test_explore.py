"""toolc/debug/explore.py: the token graph of an artifact, shortest paths, random outputs and the
length-budget Finisher, checked against the Matcher itself."""

from __future__ import annotations

import random

import numpy as np

from toolc.debug.explore import (Finisher, distance_to_end, random_output, shortest_token_paths,
                           successors)


def test_shortest_paths_reach_their_states(weather_artifact):
    paths = shortest_token_paths(weather_artifact)
    assert paths[0] == []
    for q, path in enumerate(paths):
        assert path is not None, f"state {q} unreachable"
        m = weather_artifact.matcher()
        for t in path:
            m.advance(t)
        assert m.state == q


def test_distances_are_exact_along_random_outputs(weather_artifact):
    dist = distance_to_end(weather_artifact)
    assert all(d >= 0 for d in dist)
    rng = random.Random(0)
    for _ in range(20):
        ids = random_output(weather_artifact, rng, dist, budget=30)
        m = weather_artifact.matcher()
        for t in ids:
            before = dist[m.state]
            m.advance(t)
            assert dist[m.state] >= before - 1        # one token shortens by at most one
        assert m.is_terminated()
        assert len(ids) >= dist[0]


def test_finisher_keeps_every_walk_inside_the_budget(weather_artifact):
    art = weather_artifact
    fin = Finisher(art)
    rng = np.random.default_rng(1)
    for budget in (fin.dist[0], fin.dist[0] + 1, fin.dist[0] + 7):
        for _ in range(8):
            m = art.matcher()
            for used in range(budget):
                if m.is_terminated():
                    break
                row = fin.mask(m, budget - used)
                if row is None:
                    row = m.mask()
                bits = np.unpackbits(np.ascontiguousarray(row).view(np.uint8),
                                     bitorder="little")
                allowed = np.flatnonzero(bits)
                assert len(allowed) > 0
                assert not np.any(np.asarray(row) & ~m.mask())     # a subset of the mask
                t = int(allowed[rng.integers(len(allowed))])
                m.advance(t)
                assert 0 <= fin.dist[m.state] <= budget - used - 1
            assert m.is_terminated()


def test_successors_match_the_matcher(weather_artifact):
    art = weather_artifact
    for q in range(0, art.num_states, 7):
        m = art.matcher(q)
        seen = set()
        for t in m.allowed_token_ids()[:: max(1, len(m.allowed_token_ids()) // 500)]:
            c = m.copy()
            c.advance(int(t))
            seen.add(c.state)
        assert seen <= successors(art, q)
