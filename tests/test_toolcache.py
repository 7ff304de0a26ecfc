"""toolc.toolcache: compiles through a ToolCache give the bytes a cold compile gives, for any
subset, order, shape or edit of known tools; bounds, disk backing, and what is never cached.

Real parts only: the Qwen3 vocabulary, tools from bench/gen_tools.py (schemas/tools80.json).
"""

from __future__ import annotations

import copy
import json
import random
import threading

import pytest

import toolc
from toolc.errors import UnsupportedSchemaError
from toolc.toolcache import ToolCache, pack, unpack

from conftest import object_schema, tools_list

with open("schemas/tools80.json", encoding="utf-8") as fh:
    CATALOGUE = json.load(fh)


def cold(tools, qwen, **kw):
    return toolc.compile_tools(tools, qwen, **kw).to_bytes()


def edited(tool: dict, rng: random.Random) -> dict:
    """``tool`` with one argument schema changed: a new optional property."""
    out = copy.deepcopy(tool)
    props = out["function"]["parameters"].setdefault("properties", {})
    props[f"extra_{rng.randrange(1000)}"] = {"type": "integer", "minimum": rng.randrange(9)}
    return out


def check_random_sets(qwen, trials: int, most: int, seed: int) -> ToolCache:
    """Random subsets in random orders, some with one tool edited: each compiled through one
    warm cache and cold, byte for byte."""
    rng = random.Random(seed)
    cache = ToolCache()
    for _ in range(trials):
        tools = rng.sample(CATALOGUE, rng.randint(1, most))
        if rng.random() < 0.4:
            i = rng.randrange(len(tools))
            tools[i] = edited(tools[i], rng)
        assert toolc.compile_tools(tools, qwen, cache=cache).to_bytes() == cold(tools, qwen)
    return cache


def test_random_subsets_orders_and_edits_give_the_cold_bytes(qwen):
    cache = check_random_sets(qwen, trials=5, most=4, seed=18)
    assert cache.stats()["tool_misses"] > 0


@pytest.mark.slow
def test_many_random_subsets_give_the_cold_bytes(qwen):
    cache = check_random_sets(qwen, trials=25, most=12, seed=81)
    assert cache.stats()["tool_hits"] > 0


def test_required_calls_through_the_cache_give_the_cold_bytes(qwen):
    """``tool_choice="required"``: every call returns to the start state, which the walk of
    the rest passes through (its near twins kept sparse all the same, toolc.assemble)."""
    rng = random.Random(27)
    cache = ToolCache()
    for _ in range(4):
        tools = rng.sample(CATALOGUE, rng.randint(1, 5))
        got = toolc.compile_tools(tools, qwen, cache=cache, tool_choice="required")
        assert got.to_bytes() == cold(tools, qwen, tool_choice="required")


def test_a_known_set_in_a_new_order_reuses_every_tool_part(qwen):
    cache = ToolCache()
    tools = CATALOGUE[:3]
    toolc.compile_tools(tools, qwen, cache=cache)
    before = cache.stats()
    again = list(reversed(tools))
    assert toolc.compile_tools(again, qwen, cache=cache).to_bytes() == cold(again, qwen)
    after = cache.stats()
    assert after["tool_misses"] == before["tool_misses"]
    assert after["tool_hits"] == before["tool_hits"] + 3
    assert after["artifact_misses"] == before["artifact_misses"] + 1


def test_an_edit_recompiles_only_the_edited_tool_part(qwen):
    cache = ToolCache()
    tools = CATALOGUE[:4]
    toolc.compile_tools(tools, qwen, cache=cache)
    before = cache.stats()
    tools = tools[:2] + [edited(tools[2], random.Random(3))] + tools[3:]
    assert toolc.compile_tools(tools, qwen, cache=cache).to_bytes() == cold(tools, qwen)
    after = cache.stats()
    assert after["tool_misses"] == before["tool_misses"] + 1
    assert after["tool_hits"] == before["tool_hits"] + 3


def test_a_repeated_set_is_the_same_artifact(qwen):
    cache = ToolCache()
    a = toolc.compile_tools(CATALOGUE[:2], qwen, cache=cache)
    assert toolc.compile_tools(copy.deepcopy(CATALOGUE[:2]), qwen, cache=cache) is a
    assert cache.stats()["artifact_hits"] == 1


def test_options_and_input_shape_are_part_of_the_key(qwen):
    cache = ToolCache()
    tools = CATALOGUE[:2]
    a = toolc.compile_tools(tools, qwen, cache=cache)
    b = toolc.compile_tools(tools, qwen, cache=cache, parallel=False)
    assert a is not b and b.to_bytes() == cold(tools, qwen, parallel=False)
    # the same functions without the OpenAI wrapper: the header's pointers differ
    bare = [t["function"] for t in tools]
    assert toolc.compile_tools(bare, qwen, cache=cache).to_bytes() == cold(bare, qwen)


def test_dropped_keywords_are_located_where_the_tool_stands_now(qwen):
    loose = object_schema({"tags": {"type": "array", "items": {"type": "string"},
                                     "uniqueItems": True}})
    cache = ToolCache()
    first = tools_list(("t", loose), ("u", object_schema({"s": {"type": "string"}})))
    toolc.compile_tools(first, qwen, cache=cache, lenient=True)
    moved = list(reversed(first))
    art = toolc.compile_tools(moved, qwen, cache=cache, lenient=True)
    assert [d["pointer"] for d in art.header["not_enforced"]] == \
        ["/1/function/parameters/properties/tags/uniqueItems"]
    assert art.to_bytes() == cold(moved, qwen, lenient=True)


def test_refusals_are_not_cached_and_stay_located(qwen):
    loose = object_schema({"tags": {"type": "array", "items": {"type": "string"},
                                     "uniqueItems": True}})
    cache = ToolCache()
    for pos in (0, 1):
        tools = [CATALOGUE[0]] * pos + tools_list(("t", loose))
        with pytest.raises(UnsupportedSchemaError) as exc:
            toolc.compile_tools(tools, qwen, cache=cache)
        assert exc.value.pointer == f"/{pos}/function/parameters/properties/tags/uniqueItems"
    assert cache.stats()["artifacts"] == 0


def test_record_time_bypasses_the_artifact_cache(qwen):
    cache = ToolCache()
    a = toolc.compile_tools(CATALOGUE[:1], qwen, cache=cache, record_time=True)
    b = toolc.compile_tools(CATALOGUE[:1], qwen, cache=cache, record_time=True)
    assert a is not b and cache.stats()["artifacts"] == 0


def test_bounds_evict_least_recently_used(qwen):
    none = ToolCache(max_bytes=0, max_tools=1, max_packed_bytes=0)
    toolc.compile_tools(CATALOGUE[:2], qwen, cache=none)
    s = none.stats()
    assert (s["artifacts"], s["artifact_bytes"], s["packed"], s["tools"]) == (0, 0, 0, 1)
    toolc.compile_tools(CATALOGUE[:2], qwen, cache=none)
    assert none.stats()["artifact_misses"] == 2
    a = toolc.compile_tools(CATALOGUE[:1], qwen)
    one = ToolCache(max_bytes=a.mask_rows.nbytes + sum(map(len, a.sections.values())),
                    max_packed_bytes=0)
    x = toolc.compile_tools(CATALOGUE[:1], qwen, cache=one)
    toolc.compile_tools(CATALOGUE[1:2], qwen, cache=one)
    assert one.stats()["artifacts"] == 1
    assert toolc.compile_tools(CATALOGUE[:1], qwen, cache=one) is not x   # evicted
    with pytest.raises(ValueError, match="Invalid ToolCache bounds"):
        ToolCache(max_bytes=-1)


def test_what_leaves_memory_is_kept_packed_and_loaded_again(qwen):
    cache = ToolCache(max_bytes=0)
    sets = [CATALOGUE[:1], CATALOGUE[1:3]]
    for t in sets:
        toolc.compile_tools(t, qwen, cache=cache)
    s = cache.stats()
    assert (s["artifacts"], s["packed"]) == (0, 2)
    assert s["packed_bytes"] == sum(len(pack(toolc.compile_tools(t, qwen))) for t in sets)
    for t in sets:
        assert toolc.compile_tools(t, qwen, cache=cache).to_bytes() == cold(t, qwen)
    assert cache.stats()["packed_hits"] == 2


def test_disk_backing_survives_a_new_cache_and_ignores_damage(qwen, tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLC_CACHE_DIR", str(tmp_path))
    tools = CATALOGUE[:1]
    want = cold(tools, qwen)
    toolc.compile_tools(tools, qwen, cache=ToolCache(disk=True))
    files = list(tmp_path.glob("artifact-*"))
    assert len(files) == 1 and files[0].read_bytes() == want
    fresh = ToolCache(disk=True)
    assert toolc.compile_tools(tools, qwen, cache=fresh).to_bytes() == want
    assert fresh.stats()["disk_hits"] == 1
    data = bytearray(files[0].read_bytes())
    data[len(data) // 2] ^= 0xFF
    files[0].write_bytes(bytes(data))
    damaged = ToolCache(disk=True)
    assert toolc.compile_tools(tools, qwen, cache=damaged).to_bytes() == want
    assert damaged.stats()["disk_hits"] == 0 and files[0].read_bytes() == want


def test_threads_sharing_one_cache_get_the_cold_bytes(qwen):
    from concurrent.futures import ThreadPoolExecutor
    cache = ToolCache()
    sets = [CATALOGUE[:2], CATALOGUE[1:3], CATALOGUE[:2], list(reversed(CATALOGUE[:3]))]
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda t: toolc.compile_tools(t, qwen, cache=cache).to_bytes(),
                            sets))
    assert got == [cold(t, qwen) for t in sets]


def test_counted_and_expanded_lengths_are_cached_apart(qwen):
    from toolc.schema.strings import expanded_lengths
    tools = tools_list(("t", object_schema({"s": {"type": "string", "maxLength": 5}})))
    cache = ToolCache()
    counted = toolc.compile_tools(tools, qwen, cache=cache).to_bytes()
    with expanded_lengths():
        expanded = toolc.compile_tools(tools, qwen, cache=cache).to_bytes()
        assert expanded == cold(tools, qwen)
    assert counted != expanded and counted == cold(tools, qwen)
    assert toolc.compile_tools(tools, qwen, cache=cache).to_bytes() == counted


def test_a_repeated_request_is_found_before_it_is_read_again(qwen, monkeypatch):
    from toolc import compiler
    cache = ToolCache()
    tools = CATALOGUE[:3]
    a = toolc.compile_tools(tools, qwen, cache=cache)

    def unread(*a, **k):
        raise AssertionError("read again")

    monkeypatch.setattr(compiler, "read_tools", unread)
    assert toolc.compile_tools(copy.deepcopy(tools), qwen, cache=cache) is a
    with pytest.raises(AssertionError, match="read again"):     # another value: read
        toolc.compile_tools(list(reversed(tools)), qwen, cache=cache)


def test_a_packed_entry_loads_the_same_artifact_and_damage_is_a_miss(qwen):
    art = toolc.compile_tools(CATALOGUE[:2], qwen)
    data = pack(art)
    assert unpack(data, "cached artifact").to_bytes() == art.to_bytes()
    assert unpack(data[:-9], "cached artifact") is None
    assert unpack(b"\x00" + data[1:], "cached artifact") is None


def test_the_free_text_head_is_built_once_for_every_tool_set():
    from toolc.fsm import Avoid
    from toolc.formats.base import no_reasoning_head
    first = no_reasoning_head(Avoid((b"<tool_call>",)), "<think>")
    assert no_reasoning_head(Avoid((b"<tool_call>",)), "<think>") is first
    assert no_reasoning_head.__wrapped__(Avoid((b"<tool_call>",)), "<think>") == first
    assert no_reasoning_head(Avoid((b"[TOOL_CALLS]",)), "<think>") != first


def test_a_tool_parsed_before_is_found_by_its_text_and_moved_pointers_follow(qwen):
    cache = ToolCache()
    tools = copy.deepcopy(CATALOGUE[:3])
    toolc.compile_tools(tools, qwen, cache=cache)
    assert cache.stats()["parsed"] == 3
    # the same tools behind a new one, and one changed in place: the cold bytes, and a
    # refusal located where the bad tool stands now
    tools[1]["function"]["parameters"]["properties"]["extra"] = {"type": "integer"}
    again = [CATALOGUE[5]] + tools
    assert toolc.compile_tools(again, qwen, cache=cache).to_bytes() == cold(again, qwen)
    assert cache.stats()["parsed"] == 5
    bad = [CATALOGUE[5], copy.deepcopy(CATALOGUE[0])]
    bad[1]["function"]["parameters"]["properties"]["x"] = {"type": "integr"}
    with pytest.raises(toolc.ToolcError, match="integr") as e:
        toolc.compile_tools(bad, qwen, cache=cache)
    assert e.value.pointer.startswith("/1/function/parameters")


def test_an_entry_that_is_not_plain_json_is_parsed_every_time():
    from toolc.tools import parse_tools
    cache = ToolCache()
    entry = copy.deepcopy(CATALOGUE[0])
    entry["function"]["parameters"]["required"] = tuple(
        entry["function"]["parameters"].get("required", ()))
    listed = copy.deepcopy(CATALOGUE[0])
    parse_tools([listed], memo=cache)
    assert cache.stats()["parsed"] == 1
    # equal JSON text, but a tuple where the kept value has a list: not taken from the memo,
    # so refused as a cold parse refuses it (a tuple is no JSON Schema array)
    with pytest.raises(toolc.ToolcError) as warm:
        parse_tools([entry], memo=cache)
    with pytest.raises(toolc.ToolcError) as cold_error:
        parse_tools([entry])
    assert str(warm.value) == str(cold_error.value)


# -- packing what leaves memory, off the request's thread -------------------------------------

@pytest.fixture(scope="module")
def two_artifacts(qwen):
    """Two compiled artifacts with their cache keys, and the bytes one of them fills."""
    arts = [toolc.compile_tools(t, qwen) for t in (CATALOGUE[:1], CATALOGUE[1:2])]
    size = max(a.mask_rows.nbytes + sum(map(len, a.sections.values())) for a in arts)
    return [(f"key-{i}", a) for i, a in enumerate(arts)], size


class Packer:
    """``toolcache.pack`` wrapped: records the thread of each call and, while ``gate`` is
    clear, holds the calls made off the main thread."""

    def __init__(self, monkeypatch):
        from toolc import toolcache
        self.main, self.real = threading.main_thread(), toolcache.pack
        self.threads, self.started, self.gate = [], threading.Event(), threading.Event()
        self.gate.set()
        monkeypatch.setattr(toolcache, "pack", self)

    def __call__(self, art):
        me = threading.current_thread()
        self.threads.append(me)
        if me is not self.main:
            self.started.set()
            assert self.gate.wait(30)
        return self.real(art)


def test_an_evicted_artifact_is_packed_off_the_request_thread(two_artifacts, monkeypatch):
    (ka, a), (kb, b) = two_artifacts[0]
    packer = Packer(monkeypatch)
    cache = ToolCache(max_bytes=two_artifacts[1])
    cache.put_artifact(ka, a)
    cache.put_artifact(kb, b)                  # a leaves memory: packed on the packing thread
    assert packer.started.wait(30)
    assert packer.threads and packer.main not in packer.threads
    s = cache.stats()
    assert (s["artifacts"], s["packed"], s["packed_bytes"]) == (1, 1, len(pack(a)))
    back = cache.get_artifact(ka)
    assert back is not a and back.to_bytes() == a.to_bytes()
    assert cache.stats()["packed_hits"] == 1


def test_a_waiting_artifact_is_taken_back_as_it_is(two_artifacts, monkeypatch):
    (ka, a), (kb, b) = two_artifacts[0]
    packer = Packer(monkeypatch)
    packer.gate.clear()                        # the packer holds a, not yet packed
    cache = ToolCache(max_bytes=two_artifacts[1])
    cache.put_artifact(ka, a)
    cache.put_artifact(kb, b)
    assert packer.started.wait(30)
    assert cache.get_artifact(ka) is a         # still loaded: no unpacking; b leaves instead
    packer.gate.set()
    s = cache.stats()
    assert (s["artifacts"], s["packed"], s["artifact_hits"], s["packed_hits"]) == (1, 1, 1, 0)
    assert cache.get_artifact(ka) is a
    assert cache.get_artifact(kb).to_bytes() == b.to_bytes()      # a's packing was dropped


def test_waiting_artifacts_are_bounded_and_the_request_packs_past_the_bound(
        two_artifacts, monkeypatch):
    from toolc import toolcache
    (ka, a), (kb, b) = two_artifacts[0]
    monkeypatch.setattr(toolcache, "MAX_PENDING", 1)
    packer = Packer(monkeypatch)
    packer.gate.clear()
    cache = ToolCache(max_bytes=0)
    cache.put_artifact(ka, a)                  # waits: the packer holds it
    assert packer.started.wait(30)
    cache.put_artifact(kb, b)                  # one waits already: packed by this thread
    assert packer.threads[-1] is packer.main
    packer.gate.set()
    assert cache.stats()["packed"] == 2


def test_a_cache_without_background_packing_packs_in_the_request(two_artifacts, monkeypatch):
    (ka, a), (kb, b) = two_artifacts[0]
    packer = Packer(monkeypatch)
    cache = ToolCache(max_bytes=0, background=False)
    cache.put_artifact(ka, a)
    assert packer.threads == [packer.main]
    assert cache._pending == {} and cache.stats()["packed"] == 1


def test_a_forked_child_packs_what_its_parent_was_packing(two_artifacts, monkeypatch):
    import os
    import time
    (ka, a), _ = two_artifacts[0]
    packer = Packer(monkeypatch)
    packer.gate.clear()
    cache = ToolCache(max_bytes=0)
    cache.put_artifact(ka, a)
    assert packer.started.wait(30)             # the parent's packer is in the middle of a
    pid = os.fork()
    if pid == 0:                               # the child: no packing thread, a fresh lock
        ok = False
        try:
            packer.main = threading.current_thread()
            ok = cache.stats()["packed"] == 1 and cache.get_artifact(ka) is not None
        finally:
            os._exit(0 if ok else 1)
    try:
        deadline = time.monotonic() + 60
        while (done := os.waitpid(pid, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        if done[0] == 0:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            pytest.fail("the forked child hung on its parent's packing")
        assert os.waitstatus_to_exitcode(done[1]) == 0
    finally:
        packer.gate.set()
    assert cache.stats()["packed"] == 1
