"""Unanchored counted runs (toolc/walk/runcounts.py, toolc/runtime/runcount.py).

``pattern: "x{100000}"`` means "the string holds 100,000 x in a row". Such a string is one
unbounded string region plus a counter that resets on every character outside the class.
The slow twin is the same pattern built as states (``expanded_lengths``, small counts): at
every step of steered walks both must allow the same tokens, after ``rollback`` and ``copy``
too. Walks are steered into runs, across breaks, escapes and multi-byte characters, and to
the closing quote.
"""

from __future__ import annotations

import random

import jsonschema
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis_jsonschema import from_schema

import toolc
from toolc.errors import BudgetExceededError
from toolc.runtime.runcount import RunCounting
from toolc.schema import regex
from toolc.schema.strings import expanded_lengths
from toolc.tokenizer import load_vocabulary
from toolc.walk.counts import IN0, U1
from toolc.walk.runcounts import _quoted, lex_runs, plain_runs

from helpers import assert_rendered_call_accepted, check_output
from forge import load_changed
from test_counted import _into_string, _tok

VOCAB = load_vocabulary("qwen")
TB = VOCAB.token_bytes


def tool(pattern: str, array: bool = True, **extra) -> list:
    s = {"type": "string", "pattern": pattern, **extra}
    props = {"a": s}
    if array:
        props["b"] = {"type": "array", "items": s, "maxItems": 3}
    return [{"type": "function", "function": {"name": "post", "parameters": {
        "type": "object", "properties": props, "required": ["a"],
        "additionalProperties": False}}}]


def runs_of(art) -> RunCounting | None:
    n = art._counting
    if isinstance(n, RunCounting):
        return n
    return next((p for p in getattr(n, "parts", []) if isinstance(p, RunCounting)), None)


def steering(chars: bytes) -> np.ndarray:
    """The tokens made of ``chars`` only (class characters, breaks, quotes, commas)."""
    want = set(chars)
    return np.array([i for i, b in enumerate(TB) if b and set(b) <= want])


TWINS = [("x{3}", b'xy"'), ("[a-c]{5,}", b'abcd"'), ("[0-9]{2,4}", b'0123a",[]'),
         ("[a-z_]{12}", b'abc_ -",'), ("x{4}", "xé\\n\"".encode())]


@pytest.mark.parametrize("pattern,chars", TWINS, ids=[p for p, _ in TWINS])
def test_a_run_matches_its_expanded_twin(pattern, chars, monkeypatch):
    monkeypatch.setattr(regex, "COUNT_FROM", 1)
    same_along_steered_walks(tool(pattern), chars, pattern)


def _props(props: dict) -> list:
    return [{"type": "function", "function": {"name": "post", "parameters": {
        "type": "object", "properties": props, "required": ["a"],
        "additionalProperties": False}}}]


BESIDE = {
    # a run and a counted length in one artifact: the counter is a pair
    "beside maxLength": _props({"a": {"type": "string", "pattern": "x{3}"},
                                "c": {"type": "string", "maxLength": 4}}),
    # a run inside a counted minimum: two counters on one string
    "inside a minLength": _props({"a": {"type": "string", "pattern": "x{3}", "minLength": 5},
                                  "b": {"type": "array", "items": {
                                      "type": "string", "pattern": "x{2}", "minLength": 1}}}),
    # two classes, two rows of facts
    "two classes": _props({"a": {"type": "string", "pattern": "x{3}"},
                           "c": {"type": "string", "pattern": "[0-9]{2,}"}}),
    # in a counted array's items: the items are built as states, the run still counted
    "in a counted array": _props({"a": {"type": "array", "maxItems": 5, "items": {
        "type": "string", "pattern": "x{2}"}}}),
}


@pytest.mark.parametrize("name", sorted(BESIDE))
def test_runs_beside_other_counters_match_their_expanded_twin(name, monkeypatch):
    monkeypatch.setattr(regex, "COUNT_FROM", 1)
    monkeypatch.setattr("toolc.schema.arrays.COUNT_FROM", 0)
    same_along_steered_walks(BESIDE[name], b'x0123y",', name)


def same_along_steered_walks(tools: list, chars: bytes, seed: str) -> None:
    """The counted artifact and its expanded twin allow the same tokens, accept alike and
    force alike at every step of walks steered to ``chars``; rollback and copy included."""
    counted = toolc.compile_tools(tools, VOCAB, tool_choice="required")
    with expanded_lengths():
        expanded = toolc.compile_tools(tools, VOCAB, tool_choice="required")
    assert runs_of(counted) is not None and runs_of(expanded) is None
    steer = steering(chars)
    rng = random.Random(seed)
    inside = thinned = ended = 0
    twin_of: dict = {}          # (state, counter) -> the twin's state: a function
    for walk in range(16):
        a, b = counted.matcher(), expanded.matcher()
        for step in range(120):
            A, B = a.allowed_token_ids(), b.allowed_token_ids()
            assert np.array_equal(A, B), (walk, step, [TB[i] for i in set(A) ^ set(B)][:8])
            assert a.is_accepting() == b.is_accepting()
            assert a.forced_tokens() == b.forced_tokens()
            if b.is_terminated():
                ended += 1
                break
            assert len(A), "a dead end"
            near = A[np.isin(A, steer, assume_unique=True)]
            pool = near if len(near) and rng.random() < 0.85 else A
            t = int(pool[rng.randrange(len(pool))])
            a.advance(t)
            b.advance(t)
            assert twin_of.setdefault((a.state, a.counter), b.state) == b.state
            inside += runs_of(counted).tag[a.state] >= 0
            thinned += a.thinned()
            if step % 17 == 16:       # rollback and copy keep the counter
                c = a.copy()
                assert np.array_equal(c.allowed_token_ids(), b.allowed_token_ids())
                a.rollback(3)
                b.rollback(3)
                assert np.array_equal(a.allowed_token_ids(), b.allowed_token_ids())
                assert c.num_consumed == a.num_consumed + 3
    assert inside > 100 and thinned > 20 and ended     # the walks did reach the runs


def test_the_closing_quote_needs_the_whole_run_and_a_break_restarts_it():
    art = toolc.compile_tools(tool("x{40}", array=False), VOCAB)
    m = _into_string(art)
    x, y, quote = _tok("x"), _tok("y"), _tok('"')
    for _ in range(39):
        assert not m.accepts(quote)
        m.advance(x)
    assert m.counter == 39
    m.advance(y)                    # 39, then another character: the run starts again
    assert m.counter == 0 and not m.accepts(quote)
    for _ in range(39):
        m.advance(x)
        assert not m.accepts(quote)
    with pytest.raises(toolc.RejectedTokenError):
        m.advance(quote)
    assert m.counter == 39          # the state is unchanged after a rejection
    m.advance(x)
    assert m.counter == 40 and m.accepts(quote)
    m.advance(y)                    # done for good: any character, then the close
    assert m.accepts(quote)
    m.advance(quote)


def test_a_token_that_finishes_the_run_may_close_and_one_that_breaks_it_resets():
    art = toolc.compile_tools(tool("x{20}", array=False), VOCAB)
    m = _into_string(art)
    xx8, yx, xy = _tok("xxxxxxxx"), _tok("yx"), _tok("xy")
    m.advance(xx8)
    m.advance(xx8)
    assert m.counter == 16
    m.advance(yx)                   # a break inside the token: the trailing run is 1
    assert m.counter == 1
    m.advance(xx8)
    m.advance(xx8)
    assert m.counter == 17
    m.advance(xy)                   # 18, then a break: 0
    assert m.counter == 0
    for _ in range(2):
        m.advance(xx8)
    assert not m.accepts(_tok('"'))
    m.advance(xx8)                  # 24 in a row: done
    assert m.counter == 20 and m.accepts(_tok('"'))


def test_an_escape_or_a_multibyte_character_split_across_tokens_breaks_the_run():
    art = toolc.compile_tools(tool("x{16}", array=False), VOCAB)
    m = _into_string(art)
    xx8 = _tok("xxxxxxxx")
    m.advance(xx8)
    e_acute = "é".encode()
    first = next(i for i, b in enumerate(TB) if b == e_acute[:1])
    second = next(i for i, b in enumerate(TB) if b == e_acute[1:])
    m.advance(first)                # a character outside the class starts: the run is 0
    assert m.counter == 0
    m.advance(second)
    m.advance(xx8)
    assert m.counter == 8
    m.advance(_tok("\\"))
    assert m.counter == 0
    m.advance(_tok("n"))
    m.advance(xx8)
    m.advance(xx8)
    assert m.counter == 16 and m.accepts(_tok('"'))


def test_whole_strings_inside_one_token_are_dropped_where_they_hold_no_run(monkeypatch):
    monkeypatch.setattr(regex, "COUNT_FROM", 1)
    art = toolc.compile_tools(tool("x{2}"), VOCAB, tool_choice="required")
    m = art.matcher()
    for t in VOCAB.encode('<tool_call>\n{"name": "post", "arguments": {"a": "xx", "b": ['):
        m.advance(t)
    empty = [i for i, b in enumerate(TB) if b in (b'""', b'"",', b'""]')]
    assert empty and not any(m.accepts(t) for t in empty)
    assert m.accepts(_tok('"'))


SOUND = ["x{40}", "[a-z]{20,}", "[0-9]{16,64}", "[a-f0-9]{24}", "x{100000}", r"\d{20}",
         r"\w{16,}"]


@pytest.mark.parametrize("pattern", SOUND)
def test_steered_walks_validate(pattern):
    tools = tool(pattern)
    art = toolc.compile_tools(tools, VOCAB, tool_choice="required")
    assert runs_of(art) is not None
    n = int(pattern.split("{")[1].split(",")[0].rstrip("}"))
    cls = {"x": b"x", "[a-z]": b"abcdefghijklmnopqrstuvwxyz", "[0-9]": b"0123456789",
           "[a-f0-9]": b"abcdef0123456789", r"\d": b"0123456789",
           r"\w": b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"}[
        pattern.split("{")[0]]
    steer = steering(cls)
    closing = np.array([i for i in range(VOCAB.logits_size)
                        if i >= len(TB) or not TB[i] or set(TB[i]) & set(b'"}]')])
    runs = runs_of(art)
    rng = random.Random(pattern)
    done = 0
    for walk in range(12 if n < 1000 else 3):      # a run of 1,000 is never reached
        m, ids = art.matcher(), []
        for step in range(600 if n < 1000 else 200):
            if m.is_terminated():
                break
            pool = m.allowed_token_ids()
            assert len(pool), "a dead end"
            counting = runs.tag[m.state] >= 0 and m.counter < n
            near = pool[np.isin(pool, steer if counting else closing, assume_unique=True)]
            if len(near) and rng.random() < (0.9 if counting else 0.5):
                t = int(near[rng.randrange(len(near))])
            else:
                t = int(pool[rng.randrange(len(pool))])
            m.advance(t)
            ids.append(t)
        if m.is_terminated():
            done += 1
            check_output(VOCAB.decode_bytes(ids).decode("utf-8"), tools, require_call=True)
    assert done or n >= 1000


@settings(max_examples=15, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(from_schema({"type": "object", "properties": {
    "a": {"type": "string", "pattern": "[a-c]{16}"}}, "required": ["a"],
    "additionalProperties": False}))
def test_hypothesis_instances_are_accepted(args):
    tools = tool("[a-c]{16}", array=False)
    jsonschema.validate(args, tools[0]["function"]["parameters"])
    assert_rendered_call_accepted(_complete_art(), VOCAB, "post", args)


_ART: list = []


def _complete_art():
    if not _ART:
        _ART.append(toolc.compile_tools(tool("[a-c]{16}", array=False), VOCAB))
    return _ART[0]


def test_a_run_inside_a_large_minimum_is_counted_too():
    art = toolc.compile_tools(tool("x{100000}", minLength=200000), VOCAB)
    assert runs_of(art) is not None and art._counting.s is not None
    m = _into_string(art)
    xx8, y, quote = _tok("xxxxxxxx"), _tok("y"), _tok('"')
    for _ in range(12500):
        m.advance(xx8)
    assert m.counter == (100000, 100000)        # (characters, run)
    assert not m.accepts(quote)                 # the run is done, the minimum is not
    m.advance(y)
    assert m.counter == (100001, 100000)


def test_the_run_costs_no_states():
    sizes = {}
    for n in (20, 1000, 100000):
        art = toolc.compile_tools(tool(f"x{{{n}}}", array=False), VOCAB)
        assert runs_of(art) is not None
        sizes[n] = (art.num_states, art.num_mask_rows, len(art.to_bytes()))
    (s1, r1, b1), (s2, r2, b2), (s3, r3, b3) = sizes.values()
    assert s1 == s2 == s3 and r1 == r2 == r3
    assert max(b1, b2, b3) - min(b1, b2, b3) < 64


@pytest.mark.parametrize("schema", [
    {"pattern": "ax{100000}"}, {"pattern": "x{100000}", "maxLength": 200000},
    {"pattern": "x{100000}", "format": "email"}, {"pattern": ".{100000}"}])
def test_runs_that_are_not_counted_stay_refused_with_the_pointer(schema):
    tools = [{"type": "function", "function": {"name": "post", "parameters": {
        "type": "object", "properties": {"a": {"type": "string", **schema}}}}}]
    with pytest.raises(BudgetExceededError) as e:
        toolc.compile_tools(tools, VOCAB)
    assert e.value.pointer.endswith("/properties/a/pattern")


@pytest.mark.parametrize("mask", [1 << ord("x"), sum(1 << c for c in range(97, 123)),
                                  sum(1 << c for c in range(32, 127) if c not in (34, 92))])
def test_the_fast_facts_are_the_lexers(mask):
    """Tokens without a quote or backslash, counted at once, give what the byte-by-byte
    lexer gives, from between characters and (for tokens that may follow a lead byte)
    inside a character."""
    ids, lens, flat = VOCAB.ordinary_bytes()
    starts = np.concatenate([[0], np.cumsum(lens)[:-1]])
    member = np.array([(mask >> b) & 1 for b in range(256)], dtype=bool)
    plain = np.flatnonzero(~_quoted(lens, starts, flat))
    pl, ps = lens[plain], starts[plain]
    sub = np.concatenate([flat[s:s + n] for s, n in zip(ps.tolist(), pl.tolist())])
    fast = plain_runs(pl, np.concatenate([[0], np.cumsum(pl)[:-1]]), sub, member)
    cont = (flat[ps] & 0xC0) == 0x80
    slow = lex_runs(IN0, pl, ps, flat, member)
    assert np.array_equal(fast[:, ~cont], slow[:, ~cont])
    one = cont & ((flat[ps + np.minimum(1, pl - 1)] & 0xC0) != 0x80)     # one continuation
    slow = lex_runs(U1, pl, ps, flat, member)
    assert np.array_equal(fast[:, one], slow[:, one])


def test_forged_run_sections_are_refused_or_consistent():
    """One entry of a run section changed, the checksum recomputed: the file is refused with
    ArtifactError, or it loads and every mask and advance stays in bounds."""
    from toolc.runtime.fileformat import pack, unpack
    from toolc.runtime.runfile import RUN_SECTIONS
    art = toolc.compile_tools(tool("x{16}"), VOCAB)
    header, sections = unpack(art.to_bytes())
    rng = random.Random(14)
    text_ids = VOCAB.encode('<tool_call>\n{"name": "post", "arguments": {"a": "' + "x" * 20
                            + '", "b": ["yy", "' + "x" * 17 + '"]}}')
    for _ in range(100):
        name = rng.choice(sorted(RUN_SECTIONS))
        arr = np.frombuffer(sections[name], dtype=np.dtype(RUN_SECTIONS[name])).copy()
        if not len(arr):
            continue
        i = rng.randrange(len(arr)) if name != "run_fv" else \
            int(rng.choice(np.flatnonzero(arr))) if arr.any() else 0
        arr[i] = np.array(rng.choice([-2, -1, 0, 1, 5, 200, 1 << 40])).astype(arr.dtype)
        load_changed(art, header, sections, name, arr, text_ids)
    for name in ("run_tag", "run_fv", "run_cls"):     # a section cut short
        forged = dict(sections, **{name: sections[name][:-1]})
        with pytest.raises(toolc.ArtifactError):
            toolc.Artifact.from_bytes(pack(header, forged))
