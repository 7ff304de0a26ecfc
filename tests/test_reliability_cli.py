"""Issue 17's findings at the compile boundary, each a regression test: every failure one
located line (the catch-all guards, it is never the answer), bounded reading of the tools
file, deadlines that are numbers, and no data loss through -o."""

from __future__ import annotations

import json
import os
import threading

import pytest
from click.testing import CliRunner

import toolc
from toolc.cli import main
from toolc.crash import MARKER, bug_line, where
from toolc.errors import InvalidOptionError, InvalidToolsError, UnsupportedSchemaError


def fn(params, name="t", **extra):
    return [{"type": "function", "function": {"name": name, "parameters": params, **extra}}]


def prop(schema):
    return {"type": "object", "properties": {"p": schema}, "required": ["p"]}


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def one_line(result, code=1) -> str:
    assert result.exit_code == code, (result.exit_code, result.output, result.exception)
    lines = result.stderr.strip().splitlines()
    assert "Traceback" not in result.output and MARKER not in result.output, result.output
    assert lines[-1].startswith("Error: ")
    if code == 1:
        assert len(lines) == 1, result.stderr
    return lines[-1]


# -- the catch-all ----------------------------------------------------------------------------

def test_an_unexpected_exception_in_compile_is_one_located_line(tmp_path, weather_path,
                                                                monkeypatch):
    import toolc.compiler

    def boom(*a, **k):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(toolc.compiler, "compile_tools", boom)
    r = run("compile", weather_path, "-o", tmp_path / "w.toolc", "--no-cache", "-q")
    assert r.exit_code == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and MARKER in lines[0] and str(weather_path) in lines[0]
    assert "RecursionError" in lines[0] and not (tmp_path / "w.toolc").exists()


def test_an_unexpected_exception_in_any_command_is_one_line(weather_file, monkeypatch):
    import toolc.runtime

    def boom(*a, **k):
        raise MemoryError()

    monkeypatch.setattr(toolc.runtime, "load", boom)
    r = run("inspect", weather_file)
    assert r.exit_code == 1 and "Traceback" not in r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and MARKER in lines[0] and "MemoryError" in lines[0]


def test_the_bug_line_names_the_tool_and_pointer_being_compiled():
    from toolc.tools import parse_tools
    tool = parse_tools(fn({"type": "object"}, name="weather"))[0]

    def inner(schema, ptr):
        raise UnicodeError("x\ny")

    def outer(tool):
        inner({}, "/properties/a")

    with pytest.raises(UnicodeError) as e:
        outer(tool)
    assert where(e.value) == {"tool": "weather", "pointer": "/properties/a"}

    def with_source(source):
        raise KeyError("k")

    with pytest.raises(KeyError) as k:
        with_source("tools/a.json")
    line = bug_line(k.value)       # a frame's local names the file when no one else does
    assert line.startswith("tools/a.json, ") and "internal error (KeyError" in line
    line = bug_line(e.value, "tools\n.json")
    assert "\n" not in line and "tool 'weather'" in line and "at /properties/a" in line
    assert line.startswith("tools\\n.json, ")


# -- located refusals -------------------------------------------------------------------------

SURROGATES = {
    "name": fn({"type": "object"}, name="a\ud800"),
    "description": fn({"type": "object"}, description="x\ud800"),
    "enum": fn(prop({"enum": ["\ud800"]})),
    "const": fn(prop({"const": "\udc00x"})),
    "property": fn({"type": "object", "properties": {"\ud800": {"type": "string"}}}),
    "pattern": fn(prop({"type": "string", "pattern": "\ud800"})),
}


@pytest.mark.parametrize("where_", sorted(SURROGATES))
def test_a_lone_surrogate_is_refused_at_its_pointer(qwen, tmp_path, where_):
    value = SURROGATES[where_]
    with pytest.raises(InvalidToolsError) as e:
        toolc.compile_tools(value, qwen)
    assert "lone surrogate" in str(e.value) and e.value.pointer.startswith("/0/function/")
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(value))           # written as \ud800 escapes: valid JSON
    line = one_line(run("compile", path, "-o", tmp_path / "x.toolc", "-q", "--no-cache"))
    assert str(path) in line and "lone surrogate" in line


def test_an_integer_of_5000_digits_is_refused_with_its_place(qwen, tmp_path):
    path = tmp_path / "tools.json"
    path.write_text('[{"type": "function", "function": {"name": "a", "parameters": '
                    '{"type": "integer", "maximum": ' + "9" * 5000 + "}}}]")
    line = one_line(run("compile", path, "-o", tmp_path / "x.toolc", "-q", "--no-cache"))
    assert "5,000" in line and "line 1 column" in line and str(path) in line
    with pytest.raises(InvalidToolsError, match="digits"):
        toolc.compile_tools(fn(prop({"type": "integer", "maximum": 10 ** 5000})), qwen)


def test_a_percent_encoded_ref_resolves(qwen):
    art = toolc.compile_tools(fn({"type": "object", "$defs": {"a b": {"type": "integer"}},
                                  "properties": {"p": {"$ref": "#/$defs/a%20b"}},
                                  "required": ["p"]}), qwen, format="json")
    assert art.num_states > 1


@pytest.mark.parametrize("pattern,needle", [("(" * 200 + "a" + ")" * 200, "nests too deeply"),
                                            ("a{1001,1000}", "cannot be compiled")])
def test_pathological_patterns_are_refused_at_their_pointer(qwen, pattern, needle):
    with pytest.raises(UnsupportedSchemaError) as e:
        toolc.compile_tools(fn(prop({"type": "string", "pattern": pattern})), qwen)
    assert needle in str(e.value) and e.value.pointer.endswith("/properties/p/pattern")
    assert e.value.tool == "t"


def test_max_depth_beyond_any_budget_is_refused_up_front(qwen, tmp_path, weather_path):
    with pytest.raises(InvalidOptionError, match="at most 64"):
        toolc.compile_tools(fn(prop({})), qwen, max_depth=200)
    r = run("compile", weather_path, "--max-depth", "200", "-o", tmp_path / "x.toolc")
    assert r.exit_code == 2 and "--max-depth" in r.output


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "-1"])
def test_a_timeout_that_is_not_a_finite_positive_number_is_a_usage_error(tmp_path,
                                                                         weather_path, value):
    r = run("compile", weather_path, "--timeout", value, "-o", tmp_path / "x.toolc")
    assert r.exit_code == 2 and "--timeout" in r.output and not (tmp_path / "x.toolc").exists()
    with pytest.raises(InvalidOptionError):
        toolc.CompileOptions(timeout=float(value))


# -- reading inputs ---------------------------------------------------------------------------

@pytest.mark.parametrize("flag", [None, "--format-file"])
def test_dev_zero_as_an_input_is_refused_unread(tmp_path, weather_path, flag):
    args = ["/dev/zero"] if flag is None else [weather_path, flag, "/dev/zero"]
    line = one_line(run("compile", *args, "-o", tmp_path / "x.toolc"))
    assert "/dev/zero" in line and "not a regular file" in line


def test_a_fifo_as_the_tools_file_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "tools.json"
    os.mkfifo(fifo)
    out = []
    t = threading.Thread(target=lambda: out.append(run("compile", fifo, "-o",
                                                       tmp_path / "x.toolc")), daemon=True)
    t.start()
    t.join(20)
    assert out, "compile blocked on a FIFO"
    assert "not a regular file" in one_line(out[0])


def test_a_tools_file_larger_than_the_limit_is_refused_unread(tmp_path, monkeypatch):
    import toolc.tools
    path = tmp_path / "tools.json"
    path.write_text("[" + " " * 5000 + "]")
    monkeypatch.setattr(toolc.tools, "MAX_TOOLS_BYTES", 1000)
    with pytest.raises(InvalidToolsError, match="larger than any tools file"):
        toolc.tools.load_tools_file(path)


def test_a_newline_in_the_tools_path_stays_on_one_line(tmp_path):
    path = tmp_path / "a\nb.json"
    path.write_text("[")
    line = one_line(run("compile", path, "-o", tmp_path / "x.toolc"))
    assert "a\\nb.json" in line


# -- no data loss -----------------------------------------------------------------------------

def test_output_naming_the_tools_file_is_refused(tmp_path, weather_path):
    src = tmp_path / "w.json"
    src.write_bytes(weather_path.read_bytes())
    before = src.read_bytes()
    line = one_line(run("compile", src, "-o", src))
    assert "input file" in line and src.read_bytes() == before


def test_output_naming_a_device_is_refused(tmp_path, weather_path):
    line = one_line(run("compile", weather_path, "-o", "/dev/null"))
    assert "not a regular file" in line and os.path.exists("/dev/null")


def test_output_under_a_file_is_refused(tmp_path, weather_path):
    (tmp_path / "w.json").write_text("[]")
    line = one_line(run("compile", weather_path, "-o", tmp_path / "w.json" / "x.toolc"))
    assert "is not a directory" in line


def test_several_inputs_need_a_directory(tmp_path, weather_path):
    other = tmp_path / "other.json"
    other.write_bytes(weather_path.read_bytes())
    r = run("compile", weather_path, other, "-o", tmp_path / "x.toolc")
    assert r.exit_code == 2 and not (tmp_path / "x.toolc").exists()
    r = run("compile", weather_path, other, "-o", str(tmp_path / "new") + "/", "-q")
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in (tmp_path / "new").iterdir()) == ["other.toolc",
                                                                     "weather.toolc"]


def test_two_inputs_of_one_name_are_refused(tmp_path, weather_path):
    (tmp_path / "d").mkdir()
    twin = tmp_path / "d" / "weather.json"
    twin.write_bytes(weather_path.read_bytes())
    line = one_line(run("compile", weather_path, twin, "-o", str(tmp_path) + "/"))
    assert "output of two tools files" in line


def test_every_long_stage_checks_the_deadline(qwen, monkeypatch):
    """The one deadline is checked inside determinization, minimization, the walk and the
    encoding (and, in the schema compiler, per subschema): a compile visits all of them."""
    from toolc import budget
    seen = set()
    real = budget.check

    def spy(stage, pointer=None):
        seen.add(stage)
        return real(stage, pointer)

    monkeypatch.setattr(budget, "check", spy)
    toolc.compile_tools(fn(prop({"type": "string", "maxLength": 3})), qwen, timeout=600)
    for stage in ("determinizing the automaton", "minimizing the automaton",
                  "walking the vocabulary", "encoding the artifact"):
        assert stage in seen, (stage, seen)
