"""One spelling per JSON value: the language :data:`CANON` of JSON texts whose strings and
numbers are written canonically, and the canonical spelling of one value.

Strings are written as ``json.dumps(..., ensure_ascii=False)`` writes them (raw characters,
short escapes, ``\\u00XX`` for the other control characters); numbers without exponent,
without trailing fraction zeros and without ``-0``. :mod:`toolc.schema.algebra` narrows both
sides of a difference to this language, so text-level difference is value-level difference.
"""

from __future__ import annotations

from ..fsm import Bytes, alt, byte_range, byte_set, lit, opt, seq, star
from . import json_grammar as jg

_DIGIT = Bytes(byte_range(0x30, 0x39))
_NONZERO = Bytes(byte_range(0x31, 0x39))
_FRAC = seq(lit("."), star(_DIGIT), _NONZERO)
_UNSIGNED = alt(seq(lit("0"), opt(_FRAC)), seq(_NONZERO, star(_DIGIT), opt(_FRAC)))
CANON_NUMBER = alt(_UNSIGNED, seq(lit("-"), alt(seq(_NONZERO, star(_DIGIT), opt(_FRAC)),
                                                seq(lit("0"), _FRAC))))
# a string character as json.dumps(ensure_ascii=False) writes it
_CTRL_U = alt(seq(lit("0"), Bytes(byte_set("01234567bef"))),
              seq(lit("1"), Bytes(byte_set("0123456789abcdef"))))
CANON_CHAR = alt(Bytes(byte_range(0x20, 0x7F) & ~byte_set(b'"\\')), jg._utf8_multibyte(),
                 seq(lit("\\"), alt(Bytes(byte_set(b'"\\bfnrt')), seq(lit("u00"), _CTRL_U))))
CANON_STRING = seq(lit('"'), star(CANON_CHAR), lit('"'))
_OUTSIDE = Bytes(((1 << 256) - 1) & ~byte_set(b'"-0123456789.+E') & ~byte_range(0x80, 0xFF))
_AFTER_NUMBER = Bytes(byte_set(b",]} \t\n\r"))
# JSON text in which every string and number has its one canonical spelling
CANON = seq(star(alt(_OUTSIDE, CANON_STRING, seq(CANON_NUMBER, _AFTER_NUMBER))),
            opt(CANON_NUMBER))


def canon_number(value) -> str:
    """A finite number's canonical spelling (``-2.0`` and ``-2`` are both ``-2``)."""
    from decimal import Decimal
    d = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    text = format(d, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def canon_value(value, style: jg.Style) -> str | None:
    """The canonical spelling of an enum value, or None where one value has several (an object
    of two keys or more: its keys may come in any order)."""
    import json
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, (int, float)):
        return canon_number(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    sep, ksep = (", ", ": ") if style == jg.MODEL else (",", ":")
    if style not in (jg.MODEL, jg.Style.of("compact")):
        return None         # flexible whitespace: many spellings
    if isinstance(value, list):
        parts = [canon_value(v, style) for v in value]
        return None if None in parts else "[" + sep.join(parts) + "]"
    if isinstance(value, dict) and len(value) <= 1:
        parts = [(json.dumps(k, ensure_ascii=False), canon_value(v, style))
                 for k, v in value.items()]
        if any(v is None for _, v in parts):
            return None
        return "{" + sep.join(k + ksep + v for k, v in parts) + "}"
    return None


_SHORT = {'"': '\\"', "\\": "\\\\", "/": "\\/", "\b": "\\b", "\f": "\\f", "\n": "\\n",
          "\r": "\\r", "\t": "\\t"}


def _code_unit(code: int):
    """``\\uXXXX`` for one UTF-16 code unit, its hex digits in either case."""
    return seq(lit("\\u"), *(Bytes(byte_set((d.lower() + d.upper()).encode()))
                             for d in f"{code:04x}"))


def every_spelling(text: str):
    """Every JSON spelling of the string ``text`` (quotes included): each character raw where
    JSON allows it, as its short escape, or as ``\\u`` escapes in either case. An object's
    undeclared keys exclude these, so no spelling of a declared key passes for another key."""
    parts = [lit('"')]
    for ch in text:
        code = ord(ch)
        opts = [lit(ch)] if code >= 0x20 and ch not in '"\\' else []
        if ch in _SHORT:
            opts.append(lit(_SHORT[ch]))
        if code < 0x10000:
            opts.append(_code_unit(code))
        else:
            code -= 0x10000
            opts.append(seq(_code_unit(0xD800 + (code >> 10)), _code_unit(0xDC00 + (code & 0x3FF))))
        parts.append(alt(*opts))
    parts.append(lit('"'))
    return seq(*parts)
