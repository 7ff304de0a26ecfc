"""outlines-core: one regex, built from each tool's JSON Schema by outlines-core's converter.

``Vocabulary.from_pretrained`` always goes to the hub, so the vocabulary is built here from the
token bytes (GPT-2 byte-level pieces decoded to bytes). Added tokens are left out, except the
three the grammar uses, which get one control character each: ``<tool_call>`` is ``\\x01``,
``</tool_call>`` is ``\\x02``, and the EOS tokens are ``\\x03``. JSON never holds a raw control
character, so the ordinary tokens spelling ``\\x01``..``\\x03`` (never valid here) are dropped
and the special tokens are matched only as tokens.

outlines-core's index drops the transitions out of any state where the regex may stop, so a
form with more calls after the first needs the end folded in: the regex ends with the EOS
sentinel ``\\x03``, and only the state after it is final (outlines-core's own EOS id, which it
allows there, is a padding id of the logits). The whole regex is::

    CALL (\\n CALL)* \\x03     CALL = \\x01 (\\n{"name": "NAME", "arguments": ARGS}\\n | ...) \\x02

where ARGS is ``build_regex_from_schema`` with its default whitespace ``[ ]?``.
"""

from __future__ import annotations

import json
import pickle
import re

import numpy as np
import outlines_core as oc
import tokenizers
from outlines_core.json_schema import build_regex_from_schema

from common import END_CALL, EOS_IDS, LOGITS, TOOL_CALL, head

NAME = "outlines-core"
SENTINELS = {b"\x01": [TOOL_CALL], b"\x02": [END_CALL], b"\x03": list(EOS_IDS)}


def _byte_decoder() -> dict[str, int]:
    """GPT-2's printable-character -> byte table for byte-level BPE pieces."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1),
            *range(ord("®"), ord("ÿ") + 1)]
    table, extra = {}, 0
    for b in range(256):
        if b in keep:
            table[chr(b)] = b
        else:
            table[chr(256 + extra)] = b
            extra += 1
    return table


def load_tokenizer(tokenizer_json: str):
    tok = tokenizers.Tokenizer.from_file(tokenizer_json)
    dec = _byte_decoder()
    pieces: dict[bytes, list[int]] = {}
    for piece, i in tok.get_vocab(with_added_tokens=False).items():
        raw = bytes(dec[c] for c in piece)
        if raw not in SENTINELS:
            pieces.setdefault(raw, []).append(i)
    pieces.update(SENTINELS)
    # outlines-core wants one EOS id outside the map, allowed in final states: the only final
    # state is after the \x03 sentinel (which the real EOS ids spell), where the answer is over,
    # so a padding id of the logits (never a real token) stands in
    return oc.Vocabulary(LOGITS - 1, pieces)


def regex(tools: list[dict]) -> str:
    alts = []
    for t in tools:
        fn = t["function"]
        args = build_regex_from_schema(json.dumps(fn.get("parameters", {})))
        alts.append(re.escape(head(fn["name"])) + "(" + args + ")" + re.escape("}\n"))
    call = "\x01(" + "|".join(alts) + ")\x02"
    return call + "(\n" + call + ")*\x03"


def compile(tools: list[dict], vocabulary):
    return oc.Index(regex(tools), vocabulary)


def size_bytes(index) -> int:
    return len(pickle.dumps(index))


class Matcher:
    __slots__ = ("g", "ptr", "n")

    def __init__(self, index, buf: np.ndarray):
        self.g = oc.Guide(index)
        self.ptr, self.n = buf.ctypes.data, buf.size

    def fill(self) -> None:
        self.g.write_mask_into(self.ptr, self.n, 4)

    def advance(self, t: int) -> bool:
        try:
            self.g.advance(t, return_tokens=False)
        except ValueError:
            return False
        return True

    def done(self) -> bool:
        return self.g.is_finished()


def new_matcher(index, vocabulary, buf: np.ndarray) -> Matcher:
    return Matcher(index, buf)
