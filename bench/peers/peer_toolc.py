"""toolc, measured through its public API only (``toolc.compile_tools``, ``Artifact.matcher``).

The grammar is toolc's own hermes format with ``tool_choice="required"``: one or more calls
joined by ``\\n``, then EOS. ``fill`` copies the mask row into the engine's buffer, which is what
an engine does with the read-only view ``Matcher.mask()`` returns; ``mask_view`` is the view alone.
"""

from __future__ import annotations

import numpy as np

import toolc
from toolc.tokenizer import load_vocabulary

NAME = "toolc"


def load_tokenizer(tokenizer_json: str):
    # the built-in alias, through toolc's vocabulary cache (warm after the first run)
    vocab = load_vocabulary("qwen")
    vocab.fingerprint
    vocab.ordinary_bytes()
    return vocab


def compile(tools_path: str, vocab):
    return toolc.compile_tools(tools_path, vocab, tool_choice="required")


def size_bytes(art) -> int:
    return len(art.to_bytes())


class Matcher:
    __slots__ = ("m", "buf")

    def __init__(self, art, buf: np.ndarray):
        self.m = art.matcher()
        self.buf = buf

    def fill(self) -> None:
        np.copyto(self.buf, self.m.mask())

    def mask_view(self):
        return self.m.mask()

    def advance(self, t: int) -> bool:
        m = self.m
        if not m.accepts(t):
            return False
        m.advance(t)
        return True

    def done(self) -> bool:
        return self.m.is_terminated()


def new_matcher(art, vocab, buf: np.ndarray) -> Matcher:
    return Matcher(art, buf)
