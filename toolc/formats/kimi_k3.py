"""Kimi K3's XTML, byte for byte as the facts sheet quotes it (xgrammar's ``kimi_k3`` docstring;
not checked against Moonshot's own template, which no package registry ships):

    <|close|>think<|sep|>                          (the prompt opened the think block)
    <|open|>response<|sep|>TEXT<|close|>response<|sep|>
    <|open|>tools<|sep|><|open|>call tool="N" index="1"<|sep|>
    <|open|>argument key="K" type="string"<|sep|>V<|close|>argument<|sep|>
    <|close|>call<|sep|><|close|>tools<|sep|><|close|>message<|sep|>

(without the line breaks). ``<|open|>``, ``<|close|>`` and ``<|sep|>`` are atomic tokens;
every tag is one of them, a word or attributes, and ``<|sep|>``. The calls are the
tag-per-parameter engine's (:mod:`toolc.formats.tagged`: strings raw, other values JSON,
each with its value's type in ``type="..."``: ``string``, ``number`` (integers too),
``boolean``, ``null``, ``array``, ``object``; calls numbered from 1, so parallel calls need
``max_calls``); this module adds the message around them. The response block always comes
first, its text possibly empty; then, in ``auto`` optionally, in ``required`` and for a
tool's name always, the calls; ``none``: the response alone.

The message always ends ``<|close|>message<|sep|>`` and EOS. The think block is the
reasoning section: ``--reasoning open`` when the prompt opened it, as K3's does.

Checked against the vendors' code (tests/test_vendor_parsers.py): vLLM 0.33.0's and SGLang
0.5.23's ``kimi_k3`` parsers read every sampled output as toolc does, and both engines'
XTML structural tags (vLLM ``tool_parsers/structural_tag_registry.py``, which mirrors
Moonshot's ``encoding_k3``; SGLang ``function_call/kimik3_structural_tag.py``; xgrammar
0.2.8's ``kimi_k3``) write the response block before the tools block and name an integer's
type ``number``.

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
                               end=MESSAGE_END, response_first=True)
