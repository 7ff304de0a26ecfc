"""toolc/runtime/fingerprint.py: the vocabulary fingerprint, taken from the tokenizer objects
engines
serve with (transformers, tokenizers, llama-cpp-python), equal to the one toolc compiles with.

The transformers and tokenizers objects are real, loaded from the real Qwen3 tokenizer.json.
llama-cpp-python cannot be installed here, so its tests use a stand-in of its C API (the three
functions the reader calls, ``helpers.FakeLlamaCpp``) over Qwen3's vocabulary laid out as
llama.cpp's GGUF converter lays out a tokenizer.json.
"""

from __future__ import annotations

import time

import pytest

import toolc
from helpers import CONTROL, NORMAL, FakeLlama, heavy_modules_after
from toolc.runtime import fingerprint as fpmod
from toolc.tokenizer import load_vocabulary

transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")


def test_the_vocabulary_fingerprint_is_the_shared_definition(qwen):
    assert fpmod.fingerprint(qwen.token_bytes, qwen.added, qwen.eos_ids) == qwen.fingerprint
    part = fpmod.tokens_hash(qwen.token_bytes, qwen.added)
    assert fpmod.finish(part, qwen.eos_ids) == qwen.fingerprint
    assert fpmod.finish(part, qwen.eos_ids) == qwen.fingerprint    # finish leaves part alone
    assert fpmod.finish(part, (151645,)) != qwen.fingerprint


def test_a_transformers_tokenizer_gives_toolcs_fingerprint(qwen, hf_qwen, qwen_dir):
    # the built-in alias (EOS from generation_config: <|im_end|>, <|endoftext|>) ...
    assert fpmod.tokenizer_fingerprint(hf_qwen, qwen.eos_ids) == qwen.fingerprint
    # ... and the same directory read by toolc (EOS from tokenizer_config.json)
    from_dir = load_vocabulary(str(qwen_dir))
    assert from_dir.eos_ids == (151645,)
    assert fpmod.tokenizer_fingerprint(hf_qwen, from_dir.eos_ids) == from_dir.fingerprint
    # PreTrainedTokenizerFast straight from the file, and a tokenizers.Tokenizer
    fast = transformers.PreTrainedTokenizerFast(tokenizer_file=str(qwen_dir / "tokenizer.json"))
    assert fpmod.tokenizer_fingerprint(fast, qwen.eos_ids) == qwen.fingerprint
    raw = tokenizers.Tokenizer.from_file(str(qwen_dir / "tokenizer.json"))
    assert fpmod.tokenizer_fingerprint(raw, qwen.eos_ids) == qwen.fingerprint


def test_one_changed_token_changes_it_everywhere(qwen, hf_altered, altered_dir):
    toolc_side = load_vocabulary(str(altered_dir))
    assert toolc_side.token_bytes[151642] == b"toolc altered"
    engine_side = fpmod.tokenizer_fingerprint(hf_altered, toolc_side.eos_ids)
    assert engine_side == toolc_side.fingerprint
    assert fpmod.tokenizer_fingerprint(hf_altered, qwen.eos_ids) != qwen.fingerprint


def test_a_sentencepiece_style_tokenizer_agrees_too(tmp_path):
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2, "<0x0A>": 3, "<0xC3>": 4, "▁": 5, "▁hi": 6,
             "h": 7, "i": 8, "▁h": 9, "▁wörld": 10}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[("▁", "h"), ("▁h", "i")],
                               unk_token="<unk>", byte_fallback=True))
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(),
                                     decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    tok.add_special_tokens([AddedToken(t, special=True) for t in ("<unk>", "<s>", "</s>")])
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    v = load_vocabulary(path)
    assert v.token_bytes[3] == b"\n" and v.token_bytes[6] == b" hi"
    hf = transformers.PreTrainedTokenizerFast(tokenizer_file=str(path))
    assert fpmod.tokenizer_fingerprint(hf, v.eos_ids) == v.fingerprint
    assert fpmod.tokenizer_fingerprint(tok, v.eos_ids) == v.fingerprint


def test_strings_and_vocabularies_pass_through(qwen):
    assert fpmod.tokenizer_fingerprint("ab" * 32, (1,)) == "ab" * 32
    mistral = load_vocabulary("mistral")
    # a Vocabulary's own EOS ids count, not the ones given
    assert fpmod.tokenizer_fingerprint(mistral, qwen.eos_ids) == mistral.fingerprint


def test_the_read_is_cached_per_object_and_redone_when_tokens_are_added(qwen, qwen_dir):
    hf = transformers.AutoTokenizer.from_pretrained(qwen_dir)   # a fresh object: cold
    t0 = time.perf_counter()
    first = fpmod.tokenizer_fingerprint(hf, qwen.eos_ids)
    cold = time.perf_counter() - t0
    t0 = time.perf_counter()
    again = fpmod.tokenizer_fingerprint(hf, qwen.eos_ids)
    warm = time.perf_counter() - t0
    assert first == again == qwen.fingerprint
    assert warm < cold / 20, (cold, warm)
    print(f"\nQwen3 from a transformers tokenizer: {cold * 1e3:.0f} ms first, "
          f"{warm * 1e3:.3f} ms cached")
    hf.add_tokens(["<toolc_new_token>"])
    assert fpmod.tokenizer_fingerprint(hf, qwen.eos_ids) != qwen.fingerprint
    key = id(hf)
    assert key in fpmod._CACHE
    del hf
    import gc
    gc.collect()
    assert key not in fpmod._CACHE


def test_other_objects_are_refused_with_the_kinds_accepted():
    with pytest.raises(TypeError, match="transformers fast tokenizer.*fingerprint string"):
        fpmod.tokenizer_fingerprint(object(), (0,))
    with pytest.raises(TypeError):
        fpmod.tokenizer_fingerprint(12345, (0,))


def test_tokenizer_names_for_messages(qwen, hf_qwen, qwen_dir):
    assert fpmod.tokenizer_name(hf_qwen) == f"tokenizer {str(qwen_dir)!r}"
    assert fpmod.tokenizer_name(qwen) == "tokenizer 'qwen3'"
    raw = tokenizers.Tokenizer.from_file(str(qwen_dir / "tokenizer.json"))
    assert fpmod.tokenizer_name(raw) == "the tokenizers Tokenizer"


# -- llama.cpp ---------------------------------------------------------------------------------

def test_a_llama_cpp_vocabulary_gives_toolcs_fingerprint(fake_llama_cpp, qwen):
    assert len(fake_llama_cpp.pieces) == 151936
    llm = FakeLlama("qwen3.gguf")
    assert fpmod.tokenizer_fingerprint(llm, qwen.eos_ids) == qwen.fingerprint
    assert fpmod.tokenizer_name(llm) == "tokenizer 'qwen3.gguf'"


def test_a_changed_llama_cpp_token_is_seen(fake_llama_cpp, qwen):
    assert max(map(len, qwen.token_bytes)) < 256
    fake_llama_cpp.pieces[1000] = b"x" * 300          # longer than the first buffer, too
    got = fpmod.tokenizer_fingerprint(FakeLlama("other.gguf"), qwen.eos_ids)
    assert got != qwen.fingerprint
    tb = list(qwen.token_bytes)
    tb[1000] = b"x" * 300
    assert got == fpmod.fingerprint(tb, qwen.added, qwen.eos_ids)   # read whole, not cut


def test_a_llama_cpp_added_token_read_as_normal_is_seen(fake_llama_cpp, qwen):
    fake_llama_cpp.attrs[151657] = NORMAL             # <tool_call> no longer an added token
    assert fpmod.tokenizer_fingerprint(FakeLlama("m.gguf"), qwen.eos_ids) != qwen.fingerprint


def write_gguf(path, token_types: list[int]) -> None:
    """A GGUF (version 3) holding no tensors, three keys: a string, a string array and the
    token types (int32), in that order, as convert_hf_to_gguf.py writes them."""
    import struct

    def key(name: str) -> bytes:
        return struct.pack("<Q", len(name)) + name.encode()

    def string(text: bytes) -> bytes:
        return struct.pack("<Q", len(text)) + text

    kv = [key("general.architecture") + struct.pack("<I", 8) + string(b"qwen3"),
          key("tokenizer.ggml.tokens") + struct.pack("<IIQ", 9, 8, 3)
          + b"".join(string(t) for t in (b"a", b"</s>", b"<tool_call>")),
          key("tokenizer.ggml.token_type") + struct.pack("<IIQ", 9, 5, len(token_types))
          + struct.pack(f"<{len(token_types)}i", *token_types)]
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, len(kv)) + b"".join(kv))


def test_a_token_llama_cpp_made_control_by_its_text_is_still_ordinary(fake_llama_cpp, qwen,
                                                                       tmp_path):
    """llama.cpp's loader marks Qwen3's ordinary BPE token ``</s>`` (128247) a control token
    (seen on a real GGUF: tests/test_engine_llama_cpp.py); the file's token types, like the
    tokenizer, have it as text, and the reader takes the added tokens from the file."""
    assert qwen.token_bytes[128247] == b"</s>" and 128247 not in qwen.added_ids
    fake_llama_cpp.attrs[128247] = CONTROL
    assert fpmod.tokenizer_fingerprint(FakeLlama("none.gguf"), qwen.eos_ids) != qwen.fingerprint
    types = [1] * len(fake_llama_cpp.attrs)         # normal, then the file's added tokens
    for tid in qwen.added_ids:
        types[tid] = 3 if tid in qwen.special_ids else 4
    types[len(qwen.token_bytes):] = [5] * (len(types) - len(qwen.token_bytes))   # unused
    path = tmp_path / "qwen3.gguf"
    write_gguf(path, types)
    assert fpmod.gguf_token_types(str(path)) == types
    assert fpmod.tokenizer_fingerprint(FakeLlama(str(path)), qwen.eos_ids) == qwen.fingerprint
    assert fpmod.gguf_token_types(str(tmp_path / "missing.gguf")) is None
    (tmp_path / "bad.gguf").write_bytes(b"GGUF\x03\x00\x00\x00" + b"\xff" * 20)
    assert fpmod.gguf_token_types(str(tmp_path / "bad.gguf")) is None


def test_load_accepts_every_kind(tmp_path, weather_artifact, qwen, hf_qwen, hf_altered,
                                 fake_llama_cpp):
    path = tmp_path / "w.toolc"
    weather_artifact.save(path)
    for tok in (qwen, qwen.fingerprint, hf_qwen, hf_qwen.backend_tokenizer, FakeLlama("q.gguf")):
        assert toolc.load(path, tokenizer=tok).fingerprint == qwen.fingerprint
    with pytest.raises(toolc.ArtifactError) as e:
        toolc.load(path, tokenizer=hf_altered)
    other = fpmod.tokenizer_fingerprint(hf_altered, qwen.eos_ids)
    msg = str(e.value)
    assert qwen.fingerprint[:12] in msg and other[:12] in msg and "Qwen3-altered" in msg
    with pytest.raises(TypeError):
        toolc.load(path, tokenizer=object())


def test_the_fingerprint_module_stays_on_the_runtime_side(tmp_path, weather_artifact):
    """toolc.load reads engine tokenizers through toolc.runtime.fingerprint, which needs no
    compiler."""
    path = tmp_path / "w.toolc"
    weather_artifact.save(path)
    code = f"""
import toolc, toolc.runtime.fingerprint
toolc.load({str(path)!r}, tokenizer={weather_artifact.fingerprint!r})
"""
    assert heavy_modules_after(code) == []
