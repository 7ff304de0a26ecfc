"""llama.cpp for real: a generation loop in llama-cpp-python with toolc's LogitsProcessor, on
a tiny randomly initialised Qwen3-architecture model with the real Qwen3 tokenizer.

The model is made here from a config (transformers, random weights, nothing downloaded) and
converted to GGUF with ``convert_hf_to_gguf.py`` and ``gguf-py`` from llama-cpp-python's own
source (its vendored llama.cpp), which ``make llama-cpp`` unpacks under build/llama-cpp and
builds (a minimal CPU build; pip's wheel cache makes only the first run pay). Without the
package or the converter the test is skipped, saying why.

Over 30 seeds, every generation with toolc parses and validates; the same loop without toolc
is run too and its invalid rate printed (``pytest -s``): a random model writes no valid call.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

import toolc
from helpers import check_output

ROOT = Path(__file__).resolve().parent.parent
LLAMA_DIR = ROOT / "build" / "llama-cpp"
SEEDS = 30
EOS = (151645, 151643)        # Qwen3's <|im_end|> and <|endoftext|>, the artifact's EOS
MAX_TOKENS = 160

# arguments a random model can finish: enums, integers and booleans end within a few tokens
# (a string would run for hundreds: almost every token may continue it)
TOOLS = [
    {"type": "function", "function": {
        "name": "set_thermostat", "description": "Set a room's thermostat.",
        "parameters": {"type": "object", "properties": {
            "room": {"type": "string", "enum": ["kitchen", "bedroom", "office"]},
            "celsius": {"type": "integer"},
            "eco": {"type": "boolean"}},
            "required": ["room", "celsius", "eco"], "additionalProperties": False}}},
    {"type": "function", "function": {
        "name": "get_time", "description": "The time in a zone.",
        "parameters": {"type": "object", "properties": {
            "zone": {"type": "string", "enum": ["UTC", "Europe/Paris", "Asia/Tokyo"]}},
            "required": ["zone"], "additionalProperties": False}}},
]
PROMPT = ("<|im_start|>user\nMake the kitchen warm, then tell me the time in Tokyo.<|im_end|>\n"
          "<|im_start|>assistant\n")


def converter() -> Path | None:
    """convert_hf_to_gguf.py in llama-cpp-python's unpacked source (or $TOOLC_LLAMA_CPP_SRC,
    a llama.cpp checkout), or None."""
    env = os.environ.get("TOOLC_LLAMA_CPP_SRC")
    found = ([Path(env) / "convert_hf_to_gguf.py"] if env else
             sorted(LLAMA_DIR.glob("llama_cpp_python-*/vendor/llama.cpp/convert_hf_to_gguf.py")))
    return next((p for p in found if p.exists()), None)


def skip_reason() -> str | None:
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        note = LLAMA_DIR / "SKIPPED"
        return (note.read_text().strip() if note.exists() else
                "llama-cpp-python is not installed; `make llama-cpp` builds it from source")
    if converter() is None:
        return ("llama.cpp's convert_hf_to_gguf.py is not unpacked under build/llama-cpp; "
                "`make llama-cpp` unpacks llama-cpp-python's source there")
    return None


pytestmark = [pytest.mark.slow, pytest.mark.skipif(skip_reason() is not None,
                                                    reason=skip_reason() or "")]


@pytest.fixture(scope="module")
def gguf(tmp_path_factory) -> Path:
    """A tiny random Qwen3 model (2 layers, width 64, Qwen3's 151,936 logits and tokenizer),
    saved by transformers and converted to GGUF by llama.cpp's converter."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    d = tmp_path_factory.mktemp("tiny-qwen3") / "model"
    d.mkdir()
    data = resources.files("toolc.data")
    (d / "tokenizer.json").write_bytes(
        gzip.decompress(data.joinpath("qwen3/tokenizer.json.gz").read_bytes()))
    (d / "tokenizer_config.json").write_bytes(
        data.joinpath("qwen3/tokenizer_config.json").read_bytes())
    cfg = transformers.Qwen3Config(
        vocab_size=151936, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=1, head_dim=32, max_position_embeddings=1024,
        tie_word_embeddings=True, bos_token_id=151643, eos_token_id=151645)
    torch.manual_seed(0)
    transformers.Qwen3ForCausalLM(cfg).save_pretrained(d)
    out = d.parent / "tiny.gguf"
    script = converter()
    env = dict(os.environ, PYTHONPATH=str(script.parent / "gguf-py"))
    res = subprocess.run([sys.executable, str(script), str(d), "--outfile", str(out),
                          "--outtype", "f32"], capture_output=True, text=True, env=env,
                         timeout=900)
    assert res.returncode == 0, res.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def llm(gguf):
    from llama_cpp import Llama
    # one thread: ggml's threads wait spinning, and on shared cores two of them crawl
    return Llama(model_path=str(gguf), n_ctx=512, n_threads=1, n_threads_batch=1,
                 verbose=False)


@pytest.fixture(scope="module")
def art():
    return toolc.compile_tools(TOOLS, "qwen", tool_choice="required", parallel=False,
                               source="test tools")


def generate(llm, seed: int, processor=None) -> list[int]:
    """One sampled generation (temperature 1), to the end of generation (EOS, or any token
    llama.cpp ends on) or MAX_TOKENS tokens."""
    from llama_cpp import LogitsProcessorList, llama_vocab_is_eog
    llm.set_seed(seed)
    prompt = llm.tokenize(PROMPT.encode(), add_bos=False, special=True)
    procs = LogitsProcessorList([processor]) if processor is not None else None
    out = []
    for t in llm.generate(prompt, temp=1.0, top_k=0, top_p=1.0, min_p=0.0, reset=True,
                          logits_processor=procs):
        out.append(int(t))
        if llama_vocab_is_eog(llm._model.vocab, t) or len(out) >= MAX_TOKENS:
            break
    return out


def text_of(llm, ids: list[int]) -> str:
    return llm.detokenize(ids, special=True).decode("utf-8", errors="replace")


def valid(llm, ids: list[int]) -> bool:
    try:
        check_output(text_of(llm, ids), TOOLS, require_call=True)
    except Exception:
        return False
    return bool(ids) and ids[-1] in EOS


def test_the_engine_reads_qwen3s_vocabulary_from_the_gguf(llm, art):
    """The processor's tokenizer check reads the GGUF's vocabulary through llama.cpp's C API:
    it is Qwen3's, so the artifact is accepted."""
    from toolc.integrations.llama_cpp import ToolcLlamaLogitsProcessor
    assert llm.n_vocab() == art.logits_size == 151936
    proc = ToolcLlamaLogitsProcessor(art, tokenizer=llm)
    assert llm.tokenize(b"<tool_call>", add_bos=False, special=True) == [151657]
    # llama.cpp ends generation on Qwen3's ordinary token "</s>": the processor forbids it
    assert 128247 in proc.stops.tolist() and not set(proc.stops.tolist()) & {151643, 151645}


def test_every_generation_with_toolc_parses_and_validates(llm, art):
    from toolc.integrations.llama_cpp import ToolcLlamaLogitsProcessor
    outs, bad = [], []
    for seed in range(SEEDS):
        proc = ToolcLlamaLogitsProcessor(art, tokenizer=llm)
        ids = generate(llm, seed, proc)
        outs.append(text_of(llm, ids))
        if not valid(llm, ids):
            bad.append((seed, outs[-1]))
    assert bad == []
    assert len(set(outs)) > 1              # the seeds do sample different answers
    raw = [generate(llm, seed) for seed in range(SEEDS)]
    invalid = sum(not valid(llm, ids) for ids in raw)
    print(f"\nllama.cpp, tiny random Qwen3, {SEEDS} seeds: invalid with toolc 0/{SEEDS}, "
          f"without toolc {invalid}/{SEEDS}; e.g. {outs[0]!r}")
    json.dumps(outs)
