"""The Hermes / Qwen2.5 / Qwen3 format, byte for byte as Qwen3's chat template renders a call:

    <tool_call>\n{"name": "NAME", "arguments": ARGS}\n</tool_call>

``<tool_call>`` and ``</tool_call>`` are added tokens, matched only as those tokens. Parallel
calls are joined by ``\n``; the answer ends with EOS. With tool_choice auto, free text comes
first; it never contains a special token and never spells out either tag in ordinary text.

A JSON string argument (or a free key) could spell ``</tool_call>`` in ordinary tokens, where a
parser searching for the tag (vLLM's and SGLang's hermes parsers, toolc's own) cuts the call.
:attr:`Hermes.closed_strings` (on by default) closes that hole exactly: the compiler keeps
both tags from being spelled anywhere between the call tokens, on the built DFA
(:mod:`toolc.fsm.unspelled`; in a tool that holds a counted region the grammar's string
bodies are closed instead, :mod:`toolc.formats.closure`, which also makes the refusals, and
the DFA's product leaves the counted states alone). Each string
value gains the partial-tag states (17,196 to 19,759 states on schemas/tools80); the walk
copies their runs from the string body (:mod:`toolc.walk.twins`) and the encoder encodes
them from it (:mod:`toolc.encode_twins`). tools80 compiles in about 1.5x the open grammar's
CPU time and its artifact grows by a third (241,744 to 319,390 bytes): the price of an
artifact that never accepts what the parser would cut. Setting the attribute to False (for
measurements) gives the open grammar. See docs/performance.md.
"""

from __future__ import annotations

import functools

from ..errors import TokenizerError
from ..fsm import Sym, alt_factored, lit, seq
from .base import CallFormat, is_placeholder, json_name, repeat
from .closure import Closer, holds_counted

OPEN, CLOSE = "<tool_call>", "</tool_call>"


class Hermes(CallFormat):
    name = "hermes"
    #: forbid the tags' bytes inside string arguments and keys (exact; about +50% compile CPU
    #: on tools80, see the module's doc)
    closed_strings = True

    def block(self, tools, vocab, options, symbols):
        for tag in (OPEN, CLOSE):
            tid = vocab.token_id(tag)
            if tid is None:
                raise TokenizerError(f"the hermes format needs the added token {tag!r}, which "
                                     f"tokenizer {vocab.name!r} does not have")
            symbols[tag] = (tid,)
        for t, _ in tools:
            if OPEN in t.name or CLOSE in t.name:
                from ..errors import UnsupportedSchemaError
                raise UnsupportedSchemaError(
                    f"tool name {t.name!r} spells a {OPEN} tag, where a parser would cut the "
                    "call", tool=t.name, pointer=f"{t.pointer}/name", fix="rename the tool")
        if tools and all(is_placeholder(a) for _, a in tools):
            # the framing of a stitched DFA (toolc.stitch): each tool's arguments through
            # the closing tag are a block built on its own (stitch_block)
            body = alt_factored(*(seq(lit('\n{"name": ' + json_name(t.name) + ', "arguments": '),
                                      args) for t, args in tools))
            return repeat(seq(Sym(OPEN), body), lit("\n"), options), [OPEN.encode(),
                                                                     CLOSE.encode()]
        closer = Closer((OPEN, CLOSE) if self.closed_strings else ())
        # closed here (the refusals), and kept closed in the grammar only in the tools whose
        # counted regions need it (the DFA's product leaves counted states alone); the rest
        # of the built DFA is closed instead (see unspelled_within)
        closed = [closer.close(args, t, self.name) for t, args in tools]
        if self.closed_strings:
            closed = [c if holds_counted(a) else a for (_, a), c in zip(tools, closed)]
        body = alt_factored(*(seq(lit('\n{"name": ' + json_name(t.name) + ', "arguments": '),
                                  args, lit("}\n"))
                              for (t, _), args in zip(tools, closed)))
        call = seq(Sym(OPEN), body, Sym(CLOSE))
        return repeat(call, lit("\n"), options), [OPEN.encode(), CLOSE.encode()]

    def stitch_block(self, tool, args):
        """A tool's block for a stitched DFA (:mod:`toolc.stitch`): its arguments through the
        closing tag, after the opening tag (which only marks where a block starts). With
        closed strings its string bodies are closed in the grammar (the same minimal DFA as
        the product on the DFA, ``tests/test_unspelled.py``; cheaper for a block alone), with
        the refusals :meth:`block` makes of a tool whose fixed strings spell a tag."""
        if self.closed_strings:
            args = _block_closer().close(args, tool, self.name)
        return seq(Sym(OPEN), args, lit("}\n"), Sym(CLOSE))

    def unspelled_within(self):
        """(tags, open, close): no tag may be spelled in ordinary bytes between the symbols
        ``open`` and ``close``, which the compiler makes so on the built DFA
        (:func:`toolc.fsm.unspelled.unspelled_within`); None when strings are left open."""
        if not self.closed_strings:
            return None
        return (OPEN.encode(), CLOSE.encode()), OPEN, CLOSE


@functools.lru_cache(maxsize=1)
def _block_closer() -> Closer:
    """One closer for every stitched block of the process: the string bodies it intersects
    are shared by all of them."""
    return Closer((OPEN, CLOSE))
