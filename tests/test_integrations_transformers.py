"""toolc/integrations/transformers.py: the LogitsProcessor over real artifacts and a real
(tiny, randomly initialised) Qwen3 model's ``generate``."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import toolc  # noqa: E402
from helpers import load_tools, render_answer  # noqa: E402
from toolc.integrations.transformers import ToolcLogitsProcessor  # noqa: E402
from toolc.tokenizer import load_vocabulary  # noqa: E402

PROMPT = [1, 2, 3]


@pytest.fixture(scope="module")
def call_ids(qwen):
    text = render_answer([("get_forecast", {"city": "Paris", "days": 3})])
    return qwen.encode(text)


def finite(scores: torch.Tensor) -> np.ndarray:
    return torch.isfinite(scores).nonzero().flatten().numpy()


def test_masks_follow_a_valid_call_to_eos(weather_artifact, call_ids):
    proc = ToolcLogitsProcessor(weather_artifact)
    ref = weather_artifact.matcher()
    ids = list(PROMPT)
    for t in call_ids:
        scores = torch.randn(1, weather_artifact.logits_size)
        out = proc(torch.tensor([ids]), scores)
        assert out is scores                               # in place
        np.testing.assert_array_equal(finite(scores[0]), ref.allowed_token_ids())
        ref.advance(t)
        ids.append(t)
    proc(torch.tensor([ids]), torch.randn(1, weather_artifact.logits_size))
    assert proc.matchers[0].is_terminated()


def test_wider_logits_are_masked_and_narrower_refused(weather_artifact):
    proc = ToolcLogitsProcessor(weather_artifact)
    scores = torch.zeros(1, weather_artifact.logits_size + 128)
    proc(torch.tensor([PROMPT]), scores)
    assert torch.isneginf(scores[0, weather_artifact.logits_size:]).all()
    with pytest.raises(toolc.ArtifactError, match="fewer than"):
        ToolcLogitsProcessor(weather_artifact)(torch.tensor([PROMPT]), torch.zeros(1, 1000))


def test_a_list_of_artifacts_one_per_row_and_beam_reordering(weather_artifact, call_ids):
    other = toolc.compile_tools(load_tools("weather"), tool_choice="required")
    proc = ToolcLogitsProcessor([weather_artifact, other])
    # two batch entries x two beams: rows 0,1 use weather_artifact, rows 2,3 use other
    ids = torch.tensor([PROMPT] * 4)
    scores = torch.zeros(4, weather_artifact.logits_size)
    proc(ids, scores)
    free_text = finite(scores[0]).size
    assert finite(scores[1]).size == free_text
    assert finite(scores[2]).tolist() == [151657]          # required: only <tool_call>
    # feed rows different prefixes, then swap rows 0 and 1 (a beam reorder)
    a, b = call_ids[:1], [9707]                            # '<tool_call>' and 'Hello'
    proc(torch.tensor([PROMPT + a, PROMPT + b, PROMPT + a, PROMPT + a]),
         torch.zeros(4, weather_artifact.logits_size))
    swapped = torch.tensor([PROMPT + b, PROMPT + a, PROMPT + a, PROMPT + a])
    proc(swapped, torch.zeros(4, weather_artifact.logits_size))
    want0, want1 = weather_artifact.matcher(), weather_artifact.matcher()
    want0.advance(b[0])
    want1.advance(a[0])
    assert proc.matchers[0].state == want0.state
    assert proc.matchers[1].state == want1.state


def test_a_rejected_token_raises(weather_artifact):
    proc = ToolcLogitsProcessor(other := toolc.compile_tools(load_tools("weather"),
                                                             tool_choice="required"))
    proc(torch.tensor([PROMPT]), torch.zeros(1, other.logits_size))
    with pytest.raises(toolc.RejectedTokenError):
        proc(torch.tensor([PROMPT + [9707]]), torch.zeros(1, other.logits_size))


def test_finished_rows_are_left_alone(weather_artifact, qwen):
    eos = weather_artifact.eos_token_ids[0]
    proc = ToolcLogitsProcessor(weather_artifact)
    proc(torch.tensor([PROMPT, PROMPT]), torch.zeros(2, weather_artifact.logits_size))
    scores = torch.zeros(2, weather_artifact.logits_size)
    proc(torch.tensor([PROMPT + [eos], PROMPT + [9707]]), scores)
    assert torch.isfinite(scores[0]).all()                 # terminated: untouched
    assert not torch.isfinite(scores[1]).all()


@pytest.mark.parametrize("device", [
    "cpu", pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(),
                                                         reason="no CUDA device here"))])
def test_with_model_generate(weather_artifact, device):
    """transformers' own generate loop: every sampled token is one the artifact allows (on the
    CPU, and with the model and its logits on a CUDA GPU where there is one)."""
    torch.manual_seed(0)
    cfg = transformers.Qwen3Config(vocab_size=151936, hidden_size=32, intermediate_size=64,
                                   num_hidden_layers=1, num_attention_heads=2,
                                   num_key_value_heads=1, head_dim=16, tie_word_embeddings=True)
    model = transformers.Qwen3ForCausalLM(cfg).eval().to(device)
    art = toolc.compile_tools(load_tools("weather"), tool_choice="required")
    proc = ToolcLogitsProcessor(art)
    prompt = torch.tensor([[151644, 872, 198, 9707, 151645, 198, 151644, 77091, 198]],
                          device=device)
    out = model.generate(prompt, logits_processor=transformers.LogitsProcessorList([proc]),
                         do_sample=True, max_new_tokens=12, pad_token_id=151643,
                         eos_token_id=list(art.eos_token_ids))
    new = out[0, prompt.shape[1]:].tolist()
    m = art.matcher()
    for t in new:
        if m.is_terminated():
            break
        m.advance(t)          # raises if generate produced a token the mask forbade
    assert new[0] == 151657   # required: the first token is <tool_call>


# -- the tokenizer check -----------------------------------------------------------------------

def test_the_models_tokenizer_passes_and_another_is_refused(weather_artifact, hf_qwen,
                                                            hf_altered, qwen):
    proc = ToolcLogitsProcessor(weather_artifact, tokenizer=hf_qwen)
    proc(torch.tensor([PROMPT]), torch.zeros(1, weather_artifact.logits_size))
    other = toolc.compile_tools(load_tools("weather"), tool_choice="required")
    ToolcLogitsProcessor([weather_artifact, other], tokenizer=hf_qwen)   # every one checked
    with pytest.raises(toolc.ArtifactError) as e:
        ToolcLogitsProcessor([weather_artifact, other], tokenizer=hf_altered)
    from toolc.runtime.fingerprint import tokenizer_fingerprint
    altered = tokenizer_fingerprint(hf_altered, weather_artifact.eos_token_ids)
    msg = str(e.value)
    assert weather_artifact.fingerprint[:12] in msg and altered[:12] in msg
    assert "Qwen3-altered" in msg                          # the tokenizer's name_or_path
    # a toolc Vocabulary of another model (Mistral's tekken) is refused the same way
    with pytest.raises(toolc.ArtifactError, match="tokenizer 'mistral'"):
        ToolcLogitsProcessor(weather_artifact, tokenizer=load_vocabulary("mistral"))
    ToolcLogitsProcessor(weather_artifact, tokenizer=qwen.fingerprint)


def test_the_check_can_be_turned_off(weather_artifact, hf_altered):
    proc = ToolcLogitsProcessor(weather_artifact, tokenizer=hf_altered, check_tokenizer=False)
    proc(torch.tensor([PROMPT]), torch.zeros(1, weather_artifact.logits_size))


def test_a_slow_or_unknown_tokenizer_is_refused_by_type(weather_artifact):
    with pytest.raises(TypeError, match="cannot take a toolc fingerprint"):
        ToolcLogitsProcessor(weather_artifact, tokenizer=object())
