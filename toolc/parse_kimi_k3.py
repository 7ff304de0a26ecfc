"""Parsing back Kimi K3's XTML (:mod:`toolc.formats.kimi_k3`): the response, then the calls,
then ``<|close|>message<|sep|>``. Runtime side: standard library only; one left-to-right pass
(the reasoning section is split off before, by :func:`toolc.parse.split_reasoning`)."""

from __future__ import annotations

from .errors import ParseError
from .formats.tagstyle import STYLES
from .parse import _expect, _result, _schemas
from .parse_tags import _params, _until

_RESPONSE = ("<|open|>response<|sep|>", "<|close|>response<|sep|>")
_END = "<|close|>message<|sep|>"


def parse_kimi_k3(text: str, tools=None) -> dict:
    st = STYLES["kimi-k3"]
    body = text.rstrip()
    if "<|open|>" not in body and "<|close|>" not in body:
        return _result(text, [])      # plain text, as every parser reads it: content
    if not body.endswith(_END):
        raise ParseError(f"at offset {len(body)}: the message does not end with {_END!r}")
    body = body[: -len(_END)]
    content, pos = "", 0
    if body.startswith(_RESPONSE[0]):
        content, pos = _until(body, len(_RESPONSE[0]), _RESPONSE[1], "the response")
    calls = []
    if body.startswith(st.block_open, pos):
        schemas = _schemas(tools)
        pos += len(st.block_open)
        while body.startswith(st.call_open, pos):
            i = len(calls)
            pos += len(st.call_open)
            name, pos = _until(body, pos, st.at(st.name_end, i), f"the name of call {i}")
            props = (schemas.get(name) or {}).get("properties") or {}
            args, pos = _params(body, pos, st, props, bool(tools))
            pos = _expect(body, pos, st.call_close, f"the end of call {name!r}")
            calls.append((name, args, None))
        if not calls:
            raise ParseError(f"at offset {pos}: a tools block without a call")
        pos = _expect(body, pos, st.block_close, "the calls' closing tag")
    if body[pos:]:
        raise ParseError(f"at offset {pos}: unexpected text {body[pos:pos + 20]!r}")
    return _result(content, calls)
