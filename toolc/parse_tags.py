"""Parsing back the formats whose bytes are data: the tag-per-parameter ones
(:mod:`toolc.formats.tagstyle`) and the JSON-argument ones with their own framing
(:mod:`toolc.formats.framedstyle`). Runtime side: standard library only.

One left-to-right pass: every search starts where the last one ended (``str.find`` from a
position, ``str.startswith`` at a position), so the time is linear in the text however many
calls it holds. The grammar guarantees that a value spells none of the format's tags, so the
first closing tag after a value's start is its end.
"""

from __future__ import annotations

import json

from .errors import ParseError
from .formats.rules import string_only
from .formats.framedstyle import STYLES as FRAMED
from .formats.tagstyle import STYLES, TagStyle
from .literals import share
from .parse import _expect, _json_at, _result, _schemas


def _until(text: str, pos: int, end: str, what: str) -> tuple[str, int]:
    """The text from ``pos`` up to ``end`` (not empty-``end``), and the position after it."""
    if not end:
        raise ParseError(f"at offset {pos}: {what}: no end marker")
    stop = text.find(end, pos)
    if stop < 0:
        raise ParseError(f"at offset {pos}: {what} is never closed by {end!r}")
    return text[pos:stop], stop + len(end)


def _value(raw_text: str, raw: bool | None, key: str, where: int):
    """A raw string (``raw``), JSON (not ``raw``), or without a schema JSON when it parses."""
    if raw:
        return raw_text
    try:
        return json.loads(raw_text)
    except json.JSONDecodeError as e:
        if raw is None:
            return raw_text
        raise ParseError(f"at offset {where + e.pos}: parameter {key!r}: invalid JSON "
                         f"({e.msg})") from None
    except RecursionError:
        raise ParseError(f"at offset {where}: parameter {key!r}: JSON nested too deeply") \
            from None


def _attr(text: str, pos: int, st: TagStyle, key: str) -> tuple[str, int]:
    """The per-value attribute's value (``true``/``false``, or a type name)."""
    head = f' {st.attr}="'
    pos = _expect(text, pos, head, f"the {st.attr} attribute of {key!r}")
    return _until(text, pos, '"', f"the {st.attr} attribute of {key!r}")


def _params(text: str, pos: int, st: TagStyle, props: dict, known: bool):
    args = {}
    while text.startswith(st.param_open, pos) and not text.startswith(st.call_close, pos):
        pos += len(st.param_open)
        key, pos = _until(text, pos, st.key_end, "a parameter name")
        key = share(key)                   # one copy of each key, however many calls
        raw = string_only(props[key]) if key in props else (None if not known else False)
        if st.attr:
            value, pos = _attr(text, pos, st, key)
            if st.attr == "string" and value not in ("true", "false"):
                raise ParseError(f"at offset {pos}: parameter {key!r}: string=\"{value}\"")
            raw = value == ("true" if st.attr == "string" else "string")
        pos = _expect(text, pos, st.value_open, f"the value of {key!r}")
        body, end = _until(text, pos, st.close_of(key), f"parameter {key!r}")
        if key in args:
            raise ParseError(f"at offset {pos}: parameter {key!r} given twice")
        args[key] = _value(body, raw, key, pos)
        pos = end
    return args, pos


def parse_tagged(text: str, tools=None, *, style: str) -> dict:
    """Free content, then the calls of format ``style`` (a key of ``STYLES``), then nothing.

    Values are raw strings where the tool's schema admits only strings (or the attribute says
    so), JSON otherwise; without ``tools``, JSON when the value parses as JSON, else raw."""
    st = STYLES[style]
    schemas = _schemas(tools)
    start = text.find(st.trigger)
    if start < 0:
        return _result(text, [])
    pos = _expect(text, start, st.block_open, "the calls' opening tag")
    calls = []
    while True:
        pos = _expect(text, pos, st.call_open, f"call {len(calls)}")
        if st.name_end:
            name, pos = _until(text, pos, st.name_end, f"the name of call {len(calls)}")
        else:   # the name runs to the first parameter or to the end of the call
            stops = [i for i in (text.find(st.param_open, pos), text.find(st.call_close, pos))
                     if i >= 0]
            if not stops:
                raise ParseError(f"at offset {pos}: call {len(calls)} is never closed")
            name, pos = text[pos:min(stops)], min(stops)
        props = (schemas.get(name) or {}).get("properties") or {}
        args, pos = _params(text, pos, st, props, bool(tools))
        pos = _expect(text, pos, st.call_close, f"the end of call {name!r}")
        calls.append((name, args, None))
        if text.startswith(st.call_sep + st.call_open, pos):
            pos += len(st.call_sep)
            continue
        pos = _expect(text, pos, st.block_close, "the calls' closing tag")
        if text[pos:].strip():
            raise ParseError(f"at offset {pos}: unexpected text after the calls")
        return _result(text[:start], calls)


def parse_framed(text: str, tools=None, *, style: str) -> dict:
    """Free content, then the calls of format ``style`` (a key of ``framedstyle.STYLES``),
    then nothing. A call's ``{index}`` must count 0, 1, ... as the grammar writes it."""
    st = FRAMED[style]
    start = text.find(st.trigger)
    if start < 0:
        return _result(text, [])
    pos = _expect(text, start, st.block_open, "the calls' opening tag")
    calls = []
    while True:
        i = len(calls)
        pos = _expect(text, pos, st.at(st.call_open, i), f"call {i}")
        name, pos = _until(text, pos, st.at(st.name_end, i), f"the name of call {i}")
        args, pos = _json_at(text, pos, f"the arguments of {name!r}")
        pos = _expect(text, pos, st.call_close, f"the end of call {name!r}")
        calls.append((name, args, None))
        if text.startswith(st.call_sep + st.at(st.call_open, i + 1), pos):
            pos += len(st.call_sep)
            continue
        pos = _expect(text, pos, st.block_close, "the calls' closing tag")
        if text[pos:].strip():
            raise ParseError(f"at offset {pos}: unexpected text after the calls")
        return _result(text[:start], calls)
