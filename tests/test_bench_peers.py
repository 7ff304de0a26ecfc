"""bench/peers: the valid-call corpus every engine walks, and the peers' grammar builders.

The peers themselves live in bench/.venv-peers (``make bench-peers``); their tests here are
skipped unless the peer is installed.
"""

from __future__ import annotations

import json
import sys

import pytest

from conftest import ROOT
from helpers import accepts_all, check_output, load_tools

sys.path.insert(0, str(ROOT / "bench" / "peers"))
import common  # noqa: E402
import corpus  # noqa: E402


def test_render_marks_each_calls_arguments():
    calls = [("get_forecast", {"city": "Zürich", "days": 2}),
             ("get_current_weather", {"city": "x"})]
    text, spans = corpus.render(calls)
    raw = text.encode("utf-8")
    assert text.startswith('<tool_call>\n{"name": "get_forecast", "arguments": ')
    assert text.endswith("}\n</tool_call><|im_end|>")
    assert [raw[lo:hi].decode() for lo, hi in spans] == \
        [json.dumps(a, ensure_ascii=False) for _, a in calls]


def test_schema_order_follows_the_schema_and_picks_the_matching_branch():
    schema = {"type": "object", "properties": {
        "a": {"type": "integer"},
        "b": {"anyOf": [{"type": "string"},
                        {"type": "object", "properties": {"x": {"type": "string"},
                                                          "y": {"type": "string"}}}]}}}
    value = {"b": {"y": "2", "x": "1"}, "a": 1}
    out = corpus.schema_order(value, schema)
    assert list(out) == ["a", "b"] and list(out["b"]) == ["x", "y"]
    assert corpus.schema_order({"b": "s", "a": 1}, schema) == {"a": 1, "b": "s"}


def test_corpus_is_valid_and_toolc_accepts_it(qwen, weather_artifact):
    tools = load_tools("weather")
    entries = corpus.build(tools, qwen, 8)
    assert len(entries) == 8
    assert entries == corpus.build(tools, qwen, 8)           # the same every run
    for e in entries:
        assert e["ids"][-1] == common.IM_END
        text = qwen.decode_bytes(e["ids"][:-1]).decode("utf-8")
        check_output(text, tools, require_call=True)
        assert accepts_all(weather_artifact, e["ids"]) == (True, -1)
        # the steps inside arguments: from the first byte of each ARGS to its last
        assert e["inside"] and common.TOOL_CALL not in [e["ids"][s] for s in e["inside"]]
        first = e["inside"][0]
        before = qwen.decode_bytes(e["ids"][:first - 1]).decode("utf-8", "replace")
        upto = qwen.decode_bytes(e["ids"][:first]).decode("utf-8", "replace")
        assert '"arguments": ' not in before and '"arguments": ' in upto


def test_outlines_regex_holds_specials_as_sentinels():
    pytest.importorskip("outlines_core")
    import peer_outlines
    rx = peer_outlines.regex(load_tools("weather"))
    assert rx.startswith("\x01(") and rx.endswith(")*\x03") and "\x02" in rx


def test_llguidance_grammar_is_accepted():
    llg = pytest.importorskip("llguidance")
    import peer_llguidance
    grammar = peer_llguidance.lark(load_tools("tools10"))
    assert "<tool_call> body </tool_call>" in grammar
    is_error, messages = llg.LLMatcher.validate_grammar_with_warnings(grammar)
    assert not is_error, messages


def test_xgrammar_structural_tag_has_one_tag_per_tool():
    pytest.importorskip("xgrammar")
    import peer_xgrammar
    tag = peer_xgrammar.structural_tag(load_tools("tools10"))
    assert len(tag["format"]["tags"]) == 10 and tag["format"]["separator"] == "\n"
