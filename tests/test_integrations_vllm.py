"""toolc/integrations/vllm.py against vLLM's v1 logits-processor interface.

vLLM does not install on this CPU-only machine without pulling a CUDA torch, so the batch
updates are built with stand-ins of the same shape as vLLM 0.33's
``vllm.v1.sample.logits_processor.interface`` (``BatchUpdate(batch_size, removed, added,
moved)``, ``AddedRequest = (index, SamplingParams, prompt_ids, output_ids)``,
``MovedRequest = (a, b, MoveDirectionality)``); the real types are used when vLLM imports.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, auto
from types import SimpleNamespace

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from toolc.integrations.vllm import (ARG, ToolcRequestLogitsProcessor,  # noqa: E402
                                     ToolcVllmLogitsProcessor)

try:
    from vllm.v1.sample.logits_processor import BatchUpdate, MoveDirectionality
    from vllm import SamplingParams

    def params(**extra):
        return SamplingParams(extra_args=extra or None)
except Exception:
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
