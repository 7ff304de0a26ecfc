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

import json
import sys
from pathlib import Path

import pytest

import toolc
from helpers import check_output

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
# the tools, the prompt, the converter's lookup, the model's making and the generation loop
# are bench/llama_loop.py's (the bench times the same loop)
from llama_loop import LLAMA_DIR, PROMPT, TOOLS, converter, tiny_gguf  # noqa: E402,F401
from llama_loop import generate as _generate  # noqa: E402

SEEDS = 30
EOS = (151645, 151643)        # Qwen3's <|im_end|> and <|endoftext|>, the artifact's EOS
MAX_TOKENS = 160


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
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    return tiny_gguf(tmp_path_factory.mktemp("tiny-qwen3") / "model")


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
    return _generate(llm, seed, processor, MAX_TOKENS)


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
