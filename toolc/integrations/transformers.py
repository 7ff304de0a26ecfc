"""A Hugging Face transformers ``LogitsProcessor`` that enforces a toolc artifact.

    from toolc.integrations.transformers import ToolcLogitsProcessor
    proc = ToolcLogitsProcessor(toolc.load("artifacts/weather.toolc"), tokenizer=tokenizer)
    model.generate(**inputs, logits_processor=LogitsProcessorList([proc]), ...)

Given the ``tokenizer``, the processor refuses an artifact compiled for another vocabulary
before any generation (``toolc.ArtifactError``, naming both fingerprints). The first check reads
the tokenizer (about half a second for Qwen3's 151k tokens); later ones, for any artifact, reuse
that read. ``check_tokenizer=False`` skips the check.

One processor per ``generate`` call: the first call learns the prompt length, and every later
call brings each row's matcher up to the tokens generated since (see
:class:`toolc.integrations.rows.RowTracker`). The model's logits may be wider than the
tokenizer (Qwen3: 151,936 logits for 151,669 tokens); the extra ones are masked.
"""

from __future__ import annotations

import torch
from transformers import LogitsProcessor

from ..runtime import Artifact
from .rows import RowTracker, batch_masks, check_artifacts, check_logits_width
from .torch import apply_token_bitmask_inplace


class ToolcLogitsProcessor(LogitsProcessor):
    """Masks each row's logits in place with its matcher's mask and follows its tokens.

    ``artifacts``: one :class:`~toolc.runtime.Artifact` for the whole batch, or a list with one
    per batch entry (spread over ``num_beams``/``num_return_sequences`` copies).
    ``prompt_length``: where generation starts in ``input_ids``; by default the length seen at
    the first call (fine for left-padded batches, which transformers uses for generation).
    ``tokenizer``: the model's tokenizer (a fast one), or a toolc ``Vocabulary`` or a
    fingerprint; every artifact is checked against it here, unless ``check_tokenizer`` is False.
    """

    def __init__(self, artifacts: Artifact | list[Artifact], prompt_length: int | None = None,
                 tokenizer=None, check_tokenizer: bool = True):
        self.tracker = RowTracker(artifacts)
        check_artifacts(self.tracker.artifacts, tokenizer, check_tokenizer)
        self.prompt_length = prompt_length
        self._words = -(-self.tracker.logits_size // 32)

    @classmethod
    def from_tools(cls, toolset, tools, **kwargs) -> "ToolcLogitsProcessor":
        """A processor for requests that carry their own tools: ``tools`` is one tools list
        for the whole batch, or a list of them, one per batch entry; each is compiled or
        fetched through ``toolset`` (a :class:`toolc.toolset.ToolsetCompiler`). ``kwargs``
        as for the constructor."""
        per_row = isinstance(tools, (list, tuple)) and bool(tools) and \
            all(isinstance(t, (list, tuple)) for t in tools)
        arts = [toolset.artifact_for(t) for t in tools] if per_row \
            else toolset.artifact_for(tools)
        return cls(arts, **kwargs)

    def reset(self) -> None:
        """Forget the rows and the prompt length, to reuse the processor for another call."""
        self.tracker.rows = []
        self.prompt_length = None

    @property
    def matchers(self):
        return [r.matcher for r in self.tracker.rows]

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        if self.prompt_length is None:
            self.prompt_length = int(input_ids.shape[1])
        for a in self.tracker.artifacts:
            check_logits_width(a, scores.shape[-1])
        generated = input_ids[:, self.prompt_length:].tolist()
        matchers = self.tracker.sync(generated)
        masks, active = batch_masks(matchers, self._words)
        if active.all():
            apply_token_bitmask_inplace(scores, masks)
        elif active.any():
            rows = active.nonzero()[0].tolist()
            apply_token_bitmask_inplace(scores, masks[active], indices=rows)
        return scores
