"""vLLM logits processors that enforce toolc artifacts.

Two entry points, for vLLM's two logits-processor interfaces:

* :class:`ToolcVllmLogitsProcessor`, for the batch-level plugin interface of vLLM's v1 engine
  (``vllm.v1.sample.logits_processor.LogitsProcessor``: ``update_state(batch_update)`` then
  ``apply(logits)``). Load it with ``LLM(model, logits_processors=[ToolcVllmLogitsProcessor])``
  (or ``--logits-processors toolc.integrations.vllm:ToolcVllmLogitsProcessor``) and turn it on
  per request with ``SamplingParams(extra_args={"toolc_artifact": "artifacts/x.toolc"})``.
  Requests without that key are left alone. A request may carry its own tools instead,
  ``extra_args={"toolc_tools": [...]}`` (an OpenAI tools list), compiled or fetched through
  the class attribute ``toolset`` (a :class:`toolc.toolset.ToolsetCompiler`, which the
  compiler's install provides): set it once before the engine starts. When vLLM is
  importable the class subclasses vLLM's base class; otherwise it is a plain class with the
  same methods, so the module can be used and tested without vLLM.
* :class:`ToolcRequestLogitsProcessor`, a per-request callable ``(output_token_ids, logits)
  -> logits``, the older ``SamplingParams(logits_processors=[...])`` interface, also the shape
  vLLM's ``AdapterLogitsProcessor`` wraps.

Both refuse an artifact compiled for another vocabulary than the served model's, before any
generation, with ``toolc.ArtifactError`` naming both fingerprints:

* The batch-level processor loads the model's tokenizer from ``vllm_config.model_config``
  (``tokenizer``, ``tokenizer_revision``, ``trust_remote_code``) with transformers'
  ``AutoTokenizer`` and reads its vocabulary when it is built (once per process, at engine
  start), and checks each artifact the first time a request names it, in ``update_state``.
  A refusal there is an exception in vLLM's engine step, not a failed request: set the class
  attribute ``tokenizer`` (a tokenizer object or a fingerprint, e.g. ``llm.get_tokenizer()``)
  to check in ``validate_params`` as well, where vLLM refuses just the request. A subclass
  with ``check_tokenizer = False`` skips the check.
* The per-request callable checks against its ``tokenizer`` argument, unless
  ``check_tokenizer=False``.
"""

from __future__ import annotations

import threading

from ..errors import ArtifactError
from ..runtime import Artifact, load
from .rows import RowState, check_artifacts, check_logits_width

ARG = "toolc_artifact"
TOOLS_ARG = "toolc_tools"

try:  # the real base class when vLLM is installed; the interface is the same without it
    from vllm.v1.sample.logits_processor import LogitsProcessor as _Base
except Exception:  # ImportError, or a vLLM build that fails to import on this machine
    _Base = object


class ToolcRequestLogitsProcessor:
    """Per-request: ``proc(output_token_ids, logits)`` masks a 1-D logits tensor in place.

    ``tokenizer``: the served model's tokenizer (``llm.get_tokenizer()``), a toolc
    ``Vocabulary`` or a fingerprint; the artifact is checked against it here, unless
    ``check_tokenizer`` is False.
    """

    def __init__(self, artifact: Artifact, tokenizer=None, check_tokenizer: bool = True):
        check_artifacts(artifact, tokenizer, check_tokenizer)
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

    Class attributes: ``check_tokenizer`` (default True) turns the tokenizer check on or off;
    ``tokenizer`` (default None: the model's, loaded from ``vllm_config`` when the processor
    is built) is what artifacts are checked against, and when set they are checked in
    ``validate_params`` too.
    """

    check_tokenizer: bool = True
    tokenizer = None
    toolset = None          # a ToolsetCompiler, for requests that carry ``toolc_tools``
    _artifacts: dict[str, Artifact] = {}

    def __init__(self, vllm_config=None, device=None, is_pin_memory: bool = False):
        self.device = device
        self.rows: dict[int, tuple[RowState, list[int]]] = {}
        self._checked: set[str] = set()
        self.served_tokenizer = None
        if self.check_tokenizer:
            self.served_tokenizer = type(self).tokenizer
            model_config = getattr(vllm_config, "model_config", None)
            if self.served_tokenizer is None and model_config is not None:
                self.served_tokenizer = _model_tokenizer(model_config)
            if self.served_tokenizer is not None:   # read it now, not at the first request
                from ..runtime.fingerprint import tokenizer_fingerprint
                tokenizer_fingerprint(self.served_tokenizer, ())

    @classmethod
    def validate_params(cls, sampling_params) -> None:
        path, tools = _artifact_path(sampling_params), _request_tools(sampling_params)
        if path is None and tools is None:
            return
        key = ARG if path is not None else TOOLS_ARG
        try:
            art = cls._artifact(path) if path is not None else cls._tools_artifact(tools)
            if cls.check_tokenizer and cls.tokenizer is not None:
                art.check_tokenizer(cls.tokenizer)
        except Exception as e:
            raise ValueError(f"extra_args[{key!r}]: {e}") from None

    @classmethod
    def _tools_artifact(cls, tools) -> Artifact:
        if cls.toolset is None:
            raise ArtifactError(f"a request carries {TOOLS_ARG!r} but no toolset is set: set "
                                "ToolcVllmLogitsProcessor.toolset = ToolsetCompiler(...) "
                                "before the engine starts")
        return cls.toolset.artifact_for(tools)

    def _check(self, path: str, art: Artifact) -> None:
        """Refuse ``art`` unless it was compiled for the served tokenizer; once per path."""
        if self.served_tokenizer is None or path in self._checked:
            return
        art.check_tokenizer(self.served_tokenizer)
        self._checked.add(path)

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
            path, tools = _artifact_path(params), _request_tools(params)
            if path is not None:
                art = self._artifact(path)
                self._check(path, art)
            elif tools is not None:
                art = self._tools_artifact(tools)
                self._check("fingerprint:" + art.fingerprint, art)
            else:
                self.rows.pop(index, None)
                continue
            self.rows[index] = (RowState(art), output_ids)
        for a, b, direction in batch_update.moved:
            ra, rb = self.rows.pop(a, None), self.rows.pop(b, None)
            if ra is not None:
                self.rows[b] = ra
            swap = getattr(direction, "name", str(direction)).upper().endswith("SWAP")
            if rb is not None and swap:
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


def _request_tools(params):
    extra = getattr(params, "extra_args", None) or {}
    return extra.get(TOOLS_ARG)


_TOKENIZERS: dict[tuple, object] = {}
_TOKENIZERS_LOCK = threading.Lock()


def _model_tokenizer(model_config):
    """The served model's tokenizer, loaded with transformers' AutoTokenizer as vLLM's "auto"
    and "hf" modes load it; one per (name, revision) in a process."""
    name = getattr(model_config, "tokenizer", None) or getattr(model_config, "model", None)
    revision = getattr(model_config, "tokenizer_revision", None)
    remote = bool(getattr(model_config, "trust_remote_code", False))
    key = (name, revision, remote)
    with _TOKENIZERS_LOCK:
        tok = _TOKENIZERS.get(key)
        if tok is None:
            try:
                from transformers import AutoTokenizer
                tok = AutoTokenizer.from_pretrained(name, revision=revision,
                                                    trust_remote_code=remote)
            except Exception as e:  # many kinds (hub, files, remote code); one clear line
                first = (str(e).strip().splitlines() or [type(e).__name__])[0]
                raise ArtifactError(
                    f"cannot load the served tokenizer {name!r} to check toolc artifacts "
                    f"against ({first[:160]}); set ToolcVllmLogitsProcessor.tokenizer to a "
                    "tokenizer or fingerprint, or subclass it with check_tokenizer = False"
                ) from None
            _TOKENIZERS[key] = tok
    return tok
