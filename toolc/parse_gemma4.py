"""Parsing Gemma 4's calls back (see :mod:`toolc.formats.gemma4` for the syntax). Runtime side:
standard library only; one left-to-right pass (each value is read from where the last ended)."""

from __future__ import annotations

import json
import re

from .errors import ParseError
from .parse import _expect, _result

QUOTE, OPEN, CLOSE = '<|"|>', "<|tool_call>", "<tool_call|>"
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")


def _value(text: str, pos: int):
    """One value at ``pos``; return (value, end)."""
    if text.startswith(QUOTE, pos):
        end = text.find(QUOTE, pos + len(QUOTE))
        if end < 0:
            raise ParseError(f"at offset {pos}: a string is never closed by {QUOTE}")
        return text[pos + len(QUOTE):end], end + len(QUOTE)
    if text.startswith("{", pos):
        out, pos = {}, pos + 1
        while not text.startswith("}", pos):
            if out:
                pos = _expect(text, pos, ",", "an object")
            colon = text.find(":", pos)
            if colon < 0:
                raise ParseError(f"at offset {pos}: a key is never followed by ':'")
            key = text[pos:colon]
            out[key], pos = _value(text, colon + 1)
        return out, pos + 1
    if text.startswith("[", pos):
        items, pos = [], pos + 1
        while not text.startswith("]", pos):
            if items:
                pos = _expect(text, pos, ",", "an array")
            item, pos = _value(text, pos)
            items.append(item)
        return items, pos + 1
    for word, v in (("true", True), ("false", False), ("None", None)):
        if text.startswith(word, pos):
            return v, pos + len(word)
    m = _NUMBER.match(text, pos)
    if not m:
        raise ParseError(f"at offset {pos}: expected a value, got {text[pos:pos + 12]!r}")
    return json.loads(m.group()), m.end()


def parse_gemma4(text: str, tools=None) -> dict:
    """Free content, then ``<|tool_call>call:NAME{...}<tool_call|>`` per call."""
    start = text.find(OPEN)
    if start < 0:
        return _result(text, [])
    pos, calls = start, []
    while text.startswith(OPEN, pos):
        pos = _expect(text, pos, OPEN + "call:", f"call {len(calls)}")
        brace = text.find("{", pos)
        if brace < 0:
            raise ParseError(f"at offset {pos}: call {len(calls)} has no arguments")
        name = text[pos:brace]
        try:
            args, pos = _value(text, brace)
        except RecursionError:
            raise ParseError(f"at offset {brace}: arguments nested too deeply") from None
        pos = _expect(text, pos, CLOSE, f"the end of call {name!r}")
        calls.append((name, args, None))
    if text[pos:].strip():
        raise ParseError(f"at offset {pos}: unexpected text after the calls")
    return _result(text[:start], calls)
