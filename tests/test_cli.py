"""toolc/cli.py through click's CliRunner: help, compile, inspect, and how failures look."""

from __future__ import annotations

import json
import os
import shutil

import click
import pytest
from click.testing import CliRunner

import toolc
import toolc.runtime.fileformat
from conftest import object_schema, tools_list
from toolc.cli import main

HEADER_KEYS = {"fingerprint", "vocab_size", "logits_size", "eos_token_ids", "tools",
               "tools_hash", "format", "options", "num_states"}


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def one_error_line(result, *needles) -> str:
    """The stderr of a failed command: exactly one line, "Error: ...", naming ``needles``."""
    assert result.exit_code == 1, (result.exit_code, result.output, result.exception)
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: ")
    for n in needles:
        assert str(n) in lines[0]
    assert "Traceback" not in result.output
    return lines[0]


@pytest.fixture(scope="module")
def compiled(tmp_path_factory, weather_path):
    """``toolc compile`` of schemas/weather.json into a temp folder, run once."""
    out = tmp_path_factory.mktemp("cli") / "weather.toolc"
    result = run("compile", weather_path, "--tokenizer", "qwen", "-o", out)
    return result, out


# -- help -------------------------------------------------------------------------------------

def _commands():
    return [[]] + [[name] for name in sorted(main.commands)]


@pytest.mark.parametrize("cmd", _commands(), ids=lambda c: " ".join(c) or "toolc")
def test_every_command_has_help_with_an_example(cmd):
    result = run(*cmd, "--help")
    assert result.exit_code == 0
    assert "Example:" in result.output
    assert "toolc " in result.output.split("Example:")[1]
    assert run(*cmd, "-h").output == result.output


def test_the_commands_are_there():
    assert {"compile", "inspect"} <= set(main.commands)


def test_version():
    result = run("--version")
    assert result.exit_code == 0
    assert toolc.__version__ in result.output


# -- compile ----------------------------------------------------------------------------------

def test_compile_writes_the_artifact_and_a_summary(compiled):
    result, out = compiled
    assert result.exit_code == 0, result.output
    assert out.is_file()
    art = toolc.load(out)
    assert art.tool_names == ["get_current_weather", "get_forecast"]
    assert art.format == "hermes"
    summary = result.stderr.strip()
    assert summary.startswith(f"{out}: 2 tools, ")
    assert f"{art.num_states:,} states" in summary
    assert f"{out.stat().st_size:,} bytes" in summary
    assert result.stdout == ""


def test_compile_is_the_same_as_the_library(compiled, weather_artifact):
    _, out = compiled
    assert out.read_bytes() == weather_artifact.to_bytes()


def test_compile_default_output_path(tmp_path, monkeypatch, weather_path):
    shutil.copy(weather_path, tmp_path / "my-tools.json")
    monkeypatch.chdir(tmp_path)
    result = run("compile", "my-tools.json", "--quiet")
    assert result.exit_code == 0, result.output
    out = tmp_path / "artifacts" / "my-tools.toolc"
    assert out.is_file()
    assert toolc.load(out).tool_names == ["get_current_weather", "get_forecast"]
    assert result.output == ""                       # --quiet: no summary
    assert sorted(os.listdir(tmp_path / "artifacts")) == ["my-tools.toolc"]


def test_compile_options_reach_the_header(tmp_path):
    path = tmp_path / "one.json"
    path.write_text(json.dumps(tools_list(("ping", object_schema({"n": {"type": "integer"}})))))
    out = tmp_path / "one.toolc"
    result = run("compile", path, "-o", out, "--tool-choice", "required", "--no-parallel",
                 "--max-depth", "2", "-q")
    assert result.exit_code == 0, result.output
    opts = toolc.load(out).header["options"]
    assert opts["tool_choice"] == "required"
    assert opts["parallel"] is False
    assert opts["max_depth"] == 2


# -- inspect ----------------------------------------------------------------------------------

def test_inspect(compiled, weather_artifact):
    _, out = compiled
    result = run("inspect", out)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    by_key = {line.split()[0]: line.split(None, 1)[1] for line in lines}
    assert HEADER_KEYS <= set(by_key)
    assert by_key["fingerprint"] == weather_artifact.fingerprint
    assert by_key["vocab_size"] == "151669"
    assert by_key["tools"] == '["get_current_weather", "get_forecast"]'


def test_inspect_json(compiled, weather_artifact, qwen):
    _, out = compiled
    result = run("inspect", out, "--json")
    assert result.exit_code == 0, result.output
    info = json.loads(result.stdout)
    assert HEADER_KEYS <= set(info)
    assert info["fingerprint"] == qwen.fingerprint
    assert info["vocab_size"] == 151669 and info["logits_size"] == 151936
    assert info["eos_token_ids"] == [151645, 151643]
    assert info["tools"] == ["get_current_weather", "get_forecast"]
    assert info["format"] == "hermes"
    assert info["num_states"] == weather_artifact.num_states
    assert len(info["tools_hash"]) == 64
    assert info["options"]["tool_choice"] == "auto"
    assert info["file_bytes"] == out.stat().st_size
    assert info["classes"] >= 1 and info["derived_classes"] == 0


def test_inspect_a_damaged_file(tmp_path, compiled):
    _, out = compiled
    bad = tmp_path / "bad.toolc"
    bad.write_bytes(out.read_bytes()[:1000])
    one_error_line(run("inspect", bad), bad)
    one_error_line(run("inspect", tmp_path / "missing.toolc"), tmp_path / "missing.toolc")


# -- failures ---------------------------------------------------------------------------------

def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("content, needle", [
    ('[{"name": "a",\n', "invalid JSON"),
    ("[]", "empty"),
    (json.dumps(tools_list("a", "a")), "duplicate tool name"),
    (json.dumps(tools_list(("a", {"type": 5}))), "/0/function/parameters/type"),
    (json.dumps(tools_list(("a", object_schema({"q": {"type": "array", "uniqueItems": True}})))),
     "/0/function/parameters/properties/q/uniqueItems"),
])
def test_bad_tools_file_is_one_error_line(tmp_path, content, needle):
    path = _write(tmp_path / "tools.json", content)
    one_error_line(run("compile", path, "-o", tmp_path / "out.toolc"), path, needle)


def test_missing_tools_file(tmp_path):
    path = tmp_path / "nope.json"
    one_error_line(run("compile", path, "-o", tmp_path / "out.toolc"), path)


def test_unknown_tokenizer_is_one_error_line(tmp_path, weather_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    one_error_line(run("compile", weather_path, "-t", "./no-such-tokenizer", "-o",
                       tmp_path / "x.toolc"), "./no-such-tokenizer")


def test_unknown_tool_choice_is_one_error_line(tmp_path, weather_path):
    one_error_line(run("compile", weather_path, "--tool-choice", "nobody", "-o",
                       tmp_path / "x.toolc"), "nobody")


@pytest.mark.parametrize("args", [["compile", "--bogus", "x.json"], ["inspect", "--nope", "x"],
                                  ["frobnicate"], ["compile"],
                                  ["compile", "x.json", "--max-depth", "-1"],
                                  ["compile", "x.json", "--format", "gorilla"]])
def test_usage_errors_exit_2(args):
    result = run(*args)
    assert result.exit_code == 2
    assert "Error:" in result.stderr


def test_failed_compile_leaves_nothing_behind(tmp_path):
    path = _write(tmp_path / "tools.json",
                  json.dumps(tools_list(("a", object_schema({"q": {"$dynamicRef": "#a"}})))))
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    one_error_line(run("compile", path, "-o", out_dir / "a.toolc"), "$dynamicRef")
    assert os.listdir(out_dir) == []


def test_failed_write_leaves_no_temp_file_and_keeps_the_old_artifact(tmp_path, monkeypatch,
                                                                      weather_path):
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = out_dir / "w.toolc"
    out.write_bytes(b"the previous artifact")

    def disk_full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(toolc.runtime.fileformat.os, "fsync", disk_full)
    monkeypatch.setenv("TOOLC_CACHE_DIR", "off")
    one_error_line(run("compile", weather_path, "-o", out, "-q"), out, "No space left")
    assert os.listdir(out_dir) == ["w.toolc"]
    assert out.read_bytes() == b"the previous artifact"


def test_output_under_a_file_is_one_error_line(tmp_path, weather_path):
    blocker = _write(tmp_path / "not-a-dir", "")
    out = blocker / "w.toolc"
    one_error_line(run("compile", weather_path, "-o", out, "-q"), out)


def test_library_errors_are_click_exceptions():
    # the boundary turns ToolcError into ClickException (exit 1), not a traceback
    from toolc.cli import _fail
    e = _fail(toolc.InvalidToolsError("bad", file="f.json"))
    assert isinstance(e, click.ClickException)
    assert e.exit_code == 1
    assert e.format_message() == "f.json: bad"
