"""Nested counted regions: a counted string inside a counted array's items or a counted
object's members (toolc/fsm/positions.py nests the tags, toolc/walk/itemcounts.py splits
them, toolc/runtime/nested.py's ``Both`` keeps the tuple of counters).

The slow twin is the artifact with every bound built as states (``expanded_lengths`` and
``expanded_items``): at every step of every sampled walk both must allow the same tokens and
agree on accepting, after ``rollback`` and ``copy`` too.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

import toolc
from toolc.runtime.counted import CountedMatcher
from toolc.runtime.nested import Both
from toolc.schema.arrays import expanded_items
from toolc.schema.strings import expanded_lengths

from test_itemcounts import INT, VOCAB, _into_array, _tok, allowed, array, forge_sections, \
    steered_walks, tool, walk_pair


@pytest.fixture(autouse=True)
def count_every_bound(monkeypatch):
    """Small item bounds are states by default; these tests count them, so the twins
    differ."""
    monkeypatch.setattr("toolc.schema.arrays.COUNT_ABOVE", 0)
    monkeypatch.setattr("toolc.schema.arrays.COUNT_FROM", 0)


def twins(tools: list, **opts):
    counted = toolc.compile_tools(tools, VOCAB, tool_choice="required", **opts)
    with expanded_items(), expanded_lengths():
        expanded = toolc.compile_tools(tools, VOCAB, tool_choice="required", **opts)
    return counted, expanded


def s(lo=None, hi=None) -> dict:
    out = {"type": "string"}
    if lo is not None:
        out["minLength"] = lo
    if hi is not None:
        out["maxLength"] = hi
    return out


CASES = {
    "3 strings of 4": array(s(None, 4), None, 3),
    "2-3 strings of 2-5": array(s(2, 5), 2, 3),
    "strings of exactly 3, 1-2": array(s(3, 3), 1, 2),
    "objects with a string": array({"type": "object", "properties": {
        "n": s(None, 3), "i": INT}, "required": ["n"]}, 0, 2),
    "prefix string then ints": {"type": "array", "prefixItems": [s(1, 3)], "items": INT,
                                "maxItems": 3},
    "members of strings": {"type": "object", "additionalProperties": s(None, 3),
                           "maxProperties": 2},
    "2 arrays of 0-3 ints": array(array(INT, 0, 3), None, 2),
    "1-3 arrays of 1-2 strings": array(array({"type": "string"}, 1, 2), 1, 3),
    "objects with an array": array({"type": "object", "properties": {
        "v": array(INT, 0, 2)}, "required": ["v"]}, 0, 2),
    "members of arrays": {"type": "object", "additionalProperties": array(INT, 1, 2),
                          "maxProperties": 2},
    "objects of 1-2 members, 2": array({"type": "object", "additionalProperties": INT,
                                        "minProperties": 1, "maxProperties": 2}, None, 2),
    "2 arrays of 1-2 strings of 2": array(array(s(None, 2), 1, 2), None, 2),
    "members of arrays of strings": {"type": "object", "additionalProperties": array(
        s(1, 2), 0, 2), "maxProperties": 2},
}


@pytest.mark.parametrize("name", list(CASES))
def test_nested_counts_match_the_expanded_twin(name):
    counted, expanded = twins(tool(CASES[name]))
    assert isinstance(counted._counting, Both)
    assert not isinstance(expanded.matcher(), CountedMatcher)
    inner = counted._counting.n or counted._counting.s
    nested = (np.asarray(counted._counting.i.tag) >= 0) & (np.asarray(inner.tag) >= 0)
    assert nested.any(), "no state is inside both regions"
    rng = random.Random(name)
    for w in range(14):
        a, b = counted.matcher(), expanded.matcher()
        walk_pair(a, b, rng, tag=w)
        if a.num_consumed > 3:          # rollback and copy keep both counters
            c = a.copy()
            a.rollback(3)
            b.rollback(3)
            assert np.array_equal(allowed(a), allowed(b))
            assert c.num_consumed == a.num_consumed + 3 and c.counter != () and c.counter
            assert np.array_equal(allowed(c.copy()), allowed(c))
            walk_pair(a, b, rng, steps=40, tag=("after rollback", w))


def test_forced_tokens_follow_both_counters_as_the_expanded_twin_does():
    counted, expanded = twins(tool(array({"type": "string", "enum": ["ab"], "maxLength": 2},
                                         2, 2)))
    ids = VOCAB.encode('<tool_call>\n{"name": "post", "arguments": {"a": ["ab", "ab"]}}')
    a, b = counted.matcher(), expanded.matcher()
    for t in ids:
        assert a.forced_tokens() == b.forced_tokens(), VOCAB.decode_bytes([t])
        a.advance(t)
        b.advance(t)


def test_both_bounds_exactly_then_refused():
    """maxItems 2 of strings maxLength 3: the fourth character and the third item are refused,
    each with the pair of counters unchanged."""
    art = toolc.compile_tools(tool(array(s(None, 3), 0, 2)), VOCAB)
    assert isinstance(art._counting, Both)
    m = _into_array(art)
    m.advance(_tok('["'))
    assert m.counter == (1, 0)
    for i in range(3):
        m.advance(_tok("x"))
    assert m.counter == (1, 3)
    with pytest.raises(toolc.RejectedTokenError):
        m.advance(_tok("x"))
    assert m.counter == (1, 3)
    m.advance(_tok('",'))
    m.advance(_tok(' "'))
    assert m.counter == (2, 0)
    m.advance(_tok("y"))
    assert not m.accepts(_tok('",')) and m.accepts(_tok('"]'))
    m.advance(_tok('"]'))
    assert m.counter == (0, 0)


def test_the_bounds_cost_no_states():
    """A 1e9 array of 1e6-character strings is the artifact of a 10 array of 10-character
    strings, give or take the bounds' bytes."""
    sizes = []
    for n, k in ((10, 10), (1000, 280), (10 ** 9, 10 ** 6)):
        art = toolc.compile_tools(tool(array(s(None, k), 1, n)), VOCAB)
        assert isinstance(art._counting, Both)
        sizes.append((art.num_states, art.num_mask_rows, len(art.to_bytes())))
    assert len({x[:2] for x in sizes}) == 1
    assert max(x[2] for x in sizes) - min(x[2] for x in sizes) < 64


SCHEMA = {"type": "object", "properties": {
    "tags": array(s(1, 4), 1, 3),
    "rows": array({"type": "object", "properties": {"name": s(None, 5), "id": INT},
                   "required": ["name"]}, 0, 2),
    "meta": {"type": "object", "additionalProperties": s(None, 3), "maxProperties": 2},
    "grid": array(array(INT, 0, 3), 1, 2)},
    "required": ["tags"], "additionalProperties": False}
TOOLS = [{"type": "function", "function": {"name": "post", "parameters": SCHEMA}}]


def test_random_walks_steered_to_both_bounds_validate():
    art = toolc.compile_tools(TOOLS, VOCAB, tool_choice="required")
    assert isinstance(art._counting, Both)
    assert steered_walks(art, TOOLS, SCHEMA, seed=4, walks=40, steps=400, settle=100,
                         struct=0.5) >= 5


def test_valid_instances_rendered_by_the_model_are_accepted():
    from hypothesis import HealthCheck, given, settings
    from hypothesis_jsonschema import from_schema
    from helpers import assert_rendered_call_accepted
    art = toolc.compile_tools(TOOLS, VOCAB)
    assert isinstance(art._counting, Both)

    @settings(max_examples=60, deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(from_schema(SCHEMA))
    def check(args):
        args = {k: args[k] for k in SCHEMA["properties"] if k in args}
        args = {k: ([{kk: v[kk] for kk in ("name", "id") if kk in v} for v in val]
                    if k == "rows" else val) for k, val in args.items()}
        assert_rendered_call_accepted(art, VOCAB, "post", args)
    check()


def test_nesting_stops_at_three_levels():
    """An array of arrays of counted strings counts all three (the counter a triple); an
    array of arrays of arrays of counted strings keeps the outermost count as states."""
    art = toolc.compile_tools(tool(array(array(s(None, 3), 0, 40), 0, 3)), VOCAB)
    assert {"itm_tag", "itn_tag", "cnt_tag"} <= set(art._arrays)
    m = _into_array(art)
    for t in VOCAB.encode("[[" + ", ".join(['"abc"'] * 40)):
        m.advance(t)
    assert m.accepts(_tok("]")) and not m.accepts(_tok(","))
    assert m.counter == (1, 40, 0)
    m.advance(_tok("],"))
    m.advance(_tok(' ["'))
    assert m.counter == (2, 1, 0)
    m.advance(_tok("abc"))
    assert m.counter == (2, 1, 3) and not m.accepts(_tok("a"))
    deep = toolc.compile_tools(tool(array(array(array(s(None, 3), 0, 40), 0, 40), 0, 3)),
                               VOCAB)
    m = _into_array(deep)
    for t in VOCAB.encode('[[["abc"'):
        m.advance(t)
    assert m.counter == (1, 1, 0)           # the outermost array's count is its states


def test_an_array_of_arrays_counts_both():
    art = toolc.compile_tools(tool(array(array(INT, 0, 40), 0, 50)), VOCAB)
    assert "itn_tag" in art._arrays
    m = _into_array(art)
    for t in VOCAB.encode("[[" + ", ".join(["1"] * 40)):
        m.advance(t)
    assert m.counter == (1, 40)
    assert m.accepts(_tok("]")) and not m.accepts(_tok(","))
    m.advance(_tok("],"))
    assert m.counter == (1, 0)


def test_forged_sections_of_a_nested_artifact_are_refused_or_consistent():
    """Both kinds' sections forged, one entry at a time: refused, or a walk without a crash
    (a state a forged tag puts in one region only, or in both, included)."""
    from toolc.runtime.countfile import COUNTED_SECTIONS
    from toolc.runtime.itemfile import INNER_ITEM_SECTIONS, ITEM_SECTIONS
    art = toolc.compile_tools(tool(array(s(None, 3), 1, 2)), VOCAB)
    assert isinstance(art._counting, Both)
    forge_sections(art, {**ITEM_SECTIONS, **COUNTED_SECTIONS}, '{"a": ["abc", "de", "f"]}',
                   seed=9, tries=120)
    art = toolc.compile_tools(tool(array(array(INT, 0, 2), 1, 2)), VOCAB)
    assert "itn_tag" in art._arrays
    forge_sections(art, {**ITEM_SECTIONS, **INNER_ITEM_SECTIONS}, '{"a": [[1, 2], [3], []]}',
                   seed=10, tries=120)


def test_an_ambiguous_nested_count_keeps_the_strings_counted():
    """Items nested deeper than the item lexer follows (9 objects): the compiler's first
    fallback builds the item count as states with the string still counted (every bound as
    states would be 40 copies of a 300-character chain)."""
    inner = s(None, 300)
    for _ in range(9):
        inner = {"type": "object", "properties": {"k": inner}, "required": ["k"]}
    art = toolc.compile_tools(tool(array(inner, 0, 40)), VOCAB)
    assert "cnt_tag" in art._arrays and "itm_tag" not in art._arrays
    m = _into_array(art)
    for t in VOCAB.encode("[" + '{"k": ' * 9 + '"' + "x" * 300):
        m.advance(t)
    assert m.counter == 300
    assert not m.accepts(_tok("x")) and m.accepts(_tok('"'))
