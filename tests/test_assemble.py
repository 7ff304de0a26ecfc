"""toolc.assemble: the walk in two parts (the free-text head, kept across tool sets, and the
rest) is the whole DFA's walk, array for array, over random tool sets, formats and options;
and the head is found again by its content whatever the set around it.

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
from toolc.walk import walk
from toolc.walk.index import TokenIndex

with open("schemas/tools80.json", encoding="utf-8") as fh:
    CATALOGUE = json.load(fh)

FIELDS = [f for f in TokenIndex.__dataclass_fields__]
# formats whose trigger is a special token of Qwen3 (the head is the free text) and formats
# whose trigger is plain text there (walked whole), under tool-choice and reasoning options
OPTIONS = [{}, {"tool_choice": "required"}, {"tool_choice": "none"}, {"parallel": False},
           {"reasoning": "open"}, {"reasoning": True}, {"format": "qwen3-coder"},
           {"format": "granite"}, {"format": "mistral"}, {"format": "pythonic"},
           {"format": "llama3-json"}, {"format": "deepseek-v3"}]


def same_index(a: TokenIndex, b: TokenIndex) -> list[str]:
    """The fields where two indexes differ (values or array types)."""
    out = []
    for f in FIELDS:
        x, y = getattr(a, f), getattr(b, f)
        if isinstance(x, np.ndarray):
            if x.dtype != y.dtype or not np.array_equal(x, y):
                out.append(f)
        elif x != y:
            out.append(f)
    return out


def check_sets(qwen, trials: int, most: int, seed: int) -> int:
    """Random subsets under random options: the two-part walk equals the whole walk.
    Returns how many compared."""
    rng = random.Random(seed)
    done = 0
    for _ in range(trials):
        opts = rng.choice(OPTIONS)
        tools = rng.sample(CATALOGUE, rng.randint(1, most))
        try:
            b = build_dfa(tools, qwen, **opts)
        except ToolcError:      # a format that refuses these tools or options: not this test
            continue
        whole = walk(b.dfa, qwen, b.symbols)
        parts = assemble.walk_parts(b.dfa, qwen, b.symbols)
        assert same_index(whole, parts) == [], (opts, [t["function"]["name"] for t in tools])
        done += 1
    return done


def test_the_two_part_walk_is_the_whole_walk(qwen):
    assert check_sets(qwen, trials=8, most=4, seed=18) >= 6


@pytest.mark.slow
def test_the_two_part_walk_is_the_whole_walk_on_many_sets(qwen):
    assert check_sets(qwen, trials=40, most=12, seed=81) >= 30


def test_a_head_is_found_again_by_its_content(qwen):
    assemble.clear()
    before = assemble.stats()
    a = build_dfa(CATALOGUE[:2], qwen)
    b = build_dfa(CATALOGUE[40:45], qwen)     # other tools, other byte classes and numbering
    assemble.walk_parts(a.dfa, qwen, a.symbols)
    parts = assemble.walk_parts(b.dfa, qwen, b.symbols)
    after = assemble.stats()
    assert after["head_misses"] == before["head_misses"] + 1
    assert after["head_hits"] == before["head_hits"] + 1
    assert same_index(walk(b.dfa, qwen, b.symbols), parts) == []
    # other free text (a reasoning section may open it): another head
    c = build_dfa(CATALOGUE[:2], qwen, reasoning=True)
    assemble.walk_parts(c.dfa, qwen, c.symbols)
    assert assemble.stats()["head_misses"] == after["head_misses"] + 1


def test_the_head_is_closed_under_bytes_and_holds_the_start(qwen):
    b = build_dfa(CATALOGUE[:3], qwen)
    table = b.dfa.trans[:, :b.dfa.alphabet.num_byte_classes]
    head = assemble.byte_closure(table, np.array([0]))
    assert head[0] and not head.all()
    inside = table[head]
    assert head[inside[inside >= 0]].all()


def test_compiles_through_the_two_parts_keep_their_bytes(qwen):
    tools = CATALOGUE[3:6]
    assemble.clear()
    first = toolc.compile_tools(tools, qwen).to_bytes()     # the head walked
    again = toolc.compile_tools(tools, qwen).to_bytes()     # the head from memory
    assert first == again
    assert assemble.stats()["head_hits"] >= 1


def test_counted_regions_walk_the_same_in_two_parts(qwen):
    from conftest import object_schema, tools_list
    tools = tools_list(("note", object_schema({
        "text": {"type": "string", "maxLength": 300},
        "tags": {"type": "array", "items": {"type": "integer"}, "maxItems": 40}})),
        ("ping", object_schema({"host": {"type": "string", "minLength": 2}})))
    b = build_dfa(tools, qwen)
    assert b.dfa.tags is not None and (b.dfa.tags >= 0).any()
    assert same_index(walk(b.dfa, qwen, b.symbols),
                      assemble.walk_parts(b.dfa, qwen, b.symbols)) == []


def test_a_rest_that_runs_back_into_the_head_walks_it_the_same(qwen):
    from toolc.fsm import Sym, alt, compile_expr, lit, seq, star
    # free text of "a"s; the symbol X, then "b" leads back into the free text by a byte
    dfa = compile_expr(seq(star(alt(lit("a"), seq(Sym("X"), lit("b")))), Sym("EOS")))
    symbols = {"X": (qwen.eos_ids[0] - 1,), "EOS": tuple(qwen.eos_ids)}
    table = dfa.trans[:, :dfa.alphabet.num_byte_classes]
    head = assemble.byte_closure(table, np.array([0]))
    out = table[~head]
    assert head[out[out >= 0]].any()        # the rest reaches the head by a byte
    before = assemble.stats()
    parts = assemble.walk_parts(dfa, qwen, symbols)
    after = assemble.stats()
    assert after["head_hits"] + after["head_misses"] == \
        before["head_hits"] + before["head_misses"] + 1     # walked in two parts
    assert same_index(walk(dfa, qwen, symbols), parts) == []


@pytest.mark.parametrize("fmt", ["hermes", "qwen3-coder"])
def test_the_two_part_walk_keeps_the_rests_twins_sparse_and_exact(qwen, fmt):
    """With ``sparse_twins`` (as every compile walks): the rest's near twins stay sparse, and
    filled in they are the whole walk's runs (hermes' closed strings and qwen3-coder's raw
    strings are mostly twins)."""
    tools = json.load(open("schemas/weather.json", encoding="utf-8"))
    b = build_dfa(tools, qwen, format=fmt)
    parts = assemble.walk_parts(b.dfa, qwen, b.symbols, sparse_twins=True)
    assert parts.twin_of is not None and (parts.twin_of >= 0).any()
    assert same_index(walk(b.dfa, qwen, b.symbols), parts.full()) == []


@pytest.mark.parametrize("opts", [{"tool_choice": "required"},
                                  {"tool_choice": "required", "parallel": False}])
def test_a_start_state_the_calls_return_to_keeps_the_near_twins_sparse(qwen, opts):
    """With ``tool_choice="required"`` the head is the start state alone, and every call
    returns to it by bytes, so the rest's walk passes through it. Its near twins stay
    sparse all the same (filled in, tools80's index held some 5.6M runs instead of 840k),
    and the index is the whole walk's once they are filled in."""
    tools = CATALOGUE[:6]
    b = build_dfa(tools, qwen, **opts)
    sparse = assemble.walk_parts(b.dfa, qwen, b.symbols, sparse_twins=True, blocks=b.blocks)
    assert sparse.twin_of is not None and (sparse.twin_of >= 0).any()
    assert same_index(sparse.full(), walk(b.dfa, qwen, b.symbols)) == []


def test_required_calls_with_their_twins_sparse_allow_and_lead_as_filled_in(qwen, monkeypatch):
    """The artifact compiled from the sparse index (the encoder gives a twin its twin's
    default next state, so the bytes differ) allows the same tokens in every state, and each
    leads to the same state, as the artifact compiled with every twin filled in."""
    tools = CATALOGUE[3:9]
    sparse = toolc.compile_tools(tools, qwen, tool_choice="required")
    monkeypatch.setattr(assemble, "_rest_twins", lambda index, head: None)   # filled in
    filled = toolc.compile_tools(tools, qwen, tool_choice="required")
    assert sparse.to_bytes() != filled.to_bytes()
    assert sparse.num_states == filled.num_states
    size = qwen.logits_size
    for q in range(sparse.num_states):
        mask = sparse.state_mask(q)
        assert np.array_equal(mask, filled.state_mask(q)), q
        assert sparse.is_final_state(q) == filled.is_final_state(q)
        ok = np.flatnonzero(np.unpackbits(mask.view(np.uint8), bitorder="little")[:size])
        assert np.array_equal(sparse._dense_targets(q, size)[ok],
                              filled._dense_targets(q, size)[ok]), q
