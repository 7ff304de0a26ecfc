"""Per keyword, at the byte level: soundness (random walks through the compiled DFA parse and
validate with jsonschema, formats checked by their real validators) and completeness (valid
instances from hypothesis-jsonschema, written as json.dumps writes them, are accepted).
Through the real tokenizer: tests/test_schema_e2e.py."""

from __future__ import annotations

import json
import random
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis_jsonschema import from_schema

from schema_cases import (CASES, EXPLICIT, ByteLang, closed, dumps, encodable, nesting,
                          toolc_order, validator)
from toolc.schema.refs import standardized

_LANGS: dict = {}


def lang(name: str) -> ByteLang:
    if name not in _LANGS:
        _LANGS[name] = ByteLang(CASES[name])
    return _LANGS[name]


@pytest.mark.parametrize("name", sorted(CASES))
def test_random_walks_validate(name):
    lg, v = lang(name), validator(CASES[name])
    rng = random.Random(name)
    for _ in range(150):
        data = lg.walk(rng, budget=rng.choice([5, 20, 60]))
        value = json.loads(data.decode("utf-8"))
        errors = [e.message for e in v.iter_errors(value)]
        assert not errors, f"{data!r} is accepted but invalid: {errors}"


def _exponent_in_bounded_number(text: str, schema) -> bool:
    # toolc writes bounded numbers without an exponent (a documented departure)
    bounded = any(k in json.dumps(schema) for k in ('"minimum"', '"maximum"', 'clusiveM'))
    return bounded and re.search(r"\d[eE][+-]?\d", text) is not None


@pytest.mark.parametrize("name", sorted(set(CASES) - set(EXPLICIT)))
def test_valid_instances_are_accepted(name):
    schema = CASES[name]
    lg, valid = lang(name), validator(schema)

    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck),
              derandomize=True)
    @given(from_schema(closed(standardized(schema))))
    def check(value):
        value = toolc_order(value, schema)
        if not encodable(value) or nesting(value) > 4 or not valid.is_valid(value):
            return      # beyond the depth bound, or a generator slip
        text = dumps(value)
        if _exponent_in_bounded_number(text, schema):
            return
        assert lg.accepts(text), f"rejected at byte {lg.dies_at(text)} of {text!r}"

    check()


@pytest.mark.parametrize("name", sorted(EXPLICIT))
def test_listed_instances_of_recursive_schemas_are_accepted(name):
    lg, v = lang(name), validator(CASES[name])
    for value in EXPLICIT[name]:
        assert v.is_valid(value)
        assert lg.accepts(dumps(value)), dumps(value)


# -- invalid instances are rejected at the right byte ----------------------------------------

@pytest.mark.parametrize("name, text, where", [
    ("length", '{"s": "a"}', '"}'),                      # too short: the quote is refused
    ("length", '{"s": "abcdef"}', 'f"'),                 # the sixth character is refused
    ("pattern_anchored", '{"code": "AB-12"}', '-12'),
    ("pattern_anchored", '{"code": "ABC-12345"}', '5"'),
    ("pattern_branches", '{"s": "ax"}', '"}'),
    ("format_date", '{"v": "2023-02-29"}', '9"'),         # not a leap year
    ("format_date", '{"v": "2024-04-31"}', '1"'),
    ("format_ipv4", '{"v": "256.1.1.1"}', '6.1'),
    ("format_ipv4", '{"v": "01.1.1.1"}', '1.1.1.1"'),
    ("format_uuid", '{"v": "123e4567-e89b-12d3-a456-42661417400"}', '"}'),
    ("int_range", '{"month": 13, ', '3, '),
    ("int_range", '{"month": 0, ', '0, '),
    ("int_range", '{"month": 1, "t": -41, ', '1, '),
    ("int_range", '{"month": 1, "t": 4, "big": 1000000001}', '1}'),
    ("int_exclusive_multiple", '{"n": 100}', '0}'),
    ("int_exclusive_multiple", '{"n": 12}', '2}'),     # 12x would pass 100
    ("number_range", '{"x": 2.251, ', '1, '),
    ("number_range", '{"x": -1.6, ', '6, '),
    ("number_range", '{"x": 0, "p": 1}', '1}'),
    ("number_range", '{"x": 0, "p": 0}', '}'),
    ("number_range", '{"x": 1e-3, ', 'e-3'),
    ("prefix_items", '{"pt": [1, "a", 2]}', ', 2'),
    ("prefix_rest", '{"pt": [true, 1, 2, 3, 4]}', ', 4'),
    ("contains", '{"xs": [10, 1, 2]}', ']'),
    ("additional_schema", '{"a": 1, "a": 2}', '": 2'),   # a declared key is no extra key
    ("additional_schema", '{"x": 1}', '1}'),
    ("min_max_properties", '{}', '}'),
    ("min_max_properties", '{"a": 1, "b": true, "c": null}', ', "c'),
    ("pattern_properties", '{"y_1": 1}', 'y_1'),
    ("property_names", '{"Abc": true}', 'Abc'),
    ("dependent_required", '{"a": 1}', '}'),
    ("dependent_required", '{"c": true}', 'c": true'),   # c needs a, which comes first
    ("all_of", '{"x": 11, ', '1, '),
    ("nullable", '{"x": null, "e": "c"}', 'c"}'),
    ("type_list", '{"x": 2}', '}'),                    # 2 may still become 20
])
def test_invalid_instances_are_rejected_where_they_go_wrong(name, text, where):
    lg = lang(name)
    at = lg.dies_at(text)
    assert at < len(text.encode()), f"{text!r} is not rejected"
    assert text.encode()[at:].startswith(where.encode()), \
        f"{text!r} rejected at {text.encode()[at:]!r}, expected at {where!r}"


def test_recursion_is_unrolled_to_the_depth_bound():
    deep = {"v": 0}
    for i in range(1, 6):
        deep = {"v": i, "kids": [deep]}
    shallow = ByteLang(CASES["tree"], max_depth=2)
    assert shallow.accepts(dumps({"root": {"v": 1, "kids": [{"v": 2}]}}))
    # at the bound, a node's kids can only be the empty list
    assert shallow.accepts(dumps({"root": {"v": 1, "kids": [{"v": 2, "kids": []}]}}))
    assert not shallow.accepts(dumps({"root": {"v": 1, "kids": [{"v": 2, "kids": [{"v": 3}]}]}}))
    assert not lang("tree").accepts(dumps({"root": deep}))


def test_type_aliases_are_reported():
    lg = ByteLang(CASES["type_aliases"])
    messages = {n["pointer"]: n["message"] for n in lg.compiler.notices}
    assert messages["/properties/d/type"] == "non-standard type 'dict' read as 'object'"
    assert messages["/properties/a/type"] == "non-standard type 'any' read as any type"
    assert len(messages) == 8     # dict, float, list, int (in items), str, bool, tuple, any
