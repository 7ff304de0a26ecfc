"""toolc.walk.blockruns: a stitched DFA's blocks' runs kept. The walk that takes the
blocks' states' runs from the kept ones is the whole DFA's walk, array for array (full and
sparse), over random tool sets and option sets; compiles through it keep their bytes.

Real parts only: the Qwen3 vocabulary, tools from bench/gen_tools.py (schemas/tools80.json).
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

import toolc
from toolc import assemble
from toolc.compiler import build_dfa
from toolc.errors import ToolcError
from toolc.toolcache import ToolCache
from toolc.walk import blockruns, walk
from toolc.walk.index import TokenIndex

with open("schemas/tools80.json", encoding="utf-8") as fh:
    CATALOGUE = json.load(fh)

FIELDS = [f for f in TokenIndex.__dataclass_fields__]
# hermes (the format with blocks) under options that shape the framing and the blocks
OPTIONS = [{}, {"tool_choice": "required"}, {"parallel": False}, {"max_calls": 2},
           {"reasoning": True}, {"whitespace": "compact"}, {"tool_choice": "none"}]


def differ(a: TokenIndex, b: TokenIndex) -> list[str]:
    """The fields where two indexes differ (values or array types)."""
    out = []
    for f in FIELDS:
        x, y = getattr(a, f), getattr(b, f)
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            if x is None or y is None or x.dtype != y.dtype or not np.array_equal(x, y):
                out.append(f)
        elif x != y:
            out.append(f)
    return out


def check_sets(qwen, trials: int, most: int, seed: int) -> int:
    """Random subsets, option sets and string modes, through one ToolCache (blocks seen
    before and new ones): the walk with kept blocks equals the whole walk (full) and the
    two-part walk (sparse, as the compiler asks it). Returns how many sets had blocks."""
    rng = random.Random(seed)
    cache = ToolCache()
    done = 0
    for _ in range(trials):
        opts = rng.choice(OPTIONS)
        tools = rng.sample(CATALOGUE, rng.randint(1, most))
        try:
            b = build_dfa(tools, qwen, cache=cache, **opts)
        except ToolcError:
            continue
        if not b.blocks:
            continue
        for sparse in (True, False):
            kept = assemble.walk_parts(b.dfa, qwen, b.symbols, sparse_twins=sparse,
                                       blocks=b.blocks)
            want = assemble.walk_parts(b.dfa, qwen, b.symbols, sparse_twins=sparse)
            assert differ(kept, want) == [], (opts, sparse)
        assert differ(kept, walk(b.dfa, qwen, b.symbols)) == [], opts
        done += 1
    return done


def test_kept_blocks_walk_as_the_whole_walk(qwen):
    assert check_sets(qwen, trials=6, most=5, seed=8) >= 4


@pytest.mark.slow
def test_kept_blocks_walk_as_the_whole_walk_on_many_sets(qwen):
    assert check_sets(qwen, trials=30, most=14, seed=88) >= 20


def test_a_blocks_runs_are_kept_and_found_again(qwen):
    blockruns.clear()
    cache = ToolCache()
    a = build_dfa(CATALOGUE[:3], qwen, cache=cache)
    assemble.walk_parts(a.dfa, qwen, a.symbols, sparse_twins=True, blocks=a.blocks)
    first = blockruns.stats()
    assert first["block_misses"] >= 3 and first["blocks"] >= 3
    # the same tools in another set, another order: their blocks found, other states' numbers
    b = build_dfa([CATALOGUE[40], CATALOGUE[2], CATALOGUE[0]], qwen, cache=cache)
    got = assemble.walk_parts(b.dfa, qwen, b.symbols, sparse_twins=True, blocks=b.blocks)
    after = blockruns.stats()
    assert after["block_hits"] >= first["block_hits"] + 2
    assert differ(got, assemble.walk_parts(b.dfa, qwen, b.symbols, sparse_twins=True)) == []


def test_twins_the_kept_walk_did_not_pair_are_clipped_from_full_runs(qwen):
    # kept walks stripped of their near twins (every run copied in): each union twin among
    # the blocks' states takes its full runs, clipped to the union's own stretches
    blockruns.clear()
    cache = ToolCache()
    a = build_dfa(CATALOGUE[5:9], qwen, cache=cache)
    assemble.walk_parts(a.dfa, qwen, a.symbols, sparse_twins=True, blocks=a.blocks)
    with blockruns._lock:
        for key, (ref, fp, index, size) in list(blockruns._walked.items()):
            blockruns._walked[key] = (ref, fp, index.full(), size)
    b = build_dfa(CATALOGUE[5:9][::-1], qwen, cache=cache)
    index = assemble.walk_parts(b.dfa, qwen, b.symbols, sparse_twins=True, blocks=b.blocks)
    assert blockruns.stats()["block_hits"] >= 4
    assert index.twin_of is not None and (index.twin_of >= 0).any()
    assert differ(index, assemble.walk_parts(b.dfa, qwen, b.symbols, sparse_twins=True)) == []
    blockruns.clear()


def test_compiles_with_kept_blocks_keep_their_bytes(qwen):
    tools = CATALOGUE[10:16]
    blockruns.clear()
    cache = ToolCache()
    toolc.compile_tools(CATALOGUE[10:13], qwen, cache=cache)       # some blocks kept
    cached = toolc.compile_tools(tools, qwen, cache=cache).to_bytes()
    assert blockruns.stats()["block_hits"] >= 3
    assert cached == toolc.compile_tools(tools, qwen).to_bytes()


def test_the_runs_of_blocks_let_go_are_let_go(qwen):
    import gc
    blockruns.clear()
    cache = ToolCache()
    b = build_dfa(CATALOGUE[20:23], qwen, cache=cache)
    assemble.walk_parts(b.dfa, qwen, b.symbols, sparse_twins=True, blocks=b.blocks)
    assert blockruns.stats()["blocks"] >= 3
    del cache, b
    gc.collect()
    c = build_dfa(CATALOGUE[30:31], qwen, cache=ToolCache())
    assemble.walk_parts(c.dfa, qwen, c.symbols, sparse_twins=True, blocks=c.blocks)
    assert blockruns.stats()["blocks"] == 1      # the first set's blocks are gone
