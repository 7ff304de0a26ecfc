"""toolc/schema/content.py: a string that holds a JSON text (``contentMediaType:
application/json`` + ``contentSchema``, pydantic's ``Json[T]``) is enforced: its decoded value
is a JSON text of the content schema, written with the compiler's whitespace."""

from __future__ import annotations

import json

import pytest

from toolc.fsm import compile_expr
from toolc.schema import SchemaCompiler
from toolc.schema.strings import expanded_lengths
from toolc.schema.vocabulary import prepare

pydantic = pytest.importorskip("pydantic")


def dfa(schema):
    ready = prepare(schema)
    with expanded_lengths():
        return compile_expr(SchemaCompiler().compile(ready.schema)), ready


def accepts(d, text: str) -> bool:
    q = d.step_bytes(0, text.encode())
    return q >= 0 and bool(d.final[q])


class Payload(pydantic.BaseModel):
    ids: pydantic.Json[list[int]]
    extra: pydantic.Json


CANDIDATES = ["[1, 2]", "[]", "[1,2]", '["x"]', "nope", "", "1", '{"a": [true, null]}',
              '"s\\n"', "[1, 2", "null", '{"a": "b\\"c"}', "[-3, 0]", "[1.5]"]


def test_pydantic_json_fields_accept_exactly_what_pydantic_validates():
    d, ready = dfa(Payload.model_json_schema())
    assert ready.dropped == []
    seen_ok = 0
    for ids in CANDIDATES:
        for extra in CANDIDATES:
            obj = {"ids": ids, "extra": extra}
            try:
                Payload.model_validate(obj)
                valid = True
            except pydantic.ValidationError:
                valid = False
            got = accepts(d, json.dumps(obj, ensure_ascii=False))
            assert not got or valid, obj               # sound
            # complete for contents written as the model writes JSON (json.dumps defaults)
            if valid and all(json.dumps(json.loads(v)) == v for v in (ids, extra)):
                assert got, obj
                seen_ok += 1
    assert seen_ok > 10


def test_string_keywords_beside_the_content_are_intersected():
    schema = {"type": "string", "contentMediaType": "application/json",
              "contentSchema": {"type": "integer"}, "maxLength": 2}
    d, _ = dfa(schema)
    assert accepts(d, '"12"') and not accepts(d, '"123"') and not accepts(d, '"ab"')


@pytest.mark.parametrize("schema", [
    {"type": "string", "contentSchema": {"type": "integer"}},
    {"type": "string", "contentMediaType": "application/json", "contentEncoding": "base64",
     "contentSchema": {"type": "integer"}},
])
def test_other_content_stays_an_annotation(schema):
    d, _ = dfa(schema)
    assert accepts(d, '"anything"')
