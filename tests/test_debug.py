"""toolc/debug/ (locate, trace, sample, graph), the artifact's read-only accessors they use,
and write_atomic (toolc/runtime/fileformat.py), through which trace's and graph's outputs and
every artifact are written."""

from __future__ import annotations

import json
import os
import stat

import numpy as np
import pytest
from click.testing import CliRunner

import toolc
import toolc.debug.sample
from toolc.runtime import fileformat
from toolc.cli import main
from toolc.debug.locate import LOCATED_FORMATS, locate
from toolc.debug.sample import sample_outputs
from toolc.debug.trace import trace
from toolc.formats import NAMES, Custom
from toolc.tokenizer import load_vocabulary

from conftest import WEATHER

SPEC = {"name": "mine", "prefix": "<calls>",
        "call": "{\"tool\": \"{name}\", \"args\": {arguments}}", "suffix": "</calls>"}
WEATHER_TOOLS = {"get_current_weather", "get_forecast"}


@pytest.fixture(scope="module")
def mistral_vocab():
    return load_vocabulary("mistral")


@pytest.fixture(scope="module")
def mistral_artifact(mistral_vocab):
    """schemas/weather.json in the mistral format, for Mistral's tekken tokenizer."""
    return toolc.compile_tools(str(WEATHER), mistral_vocab, format="mistral")


@pytest.fixture(scope="module")
def mistral_path(tmp_path_factory, mistral_artifact):
    path = tmp_path_factory.mktemp("mistral") / "weather-mistral.toolc"
    mistral_artifact.save(path)
    return path



def tool_calls_token(art) -> int:
    (tid,) = art.header["special_tokens"]["[TOOL_CALLS]"]
    return tid


# -- locate ----------------------------------------------------------------------------------

def test_locate_says_plainly_that_mistral_is_not_located():
    text = '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Pa'
    loc = locate(text, format="mistral")
    assert loc.kind == "output" and loc.offset == len(text) and loc.format == "mistral"
    assert loc.tool is None and loc.pointer is None
    d = loc.describe()
    assert f"offset {len(text)}" in d
    assert "mistral" in d and "hermes format only" in d
    assert loc.short() == f"@{len(text)}"


@pytest.mark.parametrize("fmt", [n for n in NAMES if n not in LOCATED_FORMATS] + ["mine"])
def test_locate_reports_the_offset_for_every_format_but_hermes(fmt):
    loc = locate("abc", format=fmt)
    assert (loc.kind, loc.offset, loc.format) == ("output", 3, fmt)


def test_locate_still_finds_tool_and_pointer_for_hermes():
    text = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Pa'
    for loc in (locate(text, format="hermes"), locate(text)):
        assert loc.kind == "call" and loc.field == "arguments"
        assert loc.tool == "get_weather" and loc.pointer == "/city"
        assert loc.describe() == "tool 'get_weather', arguments at /city"
    assert LOCATED_FORMATS == ("hermes",)
    assert locate('<tool_call>\n{"name": "get_w', format="hermes").describe() \
        == "tool name (so far 'get_w')"


# -- trace -----------------------------------------------------------------------------------

class _FixedIds:
    """A vocabulary whose encode gives fixed ids (the rest is the real vocabulary's), so a
    trace can run through a mistral artifact without tokenizing text."""

    def __init__(self, vocab, ids):
        self._vocab, self._ids = vocab, ids

    def encode(self, text):
        return list(self._ids)

    def __getattr__(self, name):
        return getattr(self._vocab, name)


def test_trace_of_a_mistral_artifact_says_the_location_is_not_described(mistral_artifact,
                                                                        mistral_vocab):
    art = mistral_artifact
    trigger = tool_calls_token(art)
    m = art.matcher()
    m.advance(trigger)
    bad = next(t for t in range(1000, art.vocab_size) if not m.accepts(t))
    tr = trace(art, _FixedIds(mistral_vocab, [trigger, bad]), "ignored")
    assert not tr.ok and tr.rejected == 1
    assert tr.steps[0].token == trigger and tr.steps[1].next_state is None
    prefix = mistral_vocab.decode_bytes([trigger]).decode("utf-8")
    assert tr.location.kind == "output" and tr.location.format == "mistral"
    assert tr.location.offset == len(prefix)
    text = tr.render()
    assert "hermes format only" in text and "this artifact is mistral" in text
    assert f"allowed there ({tr.allowed_count:,} tokens)" in text and tr.allowed_count > 0


def test_cli_trace_of_a_mistral_artifact_explains_the_rejection(mistral_vocab, tmp_path):
    """Calls required: the first token must be [TOOL_CALLS], so plain text is rejected at
    once, whatever the tokenization."""
    path = tmp_path / "required.toolc"
    toolc.compile_tools(str(WEATHER), mistral_vocab, format="mistral",
                        tool_choice="required").save(path)
    res = CliRunner().invoke(main, ["trace", str(path), "hello"])
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    assert res.exit_code == 1, res.output
    assert "rejected" in res.output and "offset 0 of the output" in res.output, res.output
    assert "hermes format only" in res.output and "this artifact is mistral" in res.output


def test_mistral_vocabulary_encodes_text(mistral_vocab):
    text = '{"city": "Zürich"} hello'
    ids = mistral_vocab.encode(text)
    assert ids and mistral_vocab.decode_bytes(ids) == text.encode("utf-8")


def test_cli_trace_of_a_hermes_artifact_names_tool_and_pointer(weather_file):
    text = ('<tool_call>\n{"name": "get_current_weather", "arguments": {"city": "Paris", '
            '"bogus')
    res = CliRunner().invoke(main, ["trace", str(weather_file), text])
    assert res.exit_code == 1, res.output
    assert "tool 'get_current_weather', arguments at /" in res.output, res.output


# -- graph -t --------------------------------------------------------------------------------

def test_graph_reads_the_tokenizer_flag(weather_file, tmp_path):
    out = tmp_path / "g.dot"
    runner = CliRunner()
    res = runner.invoke(main, ["graph", str(weather_file), "-o", str(out), "-t", "mistral"])
    assert res.exit_code == 1, res.output
    assert "fingerprint" in res.output and "'qwen3'" in res.output, res.output
    assert "'mistral'" in res.output
    assert not out.exists()
    res = runner.invoke(main, ["graph", str(weather_file), "-o", str(out), "--tokenizer", "qwen"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(main, ["graph", str(weather_file), "-o", str(out)])
    assert res.exit_code == 0, res.output
    dot = out.read_text()
    assert dot.startswith("digraph toolc {")
    assert "get_current_weather" in dot and "get_forecast" in dot


def test_graph_of_a_mistral_artifact_labels_states_by_offset(mistral_path, tmp_path):
    out = tmp_path / "m.dot"
    res = CliRunner().invoke(main, ["graph", str(mistral_path), "-o", str(out)])
    assert res.exit_code == 0, res.output
    labels = [line for line in out.read_text().splitlines() if "[label=" in line
              and "->" not in line]
    assert labels and all("\\n@" in line for line in labels), labels[:3]


# -- sample ----------------------------------------------------------------------------------

def test_cli_sample_json_parses_a_custom_format_by_its_spec(tmp_path):
    art = toolc.compile_tools(str(WEATHER), format=Custom(SPEC), tool_choice="required")
    path = tmp_path / "custom.toolc"
    art.save(path)
    res = CliRunner().invoke(main, ["sample", str(path), "--json", "-n", "3", "--seed", "1"])
    assert res.exit_code == 0, (res.output, res.exception)
    lines = res.output.splitlines()
    assert len(lines) == 3
    for line in lines:
        obj = json.loads(line)
        assert obj["text"].startswith("<calls>")
        assert obj["tool_calls"], obj
        for call in obj["tool_calls"]:
            assert call["function"]["name"] in WEATHER_TOOLS
            assert isinstance(json.loads(call["function"]["arguments"]), dict)


def test_cli_sample_json_on_a_custom_format_with_free_text(tmp_path):
    art = toolc.compile_tools(str(WEATHER), format=Custom(SPEC))
    path = tmp_path / "custom.toolc"
    art.save(path)
    res = CliRunner().invoke(main, ["sample", str(path), "--json", "-n", "3", "--seed", "1"])
    assert res.exit_code == 0, (res.output, res.exception)
    rows = [json.loads(line) for line in res.output.splitlines()]
    assert len(rows) == 3 and all(isinstance(r["tool_calls"], list) for r in rows)


def test_sample_outputs_of_a_mistral_artifact_show_calls(mistral_artifact):
    art = mistral_artifact
    trigger = tool_calls_token(art)
    outs = sample_outputs(art, 6, seed=0)
    assert len(outs) == 6
    assert any(trigger in ids for ids in outs)
    for ids in outs:
        m = art.matcher()
        for t in ids:
            m.advance(t)
        assert m.is_terminated()


COUNTED_TOOL = {"type": "function", "function": {"name": "post", "parameters": {
    "type": "object", "required": ["body", "tags"], "properties": {
        "body": {"type": "string", "minLength": 200},
        "tags": {"type": "array", "items": {"type": "integer"}, "minItems": 40,
                 "maxItems": 1000}}}}}


def test_sample_walks_counted_regions_to_their_bounds(tmp_path):
    """A state's edges are not all allowed under a counter (the closing quote before
    minLength, the closing bracket before minItems): sample asks the matcher, and every
    output validates."""
    import jsonschema

    art = toolc.compile_tools([COUNTED_TOOL], tool_choice="required")
    vocab = load_vocabulary("qwen")
    schema = COUNTED_TOOL["function"]["parameters"]
    parsed = 0
    for ids in sample_outputs(art, 3, seed=2):
        m = art.matcher()
        for t in ids:
            m.advance(t)
        assert m.is_terminated()
        text = vocab.decode_bytes(ids).decode("utf-8")
        for call in toolc.parse_tool_calls(text, "hermes")["parsed"]:
            assert call["name"] == "post"
            jsonschema.validate(call["arguments"], schema)
            parsed += 1
    assert parsed >= 3
    path = tmp_path / "huge.toolc"         # a minimum no walk reaches: one line, exit 1
    huge = json.loads(json.dumps(COUNTED_TOOL))
    huge["function"]["parameters"]["properties"]["body"]["minLength"] = 10 ** 6
    toolc.compile_tools([huge], tool_choice="required").save(path)
    res = CliRunner().invoke(main, ["sample", str(path), "-n", "1"])
    assert res.exit_code == 1 and "no random output reached the end" in res.output, res.output


@pytest.mark.parametrize("which", ["mistral", "hermes"])
def test_sample_prefers_the_formats_special_tokens_but_not_eos(which, mistral_artifact,
                                                               weather_artifact, monkeypatch):
    art = mistral_artifact if which == "mistral" else weather_artifact
    seen = []
    real = toolc.debug.sample.random_output

    def spy(*args, **kwargs):
        seen.append(kwargs.get("prefer"))
        return real(*args, **kwargs)

    monkeypatch.setattr(toolc.debug.sample, "random_output", spy)
    sample_outputs(art, 2, seed=0)
    expected = {t for name, ids in art.header["special_tokens"].items() if name != "EOS"
                for t in ids}
    assert expected and not expected & set(art.eos_token_ids)
    assert seen and all(set(p) == expected for p in seen), seen


# -- write_atomic ----------------------------------------------------------------------------

@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002])
def test_saved_file_mode_follows_the_umask(weather_artifact, tmp_path, mask):
    path = tmp_path / "w.toolc"
    old = os.umask(mask)
    try:
        weather_artifact.save(path)
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~mask
    assert path.read_bytes() == weather_artifact.to_bytes()


def test_write_atomic_never_reads_the_umask(weather_artifact, tmp_path, monkeypatch):
    def no_umask(*a):
        raise AssertionError("os.umask was called")

    monkeypatch.setattr(fileformat.os, "umask", no_umask)
    path = tmp_path / "w.toolc"
    assert weather_artifact.save(path) == len(weather_artifact.to_bytes())
    fileformat.write_atomic(tmp_path / "x.bin", b"abc")
    assert (tmp_path / "x.bin").read_bytes() == b"abc"
    assert toolc.load(path).to_bytes() == weather_artifact.to_bytes()


def test_a_failed_write_leaves_no_temporary_file(weather_artifact, tmp_path, monkeypatch):
    path = tmp_path / "w.toolc"
    path.write_bytes(b"previous")

    def broken_fsync(fd):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(fileformat.os, "fsync", broken_fsync)
    with pytest.raises(OSError):
        weather_artifact.save(path)
    with pytest.raises(OSError):
        fileformat.write_atomic(tmp_path / "new.bin", b"abc")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w.toolc"]
    assert path.read_bytes() == b"previous"


def test_write_atomic_replaces_and_creates_folders(tmp_path):
    path = tmp_path / "a" / "b" / "f.bin"
    fileformat.write_atomic(path, b"one")
    fileformat.write_atomic(str(path), b"two")
    assert path.read_bytes() == b"two"
    assert sorted(p.name for p in path.parent.iterdir()) == ["f.bin"]


# -- the artifact's accessors ----------------------------------------------------------------

def test_state_masks_rows_and_matchers_agree(weather_artifact):
    art = weather_artifact
    rows = art.state_rows()
    assert len(rows) == art.num_states
    assert not art.mask_rows.flags.writeable
    for q in range(art.num_states):
        m = art.matcher(q)
        assert m.state == q
        mask = art.state_mask(q)
        assert np.array_equal(mask, m.mask()), q
        assert art.state_row(q) == rows[q]
        assert np.array_equal(art.mask_rows[art.state_row(q)], mask), q
        assert art.is_final_state(q) == m.is_terminated()


def test_transitions_predict_where_a_matcher_goes(weather_artifact):
    art = weather_artifact
    checked = 0
    for q in range(art.num_states):
        exc, default = art.transitions(q)
        assert default == art.default_next(q)
        allowed = art.matcher(q).allowed_token_ids().tolist()
        assert set(exc) <= set(allowed), q
        if default < 0:
            assert set(allowed) == set(exc), q
        picks = set(allowed[:2] + allowed[-2:] + sorted(exc)[:3])
        base = art.matcher(q)
        for t in picks:
            m = base.copy()
            m.advance(t)
            assert m.state == exc.get(t, default), (q, t)
            checked += 1
        assert base.state == q                    # the copies moved, not the base
    assert checked > art.num_states


def test_matcher_refuses_a_state_out_of_range(weather_artifact):
    art = weather_artifact
    with pytest.raises(ValueError):
        art.matcher(art.num_states)
    with pytest.raises(ValueError):
        art.matcher(-1)
    for not_a_state in (1.5, True, "3"):
        with pytest.raises(ValueError):
            art.matcher(not_a_state)
    assert art.matcher(np.int64(1)).state == 1 and type(art.matcher(np.int64(1)).state) is int
    assert art.matcher(art.num_states - 1).state == art.num_states - 1
    assert art.matcher(0).state == 0 == art.matcher().state


def test_sections_is_a_copy_that_round_trips(weather_artifact):
    art = weather_artifact
    secs = art.sections
    assert secs and all(isinstance(v, bytes) for v in secs.values())
    secs.clear()
    assert art.sections
    again = toolc.Artifact.from_parts(art.header, art.sections)
    assert again.to_bytes() == art.to_bytes()


def test_cli_trace_at_a_key_out_of_order_names_the_rule_and_the_expected_key(tmp_path):
    params = {"type": "object", "properties": {k: {"type": "string"} for k in
                                               ("base", "body", "head", "owner")},
              "required": ["base", "owner"]}
    path = tmp_path / "tools.json"
    path.write_text(json.dumps([{"type": "function",
                                 "function": {"name": "repo", "parameters": params}}]))
    out = tmp_path / "a.toolc"
    assert CliRunner().invoke(main, ["compile", str(path), "-o", str(out), "-q"]).exit_code == 0
    text = '<tool_call>\n{"name": "repo", "arguments": {"owner": "x", "base'
    res = CliRunner().invoke(main, ["trace", str(out), text])
    assert res.exit_code == 1, res.output
    assert "properties come in schema order" in res.output, res.output
    assert 'expected here: "base"' in res.output, res.output
