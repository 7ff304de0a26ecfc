"""toolc/tokenizer.py: the built-in Qwen3 vocabulary, token bytes, and every way to load one."""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path
from importlib import resources

import pytest

from toolc.errors import TokenizerError
from toolc.runtime.fingerprint import fingerprint
from toolc.tokenizer import (BYTE_DECODER, Vocabulary, builtin_names, load_builtin,
                             load_vocabulary)

QWEN_DATA = resources.files("toolc.data").joinpath("qwen3")


# -- the built-in Qwen3 vocabulary ------------------------------------------------------------

def test_qwen_sizes(qwen):
    assert qwen.vocab_size == 151669
    assert len(qwen.token_bytes) == 151669
    assert qwen.logits_size == 151936


def test_alias_qwen_and_qwen3_are_the_same_vocabulary(qwen):
    assert {"qwen", "qwen3"} <= set(builtin_names())
    q3 = load_vocabulary("qwen3")
    assert q3.name == qwen.name == "qwen3"
    assert q3.fingerprint == qwen.fingerprint
    assert load_vocabulary("QWEN").fingerprint == qwen.fingerprint


def test_load_vocabulary_passes_a_vocabulary_through(qwen):
    assert load_vocabulary(qwen) is qwen


def test_tool_call_tags_are_added_tokens(qwen):
    assert qwen.token_id("<tool_call>") == 151657
    assert qwen.token_id("</tool_call>") == 151658
    assert {151657, 151658} <= qwen.added_ids
    assert qwen.token_bytes[151657] == b"<tool_call>"
    assert qwen.token_bytes[151658] == b"</tool_call>"
    assert qwen.token_id("<not_a_token>") is None


def test_eos_ids(qwen):
    assert qwen.eos_ids == (151645, 151643)
    assert qwen.token_bytes[151645] == b"<|im_end|>"
    assert qwen.token_bytes[151643] == b"<|endoftext|>"
    assert set(qwen.eos_ids) <= qwen.special_ids
    # <tool_call> is an added token but not flagged special in Qwen3's tokenizer.json
    assert 151657 not in qwen.special_ids


def test_fingerprint_is_a_stable_sha256(qwen):
    fp = qwen.fingerprint
    assert re.fullmatch(r"[0-9a-f]{64}", fp)
    assert qwen.fingerprint == fp
    # a fresh load, bypassing the per-process cache, gives the same value
    fresh = load_builtin("qwen3")
    assert fresh is not qwen
    assert fresh.fingerprint == fp


def test_fingerprint_changes_with_any_token_byte_or_eos(qwen):
    def variant(**kw):
        fields = dict(name=qwen.name, token_bytes=qwen.token_bytes, added=qwen.added,
                      special_ids=qwen.special_ids, eos_ids=qwen.eos_ids,
                      logits_size=qwen.logits_size)
        fields.update(kw)
        return Vocabulary(**fields)

    tb = list(qwen.token_bytes)
    tb[1000] = tb[1000] + b"x"
    assert variant(token_bytes=tuple(tb)).fingerprint != qwen.fingerprint
    assert variant(eos_ids=(151645,)).fingerprint != qwen.fingerprint
    assert variant(name="other").fingerprint == qwen.fingerprint  # the name is not content


def test_byte_level_tokens_decode_through_the_gpt2_table(qwen):
    # 'Ġhello' in tokenizer.json: Ġ is the GPT-2 table's stand-in for the space byte
    hello = qwen.encode(" hello")
    assert len(hello) == 1
    assert qwen.token_bytes[hello[0]] == b" hello"
    assert qwen.token_bytes[220] == b" "      # 'Ġ'
    assert qwen.token_bytes[198] == b"\n"     # 'Ċ'
    assert qwen.token_bytes[0] == b"!"
    assert BYTE_DECODER["Ġ"] == 0x20 and BYTE_DECODER["Ċ"] == 0x0A
    assert sorted(BYTE_DECODER.values()) == list(range(256))


def test_tokens_may_end_inside_a_utf8_character(qwen):
    # 'Ġæĸ' is a space plus the first two bytes of a three-byte character such as '新'
    assert qwen.token_bytes[31286] == b" \xe6\x96"
    # token 94 is '¡' in tokenizer.json: the lone continuation byte 0xA1, not U+00A1
    assert qwen.token_bytes[94] == b"\xa1"
    partial = 0
    for b in qwen.token_bytes:
        try:
            b.decode("utf-8")
        except UnicodeDecodeError:
            partial += 1
    assert partial > 1000


def test_every_ordinary_token_has_bytes(qwen):
    empty = [i for i, b in enumerate(qwen.token_bytes) if not b]
    assert empty == []


@pytest.mark.parametrize("text", [
    "Héllo wörld, 日本語 😀 and <tool_call>{\"a\": 1}</tool_call>",
    "Ünïcödé\n\ttabs  and  spaces\u00a0nbsp — dash",
    "\U0001F9D1\u200d\U0001F4BB emoji ZWJ sequence",
])
def test_encode_decode_round_trip(qwen, text):
    ids = qwen.encode(text)
    assert ids
    assert qwen.decode_bytes(ids) == text.encode("utf-8")


def test_encode_takes_tool_call_as_one_added_token(qwen):
    assert qwen.encode("<tool_call>") == [151657]
    assert qwen.encode("</tool_call>") == [151658]


# -- loading from files -----------------------------------------------------------------------

@pytest.fixture(scope="module")
def qwen_json_text() -> str:
    return gzip.decompress(QWEN_DATA.joinpath("tokenizer.json.gz").read_bytes()).decode("utf-8")


@pytest.fixture(scope="module")
def qwen_folder(tmp_path_factory, qwen_json_text):
    """tokenizer.json + tokenizer_config.json, as a model repository holds them."""
    folder = tmp_path_factory.mktemp("models") / "Qwen3-mini"
    folder.mkdir()
    (folder / "tokenizer.json").write_text(qwen_json_text, encoding="utf-8")
    (folder / "tokenizer_config.json").write_bytes(
        QWEN_DATA.joinpath("tokenizer_config.json").read_bytes())
    return folder


def _copy_folder(src, dst):
    dst.mkdir()
    for name in ("tokenizer.json", "tokenizer_config.json"):
        try:
            (dst / name).symlink_to(src / name)
        except OSError:  # pragma: no cover - filesystems without symlinks
            shutil.copy(src / name, dst / name)
    return dst


def test_load_from_directory(qwen, qwen_folder):
    v = load_vocabulary(str(qwen_folder))
    assert v.name == "Qwen3-mini"
    assert v.token_bytes == qwen.token_bytes
    assert v.added == qwen.added
    assert v.token_id("<tool_call>") == 151657
    # tokenizer_config.json names one EOS token; without config.json the logits are the vocab
    assert v.eos_ids == (151645,)
    assert v.logits_size == v.vocab_size == 151669


def test_load_from_direct_tokenizer_json_path(qwen, qwen_folder):
    v = load_vocabulary(qwen_folder / "tokenizer.json")
    assert v.token_bytes == qwen.token_bytes
    assert v.eos_ids == (151645,)


def test_directory_with_model_configs_matches_the_builtin(qwen, qwen_folder, tmp_path):
    folder = _copy_folder(qwen_folder, tmp_path / "Qwen3-full")
    (folder / "config.json").write_text(json.dumps({"vocab_size": 151936}))
    (folder / "generation_config.json").write_text(
        json.dumps({"eos_token_id": [151645, 151643]}))
    v = load_vocabulary(folder)
    assert v.logits_size == 151936
    assert v.eos_ids == (151645, 151643)
    assert v.fingerprint == qwen.fingerprint


def test_bare_alias_wins_over_a_same_named_folder(qwen, qwen_folder, tmp_path, monkeypatch):
    folder = _copy_folder(qwen_folder, tmp_path / "qwen")
    (folder / "config.json").write_text(json.dumps({"vocab_size": 151680}))
    monkeypatch.chdir(tmp_path)
    assert load_vocabulary("qwen").logits_size == qwen.logits_size != 151680
    for spec in ("./qwen", Path("qwen")):
        assert load_vocabulary(spec).logits_size == 151680, spec


def test_explicit_logits_size_smaller_than_vocab_is_refused(qwen_folder, tmp_path):
    folder = _copy_folder(qwen_folder, tmp_path / "small")
    with pytest.raises(TokenizerError, match="smaller than the vocabulary"):
        load_vocabulary(folder, logits_size=1000)


def _write_sentencepiece(folder, model: str):
    """A tiny SentencePiece-style tokenizer.json: ▁ for spaces, <0xNN> byte-fallback pieces."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    if model == "bpe":
        vocab = {"<unk>": 0, "<s>": 1, "</s>": 2, "<0x0A>": 3, "<0xC3>": 4, "▁": 5,
                 "▁hello": 6, "h": 7, "e": 8, "l": 9, "o": 10, "▁h": 11, "▁he": 12,
                 "▁hel": 13, "▁hell": 14, "▁wörld": 15}
        merges = [("▁", "h"), ("▁h", "e"), ("▁he", "l"), ("▁hel", "l"), ("▁hell", "o")]
        tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, unk_token="<unk>",
                                   byte_fallback=True))
    else:
        pieces = [("<unk>", 0.0), ("<s>", 0.0), ("</s>", 0.0), ("<0x0A>", -2.0),
                  ("<0xC3>", -2.0), ("▁", -3.0), ("▁hello", -1.0), ("h", -4.0), ("e", -4.0),
                  ("l", -4.0), ("o", -4.0), ("▁h", -5.0), ("▁he", -5.0), ("▁hel", -5.0),
                  ("▁hell", -5.0), ("▁wörld", -1.0)]
        tok = Tokenizer(models.Unigram(pieces, unk_id=0, byte_fallback=True))
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(),
                                     decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    tok.add_special_tokens([AddedToken(t, special=True) for t in ("<unk>", "<s>", "</s>")])
    folder.mkdir()
    tok.save(str(folder / "tokenizer.json"))
    return folder


@pytest.mark.parametrize("model", ["bpe", "unigram"])
def test_sentencepiece_pieces_become_bytes(tmp_path, model):
    folder = _write_sentencepiece(tmp_path / f"sp-{model}", model)
    spec = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    assert "ByteLevel" not in json.dumps(spec)   # really the SentencePiece style
    v = load_vocabulary(folder)
    assert v.vocab_size == 16
    assert v.token_bytes[6] == b" hello"           # ▁hello
    assert v.token_bytes[5] == b" "                # ▁
    assert v.token_bytes[3] == b"\n"               # <0x0A>
    assert v.token_bytes[4] == b"\xc3"             # <0xC3>: one byte, half a character
    assert v.token_bytes[15] == " wörld".encode()  # raw UTF-8 inside a piece
    assert v.token_bytes[7] == b"h"
    # no tokenizer_config.json: the EOS token is guessed from the added tokens
    assert v.eos_ids == (2,)
    assert {0, 1, 2} == v.added_ids


def test_sentencepiece_encoding_agrees_with_token_bytes(tmp_path):
    v = load_vocabulary(_write_sentencepiece(tmp_path / "sp", "bpe"))
    ids = v.encode("hello\nhello")
    assert ids == [6, 3, 7, 8, 9, 9, 10]             # ▁hello <0x0A> h e l l o
    # the Metaspace prefix space is part of the first piece's bytes
    assert v.decode_bytes(ids) == b" hello\nhello"


def test_not_a_tokenizer_json_fails_clearly(tmp_path):
    path = tmp_path / "tools.json"
    path.write_text('[{"name": "x"}]')
    with pytest.raises(TokenizerError) as exc:
        load_vocabulary(path)
    assert str(path) in str(exc.value)
    assert "tokenizer.json" in str(exc.value)


def test_directory_without_tokenizer_json_fails_clearly(tmp_path):
    with pytest.raises(TokenizerError, match="no tokenizer.json"):
        load_vocabulary(tmp_path)


# -- what cannot be found ---------------------------------------------------------------------

def test_unknown_name_fails_offline_in_one_line(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(TokenizerError) as exc:
        load_vocabulary("no-such-tokenizer-for-toolc-tests")
    msg = str(exc.value)
    assert "\n" not in msg
    assert "no-such-tokenizer-for-toolc-tests" in msg
    assert "HF_HUB_OFFLINE" in msg         # said without asking the hub (which may hang)
    for alternative in ("qwen", "qwen3", "tokenizer.json", "directory"):
        assert alternative in msg


@pytest.mark.parametrize("rel", ["missing-dir", "missing/tokenizer.json", "gone.json"])
def test_missing_path_fails_clearly(tmp_path, monkeypatch, rel):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    path = tmp_path / rel
    with pytest.raises(TokenizerError) as exc:
        load_vocabulary(path)
    msg = str(exc.value)
    assert "\n" not in msg
    assert str(path) in msg
    assert "no such file or directory" in msg


def test_relative_missing_path_is_not_sent_to_the_hub(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(TokenizerError, match="no such file or directory"):
        load_vocabulary("./models/missing")


# -- the on-disk vocabulary cache -------------------------------------------------------------

def _same_vocabulary(a, b):
    assert a.token_bytes == b.token_bytes
    assert a.added == b.added and a.special_ids == b.special_ids
    assert a.eos_ids == b.eos_ids and a.logits_size == b.logits_size
    assert a.fingerprint == b.fingerprint
    # a fingerprint read back from the cache is the one its tokens give
    assert a.fingerprint == fingerprint(a.token_bytes, a.added, a.eos_ids)


def test_builtin_through_a_cold_and_a_warm_cache(qwen, tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLC_CACHE_DIR", str(tmp_path))
    cold = load_builtin("qwen3")
    entries = list(tmp_path.iterdir())
    assert len(entries) == 1 and not entries[0].name.endswith(".tmp")
    warm = load_builtin("qwen3")
    _same_vocabulary(cold, qwen)
    _same_vocabulary(warm, qwen)
    assert warm.encode("<tool_call>x") == [151657, 87]


def test_a_cache_entry_without_fingerprint_is_completed(qwen, tmp_path, monkeypatch):
    from toolc import cache as vcache
    monkeypatch.setenv("TOOLC_CACHE_DIR", str(tmp_path))
    load_builtin("qwen3")
    (entry,) = tmp_path.iterdir()
    key = entry.name.split("-", 2)[2].removesuffix(".msgpack")
    old = vcache.read(key)
    del old["fingerprint"]
    vcache.write(key, old)
    _same_vocabulary(load_builtin("qwen3"), qwen)
    assert vcache.read(key)["fingerprint"] == qwen.fingerprint


def test_a_damaged_cache_entry_is_a_miss(qwen, tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLC_CACHE_DIR", str(tmp_path))
    load_builtin("qwen3")
    (entry,) = tmp_path.iterdir()
    data = bytearray(entry.read_bytes())
    data[len(data) // 2] ^= 0xFF
    entry.write_bytes(bytes(data))
    _same_vocabulary(load_builtin("qwen3"), qwen)
    entry.write_bytes(b"")
    _same_vocabulary(load_builtin("qwen3"), qwen)


def test_cache_off(qwen, tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLC_CACHE_DIR", "off")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path))
    _same_vocabulary(load_builtin("qwen3"), qwen)
    assert list(tmp_path.iterdir()) == []
