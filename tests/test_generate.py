"""examples/generate.py end to end: a small randomly initialised Qwen3-architecture model
(built from a config, no weights downloaded), the real Qwen3 tokenizer, torch on CPU, and on a
CUDA GPU where there is one (those tests are skipped elsewhere, with that reason).

Over 50 seeds and several tool sets, every constrained generation ends with EOS inside the
length budget, parses, and validates against its tool's schema. The same loop without toolc is
run for comparison; its invalid rate is reported (printed, and kept as a test property).
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import toolc  # noqa: E402
from helpers import load_tools  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))
from generate import Generator, check  # noqa: E402

CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device here")
SEEDS = list(range(50))
BASELINE_SEEDS = list(range(20))   # the unconstrained comparison: fewer seeds, to save time
BUDGET = 32
# (schema set, tool choice, parallel): required calls, so every answer must hold a call
SETS = [("weather", "required", True), ("math", "required", True),
        ("assistant", "required", False)]


def write_tokenizer(folder: Path) -> None:
    """The built-in Qwen3 tokenizer files, as transformers reads them."""
    base = resources.files("toolc.data").joinpath("qwen3")
    (folder / "tokenizer.json").write_bytes(
        gzip.decompress(base.joinpath("tokenizer.json.gz").read_bytes()))
    (folder / "tokenizer_config.json").write_text(
        base.joinpath("tokenizer_config.json").read_text(encoding="utf-8"), encoding="utf-8")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """(model directory, model, tokenizer): random Qwen3 weights, the real tokenizer."""
    torch.set_num_threads(1)   # two shared cores: threads only fight each other
    folder = tmp_path_factory.mktemp("tiny-qwen3")
    write_tokenizer(folder)
    tok = transformers.AutoTokenizer.from_pretrained(folder)
    torch.manual_seed(0)
    cfg = transformers.Qwen3Config(
        vocab_size=151936, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, head_dim=16, max_position_embeddings=2048,
        tie_word_embeddings=True, eos_token_id=[151645, 151643])
    model = transformers.Qwen3ForCausalLM(cfg).eval()
    model.save_pretrained(folder)
    return folder, model, tok


@pytest.fixture(scope="module")
def results():
    return {}


def generations(model, tok, name: str, choice: str, parallel: bool):
    """(with toolc over SEEDS, the unconstrained invalid rate over BASELINE_SEEDS, calls):
    asserts that every constrained generation is a valid answer ended with EOS in budget."""
    tools = load_tools(name)
    art = toolc.compile_tools(tools, tool_choice=choice, parallel=parallel)
    assert len(tok) == art.vocab_size
    g = Generator(model, tok, art.eos_token_ids)
    prompt = g.prompt_ids([{"role": "user", "content": "Please use a tool."}], tools=tools)
    with_toolc = [check(r, tools, require_call=True)
                  for r in g.run_batch(prompt, art, seeds=SEEDS, max_new_tokens=BUDGET)]
    bad = [(i, r.error, r.text) for i, r in enumerate(with_toolc) if r.error]
    assert not bad, bad[:3]
    assert all(r.ended_with_eos and r.extra["terminated"] for r in with_toolc)
    assert all(len(r.tokens) <= BUDGET for r in with_toolc)
    calls = sum(len(r.parsed["tool_calls"]) for r in with_toolc)
    assert calls >= len(SEEDS)
    without = [check(r, tools, require_call=True)
               for r in g.run_batch(prompt, None, seeds=BASELINE_SEEDS, max_new_tokens=BUDGET)]
    invalid = sum(r.error is not None for r in without) / len(without)
    # a random model cannot write a valid call by chance: the comparison must discriminate
    assert invalid > 0.9
    return with_toolc, invalid, calls


@pytest.mark.slow
@pytest.mark.parametrize("name,choice,parallel", SETS)
def test_every_constrained_generation_is_valid(tiny, results, record_property, name, choice,
                                               parallel):
    _, model, tok = tiny
    with_toolc, invalid, calls = generations(model, tok, name, choice, parallel)
    narrowed = sum(r.budget_steps > 0 for r in with_toolc)
    results[name] = invalid
    record_property("invalid_rate_without_toolc", invalid)
    print(f"\n{name}: with toolc 0/{len(SEEDS)} invalid ({calls} calls, {narrowed} generations "
          f"narrowed by the length budget); without toolc {invalid:.0%} of "
          f"{len(BASELINE_SEEDS)} invalid")


def run_script(folder, tmp_path, choice: str, *args: str) -> subprocess.CompletedProcess:
    """examples/generate.py on an artifact of the weather tools (``tool_choice=choice``)."""
    art = toolc.compile_tools(load_tools("weather"), tool_choice=choice, parallel=False)
    path = tmp_path / "weather.toolc"
    art.save(path)
    cmd = [sys.executable, str(ROOT / "examples" / "generate.py"), str(path), "--model",
           str(folder), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_script_prints_openai_tool_calls_and_saves_model_calls(tiny, tmp_path):
    out = run_script(tiny[0], tmp_path, "get_forecast", "--tools",
                     str(ROOT / "schemas" / "weather.json"), "--max-new-tokens", "32",
                     "--seed", "3", "--threads", "1")
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout)
    assert report["valid"] and report["ended_with_eos"], report
    (call,) = report["tool_calls"]
    assert call["type"] == "function" and call["function"]["name"] == "get_forecast"
    assert isinstance(json.loads(call["function"]["arguments"]), dict)
    # the start is forced: "<tool_call>" then "\n" are appended without a model call
    assert report["model_calls_saved_by_jump_forward"] >= 1
    assert report["model_calls"] + report["model_calls_saved_by_jump_forward"] \
        >= report["tokens"] - 1


def test_jump_forward_keeps_the_output_valid(tiny):
    _, model, tok = tiny
    tools = load_tools("weather")
    art = toolc.compile_tools(tools, tool_choice="get_current_weather", parallel=False)
    g = Generator(model, tok, art.eos_token_ids)
    prompt = g.prompt_ids([{"role": "user", "content": "Weather?"}], tools=tools)
    for seed in range(3):
        r = check(g.run(prompt, art, seed=seed, max_new_tokens=24), tools, require_call=True)
        assert r.error is None, (r.error, r.text)
        assert r.forced_tokens >= 2 and r.saved_calls >= 1
        assert r.model_calls + r.saved_calls == len(r.tokens) - 1


@CUDA
@pytest.mark.parametrize("name,choice,parallel", SETS)
def test_every_constrained_generation_on_cuda_is_valid(tiny, record_property, name, choice,
                                                       parallel):
    """The same loop with the model, the ids and the logits on the GPU: the masks (numpy rows
    from the runtime) are applied to CUDA logits."""
    folder, _, tok = tiny
    model = transformers.Qwen3ForCausalLM.from_pretrained(folder).to("cuda").eval()
    assert next(model.parameters()).device.type == "cuda"
    _, invalid, calls = generations(model, tok, name, choice, parallel)
    record_property("invalid_rate_without_toolc_cuda", invalid)
    print(f"\n{name} on cuda: with toolc 0/{len(SEEDS)} invalid ({calls} calls); without "
          f"toolc {invalid:.0%} of {len(BASELINE_SEEDS)} invalid")


@CUDA
def test_script_runs_the_model_on_cuda(tiny, tmp_path):
    out = run_script(tiny[0], tmp_path, "required", "--tools",
                     str(ROOT / "schemas" / "weather.json"), "--max-new-tokens", "32",
                     "--seed", "5", "--device", "cuda")
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout)
    assert report["valid"] and report["ended_with_eos"] and report["tool_calls"], report


def test_script_refuses_a_device_torch_does_not_have(tiny, tmp_path):
    out = run_script(tiny[0], tmp_path, "required", "--device", "nosuchdevice")
    assert out.returncode == 2, out.stderr[-2000:]
    assert out.stderr.startswith("error: --device nosuchdevice") and "Traceback" not in out.stderr
