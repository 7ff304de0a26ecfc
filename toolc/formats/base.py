"""What every call format provides, and the pieces they share.

A format frames the tools' argument automata in a model family's own call syntax. It supplies
the *call block* (everything from the trigger to the end of the last call) and the free-text
rules; :meth:`CallFormat.grammar` then applies the tool-choice mode, the optional reasoning
section and the final EOS the same way for every format:

* ``auto``: free text, then optionally the call block, then EOS;
* ``required`` / a tool's name: the call block, then EOS;
* ``none``: free text, then EOS; the call block is not in the language at all.

A marker such as ``<tool_call>`` or ``[TOOL_CALLS]`` is a special symbol when the tokenizer
has it as an added token, and plain text otherwise (:func:`text`). A plain-text trigger is
matched across token boundaries by construction: free text is ``Avoid((trigger,))`` and the
block starts with ``lit(trigger)``, so the DFA tracks every partial match.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass

from ..fsm import ALL_BYTES, EMPTY, Avoid, Bytes, Expr, Repeat, Sym, alt, byte_set, lit, \
    opt, seq
from ..tokenizer import Vocabulary
from ..tools import Tool

EOS = "EOS"
_WS = Bytes(byte_set(" \t\n"))


@dataclass(frozen=True)
class FormatOptions:
    tool_choice: str = "auto"       # auto | required | none | a tool's name
    parallel: bool = True
    max_calls: int | None = None    # with parallel: at most this many calls (None: unbounded)
    reasoning: bool | str = False   # a reasoning section (<think>...</think>) may come first;
    #                                 "open": the prompt opened it, the output starts inside
    max_depth: int = 4              # nesting bound, for formats that recompile schemas


class Symbols(dict):
    """symbol name -> token ids, filled while a format builds its grammar."""


def text(vocab: Vocabulary, s: str, symbols: Symbols) -> Expr:
    """``s`` as an Expr: each added token of ``vocab`` spelled in it becomes its special
    symbol (registered in ``symbols``), the rest is literal text."""
    added = {k: v for k, v in vocab.added.items() if len(k) > 1 and k in s}
    parts, i, buf = [], 0, []
    while i < len(s):
        hit = max((k for k in added if s.startswith(k, i)), key=len, default=None)
        if hit is None:
            buf.append(s[i])
            i += 1
            continue
        if buf:
            parts.append(lit("".join(buf)))
            buf = []
        symbols[hit] = (added[hit],)
        parts.append(Sym(hit))
        i += len(hit)
    if buf:
        parts.append(lit("".join(buf)))
    return seq(*parts) if parts else EMPTY


def plain_parts(vocab: Vocabulary, s: str) -> list[bytes]:
    """The pieces of ``s`` that are plain text (not an added token), as bytes."""
    added = sorted((k for k in vocab.added if len(k) > 1 and k in s), key=len, reverse=True)
    pieces = [s]
    for k in added:
        pieces = [p for q in pieces for p in q.split(k)]
    return [p.encode("utf-8") for p in pieces if p]


def json_name(name: str) -> str:
    """A tool name as a JSON string (the names' characters are checked in toolc.tools)."""
    return json.dumps(name, ensure_ascii=False)


#: the prefix of the symbols that stand for a tool's block in a stitched DFA's framing
PLACEHOLDER = "\x00block:"


def is_placeholder(args: Expr) -> bool:
    """Is ``args`` a stitched DFA's placeholder for a tool's block (:mod:`toolc.stitch`)?"""
    return type(args) is Sym and args.name.startswith(PLACEHOLDER)


def chosen_tools(tools: list[tuple[Tool, Expr]], options: FormatOptions):
    choice = options.tool_choice
    if choice in ("auto", "required", "none"):
        return list(tools)
    return [(t, e) for t, e in tools if t.name == choice]


def repeat(item: Expr, sep: Expr, options: FormatOptions) -> Expr:
    """One call, or with parallel calls ``item (sep item)*`` bounded by ``max_calls``.

    The NFA holds one copy of ``item`` for the unbounded form (not one for the first call and
    one for the rest), which halves what subset construction has to build."""
    if not options.parallel:
        return item
    return Repeat(item, 1, None if options.max_calls is None else max(options.max_calls, 1),
                  sep)


def numbered(call, sep: Expr, options: FormatOptions, name: str) -> Expr:
    """``call(0) (sep call(1) (sep call(2) ...)?)?`` for formats whose calls carry their index
    (Kimi K2's ids, a custom ``{index}``): unrolled, so the number of calls must be bounded by
    ``max_calls``, or one call without ``parallel``."""
    n = 1 if not options.parallel else options.max_calls
    if n is None:
        from ..errors import InvalidOptionError
        raise InvalidOptionError(
            "max_calls", f"the {name} format numbers its calls, so parallel calls need a "
                         "bound: pass max_calls (--max-calls N) or turn parallel calls off")
    out = call(n - 1)
    for i in range(n - 2, -1, -1):
        out = seq(call(i), opt(seq(sep, out)))
    return out


class CallFormat:
    """Frames argument automata in a model family's native call syntax.

    Subclasses implement :meth:`block` (and, when free text is more than "anything that does
    not spell a marker", :meth:`free_text`); :meth:`grammar` does the rest.
    """

    name: str = ""
    #: reasoning markers: (open, close)
    think = ("<think>", "</think>")
    #: True when the calls can only start the answer (no free text before them in auto mode)
    calls_first = False

    def block(self, tools: list[tuple[Tool, Expr]], vocab: Vocabulary, options: FormatOptions,
              symbols: Symbols) -> tuple[Expr, list[bytes]]:
        """The call block, and the plain-text spellings free text must never contain."""
        raise NotImplementedError

    def eos(self, vocab: Vocabulary) -> tuple[int, ...]:
        return tuple(vocab.eos_ids)

    def free_text(self, avoid: list[bytes]) -> Expr:
        """Free content: any text that spells none of ``avoid``."""
        return Avoid(tuple(dict.fromkeys(avoid)))

    def grammar(self, tools: list[tuple[Tool, Expr]], vocab: Vocabulary,
                options: FormatOptions) -> tuple[Expr, dict[str, tuple[int, ...]]]:
        """The whole output language, and the token ids of each special symbol it uses."""
        symbols = Symbols()
        symbols[EOS] = self.eos(vocab)
        block, avoid = self.block(chosen_tools(tools, options), vocab, options, symbols)
        choice = options.tool_choice
        think_open, think_close = self.think
        if options.reasoning:
            avoid = avoid + plain_parts(vocab, think_open) + plain_parts(vocab, think_close)
        free = no_reasoning_head(self.free_text(avoid), think_open)
        if choice == "none":
            body = free
        elif choice == "auto":
            body = alt(free, block) if self.calls_first else seq(free, opt(block))
        else:
            body = block
        if options.reasoning:
            # the close spelled in ordinary tokens would end the section for a parser too
            inner = Avoid((think_close.encode("utf-8"),))
            if options.reasoning == "open":     # the prompt opened it: output starts inside
                section = seq(inner, text(vocab, think_close, symbols))
                gap = EMPTY if choice in ("auto", "none") else Repeat(_WS, 0, None)
                body = seq(section, gap, body)
            else:
                section = seq(text(vocab, think_open, symbols), inner,
                              text(vocab, think_close, symbols))
                if choice in ("auto", "none"):
                    body = seq(opt(section), body)
                else:   # the calls follow the reasoning, with only whitespace between
                    body = seq(opt(seq(section, Repeat(_WS, 0, None))), body)
        return seq(body, Sym(EOS)), dict(symbols)


@functools.lru_cache(maxsize=64)
def no_reasoning_head(free: Expr, own: str = "<think>") -> Expr:
    """``free`` without the texts that begin (after whitespace) with a reasoning tag spelled
    in ordinary tokens: the parser would read them as a reasoning section that is never
    closed (``own``: the format's opener, which its parser looks for too). A real reasoning
    section comes from :meth:`CallFormat.grammar`, not from here.

    Memoized by value (Exprs are immutable and compare by structure): ``free`` depends on the
    format, the options and the vocabulary, never on the tools, and the difference's two
    automata cost some 8 ms, about 7% of a 12-tool compile, paid again by every tool set."""
    from ..schema.automata import difference
    from .rules import REASONING_TAGS, WHITESPACE
    head = seq(Repeat(alt(*(lit(c) for c in WHITESPACE)), 0, None),
               alt(*(lit(o) for o in dict.fromkeys([own, *(o for o, _ in REASONING_TAGS)]))),
               Repeat(Bytes(ALL_BYTES), 0, None))
    return difference(free, head)


def first_byte_not(chars: str, avoid: list[bytes]) -> Expr:
    """Free text that does not begin with any of ``chars`` (formats whose calls are bare
    JSON or a bracket at the start of the answer), nor spell any of ``avoid``."""
    head = Bytes(((1 << 256) - 1) & ~byte_set(chars))
    # a pattern may begin with the head byte itself: avoid its tail as well
    tails = [p[1:] for p in avoid if len(p) > 1]
    return alt(EMPTY, seq(head, Avoid(tuple(dict.fromkeys(avoid + tails)))))
