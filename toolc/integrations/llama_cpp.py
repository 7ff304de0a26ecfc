"""A llama-cpp-python ``LogitsProcessor`` that enforces a toolc artifact (numpy only).

    from llama_cpp import Llama, LogitsProcessorList
    from toolc.integrations.llama_cpp import ToolcLlamaLogitsProcessor
    llm = Llama("model.gguf")
    proc = ToolcLlamaLogitsProcessor(toolc.load("artifacts/weather.toolc"), tokenizer=llm)
    llm(prompt, logits_processor=LogitsProcessorList([proc]))

llama-cpp-python calls a logits processor with ``(input_ids, scores)``: the prompt plus the
tokens generated so far (``np.intc[n]``) and the next token's logits (``np.single[n_vocab]``).
The protocol is a plain callable, so the module works (and is tested) without the package.

Given the ``Llama`` (``tokenizer=llm``), the processor refuses an artifact compiled for another
vocabulary before any generation (``toolc.ArtifactError``, naming both fingerprints). The GGUF
vocabulary is read through llama.cpp's C API (``llama_token_to_piece`` and the token attributes,
see :func:`toolc.runtime.fingerprint._from_llama`), once per ``Llama``.
``check_tokenizer=False`` skips
the check. The tokens on which llama.cpp ends generation but the artifact does not (Qwen3's
ordinary token ``</s>``, which llama.cpp's loader makes an end-of-generation token) are never
allowed (:func:`engine_stops`).
"""

from __future__ import annotations

import numpy as np

from ..runtime import Artifact
from .rows import RowState, allowed_bool, check_artifacts, check_logits_width


class ToolcLlamaLogitsProcessor:
    """Sets disallowed logits to -inf; one processor per completion call.

    ``prompt_length``: where generation starts in ``input_ids``; by default the length seen at
    the first call. ``tokenizer``: the ``Llama`` (or a transformers tokenizer, a toolc
    ``Vocabulary`` or a fingerprint); the artifact is checked against it here, unless
    ``check_tokenizer`` is False.
    """

    def __init__(self, artifact: Artifact, prompt_length: int | None = None, tokenizer=None,
                 check_tokenizer: bool = True):
        check_artifacts(artifact, tokenizer, check_tokenizer)
        self.artifact = artifact
        self.prompt_length = prompt_length
        self.row = RowState(artifact)
        self.stops = engine_stops(tokenizer, artifact)

    @classmethod
    def from_tools(cls, toolset, tools, **kwargs) -> "ToolcLlamaLogitsProcessor":
        """A processor for a request's own ``tools``, compiled or fetched through ``toolset``
        (a :class:`toolc.toolset.ToolsetCompiler`); ``kwargs`` as for the constructor."""
        return cls(toolset.artifact_for(tools), **kwargs)

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
        if len(self.stops):
            scores[self.stops] = -np.inf
        return scores


def engine_stops(llm, artifact: Artifact) -> np.ndarray:
    """The tokens on which llama.cpp ends generation that are not the artifact's EOS (given
    the ``Llama``; none otherwise). Its loader makes tokens end generation by their text:
    Qwen3's ordinary BPE token ``</s>`` (128247) among them, which the artifact allows inside
    strings; sampled there, it would cut the call short. The processor never allows them."""
    model = getattr(llm, "_model", None)
    vocab = getattr(model, "vocab", None)
    if vocab is None:
        return np.zeros(0, dtype=np.intp)
    import llama_cpp
    eos = set(artifact.eos_token_ids)
    n = int(llama_cpp.llama_vocab_n_tokens(vocab))
    is_eog = llama_cpp.llama_vocab_is_eog
    return np.array([t for t in range(n) if t not in eos and is_eog(vocab, t)], dtype=np.intp)
