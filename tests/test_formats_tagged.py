"""The tag-per-parameter formats (toolc/formats/tagged.py), end to end over Qwen3's vocabulary
with each family's atomic markers added (tests/tag_helpers.py).

No family's own renderer installs from a package registry, so completeness is proved against
the facts sheet's bytes (tests/tag_helpers.py's renderer, written from them); the DSML and GLM
examples of the sheet are parsed verbatim. For each format: soundness (random walks parse and
validate), completeness (hypothesis instances rendered in the format are accepted), one-byte
mutations of the framing rejected, and closure (a value or free text spelling a tag in ordinary
tokens is rejected, so the parser can never split differently from the grammar).
"""

from __future__ import annotations

import json
import random

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from hypothesis_jsonschema import from_schema

import toolc
from toolc.errors import UnsupportedSchemaError
from toolc.formats.tagstyle import STYLES
from toolc.parse import parse_tool_calls

from helpers import accepts_all, distance_to_end, load_tools, params_by_name, random_walk
from tag_helpers import encode_for, render_tagged, vocab_for

FORMATS = ["qwen3-coder", "mimo", "seed-oss", "glm-4.5", "glm-4.7", "minimax-m2",
           "deepseek-v3.2", "deepseek-v4"]
NEW = FORMATS[1:]
_ARTS: dict = {}


def artifact(fmt, tools="schemas/weather.json", **opts):
    key = (fmt, str(tools), tuple(sorted(opts.items())))
    if key not in _ARTS:
        _ARTS[key] = toolc.compile_tools(tools, vocab_for(fmt), format=fmt, **opts)
    return _ARTS[key]


def decode(fmt, ids) -> str:
    # free text is any bytes (as for every format); the values are checked to be UTF-8
    return vocab_for(fmt).decode_bytes(ids).decode("utf-8", errors="replace")


def validate(parsed, tools, require_call=False):
    schemas = params_by_name(tools)
    if require_call:
        assert parsed["tool_calls"]
    for call in parsed["parsed"]:
        jsonschema.validate(call["arguments"], schemas[call["name"]])


CALLS = [("get_forecast", {"city": "Zürich <b>", "days": 3, "unit": "celsius"}),
         ("get_current_weather", {"city": "東京 \"quoted\"\nline"})]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("calls,content", [(CALLS[:1], ""), (CALLS, ""),
                                           (CALLS, "Let me check."), ([], "It is sunny.")])
def test_the_sheets_bytes_are_accepted_and_parse_back(fmt, calls, content):
    tools = load_tools("weather")
    text = render_tagged(fmt, calls, content, params_by_name(tools))
    art = artifact(fmt)
    assert accepts_all(art, encode_for(fmt, text)) == (True, -1), text
    parsed = parse_tool_calls(text, format=fmt, tools=tools)
    assert [(c["name"], c["arguments"]) for c in parsed["parsed"]] == calls
    assert parsed["content"] == (content or None)


@pytest.mark.parametrize("fmt", FORMATS)
def test_one_byte_mutations_of_the_framing_are_rejected(fmt):
    tools = load_tools("weather")
    text = render_tagged(fmt, CALLS, "", params_by_name(tools))
    st_ = STYLES[fmt]
    art = artifact(fmt, tool_choice="required")
    tags = [t for t in (st_.name_end, st_.key_end, st_.value_close, st_.call_close) if t]
    for tag in tags:
        for mutated in (text.replace(tag, tag + " ", 1), text.replace(tag, tag[:-1], 1)):
            if mutated != text:
                assert not accepts_all(art, encode_for(fmt, mutated))[0], (tag, mutated)


@pytest.mark.parametrize("fmt", NEW)
@pytest.mark.parametrize("mode", ["auto", "required"])
def test_random_walks_parse_and_validate(fmt, mode):
    art = artifact(fmt, tool_choice=mode)
    tools = load_tools("weather")
    dist = distance_to_end(art)
    rng = random.Random(f"{fmt}-{mode}")
    calls = 0
    for _ in range(12):
        ids = random_walk(art, rng, dist, budget=rng.choice([10, 40, 80]))
        assert ids[-1] in art.eos_token_ids
        parsed = parse_tool_calls(decode(fmt, ids[:-1]), format=fmt, tools=tools)
        validate(parsed, tools, require_call=(mode == "required"))
        calls += len(parsed["tool_calls"])
    assert calls > 0 or mode == "auto"


@pytest.mark.parametrize("fmt", ["minimax-m2", "deepseek-v3.2", "glm-4.7"])
@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_hypothesis_instances_are_accepted(fmt, data):
    tools = load_tools("weather")
    schemas = params_by_name(tools)
    name = data.draw(st.sampled_from(sorted(schemas)))
    args = data.draw(from_schema(schemas[name]))
    # the grammar writes schema order; a raw value never spells a tag (see the closure test)
    args = {k: args[k] for k in schemas[name]["properties"] if k in args}
    if any("<" in v for v in args.values() if isinstance(v, str)):
        return
    text = render_tagged(fmt, [(name, args)], "", schemas)
    assert accepts_all(artifact(fmt), encode_for(fmt, text)) == (True, -1), text
    assert parse_tool_calls(text, format=fmt, tools=tools)["parsed"] == \
        [{"name": name, "arguments": args}]


# -- closure under parsing ---------------------------------------------------------------------

def _prefix_ok(art, ids) -> bool:
    return accepts_all(art, ids)[1] == -1


def ordinary(text: str) -> list[int]:
    """``text`` spelled one character at a time: ordinary tokens only, never an added one."""
    return [t for ch in text for t in vocab_for("qwen3-coder").encode(ch)]


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_value_never_spells_a_tag(fmt):
    """Steered: no raw string value goes on past one of the format's tags spelled in
    ordinary tokens, and free text never spells the trigger."""
    tools = load_tools("weather")
    art = artifact(fmt)
    for tag in STYLES[fmt].closers():
        text = render_tagged(fmt, [("get_current_weather", {"city": f"a{tag}b"})], "",
                             params_by_name(tools))
        head = text[:text.index(f"a{tag}")]
        # the tag less its last character is ordinary text; the whole tag ends the value
        # there (as the parser would end it) or is refused, so the value never goes on
        assert _prefix_ok(art, encode_for(fmt, head) + ordinary(f"a{tag[:-1]}b")), tag
        assert not _prefix_ok(art, encode_for(fmt, head) + ordinary(f"a{tag}b")), tag
    trig = STYLES[fmt].trigger
    assert _prefix_ok(art, ordinary("Sure: " + trig[:-1]))
    assert not _prefix_ok(art, ordinary("Sure: " + trig))


def test_a_json_string_inside_a_value_never_spells_the_closing_tag(tmp_path):
    tools = [{"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {"xs": {"type": "array", "items": {"type": "string"}}},
        "required": ["xs"]}}}]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(tools))
    art = artifact("mimo", path, tool_choice="required")
    good = '<tool_call><function=f><parameter=xs>["a"]</parameter></function></tool_call>'
    assert accepts_all(art, encode_for("mimo", good + "<|im_end|>")) == (True, -1)
    bad = '<tool_call><function=f><parameter=xs>["</parameter>'
    assert not _prefix_ok(art, encode_for("mimo", bad))


@pytest.mark.parametrize("name,key", [("get weather", "ok"), ("f", "my-key")])
def test_names_and_keys_the_tags_can_hold_compile(tmp_path, name, key):
    tools = [{"type": "function", "function": {"name": name, "parameters": {
        "type": "object", "properties": {key: {"type": "string"}}, "required": [key]}}}]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(tools))
    art = artifact("minimax-m2", path, tool_choice="required")
    text = render_tagged("minimax-m2", [(name, {key: "v"})], "", params_by_name(tools))
    assert accepts_all(art, encode_for("minimax-m2", text)) == (True, -1)


@pytest.mark.parametrize("fmt", ["minimax-m2", "qwen3-coder", "glm-4.7"])
@pytest.mark.parametrize("name,key,where", [("a>b", "k", "/0/function/name"),
                                            ("f", 'my"key', "/0/function/parameters/properties/"
                                                            'my"key'),
                                            ("f", "x<y", "/0/function/parameters/properties/x<y")])
def test_names_and_keys_that_would_end_a_tag_are_refused(tmp_path, fmt, name, key, where):
    tools = [{"type": "function", "function": {"name": name, "parameters": {
        "type": "object", "properties": {key: {"type": "string"}}}}}]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(tools))
    with pytest.raises(UnsupportedSchemaError) as e:
        toolc.compile_tools(path, vocab_for(fmt), format=fmt)
    assert e.value.tool == name and e.value.pointer == where


def test_raw_strings_keep_their_length_bounds_and_refuse_a_pattern(tmp_path):
    def tools(sub):
        return [{"type": "function", "function": {"name": "f", "parameters": {
            "type": "object", "properties": {"s": sub}, "required": ["s"]}}}]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(tools({"type": "string", "minLength": 2, "maxLength": 3})))
    art = artifact("glm-4.7", path, tool_choice="required")
    for value, ok in (("a", False), ("ab", True), ("東京都", True), ("abcd", False)):
        text = f"<tool_call>f<arg_key>s</arg_key><arg_value>{value}</arg_value></tool_call>"
        assert accepts_all(art, encode_for("glm-4.7", text + "<|im_end|>"))[0] == ok, value
    path.write_text(json.dumps(tools({"type": "string", "pattern": "^a+$"})))
    with pytest.raises(UnsupportedSchemaError) as e:
        toolc.compile_tools(path, vocab_for("glm-4.7"), format="glm-4.7")
    assert e.value.pointer == "/0/function/parameters/properties/s/pattern"


def test_ref_into_the_roots_defs(tmp_path):
    """A pydantic model with a nested model: the property is a $ref into #/$defs."""
    params = {"type": "object", "$defs": {"Place": {
        "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
        "additionalProperties": False}},
        "properties": {"place": {"$ref": "#/$defs/Place"}, "note": {"type": "string"}},
        "required": ["place"]}
    path = tmp_path / "t.json"
    path.write_text(json.dumps([{"type": "function", "function": {"name": "f",
                                                                  "parameters": params}}]))
    for fmt in ("qwen3-coder", "deepseek-v3.2"):
        art = artifact(fmt, path, tool_choice="required")
        text = render_tagged(fmt, [("f", {"place": {"city": "Paris"}, "note": "hi"})], "",
                             {"f": params})
        assert accepts_all(art, encode_for(fmt, text)) == (True, -1), text
        bad = render_tagged(fmt, [("f", {"place": {"town": "Paris"}})], "", {"f": params})
        assert not accepts_all(art, encode_for(fmt, bad))[0]


# -- the sheet's own examples, verbatim ----------------------------------------------------------

DSML = ('<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_weather">\n<｜DSML｜parameter '
        'name="city" string="true">Paris</｜DSML｜parameter>\n<｜DSML｜parameter name="days" '
        'string="false">2</｜DSML｜parameter>\n</｜DSML｜invoke>\n<｜DSML｜invoke name='
        '"get_weather">\n<｜DSML｜parameter name="city" string="true">Rome</｜DSML｜parameter>'
        '\n</｜DSML｜invoke>\n</｜DSML｜function_calls>')
GLM47 = ('<tool_call>N<arg_key>K</arg_key><arg_value>V</arg_value><arg_key>K2</arg_key>'
         '<arg_value>2</arg_value></tool_call>')
MINIMAX = ('<minimax:tool_call>\n<invoke name="N">\n<parameter name="K">V</parameter>\n'
           '</invoke>\n</minimax:tool_call>')


@pytest.mark.parametrize("fmt,text,expected", [
    ("deepseek-v3.2", DSML, [("get_weather", {"city": "Paris", "days": 2}),
                             ("get_weather", {"city": "Rome"})]),
    ("glm-4.7", GLM47, [("N", {"K": "V", "K2": 2})]),
    ("glm-4.5", "<tool_call>N\n<arg_key>K</arg_key>\n<arg_value>V</arg_value>\n</tool_call>",
     [("N", {"K": "V"})]),
    ("minimax-m2", MINIMAX, [("N", {"K": "V"})]),
    ("mimo", "<tool_call><function=N><parameter=K>V</parameter></function></tool_call>",
     [("N", {"K": "V"})]),
])
def test_the_sheets_examples_parse(fmt, text, expected):
    parsed = parse_tool_calls(text, format=fmt)
    assert [(c["name"], c["arguments"]) for c in parsed["parsed"]] == expected


def test_the_dsml_example_is_accepted_for_its_tool(tmp_path):
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"},
                                         "days": {"type": "integer"}}, "required": ["city"]}}}]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(tools))
    art = artifact("deepseek-v3.2", path, tool_choice="required")
    ids = encode_for("deepseek-v3.2", DSML + "<|im_end|>")
    assert accepts_all(art, ids) == (True, -1)
    assert vocab_for("deepseek-v3.2").added["｜DSML｜"] in ids


def test_only_values_that_can_hold_a_tag_pay_for_avoiding_it():
    from toolc.formats.tagged import may_hold
    from toolc.schema import json_grammar as jg
    assert not may_hold(jg.INTEGER, ord("<")) and not may_hold(jg.BOOLEAN, ord("<"))
    assert may_hold(jg.STRING, ord("<"))
