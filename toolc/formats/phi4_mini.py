"""Phi-4-mini: ``<|tool_call|>[{"name": ..., "arguments": {...}}, ...]<|/tool_call|>`` then EOS.

The tags are special symbols when the tokenizer has them as added tokens, text otherwise.
"""

from __future__ import annotations

from ..fsm import lit, seq
from .base import CallFormat, plain_parts, repeat, text
from .jsonish import call_object

OPEN, CLOSE = "<|tool_call|>", "<|/tool_call|>"


class Phi4Mini(CallFormat):
    name = "phi4-mini"

    def block(self, tools, vocab, options, symbols):
        calls = repeat(call_object(tools), lit(", "), options)
        block = seq(text(vocab, OPEN, symbols), lit("["), calls, lit("]"),
                    text(vocab, CLOSE, symbols))
        return block, plain_parts(vocab, OPEN) + plain_parts(vocab, CLOSE)
