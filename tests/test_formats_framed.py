"""The JSON-argument families with their own framing (toolc/formats/framed.py): DeepSeek V3 and
V3.1, Kimi K2 (a call counter in the id), EXAONE 4, Granite 3.1+; over Qwen3's vocabulary with
each family's atomic markers added (tests/tag_helpers.py).

No family's renderer installs from a package registry: completeness is proved against the
facts sheet's bytes (tests/tag_helpers.render_framed, written from them), and the sheet's own
examples are parsed verbatim.
"""

from __future__ import annotations

import json
import random

import jsonschema
import pytest

import toolc
from toolc.errors import InvalidOptionError, UnsupportedSchemaError
from toolc.formats.framedstyle import STYLES
from toolc.parse import parse_tool_calls

from helpers import accepts_all, distance_to_end, load_tools, params_by_name, random_walk
from tag_helpers import encode_for, render_framed, vocab_for

FORMATS = ["deepseek-v3", "deepseek-v3.1", "kimi-k2", "exaone", "granite"]
_ARTS: dict = {}


def artifact(fmt, tools="schemas/weather.json", **opts):
    if fmt == "kimi-k2" and opts.get("parallel", True):
        opts.setdefault("max_calls", 3)
    key = (fmt, str(tools), tuple(sorted(opts.items())))
    if key not in _ARTS:
        _ARTS[key] = toolc.compile_tools(tools, vocab_for(fmt), format=fmt, **opts)
    return _ARTS[key]


def _prefix_ok(art, ids) -> bool:
    return accepts_all(art, ids)[1] == -1


def ordinary(text: str) -> list[int]:
    return [t for ch in text for t in vocab_for("exaone").encode(ch)]


CALLS = [("get_forecast", {"city": "Zürich <b>", "days": 3, "unit": "celsius"}),
         ("get_current_weather", {"city": "東京 \"quoted\"\nline"}),
         ("get_current_weather", {"city": "Rome"})]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("calls,content", [(CALLS[:1], ""), (CALLS, ""),
                                           (CALLS[:2], "Let me check."), ([], "It is sunny.")])
def test_the_sheets_bytes_are_accepted_and_parse_back(fmt, calls, content):
    text = render_framed(fmt, calls, content)
    assert accepts_all(artifact(fmt), encode_for(fmt, text)) == (True, -1), text
    parsed = parse_tool_calls(text, format=fmt, tools=load_tools("weather"))
    assert [(c["name"], c["arguments"]) for c in parsed["parsed"]] == calls
    assert parsed["content"] == (content or None)


@pytest.mark.parametrize("fmt", FORMATS)
def test_one_byte_mutations_of_the_framing_are_rejected(fmt):
    text = render_framed(fmt, CALLS[:2])
    st = STYLES[fmt]
    art = artifact(fmt, tool_choice="required")
    for tag in (st.name_end.replace("{index}", "0"), st.call_close, st.call_sep):
        if tag:
            for mutated in (text.replace(tag, tag + " ", 1), text.replace(tag, tag[1:], 1)):
                assert not accepts_all(art, encode_for(fmt, mutated))[0], (tag, mutated)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("mode", ["auto", "required"])
def test_random_walks_parse_and_validate(fmt, mode):
    art = artifact(fmt, tool_choice=mode)
    tools = load_tools("weather")
    schemas = params_by_name(tools)
    dist = distance_to_end(art)
    rng = random.Random(f"{fmt}-{mode}")
    calls = 0
    for _ in range(12):
        ids = random_walk(art, rng, dist, budget=rng.choice([10, 40, 80]))
        text = vocab_for(fmt).decode_bytes(ids[:-1]).decode("utf-8", errors="replace")
        parsed = parse_tool_calls(text, format=fmt, tools=tools)
        for c in parsed["parsed"]:
            jsonschema.validate(c["arguments"], schemas[c["name"]])
        calls += len(parsed["parsed"])
        assert parsed["parsed"] or mode == "auto"
    assert calls > 0 or mode == "auto"


def test_kimi_counts_its_calls_and_needs_a_bound():
    text = render_framed("kimi-k2", CALLS)
    art = artifact("kimi-k2")
    assert accepts_all(art, encode_for("kimi-k2", text)) == (True, -1)
    for wrong in (text.replace(":1<", ":0<"), text.replace(":2<", ":3<")):
        assert not accepts_all(art, encode_for("kimi-k2", wrong))[0]
        with pytest.raises(toolc.ParseError):
            parse_tool_calls(wrong, format="kimi-k2")
    four = render_framed("kimi-k2", CALLS + CALLS[:1])      # over max_calls=3
    assert not accepts_all(art, encode_for("kimi-k2", four))[0]
    one = artifact("kimi-k2", parallel=False)
    assert accepts_all(one, encode_for("kimi-k2", render_framed("kimi-k2", CALLS[:1])))[0]
    with pytest.raises(InvalidOptionError, match="max_calls"):
        toolc.compile_tools("schemas/weather.json", vocab_for("kimi-k2"), format="kimi-k2")


@pytest.mark.parametrize("fmt", FORMATS)
def test_arguments_and_free_text_never_spell_a_tag(fmt):
    art = artifact(fmt)
    for tag in STYLES[fmt].closers():
        head = render_framed(fmt, [("get_current_weather", {"city": "X"})])
        head = head[:head.index('"X"') + 2]         # inside the string value
        assert _prefix_ok(art, encode_for(fmt, head) + ordinary(tag[:-1]))
        assert not _prefix_ok(art, encode_for(fmt, head) + ordinary(tag)), tag
    trig = STYLES[fmt].trigger
    assert _prefix_ok(art, ordinary("Sure: " + trig[:-1]))
    assert not _prefix_ok(art, ordinary("Sure: " + trig))


def test_a_name_holding_the_kimi_separator_is_refused(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps([{"type": "function", "function": {"name": "a:b", "parameters": {
        "type": "object", "properties": {}}}}]))
    with pytest.raises(UnsupportedSchemaError, match="holds ':'") as e:
        toolc.compile_tools(path, vocab_for("kimi-k2"), format="kimi-k2", max_calls=2)
    assert e.value.pointer == "/0/function/name"


SHEET = [
    ("deepseek-v3", '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>N\n```json\n'
                    '{"k": "v"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>', [("N", {"k": "v"})]),
    ("deepseek-v3.1", '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>N<｜tool▁sep｜>{"k": "v"}'
                      '<｜tool▁call▁end｜><｜tool▁calls▁end｜>', [("N", {"k": "v"})]),
    ("kimi-k2", '<|tool_calls_section_begin|><|tool_call_begin|>functions.N:0'
                '<|tool_call_argument_begin|>{"k": "v"}<|tool_call_end|><|tool_call_begin|>'
                'functions.N2:1<|tool_call_argument_begin|>{}<|tool_call_end|>'
                '<|tool_calls_section_end|>', [("N", {"k": "v"}), ("N2", {})]),
]


@pytest.mark.parametrize("fmt,text,expected", SHEET)
def test_the_sheets_examples_parse(fmt, text, expected):
    parsed = parse_tool_calls(text, format=fmt)
    assert [(c["name"], c["arguments"]) for c in parsed["parsed"]] == expected
