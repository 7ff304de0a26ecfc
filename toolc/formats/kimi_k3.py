"""Kimi K3's XTML, byte for byte as the facts sheet quotes it (xgrammar's ``kimi_k3`` docstring;
not checked against Moonshot's own template, which no package registry ships):

    <|close|>think<|sep|>                          (the prompt opened the think block)
    <|open|>response<|sep|>TEXT<|close|>response<|sep|>
    <|open|>tools<|sep|><|open|>call tool="N" index="1"<|sep|>
    <|open|>argument key="K" type="string"<|sep|>V<|close|>argument<|sep|>
    <|close|>call<|sep|><|close|>tools<|sep|><|close|>message<|sep|>

(without the line breaks). ``<|open|>``, ``<|close|>`` and ``<|sep|>`` are atomic tokens;
every tag is one of them, a word or attributes, and ``<|sep|>``. The calls are the
tag-per-parameter engine's (:mod:`toolc.formats.tagged`: strings raw, other values JSON with
their type in ``type="..."``, calls numbered from 1, so parallel calls need ``max_calls``);
this module adds the message around them. ``auto``: a response, then optionally the calls,
or the calls alone; ``required`` and a tool's name: the calls alone; ``none``: the response.
The message always ends ``<|close|>message<|sep|>`` and EOS. The think block is the
reasoning section: ``--reasoning open`` when the prompt opened it, as K3's does.

No text (response, reasoning, raw values) spells a marker in ordinary tokens: a parser splits
the message at the markers' text.
"""

from __future__ import annotations

from ..errors import TokenizerError
from .message import wrapped_grammar
from .tagged import Tagged
from .tagstyle import KIMI_K3_MARKERS, STYLES

RESPONSE = ("<|open|>response<|sep|>", "<|close|>response<|sep|>")
MESSAGE_END = "<|close|>message<|sep|>"


class KimiK3(Tagged):
    name = "kimi-k3"
    style = STYLES["kimi-k3"]

    def grammar(self, tools, vocab, options):
        missing = [m for m in KIMI_K3_MARKERS if vocab.token_id(m) is None]
        if missing:
            raise TokenizerError(f"the kimi-k3 format needs the added tokens "
                                 f"{', '.join(missing)}, which tokenizer {vocab.name!r} "
                                 "does not have")
        return wrapped_grammar(self, tools, vocab, options, markers=KIMI_K3_MARKERS,
                               response=RESPONSE, think=self.style.think, auto_both=True,
                               end=MESSAGE_END)
