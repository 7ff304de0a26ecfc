"""Counted string lengths (toolc/walk/counts.py, toolc/runtime/counted.py).

A bounded string is one unbounded automaton region plus a counter. The slow twin is the
artifact compiled with the bounds expanded into chains of states (``expanded_lengths``):
at every step of every sampled walk both must allow the same tokens. Walks are steered to
the bounds, through escapes and multi-byte characters split across tokens.
"""

from __future__ import annotations

import json
import random

import jsonschema
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis_jsonschema import from_schema

import toolc
from toolc.runtime.counted import CountedMatcher
from toolc.schema.strings import expanded_lengths
from toolc.tokenizer import load_vocabulary

from helpers import assert_rendered_call_accepted, check_output, same_masks_along_walks
from forge import load_changed

VOCAB = load_vocabulary("qwen")
QUOTED = np.array([i for i, b in enumerate(VOCAB.token_bytes) if b and (b'"' in b or b"\\" in b)])
LENGTH = np.zeros(VOCAB.logits_size, dtype=np.int64)
LENGTH[:len(VOCAB.token_bytes)] = [len(b) for b in VOCAB.token_bytes]


def tool(s: dict, array: bool = True) -> list:
    props = {"a": s}
    if array:
        props["b"] = {"type": "array", "items": s, "maxItems": 3}
    return [{"type": "function", "function": {"name": "post", "parameters": {
        "type": "object", "properties": props, "required": ["a"]}}}]


def bounded(lo: int | None, hi: int | None) -> dict:
    s = {"type": "string"}
    if lo is not None:
        s["minLength"] = lo
    if hi is not None:
        s["maxLength"] = hi
    return s


def twins(tools: list, **opts):
    counted = toolc.compile_tools(tools, VOCAB, tool_choice="required", **opts)
    with expanded_lengths():
        expanded = toolc.compile_tools(tools, VOCAB, tool_choice="required", **opts)
    return counted, expanded


def allowed(m) -> np.ndarray:
    return np.flatnonzero(np.unpackbits(m.mask().view(np.uint8), bitorder="little"))


BOUNDS = [(None, 0), (None, 3), (2, 5), (1, None), (4, 4), (0, 12), (11, None)]


@pytest.mark.parametrize("lo,hi", BOUNDS)
def test_counted_artifact_matches_its_expanded_twin(lo, hi):
    counted, expanded = twins(tool(bounded(lo, hi)))
    assert isinstance(counted.matcher(), CountedMatcher)
    assert not isinstance(expanded.matcher(), CountedMatcher)
    rng = random.Random(f"{lo}-{hi}")
    for walk in range(12):
        a, b = counted.matcher(), expanded.matcher()
        for step in range(120):
            A, B = allowed(a), allowed(b)
            assert np.array_equal(A, B), (walk, step, set(A.tolist()) ^ set(B.tolist()))
            assert a.is_accepting() == b.is_accepting()
            if b.is_terminated() or not len(A):
                break
            quoted = A[np.isin(A, QUOTED, assume_unique=True)]
            pool = quoted if len(quoted) and rng.random() < 0.4 else A
            t = int(pool[rng.randrange(len(pool))])
            a.advance(t)
            b.advance(t)
        # rollback and copy keep the counter
        if a.num_consumed > 3:
            c = a.copy()
            a.rollback(3)
            b.rollback(3)
            assert np.array_equal(allowed(a), allowed(b))
            assert c.num_consumed == a.num_consumed + 3


def _tok(text: str) -> int:
    ids = VOCAB.encode(text)
    assert len(ids) == 1, (text, ids)
    return ids[0]


def _into_string(art, key: str = "a"):
    m = art.matcher()
    for t in VOCAB.encode('<tool_call>\n{"name": "post", "arguments": {"' + key + '": "'):
        m.advance(t)
    return m


@pytest.mark.parametrize("hi", [5, 64, 1000])
def test_exactly_the_maximum_then_no_more(hi):
    art = toolc.compile_tools(tool(bounded(None, hi), array=False), VOCAB)
    m = _into_string(art)
    a, quote = _tok("a"), _tok('"')
    for _ in range(hi):
        assert m.accepts(a)
        m.advance(a)
    assert m.counter == hi
    assert not m.accepts(a)
    with pytest.raises(toolc.RejectedTokenError):
        m.advance(a)
    assert m.counter == hi                      # state unchanged after a rejection
    assert m.accepts(quote)
    assert a not in allowed(m).tolist() and quote in allowed(m).tolist()


def test_escapes_and_multibyte_characters_split_across_tokens_count_once():
    hi = 3
    art = toolc.compile_tools(tool(bounded(None, hi), array=False), VOCAB)
    m = _into_string(art)
    # \u00e9 written as four tokens, then é (two bytes) as its bytes' tokens, then a
    for piece in ("\\", "u", "0", "0", "e", "9"):
        m.advance(_tok(piece))
    assert m.counter == 1
    e_acute = "é".encode()
    ids = [i for i, b in enumerate(VOCAB.token_bytes) if b in (e_acute[:1], e_acute[1:])]
    first = next(i for i in ids if VOCAB.token_bytes[i] == e_acute[:1])
    second = next(i for i in ids if VOCAB.token_bytes[i] == e_acute[1:])
    m.advance(first)
    assert m.counter == 2
    m.advance(second)
    assert m.counter == 2
    m.advance(_tok("a"))
    assert m.counter == 3
    assert not m.accepts(_tok("a")) and not m.accepts(_tok("\\"))
    m.advance(_tok('"'))


def test_minimum_forbids_closing_early():
    art = toolc.compile_tools(tool(bounded(4, None), array=False), VOCAB)
    m = _into_string(art)
    quote = _tok('"')
    for i in range(4):
        assert not m.accepts(quote)
        m.advance(_tok("x"))
    assert m.accepts(quote)


def test_the_bound_costs_no_states():
    sizes = {}
    for hi in (64, 1000, 100000):
        art = toolc.compile_tools(tool(bounded(None, hi), array=False), VOCAB)
        sizes[hi] = (art.num_states, art.num_mask_rows, len(art.to_bytes()))
    (s1, r1, b1), (s2, r2, b2), (s3, r3, b3) = sizes.values()
    assert s1 == s2 == s3 and r1 == r2 == r3
    assert max(b1, b2, b3) - min(b1, b2, b3) < 64


ITEMS40 = {"type": "array", "items": {"type": "integer"}, "maxItems": 40}
THREE_LEVELS = {"type": "array", "maxItems": 40, "items": {
    "type": "array", "maxItems": 40, "items": {"type": "string", "maxLength": 64}}}


@pytest.mark.parametrize("second", [ITEMS40, THREE_LEVELS], ids=["two kinds", "three levels"])
def test_a_counted_artifact_is_freed_when_its_last_reference_goes(second):
    # its tables are tens of MB: a reference cycle would keep each loaded copy (or its
    # counting tables) until the collector runs (a server reloading artifacts, the bench's
    # repeated loads)
    import gc
    import weakref
    data = toolc.compile_tools(tool(bounded(None, 64), array=False) + [
        {"type": "function", "function": {"name": "ids", "parameters": {
            "type": "object", "properties": {"x": second}}}}], VOCAB).to_bytes()
    gc.disable()
    try:
        art = toolc.Artifact.from_bytes(data)
        m = art.matcher()
        assert isinstance(m, CountedMatcher)
        ref, counting = weakref.ref(art), weakref.ref(art._counting)
        del art, m
        assert ref() is None and counting() is None
    finally:
        gc.enable()


def test_a_counter_that_would_be_ambiguous_falls_back_to_expansion():
    # a bounded and an unbounded string in one anyOf share their first states
    s = {"anyOf": [{"type": "string", "maxLength": 3}, {"type": "string", "pattern": "^b"}]}
    art = toolc.compile_tools(tool(s, array=False), VOCAB)
    assert not isinstance(art.matcher(), CountedMatcher)


SCHEMA = {"type": "object", "properties": {
    "title": {"type": "string", "minLength": 1, "maxLength": 12},
    "tags": {"type": "array", "items": {"type": "string", "maxLength": 4}, "maxItems": 3},
    "note": {"type": "string", "maxLength": 300}}, "required": ["title"],
    "additionalProperties": False}
TOOLS = [{"type": "function", "function": {"name": "post", "parameters": SCHEMA}}]


@pytest.fixture(scope="module")
def post_artifact():
    return toolc.compile_tools(TOOLS, VOCAB)


def test_valid_instances_rendered_by_the_model_are_accepted(post_artifact):
    @settings(max_examples=60, deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(from_schema(SCHEMA))
    def check(args):
        args = {k: args[k] for k in SCHEMA["properties"] if k in args}
        assert_rendered_call_accepted(post_artifact, VOCAB, "post", args)
    check()


def test_random_walks_steered_to_the_bounds_validate(post_artifact):
    rng = random.Random(7)
    for _ in range(25):
        m = post_artifact.matcher()
        ids = []
        for step in range(400):
            if m.is_terminated():
                break
            pool = allowed(m)
            assert len(pool), "a counted state with nothing allowed"
            quoted = pool[np.isin(pool, QUOTED, assume_unique=True)]
            # mostly long tokens inside strings (to reach the bounds), quotes now and then
            if len(quoted) and (rng.random() < 0.15 or step > 300):
                t = int(quoted[rng.randrange(len(quoted))])
            else:
                some = pool[[rng.randrange(len(pool)) for _ in range(8)]]
                t = int(some[np.argmax(LENGTH[some])])
            m.advance(t)
            ids.append(t)
        if not m.is_terminated():
            continue
        text = VOCAB.decode_bytes(ids).decode("utf-8")
        parsed = check_output(text, TOOLS)
        for call in parsed["parsed"]:
            jsonschema.validate(call["arguments"], SCHEMA)
            assert json.dumps(call["arguments"])


@pytest.mark.parametrize("seed", range(6))
def test_the_count_tables_read_back_exactly_where_a_state_reads_them(seed):
    """Format 6's encoding (nibbles, large values apart, per-row offsets, differences
    listed) against random tables: every entry some state reads comes back unchanged."""
    from toolc.runtime.countfile import decode_counted
    from toolc.walk.counts import CountTables
    rng = np.random.default_rng(seed)
    L, n = 1001 + seed, 7
    phases = np.sort(rng.choice(17, size=1 + seed % 5, replace=False)).astype(np.int8)
    P = len(phases)
    k = rng.integers(0, 12, size=(P, L)).astype(np.uint8)
    k[:, rng.integers(0, L, size=20)] = rng.integers(12, 256, size=20).astype(np.uint8)
    for i in range(1, P):           # rows that mostly follow the first one, less an offset
        follow = rng.random(L) < 0.8
        k[i, follow] = k[0, follow] - np.uint8(i % 3)
    x = (rng.random((P, L)) < 0.05).astype(np.uint8)
    s_ = np.where(rng.random((P, L)) < 0.05, rng.integers(0, 255, size=(P, L)), -1)
    rel = rng.random((P, L)) < (0.9 if seed % 2 else 0.2)
    tag = np.array([-1, 0, 0, -1, 0, -1, -1], dtype=np.int32)
    phase = np.where(tag >= 0, phases[0], -1).astype(np.int8)
    t = CountTables(tag, phase, np.array([0]), np.array([9]), phases, k, x, s_.astype(np.int16),
                    {}, rel, np.zeros(n, dtype=np.int32))
    sections = t.sections()
    got = decode_counted(sections, n, L, lambda m: AssertionError(m))
    for name, want in (("cnt_k", k), ("cnt_x", x), ("cnt_s1", s_ + 1)):
        assert np.array_equal(got[name][rel], want[rel]), name


def test_runs_split_around_dropped_tokens_as_a_plain_loop_splits_them():
    from toolc.walk.counts import _split_runs
    rng = np.random.default_rng(3)
    for _ in range(200):
        edges = np.sort(rng.choice(200, size=2 * rng.integers(0, 8), replace=False))
        lo, hi = edges[0::2], edges[1::2]
        order = rng.permutation(len(lo))            # runs need not be sorted
        lo, hi = lo[order], hi[order]
        tg = rng.integers(0, 50, size=len(lo))
        cut = np.unique(rng.integers(0, 200, size=rng.integers(0, 30)))
        want = []
        for x, y, z in zip(lo.tolist(), hi.tolist(), tg.tolist()):
            for c in [c for c in cut.tolist() if x <= c < y] + [y]:
                if c > x:
                    want.append((x, c, z))
                x = c + 1
        a, b, t = _split_runs(lo, hi, tg, cut)
        assert list(zip(a.tolist(), b.tolist(), t.tolist())) == want


def test_forged_counted_sections_are_refused_or_consistent():
    """Format 5: one entry of a counted section changed, the checksum recomputed: the file is
    refused with ArtifactError, or it loads and every mask and advance stays in bounds."""
    from toolc.runtime.fileformat import COUNTED_SECTIONS, unpack
    art = toolc.compile_tools(tool(bounded(1, 3), array=False), VOCAB)
    header, sections = unpack(art.to_bytes())
    rng = random.Random(5)
    text_ids = VOCAB.encode('<tool_call>\n{"name": "post", "arguments": {"a": "abcd"}}')
    for _ in range(120):
        name = rng.choice(sorted(COUNTED_SECTIONS))
        arr = np.frombuffer(sections[name], dtype=np.dtype(COUNTED_SECTIONS[name])).copy()
        if not len(arr):
            continue
        i = rng.randrange(len(arr))
        arr[i] = np.array(rng.choice([-2, -1, 0, 1, 5, 200, 1 << 40])).astype(arr.dtype)
        load_changed(art, header, sections, name, arr, text_ids)


PATTERNED = [({"type": "string", "pattern": "^[a-z]+(-[a-z]+)*$", "maxLength": 7}, 7),
             ({"type": "string", "pattern": "^x[a-c]*yz$", "maxLength": 5}, 5),
             ({"type": "string", "format": "ipv4", "maxLength": 9}, 9)]


@pytest.mark.parametrize("schema,hi", PATTERNED, ids=["words", "fixed-tail", "ipv4"])
def test_a_pattern_with_a_maximum_matches_its_expanded_twin(schema, hi):
    """Beside a pattern the counter must also leave room for what the pattern still needs
    (``^x[a-c]*yz$`` with 5: after ``xa`` only two more characters fit, and they must be
    ``yz``): no dead end, the same masks as the chain of states."""
    counted, expanded = twins(tool(schema, array=False))
    assert isinstance(counted.matcher(), CountedMatcher)
    same_masks_along_walks(counted, expanded, random.Random(hi), 15, 80)


def test_a_hostname_has_at_most_253_characters():
    art = toolc.compile_tools(tool({"type": "string", "format": "hostname"}, array=False),
                              VOCAB)
    m = _into_string(art, "a")
    label = "a" * 62 + "."
    text = label * 4           # 252 characters, then one more label character fits
    for t in VOCAB.encode(text):
        m.advance(t)
    assert m.counter == 252
    a = _tok("a")
    m.advance(a)
    assert not m.accepts(a) and m.accepts(_tok('"'))
    check = jsonschema.Draft202012Validator(
        {"format": "hostname"}, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    assert check.is_valid(text + "a") and not check.is_valid(text + "aa")
