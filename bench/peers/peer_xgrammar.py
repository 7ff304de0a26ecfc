"""xgrammar: one structural tag for the Qwen3 call format.

The tokenizer info is built offline from the id-ordered token strings with the byte-level
vocabulary type (``TokenizerInfo.from_huggingface`` would need a transformers tokenizer); for
Qwen3 it then records no special tokens, so ``<|im_start|>`` and the rest are ordinary text to it.

The grammar is a ``tags_with_separator`` structural tag: one tag per tool, whose begin is
``<tool_call>\\n{"name": "NAME", "arguments": ``, whose content is the tool's JSON Schema and whose
end is ``}\\n</tool_call>``; tags are separated by ``\\n``, at least one, and generation ends on a
stop token (``<|im_end|>`` or ``<|endoftext|>``). ``<tool_call>`` is matched as text, so both the
added token and its spelling in ordinary tokens are accepted.
"""

from __future__ import annotations

import numpy as np
import tokenizers
import torch
import xgrammar as xgr

from common import EOS_IDS, LOGITS, head

NAME = "xgrammar"


def load_tokenizer(tokenizer_json: str):
    tok = tokenizers.Tokenizer.from_file(tokenizer_json)
    n = tok.get_vocab_size(with_added_tokens=True)
    vocab = [tok.id_to_token(i) for i in range(n)]
    info = xgr.TokenizerInfo(vocab, xgr.VocabType.BYTE_LEVEL, vocab_size=LOGITS,
                             stop_token_ids=EOS_IDS)
    return xgr.GrammarCompiler(info)


def structural_tag(tools: list[dict]) -> dict:
    tags = [{"type": "tag", "begin": "<tool_call>" + head(t["function"]["name"]),
             "content": {"type": "json_schema",
                         "json_schema": t["function"].get("parameters", {})},
             "end": "}\n</tool_call>"} for t in tools]
    return {"type": "structural_tag",
            "format": {"type": "tags_with_separator", "tags": tags, "separator": "\n",
                       "at_least_one": True, "stop_after_first": False}}


def compile(tools: list[dict], compiler):
    return compiler.compile_structural_tag(structural_tag(tools))


def size_bytes(grammar) -> int:
    # the compiled grammar's own account of its memory; serialize_json() is larger (about
    # 1 GB of JSON at 80 tools) and building it would dominate the peak RSS
    return int(grammar.memory_size_bytes)


class Matcher:
    __slots__ = ("m", "t")

    def __init__(self, grammar, buf: np.ndarray):
        self.m = xgr.GrammarMatcher(grammar)
        self.t = torch.from_numpy(buf).view(1, -1)   # xgrammar writes straight into ``buf``

    def fill(self) -> None:
        self.m.fill_next_token_bitmask(self.t)

    def advance(self, t: int) -> bool:
        return self.m.accept_token(t)

    def done(self) -> bool:
        return self.m.is_terminated()


def new_matcher(grammar, compiler, buf: np.ndarray) -> Matcher:
    return Matcher(grammar, buf)
