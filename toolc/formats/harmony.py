"""OpenAI's harmony format (gpt-oss), as the output that follows a prompt ending
``<|start|>assistant``:

    [<|channel|>analysis<|message|>REASONING<|end|><|start|>assistant]
    then one of
    <|channel|>commentary to=functions.NAME[ ]<|constrain|>json<|message|>ARGS<|call|>
     to=functions.NAME<|channel|>commentary[ ]<|constrain|>json<|message|>ARGS<|call|>
    <|channel|>final<|message|>ANSWER<|return|>

The recipient sits in the channel header (harmony's docs) or in the role header (openai-harmony's
renderer); the space before ``<|constrain|>`` is written both ways, so both are accepted. One
call per generation: ``<|call|>`` (or ``<|return|>`` after the final answer) ends the output,
and it is the grammar's last symbol (gpt-oss stops on both, so no other EOS follows). The
analysis message is part of every gpt-oss answer and is always allowed; with tool_choice
``required`` or a tool's name the answer is the call, with ``none`` the final message.

The markers must be added tokens of the tokenizer (o200k_harmony has them); every text and the
arguments spell none of them in ordinary tokens, and a tool name may not hold a space.
"""

from __future__ import annotations

from ..errors import InvalidOptionError, TokenizerError, UnsupportedSchemaError
from ..fsm import Avoid, Sym, alt, alt_factored, lit, opt, seq
from .base import EOS, CallFormat, Symbols, chosen_tools
from .closure import Closer
from .tagged import check_name

MARKERS = ("<|start|>", "<|end|>", "<|message|>", "<|channel|>", "<|constrain|>", "<|return|>",
           "<|call|>")


class Harmony(CallFormat):
    name = "harmony"

    def grammar(self, tools, vocab, options):
        if options.reasoning == "open":
            raise InvalidOptionError("reasoning", "harmony's analysis message is written by "
                                                  "the model, with its own header; 'open' does "
                                                  "not apply (the analysis is always allowed)")
        symbols = Symbols()
        for m in MARKERS:
            tid = vocab.token_id(m)
            if tid is None:
                raise TokenizerError(f"the harmony format needs the added token {m!r}, which "
                                     f"tokenizer {vocab.name!r} does not have")
            symbols[m] = (tid,)
        symbols[EOS] = self.eos(vocab)
        start, end, msg, chan, constrain, ret, call = (Sym(m) for m in MARKERS)
        avoid = tuple(m.encode() for m in MARKERS)
        text = Avoid(avoid)
        analysis = seq(chan, lit("analysis"), msg, text, end, start, lit("assistant"))
        final = seq(chan, lit("final"), msg, text, ret)
        calls, closer = [], Closer(avoid)
        for tool, args in chosen_tools(tools, options):
            check_name("tool name", tool.name, tool, f"{tool.pointer}/name", self.name)
            if " " in tool.name:
                raise UnsupportedSchemaError(
                    f"tool name {tool.name!r} cannot be written in the harmony format: a space "
                    "ends the recipient there", tool=tool.name, pointer=f"{tool.pointer}/name",
                    fix="rename the tool")
            to = lit(f"to=functions.{tool.name}")
            head = alt(seq(chan, lit("commentary "), to, opt(lit(" ")), constrain),
                       seq(lit(" "), to, chan, lit("commentary"), opt(lit(" ")), constrain))
            calls.append(seq(head, lit("json"), msg, closer.close(args, tool, self.name), call))
        choice = options.tool_choice
        body = final if choice == "none" else alt_factored(*calls) if choice != "auto" \
            else alt(final, *calls)
        return seq(opt(analysis), body), dict(symbols)
