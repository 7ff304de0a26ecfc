"""toolc.parse: every format's parser, its errors, custom specs and the `toolc parse` command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

import pytest
from click.testing import CliRunner

import toolc
from toolc.cli import main
from toolc.parse import PARSERS, ParseError, parse_tool_calls, split_reasoning

from helpers import load_tools

WEATHER = load_tools("weather")


def calls(out):
    return [(c["function"]["name"], json.loads(c["function"]["arguments"]))
            for c in out["tool_calls"]]


@pytest.mark.parametrize("fmt,text,content", [
    ("qwen3-coder", "Hi\n<tool_call>\n<function=get_forecast>\n<parameter=city>\n3 \"x\"\n"
     "</parameter>\n<parameter=days>\n2\n</parameter>\n</function>\n</tool_call><|im_end|>", "Hi"),
    ("mistral", '[TOOL_CALLS][{"name": "get_forecast", "arguments": {"city": "3 \\"x\\"", '
     '"days": 2}, "id": "a1B2c3D4e"}]</s>', None),
    ("mistral", '[TOOL_CALLS] [{"name": "get_forecast", "arguments": {"city": "3 \\"x\\"", '
     '"days": 2}, "id": "a1B2c3D4e"}]', None),
    ("mistral", '[TOOL_CALLS]get_forecast[ARGS]{"city": "3 \\"x\\"", "days": 2}</s>', None),
    ("phi4-mini", 'Hi<|tool_call|>[{"name": "get_forecast", "arguments": {"city": "3 \\"x\\"", '
     '"days": 2}}]<|/tool_call|>', "Hi"),
    ("functools", 'Hi functools[{"name": "get_forecast", "arguments": {"city": "3 \\"x\\"", '
     '"days": 2}}]', "Hi"),
    ("llama3-json", '<|python_tag|>{"name": "get_forecast", "parameters": {"city": "3 \\"x\\"", '
     '"days": 2}}<|eom_id|>', None),
    ("pythonic", "[get_forecast(city='3 \"x\"', days=2)]", None),
    ("tooldec", "Hi<tool>get_forecast('3 \"x\"', 2)", "Hi"),
    ("json", '{"name": "get_forecast", "arguments": {"city": "3 \\"x\\"", "days": 2}}', None),
    ("json", '[{"name": "get_forecast", "arguments": {"city": "3 \\"x\\"", "days": 2}}]', None),
])
def test_each_format_parses_to_openai_calls(fmt, text, content):
    out = parse_tool_calls(text, format=fmt, tools=WEATHER)
    assert calls(out) == [("get_forecast", {"city": '3 "x"', "days": 2})]
    assert out["content"] == content
    tc = out["tool_calls"][0]
    assert tc["type"] == "function" and isinstance(tc["id"], str)
    assert isinstance(tc["function"]["arguments"], str)


def test_mistral_keeps_the_model_call_id_and_parallel_calls():
    text = ('[TOOL_CALLS][{"name": "a", "arguments": {}, "id": "abcdefghi"}, '
            '{"name": "b", "arguments": {"x": 1}, "id": "ABCDEFGHI"}]')
    out = parse_tool_calls(text, format="mistral")
    assert [c["id"] for c in out["tool_calls"]] == ["abcdefghi", "ABCDEFGHI"]
    text = '[TOOL_CALLS]a[ARGS]{}[TOOL_CALLS]b[ARGS]{"x": 1}'
    assert calls(parse_tool_calls(text, format="mistral")) == [("a", {}), ("b", {"x": 1})]


def test_free_text_only():
    for fmt in ["hermes", *PARSERS]:
        out = parse_tool_calls("Just text.", format=fmt)
        assert out["tool_calls"] == [] and out["content"] == "Just text."


def test_qwen3_coder_values_without_tools():
    text = ("<tool_call>\n<function=f>\n<parameter=a>\n12\n</parameter>\n<parameter=b>\n"
            "two words\n</parameter>\n</function>\n</tool_call>")
    assert calls(parse_tool_calls(text, format="qwen3-coder")) == [("f", {"a": 12,
                                                                          "b": "two words"})]
    # with the schema, a string property stays a string even when it looks like JSON
    tools = [{"name": "f", "parameters": {"type": "object", "properties": {
        "a": {"type": "string"}, "b": {"type": "string"}}}}]
    assert calls(parse_tool_calls(text, format="qwen3-coder", tools=tools)) == [
        ("f", {"a": "12", "b": "two words"})]


def test_tooldec_names_positional_arguments_by_schema_order():
    out = parse_tool_calls("<tool>get_forecast('Oslo', 3)\n<tool>get_current_weather('Rome')",
                           format="tooldec", tools=WEATHER)
    assert calls(out) == [("get_forecast", {"city": "Oslo", "days": 3}),
                          ("get_current_weather", {"city": "Rome"})]
    assert calls(parse_tool_calls("<tool>f(1, 'x')", format="tooldec")) == [
        ("f", {"arg0": 1, "arg1": "x"})]


@pytest.mark.parametrize("fmt,text,where", [
    ("mistral", '[TOOL_CALLS][{"name": "a", "arguments": {]', "offset 41"),
    ("mistral", '[TOOL_CALLS][{"name": "a"}]', "offset 12"),
    ("phi4-mini", '<|tool_call|>[{"name": "a", "arguments": {}}]', "offset 45"),
    ("qwen3-coder", "<tool_call>\n<function=a>\n<parameter=x>\n1\n</function>", "offset 39"),
    ("llama3-json", '{"name": "a", "parameters": {}} {"name"', "offset 31"),
    ("pythonic", "[a(1)]", "offset 1"),
    ("json", '{"name": "a", "arguments": {}} trailing', "offset 30"),
    ("functools", 'functools[{"name": "a", "arguments": {}}] more', "offset 41"),
])
def test_failures_say_where_and_why(fmt, text, where):
    with pytest.raises(ParseError, match=where):
        parse_tool_calls(text, format=fmt)


def test_unknown_format_is_refused():
    with pytest.raises(ValueError, match="no parser for format 'nope'; known: cohere, deepseek-"
                                         ".*functools"):
        parse_tool_calls("x", format="nope")


def test_reasoning_is_split_off():
    assert split_reasoning("<think>\nhmm\n</think>\n\nHello") == ("hmm", "Hello")
    assert split_reasoning("[THINK]a[/THINK]b") == ("a", "b")
    assert split_reasoning("no think") == (None, "no think")
    with pytest.raises(ParseError, match="never closed"):
        split_reasoning("<think>forever")


SPEC = {"name": "angle", "prefix": "<calls>", "call": '{"tool": "{name}", "args": {arguments}}',
        "separator": " | ", "suffix": "</calls>"}


def test_custom_spec():
    text = ('Sure <calls>{"tool": "a", "args": {"x": [1, 2]}} | {"tool": "b", "args": {}}'
            '</calls></s>')
    out = parse_tool_calls(text, format=SPEC)
    assert calls(out) == [("a", {"x": [1, 2]}), ("b", {})] and out["content"] == "Sure"
    with pytest.raises(ParseError, match="the calls' suffix"):
        parse_tool_calls('<calls>{"tool": "a", "args": {}} and', format=SPEC)


def test_cli_parse_reads_stdin_and_argument(tmp_path):
    runner = CliRunner()
    text = '<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call><|im_end|>'
    res = runner.invoke(main, ["parse", "--format", "hermes"], input=text)
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["tool_calls"][0]["function"] == {"name": "f", "arguments": '{"a": 1}'}
    res = runner.invoke(main, ["parse", "--format", "pythonic", "[f(a=1)]"])
    assert json.loads(res.output)["tool_calls"][0]["function"]["name"] == "f"
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(SPEC))
    res = runner.invoke(main, ["parse", "--format-file", str(spec),
                               '<calls>{"tool": "g", "args": {}}</calls>'])
    assert json.loads(res.output)["tool_calls"][0]["function"]["name"] == "g"
    res = runner.invoke(main, ["parse", "--format", "tooldec", "--tools",
                               "schemas/weather.json", "<tool>get_forecast('Oslo', 2)"])
    assert json.loads(json.loads(res.output)["tool_calls"][0]["function"]["arguments"]) == {
        "city": "Oslo", "days": 2}


def test_cli_parse_writes_one_call_per_line_and_the_same_json():
    # the C encoder one call at a time: the top level indented, each call compact on its line
    text = "[get_weather(city='Zürich', days=2), f()]"
    res = CliRunner().invoke(main, ["parse", "--format", "pythonic", text])
    assert res.exit_code == 0, res.output
    assert res.output == (
        '{\n  "content": null,\n  "tool_calls": [\n'
        '    {"id": "call_0", "type": "function", "function": {"name": "get_weather", '
        '"arguments": "{\\"city\\": \\"Zürich\\", \\"days\\": 2}"}},\n'
        '    {"id": "call_1", "type": "function", "function": {"name": "f", '
        '"arguments": "{}"}}\n  ],\n  "reasoning": null\n}\n')
    expected = parse_tool_calls(text, format="pythonic")
    del expected["parsed"]
    assert json.loads(res.output) == expected
    for text, fmt in (("just text", "hermes"), ("<think>hm</think>\nno calls", "hermes")):
        res = CliRunner().invoke(main, ["parse", "--format", fmt, text])
        expected = parse_tool_calls(text, format=fmt)
        del expected["parsed"]
        assert json.loads(res.output) == expected and '"tool_calls": []' in res.output


def test_cli_parse_errors():
    runner = CliRunner()
    res = runner.invoke(main, ["parse", "--format", "mistral", '[TOOL_CALLS][{"name": 1}]'])
    assert res.exit_code == 1
    assert res.output.strip().splitlines() == [
        'Error: at offset 12: call 0: expected {"name": ..., "arguments": ...}']
    res = runner.invoke(main, ["parse", "--format", "nope", "x"])
    assert res.exit_code == 2


def test_parse_module_imports_no_compiler_module():
    # the formats' registry (toolc.formats) is standard library only; their framing is not
    code = ("import sys, toolc.parse; bad = [m for m in ('jsonschema', 'toolc.compiler',"
            " 'toolc.formats.base', 'toolc.fsm') if m in sys.modules]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_parsing_loads_no_numpy_and_the_runtime_names_load_on_first_use():
    # `import toolc` and `toolc parse` (tools file read through toolc.runtime.files) leave
    # numpy unloaded; every runtime name of toolc.__all__ still resolves, loading it then
    code = ("import sys, toolc\nfrom toolc.cli import main\n"
            "main(['parse', '--format', 'pythonic', '--tools', sys.argv[1], '[f(x=1)]'],"
            " standalone_mode=False)\n"
            "before = 'numpy' in sys.modules\n"
            "names = [n for n in toolc.__all__ if getattr(toolc, n, None) is None]\n"
            "from toolc import Matcher, load\n"
            "print(before, names, 'numpy' in sys.modules, toolc.runtime.load is load,"
            " 'Matcher' in dir(toolc))")
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump([{"type": "function", "function": {"name": "f"}}], fh)
    try:
        out = subprocess.run([sys.executable, "-c", code, fh.name], capture_output=True,
                             text=True, check=True)
    finally:
        os.unlink(fh.name)
    assert out.stdout.strip().splitlines()[-1] == "False [] True True True"
    with pytest.raises(AttributeError):
        toolc.no_such_name
