"""toolc.formats.closure: arguments that spell no tag, built from the string bodies alone.

The property that matters: the rewrite accepts exactly what the whole intersection
``args ∩ Avoid(tags)`` accepts (the slow, obviously right construction), for every kind of
string the schema compiler makes; and an artifact built with it refuses a tag spelled in
ordinary tokens inside a string, and accepts the same value written with ``\\u003c``.
"""

from __future__ import annotations

import json

import pytest

import toolc
from toolc.compiler import compile_arguments
from toolc.errors import UnsupportedSchemaError
from toolc.formats.closure import Closer
from toolc.formats.hermes import Hermes
from toolc.fsm import Avoid
from toolc.parse import parse_tool_calls
from toolc.schema import SchemaOptions
from toolc.schema.automata import difference, intersect, is_empty
from toolc.schema.strings import expanded_lengths
from toolc.tokenizer import load_vocabulary
from toolc.tools import parse_tools

from helpers import accepts_all

QWEN = load_vocabulary("qwen")
TAGS = (b"</tool_call>", b"<tool_call>")


def _tool(params: dict):
    return parse_tools([{"type": "function", "function": {"name": "f", "parameters": params}}])


def _args(params: dict):
    return compile_arguments(_tool(params), None, SchemaOptions())[0][0]


def _obj(**props):
    return {"type": "object", "properties": props, "required": sorted(props),
            "additionalProperties": False}


SCHEMAS = {
    "string": _obj(s={"type": "string"}),
    "nullable": _obj(s={"type": ["string", "null"]}),
    "any_of": _obj(s={"anyOf": [{"type": "string"}, {"type": "integer"}]}),
    "bounded_array": _obj(a={"type": "array", "items": {"type": "string"}, "maxItems": 3}),
    "array": _obj(a={"type": "array", "items": {"type": "string"}}),
    "enum_with_lt": _obj(op={"enum": ["<", "<=", "</", "a</b"]}),
    "pattern": _obj(p={"type": "string", "pattern": "^<.*>$"}),
    "max_length": _obj(s={"type": "string", "maxLength": 20}),
    "free_object": _obj(o={"type": "object"}),
    "pattern_keys": _obj(o={"type": "object", "patternProperties": {"^x": {"type": "string"}},
                            "additionalProperties": False}),
    "nested": _obj(o=_obj(s={"type": "string"}, n={"type": "integer"})),
}


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_the_rewrite_is_the_whole_intersection(name):
    with expanded_lengths():        # products know nothing of counters: compare expanded
        tool, args = _args(SCHEMAS[name])
        fast = Closer(TAGS).close(args, tool, "hermes")
        slow = intersect(args, Avoid(TAGS))
        assert is_empty(difference(fast, slow)) and is_empty(difference(slow, fast)), name


@pytest.mark.parametrize("name", ["string", "any_of", "free_object"])
def test_tags_holding_a_quote_take_the_whole_intersection(name):
    """DSML's '<｜DSML｜parameter name="' can be spelled across a string's closing quote
    (a value '{"s": "<｜DSML｜parameter name="}'): string bodies alone would miss it."""
    tags = ('<｜DSML｜parameter name="'.encode(), b"</x>")
    with expanded_lengths():
        tool, args = _args(SCHEMAS[name])
        fast = Closer(tags).close(args, tool, "deepseek-v3.2")
        slow = intersect(args, Avoid(tags))
        assert is_empty(difference(fast, slow)) and is_empty(difference(slow, fast)), name


def test_counted_bodies_stay_counted():
    from toolc.fsm import Counted
    tool, args = _args(SCHEMAS["max_length"])
    out = Closer(TAGS).close(args, tool, "hermes")
    found = []

    def walk(e):
        if isinstance(e, Counted):
            found.append(e)
        for x in getattr(e, "items", ()):
            walk(x)
    walk(out)
    assert found and found[0].hi == 20


def test_a_fixed_string_spelling_a_tag_is_refused():
    tool, args = _args(_obj(v={"const": "a</tool_call>b"}))
    with pytest.raises(UnsupportedSchemaError, match="spells '</tool_call>'") as e:
        Closer(TAGS).close(args, tool, "hermes")
    assert e.value.tool == "f"


def test_no_tags_is_the_identity():
    tool, args = _args(SCHEMAS["string"])
    assert Closer(()).close(args, tool, "hermes") is args


@pytest.fixture
def closed_hermes(monkeypatch):
    monkeypatch.setattr(Hermes, "closed_strings", True)


def _weather(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps([{"type": "function", "function": {
        "name": "note", "parameters": _obj(text={"type": "string"})}}]))
    return path


def _ordinary(text: str) -> list[int]:
    return [t for ch in text for t in QWEN.encode(ch)]


def test_closed_hermes_refuses_the_tag_spelled_in_a_string(tmp_path, closed_hermes):
    art = toolc.compile_tools(_weather(tmp_path), QWEN, tool_choice="required")
    head = [QWEN.added["<tool_call>"]] + QWEN.encode('\n{"name": "note", "arguments": '
                                                     '{"text": "a')
    assert accepts_all(art, head + _ordinary("</tool_call"))[1] == -1
    assert accepts_all(art, head + _ordinary("</tool_call>"))[1] >= 0
    escaped = '<tool_call>\n{"name": "note", "arguments": {"text": "a\\u003c/tool_call>"}}\n' \
              '</tool_call>'
    assert accepts_all(art, QWEN.encode(escaped + "<|im_end|>")) == (True, -1)
    assert parse_tool_calls(escaped)["parsed"][0]["arguments"] == {"text": "a</tool_call>"}


def test_default_hermes_refuses_the_tag_spelled_in_a_string(tmp_path):
    art = toolc.compile_tools(_weather(tmp_path), QWEN, tool_choice="required")
    head = [QWEN.added["<tool_call>"]] + QWEN.encode('\n{"name": "note", "arguments": '
                                                     '{"text": "a')
    assert accepts_all(art, head + _ordinary("</tool_call>"))[1] >= 0


@pytest.mark.parametrize("marker", ["<|call|>", "<|end|>", "<|message|>"])
def test_harmony_string_arguments_never_spell_a_marker(marker):
    """Steered into a JSON string argument: the marker spelled in ordinary tokens stops
    there (a parser splitting at the markers' text would cut the call)."""
    from tag_helpers import encode_for, vocab_for
    vocab = vocab_for("harmony")
    art = toolc.compile_tools("schemas/weather.json", vocab, format="harmony")
    head = encode_for("harmony", "<|channel|>commentary to=functions.get_forecast "
                                 '<|constrain|>json<|message|>{"city": "a')
    assert accepts_all(art, head + _ordinary(marker[:-1]))[1] == -1
    assert accepts_all(art, head + _ordinary(marker))[1] >= 0


@pytest.mark.parametrize("bounds", [{"maxItems": 1_000_000_000}, {"maxItems": 40, "items": {
    "type": "string", "maxLength": 1000}}])
def test_strings_inside_counted_arrays_never_spell_the_tag(tmp_path, bounds):
    """Counted items (and a counted string inside them) keep their strings closed too: the
    counters stay, the tag cannot be spelled in an item."""
    items = bounds.get("items", {"type": "string"})
    schema = _obj(a={"type": "array", "items": items, "minItems": 1,
                     **{k: v for k, v in bounds.items() if k != "items"}})
    path = tmp_path / "t.json"
    path.write_text(json.dumps([{"type": "function", "function": {"name": "lists",
                                                                  "parameters": schema}}]))
    art = toolc.compile_tools(path, QWEN, tool_choice="required")
    assert art.num_states < 400          # counted, not built as states
    head = [QWEN.added["<tool_call>"]] + QWEN.encode('\n{"name": "lists", "arguments": '
                                                     '{"a": ["x", "a')
    assert accepts_all(art, head + _ordinary("</tool_call"))[1] == -1
    assert accepts_all(art, head + _ordinary("</tool_call>"))[1] >= 0
    ok = [QWEN.added["<tool_call>"]] + QWEN.encode(
        '\n{"name": "lists", "arguments": {"a": ["x", "a</tool_cal"]}}\n')
    assert accepts_all(art, ok + [QWEN.added["</tool_call>"]]) == (False, -1)


def test_free_keys_beside_a_counted_maximum_never_spell_the_tag(tmp_path):
    """Undeclared members under a counted maxProperties: their keys are closed in place (the
    count stays a counter) and cannot spell the tag."""
    inner = {"type": "object", "properties": {"x": {"type": "integer"}},
             "additionalProperties": {"type": "integer"}, "maxProperties": 1_000_000_000}
    path = tmp_path / "t.json"
    path.write_text(json.dumps([{"type": "function", "function": {
        "name": "m", "parameters": _obj(a=inner)}}]))
    art = toolc.compile_tools(path, QWEN, tool_choice="required")
    assert art.num_states < 400
    head = [QWEN.added["<tool_call>"]] + QWEN.encode('\n{"name": "m", "arguments": '
                                                     '{"a": {"x": 1, "k')
    assert accepts_all(art, head + _ordinary("</tool_call"))[1] == -1
    assert accepts_all(art, head + _ordinary("</tool_call>"))[1] >= 0
