"""Readers for the values in generated calls: linear, iterative (an explicit stack, never
Python's recursion) and bounded in depth, every failure a :class:`ParseError` with an offset.
Standard library only (the runtime side uses them through :mod:`toolc.parse`).

* :func:`json_at`: one JSON value at an offset (the C decoder, which guards its recursion;
  nesting past Python's recursion limit is a ParseError, not a RecursionError).
* :func:`python_value_at`: one Python literal in the JSON subset (strings, numbers, True,
  False, None, lists, tuples, dicts with string keys) at an offset; sets, bytes, complex
  numbers, ``...`` and anything else are refused with their offset.
* :func:`python_call_at`: ``NAME(args)`` with keyword or positional literal arguments. An
  argument list with no tuple, escape or double quote (the common call, of any length) is
  translated to JSON and read by the C decoder (:func:`_fast_call`); anything else, or any
  doubt, is read by the token reader (:func:`_read`), whose answers the JSON way must equal
  (``tests/test_literals.py``).
* :func:`share`: one copy of a name or key however many calls hold it.
* :func:`unicode_problem`: the first lone surrogate in a value's strings (JSON escapes allow
  them; they cannot be written as UTF-8).
"""

from __future__ import annotations

import ast
import json
import math
import re
from sys import intern as _intern

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


def share(s: str) -> str:
    """One copy of ``s`` however many calls hold it (interned), when it is a plain str."""
    return _intern(s) if type(s) is str else s


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
    return _read(text, _skip(text, pos), [], None)


def python_call_at(text: str, pos: int, positional: bool):
    """``NAME(key=value, ...)`` (or positional values) at ``pos``: (name, args, end) where
    args is a dict of keyword arguments or a list of positional ones."""
    pos = start = _skip(text, pos)
    m = _NAME.match(text, pos)
    if m is None:
        raise ParseError(f"at offset {pos}: expected NAME(...)")
    name, pos = share(m.group()), _skip(text, m.end())
    if not text.startswith("(", pos):
        raise ParseError(f"at offset {pos}: expected '(' after {name!r}")
    fast = _fast_call(text, pos + 1, positional)
    if fast is not None:
        return name, fast[0], fast[1]
    frame = [[], ")", _SEQ, None] if positional else [{}, ")", _KWARGS, None]
    args, end = _read(text, _skip(text, pos + 1), [frame], (start, name))
    return name, args, end


# One token per step: a plain string, a small integer, a bracket or separator, or a name, each
# with the whitespace after it; anything else (escapes, floats, prefixes, errors) goes to
# _scalar. A token's group number says its kind.
_TOKEN = re.compile(r"""(?:'([^'\\\n]*)'(?!')|"([^"\\\n]*)"(?!")"""
                    r"""|(-?(?:0|[1-9][0-9]{0,17}))(?![\w.])|([\]\[{}(),:=])|([^\W\d]\w*))"""
                    r"""[ \t\r\n]*""")
_OPENERS = {"[": "]", "(": ")", "{": "}"}
_SEQ, _DICT, _KWARGS = 0, 1, 2                   # a frame's kind
_ITEM, _VALUE, _KEY, _COLON, _AFTER = range(5)   # what the reader wants next


def _read(text: str, pos: int, stack: list, call):
    """The reader's loop over tokens, from ``pos`` until ``stack`` (frames ``[container,
    closer, kind, key]``) is empty: (value, end). ``call`` is (offset, name) of the call
    whose arguments the bottom frame holds, for messages."""
    base = len(stack)
    want = (_KEY if stack[-1][2] else _ITEM) if stack else _VALUE
    match = _TOKEN.match
    while True:
        m = match(text, pos)
        k = m.lastindex if m is not None else 0
        if want <= _VALUE:                           # a value (_ITEM: or the closer)
            if k == 1 or k == 2 or k == 3:
                value, pos = (int(m.group(3)) if k == 3 else m.group(k)), m.end()
            elif k == 4:
                c = m.group(4)
                if c in _OPENERS:
                    if len(stack) - base >= MAX_DEPTH:
                        raise ParseError(f"at offset {pos}: nested deeper than {MAX_DEPTH}")
                    is_dict = c == "{"
                    stack.append([{} if is_dict else [], _OPENERS[c], is_dict, None])
                    pos, want = m.end(), (_KEY if is_dict else _ITEM)
                    continue
                if want != _ITEM or c != stack[-1][1]:
                    raise ParseError(f"at offset {pos}: expected a value, got {c!r}")
                value, pos, want = stack.pop()[0], m.end(), _VALUE
            elif k == 5 and m.group(5) in _WORDS:
                value, pos = _WORDS[m.group(5)], m.end()
            else:
                value, pos = _scalar(text, pos)
                pos = _skip(text, pos)
        elif want == _KEY:                           # a dict's key or an argument's name
            top = stack[-1]
            if k == 4 and m.group(4) == top[1]:
                value, pos, want = stack.pop()[0], m.end(), _VALUE
            elif top[2] == _KWARGS:
                if k != 5:
                    raise ParseError(f"at offset {call[0]}: {call[1]}: the argument at offset "
                                     f"{pos} is not KEY=value (arguments are keywords)")
                if m.group(5) in top[0]:
                    raise ParseError(f"at offset {pos}: {call[1]}: argument "
                                     f"{m.group(5)!r} twice")
                top[3], pos, want = share(m.group(5)), m.end(), _COLON
                continue
            else:
                if k == 1 or k == 2:
                    key, pos = m.group(k), m.end()
                elif k == 0 and text[pos:pos + 1] in ("'", '"', "r", "R", "u", "U"):
                    key, pos = _scalar(text, pos)
                    pos = _skip(text, pos)
                else:
                    raise ParseError(f"at offset {pos}: a dict key that is not a string")
                top[3], want = key, _COLON
                continue
        elif want == _COLON:
            sep = "=" if stack[-1][2] == _KWARGS else ":"
            if k != 4 or m.group(4) != sep:
                what = "an argument's name" if sep == "=" else "a dict key"
                raise ParseError(f"at offset {pos}: expected {sep!r} after {what}")
            pos, want = m.end(), _VALUE
            continue
        else:                                        # _AFTER: ',' or the closer
            top = stack[-1]
            c = m.group(4) if k == 4 else None
            if c == ",":
                pos, want = m.end(), (_KEY if top[2] else _ITEM)
                continue
            if c != top[1]:
                raise ParseError(f"at offset {pos}: expected ',' or {top[1]!r}, got "
                                 f"{text[pos:pos + 12]!r}")
            value, pos, want = stack.pop()[0], m.end(), _VALUE
        # a value is complete: hand it to the container below, or return it
        if not stack:
            return value, _trim(text, pos)
        top = stack[-1]
        if top[2]:
            top[0][top[3]] = value
        else:
            top[0].append(value)
        want = _AFTER


def _trim(text: str, end: int) -> int:
    """``end`` with the whitespace the last token took back (a value ends at its last
    character)."""
    while end and text[end - 1] in " \t\r\n":
        end -= 1
    return end


# -- the fast way for the common call: arguments with no tuple, escape or double quote are
# translated to JSON and read by the C decoder. A translation that is not certainly exact
# returns None, and _read reads the call instead (so every error comes from _read).
_EXTENT = re.compile(r"""(?:[^'"()\\\x00\x01]++|'[^'"\\\n\x00]*+')*+\)""")
_IDENT = re.compile(r"([^\W\d]\w*+)(?:[ \t\r\n]*+(=))?")  # a name, and '=' after it
_AS_JSON = {"True": "true", "False": "false", "None": "null"}
#: the JSON way translates a long argument list in pieces of about this many characters, cut
#: after a comma outside the strings, so that its lists of small strings stay small (one
#: translation of a 10 MB call peaked at 314 MB); the C decoder then reads the whole
CHUNK = 1 << 16
_JSON_ONLY = frozenset(("true", "false", "null", "NaN", "Infinity"))


def _finite(s: str) -> float:
    v = float(s)
    if not math.isfinite(v):
        raise ValueError(s)
    return v


def _no_constant(s: str):
    raise ValueError(s)


_scan = json.JSONDecoder(parse_float=_finite, parse_constant=_no_constant).scan_once


def _fast_call(text: str, pos: int, positional: bool):
    """(args, end) for the arguments from ``pos`` (after the '(') to the closing ')', or
    None. The text outside the strings is translated: ``NAME=`` to a marker string
    ``"\\u0000NAME",``, True/False/None to JSON's words; then the whole argument list is
    one JSON list of alternating names and values. Raw text cannot spell a marker (no
    backslash is let through, and JSON refuses a raw control character), so the list's
    names equal to the markers made, in order, are exactly the top-level ``NAME=``. Any
    length: a long list is translated piece by piece (:func:`_pieces`)."""
    m = _EXTENT.match(text, pos)
    if m is None:
        return None
    end = m.end()
    names, markers, out, opened = [], [], [], 0
    for a, b in _pieces(text, pos, end - 1):
        piece = _translate(text[a:b], names, markers)
        if piece is None:
            return None
        out.append(piece[0])
        opened += piece[1]
    deep = opened > MAX_DEPTH                          # maybe: measured below
    source = "[" + "".join(out) + "]"
    del out
    try:
        values, stop = _scan(source, 0)
    except (ValueError, RecursionError, StopIteration):      # StopIteration: no value at 0
        return None
    if stop != len(source) or (deep and _deeper_than(values, MAX_DEPTH)):
        return None
    if positional:
        return (values, end) if not names else None
    if len(values) != 2 * len(names) or values[0::2] != markers:
        return None
    args = dict(zip(names, values[1::2]))
    return (args, end) if len(args) == len(names) else None


def _pieces(text: str, start: int, stop: int):
    """(a, b) bounds cutting ``text[start:stop]`` (which has no escape and an even number of
    quotes) into pieces of about CHUNK characters, each cut just after a comma outside the
    strings (the quotes before it are even), so that each piece translates alone. Linear:
    the quotes are counted once, from the last comma tried."""
    a = start
    while stop - a > CHUNK:
        b = prev = a + CHUNK
        quotes = text.count("'", a, b)
        while True:
            comma = text.find(",", prev, stop)
            if comma < 0:
                b = stop
                break
            quotes += text.count("'", prev, comma)
            prev = b = comma + 1
            if quotes % 2 == 0:
                break
        yield a, b
        a = b
    if a < stop or start == stop:
        yield a, stop


def _translate(piece: str, names: list, markers: list):
    """``piece`` (it starts outside a string) translated to JSON, and how many lists and
    dicts it opens; or None where the translation would not be exact. The names of its
    top-level ``NAME=`` and their markers are appended to ``names`` and ``markers``."""
    parts = piece.split("'")
    skeleton = "\x01".join(parts[0::2])            # the text outside the strings
    bits = _IDENT.split(skeleton)                  # text, name, '=' or None, text, ...
    for i in range(1, len(bits), 3):
        word = bits[i]
        if bits[i + 1] is None:
            if word in _JSON_ONLY:                 # a Python name, not a value
                return None
            bits[i], bits[i + 1] = _AS_JSON.get(word, word), ""
        else:
            if word in _AS_JSON:
                return None
            names.append(share(word))       # one copy of each key, however many calls
            markers.append("\x00" + word)
            bits[i], bits[i + 1] = '"\\u0000' + word + '",', ""
    parts[0::2] = "".join(bits).split("\x01")
    return '"'.join(parts), skeleton.count("[") + skeleton.count("{")


def _deeper_than(values: list, limit: int) -> bool:
    """Whether a value in ``values`` nests lists and dicts deeper than ``limit`` (as _read
    counts them; an explicit stack)."""
    todo = [(v, 1) for v in values if isinstance(v, (list, dict))]
    while todo:
        v, depth = todo.pop()
        if depth > limit:
            return True
        todo.extend((x, depth + 1) for x in (v.values() if isinstance(v, dict) else v)
                    if isinstance(x, (list, dict)))
    return False
