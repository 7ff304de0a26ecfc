"""Numeric bounds as exact digit automata.

``minimum``, ``maximum``, ``exclusiveMinimum`` and ``exclusiveMaximum`` become a comparison of
the written digits against the bound's digits: a longer integer part is larger, an equal one
is compared digit by digit, then the fraction digit by digit. Each one-sided bound is linear in
the bound's number of digits; two bounds are intersected (:mod:`toolc.schema.automata`).
Bounds are exact for any bound JSON can write (integers and finite decimals, including
exponent forms such as ``1e9``, which are expanded).

A bounded ``number`` is written without an exponent (``0.00001``, not ``1e-05``): a departure
toward a narrower language, stated in docs/json-schema.md. ``multipleOf`` is enforced
exactly as a remainder automaton: a divisor ``p / 10**k`` (any finite decimal) has ``p``
remainders (up to :data:`MAX_DIVISOR`) times ``k + 3`` fraction positions; a number with
``multipleOf`` is written without an exponent.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from ..errors import UnsupportedSchemaError
from ..fsm import (NOTHING, Bytes, Expr, Graph, Repeat, alt, byte_range, lit, opt, plus, seq,
                   star)
from . import json_grammar as jg
from .automata import intersect

MAX_DIVISOR = 10_000
_DIGIT = Bytes(byte_range(0x30, 0x39))
_NONZERO = Bytes(byte_range(0x31, 0x39))
_ANY_INT = alt(lit("0"), seq(_NONZERO, star(_DIGIT)))     # a magnitude's integer part
_ANY_FRAC = seq(lit("."), plus(_DIGIT))


def _digits_between(lo: int, hi: int) -> Expr:
    return Bytes(byte_range(0x30 + lo, 0x30 + hi)) if lo <= hi else NOTHING


def _split(d: Decimal) -> tuple[str, str]:
    """A non-negative decimal as (integer digits, fraction digits without trailing zeros)."""
    text = format(d, "f")
    ip, _, fp = text.partition(".")
    return ip.lstrip("0") or "0", fp.rstrip("0")


def _int_gt(li: str) -> Expr:
    """Integer parts (no leading zero) greater than ``li``."""
    n = len(li)
    longer = seq(_NONZERO, Repeat(_DIGIT, n, None))
    same = [seq(lit(li[:j]), _digits_between(int(li[j]) + 1, 9), Repeat(_DIGIT, n - j - 1,
                                                                       n - j - 1))
            for j in range(n)]
    return alt(longer, *same)


def _int_lt(li: str) -> Expr:
    """Integer parts (no leading zero) less than ``li``."""
    n = len(li)
    parts = []
    if n > 1:
        parts.append(_DIGIT)                            # every one-digit integer
        for k in range(1, n - 1):                       # every shorter one
            parts.append(seq(_NONZERO, Repeat(_DIGIT, k, k)))
    for j in range(n):
        low = 1 if (j == 0 and n > 1) else 0
        parts.append(seq(lit(li[:j]), _digits_between(low, int(li[j]) - 1),
                         Repeat(_DIGIT, n - j - 1, n - j - 1)))
    return alt(*parts)


def _frac(g: str, ge: bool, strict: bool) -> Expr:
    """Fractions ``.F`` (F non-empty) with 0.F >= 0.g (``ge``) or <= 0.g; strict: > or <.

    ``g`` has no trailing zeros, so a fraction that stops inside ``g`` is smaller than it.
    """
    parts = []
    for j in range(len(g)):
        d = int(g[j])
        step = _digits_between(d + 1, 9) if ge else _digits_between(0, d - 1)
        parts.append(seq(lit(g[:j]), step, star(_DIGIT)))
    if ge and strict:
        parts.append(seq(lit(g), star(lit("0")), _NONZERO, star(_DIGIT)))
    elif ge:
        parts.append(seq(lit(g), star(_DIGIT)) if g else plus(_DIGIT))
    else:
        parts.extend(lit(g[:j]) for j in range(1, len(g)))
        if not strict:
            parts.append(seq(lit(g), star(lit("0"))) if g else plus(lit("0")))
    body = alt(*parts)
    return NOTHING if body == NOTHING else seq(lit("."), body)


def magnitude(bound: Decimal, ge: bool, strict: bool, integer: bool) -> Expr:
    """Unsigned magnitudes ``I`` or ``I.F`` that compare to ``bound`` (>= 0) as asked:
    >= (``ge``) or <=, strictly (> or <) when ``strict``. Integers take no fraction."""
    if integer:
        floor = int(bound)                            # bound >= 0: truncation is floor
        ceil = floor + (1 if bound != floor else 0)
        if ge:
            b = floor + 1 if strict else ceil
        else:
            b = ceil - 1 if strict else floor
        if b < 0:
            return NOTHING
        return alt(_int_gt(str(b)) if ge else _int_lt(str(b)), lit(str(b)))
    li, lf = _split(bound)
    other = _int_gt(li) if ge else _int_lt(li)
    if ge:
        exact_ok = not strict and lf == ""
    else:
        exact_ok = not strict or lf != ""
    return alt(seq(other, opt(_ANY_FRAC)), seq(lit(li), _frac(lf, ge, strict)),
               lit(li) if exact_ok else NOTHING)


def _unsigned_any(integer: bool) -> Expr:
    return _ANY_INT if integer else seq(_ANY_INT, opt(_ANY_FRAC))


def lower_bound(bound: Decimal, strict: bool, integer: bool) -> Expr:
    """Signed values (no exponent) >= bound (> when strict)."""
    if bound > 0 or (bound == 0 and strict):
        pos = magnitude(bound, True, strict, integer)
    else:
        pos = _unsigned_any(integer)
    neg = NOTHING
    if bound <= 0:
        neg = seq(lit("-"), magnitude(-bound, False, strict, integer))
    return alt(pos, neg)


def upper_bound(bound: Decimal, strict: bool, integer: bool) -> Expr:
    """Signed values (no exponent) <= bound (< when strict)."""
    pos = NOTHING
    if bound >= 0:
        pos = magnitude(bound, False, strict, integer)
    if bound < 0 or (bound == 0 and strict):
        neg = seq(lit("-"), magnitude(-bound, True, strict, integer))
    else:
        neg = seq(lit("-"), _unsigned_any(integer))
    return alt(pos, neg)


def _decimal(value, ptr: str) -> Decimal:
    try:
        d = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    except (InvalidOperation, TypeError):
        raise UnsupportedSchemaError(f"expected a number, got {value!r}", pointer=ptr) from None
    if not d.is_finite():
        raise UnsupportedSchemaError(f"the bound {value!r} is not finite", pointer=ptr)
    return d


def _multiple_of(k: int) -> Expr:
    """Unsigned decimal integers (no leading zero) divisible by ``k``: remainders as states."""
    # state r (0..k-1) after a non-empty digit string; state k is the start
    edges = []
    for d in range(1, 10):
        edges.append((k, Bytes(1 << (0x30 + d)), d % k))
    for r in range(k):
        for d in range(10):
            edges.append((r, Bytes(1 << (0x30 + d)), (r * 10 + d) % k))
    return alt(lit("0"), Graph(k + 1, k, (0,), tuple(edges)))


def decimal_multiple_of(p: int, places: int, integer: bool) -> Expr:
    """Unsigned numbers without exponent that are multiples of ``p / 10**places``: the value
    times ``10**places`` is divisible by ``p``. States: the remainder modulo ``p`` and how many
    fraction digits were read (digits past ``places`` must be zeros)."""
    start, zero = 0, 1
    ids: dict = {}

    def st(phase, r):
        return ids.setdefault((phase, r), 2 + len(ids))

    edges: dict[tuple[int, int], int] = {}

    def edge(a, d, b):
        edges[(a, b)] = edges.get((a, b), 0) | (1 << (0x30 + d))

    finals = [zero]
    edge(start, 0, zero)
    for d in range(1, 10):
        edge(start, d, st("I", d % p))
    for r in range(p):
        i = st("I", r)
        for d in range(10):
            edge(i, d, st("I", (r * 10 + d) % p))
        if (r * 10 ** places) % p == 0:
            finals.append(i)
        if integer:
            continue
        first = st("D", r)          # after the point, before its first digit
        for d in range(10):
            if places:
                edge(first, d, st(1, (r * 10 + d) % p))
            elif d == 0:
                edge(first, d, st("X", r))
        for j in range(1, places + 1):
            f = st(j, r)
            if (r * 10 ** (places - j)) % p == 0:
                finals.append(f)
            for d in range(10):
                if j < places:
                    edge(f, d, st(j + 1, (r * 10 + d) % p))
                elif d == 0:
                    edge(f, d, st("X", r))
        if r == 0:
            finals.append(st("X", r))
            edge(st("X", r), 0, st("X", r))
    out = [(a, Bytes(m), b) for (a, b), m in sorted(edges.items())]
    if not integer:         # the point, from any integer part
        point = Bytes(1 << 0x2E)
        out += [(zero, point, st("D", 0))]
        out += [(st("I", r), point, st("D", r)) for r in range(p)]
    return Graph(2 + len(ids), start, tuple(sorted(set(finals))), tuple(out))


def number_expr(schema: dict, integer: bool, ptr: str) -> Expr:
    """An integer or number with the schema's bounds (and, for integers, multipleOf)."""
    parts = []
    for key, ge, strict in (("minimum", True, False), ("exclusiveMinimum", True, True),
                            ("maximum", False, False), ("exclusiveMaximum", False, True)):
        if key in schema:
            b = _decimal(schema[key], f"{ptr}/{key}")
            parts.append(lower_bound(b, strict, integer) if ge else upper_bound(b, strict,
                                                                                integer))
    if "multipleOf" in schema:
        m = _decimal(schema["multipleOf"], f"{ptr}/multipleOf")
        if m <= 0:
            raise UnsupportedSchemaError(f"'multipleOf' must be greater than 0, got {m}",
                                         pointer=f"{ptr}/multipleOf")
        sign, digits, exp = m.normalize().as_tuple()
        p = int("".join(map(str, digits))) * (10 ** exp if exp > 0 else 1)
        places = -exp if exp < 0 else 0
        if p > MAX_DIVISOR or p * (places + 3) > MAX_DIVISOR * 4:
            raise UnsupportedSchemaError(
                f"keyword 'multipleOf' {m} needs a remainder automaton of about "
                f"{p * (places + 3):,} states (at most {MAX_DIVISOR:,} remainders)",
                pointer=f"{ptr}/multipleOf", fix="remove it")
        if integer and places == 0:
            if p > 1:
                parts.append(seq(opt(lit("-")), _multiple_of(p)))
        else:
            parts.append(seq(opt(lit("-")), decimal_multiple_of(p, places, integer)))
    if not parts:
        return jg.INTEGER if integer else jg.NUMBER
    return intersect(*parts) if len(parts) > 1 else parts[0]
