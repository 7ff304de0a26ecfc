"""zero_one_distances (toolc/walk/distances.py) against a plain label-correcting search on
random 0/1-weighted graphs, seeds at several distances included."""

from collections import deque

import numpy as np
import pytest

from toolc.walk.distances import zero_one_distances

BIG = 1 << 31


def _reference(src, dst, w, n, seeds, seed_dist):
    preds = [[] for _ in range(n)]
    for p, r, x in zip(src.tolist(), dst.tolist(), w.tolist()):
        preds[r].append((p, x))
    dist = [BIG] * n
    dq = deque()
    for s, d in zip(seeds.tolist(), seed_dist.tolist()):
        if d < dist[s]:
            dist[s] = d
            dq.append(s)
    while dq:
        r = dq.popleft()
        for p, x in preds[r]:
            if dist[r] + x < dist[p]:
                dist[p] = dist[r] + x
                dq.append(p)
    return np.array(dist)


@pytest.mark.parametrize("seed", range(40))
def test_the_distances_are_the_least_ones(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    m = int(rng.integers(0, 4 * n))
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    w = rng.integers(0, 2, m)
    seeds = rng.choice(n, int(rng.integers(0, min(n, 6) + 1)), replace=False)
    seed_dist = rng.integers(0, 5, len(seeds))
    if len(seeds) and seed % 3 == 0:
        seed_dist[0] = BIG          # a seed that is not there
    got = zero_one_distances(src, dst, w, n, seeds, seed_dist, BIG)
    assert got.tolist() == _reference(src, dst, w, n, seeds, seed_dist).tolist()


def test_a_deliberate_slip_is_caught():
    # 0 <- 1 costs 1, 1 <- 2 costs 0: from seed 0, state 2 is 1 away, not 0
    got = zero_one_distances(np.array([1, 2]), np.array([0, 1]), np.array([1, 0]), 3,
                             np.array([0]), np.array([0]), BIG)
    assert got.tolist() == [0, 1, 1]
