"""Disagreements the llguidance differential test found, kept as regression tests that run
without llguidance installed."""

from __future__ import annotations

import pytest

import toolc

SCHEMA = {"type": "object", "properties": {"s": {"type": "string"}}, "required": ["s"]}


@pytest.fixture(scope="module")
def string_artifact(qwen):
    return toolc.compile_tools([{"name": "t", "parameters": SCHEMA}], qwen)


def _accepted(art, qwen, escaped: str) -> bool:
    text = ('<tool_call>\n{"name": "t", "arguments": {"s": "' + escaped
            + '"}}\n</tool_call><|im_end|>')
    m = art.matcher()
    for t in qwen.encode(text):
        if not m.accepts(t):
            return False
        m.advance(t)
    return m.is_terminated()


@pytest.mark.parametrize("escaped", [r"\ud800", r"\uDFFF", r"\udc00x", r"\ud83d", r"\ud83d\u0041",
                                     r"\ude00\ud83d"])
def test_lone_surrogate_escapes_are_refused(string_artifact, qwen, escaped):
    """Found by the difftest: toolc accepted any \\uXXXX, so a model could write a lone
    surrogate, which json.loads turns into a str that cannot be encoded as UTF-8."""
    assert not _accepted(string_artifact, qwen, escaped)


@pytest.mark.parametrize("escaped", [r"\ud83d\ude00", r"\uD83D\uDE00", r"\u00e9", r"\uffff",
                                     r"\ud7ff", r"\ue000", r"\/", "\x7f"])
def test_valid_escapes_stay_accepted(string_artifact, qwen, escaped):
    assert _accepted(string_artifact, qwen, escaped)
