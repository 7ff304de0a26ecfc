"""The ToolDec paper's form (Zhang et al., 2023, "Don't Fine-Tune, Decode"): text mode, then a
trigger switches to tool mode, where the model writes ``name(arg, ...)``: a known tool name and
positional, type-conforming arguments in schema order (Python literals; only trailing optional
arguments may be left out).

The trigger is ``<tool>``: a special symbol if the tokenizer has it as an added token, plain
text otherwise (matched across token boundaries). Parallel calls are joined by ``\n``.
"""

from __future__ import annotations

from ..fsm import alt_factored, lit, seq
from .base import CallFormat, plain_parts, repeat, text
from .pyvalues import check_identifier, keyword_args

TRIGGER = "<tool>"


class ToolDec(CallFormat):
    name = "tooldec"

    def block(self, tools, vocab, options, symbols):
        for t, _ in tools:
            check_identifier("tool name", t.name, t, f"{t.pointer}/name", self.name)
        trig = text(vocab, TRIGGER, symbols)
        call = seq(trig, alt_factored(*(seq(lit(f"{t.name}("),
                                            keyword_args(t, options, positional=True), lit(")"))
                                        for t, _ in tools)))
        return repeat(call, lit("\n"), options), plain_parts(vocab, TRIGGER)
