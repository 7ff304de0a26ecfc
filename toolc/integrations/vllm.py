"""vLLM logits processors that enforce toolc artifacts.

Two entry points, for vLLM's two logits-processor interfaces:

* :class:`ToolcVllmLogitsProcessor`, for the batch-level plugin interface of vLLM's v1 engine
  (``vllm.v1.sample.logits_processor.LogitsProcessor``: ``update_state(batch_update)`` then
  ``apply(logits)``). Load it with ``LLM(model, logits_processors=[ToolcVllmLogitsProcessor])``
  (or ``--logits-processors toolc.integrations.vllm:ToolcVllmLogitsProcessor``) and turn it on
  per request with ``SamplingParams(extra_args={"toolc_artifact": "artifacts/x.toolc"})``.
  Requests without that key are left alone. When vLLM is importable the class subclasses
  vLLM's base class; otherwise it is a plain class with the same methods, so the module can
  be used and tested without vLLM.
* :class:`ToolcRequestLogitsProcessor`, a per-request callable ``(output_token_ids, logits)
  -> logits``, the older ``SamplingParams(logits_processors=[...])`` interface, also the shape
  vLLM's ``AdapterLogitsProcessor`` wraps.
"""

from __future__ import annotations

from ..runtime import Artifact, load
from .rows import RowState, check_logits_width

ARG = "toolc_artifact"

try:  # the real base class when vLLM is installed; the interface is the same without it
    from vllm.v1.sample.logits_processor import LogitsProcessor as _Base
except Exception:  # ImportError, or a vLLM build that fails to import on this machine
    _Base = object


class ToolcRequestLogitsProcessor:
    """Per-request: ``proc(output_token_ids, logits)`` masks a 1-D logits tensor in place."""

    def __init__(self, artifact: Artifact):
        self.artifact = artifact
        self.row = RowState(artifact)

    def __call__(self, output_token_ids, logits):
        from .torch import apply_token_bitmask_inplace
        check_logits_width(self.artifact, logits.shape[-1])
        m = self.row.sync(list(output_token_ids))
        if not m.is_terminated():
            apply_token_bitmask_inplace(logits, m.mask())
        return logits


class ToolcVllmLogitsProcessor(_Base):
    """Batch-level processor for vLLM's v1 engine; see the module docstring.

    Keeps, per persistent-batch index, the request's row state and a reference to its live
    output token list (vLLM appends to that list in place).
    """

    _artifacts: dict[str, Artifact] = {}

    def __init__(self, vllm_config=None, device=None, is_pin_memory: bool = False):
        self.device = device
        self.rows: dict[int, tuple[RowState, list[int]]] = {}

    @classmethod
    def validate_params(cls, sampling_params) -> None:
        path = _artifact_path(sampling_params)
        if path is not None:
            try:
                cls._artifact(path)
            except Exception as e:
                raise ValueError(f"extra_args[{ARG!r}]: {e}") from None

    @classmethod
    def _artifact(cls, path: str) -> Artifact:
        art = cls._artifacts.get(path)
        if art is None:
            art = cls._artifacts[path] = load(path)
        return art

    def is_argmax_invariant(self) -> bool:
        return False  # masking changes which token has the highest logit

    def update_state(self, batch_update) -> None:
        if batch_update is None:
            return
        for index in batch_update.removed:
            self.rows.pop(index, None)
        for index, params, _prompt, output_ids in batch_update.added:
            path = _artifact_path(params)
            if path is None:
                self.rows.pop(index, None)
            else:
                self.rows[index] = (RowState(self._artifact(path)), output_ids)
        for a, b, direction in batch_update.moved:
            ra, rb = self.rows.pop(a, None), self.rows.pop(b, None)
            if ra is not None:
                self.rows[b] = ra
            if rb is not None and getattr(direction, "name", str(direction)).upper().endswith("SWAP"):
                self.rows[a] = rb

    def apply(self, logits):
        if not self.rows:
            return logits
        import numpy as np

        from .torch import apply_token_bitmask_inplace
        width = logits.shape[-1]
        words = -(-width // 32)
        indices, masks = [], []
        for index in sorted(self.rows):
            row, output_ids = self.rows[index]
            check_logits_width(row.artifact, width)
            m = row.sync(list(output_ids))
            if m.is_terminated():
                continue
            mask = np.zeros(words, dtype=np.int32)
            src = m.mask()
            mask[:min(words, len(src))] = src[:words]
            indices.append(index)
            masks.append(mask)
        if indices:
            apply_token_bitmask_inplace(logits, np.stack(masks), indices=indices)
        return logits


def _artifact_path(params) -> str | None:
    extra = getattr(params, "extra_args", None) or {}
    path = extra.get(ARG)
    return None if path is None else str(path)
