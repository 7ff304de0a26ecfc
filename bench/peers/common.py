"""What every peer module and the driver share: paths, Qwen3 facts, the corpus file, statistics.

A peer module (``peer_<name>.py``) defines::

    NAME                                   # as printed in the table
    load_tokenizer(tokenizer_json) -> tok  # once per model; timed as "tokenizer s"
    compile(tools, tok) -> grammar         # once per tool set; timed as "compile s"
    size_bytes(grammar) -> int | None      # the compiled index/artifact, serialized
    new_matcher(grammar, tok, buf) -> m    # once per request

where ``buf`` is the request's row of the engine's bitmask, ``int32[ceil(LOGITS / 32)]`` (bit
``t % 32`` of word ``t // 32``). A matcher has ``fill()`` (write the next-token mask into
``buf``), ``advance(t) -> bool`` (False when the token is rejected) and ``done() -> bool``
(EOS consumed, generation over).
"""

from __future__ import annotations

import gzip
import json
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TOKENIZER_GZ = os.path.join(ROOT, "toolc", "data", "qwen3", "tokenizer.json.gz")

# Qwen3 facts (the models' config.json and generation_config.json)
LOGITS = 151936
VOCAB = 151669
WORDS = (LOGITS + 31) // 32
ENDOFTEXT, IM_START, IM_END, TOOL_CALL, END_CALL = 151643, 151644, 151645, 151657, 151658
EOS_IDS = [IM_END, ENDOFTEXT]
SPECIALS = {"<|endoftext|>": ENDOFTEXT, "<|im_start|>": IM_START, "<|im_end|>": IM_END,
            "<tool_call>": TOOL_CALL, "</tool_call>": END_CALL}
CALL_HEAD = '<tool_call>\n{"name": "'
CALL_TAIL = "}\n</tool_call>"


def head(name: str) -> str:
    """Everything a call writes before its arguments."""
    return '\n{"name": "' + name + '", "arguments": '


def extract_tokenizer(folder: str) -> str:
    """Write Qwen3's tokenizer.json (shipped gzipped in toolc) into ``folder``; its path.

    Peers read a plain tokenizer.json, as they would from a model folder or hub cache.
    """
    path = os.path.join(folder, "tokenizer.json")
    if not os.path.exists(path):
        with gzip.open(TOKENIZER_GZ, "rb") as src, open(path + ".tmp", "wb") as dst:
            dst.write(src.read())
        os.replace(path + ".tmp", path)
    return path


def load_tools(set_name: str) -> list[dict]:
    with open(tools_path(set_name), encoding="utf-8") as fh:
        return json.load(fh)


def tools_path(set_name: str) -> str:
    return os.path.join(ROOT, "schemas", f"{set_name}.json")


def bit(mask: np.ndarray, t: int) -> bool:
    return bool((int(mask[t >> 5]) >> (t & 31)) & 1)


def stats(us: list[float]) -> dict:
    """Median and p99 of a list of microseconds (None for an empty list)."""
    if not us:
        return {"p50": None, "p99": None, "n": 0}
    a = np.asarray(us, dtype=np.float64)
    return {"p50": float(np.median(a)), "p99": float(np.percentile(a, 99)), "n": int(len(a))}
