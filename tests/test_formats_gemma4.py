"""Gemma 4 (toolc/formats/gemma4.py), over Qwen3's vocabulary with Gemma 4's markers added
(tests/tag_helpers.py). The renderer below is written from the facts sheet's bytes and the
rules of Gemma 4's chat template as the sheet describes them (keys bare and dictsort-ed, strings
between <|"|>, None as Jinja prints it); the template does not install from a package registry.
"""

from __future__ import annotations

import json
import random

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis_jsonschema import from_schema

import toolc
from toolc.errors import UnsupportedSchemaError
from toolc.parse import parse_tool_calls

from helpers import accepts_all, distance_to_end, random_walk
from tag_helpers import encode_for, vocab_for

VOCAB = vocab_for("gemma4")
PARAMS = {"type": "object", "properties": {
    "city": {"type": "string", "maxLength": 4},
    "Days": {"type": "integer"},
    "ratio": {"type": "number"},
    "flags": {"type": "array", "items": {"type": "boolean"}, "maxItems": 3},
    "where": {"type": "object", "properties": {"lat": {"type": "number"},
                                               "label": {"type": ["string", "null"]}},
              "required": ["lat"], "additionalProperties": False},
    "unit": {"enum": ["celsius", "fahrenheit"]}},
    "required": ["city"]}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": PARAMS}},
         {"type": "function", "function": {"name": "ping", "parameters": {
             "type": "object", "properties": {}}}}]


def fmt_value(v) -> str:
    if isinstance(v, str):
        return f'<|"|>{v}<|"|>'
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "None"
    if isinstance(v, dict):
        return "{" + ",".join(f"{k}:{fmt_value(v[k])}" for k in sorted(v, key=str.lower)) + "}"
    if isinstance(v, list):
        return "[" + ",".join(fmt_value(x) for x in v) + "]"
    return json.dumps(v)


def render(calls, content="", reasoning=None) -> str:
    head = f"<|channel>thought\n{reasoning}\n<channel|>" if reasoning is not None else ""
    return head + content + "".join(f"<|tool_call>call:{n}{fmt_value(a)}<tool_call|>"
                                    for n, a in calls) + "<|im_end|>"


@pytest.fixture(scope="module")
def tools_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("g") / "tools.json"
    path.write_text(json.dumps(TOOLS))
    return path


_ARTS: dict = {}


def artifact(path, **opts):
    key = tuple(sorted(opts.items()))
    if key not in _ARTS:
        _ARTS[key] = toolc.compile_tools(path, VOCAB, format="gemma4", **opts)
    return _ARTS[key]


CALLS = [("get_weather", {"city": "Rome", "Days": 2, "flags": [True, False],
                          "where": {"lat": 48.85, "label": None}, "unit": "celsius"}),
         ("ping", {})]


@pytest.mark.parametrize("calls,content", [(CALLS[:1], ""), (CALLS, ""), (CALLS, "Checking."),
                                           ([], "Sunny.")])
def test_the_sheets_syntax_is_accepted_and_parses_back(tools_path, calls, content):
    text = render(calls, content)
    assert accepts_all(artifact(tools_path), encode_for("gemma4", text)) == (True, -1), text
    parsed = parse_tool_calls(text, format="gemma4")
    assert [(c["name"], c["arguments"]) for c in parsed["parsed"]] == calls
    assert parsed["content"] == (content or None)


def test_the_sheets_example_parses():
    text = '<|tool_call>call:N{city:<|"|>Paris<|"|>,days:2}<tool_call|>'
    assert parse_tool_calls(text, format="gemma4")["parsed"] == \
        [{"name": "N", "arguments": {"city": "Paris", "days": 2}}]


@pytest.mark.parametrize("mutated", [
    render([("get_weather", {"Days": 2, "city": "P"})]).replace("city:", "city: "),
    render([("get_weather", {"city": "P", "unit": "celsius", "Days": 2})])
    .replace("Days:2,", "").replace("}<tool", ",Days:2}<tool"),           # out of order
    render([("get_weather", {"city": "P"})]).replace("<|\"|>P", "\"P"),
    render([("get_weather", {"city": "P", "where": {"label": None, "lat": 1}})])
    .replace("lat:1", "lat:1,extra:1"),
    render([("get_weather", {"city": "x" * 5})]),                             # maxLength
])
def test_what_the_template_would_not_write_is_rejected(tools_path, mutated):
    assert not accepts_all(artifact(tools_path), encode_for("gemma4", mutated))[0], mutated


@pytest.mark.parametrize("mode", ["auto", "required"])
def test_random_walks_parse_and_validate(tools_path, mode):
    art = artifact(tools_path, tool_choice=mode)
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in TOOLS}
    dist = distance_to_end(art)
    rng = random.Random(mode)
    for _ in range(12):
        ids = random_walk(art, rng, dist, budget=rng.choice([10, 40, 80]))
        parsed = parse_tool_calls(VOCAB.decode_bytes(ids[:-1]).decode("utf-8", "replace"),
                                  format="gemma4")
        for c in parsed["parsed"]:
            jsonschema.validate(c["arguments"], schemas[c["name"]])
        assert parsed["parsed"] or mode == "auto"


@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(args=from_schema(PARAMS))
def test_hypothesis_instances_are_accepted(tools_path, args):
    def has_quote(v):
        return '<|"|>' in v or "<|tool_call>" in v or "<tool_call|>" in v \
            if isinstance(v, str) else any(map(has_quote, v.values() if isinstance(v, dict)
                                               else v if isinstance(v, list) else []))
    if has_quote(args) or any(isinstance(v, float) and v != v for v in args.values()):
        return
    # only declared keys are written (extra keys allowed by the schema are left out)
    args = {k: v for k, v in json.loads(json.dumps(args)).items() if k in PARAMS["properties"]}
    text = render([("get_weather", args)])
    assert accepts_all(artifact(tools_path), encode_for("gemma4", text)) == (True, -1), text
    assert parse_tool_calls(text, format="gemma4")["parsed"][0]["arguments"] == args


def test_reasoning_channel(tools_path):
    text = render(CALLS[:1], reasoning="Let me think.")
    art = artifact(tools_path, reasoning=True)
    assert accepts_all(art, encode_for("gemma4", text)) == (True, -1)
    parsed = parse_tool_calls(text.removesuffix("<|im_end|>"), format="gemma4")
    assert parsed["reasoning"] == "Let me think." and parsed["parsed"][0]["name"] == "get_weather"


@pytest.mark.parametrize("sub,where", [
    ({"type": "string", "pattern": "^a"}, "/properties/k/pattern"),
    ({"type": "object"}, "/properties/k"),
    ({"type": "object", "properties": {"a b": {"type": "integer"}}},
     "/properties/k/properties/a b"),
    ({"type": "integer", "minimum": 3}, "/properties/k/minimum"),
])
def test_what_gemma4_cannot_spell_is_refused(tmp_path, sub, where):
    path = tmp_path / "t.json"
    path.write_text(json.dumps([{"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {"k": sub}}}}]))
    with pytest.raises(UnsupportedSchemaError) as e:
        toolc.compile_tools(path, VOCAB, format="gemma4")
    assert e.value.pointer == "/0/function/parameters" + where
