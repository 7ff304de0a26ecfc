"""Counted arrays (toolc/walk/itemcounts.py, toolc/runtime/counters.py).

A bounded array is one unbounded automaton region plus a counter of items started. The slow
twin is the artifact compiled with the item counts expanded into states (``expanded_items``):
at every step of every sampled walk both must allow the same tokens and agree on accepting.
Walks are steered to the bounds: commas and closing brackets often, tokens that start two
items at once (``","``) where the items are strings.
"""

from __future__ import annotations

import json
import random

import jsonschema
import numpy as np
import pytest

import toolc
from toolc.runtime.counted import CountedMatcher
from toolc.schema.arrays import expanded_items
from toolc.tokenizer import load_vocabulary

from helpers import check_output
from forge import load_changed

VOCAB = load_vocabulary("qwen")
STRUCT = np.array([i for i, b in enumerate(VOCAB.token_bytes)
                   if b and any(c in b for c in b',[]{}"')])
CLOSING = np.array([i for i, b in enumerate(VOCAB.token_bytes) if b and b[-1:] in b']}"'])


def tool(s: dict) -> list:
    return [{"type": "function", "function": {"name": "post", "parameters": {
        "type": "object", "properties": {"a": s, "n": {"type": "integer"}},
        "required": ["a"]}}}]


def array(items, lo=None, hi=None, **kw) -> dict:
    s = {"type": "array", "items": items, **kw}
    if lo is not None:
        s["minItems"] = lo
    if hi is not None:
        s["maxItems"] = hi
    return s


@pytest.fixture(autouse=True)
def count_every_bound(monkeypatch):
    """Small bounds are states by default (they cost less than the count pass); these tests
    count every bound, so that the twins differ."""
    monkeypatch.setattr("toolc.schema.arrays.COUNT_ABOVE", 0)
    monkeypatch.setattr("toolc.schema.arrays.COUNT_FROM", 0)


def twins(tools: list, **opts):
    counted = toolc.compile_tools(tools, VOCAB, tool_choice="required", **opts)
    with expanded_items():
        expanded = toolc.compile_tools(tools, VOCAB, tool_choice="required", **opts)
    return counted, expanded


def allowed(m) -> np.ndarray:
    return np.flatnonzero(np.unpackbits(m.mask().view(np.uint8), bitorder="little"))


def steered_walks(art, tools, schema, seed: int, walks: int, steps: int, settle: int,
                  struct: float) -> int:
    """Random walks through ``art``, drawn to JSON punctuation (with probability ``struct``)
    and, after ``settle`` steps, to closing tokens and the end: every finished walk's calls
    parse and validate against ``schema``. Returns how many walks finished."""
    rng = random.Random(seed)
    done = 0
    for _ in range(walks):
        m = art.matcher()
        ids = []
        for step in range(steps):
            if m.is_terminated():
                break
            pool = allowed(m)
            assert len(pool), "a counted state with nothing allowed"
            st = pool[np.isin(pool, STRUCT, assume_unique=True)]
            special = pool[pool >= len(VOCAB.token_bytes)]
            closing = pool[np.isin(pool, CLOSING, assume_unique=True)]
            if step > settle and len(special):
                cand = special
            elif step > settle and len(closing):
                cand = closing
            else:
                cand = st if len(st) and rng.random() < struct else pool
            t = int(cand[rng.randrange(len(cand))])
            m.advance(t)
            ids.append(t)
        if not m.is_terminated():
            continue
        done += 1
        text = VOCAB.decode_bytes(ids).decode("utf-8")
        for call in check_output(text, tools)["parsed"]:
            jsonschema.validate(call["arguments"], schema)
            assert json.dumps(call["arguments"])
    return done


def _tok(text: str) -> int:
    ids = VOCAB.encode(text)
    assert len(ids) == 1, (text, ids)
    return ids[0]


INT = {"type": "integer"}
STR = {"type": "string"}
OBJ = {"type": "object", "properties": {"x": {"type": "array", "items": INT},
                                        "y": STR}, "required": ["x"]}
SHAPES = {"int": INT, "str": STR, "obj": OBJ, "nested": {"type": "array", "items": STR},
          "any": {}}
CASES = [("int", 0, 3), ("int", 2, 5), ("int", 4, 4), ("int", 3, None), ("int", None, 0),
         ("str", 1, 4), ("str", 5, None), ("obj", 1, 3), ("nested", 0, 2), ("any", 2, 3)]


def walk_pair(a, b, rng, steps=160, tag=""):
    for step in range(steps):
        A, B = allowed(a), allowed(b)
        assert np.array_equal(A, B), (tag, step, set(A.tolist()) ^ set(B.tolist()))
        assert a.is_accepting() == b.is_accepting()
        if b.is_terminated() or not len(A):
            return
        s = A[np.isin(A, STRUCT, assume_unique=True)]
        pool = s if len(s) and rng.random() < 0.6 else A
        t = int(pool[rng.randrange(len(pool))])
        assert a.accepts(t) and b.accepts(t)
        for x in thinned_out(a, A):     # a bound's refusal holds in advance, not only the mask
            assert not a.accepts(x) and not b.accepts(x), (tag, step, x)
        a.advance(t)
        b.advance(t)


def thinned_out(m, allowed_ids, most: int = 8) -> list:
    """Up to ``most`` tokens the state's stored row allows but ``m``'s mask does not (the
    ones a counter's bound removed), spread over them."""
    stored = np.flatnonzero(np.unpackbits(m._t.row_view[m.state].view(np.uint8),
                                          bitorder="little"))
    out = np.setdiff1d(stored, allowed_ids, assume_unique=True)
    return out[::max(1, len(out) // most)][:most].tolist()


@pytest.mark.parametrize("shape,lo,hi", CASES)
def test_counted_array_matches_its_expanded_twin(shape, lo, hi):
    counted, expanded = twins(tool(array(SHAPES[shape], lo, hi)))
    assert isinstance(counted.matcher(), CountedMatcher)
    assert not isinstance(expanded.matcher(), CountedMatcher)
    rng = random.Random(f"{shape}-{lo}-{hi}")
    for w in range(12):
        a, b = counted.matcher(), expanded.matcher()
        walk_pair(a, b, rng, tag=w)
        if a.num_consumed > 3:          # rollback and copy keep the counter
            c = a.copy()
            a.rollback(3)
            b.rollback(3)
            assert np.array_equal(allowed(a), allowed(b))
            assert c.num_consumed == a.num_consumed + 3
            assert np.array_equal(allowed(c.copy()), allowed(c))
            walk_pair(a, b, rng, steps=40, tag=("after rollback", w))


def test_prefix_items_then_bounded_items_match_the_expanded_twin():
    s = {"type": "array", "prefixItems": [STR, INT], "items": {"type": "boolean"},
         "minItems": 1, "maxItems": 4}
    counted, expanded = twins(tool(s))
    assert isinstance(counted.matcher(), CountedMatcher)
    rng = random.Random(11)
    for w in range(15):
        walk_pair(counted.matcher(), expanded.matcher(), rng, tag=w)


def _into_array(art):
    m = art.matcher()
    for t in VOCAB.encode('<tool_call>\n{"name": "post", "arguments": {"a": '):
        m.advance(t)
    return m


@pytest.mark.parametrize("hi", [3, 100])
def test_exactly_the_maximum_then_the_bracket(hi):
    art = toolc.compile_tools(tool(array(INT, 1, hi)), VOCAB)
    m = _into_array(art)
    m.advance(_tok("["))
    one, comma, close = _tok("1"), _tok(","), _tok("]")
    assert not m.accepts(close)               # minItems 1
    for i in range(hi):
        if i:
            m.advance(comma)
            m.advance(_tok(" "))
        m.advance(one)
        assert m.counter == i + 1
    assert m.accepts(close) and not m.accepts(comma)
    with pytest.raises(toolc.RejectedTokenError):
        m.advance(comma)
    assert m.counter == hi                    # unchanged after a rejection
    m.advance(close)
    assert m.counter == 0


def test_a_token_that_starts_two_items_counts_both():
    art = toolc.compile_tools(tool(array(STR, 0, 2)), VOCAB)
    m = _into_array(art)
    m.advance(_tok('["'))
    assert m.counter == 1
    m.advance(_tok("a"))
    two = _tok('",')             # closes the first; the space and quote after start the second
    m.advance(two)
    m.advance(_tok(' "'))
    assert m.counter == 2
    m.advance(_tok("b"))
    assert not m.accepts(_tok('",')) and m.accepts(_tok('"]'))


def test_minimum_forbids_closing_early():
    art = toolc.compile_tools(tool(array(INT, 3, None)), VOCAB)
    m = _into_array(art)
    m.advance(_tok("["))
    for i in range(3):
        m.advance(_tok("7"))
        assert m.accepts(_tok("]")) == (i == 2)
        if i < 2:
            m.advance(_tok(","))
            m.advance(_tok(" "))


def test_the_bound_costs_no_states():
    sizes = {}
    for hi in (10, 1000, 10 ** 9):
        art = toolc.compile_tools(tool(array(OBJ, 1, hi)), VOCAB)
        assert isinstance(art.matcher(), CountedMatcher)
        sizes[hi] = (art.num_states, art.num_mask_rows, len(art.to_bytes()))
    (s1, r1, b1), (s2, r2, b2), (s3, r3, b3) = sizes.values()
    assert s1 == s2 == s3 and r1 == r2 == r3
    assert max(b1, b2, b3) - min(b1, b2, b3) < 64


def test_counted_strings_inside_a_bounded_array_nest():
    """Both counted (tests/test_nestedcounts.py compares them with their expanded twin)."""
    art = toolc.compile_tools(tool(array({"type": "string", "maxLength": 5}, 0, 3)), VOCAB)
    from toolc.runtime.nested import Both
    assert isinstance(art._counting, Both)
    assert "itm_tag" in art._arrays and "cnt_tag" in art._arrays


SCHEMA = {"type": "object", "properties": {
    "title": {"type": "string", "maxLength": 8},
    "ids": array(INT, 1, 4),
    "rows": array(OBJ, 0, 2),
    "words": array(STR, 2, 3),
    "meta": {"type": "object", "additionalProperties": INT, "maxProperties": 2}},
    "required": ["ids", "words"], "additionalProperties": False}
TOOLS = [{"type": "function", "function": {"name": "post", "parameters": SCHEMA}}]


@pytest.fixture(scope="module")
def post_artifact():
    with pytest.MonkeyPatch.context() as mp:      # made before the autouse fixture runs
        mp.setattr("toolc.schema.arrays.COUNT_ABOVE", 0)
        mp.setattr("toolc.schema.arrays.COUNT_FROM", 0)
        return toolc.compile_tools(TOOLS, VOCAB)


def test_strings_and_arrays_counted_in_one_artifact(post_artifact):
    from toolc.runtime.nested import Both
    assert isinstance(post_artifact._counting, Both)


def test_valid_instances_rendered_by_the_model_are_accepted(post_artifact):
    from hypothesis import HealthCheck, given, settings
    from hypothesis_jsonschema import from_schema
    from helpers import assert_rendered_call_accepted

    @settings(max_examples=60, deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(from_schema(SCHEMA))
    def check(args):
        args = {k: args[k] for k in SCHEMA["properties"] if k in args}
        args = {k: ([{kk: v[kk] for kk in OBJ["properties"] if kk in v} for v in val]
                    if k == "rows" else val) for k, val in args.items()}
        assert_rendered_call_accepted(post_artifact, VOCAB, "post", args)
    check()


def test_random_walks_steered_to_the_bounds_validate():
    post_artifact = toolc.compile_tools(TOOLS, VOCAB, tool_choice="required")
    assert steered_walks(post_artifact, TOOLS, SCHEMA, seed=3, walks=40, steps=500, settle=120,
                         struct=0.7) >= 5


def test_forged_item_sections_are_refused_or_consistent():
    """Format 5: one entry of a counted-array section changed, the checksum recomputed: the
    file is refused with ArtifactError, or it loads and every mask and advance stays in
    bounds (no IndexError, no crash)."""
    from toolc.runtime.itemfile import ITEM_SECTIONS
    art = toolc.compile_tools(tool(array(INT, 1, 3)), VOCAB)
    forge_sections(art, ITEM_SECTIONS, '{"a": [1, 2, 3, 4]}', seed=5)


def forge_sections(art, types: dict, arguments: str, seed: int, tries: int = 60):
    """Change one entry of one of the sections ``types`` names, recompute the checksum: the
    file must be refused or load and walk the call with ``arguments`` without a crash."""
    from toolc.runtime.fileformat import unpack
    header, sections = unpack(art.to_bytes())
    rng = random.Random(seed)
    text_ids = VOCAB.encode(f'<tool_call>\n{{"name": "post", "arguments": {arguments}}}')
    loaded = 0
    for _ in range(tries):
        name = rng.choice(sorted(types))
        arr = np.frombuffer(sections[name], dtype=np.dtype(types[name])).copy()
        if not len(arr):
            continue
        i = rng.randrange(len(arr))
        arr[i] = np.array(rng.choice([-2, -1, 0, 1, 5, 127, 200, 1 << 40])).astype(arr.dtype)
        loaded += load_changed(art, header, sections, name, arr, text_ids,
                               each=lambda m: m.allowed_token_ids())
    assert loaded       # some changes are harmless (a table entry no state reads)


def test_forced_tokens_follow_the_counter_as_the_expanded_twin_does():
    """Exactly three items of one value: after ``[`` every token is forced, and where the
    counter says the array is full the bracket is the forced one."""
    counted, expanded = twins(tool(array({"enum": [7]}, 3, 3)))
    ids = VOCAB.encode('<tool_call>\n{"name": "post", "arguments": {"a": [7, 7, 7]}}')
    a, b = counted.matcher(), expanded.matcher()
    seen = []
    for t in ids:
        fa, fb = a.forced_tokens(), b.forced_tokens()
        assert fa == fb, (VOCAB.decode_bytes([t]), fa, fb)
        seen.append(len(fa))
        a.advance(t)
        b.advance(t)
    assert max(seen) >= 3


OPEN = {"type": "object", "properties": {"x": INT}, "additionalProperties": STR}
PROPS = [({**OPEN, "maxProperties": 2}, {}), ({**OPEN, "minProperties": 1, "maxProperties": 3},
                                              {}),
         ({"type": "object", "maxProperties": 2}, {"additional_properties": "schema"}),
         ({"type": "object", "properties": {"x": OBJ}, "required": ["x"],
           "additionalProperties": {"type": "array", "items": INT}, "maxProperties": 3}, {})]


ANY = {"property_order": "any"}
PAIR = {"x": INT, "y": STR}
PROPS += [({"type": "object", "properties": PAIR, "additionalProperties": INT,
            "maxProperties": 3}, ANY),
          ({"type": "object", "properties": PAIR, "required": ["y"], "additionalProperties": INT,
            "minProperties": 2, "maxProperties": 3}, ANY),
          ({**OPEN, "minProperties": 2, "maxProperties": 4}, {}),
          ({"type": "object", "properties": PAIR, "minProperties": 3, "maxProperties": 4},
           {"additional_properties": "schema"})]


@pytest.mark.parametrize("schema,opts", PROPS, ids=["max2", "min1-max3", "free-max2", "nested",
                                                    "any-max3", "any-min2-max3", "min2-max4",
                                                    "schema-min3-max4"])
def test_counted_properties_match_the_expanded_twin(schema, opts):
    """maxProperties over undeclared members: a counted region of kind "props" (a member
    starts at its key, ``}`` at depth 0 leaves), against one state per member count."""
    from toolc.runtime.counters import ItemCounting
    counted, expanded = twins(tool(schema), **opts)
    assert isinstance(counted._counting, ItemCounting)
    assert not isinstance(expanded.matcher(), CountedMatcher)
    rng = random.Random(json.dumps(schema))
    for w in range(12):
        walk_pair(counted.matcher(), expanded.matcher(), rng, tag=w)


def test_allows_any_finds_a_token_among_a_states_runs():
    """The lexer check looks (state, token) pairs up among the walk's runs without expanding
    them: it must find an allowed token and miss a forbidden one."""
    from toolc.compiler import build_dfa
    from toolc.runtime.arrays import expand_runs
    from toolc.walk import walk
    from toolc.walk.itemcounts import _allows_any
    b = build_dfa(tool(array(INT, 1, 3)), VOCAB, tool_choice="required")
    index = walk(b.dfa, b.vocab, b.symbols)
    for q in range(min(index.num_states, 40)):
        r0, r1 = int(index.run_ptr[q]), int(index.run_ptr[q + 1])
        _, at = expand_runs(index.run_lo[r0:r1], index.run_hi[r0:r1])
        ok = np.unique(index.order[at])
        if not len(ok):
            continue
        bad = np.setdiff1d(np.arange(len(VOCAB.token_bytes)), ok)[:50]
        states = np.array([q, q])
        assert _allows_any(index, states, [ok[-1:], bad])
        assert not _allows_any(index, states, [bad, bad[:3]])


def _into_object(art, text: str):
    m = _into_array(art)
    for t in VOCAB.encode(text):
        m.advance(t)
    return m


@pytest.mark.parametrize("opts", [{}, ANY])
def test_closing_brace_refused_until_the_minimum(opts):
    """minProperties 3 beside a counted maxProperties: two declared members and one
    undeclared reach it, so ``}`` is refused after the declared ones alone."""
    s = {"type": "object", "properties": PAIR, "additionalProperties": INT,
         "minProperties": 3, "maxProperties": 1000}
    art = toolc.compile_tools(tool(s), VOCAB)
    from toolc.runtime.counters import ItemCounting
    assert isinstance(art._counting, ItemCounting)
    m = _into_object(art, '{"x": 1, "y": "a"')
    assert not m.accepts(_tok("}")) and not m.accepts(_tok("}}"))
    for t in VOCAB.encode(', "k": 2'):
        m.advance(t)
    assert m.accepts(_tok("}"))


@pytest.mark.parametrize("opts", [{}, ANY])
def test_maximum_properties_at_any_bound_costs_no_states(opts):
    sizes = set()
    for hi in (10, 1000, 10 ** 9):
        s = {"type": "object", "properties": PAIR, "additionalProperties": INT,
             "minProperties": 1, "maxProperties": hi}
        art = toolc.compile_tools(tool(s), VOCAB, **opts)
        sizes.add((art.num_states, art.num_mask_rows))
    assert len(sizes) == 1


@pytest.mark.parametrize("opts", [{}, ANY])
def test_a_minimum_only_undeclared_members_reach_is_refused_with_its_pointer(opts):
    """Two undeclared members may spell the same key, so only one counts toward the minimum:
    a minimum that needs two is refused at its keyword, never silently emptied."""
    s = {"type": "object", "properties": PAIR, "additionalProperties": INT,
         "minProperties": 4}
    with pytest.raises(toolc.UnsupportedSchemaError) as e:
        toolc.compile_tools(tool(s), VOCAB, **opts)
    assert e.value.pointer.endswith("/properties/a/minProperties")
    assert "lower 'minProperties' to 3" in str(e.value)
    s["minProperties"] = 3          # the declared two and one undeclared
    toolc.compile_tools(tool(s), VOCAB, **opts)


@pytest.mark.parametrize("opts", [{}, ANY])
def test_counted_properties_walks_steered_to_the_bounds_validate(opts):
    s = {"type": "object", "properties": PAIR, "additionalProperties": INT,
         "minProperties": 2, "maxProperties": 3}
    tools = tool(s)
    art = toolc.compile_tools(tools, VOCAB, tool_choice="required", **opts)
    assert steered_walks(art, tools, tools[0]["function"]["parameters"], seed=7, walks=30,
                         steps=300, settle=80,
                         struct=0.7) >= 5
