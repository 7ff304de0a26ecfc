"""toolc/schema/negation.py end to end: a ``oneOf`` of object branches that differ inside a
nested object (no discriminator; refused before the negation rewrite), through the real Qwen3
tokenizer. Soundness: random token walks parse and validate (jsonschema, on the closed
reading that closed mode gives every branch). Completeness: valid calls, rendered as Qwen3's
template renders them, are accepted to EOS; a call that matches two branches is rejected."""

from __future__ import annotations

import json
import random
from typing import Optional, Union

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


# -- a pydantic model whose field is a oneOf of lists (toolc/schema/negarrays.py) -------------
pydantic = pytest.importorskip("pydantic")


def _one_of(schema: dict) -> None:
    schema["oneOf"] = schema.pop("anyOf")


class Text(pydantic.BaseModel):
    text: str


class Image(pydantic.BaseModel):
    url: str
    alt: Optional[str] = None


class Post(pydantic.BaseModel):
    """A post whose content is plain lines or typed parts, exactly one of them (``[]`` is
    both, so ``oneOf`` rejects it; refused before: the second list holds objects)."""
    title: str
    content: Union[list[str], list[Union[Text, Image]]] = pydantic.Field(
        json_schema_extra=_one_of)

    @pydantic.model_validator(mode="after")
    def _exactly_one(self):
        if not self.content:
            raise ValueError("an empty content matches both branches")
        return self


POSTS = [Post(title="a", content=["x", "y"]), Post(title="b", content=[Text(text="t")]),
         Post(title="c", content=[Image(url="u"), Text(text="t"), Image(url="v", alt="w")])]


def post_artifact() -> toolc.Artifact:
    if "post" not in _ART:
        _ART["post"] = toolc.compile_tools([toolc.tool_from(Post)], "qwen",
                                           tool_choice="required")
    return _ART["post"]


def test_a_pydantic_oneof_of_lists_accepts_what_pydantic_writes_and_nothing_else():
    art, vocab = post_artifact(), load_vocabulary("qwen")
    for post in POSTS:
        args = json.loads(post.model_dump_json())
        ok, at = accepts_all(art, vocab.encode(render_answer([("Post", args)])))
        assert ok, (args, at)
    for bad in [{"title": "d", "content": []}, {"title": "e", "content": ["x", {"text": "t"}]}]:
        ok, _ = accepts_all(art, vocab.encode(render_answer([("Post", bad)])))
        assert not ok, bad
    dist, rng, seen = distance_to_end(art), random.Random(5), 0
    v = jsonschema.Draft202012Validator(closed(Post.model_json_schema()))
    for _ in range(60):
        ids = random_walk(art, rng, dist, budget=rng.choice([20, 60]), trigger=TOOL_CALL)
        text = vocab.decode_bytes(ids[:-1]).decode("utf-8")
        for call in parse_tool_calls(text)["parsed"]:
            Post.model_validate_json(json.dumps(call["arguments"]))     # pydantic's verdict
            assert v.is_valid(call["arguments"]), text                   # and exactly one
            seen += 1
    assert seen >= 30
