"""The CI and debugging commands: compile --check, several files in parallel, the artifact
cache, trace, sample and graph."""

from __future__ import annotations

import json
import os
import shutil
import xml.dom.minidom

import pytest
from click.testing import CliRunner

import toolc
from conftest import object_schema, tools_list
from helpers import check_output, load_tools
from toolc.cli import main
from toolc.debug.locate import locate


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv("TOOLC_CACHE_DIR", str(d))
    return d



# -- compile --check, several files, cache ----------------------------------------------------

def test_check_passes_for_a_fresh_artifact_and_fails_when_stale(tmp_path, weather_path,
                                                                weather_artifact):
    tools = tmp_path / "weather.json"
    shutil.copy(weather_path, tools)
    out = tmp_path / "weather.toolc"
    weather_artifact.save(out)
    before = out.read_bytes()
    ok = run("compile", tools, "-o", out, "--check")
    assert ok.exit_code == 0, ok.output
    assert "up to date" in ok.stderr
    # other options: stale, and the file is not rewritten
    r = run("compile", tools, "-o", out, "--check", "--tool-choice", "required")
    assert r.exit_code == 1 and "options differ" in r.stderr
    data = json.loads(tools.read_text())
    data[0]["function"]["parameters"]["properties"]["city"]["type"] = "integer"
    tools.write_text(json.dumps(data))
    r = run("compile", tools, "-o", out, "--check")
    assert r.exit_code == 1 and "tools_hash differs" in r.stderr
    assert r.stderr.strip().splitlines()[-1].startswith("Error: 1 of 1 artifacts are stale")
    assert out.read_bytes() == before
    r = run("compile", tools, "-o", tmp_path / "missing.toolc", "--check")
    assert r.exit_code == 1 and "does not exist" in r.stderr


def test_check_notices_another_tokenizer(tmp_path, weather_path, weather_artifact):
    out = tmp_path / "w.toolc"
    weather_artifact.save(out)
    r = run("compile", weather_path, "-o", out, "--check", "-t",
            "toolc/data/qwen3/does-not-exist.json")
    assert r.exit_code == 1 and "does-not-exist" in r.stderr


def test_several_files_in_parallel_then_from_the_cache(tmp_path, cache_dir, weather_artifact):
    paths = []
    for name in ("weather", "math"):
        p = tmp_path / f"{name}.json"
        shutil.copy(f"schemas/{name}.json", p)
        paths.append(p)
    out = tmp_path / "out"
    out.mkdir()
    r = run("compile", *paths, "-o", out, "-j", "2")
    assert r.exit_code == 0, r.output
    assert sorted(os.listdir(out)) == ["math.toolc", "weather.toolc"]
    assert (out / "weather.toolc").read_bytes() == weather_artifact.to_bytes()
    assert "(from the cache)" not in r.stderr
    math_bytes = (out / "math.toolc").read_bytes()
    assert toolc.load(out / "math.toolc").tool_names == [
        t["function"]["name"] for t in load_tools("math")]
    (out / "math.toolc").unlink()
    r = run("compile", *paths, "-o", out)
    assert r.exit_code == 0, r.output
    assert r.stderr.count("(from the cache)") == 2
    assert (out / "math.toolc").read_bytes() == math_bytes
    r = run("compile", *paths, "-o", out, "--check")
    assert r.exit_code == 0 and r.stderr.count("up to date") == 2


def test_a_damaged_cache_entry_is_recompiled(tmp_path, cache_dir, weather_path,
                                             weather_artifact):
    out = tmp_path / "w.toolc"
    assert run("compile", weather_path, "-o", out, "-q").exit_code == 0
    (entry,) = [p for p in cache_dir.iterdir() if p.name.startswith("artifact-")]
    entry.write_bytes(entry.read_bytes()[:-10])
    r = run("compile", weather_path, "-o", out)
    assert r.exit_code == 0 and "(from the cache)" not in r.stderr
    assert out.read_bytes() == weather_artifact.to_bytes()


def test_one_bad_file_among_several(tmp_path, cache_dir, weather_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(tools_list(("a", object_schema({"q": {"type": "array",
                                                                "uniqueItems": True}})))))
    out = tmp_path / "out"
    out.mkdir()
    r = run("compile", weather_path, bad, "-o", out, "-j", "1", "-q")
    assert r.exit_code == 1
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("Error:")]
    assert any("bad.json" in e and "uniqueItems" in e for e in errors)
    assert os.listdir(out) == ["weather.toolc"]


# -- trace ----------------------------------------------------------------------------------

def test_trace_accepts_a_valid_call(weather_file):
    text = ('<tool_call>\\n{"name": "get_forecast", "arguments": {"city": "Paris", "days": 2}}'
            '\\n</tool_call><|im_end|>')
    r = run("trace", weather_file, "-e", text)
    assert r.exit_code == 0, r.output
    assert "accepted: the text ends with EOS" in r.stdout
    assert "'<tool_call>'" in r.stdout and "REJECT" not in r.stdout


@pytest.mark.parametrize("text,where", [
    ('<tool_call>\\n{"name": "get_weather"', "tool name (so far 'get"),
    ('<tool_call>\\n{"name": "get_forecast", "arguments": {"city": 7',
     "tool 'get_forecast', arguments at /city"),
    ('<tool_call>\\n{"name": "get_forecast", "arguments": {"city": "x", "days": "3"',
     "tool 'get_forecast', arguments at /days"),
    ("Hello </tool_call>", "free text"),
])
def test_trace_names_where_a_rejection_falls(weather_file, text, where):
    r = run("trace", weather_file, "-e", text)
    assert r.exit_code == 1
    assert "REJECT" in r.stdout and "allowed there" in r.stdout
    assert where in r.stderr, r.stderr
    assert r.stderr.startswith("Error: ") and len(r.stderr.strip().splitlines()) == 1


def test_trace_refuses_another_vocabulary(weather_file, tmp_path):
    tok = tmp_path / "tok.json"
    tok.write_text(json.dumps({"model": {"type": "WordLevel", "vocab": {"a": 0, "b": 1},
                                         "unk_token": "a"},
                               "added_tokens": [{"id": 2, "content": "</s>", "special": True,
                                                 "single_word": False, "lstrip": False,
                                                 "rstrip": False, "normalized": False}]}))
    r = run("trace", weather_file, "hello", "-t", tok)
    assert r.exit_code == 1 and "fingerprint" in r.stderr


def test_locate_tracks_nested_pointers():
    head = '<tool_call>\n{"name": "f", "arguments": '
    assert locate(head + '{"a": [1, {"b/c": "x').pointer == "/a/1/b~1c"
    assert locate(head + '{"a": "x, y", "b": ').pointer == "/b"
    assert locate(head + '{"a": "q\\"uote", "b": [').pointer == "/b/0"
    assert locate(head + '{}}\n').kind == "call end"
    assert locate("text").kind == "free text"


# -- sample ---------------------------------------------------------------------------------

def test_sample_outputs_are_accepted_and_valid(weather_file, weather_artifact):
    r = run("sample", weather_file, "-n", "6", "--seed", "5", "--json")
    assert r.exit_code == 0, r.output
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    assert len(lines) == 6
    tools = load_tools("weather")
    for s in lines:
        m = weather_artifact.matcher()
        for t in s["token_ids"]:
            m.advance(t)
        assert m.is_terminated()
        check_output(s["text"], tools)
    assert sum(len(s["tool_calls"]) for s in lines) > 0
    again = run("sample", weather_file, "-n", "6", "--seed", "5", "--json")
    assert again.stdout == r.stdout


def test_sample_plain_text(weather_file):
    r = run("sample", weather_file, "-n", "2")
    assert r.exit_code == 0 and r.stdout.count("--- sample") == 2


# -- graph ----------------------------------------------------------------------------------

def test_graph_of_a_tools_file_svg_and_dot(tmp_path, weather_path):
    svg = tmp_path / "fsm.svg"
    r = run("graph", weather_path, "-o", svg)
    assert r.exit_code == 0, r.output
    doc = xml.dom.minidom.parse(str(svg))
    texts = " ".join(t.firstChild.data for t in doc.getElementsByTagName("text")
                     if t.firstChild)
    assert "free text" in texts and "get_forecast/days" in texts
    assert "name:get_" in texts                      # the name trie
    dot = tmp_path / "fsm.dot"
    assert run("graph", weather_path, "-o", dot, "--tool", "get_forecast").exit_code == 0
    text = dot.read_text()
    assert text.startswith("digraph toolc {") and "get_forecast/city" in text
    assert "get_current_weather/" not in text


def test_graph_of_an_artifact(tmp_path, weather_file):
    out = tmp_path / "tok.dot"
    r = run("graph", weather_file, "-o", out, "--tool", "get_current_weather")
    assert r.exit_code == 0, r.output
    text = out.read_text()
    assert "token-level" in text and "get_current_weather/unit" in text


def test_graph_errors(tmp_path, weather_path):
    r = run("graph", weather_path, "-o", tmp_path / "x.svg", "--tool", "nobody")
    assert r.exit_code == 1 and "nobody" in r.stderr and "get_forecast" in r.stderr
    r = run("graph", weather_path, "-o", tmp_path / "x.png")
    assert r.exit_code == 2
    r = run("graph", weather_path, "-o", tmp_path / "x.svg", "--max-nodes", "10")
    assert r.exit_code == 1 and "--tool" in r.stderr
    assert not (tmp_path / "x.svg").exists()


def test_importing_the_adapters_loads_no_engine():
    import subprocess
    import sys
    code = ("import sys, toolc, toolc.integrations, toolc.integrations.rows, "
            "toolc.integrations.llama_cpp, toolc.debug.explore, toolc.debug.locate, "
            "toolc.debug.sample; "
            "print(sorted(m for m in ('torch', 'transformers', 'vllm', 'llama_cpp', "
            "'tokenizers', 'jsonschema', 'click') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("cmd", ["trace", "sample", "graph"])
def test_help_has_an_example(cmd):
    r = run(cmd, "--help")
    assert r.exit_code == 0 and "Example:" in r.output
