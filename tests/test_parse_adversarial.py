"""toolc.parse.parse_tool_calls (hermes) on adversarial text: linear time, clear failures."""

from __future__ import annotations

import json

import pytest

from toolc.parse import ParseError, parse_tool_calls

CALL = '<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>'


def test_well_formed_calls_still_parse():
    out = parse_tool_calls("Hi.\n" + CALL + "\n" + CALL + "<|im_end|>")
    assert out["content"] == "Hi." and len(out["tool_calls"]) == 2
    assert json.loads(out["tool_calls"][1]["function"]["arguments"]) == {"a": 1}
    assert parse_tool_calls("just text")["tool_calls"] == []


@pytest.mark.parametrize("text,needle", [
    ("<tool_call>" * 200_000, "never closed"),                      # O(n^2) with the old regex
    (CALL + "<tool_call>\n{", "call 1: '<tool_call>' at offset"),
    ("<tool_call><tool_call>{}</tool_call></tool_call>", "inside another"),
    ("text </tool_call>", "closes no call"),
    (CALL + "</tool_call>", "closes no call"),
    ("<tool_call>" + "[" * 100_000 + "</tool_call>", "call 0"),
    ("<tool_call>{" + "x" * 3_000_000 + "</tool_call>", "invalid JSON"),
    ('<tool_call>{"name": 1}</tool_call>', "expected"),
])
def test_adversarial_text_fails_with_a_clear_message(text, needle):
    with pytest.raises(ParseError, match=None) as e:
        parse_tool_calls(text)
    msg = str(e.value)
    assert needle in msg and "\n" not in msg and len(msg) < 300, msg


def test_megabytes_of_unclosed_tags_and_text_are_linear():
    """Millions of characters: quadratic scanning would take hours; this takes milliseconds."""
    text = ("a<tool_call" * 300_000) + ("b</tool_cal" * 300_000)
    assert parse_tool_calls(text)["tool_calls"] == []
    with pytest.raises(ParseError, match="never closed"):
        parse_tool_calls("x" * 5_000_000 + "<tool_call>" + "y" * 5_000_000)


def test_invalid_utf8_bytes_are_refused():
    with pytest.raises(ParseError, match="not UTF-8"):
        parse_tool_calls(b"ok \xff\xfe" + CALL.encode())
    assert len(parse_tool_calls(CALL.encode())["tool_calls"]) == 1
