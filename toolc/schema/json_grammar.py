"""JSON's lexical grammar as Expr values: strings, numbers, literals, and free-form values.

Values are written the way Python's ``json.dumps`` writes them by default, which is how the
chat templates render arguments (``tojson``): ``", "`` between items, ``": "`` after keys,
non-ASCII characters raw, control characters escaped.
"""

from __future__ import annotations

import json

from ..fsm import Bytes, EMPTY, alt, byte_range, byte_set, lit, opt, plus, seq, star, Repeat

ITEM_SEP = lit(", ")
KEY_SEP = lit(": ")

_DIGIT = Bytes(byte_range(0x30, 0x39))
_NONZERO = Bytes(byte_range(0x31, 0x39))
_HEX = Bytes(byte_set(b"0123456789abcdefABCDEF"))
_CONT = Bytes(byte_range(0x80, 0xBF))


def _utf8_multibyte():
    """Every well-formed UTF-8 sequence of two to four bytes (no surrogates, no overlongs)."""
    b = Bytes
    return alt(
        seq(b(byte_range(0xC2, 0xDF)), _CONT),
        seq(b(1 << 0xE0), b(byte_range(0xA0, 0xBF)), _CONT),
        seq(b(byte_range(0xE1, 0xEC)), _CONT, _CONT),
        seq(b(1 << 0xED), b(byte_range(0x80, 0x9F)), _CONT),
        seq(b(byte_range(0xEE, 0xEF)), _CONT, _CONT),
        seq(b(1 << 0xF0), b(byte_range(0x90, 0xBF)), _CONT, _CONT),
        seq(b(byte_range(0xF1, 0xF3)), _CONT, _CONT, _CONT),
        seq(b(1 << 0xF4), b(byte_range(0x80, 0x8F)), _CONT, _CONT),
    )


# One character inside a JSON string: printable ASCII other than '"' and '\', a raw
# multi-byte UTF-8 character, or an escape.
_PLAIN_ASCII = Bytes(byte_range(0x20, 0x7F) & ~byte_set(b'"\\'))
# \uXXXX: any code unit but a surrogate, or a high surrogate escaped right before a low one
# (a lone surrogate parses in Python but cannot be encoded as UTF-8 afterwards)
_D = Bytes(byte_set(b"dD"))
_NOT_D_HEX = Bytes(byte_set(b"0123456789abcefABCEF"))
_U = alt(seq(_NOT_D_HEX, _HEX, _HEX, _HEX),
         seq(_D, Bytes(byte_range(0x30, 0x37)), _HEX, _HEX),
         seq(_D, Bytes(byte_set(b"89abAB")), _HEX, _HEX, lit("\\u"), _D,
             Bytes(byte_set(b"cdefCDEF")), _HEX, _HEX))
_ESCAPE = seq(lit("\\"), alt(Bytes(byte_set(b'"\\/bfnrt')), seq(lit("u"), _U)))
STRING_CHAR = alt(_PLAIN_ASCII, _utf8_multibyte(), _ESCAPE)
STRING = seq(lit('"'), star(STRING_CHAR), lit('"'))

INTEGER = seq(opt(lit("-")), alt(lit("0"), seq(_NONZERO, star(_DIGIT))))
NUMBER = seq(INTEGER, opt(seq(lit("."), plus(_DIGIT))),
             opt(seq(Bytes(byte_set(b"eE")), opt(Bytes(byte_set(b"+-"))), plus(_DIGIT))))
BOOLEAN = alt(lit("true"), lit("false"))
NULL = lit("null")


def render(value) -> bytes:
    """A JSON value as the model writes it: ``json.dumps`` defaults, non-ASCII raw."""
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


def array_of(item, min_items: int = 0, max_items: int | None = None):
    """``[item, item, ...]`` with a count between the bounds."""
    if max_items is not None and max_items == 0:
        return lit("[]")
    first = max(min_items, 1)
    rest_max = None if max_items is None else max_items - 1
    body = seq(item, Repeat(seq(ITEM_SEP, item), first - 1, rest_max))
    if min_items == 0:
        body = opt(body)
    return seq(lit("["), body, lit("]"))


def object_of(value):
    """``{"key": value, ...}``: any string keys, any number of members."""
    member = seq(STRING, KEY_SEP, value)
    return seq(lit("{"), opt(seq(member, star(seq(ITEM_SEP, member)))), lit("}"))


def any_value(depth: int):
    """Any JSON value, with arrays and objects nested at most ``depth`` levels."""
    scalar = alt(STRING, NUMBER, BOOLEAN, NULL)
    if depth <= 0:
        return scalar
    inner = any_value(depth - 1)
    return alt(scalar, array_of(inner), object_of(inner))


__all__ = ["STRING", "INTEGER", "NUMBER", "BOOLEAN", "NULL", "ITEM_SEP", "KEY_SEP", "EMPTY",
           "render", "array_of", "object_of", "any_value"]
