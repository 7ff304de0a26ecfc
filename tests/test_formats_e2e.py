"""Every native format, end to end over real tokenizers (Qwen3, and Mistral's tekken).

For each format and mode:
* soundness: random walks through the artifact parse back (toolc.parse) and validate against
  the schema of the tool they name;
* completeness: hypothesis-jsonschema instances, rendered as the format writes them
  (tests/format_helpers.py, written from the templates) and tokenized by the real tokenizer,
  are accepted to EOS;
* round trip: render, tokenize, walk, parse gives back the same calls.
"""

from __future__ import annotations

import json

import random
import unicodedata

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from hypothesis_jsonschema import from_schema

import toolc
from toolc.formats.tagstyle import STYLES
from toolc.parse import parse_tool_calls
from toolc.tokenizer import load_vocabulary

from format_helpers import encode, render
from helpers import accepts_all, distance_to_end, load_tools, params_by_name, random_walk
from test_grammar_e2e import _closed, _encodable, _schema_order

FORMATS = ["hermes", "qwen3-coder", "mistral", "phi4-mini", "functools", "llama3-json",
           "pythonic", "tooldec", "json"]
# (format, tokenizer) pairs: every format on Qwen3; Mistral's own format on tekken too
CASES = [(f, "qwen") for f in FORMATS] + [("mistral", "mistral"), ("qwen3-coder", "mistral")]

_ARTS: dict = {}
#: no raw qwen3-coder value spells one of these (the parser would end the value there)
CODER_TAGS = STYLES["qwen3-coder"].closers()


def artifact(fmt, tok="qwen", name="weather", **opts):
    key = (fmt, tok, name, tuple(sorted(opts.items())))
    if key not in _ARTS:
        _ARTS[key] = toolc.compile_tools(f"schemas/{name}.json", tok, format=fmt, **opts)
    return _ARTS[key]


def decode(ids, tok="qwen") -> str:
    return load_vocabulary(tok).decode_bytes(ids).decode("utf-8", errors="replace")


def validate(parsed, tools, require_call=False):
    schemas = params_by_name(tools)
    if require_call:
        assert parsed["tool_calls"], "no call"
    for call in parsed["parsed"]:
        assert call["name"] in schemas, call
        jsonschema.validate(call["arguments"], schemas[call["name"]])


# -- soundness ---------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt,tok", CASES)
@pytest.mark.parametrize("mode", ["auto", "required"])
def test_random_walks_parse_and_validate(fmt, tok, mode):
    art = artifact(fmt, tok, tool_choice=mode)
    tools = load_tools("weather")
    dist = distance_to_end(art)
    rng = random.Random(f"{fmt}-{tok}-{mode}")
    calls = 0
    for _ in range(12):
        ids = random_walk(art, rng, dist, budget=rng.choice([10, 40, 80]))
        assert ids[-1] in art.eos_token_ids
        parsed = parse_tool_calls(decode(ids[:-1], tok), format=fmt, tools=tools)
        validate(parsed, tools, require_call=(mode == "required"))
        calls += len(parsed["tool_calls"])
    assert calls > 0 or mode == "auto"


SLOW_CODER = pytest.param("qwen3-coder", marks=pytest.mark.slow)   # about 15 s each


@pytest.mark.parametrize("fmt", ["hermes", SLOW_CODER, "pythonic", "mistral"])
def test_random_walks_on_rich_schemas(fmt):
    # nested objects, arrays, nulls and enums (schemas/assistant.json)
    art = artifact(fmt, name="assistant", tool_choice="required")
    tools = load_tools("assistant")
    dist = distance_to_end(art)
    rng = random.Random(fmt)
    for _ in range(8):
        ids = random_walk(art, rng, dist, budget=rng.choice([20, 60]))
        validate(parse_tool_calls(decode(ids[:-1]), format=fmt, tools=tools), tools, True)


# -- completeness and round trip ---------------------------------------------------------------

def _positional(args: dict, schema: dict) -> bool:
    """tooldec writes arguments positionally: the given keys must be a prefix of the schema's
    properties that holds every required one."""
    keys = list(schema.get("properties", {}))
    return list(args) == keys[:len(args)]


def _strategy(tools):
    return st.sampled_from(tools).flatmap(
        lambda t: st.tuples(st.just(t["function"]["name"]),
                            from_schema(_closed(t["function"]["parameters"])),
                            st.just(t["function"]["parameters"])))


def _check_complete(fmt, tok, set_name, examples, **opts):
    art = artifact(fmt, tok, name=set_name, **opts)
    tools = load_tools(set_name)
    schemas = params_by_name(tools)
    many = opts.get("parallel", True)
    added = [t for t in load_vocabulary(tok).added if len(t) > 1]

    @settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck),
              derandomize=True)
    @given(st.lists(_strategy(tools), min_size=1, max_size=3 if many else 1),
           st.sampled_from(["", "Ok."]) if opts.get("tool_choice", "auto") == "auto"
           else st.just(""), st.booleans())
    def check(calls, content, tag):
        rendered = []
        for name, args, schema in calls:
            args = _schema_order(args, schema)
            if not _encodable(args):
                return
            if fmt == "tooldec" and not _positional(args, schema):
                return
            if fmt == "qwen3-coder" and any(tag in str(args) for tag in CODER_TAGS):
                return
            # a value spelling an added token (Qwen3's "<tool_call>") is encoded as that
            # token, which no artifact takes inside a value: the model spells it in ordinary
            # tokens, which this check does not render
            if any(t in json.dumps(args, ensure_ascii=False) for t in added):
                return
            rendered.append((name, args))
        if fmt in ("llama3-json", "pythonic", "json"):
            content = ""      # these formats' calls are the whole answer
        text = render(fmt, rendered, content, tokenizer=tok, schemas=schemas,
                      python_tag=tag)
        ids = encode(text, tok)
        ok, bad = accepts_all(art, ids)
        assert ok, (f"rejected token {bad} ({load_vocabulary(tok).token_bytes[ids[bad]]!r}) "
                    f"in {text!r}" if bad >= 0 else f"not terminated after {text!r}")
        # round trip: what was accepted parses back to the same calls (unless the tokenizer
        # normalized the text: Qwen3's applies NFC, so U+F900 comes back as U+8C48)
        if unicodedata.normalize("NFC", text) != text:
            return
        parsed = parse_tool_calls(decode(ids[:-1], tok), format=fmt, tools=tools)
        assert [(c["name"], c["arguments"]) for c in parsed["parsed"]] == rendered
        assert (parsed["content"] or "") == content

    check()


@pytest.mark.parametrize("fmt,tok", CASES)
def test_rendered_calls_are_accepted_and_round_trip(fmt, tok):
    _check_complete(fmt, tok, "weather", 20)


@pytest.mark.parametrize("fmt", [SLOW_CODER, "mistral", "pythonic", "tooldec", "json",
                                 "llama3-json"])
def test_rendered_calls_on_rich_schemas(fmt):
    _check_complete(fmt, "qwen", "assistant", 25)


@pytest.mark.parametrize("fmt", ["qwen3-coder", "functools", "pythonic", "json"])
def test_required_single_call(fmt):
    _check_complete(fmt, "qwen", "weather", 15, tool_choice="required", parallel=False)


# -- modes --------------------------------------------------------------------------------------

CALL = ("get_forecast", {"city": "Oslo", "days": 2})
OTHER = ("get_current_weather", {"city": "Oslo"})


def _accepted(art, text, tok="qwen") -> bool:
    return accepts_all(art, encode(text, tok))[0]


@pytest.mark.parametrize("fmt,tok", CASES)
def test_none_mode_is_free_text_only(fmt, tok):
    art = artifact(fmt, tok, tool_choice="none")
    assert _accepted(art, render(fmt, [], "Sure, it is sunny.", tokenizer=tok), tok)
    assert not _accepted(art, render(fmt, [CALL], "", tokenizer=tok), tok)


@pytest.mark.parametrize("fmt,tok", CASES)
def test_named_tool_choice(fmt, tok):
    art = artifact(fmt, tok, tool_choice="get_forecast")
    assert _accepted(art, render(fmt, [CALL], tokenizer=tok), tok)
    assert not _accepted(art, render(fmt, [OTHER], tokenizer=tok), tok)
    assert not _accepted(art, render(fmt, [], "Hello.", tokenizer=tok), tok)


@pytest.mark.parametrize("fmt,tok", CASES)
def test_parallel_and_max_calls(fmt, tok):
    one = artifact(fmt, tok, parallel=False)
    two = artifact(fmt, tok, max_calls=2)
    assert _accepted(one, render(fmt, [CALL], tokenizer=tok), tok)
    assert not _accepted(one, render(fmt, [CALL, OTHER], tokenizer=tok), tok)
    assert _accepted(two, render(fmt, [CALL, OTHER], tokenizer=tok), tok)
    assert not _accepted(two, render(fmt, [CALL, OTHER, CALL], tokenizer=tok), tok)


@pytest.mark.parametrize("fmt,tok", CASES)
def test_required_mode_rejects_free_text(fmt, tok):
    art = artifact(fmt, tok, tool_choice="required")
    assert not _accepted(art, render(fmt, [], "Hello.", tokenizer=tok), tok)
    assert _accepted(art, render(fmt, [CALL], tokenizer=tok), tok)
