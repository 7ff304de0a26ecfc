"""Hostile tools files end in an artifact or in one clear line: never a traceback, a hang or a
partial file.

``toolc.compile_tools`` and ``toolc compile`` are fed arbitrary JSON, schema-shaped documents
with keywords of the wrong types, nasty names and keys, duplicates, deep nesting and
self-referencing ``$ref``s (see fuzz_strategies.py). A CI-sized run is part of ``make test``;
``make fuzz`` runs 10,000+ cases (TOOLC_FUZZ_EXAMPLES).
"""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings, strategies as st

import toolc
from toolc.cli import main
from toolc.crash import MARKER
from toolc.errors import ToolcError, _Located

import fuzz_strategies as fz

LOG = os.environ.get("TOOLC_FUZZ_LOG")   # `make fuzz` writes running totals here
TIMEOUT = 60     # seconds per compile: a hang fails the test instead of stalling CI
STATS: dict = {"cases": 0, "compiled": 0, "refused": 0, "reached_walk": 0}


MEMORY_CAP = 3 << 30     # bytes of address space a fuzz case may add to the process


@pytest.fixture(autouse=True)
def memory_cap():
    """Every case runs under a soft RLIMIT_AS of the process's size now plus MEMORY_CAP: a
    blow-up is a MemoryError that fails the case, not a machine out of memory."""
    import resource
    with open("/proc/self/status") as fh:
        size = next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmSize:"))
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = size + MEMORY_CAP
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


class ReachedWalk(Exception):
    """Raised in place of the vocabulary walk by the front-end fuzz: the input made it through
    parsing, schema compilation and determinization to a valid DFA."""


@pytest.fixture
def front_end_only(monkeypatch):
    import toolc.compiler

    def stop(dfa, vocab, symbols, progress=None, max_runs=None, sparse_twins=False,
             blocks=None):
        assert dfa.num_states > 0
        raise ReachedWalk

    monkeypatch.setattr(toolc.compiler, "walk_parts", stop)


def fn(name, params):
    return [{"type": "function", "function": {"name": name, "parameters": params}}]


def outcome(value, vocab, file: str | None = None, **opts):
    """Compile ``value``; return the Artifact or the refusal, checking the refusal's shape."""
    STATS["cases"] += 1
    if isinstance(value, str):      # a str is a path to compile_tools; fuzz it as content
        value = [value]
    if LOG and STATS["cases"] % 250 == 0:
        with open(LOG, "a") as fh:
            fh.write(json.dumps(STATS) + "\n")
    try:
        art = toolc.compile_tools(value, vocab, timeout=TIMEOUT, source=file, **opts)
    except ReachedWalk:
        STATS["reached_walk"] += 1
        return None
    except (ToolcError, ValueError) as e:
        check_refusal(e, file)
        STATS["refused"] += 1
        return e
    STATS["compiled"] += 1
    again = toolc.Artifact.from_bytes(art.to_bytes())
    assert again.num_states == art.num_states and again.tool_names == art.tool_names
    return art


def check_refusal(e: Exception, file: str | None) -> None:
    msg = str(e)
    assert msg and "\n" not in msg and "\r" not in msg, repr(msg)
    assert "Traceback" not in msg and MARKER not in msg, msg     # never the catch-all
    assert isinstance(e, ToolcError), f"a bare {type(e).__name__}: {msg}"
    if isinstance(e, _Located):
        assert e.pointer is not None, f"no JSON pointer in {msg!r}"
        if file:
            assert msg.startswith(file), msg
    if isinstance(e, toolc.BudgetExceededError) and "timed out" in msg:
        pytest.fail(f"a compile hit the {TIMEOUT} s timeout: {msg}")


def _settings(n: int):
    return settings(max_examples=fz.EXAMPLES or n, deadline=None, derandomize=fz.EXAMPLES is None,
                    suppress_health_check=list(HealthCheck), database=None)


@_settings(200)
@given(fz.tools_values())
def test_front_end_never_crashes(qwen, front_end_only, value):
    """Everything before the vocabulary walk (parsing, schemas, NFA, DFA): cheap, so many cases.
    max_depth 2: a free-form ``{}`` at the default depth 4 takes seconds to determinize;
    max_states 20,000: the budgets refuse blow-ups the same way, ten times sooner."""
    outcome(value, qwen, max_depth=2, max_states=20_000)


@pytest.mark.slow
@_settings(15)
@given(fz.tools_values())
@example(fn("t", fz.SELF_REFERENCE))
@example(fn("t", fz.ROOT_REFERENCE))
@example(fn("t", fz.MUTUAL_REFERENCE))
@example(fn("t", fz.nested(200)))
@example(fn("t", fz.nested(40)))
@example(fn("t", fz.any_of_tower(20)))
@example([{"name": "a" * 100_000}])
@example([{"name": n} for n in ("a", "a", "b")])
@example({"tools": []})
@example([{"name": "t", "parameters": {"type": "object", "properties": {k: {"type": "string"}
                                                                     for k in fz.NASTY_KEYS}}}])
def test_compile_tools_never_crashes(qwen, value):
    """The whole pipeline, to an artifact; max_depth 2 keeps free-form schemas quick."""
    outcome(value, qwen, max_depth=2, max_states=20_000)


def test_nasty_property_names_compile_and_round_trip(qwen):
    """Keys made of JSON syntax are escaped in the automaton: a call using them is accepted."""
    # (a key spelling "<tool_call>" is tokenized as the special token, which strings refuse)
    props = {k: {"type": "integer"} for k in fz.NASTY_KEYS if k and "<tool_call>" not in k}
    art = outcome(fn("t", {"type": "object", "properties": props, "required": list(props)}),
                  qwen)
    assert isinstance(art, toolc.Artifact)
    args = {k: i for i, k in enumerate(props)}
    text = ('<tool_call>\n{"name": "t", "arguments": ' + json.dumps(args, ensure_ascii=False)
            + "}\n</tool_call><|im_end|>")
    m = art.matcher()
    for t in qwen.encode(text):
        m.advance(t)
    assert m.is_terminated()


@pytest.mark.parametrize("name", [n for n in fz.NASTY_NAMES if n])
def test_nasty_tool_names_compile_or_are_refused_by_name(qwen, name):
    """Found by this test: a 10,000-character name made minimization quadratic (over 60 s);
    names are now capped at 128 characters."""
    result = outcome(fn(name, {"type": "object", "properties": {}}), qwen)
    if isinstance(result, Exception):
        assert "name" in str(result)


def run_cli(tmp_path, data: bytes, *extra):
    src = tmp_path / "tools.json"
    src.write_bytes(data)
    out = tmp_path / "out" / "a.toolc"
    result = CliRunner().invoke(main, ["compile", str(src), "-q", "-o", str(out),
                                       "--max-states", "20000", "--max-depth", "2",
                                       "--timeout", str(TIMEOUT), *extra])
    leftovers = [p for p in (tmp_path / "out").glob("*")] if (tmp_path / "out").exists() else []
    return result, out, leftovers


def check_cli(result, out, leftovers, src_name="tools.json"):
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    assert "Traceback" not in result.output
    assert MARKER not in result.output, result.output       # the catch-all only guards
    if result.exit_code == 0:
        assert toolc.load(out).num_states > 0
        assert [p.name for p in leftovers] == ["a.toolc"]
        return "compiled"
    assert result.exit_code in (1, 2), result.exit_code
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    if result.exit_code == 1:
        assert src_name in lines[0], lines[0]
    assert leftovers == [], f"a failed compile left {leftovers}"
    return "refused"


_raw_files = st.one_of(
    fz.tools_values().map(lambda v: json.dumps(v, ensure_ascii=False).encode("utf-8",
                                                                              "surrogatepass")),
    fz.tools_values().map(lambda v: json.dumps(v).encode()),      # surrogates as \ud800
    st.binary(max_size=40),
    fz.tools_values().map(lambda v: json.dumps(v).encode()[:-1]),          # truncated
    st.sampled_from([b"\xff\xfe[]", b"[" * 100_000 + b"]" * 100_000, b"", b"null", b"\x00",
                     b'[{"name": "t", "parameters": {"type": "object"}}]\xc3']),
)


@_settings(15)
@given(data=_raw_files)
def test_cli_compile_never_crashes(tmp_path_factory, qwen, data):
    tmp = tmp_path_factory.mktemp("fuzz")
    check_cli(*run_cli(tmp, data))


def test_cli_usage_errors_exit_2(tmp_path):
    result, out, left = run_cli(tmp_path, b"[]", "--timeout", "-1")
    assert result.exit_code == 2 and left == []
    result, out, left = run_cli(tmp_path, b"[]", "--max-states", "zero")
    assert result.exit_code == 2 and left == []


def test_pointer_through_a_control_character_key_stays_on_one_line(qwen):
    """Found by the fuzzer: a property named "a\\nb" put a raw newline into the error line."""
    e = outcome(fn("t", {"type": "object", "properties": {
        "a\nb\u2028": {"type": "array", "uniqueItems": True}}}), qwen)
    assert isinstance(e, toolc.UnsupportedSchemaError)
    assert "a\\nb\\u2028" in str(e)


def test_the_memory_cap_holds():
    """The autouse cap is in force: an allocation past it fails here, not on the machine."""
    with pytest.raises(MemoryError):
        bytearray(MEMORY_CAP + (1 << 30))
