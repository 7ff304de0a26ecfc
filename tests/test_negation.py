"""toolc/schema/negation.py end to end: a ``oneOf`` of object branches that differ inside a
nested object (no discriminator; refused before the negation rewrite), through the real Qwen3
tokenizer. Soundness: random token walks parse and validate (jsonschema, on the closed
reading that closed mode gives every branch). Completeness: valid calls, rendered as Qwen3's
template renders them, are accepted to EOS; a call that matches two branches is rejected."""

from __future__ import annotations

import random

import jsonschema
import pytest

import toolc
from helpers import accepts_all, distance_to_end, random_walk, render_answer
from schema_cases import closed
from toolc.parse import parse_tool_calls
from toolc.tokenizer import load_vocabulary

pytestmark = pytest.mark.slow
TOOL_CALL = 151657
POINT = {"type": "object", "properties": {"lat": {"type": "number"},
                                          "lon": {"type": "number"}}, "required": ["lat", "lon"]}
PLACE = {"type": "object", "properties": {"city": {"type": "string"},
                                          "country": {"type": "string"}}, "required": ["city"]}
PARAMS = {"type": "object", "required": ["where"], "properties": {"where": {"oneOf": [
    {"type": "object", "properties": {"loc": POINT, "label": {"type": "string"}},
     "required": ["loc"]},
    {"type": "object", "properties": {"loc": PLACE, "label": {"type": "string"}},
     "required": ["loc"]},
    {"type": "object", "properties": {"loc": {"type": "object", "properties": {
        "city": {"type": "string"}}}}, "required": ["loc"]}]}}}
_ART: dict = {}


def artifact() -> toolc.Artifact:
    if "art" not in _ART:
        tools = [{"type": "function", "function": {"name": "find", "parameters": PARAMS}}]
        _ART["art"] = toolc.compile_tools(tools, "qwen", tool_choice="required")
    return _ART["art"]


def test_random_walks_parse_and_validate():
    art, vocab = artifact(), load_vocabulary("qwen")
    dist = distance_to_end(art)
    v = jsonschema.Draft202012Validator(closed(PARAMS))
    rng = random.Random(11)
    for _ in range(80):
        ids = random_walk(art, rng, dist, budget=rng.choice([20, 60]), trigger=TOOL_CALL)
        text = vocab.decode_bytes(ids[:-1]).decode("utf-8")
        for call in parse_tool_calls(text)["parsed"]:
            errors = [e.message for e in v.iter_errors(call["arguments"])]
            assert not errors, f"accepted but invalid: {text!r}: {errors}"


@pytest.mark.parametrize("where, valid", [
    ({"loc": {"lat": 1.5, "lon": -2}}, True),
    ({"loc": {"lat": 1.5, "lon": -2}, "label": "x"}, True),
    ({"loc": {"city": "Oslo", "country": "NO"}}, True),
    ({"loc": {}}, True),                        # only the third branch (city is optional)
    ({"loc": {"city": "Oslo"}}, False),         # the second and the third
    ({"loc": {"city": "Oslo"}, "label": "x"}, True),    # the third is closed: no label
    ({"loc": {"lat": 1}}, False),               # none
])
def test_calls_are_accepted_exactly_when_one_branch_matches(where, valid):
    args = {"where": where}
    assert jsonschema.Draft202012Validator(closed(PARAMS)).is_valid(args) == valid
    vocab = load_vocabulary("qwen")
    ok, _ = accepts_all(artifact(), vocab.encode(render_answer([("find", args)])))
    assert ok == valid, args
