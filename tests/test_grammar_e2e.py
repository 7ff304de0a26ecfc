"""End to end over the real Qwen3 tokenizer: soundness, completeness and rejection.

Soundness: whatever an artifact lets a model write parses and validates against the schema of
the tool it names. Completeness: every valid call, rendered as Qwen3's template renders it and
tokenized by the real tokenizer, is accepted to EOS. Rejection: the classic failures are masked.
"""

from __future__ import annotations

import copy
import json
import random

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from hypothesis_jsonschema import from_schema

import toolc
from toolc.tokenizer import load_vocabulary

from helpers import (SCHEMA_SETS, accepts_all, check_output, distance_to_end, load_tools,
                     random_walk, render_answer, render_call, spells_an_added_token)

VOCAB = load_vocabulary("qwen")
TOOL_CALL, END_CALL, IM_END, ENDOFTEXT, IM_START = 151657, 151658, 151645, 151643, 151644

_ARTS: dict = {}


def artifact(name: str, **opts) -> toolc.Artifact:
    key = (name, tuple(sorted(opts.items())))
    if key not in _ARTS:
        _ARTS[key] = toolc.compile_tools(f"schemas/{name}.json", "qwen", **opts)
    return _ARTS[key]


def encode(text: str) -> list[int]:
    return VOCAB.encode(text)


# -- soundness ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", SCHEMA_SETS)
@pytest.mark.parametrize("tool_choice", ["auto", "required"])
def test_random_walks_parse_and_validate(name, tool_choice):
    art = artifact(name, tool_choice=tool_choice)
    tools = load_tools(name)
    dist = distance_to_end(art)
    rng = random.Random(f"{name}-{tool_choice}")
    calls = 0
    for _ in range(40 if name != "assistant" else 25):
        ids = random_walk(art, rng, dist, budget=rng.choice([20, 60, 150]), trigger=TOOL_CALL)
        assert ids[-1] in (IM_END, ENDOFTEXT)
        # free text may hold any bytes (every ordinary token is allowed there), but from the
        # first <tool_call> on, the output is well-formed UTF-8
        first = ids.index(TOOL_CALL) if TOOL_CALL in ids else len(ids) - 1
        text = (VOCAB.decode_bytes(ids[:first]).decode("utf-8", errors="replace")
                + VOCAB.decode_bytes(ids[first:-1]).decode("utf-8"))
        parsed = check_output(text, tools, require_call=(tool_choice == "required"))
        calls += len(parsed["tool_calls"])
        if parsed["tool_calls"]:
            # the whole text after the free content is exactly the calls
            assert text.count("<tool_call>") == len(parsed["tool_calls"])
        else:
            assert "<tool_call>" not in text and "</tool_call>" not in text
    assert calls > 0, "the walks never produced a call: the test would prove nothing"


def test_free_text_only_in_auto_mode():
    art = artifact("weather", tool_choice="none")
    m = art.matcher()
    assert not m.accepts(TOOL_CALL)
    for t in encode("Sure, here is the weather."):
        m.advance(t)
    assert m.is_accepting()


# -- completeness --------------------------------------------------------------------------------

def _closed(schema):
    """The schema with additionalProperties false where properties are declared (toolc's
    documented reading), so generated instances stay in the language toolc enforces."""
    s = copy.deepcopy(schema)

    def fix(node):
        if isinstance(node, dict):
            if "properties" in node and "additionalProperties" not in node:
                node["additionalProperties"] = False
            for v in node.values():
                fix(v)
        elif isinstance(node, list):
            for v in node:
                fix(v)
    fix(s)
    return s


def _schema_order(value, schema):
    """Reorder object keys as the schema declares them (toolc's documented order)."""
    if isinstance(value, dict) and isinstance(schema, dict):
        props = schema.get("properties")
        if props is None:
            for branch in schema.get("anyOf", []):
                if isinstance(branch, dict) and "properties" in branch:
                    try:
                        import jsonschema
                        jsonschema.validate(value, branch)
                    except Exception:
                        continue
                    return _schema_order(value, branch)
            return value
        return {k: _schema_order(value[k], props[k]) for k in props if k in value}
    if isinstance(value, list) and isinstance(schema, dict) and isinstance(schema.get("items"),
                                                                           dict):
        return [_schema_order(v, schema["items"]) for v in value]
    return value


def _encodable(value) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def _tool_strategy(name):
    tools = load_tools(name)
    return st.sampled_from(tools).flatmap(
        lambda t: st.tuples(st.just(t["function"]["name"]),
                            from_schema(_closed(t["function"]["parameters"])),
                            st.just(t["function"]["parameters"])))


@pytest.mark.parametrize("name", SCHEMA_SETS)
def test_valid_calls_are_accepted(name):
    art = artifact(name)

    @settings(max_examples=60 if name != "assistant" else 80, deadline=None,
              suppress_health_check=list(HealthCheck), derandomize=True)
    @given(st.lists(_tool_strategy(name), min_size=1, max_size=3), st.sampled_from(["", "Ok."]))
    def check(calls, content):
        rendered = []
        for tname, args, schema in calls:
            args = _schema_order(args, schema)
            if not _encodable(args) or spells_an_added_token(VOCAB, args):
                return
            rendered.append((tname, args))
        text = render_answer(rendered, content)
        ids = encode(text)
        ok, bad = accepts_all(art, ids)
        assert ok, (f"rejected token {bad} ({VOCAB.token_bytes[ids[bad]]!r}) in {text!r}"
                    if bad >= 0 else f"not terminated after {text!r}")

    check()


def test_a_value_spelling_a_tag_is_refused_both_ways():
    """The case the completeness check leaves out (``spells_an_added_token``), found by it in
    CI: a string argument "<tool_call>". Encoded by the tokenizer it holds the added token,
    which no string takes; spelled in ordinary tokens it is a tag a parser would find, which
    hermes' closed strings refuse at its last byte. Without the tag the same call is taken."""
    art = artifact("assistant")
    head = '<tool_call>\n{"name": "search_web", "arguments": {"query": "'
    tail = '"}}\n</tool_call><|im_end|>'
    assert accepts_all(art, encode(head + "<tool_call>" + tail)) == (False, len(encode(head)))
    spelled = encode(head) + [t for piece in ("<", "tool", "_call", ">") for t in encode(piece)]
    assert TOOL_CALL not in spelled[1:]
    ok, bad = accepts_all(art, spelled + encode(tail))
    assert not ok and bad == len(spelled) - 1
    assert accepts_all(art, encode(head + "<tool call>" + tail)) == (True, -1)


def test_tokens_spanning_grammar_boundaries():
    # a nested object ends with '"}}' and the call with '}\n': Qwen3 merges these into single
    # tokens that cross from argument to framing; they must be accepted
    art = artifact("assistant")
    args = {"title": "Standup", "start": "2025-01-01T09:00", "location": {"name": "Room 1"}}
    text = render_answer([("create_calendar_event", args)])
    ids = encode(text)
    pieces = [VOCAB.token_bytes[i] for i in ids]
    assert any(b"}}" in p for p in pieces), pieces
    assert accepts_all(art, ids) == (True, -1)


def test_non_ascii_and_escapes_in_strings():
    art = artifact("weather")
    for city in ["Zürich", "東京", "São Paulo \"SP\"", "tab\there", "emoji 🌧️", "back\\slash"]:
        text = render_answer([("get_current_weather", {"city": city, "unit": "celsius"})])
        assert accepts_all(art, encode(text)) == (True, -1), city


# -- rejection ------------------------------------------------------------------------------------

def _rejected(art, text: str) -> bool:
    ids = encode(text)
    ok, bad = accepts_all(art, ids)
    return not ok


def test_hallucinated_name_is_rejected():
    art = artifact("weather")
    assert _rejected(art, render_answer([("get_weather_now", {"city": "Paris"})]))


def test_missing_required_argument_is_rejected():
    art = artifact("weather")
    assert _rejected(art, render_answer([("get_forecast", {"city": "Paris"})]))


def test_wrong_type_is_rejected():
    art = artifact("weather")
    assert _rejected(art, render_answer([("get_forecast", {"city": "Paris", "days": "3"})]))
    assert _rejected(art, render_answer([("get_forecast", {"city": "Paris", "days": 2.5})]))


def test_unknown_property_is_rejected():
    art = artifact("weather")
    assert _rejected(art, render_answer([("get_current_weather",
                                          {"city": "Paris", "country": "FR"})]))


def test_enum_outside_values_is_rejected():
    art = artifact("weather")
    assert _rejected(art, render_answer([("get_current_weather",
                                          {"city": "Paris", "unit": "kelvin"})]))


def test_text_after_last_call_in_required_mode_is_rejected():
    art = artifact("weather", tool_choice="required")
    call = render_call("get_current_weather", {"city": "Paris"})
    assert not _rejected(art, call + "<|im_end|>")
    assert _rejected(art, call + " Done.<|im_end|>")
    assert _rejected(art, "Hello " + call + "<|im_end|>")


def test_special_token_inside_argument_is_rejected():
    art = artifact("weather")
    prefix = encode('<tool_call>\n{"name": "get_current_weather", "arguments": {"city": "Pa')
    m = art.matcher()
    for t in prefix:
        m.advance(t)
    for special in (IM_START, ENDOFTEXT, IM_END, TOOL_CALL, END_CALL):
        assert not m.accepts(special)
    # no added token at all is allowed inside a string
    allowed = set(m.allowed_token_ids().tolist())
    assert not allowed & set(VOCAB.added.values())
    assert not any(t >= VOCAB.vocab_size for t in allowed)


@pytest.mark.parametrize("prefix", ["<tool_call", "So: </tool_call", "a<<tool_call"])
def test_trigger_spelled_in_text_is_not_a_call(prefix):
    art = artifact("weather")
    m = art.matcher()
    ids = encode(prefix)
    assert not set(ids) & set(VOCAB.added.values())
    for t in ids:
        m.advance(t)
    # every ordinary token that would complete the tag is masked; others are not
    closers = [t for t in range(VOCAB.vocab_size)
               if t not in VOCAB.added.values() and VOCAB.token_bytes[t].startswith(b">")]
    assert len(closers) > 10
    assert not any(m.accepts(t) for t in closers)
    assert m.accepts(encode(" x")[0])
    assert m.accepts(TOOL_CALL)


def test_single_tool_choice_allows_only_that_tool():
    art = artifact("weather", tool_choice="get_forecast")
    assert not _rejected(art, render_answer([("get_forecast", {"city": "Oslo", "days": 2})]))
    assert _rejected(art, render_answer([("get_current_weather", {"city": "Oslo"})]))


def test_no_parallel_allows_one_call():
    art = artifact("weather", parallel=False)
    one = [("get_current_weather", {"city": "Oslo"})]
    assert not _rejected(art, render_answer(one))
    assert _rejected(art, render_answer(one * 2))
    par = artifact("weather")
    assert not _rejected(par, render_answer(one * 3))
    capped = artifact("weather", max_calls=2)
    assert not _rejected(capped, render_answer(one * 2))
    assert _rejected(capped, render_answer(one * 3))
