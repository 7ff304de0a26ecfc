"""toolc/integrations/llama_cpp.py: the llama-cpp-python LogitsProcessor contract.

llama-cpp-python calls ``processor(input_ids, scores)`` with numpy arrays (np.intc prompt +
generated ids, np.single logits). No GGUF model is available here, so the contract is tested
directly; the real package is used only when it is installed. The tokenizer check reads a
``Llama``'s vocabulary through the ``llama_cpp`` C API, here a stand-in of it
(``helpers.FakeLlamaCpp``) over Qwen3's vocabulary as a GGUF file holds it.
"""

from __future__ import annotations

import numpy as np
import pytest

import toolc
from helpers import FakeLlama, render_answer
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


def test_the_models_vocabulary_passes_and_another_is_refused(weather_artifact, fake_llama_cpp):
    llm = FakeLlama("Qwen3-8B-Q4_K_M.gguf")
    proc = ToolcLlamaLogitsProcessor(weather_artifact, tokenizer=llm)
    scores = np.zeros(weather_artifact.logits_size, dtype=np.single)
    proc(np.array(PROMPT, dtype=np.intc), scores)
    fake_llama_cpp.pieces[151657] = b"<tool_calls>"      # another model's vocabulary
    other = FakeLlama("other.gguf")
    with pytest.raises(toolc.ArtifactError) as e:
        ToolcLlamaLogitsProcessor(weather_artifact, tokenizer=other)
    from toolc.runtime.fingerprint import tokenizer_fingerprint
    theirs = tokenizer_fingerprint(other, weather_artifact.eos_token_ids)
    msg = str(e.value)
    assert weather_artifact.fingerprint[:12] in msg and theirs[:12] in msg
    assert "other.gguf" in msg
    ToolcLlamaLogitsProcessor(weather_artifact, tokenizer=other, check_tokenizer=False)


def test_other_tokenizer_kinds(weather_artifact, qwen, hf_qwen):
    ToolcLlamaLogitsProcessor(weather_artifact, tokenizer=hf_qwen)
    ToolcLlamaLogitsProcessor(weather_artifact, tokenizer=qwen.fingerprint)
    with pytest.raises(toolc.ArtifactError, match="tokenizer 'mistral'"):
        from toolc.tokenizer import load_vocabulary
        ToolcLlamaLogitsProcessor(weather_artifact, tokenizer=load_vocabulary("mistral"))


def test_with_the_real_package_when_installed(weather_artifact):
    llama_cpp = pytest.importorskip("llama_cpp")
    procs = llama_cpp.LogitsProcessorList([ToolcLlamaLogitsProcessor(weather_artifact)])
    scores = np.zeros(weather_artifact.logits_size, dtype=np.single)
    out = procs(np.array(PROMPT, dtype=np.intc), scores)
    assert np.isfinite(out).sum() == len(weather_artifact.matcher().allowed_token_ids())


def test_tokens_llama_cpp_ends_on_are_forbidden_unless_they_are_eos(weather_artifact,
                                                                   fake_llama_cpp):
    """llama.cpp's loader makes Qwen3's ordinary token "</s>" (128247) end generation; the
    artifact allows it inside strings, where it would cut the call short."""
    fake_llama_cpp.eog = {128247, 151643, 151645}
    proc = ToolcLlamaLogitsProcessor(weather_artifact, tokenizer=FakeLlama("q.gguf"))
    assert proc.stops.tolist() == [128247]
    scores = np.zeros(weather_artifact.logits_size, dtype=np.single)
    proc(np.array(PROMPT, dtype=np.intc), scores)             # free text allows "</s>"
    assert weather_artifact.matcher().accepts(128247)
    assert np.isneginf(scores[128247]) and np.isfinite(scores[128246])
