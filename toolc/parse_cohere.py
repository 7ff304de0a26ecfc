"""Parsing back Cohere's CMD4 turn (:mod:`toolc.formats.cohere`): a response between
``<|START_RESPONSE|>`` and ``<|END_RESPONSE|>``, or the calls' JSON list. Runtime side:
standard library only (the thinking section is split off before, by
:func:`toolc.parse.split_reasoning`)."""

from __future__ import annotations

from .errors import ParseError
from .parse import _result
from .parse_tags import _until, parse_framed

_RESPONSE = ("<|START_RESPONSE|>", "<|END_RESPONSE|>")


def parse_cohere(text: str, tools=None) -> dict:
    if text.startswith(_RESPONSE[0]):
        content, pos = _until(text, len(_RESPONSE[0]), _RESPONSE[1], "the response")
        if text[pos:].strip():
            raise ParseError(f"at offset {pos}: unexpected text after the response")
        return _result(content, [])
    if "<|START_ACTION|>" not in text and _RESPONSE[0] not in text:
        return _result(text, [])      # plain text, as every parser reads it: content
    if not text.startswith("<|START_ACTION|>"):
        raise ParseError("at offset 0: expected <|START_RESPONSE|> or <|START_ACTION|>")
    return parse_framed(text, tools, style="cohere")
