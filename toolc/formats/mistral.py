"""Mistral's native tool calls, in the three forms its tokenizers write them (mistral-common's
instruct tokenizers):

* SentencePiece tokenizers (v3): ``[TOOL_CALLS] [{"name": N, "arguments": {...}, "id": ID},
  ...]`` then EOS; the space is the SentencePiece dummy prefix of the encoded JSON.
* tekken tokenizers (v3 to v7), and byte-level ones: the same without that space,
  ``[TOOL_CALLS][{...}, ...]``.
* v11 and later, chosen when the tokenizer has an ``[ARGS]`` token:
  ``[TOOL_CALLS]NAME[ARGS]{...}`` once per call, calls back to back.

``ID`` is nine ASCII letters and digits. ``[TOOL_CALLS]`` and ``[ARGS]`` are special symbols
when they are added tokens (they are in every Mistral tokenizer), text otherwise. The
reasoning section is ``[THINK]...[/THINK]``.
"""

from __future__ import annotations

from ..fsm import EMPTY, alt_factored, lit, seq
from ..tokenizer import tokenizer_kind
from .base import CallFormat, plain_parts, repeat, text
from .jsonish import call_id, call_object

TOOL_CALLS, ARGS = "[TOOL_CALLS]", "[ARGS]"
_KINDS: dict = {}   # tokenizer kind per loaded vocabulary (reading it parses the whole file)


def variant(vocab) -> str:
    """``"args"`` (v11+), ``"tekken"`` or ``"sentencepiece"``: the form this tokenizer uses."""
    if ARGS in vocab.added:
        return "args"
    key = (vocab.name, vocab.vocab_size, id(vocab))
    if key not in _KINDS:
        _KINDS[key] = tokenizer_kind(vocab)
    return "sentencepiece" if _KINDS[key] == "sentencepiece" else "tekken"


class Mistral(CallFormat):
    name = "mistral"
    think = ("[THINK]", "[/THINK]")

    def block(self, tools, vocab, options, symbols):
        avoid = plain_parts(vocab, TOOL_CALLS)
        trigger = text(vocab, TOOL_CALLS, symbols)
        form = variant(vocab)
        if form == "args":
            sep = text(vocab, ARGS, symbols)
            call = seq(trigger, alt_factored(*(seq(lit(t.name), sep, args) for t, args in tools)))
            return repeat(call, EMPTY, options), avoid + plain_parts(vocab, ARGS)
        space = lit(" ") if form == "sentencepiece" else EMPTY
        calls = repeat(call_object(tools, extra=call_id()), lit(", "), options)
        return seq(trigger, space, lit("["), calls, lit("]")), avoid
