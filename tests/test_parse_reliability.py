"""Issue 17's parse findings, each a regression test: deep nesting, values JSON cannot hold,
lone surrogates and malformed specs or tools are ParseErrors (or the named option errors)
with an offset, never a TypeError or RecursionError; many calls parse in one pass (the
timings are bench/parse_bench.py's, not a test's)."""

from __future__ import annotations

import json
from importlib.util import module_from_spec, spec_from_file_location
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolc.cli import main
from toolc.errors import FormatSpecError, InvalidOptionError, ParseError
from toolc.literals import MAX_DEPTH, python_value_at
from toolc.parse import parse_tool_calls

# bench/parse_bench.py, loaded by path: bench/ on sys.path would shadow packages (its
# modules are not packages)
_spec = spec_from_file_location("parse_bench", Path(__file__).resolve().parents[1] / "bench"
                                / "parse_bench.py")
parse_bench = module_from_spec(_spec)
_spec.loader.exec_module(parse_bench)
CUSTOM, TOOLS, document = parse_bench.CUSTOM, parse_bench.TOOLS, parse_bench.document

DEEP = "[" * 100_000


@pytest.mark.parametrize("fmt,text", [("json", DEEP), ("functools", "functools" + DEEP),
                                      ("mistral", "[TOOL_CALLS]" + DEEP),
                                      ("mistral", "[TOOL_CALLS]a[ARGS]" + DEEP),
                                      ("hermes", "<tool_call>" + DEEP + "</tool_call>"),
                                      ("pythonic", "[a(x=" + DEEP), ("tooldec", "<tool>a(" + DEEP),
                                      ("phi4-mini", "<|tool_call|>" + DEEP)])
def test_deep_nesting_is_a_parse_error(fmt, text):
    with pytest.raises(ParseError, match="offset|nested"):
        parse_tool_calls(text, format=fmt)


@pytest.mark.parametrize("value", ["{1, 2}", "b'a'", "1j", "...", "{'a'}", "0x10", "1e999",
                                   "'''a'''", "f'x'", "[1, 2", "(1", "{'a': 1, 2: 3}"])
@pytest.mark.parametrize("fmt", ["pythonic", "tooldec"])
def test_values_json_cannot_hold_are_parse_errors_with_an_offset(fmt, value):
    text = f"[a(x={value})]" if fmt == "pythonic" else f"<tool>a({value})"
    with pytest.raises(ParseError, match="at offset [0-9]+"):
        parse_tool_calls(text, format=fmt)


def test_the_literal_reader_reads_the_json_subset():
    text = "['a', \"b\", 'c\\\\n', '', 1.5, -2, 1_000, (1,), {'k': None, 'l': [True, False]},]"
    assert python_value_at(text, 0) == (["a", "b", "c\\n", "", 1.5, -2, 1000, [1],
                                         {"k": None, "l": [True, False]}], len(text))


def test_the_literal_reader_is_iterative_to_its_depth_limit():
    ok = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert python_value_at(ok, 0)[1] == len(ok)
    with pytest.raises(ParseError, match="deeper than"):
        python_value_at("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), 0)


def test_a_lone_surrogate_in_hermes_arguments_is_a_parse_error():
    with pytest.raises(ParseError, match="surrogate"):
        parse_tool_calls('<tool_call>{"name": "a", "arguments": {"k": "\\ud800"}}</tool_call>')


@pytest.mark.parametrize("spec", [[1], "nonsense-format", 3, None])
def test_a_malformed_format_is_an_option_error(spec):
    with pytest.raises((InvalidOptionError, FormatSpecError)):
        parse_tool_calls("hi", format=spec)


@pytest.mark.parametrize("tools", [[{"function": {"name": "a", "parameters": []}}], {"a": 1},
                                   "x", [1, None], [{"function": {"name": "a", "parameters": {
                                       "properties": [1]}}}]])
def test_malformed_tools_given_to_parse_are_ignored_not_crashed_on(tools):
    text = "<tool_call>\n<function=a>\n<parameter=k>\n1\n</parameter>\n</function>\n</tool_call>"
    assert parse_tool_calls(text, format="qwen3-coder", tools=tools)["parsed"] == [
        {"name": "a", "arguments": {"k": 1}}]
    assert parse_tool_calls("<tool>a(1)", format="tooldec", tools=tools)["parsed"] == [
        {"name": "a", "arguments": {"arg0": 1}}]


@pytest.mark.parametrize("args", [["--format-file", "SPEC"], ["--format-file", "/dev/zero"],
                                  ["--tools", "/dev/zero"], ["--format-file", "LIST"]])
def test_cli_parse_with_a_malformed_spec_is_one_line(tmp_path, args):
    (tmp_path / "spec.json").write_text("[1, 2")
    (tmp_path / "list.json").write_text("[1, 2]")
    args = [str(tmp_path / "spec.json") if a == "SPEC" else
            str(tmp_path / "list.json") if a == "LIST" else a for a in args]
    r = CliRunner().invoke(main, ["parse", *args, "hi"])
    assert r.exit_code == 1 and "Traceback" not in r.output and "bug" not in r.output
    assert len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("fmt", ["hermes", "mistral", "qwen3-coder", "custom", "pythonic",
                                 "tooldec", "json", "functools", "phi4-mini", "llama3-json"])
def test_thousands_of_calls_parse_in_every_format(fmt):
    """The bench's documents, small: every call comes back, with its arguments."""
    text = document(fmt, 60_000)
    out = parse_tool_calls(text, format=CUSTOM if fmt == "custom" else fmt, tools=TOOLS)
    assert len(out["tool_calls"]) > 200
    args = out["parsed"][-1]["arguments"]
    assert args == {"city": "Paris", "days": 3, "units": ["c", "f"],
                    "opts": {"wind": True, "x": None}} or fmt == "tooldec" and list(
        args.values()) == ["Paris", 3, ["c", "f"], {"wind": True, "x": None}]
    json.dumps(out)


def _with_value(fmt: str, value: str) -> str:
    """One call in ``fmt`` whose argument ``k`` is ``value``, written as that format writes a
    string's place: the rendered sentinel string is replaced by ``value``."""
    # kimi-k3 writes a string's type in an attribute and the string raw: an array holds it
    # as JSON there
    text = parse_bench.renderer(fmt)([("f", {"k": ["@@"] if fmt == "kimi-k3" else "@@"})])
    for token in ('"@@"', "'@@'", '<|"|>@@<|"|>', "@@"):
        if token in text:
            return text.replace(token, value(token) if callable(value) else value)
    raise AssertionError(text)


@pytest.mark.parametrize("fmt", parse_bench.all_formats())
def test_deep_nesting_is_a_parse_error_in_every_format(fmt):
    text = _with_value(fmt, DEEP)
    with pytest.raises(ParseError, match="offset|nested"):
        parse_tool_calls(text, format=CUSTOM if fmt == "custom" else fmt)


@pytest.mark.parametrize("fmt", parse_bench.all_formats())
def test_a_lone_surrogate_is_a_parse_error_in_every_format(fmt):
    """Written as an escape where the format's strings have escapes, raw where they do not."""
    text = _with_value(fmt, lambda token: token.replace(
        "@@", "\\ud800" if token[0] in "'\"" else "\ud800"))
    with pytest.raises(ParseError, match="surrogate"):
        parse_tool_calls(text, format=CUSTOM if fmt == "custom" else fmt)


def test_the_garbage_collector_is_left_as_it_was():
    """The parse turns the collector off while it builds its result, and back on only if it
    was on, after a failure too."""
    import gc
    assert gc.isenabled()
    parse_tool_calls("[a(x=1)]", format="pythonic")
    with pytest.raises(ParseError):
        parse_tool_calls("[a(x=", format="pythonic")
    assert gc.isenabled()
    gc.disable()
    try:
        parse_tool_calls("[a(x=1)]", format="pythonic")
        assert not gc.isenabled()
    finally:
        gc.enable()
