"""A message whose answer in words is wrapped in tags of its own (Kimi K3's response block,
Cohere's ``<|START_RESPONSE|>``), written once for the formats that have one."""

from __future__ import annotations

from ..fsm import Avoid, Sym, alt, opt, seq
from .base import EOS, Symbols, chosen_tools, text


def wrapped_grammar(fmt, tools, vocab, options, *, markers: tuple[str, ...],
                    response: tuple[str, str], think: tuple[str, str], auto_both: bool,
                    end: str = "", response_first: bool = False):
    """``fmt``'s whole language (as :meth:`CallFormat.grammar` returns it) when its free text
    is a response between ``response`` tags. ``auto``: the response, or the calls
    (``auto_both``: a response, then optionally the calls, or the calls alone); ``required``
    or a tool's name: the calls; ``none``: the response. ``response_first``: every message
    opens with the response (its text may be empty), the calls after it (optional in
    ``auto``). With ``options.reasoning`` a
    ``think`` section may come first (``"open"``: the prompt opened it, so the output starts
    inside it). Then ``end`` and EOS. No text spells one of ``markers`` in ordinary tokens."""
    symbols = Symbols()
    symbols[EOS] = fmt.eos(vocab)
    block, _ = fmt.block(chosen_tools(tools, options), vocab, options, symbols)
    free = Avoid(tuple(m.encode("utf-8") for m in markers))
    said = seq(text(vocab, response[0], symbols), free, text(vocab, response[1], symbols))
    choice = options.tool_choice
    if choice == "none":
        body = said
    elif response_first:
        body = seq(said, opt(block) if choice == "auto" else block)
    elif choice == "auto":
        body = alt(seq(said, opt(block)) if auto_both else said, block)
    else:
        body = block
    opened, closed = (text(vocab, t, symbols) for t in think)
    if options.reasoning == "open":
        body = seq(free, closed, body)
    elif options.reasoning:
        body = seq(opt(seq(opened, free, closed)), body)
    return seq(body, text(vocab, end, symbols), Sym(EOS)), dict(symbols)
