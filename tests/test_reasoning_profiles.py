"""Reasoning profiles: none (no section), a section the model may open (``reasoning=True``),
and a section the prompt already opened (``reasoning="open"``: the output starts inside it and
must close it), each with the format's own tags, written as the grammar enforces them and read
back by toolc.parse with the same profile."""

from __future__ import annotations

import pytest

import toolc
from toolc.errors import InvalidOptionError
from toolc.formats import FORMATS, get_format
from toolc.parse import parse_tool_calls

from helpers import accepts_all, load_tools, params_by_name
from tag_helpers import encode_for, render_framed, render_tagged, vocab_for
from test_formats_e2e import artifact as qwen_artifact

CALL = [("get_current_weather", {"city": "Paris"})]
_ARTS: dict = {}


def _answer(fmt: str) -> str:
    if fmt == "hermes":
        return ('<tool_call>\n{"name": "get_current_weather", "arguments": {"city": "Paris"}}'
                "\n</tool_call><|im_end|>")
    if fmt in ("deepseek-v3.1", "kimi-k2"):
        return render_framed(fmt, CALL)
    return render_tagged(fmt, CALL, "", params_by_name(load_tools("weather")))


def artifact(fmt, **opts):
    if fmt == "hermes":
        return qwen_artifact(fmt, **opts)
    key = (fmt, tuple(sorted(opts.items())))
    if key not in _ARTS:
        extra = {"max_calls": 2} if fmt == "kimi-k2" else {}
        _ARTS[key] = toolc.compile_tools("schemas/weather.json", vocab_for(fmt), format=fmt,
                                         **opts, **extra)
    return _ARTS[key]


def _ids(fmt, text):
    return encode_for(fmt, text) if fmt != "hermes" else vocab_for("qwen3-coder").encode(text)


PROFILES = ["hermes", "seed-oss", "minimax-m2", "deepseek-v3.2", "deepseek-v3.1", "kimi-k2"]


@pytest.mark.parametrize("fmt", PROFILES)
@pytest.mark.parametrize("mode", ["auto", "required"])
def test_open_section_then_the_call(fmt, mode):
    open_, close = FORMATS[fmt].think
    answer = _answer(fmt)
    text = f"Think it over.\n{close}\n\n{answer}"
    art = artifact(fmt, reasoning="open", tool_choice=mode)
    assert accepts_all(art, _ids(fmt, text)) == (True, -1), text
    assert not accepts_all(art, _ids(fmt, answer))[0]          # the section must be closed
    assert not accepts_all(art, _ids(fmt, open_ + text))[0]    # and was opened by the prompt
    parsed = parse_tool_calls(text.removesuffix("<|im_end|>"), format=fmt, reasoning="open")
    assert parsed["reasoning"] == "Think it over."
    assert [c["name"] for c in parsed["parsed"]] == ["get_current_weather"]


@pytest.mark.parametrize("fmt", PROFILES)
def test_a_section_the_model_opens(fmt):
    open_, close = FORMATS[fmt].think
    answer = _answer(fmt)
    text = f"{open_}\nThink it over.\n{close}\n\n{answer}"
    art = artifact(fmt, reasoning=True)
    assert accepts_all(art, _ids(fmt, text)) == (True, -1), text
    assert accepts_all(art, _ids(fmt, answer)) == (True, -1)    # optional
    assert not accepts_all(artifact(fmt), _ids(fmt, text))[0]   # none: no section at all
    parsed = parse_tool_calls(text.removesuffix("<|im_end|>"), format=fmt)
    assert parsed["reasoning"] == "Think it over."
    assert [c["name"] for c in parsed["parsed"]] == ["get_current_weather"]


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_the_registry_and_the_framing_agree_on_the_tags(name):
    assert get_format(name).think == FORMATS[name].think or name == "harmony"


def test_harmony_refuses_open():
    with pytest.raises(InvalidOptionError, match="reasoning"):
        toolc.compile_tools("schemas/weather.json", vocab_for("harmony"), format="harmony",
                            reasoning="open")


def test_the_option_takes_open_and_nothing_else():
    with pytest.raises(InvalidOptionError, match="expected True, False or 'open'"):
        toolc.compile_tools("schemas/weather.json", "qwen", reasoning="closed")
