"""The count tables' K rows as written (toolc/walk/countcode.py): every entry a state reads
comes back exactly from the file's sections; only the free ones are chosen, and they are
chosen to cost less."""

from __future__ import annotations

import zlib

import msgpack
import numpy as np
import pytest

from toolc.runtime.countfile import decode_counted
from toolc.walk.countcode import first_row
from toolc.walk.counts import CountTables


def tables(rng, P: int = 5, L: int = 4001, read_p: float = 0.7) -> CountTables:
    base = rng.integers(0, 9, L).astype(np.uint8)
    base[rng.random(L) < 0.01] = rng.integers(15, 60)          # a few listed apart
    k = np.stack([base - (i % 3) for i in range(P)]).astype(np.uint8)
    k[rng.random((P, L)) < 0.02] = rng.integers(0, 255)         # differences to list
    read = rng.random((P, L)) < read_p
    read[0, : L // 10] = False                                  # a stretch row 0 never reads
    n = 6
    return CountTables(tag=np.full(n, -1, np.int32), phase=np.full(n, -1, np.int8),
                       lo=np.zeros(0, np.int64), hi=np.zeros(0, np.int64),
                       phases=np.arange(P, dtype=np.int8), k=k,
                       x=(rng.random((P, L)) < 0.05).astype(np.uint8),
                       s=np.where(rng.random((P, L)) < 0.03, 2, -1).astype(np.int16),
                       drops={}, relevant=read, dmin=np.zeros(n, np.int32))


def damaged(msg):
    return ValueError(msg)


@pytest.mark.parametrize("seed", range(4))
def test_every_entry_a_state_reads_comes_back_exactly(seed):
    t = tables(np.random.default_rng(seed))
    got = decode_counted({k: v for k, v in t.sections().items()}, 6, t.k.shape[1], damaged)
    read = t.relevant
    assert np.array_equal(got["cnt_k"][read], t.k[read])
    assert np.array_equal(got["cnt_x"][read] > 0, t.x[read] > 0)


def test_free_entries_take_another_rows_value_or_a_run(monkeypatch):
    rng = np.random.default_rng(7)
    t = tables(rng)
    k0, kd = first_row(t.k, t.relevant)
    read = t.relevant
    assert np.array_equal(k0[read[0]], t.k[0][read[0]])
    other = ~read[0] & read[1:].any(axis=0)
    p = read[1:].argmax(axis=0) + 1
    cols = np.flatnonzero(other)
    assert np.array_equal(k0[cols], (t.k[p[cols], cols] - kd[p[cols]]).astype(np.uint8))
    free = np.flatnonzero(~read[0] & ~other)
    assert len(free) and np.all(k0[free] < 15)
    assert np.array_equal(k0[free], np.minimum(k0[free - 1], 14))     # runs (none at 0)
    # the file is smaller than with zeros in the free entries
    chosen = t.sections()

    def zeros(k, read, at=None):
        k0, kd = first_row(k, read, at)
        return np.where(read[0], k[0], 0).astype(np.uint8), kd
    monkeypatch.setattr("toolc.walk.counts.first_row", zeros)
    plain = t.sections()
    assert len(chosen["cnt_kp"]) < len(plain["cnt_kp"])

    def size(sections):
        return len(zlib.compress(msgpack.packb(sections, use_bin_type=True)))
    assert size(chosen) < size(plain)


def test_no_phase_no_row():
    k0, kd = first_row(np.zeros((0, 10), np.uint8), np.zeros((0, 10), bool))
    assert k0.shape == (10,) and kd.shape == (0,)
