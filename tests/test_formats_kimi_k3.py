"""Kimi K3's XTML (toolc/formats/kimi_k3.py) over Qwen3's vocabulary with its three atomic
markers added as special tokens (no registry ships Kimi's tokenizer or template).

Proved against the facts sheet's bytes only (its §2 example, from xgrammar's kimi_k3
docstring), rendered here independently of toolc.formats: the example itself, the sheet's
shape rendered for several calls, one-byte framing mutations, random walks that parse and
validate, and closure (no text or raw value spells a marker in ordinary tokens).
"""

from __future__ import annotations

import json

import jsonschema
import pytest

import toolc
from toolc.errors import InvalidOptionError, ParseError, TokenizerError, UnsupportedSchemaError
from toolc.parse import parse_tool_calls

from helpers import accepts_all, load_tools, params_by_name
from tag_helpers import QWEN, encode_for, sampled_texts, vocab_for

MARKERS = ("<|open|>", "<|close|>", "<|sep|>")

# the facts sheet's example, verbatim after the reasoning the prompt opened
SHEET = ('R<|close|>think<|sep|><|open|>response<|sep|>TEXT<|close|>response<|sep|><|open|>tools'
         '<|sep|><|open|>call tool="N" index="1"<|sep|><|open|>argument key="K" type="string"'
         '<|sep|>V<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|><|close|>'
         'message<|sep|>')


def _vocab():
    return vocab_for("kimi-k3")


def _encode(text: str) -> list[int]:
    _vocab()
    return encode_for("kimi-k3", text)


def render(calls, content=None, schemas=None, reasoning=None) -> str:
    """The message as the sheet writes it, then <|im_end|>: the response block first (empty
    when there is no text), each value typed as K3's encoder types it (the vendors' XTML
    structural tags, tests/test_vendor_parsers.py): a string raw, the rest JSON, an integer
    a ``number``."""
    def value(n, k, v):
        if isinstance(v, str):
            return "string", v
        kind = ("null" if v is None else "boolean" if isinstance(v, bool) else
                "number" if isinstance(v, (int, float)) else
                "array" if isinstance(v, list) else "object")
        return kind, json.dumps(v, ensure_ascii=False)

    if calls and content is None:
        content = ""
    out = "" if reasoning is None else f"{reasoning}<|close|>think<|sep|>"
    if content is not None:
        out += f"<|open|>response<|sep|>{content}<|close|>response<|sep|>"
    if calls:
        out += "<|open|>tools<|sep|>"
        for i, (n, a) in enumerate(calls):
            out += f'<|open|>call tool="{n}" index="{i + 1}"<|sep|>'
            for k, v in a.items():
                t, s = value(n, k, v)
                out += f'<|open|>argument key="{k}" type="{t}"<|sep|>{s}<|close|>argument<|sep|>'
            out += "<|close|>call<|sep|>"
        out += "<|close|>tools<|sep|>"
    return out + "<|close|>message<|sep|><|im_end|>"


_ARTS: dict = {}


def artifact(tools="schemas/weather.json", **opts):
    opts.setdefault("max_calls", 3)
    key = (str(tools), tuple(sorted(opts.items())))
    if key not in _ARTS:
        _ARTS[key] = toolc.compile_tools(tools, _vocab(), format="kimi-k3", **opts)
    return _ARTS[key]


def _sheet_tools(tmp_path):
    path = tmp_path / "n.json"
    path.write_text(json.dumps([{"type": "function", "function": {"name": "N", "parameters": {
        "type": "object", "properties": {"K": {"type": "string"}}, "required": ["K"]}}}]))
    return path


def test_the_sheets_example_is_accepted_and_parses(tmp_path):
    art = artifact(_sheet_tools(tmp_path), reasoning="open")
    ids = _encode(SHEET + "<|im_end|>")
    assert all(_vocab().added[m] in ids for m in MARKERS)
    assert accepts_all(art, ids) == (True, -1)
    parsed = parse_tool_calls(SHEET, format="kimi-k3", reasoning="open")
    assert parsed["reasoning"] == "R" and parsed["content"] == "TEXT"
    assert parsed["parsed"] == [{"name": "N", "arguments": {"K": "V"}}]


CALLS = [("get_forecast", {"city": "Zürich <b>", "days": 3, "unit": "celsius"}),
         ("get_current_weather", {"city": "東京 \"quoted\"\nline"})]


@pytest.mark.parametrize("calls,content", [(CALLS[:1], None), (CALLS, "Let me check."),
                                           ([], "It is sunny."), (CALLS, "")])
def test_the_sheets_shape_is_accepted_and_parses_back(calls, content):
    tools = load_tools("weather")
    text = render(calls, content, params_by_name(tools))
    assert accepts_all(artifact(), _encode(text)) == (True, -1), text
    parsed = parse_tool_calls(text, format="kimi-k3", tools=tools)
    assert [(c["name"], c["arguments"]) for c in parsed["parsed"]] == calls
    assert parsed["content"] == (content or None)


def test_one_byte_mutations_of_the_framing_are_rejected():
    tools = load_tools("weather")
    text = render(CALLS, "x", params_by_name(tools))
    for tag in ('" index="1"', 'key="city"', 'type="number"', "argument<|sep|>", "call<|sep|>",
                "message<|sep|>"):
        for mutated in (text.replace(tag, tag[:-1], 1), text.replace(tag, " " + tag, 1)):
            assert mutated != text
            assert not accepts_all(artifact(), _encode(mutated))[0], mutated
    wrong = text.replace('index="2"', 'index="1"')
    assert not accepts_all(artifact(), _encode(wrong))[0]
    with pytest.raises(ParseError):
        parse_tool_calls(wrong[:-len("<|im_end|>")], format="kimi-k3", tools=tools)


@pytest.mark.parametrize("mode", ["auto", "required", "none"])
def test_random_walks_parse_and_validate(mode):
    art = artifact(tool_choice=mode)
    tools = load_tools("weather")
    schemas = params_by_name(tools)
    calls = 0
    for text in sampled_texts(art, _vocab(), f"k3-{mode}", 10):
        parsed = parse_tool_calls(text, format="kimi-k3", tools=tools)
        for call in parsed["parsed"]:
            jsonschema.validate(call["arguments"], schemas[call["name"]])
        calls += len(parsed["parsed"])
        assert parsed["parsed"] if mode == "required" else True
        assert not parsed["parsed"] if mode == "none" else True
    assert calls > 0 or mode != "required"


def _ordinary(text: str) -> list[int]:
    return [t for ch in text for t in QWEN.encode(ch)]


def _prefix_ok(art, ids) -> bool:
    return accepts_all(art, ids)[1] == -1


@pytest.mark.parametrize("marker", MARKERS)
def test_no_text_spells_a_marker(marker):
    """Steered: a raw value, the response and the reasoning go on until a marker is spelled
    in ordinary tokens, and stop there."""
    tools = load_tools("weather")
    art = artifact(reasoning="open")
    call = render([("get_current_weather", {"city": "a"})], None, params_by_name(tools), "r")
    value_at = call.index('string"<|sep|>a') + len('string"<|sep|>a')
    for head in (_encode(call[:value_at]), _encode("r<|close|>think<|sep|><|open|>response<|sep|>"),
                 []):
        assert _prefix_ok(art, head + _ordinary(marker[:-1]))
        assert not _prefix_ok(art, head + _ordinary(marker)), (head, marker)


def test_refusals(tmp_path):
    with pytest.raises(TokenizerError, match="<|open|>"):
        toolc.compile_tools("schemas/weather.json", QWEN, format="kimi-k3", max_calls=2)
    with pytest.raises(InvalidOptionError, match="max_calls"):
        toolc.compile_tools("schemas/weather.json", _vocab(), format="kimi-k3")
    path = tmp_path / "t.json"
    path.write_text(json.dumps([{"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {"n": {"not": {"type": "null"}}}}}}]))
    with pytest.raises(UnsupportedSchemaError, match="needs a 'type'") as e:
        toolc.compile_tools(path, _vocab(), format="kimi-k3", max_calls=2)
    assert e.value.pointer == "/0/function/parameters/properties/n"


def test_the_calls_come_after_a_response_block():
    """As the vendors' XTML grammars write it (vLLM's, mirroring Moonshot's encoder, SGLang's,
    xgrammar's): a response block, maybe empty, then the tools block; never the calls alone."""
    tools = load_tools("weather")
    text = render(CALLS[:1], None, params_by_name(tools))
    assert text.startswith("<|open|>response<|sep|><|close|>response<|sep|><|open|>tools")
    alone = text.replace("<|open|>response<|sep|><|close|>response<|sep|>", "")
    for mode in ("auto", "required"):
        assert accepts_all(artifact(tool_choice=mode), _encode(text)) == (True, -1)
        assert not accepts_all(artifact(tool_choice=mode), _encode(alone))[0], mode


def _one_tool(tmp_path, props):
    path = tmp_path / "t.json"
    path.write_text(json.dumps([{"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": props, "required": list(props)}}}]))
    art = toolc.compile_tools(path, _vocab(), format="kimi-k3", max_calls=2)
    return art, json.loads(path.read_text())


@pytest.mark.parametrize("schema", [{"type": ["integer", "string", "null"]},
                                    {"anyOf": [{"type": "integer"}, {"type": "string"},
                                               {"type": "null"}]}])
def test_a_value_of_several_types_names_its_own(tmp_path, schema):
    """``type`` is the value's: a property of several types takes each, an integer as
    ``number`` (K3's encoder has no ``integer``), a string raw."""
    art, tools = _one_tool(tmp_path, {"n": schema})
    for v in (3, "a b", None):
        text = render([("f", {"n": v})], None)
        assert accepts_all(art, _encode(text)) == (True, -1), text
        parsed = parse_tool_calls(text, format="kimi-k3", tools=tools)["parsed"]
        assert parsed == [{"name": "f", "arguments": {"n": v}}]
    for wrong in ('type="integer"<|sep|>3', 'type="boolean"<|sep|>3', 'type="null"<|sep|>3'):
        text = render([("f", {"n": 3})], None).replace('type="number"<|sep|>3', wrong)
        assert not accepts_all(art, _encode(text))[0], wrong


def test_a_name_or_key_with_an_ampersand_is_refused(tmp_path):
    """K3's encoder writes '&' in an attribute as '&amp;' (the vendors' parsers undo it);
    toolc does not write that escape, so it refuses the name, saying where."""
    with pytest.raises(UnsupportedSchemaError, match="escapes") as e:
        _one_tool(tmp_path, {"a&b": {"type": "string"}})
    assert e.value.pointer == "/0/function/parameters/properties/a&b"
