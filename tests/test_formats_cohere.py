"""Cohere Command A's CMD4 format (toolc/formats/cohere.py), proved against Cohere's own code:
cohere_melody (MIT, from PyPI) renders the chatbot turn with ``render_cmd4`` and reads
generated text back with its parser ``PyFilter.cmd4``. Over Qwen3's vocabulary with the turn's
markers added as special tokens (no registry ships Cohere's tokenizer).

* what render_cmd4 writes for the calls is accepted exactly (and one-byte mutations are not);
* random walks through the artifact parse the same in melody's parser as in toolc.parse,
  and validate;
* closure: no string argument or text spells a marker in ordinary tokens (melody's parser
  cuts a call at an ``<|END_ACTION|>`` inside a string).
"""

from __future__ import annotations

import json

import jsonschema
import pytest

import toolc
from toolc.parse import parse_tool_calls

from helpers import accepts_all, load_tools, params_by_name
from tag_helpers import QWEN, encode_for, sampled_texts, vocab_for

melody = pytest.importorskip("cohere_melody", reason="cohere-melody is not installed")

CALLS = [("get_forecast", {"city": "Zürich <b>", "days": 3, "unit": "celsius"}),
         ("get_current_weather", {"city": "東京 \"quoted\"\nline"})]
_ARTS: dict = {}


def artifact(**opts):
    opts.setdefault("max_calls", 3)
    key = tuple(sorted(opts.items()))
    if key not in _ARTS:
        _ARTS[key] = toolc.compile_tools("schemas/weather.json", vocab_for("cohere"),
                                         format="cohere", **opts)
    return _ARTS[key]


def rendered(calls, thinking: str | None = None) -> str:
    """The chatbot turn as render_cmd4 writes it, from its <|START_THINKING|> (or its calls)
    to the end of the turn, the end-of-turn token replaced by Qwen3's EOS."""
    turn = {"role": "chatbot", "tool_calls": [
        {"id": str(i), "name": n, "parameters": json.dumps(a, ensure_ascii=False)}
        for i, (n, a) in enumerate(calls)]}
    if thinking is not None:
        turn["content"] = [{"type": "thinking", "thinking": thinking}]
    text = melody.render_cmd4({"messages": [
        {"role": "user", "content": [{"type": "text", "text": "weather?"}]}, turn]})
    start = text.rindex("<|CHATBOT_TOKEN|>", 0, text.rindex("<|START_ACTION|>"))
    body = text[start + len("<|CHATBOT_TOKEN|>"):]
    body = body[:body.index("<|END_OF_TURN_TOKEN|>")]
    if thinking is None:
        body = body.removeprefix("<|START_THINKING|><|END_THINKING|>")
    return body


def melody_calls(text: str):
    r = melody.PyFilter.cmd4().process_full_text(text)
    return r, [(t.name, json.loads(t.arguments or "{}")) for t in r.tool_calls]


@pytest.mark.parametrize("calls", [CALLS[:1], CALLS, CALLS + CALLS[:1]])
@pytest.mark.parametrize("thinking", [None, "Need the forecast."])
def test_what_render_cmd4_writes_is_accepted(calls, thinking):
    body = rendered(calls, thinking)
    art = artifact(reasoning=thinking is not None)
    assert accepts_all(art, encode_for("cohere", body + "<|im_end|>")) == (True, -1), body
    parsed = parse_tool_calls(body, format="cohere", tools=load_tools("weather"))
    assert [(c["name"], c["arguments"]) for c in parsed["parsed"]] == calls
    assert parsed["reasoning"] == thinking
    assert melody_calls(body)[1] == calls


def test_one_byte_mutations_of_the_framing_are_rejected():
    body = rendered(CALLS)
    for tag in ('"tool_call_id": "1"', '"tool_name": ', '"parameters": ', "},\n    {",
                "\n]<|END_ACTION|>", "[\n    {"):
        for mutated in (body.replace(tag, tag[:-1], 1), body.replace(tag, " " + tag, 1)):
            assert mutated != body
            assert not accepts_all(artifact(), encode_for("cohere", mutated + "<|im_end|>"))[0]


def test_a_response_in_words():
    text = "<|START_RESPONSE|>It is sunny.<|END_RESPONSE|>"
    assert accepts_all(artifact(), encode_for("cohere", text + "<|im_end|>")) == (True, -1)
    assert parse_tool_calls(text, format="cohere")["content"] == "It is sunny."
    r, calls = melody_calls(text)
    assert r.content == "It is sunny." and calls == []
    assert not accepts_all(artifact(tool_choice="required"),
                           encode_for("cohere", text + "<|im_end|>"))[0]


@pytest.mark.parametrize("mode", ["auto", "required", "none"])
def test_random_walks_parse_the_same_in_melody(mode):
    art = artifact(tool_choice=mode, reasoning=True)
    tools = load_tools("weather")
    schemas = params_by_name(tools)
    for text in sampled_texts(art, vocab_for("cohere"), f"cohere-{mode}", 10):
        ours = parse_tool_calls(text, format="cohere", tools=tools)
        theirs, calls = melody_calls(text)
        assert [(c["name"], c["arguments"]) for c in ours["parsed"]] == calls, text
        # melody strips the reasoning's spaces, toolc its newlines only
        assert (ours["reasoning"] or "").strip() == (theirs.reasoning or "").strip(), text
        for call in ours["parsed"]:
            jsonschema.validate(call["arguments"], schemas[call["name"]])
        assert bool(calls) == (mode == "required") or mode == "auto"


def _ordinary(text: str) -> list[int]:
    return [t for ch in text for t in QWEN.encode(ch)]


@pytest.mark.parametrize("marker", ["<|END_ACTION|>", "<|START_ACTION|>", "<|END_RESPONSE|>",
                                    "<|END_THINKING|>"])
def test_no_string_or_text_spells_a_marker(marker):
    art = artifact(reasoning=True)
    body = rendered([("get_current_weather", {"city": "a"})])
    head = body[:body.index('"a"') + 2]
    for prefix in (head, "<|START_RESPONSE|>x", "<|START_THINKING|>x"):
        ids = encode_for("cohere", prefix)
        assert accepts_all(art, ids + _ordinary(marker[:-1]))[1] == -1
        assert accepts_all(art, ids + _ordinary(marker))[1] >= 0, (prefix, marker)
