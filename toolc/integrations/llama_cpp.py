"""A llama-cpp-python ``LogitsProcessor`` that enforces a toolc artifact (numpy only).

    from llama_cpp import LogitsProcessorList
    from toolc.integrations.llama_cpp import ToolcLlamaLogitsProcessor
    proc = ToolcLlamaLogitsProcessor(toolc.load("artifacts/weather.toolc"))
    llm(prompt, logits_processor=LogitsProcessorList([proc]))

llama-cpp-python calls a logits processor with ``(input_ids, scores)``: the prompt plus the
tokens generated so far (``np.intc[n]``) and the next token's logits (``np.single[n_vocab]``).
It does not import ``llama_cpp``: the protocol is a plain callable, so the module works (and is
tested) without the package.
"""

from __future__ import annotations

import numpy as np

from ..runtime import Artifact
from .rows import RowState, allowed_bool, check_logits_width


class ToolcLlamaLogitsProcessor:
    """Sets disallowed logits to -inf; one processor per completion call.

    ``prompt_length``: where generation starts in ``input_ids``; by default the length seen at
    the first call.
    """

    def __init__(self, artifact: Artifact, prompt_length: int | None = None):
        self.artifact = artifact
        self.prompt_length = prompt_length
        self.row = RowState(artifact)

    def reset(self) -> None:
        self.row = RowState(self.artifact)
        self.prompt_length = None

    @property
    def matcher(self):
        return self.row.matcher

    def __call__(self, input_ids: np.ndarray, scores: np.ndarray) -> np.ndarray:
        if self.prompt_length is None:
            self.prompt_length = len(input_ids)
        check_logits_width(self.artifact, scores.shape[-1])
        m = self.row.sync([int(t) for t in input_ids[self.prompt_length:]])
        if m.is_terminated():
            return scores
        allowed = allowed_bool(m.mask(), scores.shape[-1])
        scores[~allowed] = -np.inf
        return scores
