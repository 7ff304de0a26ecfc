"""The tekken reader and the built-in `mistral` alias, checked against mistral-common."""

from __future__ import annotations

import json

import pytest

from toolc.errors import TokenizerError
from toolc.tokenizer import load_vocabulary, tokenizer_kind, vocabulary_from_tekken

from format_helpers import tekkenizer


@pytest.fixture(scope="module")
def mistral():
    return load_vocabulary("mistral")


def test_alias_sizes_and_special_tokens(mistral):
    assert mistral.vocab_size == mistral.logits_size == 131072
    assert mistral.added["[TOOL_CALLS]"] == 9 and mistral.eos_ids == (2,)
    assert len(mistral.added) == 1000 and mistral.special_ids == frozenset(range(1000))
    assert mistral.token_bytes[999] == b"<SPECIAL_999>"
    assert tokenizer_kind(mistral) == "tekken"


def test_alias_through_a_cold_and_a_warm_cache(mistral, tmp_path, monkeypatch):
    from toolc.runtime.fingerprint import fingerprint
    from toolc.tokenizer import load_builtin_tekken
    monkeypatch.setenv("TOOLC_CACHE_DIR", str(tmp_path))
    cold = load_builtin_tekken("mistral")
    assert len(list(tmp_path.iterdir())) == 1
    warm = load_builtin_tekken("mistral")
    for v in (cold, warm):
        assert v.token_bytes == mistral.token_bytes and v.added == mistral.added
        assert v.special_ids == mistral.special_ids and v.eos_ids == mistral.eos_ids
        assert v.fingerprint == fingerprint(v.token_bytes, v.added, v.eos_ids)
        assert tokenizer_kind(v) == "tekken"


def test_bytes_agree_with_mistral_common(mistral):
    tok = tekkenizer().instruct_tokenizer.tokenizer
    for text in ["Hello, world!", "Zürich 東京 🌧️", '{"city": "Paris"}', "\t\n  x"]:
        ids = tok.encode(text, bos=False, eos=False)
        assert mistral.decode_bytes(ids) == text.encode("utf-8")
    for i in range(1000, 131072, 997):       # a sample of ranks, byte for byte
        assert mistral.token_bytes[i] == tok._model.decode_single_token_bytes(i - 1000)
    assert tok.get_special_token("[TOOL_CALLS]") == 9


def test_tekken_file_by_path(tmp_path, mistral):
    spec = {"config": {"pattern": ".", "num_vocab_tokens": 3, "default_vocab_size": 5,
                       "default_num_special_tokens": 2, "version": "v7"},
            "vocab": [{"rank": 0, "token_bytes": "YQ=="}, {"rank": 1, "token_bytes": "Yg=="},
                      {"rank": 2, "token_bytes": "Yw=="}],
            "special_tokens": [{"rank": 0, "token_str": "<unk>", "is_control": True},
                               {"rank": 1, "token_str": "</s>", "is_control": True}]}
    path = tmp_path / "tekken_tiny.json"
    path.write_text(json.dumps(spec))
    v = load_vocabulary(str(path))
    assert v.token_bytes == (b"<unk>", b"</s>", b"a", b"b", b"c")
    assert v.eos_ids == (1,) and v.added == {"<unk>": 0, "</s>": 1}


def test_bad_tekken_files_are_refused():
    with pytest.raises(TokenizerError, match="not a tekken tokenizer file"):
        vocabulary_from_tekken('{"config": {}}', name="x")
    spec = {"config": {"default_vocab_size": 30, "default_num_special_tokens": 20},
            "vocab": [{"rank": 0, "token_bytes": "YQ=="}]}
    with pytest.raises(TokenizerError, match="needs 10 ranks, the file has 1"):
        vocabulary_from_tekken(json.dumps(spec), name="x")
    spec["config"]["default_num_special_tokens"] = 2
    with pytest.raises(TokenizerError, match="more special tokens than"):
        vocabulary_from_tekken(json.dumps(spec), name="x")
