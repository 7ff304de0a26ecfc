"""Closed under parsing: what an artifact accepts, toolc.parse reads back the way the grammar
did, and what a format cannot write is refused at compile time with the tool and the reason."""

from __future__ import annotations

import json

import pytest

import toolc
from toolc.errors import FormatSpecError, UnsupportedSchemaError
from toolc.formats import get_format
from toolc.formats.rules import WHITESPACE
from toolc.parse import parse_tool_calls
from toolc.tokenizer import load_vocabulary

from helpers import accepts_all
from test_formats_e2e import artifact

QWEN = load_vocabulary("qwen")


def ordinary(text: str) -> list[int]:
    """``text`` one character at a time: ordinary tokens only, never an added one."""
    return [t for ch in text for t in QWEN.encode(ch)]


def _prefix_ok(art, ids) -> bool:
    return accepts_all(art, ids)[1] == -1


def test_whitespace_is_what_lstrip_removes():
    assert WHITESPACE == tuple(chr(c) for c in range(0x110000) if chr(c).isspace())


@pytest.mark.parametrize("fmt", ["hermes", "qwen3-coder", "mistral", "tooldec"])
@pytest.mark.parametrize("reasoning", [False, True])
@pytest.mark.parametrize("head", ["<think>", "[THINK]", "\n \u3000<think>"])
def test_free_text_never_opens_a_reasoning_section_in_ordinary_tokens(fmt, reasoning, head):
    tag = head.strip()
    if reasoning and tag == get_format(fmt).think[0] and tag not in QWEN.added:
        pytest.skip("the format's own opener, plain text in this vocabulary: a real section")
    art = artifact(fmt, reasoning=reasoning)
    assert _prefix_ok(art, ordinary(head[:-1]))
    assert not _prefix_ok(art, ordinary(head))
    # later in the text it is ordinary content, and parses as such
    text = "See " + head + " here"
    assert accepts_all(art, ordinary(text) + [QWEN.added["<|im_end|>"]]) == (True, -1)
    assert parse_tool_calls(text, format=fmt)["content"] == text.strip()


def test_an_ordinary_close_tag_never_ends_the_reasoning_section():
    art = artifact("hermes", reasoning=True)
    open_, close = QWEN.added["<think>"], QWEN.added["</think>"]
    assert _prefix_ok(art, [open_] + ordinary("a</think") + [close])
    assert not _prefix_ok(art, [open_] + ordinary("a</think>"))
    text = "<think>\nwhy\n</think>\n\nHello"
    assert accepts_all(art, QWEN.encode(text) + [QWEN.added["<|im_end|>"]]) == (True, -1)
    assert parse_tool_calls(text)["reasoning"] == "why"


def _tools(tmp_path, name, props, required=()):
    path = tmp_path / "t.json"
    path.write_text(json.dumps([{"type": "function", "function": {"name": name, "parameters": {
        "type": "object", "properties": props, "required": list(required)}}}]))
    return path


@pytest.mark.parametrize("fmt,name,key,pointer,why", [
    ("pythonic", "f", "from", "/0/function/parameters/properties/from", "is a Python keyword"),
    ("pythonic", "f", "my-key", "/0/function/parameters/properties/my-key", "not a Python"),
    ("pythonic", "get weather", "k", "/0/function/name", "not a Python identifier"),
    ("pythonic", "ﬁle", "k", "/0/function/name", "NFKC"),
    ("tooldec", "a)b", "k", "/0/function/name", "not a Python identifier"),
    ("hermes", "a</tool_call>", "k", "/0/function/name", "spells a <tool_call> tag"),
])
def test_names_a_format_cannot_write_are_refused(tmp_path, fmt, name, key, pointer, why):
    path = _tools(tmp_path, name, {key: {"type": "string"}})
    with pytest.raises(UnsupportedSchemaError, match=why) as e:
        toolc.compile_tools(path, "qwen", format=fmt)
    assert e.value.tool == name and e.value.pointer == pointer


def test_tooldec_writes_keys_it_never_names(tmp_path):
    path = _tools(tmp_path, "f", {"my-key": {"type": "integer"}}, ["my-key"])
    art = toolc.compile_tools(path, "qwen", format="tooldec", tool_choice="required")
    assert accepts_all(art, QWEN.encode("<tool>f(3)<|im_end|>")) == (True, -1)


@pytest.mark.parametrize("fmt,good,bad", [
    ("pythonic", "[f(place={'city': 'Paris'}, note='x')]", "[f(place={'town': 'Paris'})]"),
    ("tooldec", "<tool>f({'city': 'Paris'})", "<tool>f({'town': 'Paris'})"),
])
def test_ref_into_the_roots_defs(tmp_path, fmt, good, bad):
    params = {"type": "object", "$defs": {"Place": {
        "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
        "additionalProperties": False}},
        "properties": {"place": {"$ref": "#/$defs/Place"}, "note": {"type": "string"}},
        "required": ["place"]}
    path = tmp_path / "t.json"
    path.write_text(json.dumps([{"type": "function", "function": {"name": "f",
                                                                  "parameters": params}}]))
    art = toolc.compile_tools(path, "qwen", format=fmt, tool_choice="required")
    assert accepts_all(art, QWEN.encode(good + "<|im_end|>")) == (True, -1)
    assert not accepts_all(art, QWEN.encode(bad + "<|im_end|>"))[0]
    tools = json.loads(path.read_text())
    assert parse_tool_calls(good, format=fmt, tools=tools)["parsed"][0]["arguments"]["place"] \
        == {"city": "Paris"}


def test_custom_format_needs_text_after_the_name():
    with pytest.raises(FormatSpecError, match="cannot find where the name ends"):
        toolc.formats.Custom({"trigger": "<c>", "prefix": "<c>", "call": "{name}{arguments}"})
    with pytest.raises(FormatSpecError, match="cannot find where the name ends"):
        parse_tool_calls("x", format={"trigger": "<c>", "call": "<c>{name}{arguments}"})


def test_custom_format_refuses_a_name_holding_its_end(tmp_path):
    path = _tools(tmp_path, "a: b", {"k": {"type": "string"}})
    fmt = toolc.formats.Custom({"trigger": "<c>", "prefix": "<c>", "call": "{name}: {arguments}"})
    with pytest.raises(UnsupportedSchemaError, match="holds ': '") as e:
        toolc.compile_tools(path, "qwen", format=fmt)
    assert e.value.pointer == "/0/function/name"


INDEXED = {"name": "numbered", "trigger": "<calls>", "prefix": "<calls>",
           "call": "<call id={index}>{name}: {arguments}</call>", "suffix": "</calls>"}


def test_custom_index_counts_the_calls():
    fmt = toolc.formats.Custom(INDEXED)
    art = toolc.compile_tools("schemas/weather.json", "qwen", format=fmt, max_calls=3)
    text = ('<calls><call id=0>get_forecast: {"city": "Oslo", "days": 2}</call>'
            '<call id=1>get_current_weather: {"city": "Rome"}</call></calls>')
    assert accepts_all(art, QWEN.encode(text + "<|im_end|>")) == (True, -1)
    assert [c["name"] for c in parse_tool_calls(text, format=INDEXED)["parsed"]] == \
        ["get_forecast", "get_current_weather"]
    wrong = text.replace("id=1", "id=0")
    assert not accepts_all(art, QWEN.encode(wrong + "<|im_end|>"))[0]
    with pytest.raises(toolc.ParseError):
        parse_tool_calls(wrong, format=INDEXED)
    with pytest.raises(toolc.errors.InvalidOptionError, match="max_calls"):
        toolc.compile_tools("schemas/weather.json", "qwen", format=fmt)
