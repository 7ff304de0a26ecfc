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


def test_prune_keeps_the_most_recently_used_of_one_family(cache_dir):
    import os
    for i in range(11):
        cache.write_arrays(f"fp-part{i:02d}-v3", ARRAYS, kind="trie")
        p = cache._path(f"fp-part{i:02d}-v3", "trie")
        os.utime(p, ns=(10**18 + i * 10**9, 10**18 + i * 10**9))
    cache.write_arrays("fp-std13-v3", ARRAYS, kind="trie")
    # a hit with touch makes an old entry the most recent
    assert cache.read_arrays("fp-part00-v3", kind="trie", touch=True) is not None
    cache.prune("trie", "-part", 8)
    left = sorted(p.name for p in cache_dir.iterdir())
    assert len(left) == 9 and any("std13" in n for n in left)
    kept = sorted(n.split("-part")[1][:2] for n in left if "-part" in n)
    assert kept == ["00", "04", "05", "06", "07", "08", "09", "10"]


NON_ASCII = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"},
                                     "unit": {"type": "string", "enum": ["°C", "°F"]}},
    "required": ["city"]}}}]


def test_a_partition_trie_is_built_once_then_read_from_the_cache(cache_dir, monkeypatch, qwen):
    """A non-ASCII enum splits bytes finer than the standard classes, so the walk needs a trie
    of its own: built on the first compile, then found in memory, then on disk (a fresh
    process's view), and rebuilt when the entry is damaged. The artifacts are the same."""
    import toolc
    from toolc.walk import trie
    built = []
    real = trie.build_trie

    def counting(*a, **k):
        built.append(1)
        return real(*a, **k)

    monkeypatch.setattr(trie, "build_trie", counting)
    for k in [k for k in trie._TRIES if "-part" in k]:
        monkeypatch.delitem(trie._TRIES, k)
    first = toolc.compile_tools(NON_ASCII, qwen).to_bytes()
    assert len(built) == 1
    (entry,) = [p for p in cache_dir.iterdir() if "-part" in p.name]
    assert toolc.compile_tools(NON_ASCII, qwen).to_bytes() == first      # memory
    for k in [k for k in trie._TRIES if "-part" in k]:
        del trie._TRIES[k]
    assert toolc.compile_tools(NON_ASCII, qwen).to_bytes() == first      # disk
    assert len(built) == 1
    data = bytearray(entry.read_bytes())
    data[-5] ^= 0xFF
    entry.write_bytes(bytes(data))
    for k in [k for k in trie._TRIES if "-part" in k]:
        del trie._TRIES[k]
    assert toolc.compile_tools(NON_ASCII, qwen).to_bytes() == first      # damaged: rebuilt
    assert len(built) == 2
