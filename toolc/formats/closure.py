"""Arguments that never spell a format's tags, built cheaply.

A parser that searches the text for a closing tag (toolc's hermes parser, the vendors' regexes)
cuts a call wherever an argument spells that tag in ordinary tokens: a JSON string holding
``</tool_call>`` ends a hermes call early. Forbidding the tags' bytes inside the arguments is
exact: outside strings JSON has no ``<``, and inside one a string can always write ``<`` as
``\\u003c``, so no value is lost (only a spelling that no parser could read).

Intersecting each tool's whole argument automaton with ``Avoid(tags)`` does that, but it
determinizes every tool on its own (+1.6 s on schemas/tools80). Here only the string bodies
are intersected: an expression between two ``"`` bytes of a sequence is a string body (when no tag
holds a ``"``, no spelling of one crosses those quotes; for tags that do, as DSML's and
MiniMax's, every tool takes the whole intersection), and the few distinct bodies
(``STRING_CHAR*``, a counted body, a pattern) are intersected once each and shared by every
tool. Everything else is then checked: a literal ``<`` must be followed, in its own sequence,
by bytes that leave every tag; where that cannot be shown, the tool falls back to the whole
intersection (exact, slower). A literal that spells a tag whole (a ``const``, an ``enum``
value, a property name) is refused: its only spelling would be the tag.
"""

from __future__ import annotations

import functools

from ..errors import UnsupportedSchemaError
from ..fsm import NOTHING, Alt, Avoid, Bytes, Counted, Expr, Graph, Repeat, Seq, Subseq, Sym
from ..schema.automata import intersect

_QUOTE = Bytes(1 << 0x22)
_BACKSLASH = Bytes(1 << 0x5C)


class _Spelled(Exception):
    """A literal spells a tag whole."""


class Closer:
    """Rewrites argument automata so that they spell none of ``tags``; one per grammar, so the
    string bodies it intersects are shared by all the tools."""

    def __init__(self, tags):
        self.tags = tuple(dict.fromkeys(t if isinstance(t, bytes) else t.encode("utf-8")
                                        for t in tags if t))
        self.first = 0
        for t in self.tags:
            self.first |= 1 << t[0]
        self._avoid = Avoid(self.tags)
        self._bodies: dict[Expr, Expr] = {}
        # the shortcut needs tags without '"': a tag holding one (DSML's '<｜DSML｜parameter
        # name="', MiniMax's '<parameter name="') can be spelled across a string's closing quote
        self._bodies_only = not any(0x22 in t for t in self.tags)

    def close(self, args: Expr, tool, fmt: str) -> Expr:
        """``args`` with no string spelling a tag (exact), or a refusal naming the tool."""
        if not self.tags:
            return args
        safe: set[int] = set()
        out = self._rewrite(args, {}, safe) if self._bodies_only else args
        try:
            clean = self._bodies_only and self._clean(out, safe, {})
        except _Spelled as e:
            raise UnsupportedSchemaError(
                f"a fixed string of this tool's arguments (a const, an enum value or a property "
                f"name) spells {e.args[0]!r}, where a {fmt} parser would cut the call",
                tool=tool.name, pointer=tool.schema_pointer,
                fix="write the value without that tag") from None
        if not clean:
            out = intersect(args, self._avoid)
        if out == NOTHING:
            raise UnsupportedSchemaError(
                f"no arguments of this tool can be written in the {fmt} format without "
                f"spelling one of its tags", tool=tool.name, pointer=tool.schema_pointer)
        return out

    # -- string bodies, intersected once each ------------------------------------------------

    def _body(self, e: Expr) -> Expr:
        got = self._bodies.get(e)
        if got is None:
            if type(e) is Alt:
                got = Alt(tuple(self._body(it) for it in e.items))
            elif type(e) is Counted:    # a run inside a counted length: closed inside both
                inner = self._body(e.body) if type(e.body) is Counted \
                    else _avoiding(e.body, self._avoid)
                got = Counted(inner, e.lo, e.hi, e.kind)
            elif not _may_hold(e, self.first, {}):
                got = e
            else:
                got = _avoiding(e, self._avoid)
            self._bodies[e] = got
        return got

    def _rewrite(self, e: Expr, memo: dict, safe: set) -> Expr:
        key = id(e)
        if key in memo:
            return memo[key]
        t = type(e)
        if t is Seq:
            items = list(e.items)
            for i, it in enumerate(items):
                if type(it) is Bytes:
                    continue
                if 0 < i < len(items) - 1 and items[i - 1] == _QUOTE and \
                        items[i + 1] == _QUOTE and not (i > 1 and items[i - 2] == _BACKSLASH):
                    items[i] = self._body(it)
                    safe.add(id(items[i]))
                else:
                    items[i] = self._rewrite(it, memo, safe)
            out = Seq(tuple(items))
        elif t is Alt:
            out = Alt(tuple(self._rewrite(it, memo, safe) for it in e.items))
        elif t is Repeat:
            out = Repeat(self._rewrite(e.item, memo, safe), e.min, e.max,
                         None if e.sep is None else self._rewrite(e.sep, memo, safe))
        elif t is Subseq:
            out = Subseq(tuple(self._rewrite(it, memo, safe) for it in e.items), e.required,
                         self._rewrite(e.sep, memo, safe))
        elif t is Counted:      # counted items or members: their strings are rewritten inside
            out = Counted(self._rewrite(e.body, memo, safe), e.lo, e.hi, e.kind)
        elif t is Graph and _quoted(e):     # a whole JSON string (a free key): closed alone
            out = self._body(e)
            safe.add(id(out))
        elif t is Graph:        # a bounded array's items, say: each label is rewritten alone
            out = Graph(e.num_states, e.start, e.finals,
                        tuple((s, lab if type(lab) is Bytes else self._rewrite(lab, memo, safe),
                               d) for s, lab, d in e.edges))
        else:
            out = e
        memo[key] = out
        return out

    # -- the check of what is left ------------------------------------------------------------

    def _clean(self, e: Expr, safe: set, memo: dict) -> bool:
        """Can ``e`` (outside the intersected bodies) spell no tag? False when unsure."""
        key = id(e)
        if key in safe:
            return True
        if key in memo:
            return memo[key]
        t = type(e)
        if t is Bytes:
            out = not e.mask & self.first
        elif t is Sym:
            out = True
        elif t is Seq:
            out = all(self._literal_leaves(e.items, i) if type(it) is Bytes
                      else self._clean(it, safe, memo) for i, it in enumerate(e.items))
        elif t in (Alt, Subseq):
            out = all(self._clean(it, safe, memo) for it in e.items) and \
                (t is Alt or self._clean(e.sep, safe, memo))
        elif t is Repeat:
            out = self._clean(e.item, safe, memo) and \
                (e.sep is None or self._clean(e.sep, safe, memo))
        elif t is Counted:
            out = self._clean(e.body, safe, memo)
        elif t is Graph:        # a tag spanning two labels starts with a '<' at a label's end
            out = all(self._clean(lab, safe, memo) for _, lab, _ in e.edges)
        else:
            out = False
        memo[key] = out
        return out

    def _literal_leaves(self, items: tuple, i: int) -> bool:
        """Is byte ``items[i]`` no tag's first byte, or a single byte whose following bytes in
        ``items`` leave every tag before it is complete?"""
        mask = items[i].mask
        if not mask & self.first:
            return True
        if mask & (mask - 1):       # several bytes, a tag's first among them: unsure
            return False
        for tag in self.tags:
            if mask != 1 << tag[0]:
                continue
            for k in range(1, len(tag)):
                j = i + k
                if j >= len(items) or type(items[j]) is not Bytes:
                    return False    # the tag may go on past what this sequence shows
                if not items[j].mask >> tag[k] & 1:
                    break           # left the tag
                if items[j].mask != 1 << tag[k]:
                    return False
            else:
                raise _Spelled(tag.decode("utf-8", "replace"))
        return True


@functools.lru_cache(maxsize=256)
def _avoiding(body: Expr, avoid: Avoid) -> Expr:
    """``body`` intersected with ``avoid``, memoized by value (Exprs are immutable and compare
    by structure): a string body (``STRING_CHAR*``, a format, a pattern) is the same in
    every tool set, and its two automata cost some 4 ms of every hermes request. Only bodies
    that may hold a tag's first byte get here: a few per catalogue (one in 40 requests of
    the dynamic workload)."""
    return intersect(body, avoid)


def _quoted(g: Graph) -> bool:
    """Is byte graph ``g`` a free JSON string (a key an ``additionalProperties`` admits): a
    cycle, and every string opening and closing with a double quote? Then no tag, which holds
    no quote, can run across its ends, and it is closed on its own. (An acyclic graph, an
    enum's values say, is left to the check, which refuses a value spelling a tag.)"""
    q = _QUOTE.mask
    finals = set(g.finals)
    if g.start in finals or any(type(lab) is not Bytes for _, lab, _ in g.edges):
        return False
    if not all(lab.mask == q for s, lab, d in g.edges if s == g.start or d in finals):
        return False
    succ: dict[int, list[int]] = {}
    for s_, _, d in g.edges:
        succ.setdefault(s_, []).append(d)
    state = dict.fromkeys(range(g.num_states), 0)      # 0 new, 1 on the path, 2 done
    for root in range(g.num_states):
        if state[root]:
            continue
        stack = [(root, iter(succ.get(root, ())))]
        state[root] = 1
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[node] = 2
                stack.pop()
            elif state[nxt] == 1:
                return True
            elif not state[nxt]:
                state[nxt] = 1
                stack.append((nxt, iter(succ.get(nxt, ()))))
    return False


def _parts(expr: Expr) -> tuple | None:
    """The expressions ``expr`` is made of (None for a leaf)."""
    t = type(expr)
    if t in (Seq, Alt):
        return expr.items
    if t is Repeat:
        return (expr.item,) if expr.sep is None else (expr.item, expr.sep)
    if t is Subseq:
        return (*expr.items, expr.sep)
    if t is Counted:
        return (expr.body,)
    if t is Graph:
        return tuple(lab for _, lab, _ in expr.edges)
    return None


def _may_hold(expr: Expr, mask: int, memo: dict) -> bool:
    """Can a string of ``expr`` hold a byte of ``mask``? (True where unsure.)"""
    key = id(expr)
    if key in memo:
        return memo[key]
    memo[key] = True
    t = type(expr)
    if t is Bytes:
        out = bool(expr.mask & mask)
    elif t is Sym:
        out = False
    else:
        parts = _parts(expr)
        out = parts is None or any(_may_hold(x, mask, memo) for x in parts)
    memo[key] = out
    return out


def holds_counted(expr: Expr, memo: dict | None = None) -> bool:
    """Does ``expr`` hold a counted region (whose states a product on the DFA would split)?"""
    memo = {} if memo is None else memo
    key = id(expr)
    if key in memo:
        return memo[key]
    memo[key] = False
    parts = _parts(expr)
    out = type(expr) is Counted or (parts is not None
                                    and any(holds_counted(x, memo) for x in parts))
    memo[key] = out
    return out
