"""MiniMax-M3 (toolc/formats/tagstyle.py, the tag-per-parameter engine) over Qwen3's vocabulary:
whether ``]<]minimax[>[`` is one token of MiniMax's tokenizer is not known (no registry ships
it), so it is plain text here, as the facts sheet leaves it.

Proved against the facts sheet's bytes (§2, from vLLM's MiniMax-M3 parser docstring), rendered
here independently of toolc.formats: the example itself, the shape for several calls, one-byte
framing mutations, random walks that parse and validate, closure (no free text, reasoning or
raw value spells the namespace), and the refusals (object and array properties, which M3
nests as elements; keys an element name cannot hold). tests/test_vendor_parsers.py reads
the sampled outputs with vLLM's and SGLang's own MiniMax-M3 parsers.
"""

from __future__ import annotations

import json

import jsonschema
import pytest

import toolc
from toolc.errors import UnsupportedSchemaError
from toolc.parse import parse_tool_calls

from helpers import accepts_all, load_tools, params_by_name
from tag_helpers import QWEN, sampled_texts

NS = "]<]minimax[>["
# the facts sheet's example, verbatim
SHEET = (f'{NS}<tool_call>\n{NS}<invoke name="N">{NS}<K>V{NS}</K>{NS}</invoke>\n'
         f'{NS}</tool_call>')


def render(calls, content="", reasoning=None) -> str:
    """The answer as the sheet writes it: strings raw, other values JSON, then <|im_end|>."""
    out = "" if reasoning is None else f"<mm:think>{reasoning}</mm:think>"
    out += content
    if calls:
        out += f"{NS}<tool_call>\n"
        for name, args in calls:
            out += f'{NS}<invoke name="{name}">'
            for k, v in args.items():
                value = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
                out += f"{NS}<{k}>{value}{NS}</{k}>"
            out += f"{NS}</invoke>\n"
        out += f"{NS}</tool_call>"
    return out + "<|im_end|>"


_ARTS: dict = {}


def artifact(tools="schemas/weather.json", **opts):
    key = (str(tools), tuple(sorted(opts.items())))
    if key not in _ARTS:
        _ARTS[key] = toolc.compile_tools(tools, QWEN, format="minimax-m3", **opts)
    return _ARTS[key]


def _one_tool(tmp_path, props, name="N"):
    path = tmp_path / "t.json"
    path.write_text(json.dumps([{"type": "function", "function": {"name": name, "parameters": {
        "type": "object", "properties": props, "required": list(props)}}}]))
    return path


def test_the_sheets_example_is_accepted_and_parses(tmp_path):
    art = artifact(_one_tool(tmp_path, {"K": {"type": "string"}}), tool_choice="required")
    assert accepts_all(art, QWEN.encode(SHEET + "<|im_end|>")) == (True, -1)
    parsed = parse_tool_calls(SHEET, format="minimax-m3")
    assert parsed["parsed"] == [{"name": "N", "arguments": {"K": "V"}}]


CALLS = [("get_forecast", {"city": "Zürich <b>", "days": 3, "unit": "celsius"}),
         ("get_current_weather", {"city": "東京 \"quoted\"\nline </city>"})]


@pytest.mark.parametrize("calls,content,reasoning", [
    (CALLS[:1], "", None), (CALLS, "Let me check.", None), ([], "It is sunny.", None),
    (CALLS, "", "r <b> 1")])
def test_the_sheets_shape_is_accepted_and_parses_back(calls, content, reasoning):
    tools = load_tools("weather")
    text = render(calls, content, reasoning)
    art = artifact(reasoning=reasoning is not None)
    assert accepts_all(art, QWEN.encode(text)) == (True, -1), text
    parsed = parse_tool_calls(text, format="minimax-m3", tools=tools)
    assert [(c["name"], c["arguments"]) for c in parsed["parsed"]] == calls
    assert parsed["content"] == (content or None)
    assert parsed["reasoning"] == reasoning


def test_one_byte_mutations_of_the_framing_are_rejected():
    text = render(CALLS, "x")
    for tag in ("<tool_call>\n", '<invoke name="', '">', "<days>", "</days>", "</invoke>\n",
                "</tool_call>", NS):
        for mutated in (text.replace(tag, tag[:-1], 1), text.replace(tag, tag[1:], 1)):
            assert mutated != text
            assert not accepts_all(artifact(), QWEN.encode(mutated))[0], mutated


@pytest.mark.parametrize("mode", ["auto", "required"])
def test_random_walks_parse_and_validate(mode):
    art = artifact(tool_choice=mode, reasoning=True)
    tools = load_tools("weather")
    schemas = params_by_name(tools)
    calls = 0
    for text in sampled_texts(art, QWEN, f"m3-{mode}", 12):
        parsed = parse_tool_calls(text, format="minimax-m3", tools=tools)
        for call in parsed["parsed"]:
            jsonschema.validate(call["arguments"], schemas[call["name"]])
        calls += len(parsed["parsed"])
        assert parsed["parsed"] if mode == "required" else True
    assert calls > 0 or mode == "auto"


def _ordinary(text: str) -> list[int]:
    return [t for ch in text for t in QWEN.encode(ch)]


def test_no_text_spells_the_namespace():
    """In a raw value and in free text, the namespace can only begin a tag: what
    follows it must be one (every tag starts with it, so a parser would cut there), while
    text that stops one character short of it goes on."""
    art = artifact()
    call = render([("get_current_weather", {"city": "a"})])
    value_at = call.index("<city>a") + len("<city>a")
    for head in (QWEN.encode(call[:value_at]), QWEN.encode("Sure"), []):
        assert accepts_all(art, head + _ordinary(NS[:-1] + "x"))[1] == -1
        assert accepts_all(art, head + _ordinary(NS + "x"))[1] != -1, head


@pytest.mark.parametrize("prop", [{"type": "object", "properties": {}},
                                  {"type": "array", "items": {"type": "string"}},
                                  {"type": ["string", "array"]}, {}])
def test_an_object_or_array_property_is_refused(tmp_path, prop):
    with pytest.raises(UnsupportedSchemaError, match="nested elements") as e:
        toolc.compile_tools(_one_tool(tmp_path, {"k": prop}), QWEN, format="minimax-m3")
    assert e.value.pointer == "/0/function/parameters/properties/k"


@pytest.mark.parametrize("key", ["a/b", "a b", "/x"])
def test_a_key_no_element_name_can_hold_is_refused(tmp_path, key):
    with pytest.raises(UnsupportedSchemaError, match="element name"):
        toolc.compile_tools(_one_tool(tmp_path, {key: {"type": "string"}}), QWEN,
                            format="minimax-m3")
