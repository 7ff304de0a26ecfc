"""toolc/options.py: CompileOptions, validated once; the header's options map; the public
signatures; one header writer for compile and --check; the CLI's usage errors."""

from __future__ import annotations

import inspect
import json
from dataclasses import fields

import pytest
from click.testing import CliRunner

import toolc
import toolc.compiler
from toolc import CompileOptions, InvalidOptionError
from toolc.batch import CHECKED, expected_header
from toolc.cli import main
from toolc.formats import NAMES, Custom

from conftest import WEATHER

SPEC = {"name": "mine", "prefix": "<calls>",
        "call": "{\"tool\": \"{name}\", \"args\": {arguments}}", "suffix": "</calls>"}

HEADER_KEYS = ["format", "tool_choice", "parallel", "max_calls", "max_depth", "max_states",
               "whitespace", "max_whitespace", "lenient", "reasoning"]


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    """The CLI's artifact cache goes to a folder of this test's own."""
    monkeypatch.setenv("TOOLC_CACHE_DIR", str(tmp_path / "cache"))


# -- validation at construction ------------------------------------------------------------

BAD = [
    ("format", "nope"),
    ("format", 3),
    ("format", None),
    ("format", {"name": "mine"}),          # a spec dict is not a CallFormat
    ("parallel", 1),
    ("parallel", "yes"),
    ("lenient", "yes"),
    ("lenient", None),
    ("reasoning", 0),
    ("record_time", 1),
    ("leap_seconds", "yes"),
    ("max_calls", 0),
    ("max_calls", True),
    ("max_calls", 1.0),
    ("max_depth", -1),
    ("max_states", 0),
    ("max_states", 1.5),
    ("max_whitespace", 0),
    ("whitespace", "tabs"),
    ("timeout", -1),
    ("timeout", float("nan")),
    ("timeout", True),
    ("timeout", "1"),
    ("tool_choice", ""),
    ("tool_choice", None),
]


@pytest.mark.parametrize("name,value", BAD, ids=[f"{n}={v!r}" for n, v in BAD])
def test_bad_value_is_refused_naming_the_keyword(name, value):
    with pytest.raises(InvalidOptionError) as e:
        CompileOptions(**{name: value})
    assert isinstance(e.value, ValueError) and isinstance(e.value, toolc.ToolcError)
    assert e.value.option == name
    assert str(e.value).startswith(f"invalid {name}: ")


@pytest.mark.parametrize("name,value", BAD, ids=[f"{n}={v!r}" for n, v in BAD])
def test_bad_value_is_refused_by_compile_tools_before_any_work(name, value, monkeypatch):
    """compile_tools validates through the same class, before loading the tokenizer."""

    def no_load(*a, **k):
        raise AssertionError("the tokenizer was loaded for invalid options")

    monkeypatch.setattr(toolc.compiler, "load_vocabulary", no_load)
    with pytest.raises(InvalidOptionError) as e:
        toolc.compile_tools(str(WEATHER), **{name: value})
    assert e.value.option == name


def test_good_edge_values_are_accepted():
    o = CompileOptions(max_calls=1, max_depth=0, max_states=1, max_whitespace=1, timeout=0,
                       whitespace="flexible", tool_choice="get_forecast")
    assert (o.max_calls, o.max_depth, o.timeout, o.tool_choice) == (1, 0, 0, "get_forecast")
    assert CompileOptions(timeout=2.5).timeout == 2.5
    assert CompileOptions(timeout=None).timeout is None
    for name in NAMES:
        assert CompileOptions(format=name).format_name == name


def test_from_kwargs_refuses_an_unknown_keyword_listing_the_known_ones():
    with pytest.raises(InvalidOptionError) as e:
        CompileOptions.from_kwargs(colour="red")
    assert e.value.option == "colour"
    msg = str(e.value)
    assert msg.startswith("invalid colour: ")
    for f in fields(CompileOptions):
        assert f.name in msg, f.name
    # through the public entry point as well
    with pytest.raises(InvalidOptionError) as e:
        toolc.compile_tools(str(WEATHER), max_state=10)
    assert e.value.option == "max_state"


def test_from_kwargs_replaces_fields_and_validates_the_result():
    base = CompileOptions(tool_choice="required", max_states=5000)
    o = CompileOptions.from_kwargs(base, parallel=False)
    assert (o.tool_choice, o.max_states, o.parallel) == ("required", 5000, False)
    assert base.parallel is True                   # frozen: the base is untouched
    assert CompileOptions.from_kwargs(base) == base
    assert CompileOptions.from_kwargs(None, lenient=True) == CompileOptions(lenient=True)
    with pytest.raises(InvalidOptionError) as e:
        CompileOptions.from_kwargs(base, max_states=0)
    assert e.value.option == "max_states"


# -- the header's options map --------------------------------------------------------------

def test_header_options_keys_are_in_file_order_without_time_and_timeout():
    o = CompileOptions(record_time=True, timeout=5, max_calls=3, whitespace="compact")
    h = o.header_options()
    assert list(h) == HEADER_KEYS
    assert "record_time" not in h and "timeout" not in h
    assert h["max_calls"] == 3 and h["whitespace"] == "compact" and h["format"] == "hermes"
    assert CompileOptions(timeout=5).header_options() == CompileOptions().header_options()


def test_header_options_names_a_custom_format_by_its_name(tmp_path):
    custom = Custom(SPEC)
    h = CompileOptions(format=custom).header_options()
    assert h["format"] == "mine" and list(h) == HEADER_KEYS
    path = tmp_path / "fmt.json"
    path.write_text(json.dumps(dict(SPEC, name="from-file")))
    loaded = toolc.formats.load_format_file(path)
    o = CompileOptions(format=loaded)
    assert o.format_name == "from-file" and o.header_options()["format"] == "from-file"
    json.dumps(o.header_options())          # serializable: no CallFormat object inside


def test_the_artifact_header_records_the_options_map(weather_artifact):
    assert weather_artifact.header["options"] == CompileOptions().header_options()
    assert list(weather_artifact.header["options"]) == HEADER_KEYS


# -- the public signatures ------------------------------------------------------------------

@pytest.mark.parametrize("func", [toolc.compile_tools, toolc.compiler.compile_tools],
                         ids=["toolc.compile_tools", "toolc.compiler.compile_tools"])
def test_signature_lists_every_option_as_a_keyword_with_its_default(func):
    params = inspect.signature(func).parameters
    for f in fields(CompileOptions):
        assert f.name in params, f.name
        p = params[f.name]
        assert p.kind is inspect.Parameter.KEYWORD_ONLY, f.name
        assert p.default == f.default, f.name
    assert list(params)[:2] == ["tools", "tokenizer"]
    assert params["tokenizer"].default == toolc.DEFAULT_TOKENIZER == "qwen"
    assert params["options"].default is None


# -- options= and keywords give the same artifact -------------------------------------------

def test_keywords_and_options_value_give_identical_artifacts():
    by_kw = toolc.compile_tools(str(WEATHER), tool_choice="required", parallel=False)
    by_opts = toolc.compile_tools(
        str(WEATHER), options=CompileOptions(tool_choice="required", parallel=False))
    assert by_kw.header == by_opts.header
    assert by_kw.to_bytes() == by_opts.to_bytes()
    assert by_kw.header["options"]["tool_choice"] == "required"
    assert by_kw.header["options"]["parallel"] is False


def test_keywords_override_the_options_value():
    art = toolc.compile_tools(str(WEATHER), options=CompileOptions(tool_choice="required",
                                                                    parallel=False),
                              parallel=True, max_calls=2)
    opts = art.header["options"]
    assert opts["tool_choice"] == "required"          # kept from options=
    assert opts["parallel"] is True and opts["max_calls"] == 2    # the keywords win
    plain = toolc.compile_tools(str(WEATHER), tool_choice="required", max_calls=2)
    assert art.to_bytes() == plain.to_bytes()


def test_cli_and_library_write_the_same_artifact(tmp_path):
    out = tmp_path / "w.toolc"
    res = CliRunner().invoke(main, ["compile", str(WEATHER), "--tool-choice", "required",
                                    "--no-parallel", "--no-cache", "-q", "-o", str(out)])
    assert res.exit_code == 0, res.output
    cli = toolc.load(out)
    lib = toolc.compile_tools(str(WEATHER), options=CompileOptions(tool_choice="required",
                                                                   parallel=False))
    assert cli.header == lib.header
    assert cli.header["options"] == lib.header["options"]
    assert out.read_bytes() == lib.to_bytes()


def test_leap_seconds_flag_is_recorded_only_when_set_and_matches_the_library(tmp_path):
    assert "leap_seconds" not in CompileOptions().header_options()
    assert CompileOptions(leap_seconds=True).header_options()["leap_seconds"] is True
    tools = [{"type": "function", "function": {"name": "at", "parameters": {
        "type": "object", "properties": {"t": {"type": "string", "format": "time"}},
        "required": ["t"]}}}]
    src = tmp_path / "t.json"
    src.write_text(json.dumps(tools))
    out = tmp_path / "t.toolc"
    res = CliRunner().invoke(main, ["compile", str(src), "--leap-seconds", "--no-cache", "-q",
                                    "-o", str(out)])
    assert res.exit_code == 0, res.output
    lib = toolc.compile_tools(str(src), leap_seconds=True)
    assert out.read_bytes() == lib.to_bytes()
    plain = toolc.compile_tools(str(src))
    assert lib.num_states > plain.num_states + 10_000      # the 11,007 leap-second states
    assert ["leap seconds" in n["message"] for n in plain.header["notices"]] == [True]
    assert lib.header.get("notices", []) == []


# -- make_header: compile and --check cannot drift ------------------------------------------

@pytest.mark.parametrize("opts", [
    CompileOptions(),
    CompileOptions(tool_choice="required", parallel=False, max_calls=None),
    CompileOptions(whitespace="flexible", max_whitespace=2, lenient=True, reasoning=True),
    CompileOptions(format=Custom(SPEC), timeout=30),
], ids=["defaults", "required", "flexible", "custom"])
def test_expected_header_equals_the_compiled_header_on_checked_keys(opts):
    art = toolc.compile_tools(str(WEATHER), "qwen", options=opts)
    expected = expected_header(str(WEATHER), "qwen", opts)
    assert set(expected) <= set(CHECKED)
    for k in CHECKED:
        assert expected.get(k) == art.header.get(k), k
    assert ("format_spec" in expected) == isinstance(opts.format, Custom)


def test_check_says_up_to_date_after_compile_with_a_format_file(tmp_path):
    spec = tmp_path / "fmt.json"
    spec.write_text(json.dumps(SPEC))
    out = tmp_path / "c.toolc"
    runner = CliRunner()
    args = ["compile", str(WEATHER), "--format-file", str(spec), "-o", str(out)]
    res = runner.invoke(main, args + ["-q", "--no-cache"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(main, args + ["--check"])
    assert res.exit_code == 0 and "up to date" in res.output, res.output
    res = runner.invoke(main, ["compile", str(WEATHER), "-o", str(out), "--check"])
    assert res.exit_code == 1 and "format differs" in res.output, res.output


# -- the CLI: a bad option is a usage error naming the flag ---------------------------------

@pytest.mark.parametrize("args,flag", [
    (["--timeout", "nan"], "--timeout"),
    (["--tool-choice", ""], "--tool-choice"),
], ids=["timeout-nan", "tool-choice-empty"])
def test_cli_compile_turns_a_bad_option_into_a_usage_error(tmp_path, args, flag):
    out = tmp_path / "w.toolc"
    res = CliRunner().invoke(main, ["compile", str(WEATHER), *args, "-o", str(out)])
    assert res.exit_code == 2, res.output
    assert flag in res.output, res.output
    assert "Traceback" not in res.output
    assert not out.exists()
    assert not list(tmp_path.glob(".toolc-*"))


def test_cli_graph_turns_a_bad_option_into_a_usage_error(tmp_path):
    out = tmp_path / "g.dot"
    res = CliRunner().invoke(main, ["graph", str(WEATHER), "-o", str(out), "--tool-choice", ""])
    assert res.exit_code == 2 and "--tool-choice" in res.output, res.output
    assert not out.exists()


def test_cli_timeout_is_validated_but_not_recorded(tmp_path):
    out = tmp_path / "w.toolc"
    res = CliRunner().invoke(main, ["compile", str(WEATHER), "--timeout", "123.5", "-q",
                                    "--no-cache", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert toolc.load(out).header["options"] == CompileOptions().header_options()


# -- tool_choice against the tools -----------------------------------------------------------

def test_tool_choice_naming_no_tool_is_an_invalid_option():
    with pytest.raises(InvalidOptionError) as e:
        toolc.compile_tools(str(WEATHER), tool_choice="get_weather")
    assert e.value.option == "tool_choice"
    assert "get_weather" in str(e.value)
    assert "get_current_weather" in str(e.value) and "get_forecast" in str(e.value)


def test_tool_choice_naming_a_tool_is_recorded_and_narrows_the_automaton():
    one = toolc.compile_tools(str(WEATHER), tool_choice="get_forecast")
    both = toolc.compile_tools(str(WEATHER), tool_choice="required")
    assert one.header["options"]["tool_choice"] == "get_forecast"
    assert one.num_states < both.num_states
