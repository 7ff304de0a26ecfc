"""String keywords: ``minLength``/``maxLength``, ``pattern`` and ``format``, as byte automata of
the string's JSON body (between the quotes).

Lengths count characters, as JSON Schema does: an escape such as ``\\n`` or ``\\u00e9`` is one
character, a raw multi-byte UTF-8 character is one character. Length bounds alone keep every
JSON escape; the automaton is ``Repeat(char, min, max)``, linear in the bound.

A ``pattern`` (or ``format``) applies to the decoded value while the model writes the escaped
form. toolc compiles the pattern over characters (interegular) and writes each character the
way ``json.dumps(..., ensure_ascii=False)`` writes it: raw, except ``"``, ``\\`` and control
characters, which take their short or ``\\u00XX`` escape. So a pattern-constrained string
allows no other escape (no ``\\u00e9`` for ``é``, no ``\\/``); the chat template never writes
them either. Patterns follow JSON Schema: unanchored unless the regex anchors itself (``^`` at
the start of a branch, ``$`` at its end).
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import threading

from .. import budget
from ..errors import BudgetExceededError, EmptyLanguageError, ToolcError, UnsupportedSchemaError
from ..fsm import NOTHING, Bytes, Counted, Expr, Graph, Repeat, alt, byte_range, lit, seq, star
from ..fsm.dfa import AmbiguousCountError, compile_expr
from ..fsm.size import nfa_size
from . import json_grammar as jg
from .automata import dfa_graph, intersect
from .regex import Untranslated, counted_form, run_form, run_kind, to_expr
from .formats import FORMATS, LEAP_SECOND_FORMATS, leap_seconds

MAX_CODEPOINT = 0x10FFFF
# whether length bounds become counted regions (the default) or chains of states
_COUNTED = contextvars.ContextVar("toolc_counted_lengths", default=True)


@contextlib.contextmanager
def expanded_lengths():
    """Within this block, ``minLength``/``maxLength`` compile to chains of states, one per
    character, as before counting existed: the slow twin the tests compare counted artifacts
    with, and the compiler's fallback where a counter would be ambiguous."""
    token = _COUNTED.set(False)
    try:
        yield
    finally:
        _COUNTED.reset(token)
_SURROGATES = (0xD800, 0xDFFF)


def _utf8(cp: int) -> bytes:
    return chr(cp).encode("utf-8")


def _same_length_seqs(lo: int, hi: int) -> list[list[tuple[int, int]]]:
    """Byte-range sequences for code points lo..hi that share one UTF-8 length."""
    n = len(_utf8(lo))
    for i in range(1, n):
        m = (1 << (6 * i)) - 1
        if lo & ~m != hi & ~m:
            if lo & m:
                return _same_length_seqs(lo, lo | m) + _same_length_seqs((lo | m) + 1, hi)
            if hi & m != m:
                return _same_length_seqs(lo, (hi & ~m) - 1) + _same_length_seqs(hi & ~m, hi)
    a, b = _utf8(lo), _utf8(hi)
    return [[(a[k], b[k]) for k in range(n)]]


def utf8_ranges(lo: int, hi: int) -> list[list[tuple[int, int]]]:
    """Byte-range sequences whose union is the UTF-8 encoding of code points lo..hi (surrogates
    are left out: they have no UTF-8 form)."""
    out = []
    for a, b in ((0, 0x7F), (0x80, 0x7FF), (0x800, _SURROGATES[0] - 1),
                 (_SURROGATES[1] + 1, 0xFFFF), (0x10000, MAX_CODEPOINT)):
        x, y = max(lo, a), min(hi, b)
        if x <= y:
            out.extend(_same_length_seqs(x, y))
    return out


def _escaped(cp: int) -> bool:
    return cp < 0x20 or cp in (0x22, 0x5C)


def chars_expr(ranges: list[tuple[int, int]]) -> Expr:
    """One character from the code-point ranges, written as json.dumps writes it."""
    parts = []
    for lo, hi in ranges:
        for cp in range(lo, min(hi, 0x7F) + 1):
            if _escaped(cp):
                parts.append(lit(json.dumps(chr(cp))[1:-1]))
    ascii_mask = 0
    for lo, hi in ranges:
        for cp in range(max(lo, 0), min(hi, 0x7F) + 1):
            if not _escaped(cp):
                ascii_mask |= 1 << cp
    if ascii_mask:
        parts.append(Bytes(ascii_mask))
    for lo, hi in ranges:
        if hi >= 0x80:
            for s in utf8_ranges(max(lo, 0x80), hi):
                parts.append(seq(*(Bytes(byte_range(a, b)) for a, b in s)))
    return alt(*parts) if parts else NOTHING


def _ranges(chars) -> list[tuple[int, int]]:
    cps = sorted(ord(c) for c in chars)
    out: list[list[int]] = []
    for cp in cps:
        if out and out[-1][1] + 1 == cp:
            out[-1][1] = cp
        else:
            out.append([cp, cp])
    return [(a, b) for a, b in out]


def _complement(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out, nxt = [], 0
    for a, b in ranges:
        if a > nxt:
            out.append((nxt, a - 1))
        nxt = b + 1
    if nxt <= MAX_CODEPOINT:
        out.append((nxt, MAX_CODEPOINT))
    return out


ANY_CHAR = chars_expr([(0, MAX_CODEPOINT)])   # any character, in json.dumps form


def _fsm_expr(fsm) -> Expr:
    """An interegular FSM over characters as a Graph over the characters' JSON forms."""
    import interegular      # only patterns and formats need it (about 13 ms to import)
    by_key: dict = {}
    for ch, key in fsm.alphabet._symbol_mapping.items():
        by_key.setdefault(key, []).append(ch)
    mentioned = _ranges(c for c in fsm.alphabet._symbol_mapping
                        if c is not interegular.fsm.anything_else)
    labels = {}
    for key, chars in by_key.items():
        ranges = _ranges(c for c in chars if c is not interegular.fsm.anything_else)
        if any(c is interegular.fsm.anything_else for c in chars):
            ranges = sorted(ranges + _complement(mentioned))
        labels[key] = chars_expr(ranges)
    states = sorted(fsm.states)
    num = {s: i for i, s in enumerate(states)}
    edges = []
    for s, row in fsm.map.items():
        for key, t in row.items():
            if labels[key] != NOTHING:
                edges.append((num[s], labels[key], num[t]))
    finals = tuple(sorted(num[s] for s in fsm.finals))
    if not finals:
        return NOTHING
    return Graph(len(states), num[fsm.initial], finals, tuple(edges))


def _branches(pattern: str) -> list[str]:
    """Split a regex at its top-level ``|``."""
    out, depth, cls, cur, i = [], 0, False, [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            cur.append(pattern[i:i + 2])
            i += 2
            continue
        if cls:
            cls = c != "]"
        elif c == "[":
            cls = True
            if pattern[i + 1:i + 2] == "]":   # "[]...]": the first ] is a literal
                cur.append(c)
                c, i = "]", i + 1
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            out.append("".join(cur))
            cur, i = [], i + 1
            continue
        cur.append(c)
        i += 1
    out.append("".join(cur))
    return out


def _ends_with_dollar(branch: str) -> bool:
    if not branch.endswith("$"):
        return False
    k = len(branch) - 1
    slashes = 0
    while k > 0 and branch[k - 1] == "\\":
        slashes += 1
        k -= 1
    return slashes % 2 == 0


# interegular builds a pattern's automaton state by state with a linear search per step, so a
# counted repetition (x{100000}) or an exponential one (.{0,500}x.{0,500}) would run for
# minutes: toolc watches its crawl, checking the compile deadline at every step and
# refusing a pattern whose automaton passes this many states in one construction (the
# largest built-in format, ipv6, needs 1,150)
PATTERN_STATE_CAP = 6_000
# and more than this many states over all the constructions one pattern makes (ipv6: 12,926)
PATTERN_WORK_CAP = 40_000
_watch = threading.local()


def _watched_crawl(crawl):
    def watched(alphabet, initial, final, follow):
        if not getattr(_watch, "on", False):
            return crawl(alphabet, initial, final, follow)
        count = [0]

        def counted_final(state):
            count[0] += 1
            _watch.work += 1
            if count[0] > PATTERN_STATE_CAP or _watch.work > PATTERN_WORK_CAP:
                raise _PatternTooLarge()
            budget.check("converting a pattern")
            return final(state)

        def checked_follow(state, transition):
            budget.check("converting a pattern")
            return follow(state, transition)
        return crawl(alphabet, initial, counted_final, checked_follow)
    watched.toolc_watched = True
    return watched


class _PatternTooLarge(Exception):
    pass


def _to_fsm(pattern):
    """interegular's ``to_fsm``, under the watch above."""
    import interegular.fsm
    if not getattr(interegular.fsm.crawl, "toolc_watched", False):
        interegular.fsm.crawl = _watched_crawl(interegular.fsm.crawl)
    _watch.on, _watch.work = True, 0
    try:
        return pattern.to_fsm()
    finally:
        _watch.on = False


def pattern_expr(pattern: str, ptr: str) -> Expr:
    """The string bodies whose decoded value contains a match of ``pattern`` (JSON Schema's
    unanchored search), each character in json.dumps form, every repetition as states."""
    return pattern_parts(pattern, ptr, counted=False)[0]


def pattern_parts(pattern: str, ptr: str, counted: bool = True):
    """``(body, lo, hi)``: the string bodies ``pattern`` admits, and the string length it
    implies (0 and None when it implies none). With ``counted``, an anchored pattern with one
    long counted character-class repetition (:func:`toolc.schema.regex.counted_form`) gives
    its body with that repetition unbounded and the length as ``lo..hi``, to be counted; an
    unanchored one that is only a long run of an ASCII class
    (:func:`toolc.schema.regex.run_form`) gives a run region (a counter that resets)."""
    import interegular
    parts, lo, hi = [], 0, None
    branches = _branches(pattern)
    for branch in branches:
        head = branch.startswith("^")
        tail = _ends_with_dollar(branch)
        core = branch[1 if head else 0:len(branch) - 1 if tail else len(branch)]
        with _pattern_errors(pattern, ptr):
            tree = interegular.parse_pattern(core)
            run = run_form(tree) if counted and not head and not tail \
                and len(branches) == 1 else None
            if run is not None:     # "holds m characters of C in a row": a run counter
                parts.append(Counted(star(ANY_CHAR), run[1], None, run_kind(run[0])))
                continue
            form = counted_form(tree) if counted and head and tail and len(branches) == 1 \
                else None
            if form is not None:
                tree, lo, hi = form
            body = _tree_expr(tree, pattern, ptr)
        parts.append(seq(star(ANY_CHAR) if not head else seq(), body,
                         star(ANY_CHAR) if not tail else seq()))
    return alt(*parts), lo, hi


def _too_large(pattern: str, ptr: str) -> BudgetExceededError:
    return BudgetExceededError(
        f"keyword 'pattern': the regex {pattern!r} needs an automaton of more than "
        f"{PATTERN_STATE_CAP:,} states (a long counted repetition, or one whose "
        "automaton is exponential in its count)", pointer=ptr,
        fix="shorten the counted repetitions, or use maxLength for a length (a long "
            "repetition is counted, at any bound, in a pattern anchored at both ends, "
            "^...$, with fixed-length parts around it, or in an unanchored pattern that is "
            "only C{m} of an ASCII class, 'contains m of C in a row', with no other string "
            "keyword beside it)")


def _tree_expr(tree, pattern: str, ptr: str) -> Expr:
    """A parse tree's automaton as a Graph: toolc's own construction under the pattern caps
    (sizes checked before anything is built), or interegular's where toolc does not
    translate the tree."""
    try:
        e = to_expr(tree, chars_expr, _ranges, _complement)
    except Untranslated:
        return _fsm_expr(_to_fsm(tree))
    if e == NOTHING:
        return NOTHING
    if nfa_size(e) > PATTERN_STATE_CAP * budget.NFA_FACTOR:
        raise _too_large(pattern, ptr)
    try:
        return dfa_graph(compile_expr(e, max_states=PATTERN_STATE_CAP))
    except EmptyLanguageError:
        return NOTHING
    except BudgetExceededError as err:
        if err.stage == "deadline":
            raise
        raise _too_large(pattern, ptr) from None


@contextlib.contextmanager
def _pattern_errors(pattern: str, ptr: str):
    """interegular's and the caps' failures, as one located refusal each."""
    import interegular
    try:
        yield
    except ToolcError:      # a budget or the deadline: as raised
        raise
    except _PatternTooLarge:
        raise _too_large(pattern, ptr) from None
    except (interegular.patterns.Unsupported, interegular.patterns.InvalidSyntax,
            NotImplementedError, ValueError) as e:
        raise UnsupportedSchemaError(
            f"keyword 'pattern' cannot be enforced: the regex {pattern!r} uses a feature "
            f"toolc cannot compile ({e})", pointer=ptr,
            fix="rewrite it without look-around, back-references, word boundaries or "
                "inner anchors") from None
    except RecursionError:
        raise UnsupportedSchemaError(
            f"keyword 'pattern' cannot be enforced: the regex {pattern!r} nests too "
            "deeply to compile", pointer=ptr, fix="flatten its groups") from None
    except Exception as e:  # interegular raises a bare Exception for, e.g., a{2,1}
        raise UnsupportedSchemaError(
            f"keyword 'pattern' cannot be enforced: the regex {pattern!r} cannot be "
            f"compiled ({e})", pointer=ptr,
            fix="write a regex that JavaScript accepts (in a{m,n}, m <= n)") from None


# lengths that formats imply: a hostname (RFC 1123, as jsonschema's checker reads it) has at
# most 253 characters; enforced where lengths are counted (a chain of 253 positions times the
# hostname's states would be far over the budget)
IMPLIED_MAX_LENGTH = {"hostname": 253}


def string_body(schema: dict, ptr: str, counted: bool = True, leap: bool = False) -> Expr:
    """The body of a JSON string (without its quotes) satisfying the string keywords.

    Length bounds become a counted region (:class:`~toolc.fsm.Counted`) over the body the
    other keywords allow, unless ``counted`` is false or :func:`expanded_lengths` is in
    force: the automaton then holds that body once, unbounded, whatever the bound. With
    ``leap``, ``date-time`` and ``time`` admit their leap seconds
    (:func:`~toolc.schema.formats.leap_seconds`)."""
    lo = int(schema.get("minLength", 0))
    hi = schema.get("maxLength")
    hi = None if hi is None else int(hi)
    if hi is not None and hi < lo:
        return NOTHING
    parts = []
    count = counted and _COUNTED.get()
    if "pattern" in schema:
        pats = schema["pattern"]
        for p in pats if isinstance(pats, list) else [pats]:   # a list: merged from allOf
            body, plo, phi = pattern_parts(p, f"{ptr}/pattern", count)
            parts.append(body)
            lo = max(lo, plo)
            hi = phi if hi is None else hi if phi is None else min(hi, phi)
    fmt = schema.get("format")
    if fmt is not None:
        if fmt not in FORMATS:
            raise UnsupportedSchemaError(
                f"keyword 'format' cannot be enforced: toolc does not know format {fmt!r}",
                pointer=f"{ptr}/format",
                fix=f"use one of {', '.join(sorted(FORMATS))}, or a 'pattern'")
        expr = pattern_expr(FORMATS[fmt], f"{ptr}/format")
        if leap and fmt in LEAP_SECOND_FORMATS:
            expr = alt(expr, leap_seconds(fmt))
        parts.append(expr)
    if count:
        implied = IMPLIED_MAX_LENGTH.get(fmt)
        if implied is not None:
            hi = implied if hi is None else min(hi, implied)
        if hi is not None and hi < lo:
            return NOTHING
        if (lo or hi is not None) and any(isinstance(p, Counted) for p in parts):
            if len(parts) > 1 or hi is not None:
                # beside another keyword, or a maximum (how much room the run still needs
                # would tie the two counters' masks together): built as states
                raise AmbiguousCountError("a run beside another string keyword")
            # a run inside a counted minimum: two counters on one string, each mask
            # independent of the other (neither limits the other's way to the close)
            return Counted(parts[0], lo, hi)
        if lo or hi is not None:
            body = (intersect(*parts) if len(parts) > 1 else parts[0]) if parts \
                else star(jg.STRING_CHAR)
            return NOTHING if body == NOTHING else Counted(body, lo, hi)
    if lo or hi is not None or not parts:
        parts.append(Repeat(jg.STRING_CHAR, lo, hi))
    return intersect(*parts) if len(parts) > 1 else parts[0]


def string_expr(schema: dict, ptr: str, leap: bool = False) -> Expr:
    body = string_body(schema, ptr, leap=leap)
    return NOTHING if body == NOTHING else seq(lit('"'), body, lit('"'))
