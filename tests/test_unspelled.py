"""toolc.fsm.unspelled: hermes' tags kept out of its calls on the built DFA.

The product on the DFA gives exactly the automaton that closing the grammar's string bodies
gives (:mod:`toolc.formats.closure`): the same minimal, canonically numbered DFA, table for
table. And the matcher of the tags is minimal: after ``<tool`` and ``</tool`` alike.
"""

from __future__ import annotations

import numpy as np
import pytest

import toolc.formats.hermes as H
from toolc import stitch
from toolc.toolcache import ToolCache
from toolc.compiler import build_dfa
from toolc.formats.hermes import Hermes
from toolc.fsm.unspelled import tag_matcher

from test_index import SHARED_TOOLS, VOCAB

# SHARED_TOOLS but its tool with a counted string (maxLength)
UNCOUNTED = SHARED_TOOLS[:2] + SHARED_TOOLS[3:]


def _grammar_closed(monkeypatch, tools, opts):
    """The DFA with the string bodies closed in the grammar instead."""
    with monkeypatch.context() as m:
        m.setattr(Hermes, "unspelled_within", lambda self: None)
        m.setattr(H, "holds_counted", lambda a: True)
        return build_dfa(tools, VOCAB, **opts).dfa


@pytest.mark.parametrize("tools,opts", [
    (UNCOUNTED, {}),
    (UNCOUNTED, {"tool_choice": "required", "parallel": False}),
    ("schemas/weather.json", {"reasoning": True}),
    (UNCOUNTED, {"additional_properties": "schema"}),
    # a counted string: its tool is closed in the grammar, the others by the product, which
    # carries the counted states' tags over
    (SHARED_TOOLS, {}),
])
def test_the_product_is_the_grammar_closed_dfa(tools, opts, monkeypatch):
    import toolc.compiler as C
    monkeypatch.setattr(Hermes, "closed_strings", True)
    calls = []
    real = C.unspelled_within
    monkeypatch.setattr(C, "unspelled_within", lambda *a, **k: calls.append(1) or real(*a, **k))
    with stitch.whole_path():       # the product on the whole DFA (stitching: per block)
        got = build_dfa(tools, VOCAB, **opts).dfa
    assert calls
    want = _grammar_closed(monkeypatch, tools, opts)
    stitched = build_dfa(tools, VOCAB, cache=ToolCache(), **opts).dfa
    assert np.array_equal(stitched.trans, want.trans)
    assert (got.tags is None) == (want.tags is None) == (tools is not SHARED_TOOLS)
    if got.tags is not None:
        assert np.array_equal(got.tags, want.tags) and got.tag_bounds == want.tag_bounds
    assert np.array_equal(got.alphabet.byte_class, want.alphabet.byte_class)
    assert got.alphabet.symbols == want.alphabet.symbols
    assert np.array_equal(got.trans, want.trans) and np.array_equal(got.final, want.final)


def test_no_tag_is_spelled_inside_a_call_and_free_text_is_untouched(monkeypatch):
    monkeypatch.setattr(Hermes, "closed_strings", True)
    closed = build_dfa(UNCOUNTED, VOCAB).dfa
    monkeypatch.setattr(Hermes, "closed_strings", False)
    plain = build_dfa(UNCOUNTED, VOCAB).dfa
    head = b'\n{"name": "note", "arguments": {"title": "'

    for dfa, cut in ((plain, False), (closed, True)):
        q = dfa.step_symbol(0, "<tool_call>")
        q = dfa.step_bytes(q, head)
        assert q >= 0
        # a string may hold '<' and '</tool', but never the whole tag
        assert dfa.step_bytes(q, b"a</tool<tool_c") >= 0
        assert (dfa.step_bytes(q, b"a</tool_call>") < 0) == cut
        assert (dfa.step_bytes(q, b"<tool_call>") < 0) == cut
    # free text is the same either way: it never spelled a tag
    for text in (b"hello <b>", b"</tool", b"a</tool_call>"):
        assert (closed.step_bytes(0, text) >= 0) == (plain.step_bytes(0, text) >= 0)


def test_the_tag_matcher_is_minimal_and_dies_on_a_whole_tag():
    table, m = tag_matcher((b"<tool_call>", b"</tool_call>"))
    assert m == 12          # '', '<', then '</' and one state per further byte of either
    q = 0
    for b in b"</tool_call":
        q = int(table[q, b])
        assert q > 0
    assert table[q, ord(">")] == -1
    q = 0
    for b in b"<tool_call":
        q = int(table[q, b])
    assert table[q, ord(">")] == -1 and table[q, ord("x")] == 0


def _steered_walks(art, tools, seed, n=12):
    """Random walks steered to spell the tags' pieces in ordinary tokens wherever they can:
    (ids, text, count of tag spellings inside the calls that the walk got through)."""
    import random

    from helpers import distance_to_end, random_walk
    tool_call = VOCAB.added["<tool_call>"]
    prefer = sorted({t for s in ("</tool_call>", "<tool_call>", "</", "<", "tool", "_call",
                                 ">", "call>", "</tool")
                     for t in VOCAB.encode(s) if t not in VOCAB.added.values()})
    dist = distance_to_end(art)
    rng = random.Random(seed)
    # half the walks start inside a string, the closing tag spelled but for its last byte
    head = [tool_call] + VOCAB.encode('\n{"name": "get_current_weather", "arguments": '
                                      '{"city": "a') + \
        [t for ch in "</tool_call" for t in VOCAB.encode(ch)]
    for i in range(n):
        ids = random_walk(art, rng, dist, budget=rng.choice([30, 80]), trigger=tool_call,
                          prefer=prefer, prefix=head if i % 2 else ())
        first = ids.index(tool_call) if tool_call in ids else len(ids) - 1
        text = (VOCAB.decode_bytes(ids[:first]).decode("utf-8", errors="replace")
                + VOCAB.decode_bytes(ids[first:-1]).decode("utf-8"))
        yield ids, text


@pytest.mark.parametrize("closed", [True, pytest.param(False, marks=pytest.mark.xfail(
    strict=True, reason="open strings: a walk spells </tool_call> and the parser cuts there"))])
def test_steered_walks_of_closed_hermes_split_as_the_grammar_did(monkeypatch, closed):
    """Soundness of the closure: every call the artifact lets through, steered to spell the
    tags' pieces inside strings, parses back as exactly the calls its special tokens framed,
    each valid for its tool."""
    import json

    from helpers import check_output
    monkeypatch.setattr(Hermes, "closed_strings", closed)
    import toolc
    tools = json.load(open("schemas/weather.json", encoding="utf-8"))
    art = toolc.compile_tools(tools, VOCAB, tool_choice="required")
    tool_call = VOCAB.added["<tool_call>"]
    pieces = 0
    for ids, text in _steered_walks(art, tools, "closed-hermes"):
        parsed = check_output(text, tools, require_call=True)
        assert len(parsed["tool_calls"]) == ids.count(tool_call), text
        inside = text[text.index("<tool_call>"):]
        assert inside.count("</tool_call>") == ids.count(VOCAB.added["</tool_call>"])
        # '<' in ordinary tokens: every one but the two tags' of each call
        pieces += inside.count("<") - 2 * len(parsed["tool_calls"])
    assert pieces > 5, "the walks hardly spelled a piece of a tag: the test would prove nothing"
