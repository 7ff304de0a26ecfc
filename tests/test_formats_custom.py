"""Custom formats from a spec file, the format registry, and the CLI's format options."""

from __future__ import annotations

import json
import random

import pytest
from click.testing import CliRunner

import toolc
from toolc.cli import FORMAT_NAMES, main
from toolc.formats import FORMATS, Custom, FormatSpecError, load_format_file
from toolc.parse import parse_tool_calls
from toolc.tokenizer import load_vocabulary

from helpers import accepts_all, distance_to_end, load_tools, random_walk

QWEN = load_vocabulary("qwen")
SPEC = {"name": "angle", "trigger": "<calls>", "prefix": "<calls>",
        "call": '{"tool": "{name}", "args": {arguments}}', "separator": " | ",
        "suffix": "</calls>"}


@pytest.fixture(scope="module")
def angle():
    return toolc.compile_tools("schemas/weather.json", format=Custom(SPEC))


def test_custom_format_accepts_its_calls_and_parses_back(angle):
    text = ('Checking.<calls>{"tool": "get_forecast", "args": {"city": "Oslo", "days": 2}} | '
            '{"tool": "get_current_weather", "args": {"city": "Rome"}}</calls><|im_end|>')
    assert accepts_all(angle, QWEN.encode(text)) == (True, -1)
    out = parse_tool_calls(text, format=angle.header["format_spec"])
    assert [c["name"] for c in out["parsed"]] == ["get_forecast", "get_current_weather"]
    assert angle.header["format"] == "angle"
    bad = text.replace(" | ", ", ")
    assert not accepts_all(angle, QWEN.encode(bad))[0]


@pytest.mark.parametrize("mode", ["auto", "required"])
def test_custom_format_random_walks_parse(angle, mode):
    tools = load_tools("weather")
    if mode == "required":
        angle = toolc.compile_tools("schemas/weather.json", format=Custom(SPEC),
                                    tool_choice="required")
    dist = distance_to_end(angle)
    rng = random.Random(7)
    seen = 0
    for _ in range(15):
        ids = random_walk(angle, rng, dist, budget=40)
        text = QWEN.decode_bytes(ids[:-1]).decode("utf-8", errors="replace")
        out = parse_tool_calls(text, format=SPEC, tools=tools)
        seen += len(out["tool_calls"])
        assert "<calls>" not in (out["content"] or "")
    assert seen > 0 or mode == "auto"


def test_name_after_arguments_and_special_token_markers():
    spec = {"prefix": "<tool_call>", "call": "{arguments} -> {name}", "separator": "\n",
            "suffix": "</tool_call>"}
    art = toolc.compile_tools("schemas/weather.json", format=Custom(spec))
    assert set(art.header["special_tokens"]) == {"EOS", "<tool_call>", "</tool_call>"}
    text = '<tool_call>{"city": "Oslo"} -> get_current_weather</tool_call><|im_end|>'
    assert accepts_all(art, QWEN.encode(text)) == (True, -1)
    out = parse_tool_calls(text, format=spec)
    assert out["parsed"] == [{"name": "get_current_weather", "arguments": {"city": "Oslo"}}]


@pytest.mark.parametrize("spec,message", [
    ([], "expected a JSON object"),
    ({"prefix": "<c>"}, "missing 'call'"),
    ({"call": "{name}"}, "at /call: 'call' must hold {name} and {arguments} exactly once"),
    ({"call": "{name}{arguments}", "colour": "x"}, "at /colour: unknown key"),
    ({"call": "{name}({arguments})"}, "at /trigger: a non-empty trigger is needed"),
    ({"call": "{name}({arguments})", "prefix": "<a>", "trigger": "<b>"},
     "the call block must begin with the trigger '<b>'"),
    ({"call": 3}, "at /call: expected a string"),
])
def test_bad_specs_are_refused(tmp_path, spec, message):
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    with pytest.raises(FormatSpecError, match=message.replace("(", r"\(").replace(")", r"\)")
                       .replace("{", r"\{").replace("}", r"\}")):
        load_format_file(path)


def test_cli_compile_with_format_file_and_errors(tmp_path):
    runner = CliRunner()
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(SPEC))
    out = tmp_path / "a.toolc"
    res = runner.invoke(main, ["compile", "schemas/weather.json", "--format-file", str(spec),
                               "-o", str(out), "-q"])
    assert res.exit_code == 0, res.output
    assert toolc.load(str(out)).header["format_spec"]["call"] == SPEC["call"]
    spec.write_text("{nope")
    bad = tmp_path / "b.toolc"
    res = runner.invoke(main, ["compile", "schemas/weather.json", "--format-file", str(spec),
                               "-o", str(bad), "-q"])
    assert res.exit_code == 1 and not bad.exists()
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Error: {spec}: the format spec is not valid")


def test_cli_compile_every_format_choice_and_reasoning(tmp_path):
    runner = CliRunner()
    out = tmp_path / "p.toolc"
    res = runner.invoke(main, ["compile", "schemas/weather.json", "--format", "pythonic",
                               "--reasoning", "--tool-choice", "required", "-o", str(out), "-q"])
    assert res.exit_code == 0, res.output
    art = toolc.load(str(out))
    assert art.header["format"] == "pythonic" and art.header["options"]["reasoning"] is True
    res = runner.invoke(main, ["compile", "schemas/weather.json", "--format", "nope"])
    assert res.exit_code == 2


def test_cli_lists_every_registered_format():
    assert tuple(FORMATS) == FORMAT_NAMES


def test_free_form_arguments_are_refused_where_a_format_needs_names():
    tools = [{"name": "anything", "parameters": {"type": "object"}}]
    for fmt in ("qwen3-coder", "pythonic", "tooldec"):
        with pytest.raises(toolc.UnsupportedSchemaError, match="tool 'anything'.*free-form"):
            toolc.compile_tools(tools, format=fmt)
    toolc.compile_tools(tools, format="json", max_depth=1)   # JSON formats write them as is


def test_help_documents_the_new_options():
    res = CliRunner().invoke(main, ["compile", "--help"])
    for opt in ("--format-file", "--reasoning", "qwen3-coder", "tooldec"):
        assert opt in res.output
    res = CliRunner().invoke(main, ["parse", "--help"])
    assert res.exit_code == 0 and "Example:" in res.output
