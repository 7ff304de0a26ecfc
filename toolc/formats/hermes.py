"""The Hermes / Qwen2.5 / Qwen3 format, byte for byte as Qwen3's chat template renders a call:

    <tool_call>\n{"name": "NAME", "arguments": ARGS}\n</tool_call>

``<tool_call>`` and ``</tool_call>`` are added tokens, matched only as those tokens. Parallel
calls are joined by ``\n``; the answer ends with EOS. With tool_choice auto, free text comes
first; it never contains a special token and never spells out either tag in ordinary text.
"""

from __future__ import annotations

from ..errors import TokenizerError
from ..fsm import Avoid, Expr, Repeat, Sym, alt, lit, opt, seq
from ..tokenizer import Vocabulary
from ..tools import Tool
from .base import CallFormat, FormatOptions

OPEN, CLOSE, EOS = "<tool_call>", "</tool_call>", "EOS"


class Hermes(CallFormat):
    name = "hermes"

    def grammar(self, tools: list[tuple[Tool, Expr]], vocab: Vocabulary,
                options: FormatOptions) -> tuple[Expr, dict[str, tuple[int, ...]]]:
        symbols = {EOS: tuple(vocab.eos_ids)}
        for tag in (OPEN, CLOSE):
            tid = vocab.token_id(tag)
            if tid is None:
                raise TokenizerError(f"the hermes format needs the added token {tag!r}, which "
                                     f"tokenizer {vocab.name!r} does not have")
            symbols[tag] = (tid,)
        choice = options.tool_choice
        chosen = [(t, e) for t, e in tools if choice in ("auto", "required", "none")
                  or t.name == choice]
        body = alt(*(seq(lit('\n{"name": "' + t.name + '", "arguments": '), args, lit("}\n"))
                     for t, args in chosen))
        call = seq(Sym(OPEN), body, Sym(CLOSE))
        if options.parallel:
            more = None if options.max_calls is None else max(options.max_calls - 1, 0)
            calls = seq(call, Repeat(seq(lit("\n"), call), 0, more))
        else:
            calls = call
        free = Avoid((OPEN.encode(), CLOSE.encode()))
        if choice == "auto":
            expr = seq(free, opt(calls), Sym(EOS))
        elif choice == "none":
            expr = seq(free, Sym(EOS))
        else:
            expr = seq(calls, Sym(EOS))
        return expr, symbols
