"""JSON's lexical grammar as Expr values: strings, numbers, literals, and free-form values.

By default values are written the way Python's ``json.dumps`` writes them, which is how the
chat templates render arguments (``tojson``): ``", "`` between items, ``": "`` after keys,
non-ASCII characters raw, control characters escaped. A :class:`Style` picks the separators:
``model`` (those defaults), ``compact`` (``","`` and ``":"``) or ``flexible`` (any JSON
whitespace around the structural characters, at most ``max_ws`` characters in a row: a
model must never be able to loop on whitespace forever).
"""

from __future__ import annotations

import json

from dataclasses import dataclass

from ..fsm import Bytes, EMPTY, Expr, alt, byte_range, byte_set, lit, opt, plus, seq, star, Repeat

ITEM_SEP = lit(", ")
KEY_SEP = lit(": ")
WHITESPACE_MODES = ("model", "compact", "flexible")


@dataclass(frozen=True)
class Style:
    """Where whitespace may go: ``open``/``close`` wrap the inside of ``{}``/``[]``."""

    item_sep: Expr = ITEM_SEP
    key_sep: Expr = KEY_SEP
    open: Expr = EMPTY
    close: Expr = EMPTY

    @classmethod
    def of(cls, mode: str = "model", max_ws: int = 4) -> "Style":
        if mode == "model":
            return cls()
        if mode == "compact":
            return cls(lit(","), lit(":"))
        if mode == "flexible":
            ws = Repeat(Bytes(byte_set(b" \t\n\r")), 0, max_ws)
            return cls(seq(ws, lit(","), ws), seq(ws, lit(":"), ws), ws, ws)
        raise ValueError(f"unknown whitespace mode {mode!r}: use one of "
                         f"{', '.join(WHITESPACE_MODES)}")

    def empty(self, pair: str) -> Expr:
        """``{}`` or ``[]`` with the allowed whitespace inside."""
        inner = self.open if self.open == self.close else seq(self.open, self.close)
        return seq(lit(pair[0]), inner, lit(pair[1]))


MODEL = Style()

_DIGIT = Bytes(byte_range(0x30, 0x39))
_NONZERO = Bytes(byte_range(0x31, 0x39))
_HEX = Bytes(byte_set(b"0123456789abcdefABCDEF"))
_CONT = Bytes(byte_range(0x80, 0xBF))


def _utf8_multibyte():
    """Every well-formed UTF-8 sequence of two to four bytes (no surrogates, no overlongs).

    Written with shared tails (the last one, two or three continuation bytes) rather than as
    eight separate branches, so subset construction makes few states per string.
    """
    b = Bytes
    return seq(
        alt(b(byte_range(0xC2, 0xDF)),
            seq(b(1 << 0xE0), b(byte_range(0xA0, 0xBF))),
            seq(b(1 << 0xED), b(byte_range(0x80, 0x9F))),
            seq(b(byte_range(0xE1, 0xEC) | byte_range(0xEE, 0xEF)), _CONT),
            seq(alt(seq(b(1 << 0xF0), b(byte_range(0x90, 0xBF))),
                    seq(b(1 << 0xF4), b(byte_range(0x80, 0x8F))),
                    seq(b(byte_range(0xF1, 0xF3)), _CONT)),
                _CONT)),
        _CONT)


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


def array_of(item, min_items: int = 0, max_items: int | None = None, style: Style = MODEL):
    """``[item, item, ...]`` with a count between the bounds."""
    if max_items is not None and max_items == 0:
        return style.empty("[]")
    first = max(min_items, 1)
    rest_max = None if max_items is None else max_items - 1
    body = seq(style.open, item, Repeat(seq(style.item_sep, item), first - 1, rest_max),
               style.close)
    if min_items == 0:
        body = alt(body, style.open)
    return seq(lit("["), body, lit("]"))


def object_of(value, style: Style = MODEL, key=None, min_members: int = 0,
              max_members: int | None = None):
    """``{"key": value, ...}``: string keys (``key``, by default any string), a member count
    between the bounds."""
    member = seq(STRING if key is None else key, style.key_sep, value)
    if max_members == 0:
        return style.empty("{}")
    first = max(min_members, 1)
    rest_max = None if max_members is None else max_members - 1
    body = seq(style.open, member, Repeat(seq(style.item_sep, member), first - 1, rest_max),
               style.close)
    if min_members == 0:
        body = alt(body, style.open)
    return seq(lit("{"), body, lit("}"))


def any_value(depth: int, style: Style = MODEL):
    """Any JSON value, with arrays and objects nested at most ``depth`` levels."""
    scalar = alt(STRING, NUMBER, BOOLEAN, NULL)
    if depth <= 0:
        return scalar
    inner = any_value(depth - 1, style)
    return alt(scalar, array_of(inner, style=style), object_of(inner, style))


__all__ = ["STRING", "INTEGER", "NUMBER", "BOOLEAN", "NULL", "ITEM_SEP", "KEY_SEP", "EMPTY",
           "MODEL", "Style", "WHITESPACE_MODES", "render", "array_of", "object_of", "any_value"]
