"""toolc/cache.py: entries come back as written, and a damaged or foreign one is a miss."""

from __future__ import annotations

import json

import numpy as np
import pytest

from toolc import cache


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLC_CACHE_DIR", str(tmp_path))
    return tmp_path


ARRAYS = {"a": np.arange(1000, dtype=np.int32), "b": np.eye(3, dtype=np.float64),
          "c": np.zeros(0, dtype=np.uint8)}


def _entry(cache_dir):
    (path,) = cache_dir.iterdir()
    return path


def test_arrays_round_trip(cache_dir):
    cache.write_arrays("k1", ARRAYS, kind="t")
    got = cache.read_arrays("k1", kind="t")
    assert set(got) == set(ARRAYS)
    for name, a in ARRAYS.items():
        assert got[name].dtype == a.dtype and np.array_equal(got[name], a)


@pytest.mark.parametrize("where", [-1, -2000, -4000])
def test_a_flipped_bit_in_the_arrays_is_a_miss(cache_dir, where):
    cache.write_arrays("k1", ARRAYS, kind="t")
    path = _entry(cache_dir)
    raw = bytearray(path.read_bytes())
    raw[where] ^= 0x10
    path.write_bytes(bytes(raw))
    assert cache.read_arrays("k1", kind="t") is None


def test_a_truncated_or_foreign_arrays_entry_is_a_miss(cache_dir):
    cache.write_arrays("k1", ARRAYS, kind="t")
    path = _entry(cache_dir)
    raw = path.read_bytes()
    path.write_bytes(raw[:-10])
    assert cache.read_arrays("k1", kind="t") is None
    # an entry written for another key, renamed into place
    cache.write_arrays("k2", ARRAYS, kind="t")
    other = cache_dir / path.name.replace("k1", "k2")
    other.replace(path)
    assert cache.read_arrays("k1", kind="t") is None


def test_an_entry_checked_the_old_way_is_a_miss(cache_dir):
    """Entries from before the CRC-32 (a BLAKE2b field) are rebuilt, not trusted."""
    cache.write_arrays("k1", ARRAYS, kind="t")
    path = _entry(cache_dir)
    raw = path.read_bytes()
    n = int.from_bytes(raw[8:16], "little")
    head = json.loads(raw[16:16 + n])
    head["blake2b"] = "0" * 128
    del head["crc32"]
    new = json.dumps(head).encode()
    path.write_bytes(raw[:8] + len(new).to_bytes(8, "little") + new + raw[16 + n:])
    assert cache.read_arrays("k1", kind="t") is None


def test_values_round_trip_and_damage_is_a_miss(cache_dir):
    cache.write("v1", {"x": [1, 2, 3], "s": "ok"})
    assert cache.read("v1") == {"x": [1, 2, 3], "s": "ok"}
    path = _entry(cache_dir)
    raw = bytearray(path.read_bytes())
    raw[-3] ^= 0x01
    path.write_bytes(bytes(raw))
    assert cache.read("v1") is None


def test_cache_off_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLC_CACHE_DIR", "off")
    cache.write_arrays("k1", ARRAYS, kind="t")
    cache.write("v1", 1)
    assert cache.read_arrays("k1", kind="t") is None and cache.read("v1") is None
