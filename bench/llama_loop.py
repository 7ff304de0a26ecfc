"""llama.cpp's generation loop with and without toolc: tokens per second, and the overhead.

A randomly initialised Qwen3-architecture model (``--hidden``, ``--layers``; Qwen3's real
tokenizer and 151,936 logits; nothing downloaded) is saved by transformers and converted to
GGUF by the ``convert_hf_to_gguf.py`` of llama-cpp-python's own source, which ``make
llama-cpp`` unpacks under build/llama-cpp (``$TOOLC_LLAMA_CPP_SRC`` names another llama.cpp
checkout). Then ``Llama.generate`` runs per seed, alternately without and with
:class:`toolc.integrations.llama_cpp.ToolcLlamaLogitsProcessor`, and the bench reports the
median seconds per generated token of each and their ratio. Generations stop at an
end-of-generation token or ``--max-tokens``; a random model without toolc rarely ends, so
the per-token time is the fair figure, not the time per answer.

    python bench/llama_loop.py [--seeds 10] [--hidden 256] [--layers 4] [--json PATH]

Without llama-cpp-python or the converter it prints why and exits 0 (``make bench`` goes on).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
from importlib import resources
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
LLAMA_DIR = ROOT / "build" / "llama-cpp"

# arguments a random model can finish: enums, integers and booleans end within a few tokens
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


def tiny_gguf(folder: Path, hidden: int = 64, layers: int = 2, heads: int = 2,
              head_dim: int = 32) -> Path:
    """A random Qwen3 model with Qwen3's tokenizer, saved under ``folder`` and converted to
    ``folder/../NAME.gguf`` (f32) by llama.cpp's converter; returns the GGUF's path."""
    import torch
    import transformers
    folder.mkdir(parents=True, exist_ok=True)
    data = resources.files("toolc.data")
    (folder / "tokenizer.json").write_bytes(
        gzip.decompress(data.joinpath("qwen3/tokenizer.json.gz").read_bytes()))
    (folder / "tokenizer_config.json").write_bytes(
        data.joinpath("qwen3/tokenizer_config.json").read_bytes())
    cfg = transformers.Qwen3Config(
        vocab_size=151936, hidden_size=hidden, intermediate_size=hidden * 2,
        num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=1,
        head_dim=head_dim, max_position_embeddings=1024, tie_word_embeddings=True,
        bos_token_id=151643, eos_token_id=151645)
    torch.manual_seed(0)
    transformers.Qwen3ForCausalLM(cfg).save_pretrained(folder)
    out = folder.parent / f"{folder.name}.gguf"
    script = converter()
    env = dict(os.environ, PYTHONPATH=str(script.parent / "gguf-py"))
    res = subprocess.run([sys.executable, str(script), str(folder), "--outfile", str(out),
                          "--outtype", "f32"], capture_output=True, text=True, env=env,
                         timeout=900)
    if res.returncode != 0:
        raise RuntimeError(f"convert_hf_to_gguf.py failed: {res.stderr[-2000:]}")
    return out


def generate(llm, seed: int, processor=None, max_tokens: int = 160) -> list[int]:
    """One sampled generation (temperature 1), to the end of generation (any token llama.cpp
    ends on) or ``max_tokens`` tokens."""
    from llama_cpp import LogitsProcessorList, llama_vocab_is_eog
    llm.set_seed(seed)
    prompt = llm.tokenize(PROMPT.encode(), add_bos=False, special=True)
    procs = LogitsProcessorList([processor]) if processor is not None else None
    out = []
    for t in llm.generate(prompt, temp=1.0, top_k=0, top_p=1.0, min_p=0.0, reset=True,
                          logits_processor=procs):
        out.append(int(t))
        if llama_vocab_is_eog(llm._model.vocab, t) or len(out) >= max_tokens:
            break
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--json", default=str(ROOT / "bench" / "results" / "llama_loop.json"))
    args = ap.parse_args(argv)
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        print("llama_loop: llama-cpp-python is not installed (`make llama-cpp`); skipped")
        return 0
    if converter() is None:
        print("llama_loop: convert_hf_to_gguf.py is not unpacked under build/llama-cpp "
              "(`make llama-cpp`); skipped")
        return 0
    import statistics

    import toolc
    from llama_cpp import Llama

    from toolc.integrations.llama_cpp import ToolcLlamaLogitsProcessor
    art = toolc.compile_tools(TOOLS, "qwen", tool_choice="required", parallel=False,
                              source="llama_loop tools")
    with tempfile.TemporaryDirectory() as tmp:
        gguf = tiny_gguf(Path(tmp) / "bench-qwen3", hidden=args.hidden, layers=args.layers,
                         heads=max(2, args.hidden // 64), head_dim=64)
        llm = Llama(model_path=str(gguf), n_ctx=512, n_threads=1, n_threads_batch=1,
                    verbose=False)
        per_token = {False: [], True: []}
        tokens = {False: 0, True: 0}
        for seed in range(args.seeds):
            for with_toolc in (False, True):
                proc = ToolcLlamaLogitsProcessor(art, tokenizer=llm) if with_toolc else None
                t0 = time.perf_counter()
                ids = generate(llm, seed, proc, args.max_tokens)
                dt = time.perf_counter() - t0
                per_token[with_toolc].append(dt / max(1, len(ids)))
                tokens[with_toolc] += len(ids)
    without, with_ = (statistics.median(per_token[k]) for k in (False, True))
    report = {"model": {"hidden": args.hidden, "layers": args.layers, "logits": 151936},
              "seeds": args.seeds, "tokens": {"without": tokens[False], "with": tokens[True]},
              "ms_per_token": {"without": round(without * 1e3, 3), "with": round(with_ * 1e3, 3)},
              "tokens_per_s": {"without": round(1 / without, 1), "with": round(1 / with_, 1)},
              "overhead_ratio": round(with_ / without, 3)}
    print("| loop | ms per token (median of seeds) | tokens/s | tokens |\n|---|---|---|---|")
    for k, name in ((False, "without toolc"), (True, "with toolc")):
        print(f"| {name} | {report['ms_per_token']['without' if not k else 'with']} | "
              f"{report['tokens_per_s']['without' if not k else 'with']} | "
              f"{tokens[k]} |")
    print(f"\noverhead: x{report['overhead_ratio']} per token (llama.cpp CPU build, 1 thread, "
          f"random Qwen3 width {args.hidden}, {args.layers} layers)")
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w", encoding="utf-8") as fh:
        json.dump(report, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
