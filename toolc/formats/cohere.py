"""Cohere Command A's CMD4 format, as cohere_melody 0.15.3 renders a chatbot turn (and as its
own parser, ``PyFilter.cmd4``, reads one back; tests/test_formats_cohere.py runs both):

    <|START_THINKING|>R<|END_THINKING|>        (with --reasoning)
    <|START_ACTION|>[
        {"tool_call_id": "0", "tool_name": "N", "parameters": {...}},
        {"tool_call_id": "1", ...}
    ]<|END_ACTION|>

or, for an answer in words, ``<|START_RESPONSE|>TEXT<|END_RESPONSE|>``: ``auto`` is one or the
other, ``required`` and a tool's name the calls, ``none`` the response. The ids count the
calls from 0, so parallel calls need ``max_calls``. The calls are
:mod:`toolc.formats.framed`'s; no text or argument spells a marker in ordinary tokens
(melody's parser cuts a call at ``<|END_ACTION|>`` even inside a string). Whether Cohere's
tokenizer has the markers as added tokens is not checked (no registry ships it): each is a
special symbol where the tokenizer has it, plain text otherwise.
"""

from __future__ import annotations

from .framed import Framed
from .framedstyle import STYLES
from .message import wrapped_grammar

RESPONSE = ("<|START_RESPONSE|>", "<|END_RESPONSE|>")
THINK = ("<|START_THINKING|>", "<|END_THINKING|>")
#: every marker of the turn: no text spells one in ordinary tokens
MARKERS = ("<|START_ACTION|>", "<|END_ACTION|>", *RESPONSE, *THINK)


class Cohere(Framed):
    name = "cohere"
    style = STYLES["cohere"]
    think = THINK

    def grammar(self, tools, vocab, options):
        return wrapped_grammar(self, tools, vocab, options, markers=MARKERS, response=RESPONSE,
                               think=THINK, auto_both=False)
