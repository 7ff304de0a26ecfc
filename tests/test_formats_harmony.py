"""Harmony (gpt-oss), over Qwen3's vocabulary with harmony's seven markers added as special
tokens (tests/tag_helpers.py). The framing is checked against the facts sheet's bytes (quoted
from harmony's docs and from openai-harmony 0.0.8's renderer); the renderer itself is run
when openai-harmony and the o200k_harmony vocabulary are both available offline."""

from __future__ import annotations

import json
import random

import jsonschema
import pytest

import toolc
from toolc.parse import parse_tool_calls

from helpers import accepts_all, distance_to_end, load_tools, params_by_name, random_walk
from tag_helpers import encode_for, vocab_for

VOCAB = vocab_for("harmony")
ANALYSIS = "<|channel|>analysis<|message|>Need to use function get_forecast.<|end|>" \
           "<|start|>assistant"
ARGS = '{"city": "Paris", "days": 2}'
DOC = f"<|channel|>commentary to=functions.get_forecast <|constrain|>json<|message|>{ARGS}" \
      "<|call|>"
PREAMBLE = DOC.replace(" <|constrain|>", "<|constrain|>")
RENDERER = f" to=functions.get_forecast<|channel|>commentary <|constrain|>json<|message|>{ARGS}" \
           "<|call|>"
FINAL = "<|channel|>final<|message|>It is sunny in Paris.<|return|>"
_ARTS: dict = {}


def artifact(**opts):
    key = tuple(sorted(opts.items()))
    if key not in _ARTS:
        _ARTS[key] = toolc.compile_tools("schemas/weather.json", VOCAB, format="harmony", **opts)
    return _ARTS[key]


@pytest.mark.parametrize("call", [DOC, PREAMBLE, RENDERER])
@pytest.mark.parametrize("analysis", ["", ANALYSIS])
def test_the_calls_as_harmony_writes_them(call, analysis):
    text = analysis + call
    for mode in ("auto", "required", "get_forecast"):
        assert accepts_all(artifact(tool_choice=mode), encode_for("harmony", text)) == \
            (True, -1), (mode, text)
    assert not accepts_all(artifact(tool_choice="none"), encode_for("harmony", text))[0]
    parsed = parse_tool_calls(text, format="harmony")
    assert parsed["parsed"] == [{"name": "get_forecast", "arguments": {"city": "Paris",
                                                                       "days": 2}}]
    assert parsed["reasoning"] == ("Need to use function get_forecast." if analysis else None)
    assert parsed["content"] is None


@pytest.mark.parametrize("analysis", ["", ANALYSIS])
def test_the_final_answer(analysis):
    text = analysis + FINAL
    assert accepts_all(artifact(), encode_for("harmony", text)) == (True, -1)
    assert accepts_all(artifact(tool_choice="none"), encode_for("harmony", text)) == (True, -1)
    assert not accepts_all(artifact(tool_choice="required"), encode_for("harmony", text))[0]
    parsed = parse_tool_calls(text, format="harmony")
    assert parsed["content"] == "It is sunny in Paris." and parsed["tool_calls"] == []


@pytest.mark.parametrize("mutated", [
    DOC.replace("<|call|>", "<|return|>"), FINAL.replace("<|return|>", "<|call|>"),
    DOC.replace(" to=", "  to="), DOC.replace("commentary", "commentar"),
    DOC.replace("functions.", "function."), RENDERER.replace("commentary <", "commentary  <"),
    DOC + DOC, DOC.replace("json<", "jsn<"),
])
def test_one_byte_off_is_rejected(mutated):
    assert not accepts_all(artifact(), encode_for("harmony", mutated))[0], mutated


def test_no_marker_is_spelled_in_ordinary_tokens():
    art = artifact()
    head = encode_for("harmony", "<|channel|>analysis<|message|>")
    spelled = [t for ch in "so <|end|>" for t in VOCAB.encode(ch)]
    m = art.matcher()
    for t in head:
        m.advance(t)
    ok = True
    for t in spelled:
        if not m.accepts(t):
            ok = False
            break
        m.advance(t)
    assert not ok


@pytest.mark.parametrize("mode", ["auto", "required"])
def test_random_walks_parse_and_validate(mode):
    art = artifact(tool_choice=mode)
    schemas = params_by_name(load_tools("weather"))
    dist = distance_to_end(art)
    rng = random.Random(mode)
    for _ in range(12):
        ids = random_walk(art, rng, dist, budget=rng.choice([10, 40, 80]))
        text = VOCAB.decode_bytes(ids).decode("utf-8", errors="replace")
        parsed = parse_tool_calls(text, format="harmony")
        for c in parsed["parsed"]:
            jsonschema.validate(c["arguments"], schemas[c["name"]])
        assert len(parsed["parsed"]) == (1 if ids[-1] == VOCAB.added["<|call|>"] else 0)
        assert parsed["parsed"] or mode == "auto"


def test_a_name_with_a_space_is_refused(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps([{"type": "function", "function": {"name": "get weather"}}]))
    with pytest.raises(toolc.errors.UnsupportedSchemaError, match="a space ends the recipient"):
        toolc.compile_tools(path, VOCAB, format="harmony")


def test_the_tokenizer_must_have_the_markers():
    with pytest.raises(toolc.errors.TokenizerError, match="<|start|>"):
        toolc.compile_tools("schemas/weather.json", "qwen", format="harmony")


@pytest.mark.parametrize("analysis", [False, True])
def test_openai_harmony_renderer(tmp_path, monkeypatch, analysis):
    """The family's own renderer (openai-harmony), pointed at the shipped o200k file (it would
    download it otherwise), tokenized with the gpt-oss alias: the artifact accepts exactly what
    it renders after '<|start|>assistant', and rejects one-byte mutations of the header."""
    import gzip
    from importlib import resources
    harmony = pytest.importorskip("openai_harmony", reason="openai-harmony is not installed")
    try:
        vocab = toolc.tokenizer.load_vocabulary("gpt-oss")
        packed = resources.files("toolc.data").joinpath("gpt_oss/o200k_base.tiktoken.gz")
        (tmp_path / "o200k_base.tiktoken").write_bytes(gzip.decompress(packed.read_bytes()))
    except Exception as e:     # pragma: no cover - a build without the gpt-oss alias
        pytest.skip(f"no o200k_harmony vocabulary here ({e})")
    monkeypatch.setenv("TIKTOKEN_ENCODINGS_BASE", str(tmp_path))
    enc = harmony.load_harmony_encoding(harmony.HarmonyEncodingName.HARMONY_GPT_OSS)
    msgs = [harmony.Message.from_role_and_content(harmony.Role.ASSISTANT, "Need the weather.")
            .with_channel("analysis")] if analysis else []
    msgs.append(harmony.Message.from_role_and_content(harmony.Role.ASSISTANT, ARGS)
                .with_channel("commentary").with_recipient("functions.get_forecast")
                .with_content_type("<|constrain|>json"))
    ids = list(enc.render_conversation(harmony.Conversation.from_messages(msgs)))
    head = vocab.encode("<|start|>assistant")
    assert ids[:len(head)] == head
    body = ids[len(head):]
    text = vocab.decode_bytes(body).decode("utf-8")
    art = toolc.compile_tools("schemas/weather.json", vocab, format="harmony")
    assert accepts_all(art, body) == (True, -1), text
    parsed = parse_tool_calls(text, format="harmony")
    assert parsed["parsed"] == [{"name": "get_forecast", "arguments": json.loads(ARGS)}]
    for mutated in (text.replace(" <|constrain|>", "  <|constrain|>"),
                    text.replace("to=functions.", "to=function.")):
        assert not accepts_all(art, vocab.encode(mutated))[0], mutated
