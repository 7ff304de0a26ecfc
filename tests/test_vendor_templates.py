"""Chat templates that a vendor's package ships, rendering assistant tool calls: the artifact
accepts exactly what the template writes after the generation prompt, and rejects one-byte
mutations of the framing.

SGLang 0.5.23 ships ``sglang/srt/parser/glm53_chat_template.py``, a port of Z.ai's GLM-5.3
chat template ("byte-identical to the Jinja templates"), so ``glm-4.7`` (GLM-4.7, 5, 5.3) is
checked against it. The prompt ends ``<|assistant|><think>``, so the model's output starts
inside the reasoning section (``reasoning="open"``). Like tests/test_vendor_parsers.py, this
runs in ``build/venv-vendor`` (``make vendor-env``) and is skipped elsewhere, with the reason.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import toolc
from toolc.parse import parse_tool_calls

from helpers import accepts_all, load_tools
from tag_helpers import encode_for, vocab_for

try:
    from sglang.srt.parser.glm53_chat_template import render_glm53_segments
except ImportError as e:    # not the vendor environment
    _SKIPPED = Path("build/venv-vendor/SKIPPED")
    why = _SKIPPED.read_text().strip() if _SKIPPED.exists() else \
        "run it with build/venv-vendor/bin/python (make vendor-env builds it)"
    pytest.skip(f"SGLang's GLM-5.3 template does not import here ({e}); {why}",
                allow_module_level=True)

CALLS = [("get_forecast", {"city": "Zürich <b>", "days": 3, "unit": "celsius"}),
         ("get_current_weather", {"city": '東京 "q"\nx'})]
_ARTS: dict = {}


def artifact(mode):
    if mode not in _ARTS:
        _ARTS[mode] = toolc.compile_tools("schemas/weather.json", vocab_for("glm-4.7"),
                                          format="glm-4.7", reasoning="open", tool_choice=mode)
    return _ARTS[mode]


def rendered(calls, reasoning="Need the weather.") -> str:
    """What GLM-5.3's template writes after the prompt's '<|assistant|><think>'."""
    msgs = [{"role": "user", "content": "Weather?"},
            {"role": "assistant", "content": "", "reasoning_content": reasoning,
             "tool_calls": [{"type": "function", "function": {"name": n, "arguments": a}}
                            for n, a in calls]}]
    segments = render_glm53_segments(msgs, tools=load_tools("weather"))
    out = "".join(segments[segments.index("<|assistant|>") + 1:])
    assert out.startswith("<think>")
    return out[len("<think>"):]


def ids_of(text: str) -> list[int]:
    art = artifact("auto")
    return encode_for("glm-4.7", text) + [art.eos_token_ids[0]]


@pytest.mark.parametrize("calls", [CALLS[:1], CALLS])
@pytest.mark.parametrize("mode", ["auto", "required"])
def test_the_templates_calls_are_accepted_and_parse_back(calls, mode):
    text = rendered(calls)
    assert accepts_all(artifact(mode), ids_of(text)) == (True, -1), text
    parsed = parse_tool_calls(text, format="glm-4.7", reasoning="open",
                              tools=load_tools("weather"))
    assert [(c["name"], c["arguments"]) for c in parsed["parsed"]] == calls
    assert parsed["reasoning"] == "Need the weather."


@pytest.mark.parametrize("tag", ["<tool_call>", "<arg_key>", "</arg_key>", "<arg_value>",
                                 "</arg_value>", "</tool_call>", "</think>"])
def test_one_byte_mutations_of_the_framing_are_rejected(tag):
    text = rendered(CALLS)
    art = artifact("required")
    # one byte dropped from either end of the tag, or one byte put inside it (a space beside a
    # raw value would be part of the value, so it is no mutation of the framing)
    for mutated in (text.replace(tag, tag[:-1], 1), text.replace(tag, tag[1:], 1),
                    text.replace(tag, tag[:2] + "x" + tag[2:], 1)):
        assert mutated != text
        assert not accepts_all(art, ids_of(mutated))[0], (tag, mutated)
