"""toolc/integrations/vllm.py against vLLM's v1 logits-processor interface.

vLLM does not install into the main virtualenv of this CPU-only machine without pulling a
CUDA torch, so there the batch updates are built with stand-ins of the same shape as vLLM
0.33's ``vllm.v1.sample.logits_processor.interface`` (``BatchUpdate(batch_size, removed, added,
moved)``, ``AddedRequest = (index, SamplingParams, prompt_ids, output_ids)``,
``MovedRequest = (a, b, MoveDirectionality)``). The real types are used where vLLM imports:
``make test``'s vendor step runs this file again in ``build/venv-vendor``, which holds vLLM
0.33.0's wheel without its dependencies (``make test-vllm`` too).
The processor's ``vllm_config`` is a stand-in holding ``model_config``'s tokenizer fields; the
tokenizer it names is the real Qwen3 one, loaded by transformers.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import Enum, auto
from types import SimpleNamespace

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import toolc  # noqa: E402
from toolc.integrations.vllm import (ARG, ToolcRequestLogitsProcessor,  # noqa: E402
                                     ToolcVllmLogitsProcessor)

try:
    from vllm.v1.sample.logits_processor import BatchUpdate, MoveDirectionality
    from vllm import SamplingParams

    def params(**extra):
        return SamplingParams(extra_args=extra or None)
except Exception as e:
    # the Makefile sets this where vLLM was installed (the vendor step, make test-vllm):
    # there it must import, or these tests would pass on the stand-ins without saying so
    if os.environ.get("TOOLC_EXPECT_VLLM"):
        raise RuntimeError(f"vLLM's logits-processor classes did not import where "
                           f"TOOLC_EXPECT_VLLM is set: {e!r}") from e

    class MoveDirectionality(Enum):
        UNIDIRECTIONAL = auto()
        SWAP = auto()

    @dataclass(frozen=True)
    class BatchUpdate:
        batch_size: int
        removed: list
        added: list
        moved: list

    def params(**extra):
        return SimpleNamespace(extra_args=extra or None)


@pytest.fixture(scope="module")
def art_path(weather_artifact, tmp_path_factory):
    path = tmp_path_factory.mktemp("vllm") / "weather.toolc"
    weather_artifact.save(path)
    return str(path)


def allowed(row: torch.Tensor) -> np.ndarray:
    return torch.isfinite(row).nonzero().flatten().numpy()


def test_only_requests_that_ask_are_masked_and_rows_follow_moves(weather_artifact, art_path):
    proc = ToolcVllmLogitsProcessor(None, torch.device("cpu"), False)
    assert proc.is_argmax_invariant() is False
    ToolcVllmLogitsProcessor.validate_params(params(**{ARG: art_path}))
    with pytest.raises(ValueError, match="toolc_artifact"):
        ToolcVllmLogitsProcessor.validate_params(params(**{ARG: art_path + ".missing"}))
    out_a, out_b = [], []
    proc.update_state(BatchUpdate(3, [], [(0, params(**{ARG: art_path}), [1, 2], out_a),
                                          (1, params(), [1], []),
                                          (2, params(**{ARG: art_path}), [5], out_b)], []))
    width = weather_artifact.logits_size
    logits = torch.zeros(3, width)
    proc.apply(logits)
    start = weather_artifact.matcher().allowed_token_ids()
    np.testing.assert_array_equal(allowed(logits[0]), start)
    assert torch.isfinite(logits[1]).all()                   # not a toolc request
    np.testing.assert_array_equal(allowed(logits[2]), start)
    out_a.append(151657)                                     # vLLM appends in place
    proc.update_state(None)
    logits = torch.zeros(3, width)
    proc.apply(logits)
    m = weather_artifact.matcher()
    m.advance(151657)
    np.testing.assert_array_equal(allowed(logits[0]), m.allowed_token_ids())
    # swap rows 0 and 2, then move row 2 to 1 and drop row 0
    proc.update_state(BatchUpdate(3, [], [], [(0, 2, MoveDirectionality.SWAP)]))
    logits = torch.zeros(3, width)
    proc.apply(logits)
    np.testing.assert_array_equal(allowed(logits[2]), m.allowed_token_ids())
    np.testing.assert_array_equal(allowed(logits[0]), start)
    proc.update_state(BatchUpdate(2, [0], [], [(2, 1, MoveDirectionality.UNIDIRECTIONAL)]))
    logits = torch.zeros(3, width)
    proc.apply(logits)
    np.testing.assert_array_equal(allowed(logits[1]), m.allowed_token_ids())
    assert torch.isfinite(logits[0]).all() and torch.isfinite(logits[2]).all()


def test_per_request_callable(weather_artifact):
    proc = ToolcRequestLogitsProcessor(weather_artifact)
    logits = torch.zeros(weather_artifact.logits_size + 32)
    proc([], logits)
    np.testing.assert_array_equal(allowed(logits), weather_artifact.matcher().allowed_token_ids())
    logits = torch.zeros(weather_artifact.logits_size)
    proc([151657], logits)
    m = weather_artifact.matcher()
    m.advance(151657)
    np.testing.assert_array_equal(allowed(logits), m.allowed_token_ids())


# -- the tokenizer check -----------------------------------------------------------------------

def vllm_config(tokenizer_dir):
    """The part of vLLM's VllmConfig the processor reads: model_config's tokenizer fields."""
    return SimpleNamespace(model_config=SimpleNamespace(
        model=str(tokenizer_dir), tokenizer=str(tokenizer_dir), tokenizer_revision=None,
        trust_remote_code=False, tokenizer_mode="auto"))


def add(proc, index, path):
    proc.update_state(BatchUpdate(index + 1, [], [(index, params(**{ARG: path}), [1], [])], []))


def test_the_served_tokenizer_passes(weather_artifact, art_path, qwen_dir):
    proc = ToolcVllmLogitsProcessor(vllm_config(qwen_dir), torch.device("cpu"), False)
    assert proc.served_tokenizer.name_or_path == str(qwen_dir)   # loaded and read at start
    add(proc, 0, art_path)
    add(proc, 1, art_path)                                   # checked once per artifact
    logits = torch.zeros(2, weather_artifact.logits_size)
    proc.apply(logits)
    start = weather_artifact.matcher().allowed_token_ids()
    np.testing.assert_array_equal(allowed(logits[1]), start)


def test_another_served_tokenizer_is_refused_before_any_row(weather_artifact, art_path,
                                                            altered_dir, hf_altered):
    proc = ToolcVllmLogitsProcessor(vllm_config(altered_dir), torch.device("cpu"), False)
    with pytest.raises(toolc.ArtifactError) as e:
        add(proc, 0, art_path)
    from toolc.runtime.fingerprint import tokenizer_fingerprint
    theirs = tokenizer_fingerprint(hf_altered, weather_artifact.eos_token_ids)
    msg = str(e.value)
    assert weather_artifact.fingerprint[:12] in msg and theirs[:12] in msg
    assert "Qwen3-altered" in msg
    assert proc.rows == {}

    class Unchecked(ToolcVllmLogitsProcessor):
        check_tokenizer = False

    unchecked = Unchecked(vllm_config(altered_dir), torch.device("cpu"), False)
    add(unchecked, 0, art_path)
    assert list(unchecked.rows) == [0]


def test_a_tokenizer_set_on_the_class_is_checked_in_validate_params(art_path, hf_qwen,
                                                                    hf_altered):
    class Served(ToolcVllmLogitsProcessor):
        tokenizer = hf_qwen

    Served.validate_params(params(**{ARG: art_path}))
    Served.tokenizer = hf_altered
    with pytest.raises(ValueError, match="toolc_artifact.*recompile the artifact"):
        Served.validate_params(params(**{ARG: art_path}))
    # it also replaces the model's tokenizer in the engine
    proc = Served(vllm_config("/nonexistent"), torch.device("cpu"), False)
    with pytest.raises(toolc.ArtifactError, match="Qwen3-altered"):
        add(proc, 0, art_path)


def test_a_tokenizer_that_cannot_be_loaded_is_named_when_the_engine_starts(tmp_path):
    with pytest.raises(toolc.ArtifactError, match="cannot load the served tokenizer.*"
                                                  "check_tokenizer = False"):
        ToolcVllmLogitsProcessor(vllm_config(tmp_path / "no-such-model"), torch.device("cpu"),
                                 False)


def test_per_request_callable_checks_its_tokenizer(weather_artifact, hf_qwen, hf_altered):
    ToolcRequestLogitsProcessor(weather_artifact, tokenizer=hf_qwen)
    with pytest.raises(toolc.ArtifactError, match="Qwen3-altered"):
        ToolcRequestLogitsProcessor(weather_artifact, tokenizer=hf_altered)
    ToolcRequestLogitsProcessor(weather_artifact, tokenizer=hf_altered, check_tokenizer=False)


def test_with_vllm_installed_the_processor_is_vllms_own_kind():
    """Runs where vLLM imports (``make test``'s vendor step and ``make test-vllm``: vLLM
    0.33.0's wheel without its dependencies, in a virtualenv of its own): the processor
    subclasses vLLM's abstract base, and every abstract method is implemented, so vLLM can
    build it."""
    lp = pytest.importorskip("vllm.v1.sample.logits_processor")
    assert issubclass(ToolcVllmLogitsProcessor, lp.LogitsProcessor)
    assert not getattr(ToolcVllmLogitsProcessor, "__abstractmethods__", frozenset())
