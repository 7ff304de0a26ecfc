"""Llama 3.1 / 3.2 JSON tool calls: ``{"name": "NAME", "parameters": {...}}``.

As Llama 3.1's template writes them, optionally after ``<|python_tag|>``, with parallel calls
joined by ``; `` (the separator vLLM's llama3_json parser splits on). The calls are the whole
answer, so in auto mode the answer is either free text, which may not begin with ``{``, or
the calls.
"""

from __future__ import annotations

from ..fsm import lit, opt, seq
from .base import CallFormat, first_byte_not, plain_parts, repeat, text
from .jsonish import call_object

TAG = "<|python_tag|>"


class Llama3Json(CallFormat):
    name = "llama3-json"
    calls_first = True

    def block(self, tools, vocab, options, symbols):
        calls = repeat(call_object(tools, "parameters"), lit("; "), options)
        return seq(opt(text(vocab, TAG, symbols)), calls), plain_parts(vocab, TAG)

    def free_text(self, avoid):
        return first_byte_not("{", avoid)
