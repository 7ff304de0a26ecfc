"""toolc/integrations/llama_cpp.py: the llama-cpp-python LogitsProcessor contract.

llama-cpp-python calls ``processor(input_ids, scores)`` with numpy arrays (np.intc prompt +
generated ids, np.single logits). No GGUF model is available here, so the contract is tested
directly; the real package is used only when it is installed.
"""

from __future__ import annotations

import numpy as np
import pytest

import toolc
from helpers import render_answer
from toolc.integrations.llama_cpp import ToolcLlamaLogitsProcessor

PROMPT = [151644, 872, 198]


def test_follows_a_call_and_masks_like_the_matcher(weather_artifact, qwen):
    ids = qwen.encode(render_answer([("get_current_weather", {"city": "Oslo"})]))
    proc = ToolcLlamaLogitsProcessor(weather_artifact)
    ref = weather_artifact.matcher()
    seen = list(PROMPT)
    rng = np.random.default_rng(0)
    for t in ids:
        scores = rng.standard_normal(weather_artifact.logits_size).astype(np.single)
        out = proc(np.array(seen, dtype=np.intc), scores)
        assert out.dtype == np.single
        np.testing.assert_array_equal(np.flatnonzero(np.isfinite(out)), ref.allowed_token_ids())
        ref.advance(t)
        seen.append(t)
    scores = np.zeros(weather_artifact.logits_size, dtype=np.single)
    proc(np.array(seen, dtype=np.intc), scores)
    assert proc.matcher.is_terminated() and np.isfinite(scores).all()


def test_wider_and_narrower_logits(weather_artifact):
    proc = ToolcLlamaLogitsProcessor(weather_artifact)
    scores = np.zeros(weather_artifact.logits_size + 64, dtype=np.single)
    proc(np.array(PROMPT, dtype=np.intc), scores)
    assert np.isneginf(scores[weather_artifact.logits_size:]).all()
    with pytest.raises(toolc.ArtifactError):
        proc(np.array(PROMPT, dtype=np.intc), np.zeros(10, dtype=np.single))


def test_reset_and_rejected_token(weather_artifact):
    proc = ToolcLlamaLogitsProcessor(weather_artifact, prompt_length=len(PROMPT))
    proc(np.array(PROMPT, dtype=np.intc),
         np.zeros(weather_artifact.logits_size, dtype=np.single))
    with pytest.raises(toolc.RejectedTokenError):      # </tool_call> before any call
        proc(np.array(PROMPT + [151658], dtype=np.intc),
             np.zeros(weather_artifact.logits_size, dtype=np.single))
    proc.reset()
    assert proc.prompt_length is None and proc.matcher.state == 0


def test_with_the_real_package_when_installed(weather_artifact):
    llama_cpp = pytest.importorskip("llama_cpp")
    procs = llama_cpp.LogitsProcessorList([ToolcLlamaLogitsProcessor(weather_artifact)])
    scores = np.zeros(weather_artifact.logits_size, dtype=np.single)
    out = procs(np.array(PROMPT, dtype=np.intc), scores)
    assert np.isfinite(out).sum() == len(weather_artifact.matcher().allowed_token_ids())
