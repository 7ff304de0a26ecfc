"""Readers for the values in generated calls: linear, iterative (an explicit stack, never
Python's recursion) and bounded in depth, every failure a :class:`ParseError` with an offset.
Standard library only (the runtime side uses them through :mod:`toolc.parse`).

* :func:`json_at`: one JSON value at an offset (the C decoder, which guards its recursion;
  nesting past Python's recursion limit is a ParseError, not a RecursionError).
* :func:`python_value_at`: one Python literal in the JSON subset (strings, numbers, True,
  False, None, lists, tuples, dicts with string keys) at an offset; sets, bytes, complex
  numbers, ``...`` and anything else are refused with their offset.
* :func:`python_call_at`: ``NAME(args)`` with keyword or positional literal arguments.
* :func:`unicode_problem`: the first lone surrogate in a value's strings (JSON escapes allow
  them; they cannot be written as UTF-8).
"""

from __future__ import annotations

import ast
import json
import math
import re

from .errors import ParseError

MAX_DEPTH = 512          # nesting of lists and dicts in one value

_decoder = json.JSONDecoder()
_WS = re.compile(r"[ \t\r\n]*")
_NAME = re.compile(r"[^\W\d]\w*")
_NUMBER = re.compile(r"[-+]?(?:\d[\d_]*\.?[\d_]*(?:[eE][-+]?\d+)?|\.\d[\d_]*(?:[eE][-+]?\d+)?)"
                     r"(?![\w.])")
_STRING = re.compile(r"""([rRuU]?)('(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")""", re.S)
_PLAIN_STRING = re.compile(r"""'([^'\\\n]*)'(?!')|"([^"\\\n]*)"(?!")""")
_WORDS = {"True": True, "False": False, "None": None}
SURROGATE = _SURROGATE = re.compile("[\ud800-\udfff]")


def json_at(text: str, pos: int, what: str):
    """Decode one JSON value at ``pos``; return (value, end)."""
    try:
        return _decoder.raw_decode(text, pos)
    except json.JSONDecodeError as e:
        raise ParseError(f"at offset {e.pos}: {what}: invalid JSON ({e.msg})") from None
    except RecursionError:
        raise ParseError(f"at offset {pos}: {what}: JSON nested too deeply") from None


def unicode_problem(value) -> str | None:
    """A description of the first lone surrogate in ``value``'s strings and keys, or None."""
    todo = [value]
    while todo:
        v = todo.pop()
        if isinstance(v, str):
            m = _SURROGATE.search(v)
            if m:
                return f"a lone surrogate {m.group()!r} (not Unicode text)"
        elif isinstance(v, dict):
            todo.extend(v.keys())
            todo.extend(v.values())
        elif isinstance(v, list):
            todo.extend(v)
    return None


def _skip(text: str, pos: int) -> int:
    return _WS.match(text, pos).end()


def _scalar(text: str, pos: int):
    """One string, number or word at ``pos`` (no whitespace before it): (value, end)."""
    m = _PLAIN_STRING.match(text, pos)      # no escapes, no prefix: the common case
    if m is not None:
        g = m.group(1)
        return (m.group(2) if g is None else g), m.end()
    c = text[pos:pos + 1]
    if c in ("'", '"') or (c in "rRuU" and text[pos + 1:pos + 2] in ("'", '"')):
        m = _STRING.match(text, pos)
        if m is None or text.startswith(("'''", '"""'), pos + len(m.group(1))):
            raise ParseError(f"at offset {pos}: an unterminated or triple-quoted string")
        try:
            return ast.literal_eval(m.group()), m.end()
        except (ValueError, SyntaxError) as e:
            raise ParseError(f"at offset {pos}: a bad string literal ({e})") from None
    m = _NUMBER.match(text, pos)
    if m is not None:
        tok = m.group()
        try:
            value = float(tok) if any(ch in tok for ch in ".eE") else int(tok, 10)
        except ValueError:
            raise ParseError(f"at offset {pos}: a bad number {tok[:20]!r}") from None
        if isinstance(value, float) and not math.isfinite(value):
            raise ParseError(f"at offset {pos}: a number JSON cannot hold")
        return value, m.end()
    m = _NAME.match(text, pos)
    if m is not None and m.group() in _WORDS:
        return _WORDS[m.group()], m.end()
    got = text[pos:pos + 12]
    raise ParseError(f"at offset {pos}: not a JSON-compatible Python literal: {got!r}")


def python_value_at(text: str, pos: int):
    """One literal at ``pos`` (whitespace before it skipped): (value, end). Containers are
    read with an explicit stack; deeper than MAX_DEPTH is a ParseError."""
    stack: list = []          # [container, closer, key or None, expecting a key]
    pos = _skip(text, pos)
    while True:
        c = text[pos:pos + 1]
        if c in ("[", "(", "{"):
            if len(stack) >= MAX_DEPTH:
                raise ParseError(f"at offset {pos}: nested deeper than {MAX_DEPTH}")
            closer = {"[": "]", "(": ")", "{": "}"}[c]
            pos = _skip(text, pos + 1)
            if text.startswith(closer, pos):
                value, pos = ({} if c == "{" else []), pos + 1
            else:
                stack.append([{} if c == "{" else [], closer, None, c == "{"])
                continue
        else:
            value, pos = _scalar(text, pos)
        # a value is complete: hand it to the container below
        while True:
            if not stack:
                return value, pos
            top = stack[-1]
            pos = _skip(text, pos)
            if top[3]:          # the value was a dict key
                if not isinstance(value, str):
                    raise ParseError(f"at offset {pos}: a dict key that is not a string")
                if not text.startswith(":", pos):
                    raise ParseError(f"at offset {pos}: expected ':' after a dict key")
                top[2], top[3] = value, False
                pos = _skip(text, pos + 1)
                break
            if isinstance(top[0], dict):
                top[0][top[2]] = value
            else:
                top[0].append(value)
            if text.startswith(",", pos):
                pos = _skip(text, pos + 1)
                if text.startswith(top[1], pos):       # a trailing comma
                    value, pos = stack.pop()[0], pos + 1
                    continue
                top[3] = isinstance(top[0], dict)
                break
            if text.startswith(top[1], pos):
                value, pos = stack.pop()[0], pos + 1
                continue
            got = text[pos:pos + 12]
            raise ParseError(f"at offset {pos}: expected ',' or {top[1]!r}, got {got!r}")


def python_call_at(text: str, pos: int, positional: bool):
    """``NAME(key=value, ...)`` (or positional values) at ``pos``: (name, args, end) where
    args is a dict of keyword arguments or a list of positional ones."""
    pos = start = _skip(text, pos)
    m = _NAME.match(text, pos)
    if m is None:
        raise ParseError(f"at offset {pos}: expected NAME(...)")
    name, pos = m.group(), _skip(text, m.end())
    if not text.startswith("(", pos):
        raise ParseError(f"at offset {pos}: expected '(' after {name!r}")
    pos = _skip(text, pos + 1)
    args: dict | list = [] if positional else {}
    while not text.startswith(")", pos):
        if positional:
            value, pos = python_value_at(text, pos)
            args.append(value)
        else:
            k = _NAME.match(text, pos)
            after = _skip(text, k.end()) if k else pos
            if k is None or not text.startswith("=", after) or text.startswith("==", after):
                raise ParseError(f"at offset {start}: {name}: the argument at offset {pos} "
                                 "is not KEY=value (arguments are keywords)")
            if k.group() in args:
                raise ParseError(f"at offset {pos}: {name}: argument {k.group()!r} twice")
            value, pos = python_value_at(text, after + 1)
            args[k.group()] = value
        pos = _skip(text, pos)
        if text.startswith(",", pos):
            pos = _skip(text, pos + 1)
        elif not text.startswith(")", pos):
            raise ParseError(f"at offset {pos}: {name}: expected ',' or ')'")
    return name, args, pos + 1
