"""llguidance: a Lark grammar whose argument rules are ``%json`` schemas.

``LLTokenizer`` is built from ``tokenizers.Tokenizer.to_str()``; it treats every added token,
``<tool_call>`` included, as special, so the grammar names the tags as tokens (``<tool_call>``,
``</tool_call>``) rather than as text. The JSON separators are pinned to the ones Qwen3's
template writes (``x-guidance``: ``", "`` and ``": "``, no flexible whitespace). Generation ends
on EOS once ``start`` is complete.

llguidance compiles lazily: building an ``LLMatcher`` takes milliseconds, and the lexer states
are built as the tokens come, so part of the "compile" cost is paid per token instead. Each
request builds its own ``LLMatcher`` from the grammar text.
"""

from __future__ import annotations

import json

import llguidance as llg
import numpy as np
import tokenizers

from common import EOS_IDS, LOGITS, head

NAME = "llguidance"
SEPARATORS = {"whitespace_flexible": False, "item_separator": ", ", "key_separator": ": "}


def load_tokenizer(tokenizer_json: str):
    text = tokenizers.Tokenizer.from_file(tokenizer_json).to_str()
    return llg.LLTokenizer(text, n_vocab=LOGITS, eos_token=EOS_IDS)


def _lark_string(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def lark(tools: list[dict]) -> str:
    """The Lark grammar: calls joined by newlines, each a tool's name and its %json arguments."""
    lines = ['start: call ("\\n" call)*',
             "call: <tool_call> body </tool_call>"]
    alts, rules = [], []
    for k, t in enumerate(tools):
        fn = t["function"]
        schema = dict(fn.get("parameters", {}))
        schema["x-guidance"] = SEPARATORS
        alts.append(f"{_lark_string(head(fn['name']))} args{k} " + _lark_string("}\n"))
        rules.append(f"args{k}: %json " + json.dumps(schema, ensure_ascii=False))
    lines.append("body: " + "\n    | ".join(alts))
    return "\n".join(lines + rules) + "\n"


def compile(tools: list[dict], tok):
    grammar = lark(tools)
    m = llg.LLMatcher(tok, grammar, log_level=1)   # validates and builds the parser (lazily)
    if m.is_error():
        raise RuntimeError(f"llguidance refused the grammar: {m.get_error()}")
    return grammar


def size_bytes(grammar) -> None:
    return None   # nothing is compiled ahead of time; the grammar is rebuilt per request


class Matcher:
    __slots__ = ("m", "ptr", "nbytes")

    def __init__(self, grammar: str, tok, buf: np.ndarray):
        self.m = llg.LLMatcher(tok, grammar, log_level=1)
        self.ptr, self.nbytes = buf.ctypes.data, buf.nbytes

    def fill(self) -> None:
        self.m.unsafe_compute_mask_ptr(self.ptr, self.nbytes)

    def advance(self, t: int) -> bool:
        return self.m.consume_token(t) and not self.m.is_error()

    def done(self) -> bool:
        return self.m.is_stopped()


def new_matcher(grammar: str, tok, buf: np.ndarray) -> Matcher:
    return Matcher(grammar, tok, buf)
