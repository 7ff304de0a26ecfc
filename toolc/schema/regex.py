"""Patterns as toolc's own expressions, with counted repetition where it is exact.

interegular parses a pattern; this module turns its parse tree into a byte expression (each
character in json.dumps form, :func:`~toolc.schema.strings.chars_expr`) that toolc's own
automaton construction determinizes under a small state cap, so a pattern whose automaton is
exponential (``.{0,500}x.{0,500}``, ``(a|b)*a(a|b){18}``) is refused in a fraction of a
second, and one that expands past the cap (``x{100000}``) before anything is built.

**Counted repetition.** An anchored pattern that is one sequence of parts, where one part is
a character class repeated ``{m,n}`` and every other part matches a fixed number of
characters (``^[a-z]{1,64}$``, ``^\\+[0-9]{7,15}$``, ``^x{100000}$``), says two things: the
string reads ``P C* S``, and its length is ``|P| + |S| + m .. n``. The first is a small
automaton and the second is a length bound, which toolc counts (a counted region,
:class:`~toolc.fsm.Counted`) at the cost of one bound whatever ``n`` is. The rewrite is the
same language: a string of ``P C* S`` of that length has exactly ``m .. n`` characters in its
middle. Only repetitions of at least :data:`COUNT_FROM` characters are counted; shorter ones
stay states (they are cheap, and a counted region costs the runtime a counter).
"""

from __future__ import annotations

from ..fsm import NOTHING, Expr, Repeat, alt, seq, star

# a repetition counted rather than expanded: at least this many characters (tests lower it)
COUNT_FROM = 16


class Untranslated(Exception):
    """A parse tree this module does not translate (flags, an unknown node): the caller uses
    interegular's own conversion, which is exact but slow."""


class OutOfOrder(Exception):
    """``{m,n}`` with ``n < m``: a syntax error in the regex dialects JSON Schema names."""


def _kind(node) -> str:
    return type(node).__name__


def _group_ranges(node, ranges, complement):
    """The code-point ranges of an interegular character group (or the dot)."""
    kind = _kind(node)
    if kind == "__DotCls":
        return complement(ranges("\n"))
    if kind == "__EmptyCls":
        return None
    chars = node.chars
    return complement(ranges(chars)) if node.negated else ranges(chars)


def to_expr(node, chars_expr, ranges, complement) -> Expr:
    """The byte expression of an interegular parse tree (:class:`Untranslated` where it
    cannot say exactly what interegular would)."""
    kind = _kind(node)
    if kind == "Pattern":
        if node.added_flags or node.removed_flags:
            raise Untranslated("flags")
        return alt(*(to_expr(o, chars_expr, ranges, complement) for o in node.options))
    if kind == "_Concatenation":
        return seq(*(to_expr(p, chars_expr, ranges, complement) for p in node.parts))
    if kind == "_Repeated":
        if node.max is not None and node.max < node.min:
            raise OutOfOrder(f"numbers out of order in {{{node.min},{node.max}}}")
        base = to_expr(node.base, chars_expr, ranges, complement)
        if node.max is None:
            return seq(Repeat(base, node.min, node.min), star(base)) if node.min else star(base)
        return Repeat(base, node.min, node.max)
    if kind == "__EmptyCls":
        return seq()
    if kind in ("_CharGroup", "__DotCls"):
        r = _group_ranges(node, ranges, complement)
        return chars_expr(r) if r else NOTHING
    raise Untranslated(kind)


def fixed_length(node) -> int | None:
    """The number of characters every match of ``node`` has, or None if it varies."""
    kind = _kind(node)
    if kind in ("_CharGroup", "__DotCls"):
        return 1
    if kind == "__EmptyCls":
        return 0
    if kind == "_Concatenation":
        total = 0
        for p in node.parts:
            n = fixed_length(p)
            if n is None:
                return None
            total += n
        return total
    if kind == "Pattern":
        lens = {fixed_length(o) for o in node.options}
        return lens.pop() if len(lens) == 1 else None
    if kind == "_Repeated":
        n = fixed_length(node.base)
        if n is None or node.max != node.min:
            return 0 if n == 0 else None
        return n * node.min
    return None


def counted_form(tree):
    """``(tree', lo, hi)`` when ``tree`` (an anchored pattern's parse tree) is a sequence with
    one counted repetition worth counting, of a character class or a fixed-length group, and
    fixed-length parts around it: ``tree'`` has that repetition unbounded above, and
    ``lo..hi`` (hi None: unbounded) is the length of the whole string. A character class's
    minimum goes to the counter too (every longer length can follow it, one character at a
    time); a group keeps its minimum copies as states, so the minimum is the pattern's own and
    only the maximum is counted. None otherwise."""
    if _kind(tree) != "Pattern" or len(tree.options) != 1 or tree.added_flags \
            or tree.removed_flags:
        return None
    parts = tree.options[0].parts
    best, best_size, best_unit = None, 0, 0
    fixed, varying = 0, []
    for i, p in enumerate(parts):
        n = fixed_length(p)
        if n is None:
            varying.append(i)
        else:
            fixed += n
        unit = fixed_length(p.base) if _kind(p) == "_Repeated" else None
        if unit:
            size = unit * (p.min if p.max is None else p.max)
            if size > best_size:
                best, best_size, best_unit = i, size, unit
    if best is None or best_size < COUNT_FROM or any(i != best for i in varying):
        return None
    rep = parts[best]
    if not varying:
        fixed -= rep.min * best_unit    # every part was fixed: the chosen one is counted
    keep = 0 if best_unit == 1 else rep.min
    new_parts = parts[:best] + (type(rep)(base=rep.base, min=keep, max=None),) \
        + parts[best + 1:]
    new = type(tree)(options=(type(tree.options[0])(parts=new_parts),),
                     added_flags=tree.added_flags, removed_flags=tree.removed_flags)
    hi = None if rep.max is None else fixed + rep.max * best_unit
    return new, fixed + rep.min * best_unit, hi


def run_form(tree):
    """``(ascii_mask, m)`` when ``tree`` (an unanchored pattern's parse tree) is one
    repetition ``C{m}``, ``C{m,}`` or ``C{m,n}`` of a character class of ASCII characters
    that JSON writes raw (not ``"``, ``\\`` or a control character), with ``m`` at least
    :data:`COUNT_FROM`: the pattern then means "the string holds ``m`` characters of ``C``
    in a row" (a longer run holds one of ``m``, so ``n`` does not matter), which a counter
    that resets on every other character decides (:mod:`toolc.walk.runcounts`). None
    otherwise."""
    if _kind(tree) != "Pattern" or len(tree.options) != 1 or tree.added_flags \
            or tree.removed_flags:
        return None
    parts = tree.options[0].parts
    if len(parts) != 1 or _kind(parts[0]) != "_Repeated":
        return None
    rep = parts[0]
    if rep.min < COUNT_FROM or (rep.max is not None and rep.max < rep.min):
        return None
    base = rep.base
    if _kind(base) != "_CharGroup" or base.negated or not base.chars:
        return None
    cps = [ord(c) for c in base.chars]
    if any(cp < 0x20 or cp > 0x7E or cp in (0x22, 0x5C) for cp in cps):
        return None
    mask = 0
    for cp in cps:
        mask |= 1 << cp
    return mask, rep.min


RUN_KIND = "run:"       # a run region's kind: this prefix and its class's ASCII mask in hex


def run_kind(mask: int) -> str:
    return f"{RUN_KIND}{mask:032x}"


def run_class(kind: str) -> int | None:
    """The ASCII mask of a run region's kind (None for any other kind)."""
    return int(kind[len(RUN_KIND):], 16) if kind.startswith(RUN_KIND) else None
