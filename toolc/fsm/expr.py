"""A regular-expression AST over bytes plus named special-token symbols.

Nodes are immutable values. A byte set is a 256-bit ``int`` (bit ``b`` set when byte ``b`` is
in the set); a special symbol is a name (``"<tool_call>"``, ``"EOS"``) that the format maps to
token ids. Two nodes go beyond textbook regular expressions because they keep the automaton small:

* :class:`Subseq` -- items in a fixed order, each optional or required, joined by a separator:
  a JSON object whose optional properties may be left out in any combination, in O(n) states.
* :class:`Avoid` -- any byte string that does not contain one of a few patterns (free text that
  never spells out a trigger), compiled as an Aho-Corasick automaton.

:class:`Graph` embeds an automaton built elsewhere (a regex pattern's, or the product of two
automata for an intersection) as a state graph whose edges are labelled by sub-expressions.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

ALL_BYTES = (1 << 256) - 1


class Expr:
    """Base class of the regular-expression nodes."""

    __slots__ = ()


def _cached_hash(cls):
    """Give a composite node a hash computed once: ``alt`` deduplicates by hashing, and a
    dataclass hash walks the whole subtree every time (3.5^depth for nested JSON values)."""
    names = tuple(f.name for f in fields(cls) if f.compare)

    def __hash__(self):
        h = self._h
        if h is None:
            h = hash((cls.__name__,) + tuple(getattr(self, n) for n in names))
            object.__setattr__(self, "_h", h)
        return h

    cls.__hash__ = __hash__
    return cls


@dataclass(frozen=True, slots=True)
class Bytes(Expr):
    """One byte from a set (a 256-bit mask)."""

    mask: int


@dataclass(frozen=True, slots=True)
class Sym(Expr):
    """One special-token symbol, matched only by the token(s) the format maps it to."""

    name: str


@_cached_hash
@dataclass(frozen=True, slots=True)
class Seq(Expr):
    items: tuple
    _h: int | None = field(default=None, init=False, compare=False, repr=False)


@_cached_hash
@dataclass(frozen=True, slots=True)
class Alt(Expr):
    items: tuple
    _h: int | None = field(default=None, init=False, compare=False, repr=False)


@_cached_hash
@dataclass(frozen=True, slots=True)
class Repeat(Expr):
    """``item`` repeated ``min`` to ``max`` times; ``max`` None means unbounded.

    With ``sep``, the items are separated by it (``item (sep item)*``); the NFA then holds
    one copy of ``item`` for the unbounded part instead of two."""

    item: Expr
    min: int = 0
    max: int | None = None
    sep: Expr | None = None
    _h: int | None = field(default=None, init=False, compare=False, repr=False)


@_cached_hash
@dataclass(frozen=True, slots=True)
class Subseq(Expr):
    """``items`` in order, each present or (unless required) absent, ``sep`` between those
    present."""

    items: tuple
    required: tuple
    sep: Expr
    _h: int | None = field(default=None, init=False, compare=False, repr=False)

    def next_items(self, start: int):
        """The items that may come right after item ``start - 1``: up to the next required."""
        for j in range(start, len(self.items)):
            yield j
            if self.required[j]:
                return

    def may_close(self, start: int) -> bool:
        """May the sequence end right after item ``start - 1``?"""
        return not any(self.required[start:])


@_cached_hash
@dataclass(frozen=True, slots=True)
class Avoid(Expr):
    """Any byte string containing none of ``patterns`` as a substring."""

    patterns: tuple
    _h: int | None = field(default=None, init=False, compare=False, repr=False)


@_cached_hash
@dataclass(frozen=True, slots=True)
class Graph(Expr):
    """An automaton as an expression: paths from ``start`` to any of ``finals`` along ``edges``.

    States are ``0 .. num_states - 1``; each edge is ``(source, label, target)`` with an Expr
    label (usually :class:`Bytes`).
    """

    num_states: int
    start: int
    finals: tuple
    edges: tuple
    _h: int | None = field(default=None, init=False, compare=False, repr=False)


@_cached_hash
@dataclass(frozen=True, slots=True)
class Counted(Expr):
    """``body`` as a counted region: a JSON string body whose length in characters must lie
    in ``lo..hi`` (``hi`` None: unbounded). The automaton holds ``body`` once, unbounded; its
    states carry the region's tag, and the runtime counts characters (see
    :mod:`toolc.walk.counts` and :mod:`toolc.runtime.counted`), so the bound costs no
    states. ``kind`` "items": ``body`` is the inside of a JSON array (between its brackets)
    and the unit is an item (see :mod:`toolc.walk.itemcounts`)."""

    body: Expr
    lo: int
    hi: int | None
    kind: str = "chars"
    _h: int | None = field(default=None, init=False, compare=False, repr=False)


EMPTY = Seq(())
NOTHING = Alt(())


def byte_set(chars: bytes | str | range | list) -> int:
    """A byte-set mask from bytes, a str of ASCII characters, or a range of byte values."""
    if isinstance(chars, str):
        chars = chars.encode("latin-1")
    m = 0
    for b in chars:
        m |= 1 << b
    return m


def byte_range(lo: int, hi: int) -> int:
    """The mask of bytes ``lo..hi`` inclusive."""
    return ((1 << (hi + 1)) - 1) ^ ((1 << lo) - 1)


_BYTE = tuple(Bytes(1 << b) for b in range(256))


def lit(data: bytes | str) -> Expr:
    """The literal byte string ``data`` (a str is UTF-8 encoded)."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    if len(data) == 1:
        return _BYTE[data[0]]
    return Seq(tuple(_BYTE[b] for b in data))


def seq(*items: Expr) -> Expr:
    flat = []
    for it in items:
        if type(it) is Seq:
            flat.extend(it.items)
        else:
            flat.append(it)
    for it in flat:
        if type(it) is Alt and not it.items:     # NOTHING absorbs the sequence
            return NOTHING
    return flat[0] if len(flat) == 1 else Seq(tuple(flat))


def alt(*items: Expr) -> Expr:
    flat = []
    for it in items:
        if isinstance(it, Alt):
            flat.extend(it.items)
        else:
            flat.append(it)
    out = []
    seen = set()
    for it in flat:
        if it not in seen:
            seen.add(it)
            out.append(it)
    return out[0] if len(out) == 1 else Alt(tuple(out))


def alt_factored(*items: Expr) -> Expr:
    """``alt(*items)``, with the alternatives that differ only in their leading bytes sharing
    the rest: ``ab X | cd X`` becomes ``(ab | cd) X``. The language is the same; the NFA holds
    ``X`` once, so subset construction builds its states once instead of once per
    alternative (tools with the same parameters, behind different names)."""
    groups: dict[tuple, list] = {}
    for it in items:
        parts = it.items if isinstance(it, Seq) else (it,)
        k = 0
        while k < len(parts) and type(parts[k]) is Bytes:
            k += 1
        groups.setdefault(tuple(parts[k:]), []).append(seq(*parts[:k]))
    return alt(*(seq(alt(*heads), *rest) for rest, heads in groups.items()))


def opt(item: Expr) -> Expr:
    return alt(item, EMPTY)


def star(item: Expr) -> Expr:
    return Repeat(item, 0, None)


def plus(item: Expr) -> Expr:
    return Repeat(item, 1, None)
