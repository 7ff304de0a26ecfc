"""toolc.stitch: the DFA stitched from per-tool blocks is the whole grammar's DFA, array for
array (alphabet, table, finality, special symbols), over random tool sets and option sets;
blocks are found again by content in any set and order; formats without blocks, tools with
counted regions and refusals take the whole path, with its errors.

Real parts only: the Qwen3 vocabulary, the tools of schemas/ (bench/gen_tools.py's catalogue).
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

import toolc
from toolc import stitch
from toolc.compiler import build_dfa
from toolc.errors import ToolcError, UnsupportedSchemaError
from toolc.formats.hermes import Hermes
from toolc.toolcache import ToolCache

with open("schemas/tools80.json", encoding="utf-8") as fh:
    CATALOGUE = json.load(fh)
with open("schemas/assistant.json", encoding="utf-8") as fh:
    ASSISTANT = json.load(fh)

OPTIONS = [{}, {"tool_choice": "required"}, {"tool_choice": "none"}, {"parallel": False},
           {"max_calls": 2}, {"max_calls": 3, "tool_choice": "required"},
           {"reasoning": "open"}, {"reasoning": True}, {"whitespace": "flexible"},
           {"lenient": True}, {"whitespace": "compact"}]


def _tools(data):
    return data["tools"] if isinstance(data, dict) else data


def same_dfa(a, b) -> list[str]:
    """The parts where two built DFAs differ."""
    out = []
    if not np.array_equal(a.dfa.alphabet.byte_class, b.dfa.alphabet.byte_class):
        out.append("byte classes")
    if a.dfa.alphabet.symbols != b.dfa.alphabet.symbols:
        out.append("symbols")
    if a.dfa.trans.shape != b.dfa.trans.shape or not np.array_equal(a.dfa.trans, b.dfa.trans):
        out.append("table")
    elif not np.array_equal(a.dfa.final, b.dfa.final):
        out.append("final")
    if a.symbols != b.symbols:
        out.append("token ids")
    return out


def check_sets(qwen, trials: int, most: int, seed: int) -> int:
    """Random subsets of the catalogue (and the assistant's tools) under random options:
    stitched equals whole. Returns how many sets were stitched."""
    rng = random.Random(seed)
    pool = _tools(CATALOGUE) + _tools(ASSISTANT)
    cache = ToolCache()
    done = 0
    for _ in range(trials):
        opts = dict(rng.choice(OPTIONS))
        tools = rng.sample(pool, rng.randint(1, most))
        if rng.random() < 0.2:
            opts["tool_choice"] = tools[0]["function"]["name"]
        if rng.random() < 0.2:
            tools = tools + tools[:1]      # a tool twice: the same block, one placeholder
            tools[-1] = {"type": "function", "function": {
                **tools[-1]["function"], "name": tools[-1]["function"]["name"] + "_again"}}
        stitched = stitch.stats()["stitched"]
        try:
            a = build_dfa(tools, qwen, cache=cache, **opts)
        except ToolcError:
            continue
        done += stitch.stats()["stitched"] > stitched
        b = build_dfa(tools, qwen, **opts)      # no cache: the whole grammar
        with stitch.whole_path():
            assert same_dfa(a, build_dfa(tools, qwen, cache=cache, **opts)) == []
        assert same_dfa(a, b) == [], (opts, [t["function"]["name"] for t in tools])
    return done


def test_the_stitched_dfa_is_the_whole_dfa(qwen):
    assert check_sets(qwen, trials=10, most=5, seed=18) >= 8


@pytest.mark.slow
def test_the_stitched_dfa_is_the_whole_dfa_on_many_sets(qwen):
    assert check_sets(qwen, trials=40, most=14, seed=81) >= 32


def test_open_strings_stitch_the_same(qwen, monkeypatch):
    monkeypatch.setattr(Hermes, "closed_strings", False)
    assert check_sets(qwen, trials=5, most=6, seed=7) >= 4


def test_blocks_are_found_again_in_any_set_and_order(qwen):
    cache = ToolCache()
    tools = _tools(CATALOGUE)[:6]
    build_dfa(tools, qwen, cache=cache)
    assert cache.stats()["block_misses"] == 6 and cache.stats()["blocks"] == 6 + 1  # framing
    again = tools[3:] + tools[:2]
    a = build_dfa(again, qwen, parallel=False, cache=cache)
    assert cache.stats()["block_misses"] == 6 and cache.stats()["block_hits"] == 5
    assert cache.stats()["framing_misses"] == 2
    # the same names, blocks and options: the framing from the cache too
    assert same_dfa(a, build_dfa(again, qwen, parallel=False, cache=cache)) == []
    assert cache.stats()["framing_hits"] == 1
    assert same_dfa(a, build_dfa(again, qwen, parallel=False)) == []
    cache.clear()
    assert cache.stats()["blocks"] == 0


def test_blocks_are_bounded_in_bytes(qwen):
    cache = ToolCache(max_bytes=200_000)        # a few blocks of tools80 at most
    tools = _tools(CATALOGUE)[20:28]
    a = build_dfa(tools, qwen, cache=cache)
    held = cache.stats()
    assert 1 <= held["blocks"] < 8 and held["block_bytes"] <= 100_000
    assert same_dfa(a, build_dfa(tools, qwen)) == []
    assert same_dfa(build_dfa(tools, qwen, cache=cache), a) == []


@pytest.mark.parametrize("fmt", ["mistral", "pythonic", "llama3-json"])
def test_formats_without_blocks_take_the_whole_path(qwen, fmt):
    """Plain-text triggers (in Qwen3's vocabulary) and calls that end without a special
    token: their arguments' ends are not closed under bytes; no block is built."""
    cache = ToolCache()
    a = build_dfa(_tools(CATALOGUE)[:3], qwen, format=fmt, cache=cache)
    assert cache.stats()["block_hits"] + cache.stats()["block_misses"] == 0
    assert same_dfa(a, build_dfa(_tools(CATALOGUE)[:3], qwen, format=fmt)) == []


def test_counted_regions_take_the_whole_path(qwen):
    from conftest import object_schema, tools_list
    tools = tools_list(("note", object_schema({"text": {"type": "string", "maxLength": 300}})),
                       ("ping", object_schema({"host": {"type": "string"}})))
    a = build_dfa(tools, qwen, cache=ToolCache())
    assert a.dfa.tags is not None
    assert same_dfa(a, build_dfa(tools, qwen)) == []


def test_a_refusal_is_the_whole_paths(qwen):
    from conftest import object_schema, tools_list
    tools = tools_list(("ok", object_schema({"a": {"type": "integer"}})),
                       ("bad", object_schema({"a": {"enum": ["x</tool_call>"]}})))
    cache = ToolCache()
    with pytest.raises(UnsupportedSchemaError) as stitched:
        build_dfa(tools, qwen, cache=cache)
    with pytest.raises(UnsupportedSchemaError) as whole:
        build_dfa(tools, qwen)
    assert str(stitched.value) == str(whole.value)
    assert stitched.value.tool == "bad"
    # chosen away, the bad tool is not framed: neither path refuses it
    a = build_dfa(tools, qwen, tool_choice="ok", cache=cache)
    assert cache.stats()["block_hits"] == 1     # ok's, built before bad was refused
    assert same_dfa(a, build_dfa(tools, qwen, tool_choice="ok")) == []


def test_stitched_compiles_keep_the_artifacts_bytes(qwen):
    tools = _tools(CATALOGUE)[10:14]
    cache = ToolCache()
    stitched = toolc.compile_tools(tools, qwen, cache=cache).to_bytes()
    assert cache.stats()["block_misses"] == 4
    assert toolc.compile_tools(tools, qwen).to_bytes() == stitched
    # a known set in another order: its blocks from the cache, its bytes the whole path's
    again = tools[::-1]
    assert toolc.compile_tools(again, qwen, cache=cache).to_bytes() == \
        toolc.compile_tools(again, qwen).to_bytes()
    assert cache.stats()["block_hits"] == 4
