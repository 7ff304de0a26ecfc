"""The keyword cases of tests/schema_cases.py through the real Qwen3 tokenizer: one artifact with
one tool per case. Soundness: random token walks parse and validate. Completeness: valid calls,
rendered as Qwen3's template renders them and tokenized by Qwen3, are accepted to EOS.
Rejection: a few invalid calls are refused at the token that goes wrong."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from hypothesis_jsonschema import from_schema

import toolc
from helpers import (accepts_all, distance_to_end, random_walk, render_answer,
                     spells_an_added_token)
from schema_cases import (CASES, EXPLICIT, closed, encodable, nesting, toolc_order, validator)
from toolc.parse import parse_tool_calls
from toolc.schema.refs import standardized
from toolc.tokenizer import load_vocabulary

pytestmark = pytest.mark.slow      # one artifact of 40 tools: about half a minute to compile
VOCAB = load_vocabulary("qwen")
TOOL_CALL = 151657
NAMES = sorted(CASES)
_ART = {}


def artifact() -> toolc.Artifact:
    if "art" not in _ART:
        tools = [{"type": "function", "function": {"name": n, "parameters": CASES[n]}}
                 for n in NAMES]
        # depth 2 keeps the free-form values (and the compile) small
        _ART["art"] = toolc.compile_tools(tools, "qwen", tool_choice="required", max_depth=2)
    return _ART["art"]


def test_random_walks_parse_and_validate():
    art = artifact()
    dist = distance_to_end(art)
    validators = {n: validator(CASES[n]) for n in NAMES}
    rng = random.Random(3)
    seen = set()
    for _ in range(120):
        ids = random_walk(art, rng, dist, budget=rng.choice([30, 80]), trigger=TOOL_CALL)
        text = VOCAB.decode_bytes(ids[:-1]).decode("utf-8")
        calls = parse_tool_calls(text)["parsed"]
        assert calls, text
        for call in calls:
            errors = [e.message for e in validators[call["name"]].iter_errors(call["arguments"])]
            assert not errors, f"accepted but invalid: {text!r}: {errors}"
            seen.add(call["name"])
    assert len(seen) > len(NAMES) // 2, "the walks reached too few tools to prove much"


def _bounded_exponent(text: str) -> bool:
    import re
    return re.search(r"\d[eE][+-]?\d", text) is not None


def test_valid_calls_are_accepted():
    art = artifact()
    strategies = [st.tuples(st.just(n), from_schema(closed(standardized(CASES[n]))))
                  for n in NAMES if n not in EXPLICIT]

    @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck),
              derandomize=True)
    @given(st.one_of(strategies))
    def check(call):
        name, args = call
        args = toolc_order(args, CASES[name])
        if (not encodable(args) or nesting(args) > 2 or not validator(CASES[name]).is_valid(args)
                or (name == "number_range" and _bounded_exponent(str(args)))
                or spells_an_added_token(VOCAB, args)):
            return
        text = render_answer([(name, args)])
        ids = VOCAB.encode(text)
        ok, bad = accepts_all(art, ids)
        assert ok, (f"rejected token {bad} ({VOCAB.token_bytes[ids[bad]]!r}) in {text!r}"
                    if bad >= 0 else f"not terminated after {text!r}")

    check()


def test_listed_recursive_instances_are_accepted():
    art = artifact()
    for name, values in EXPLICIT.items():
        for args in values:
            if nesting(args) > 4:       # {"root": node}: two node levels at max_depth 2
                continue
            ok, bad = accepts_all(art, VOCAB.encode(render_answer([(name, args)])))
            assert ok, (name, args, bad)


@pytest.mark.parametrize("name, args, bad_piece", [
    ("int_range", {"month": 13, "t": 0, "big": 0}, b"3"),
    ("format_date", {"v": "2023-02-29"}, b"9"),
    ("pattern_anchored", {"code": "AB-12"}, b"-"),
    ("length", {"s": "abcdef"}, b"f"),
])
def test_invalid_calls_are_rejected_at_the_right_token(name, args, bad_piece):
    import json
    art = artifact()
    text = ('<tool_call>\n{"name": "' + name + '", "arguments": '
            + json.dumps(args, ensure_ascii=False) + "}\n</tool_call><|im_end|>")
    ids = VOCAB.encode(text)
    ok, bad = accepts_all(art, ids)
    assert not ok and bad >= 0
    prefix = VOCAB.decode_bytes(ids[:bad])
    # everything before the rejected token is a valid prefix; the token holds the mistake
    assert bad_piece in VOCAB.token_bytes[ids[bad]], (prefix, VOCAB.token_bytes[ids[bad]])
