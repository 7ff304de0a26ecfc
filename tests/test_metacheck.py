"""The fast meta-schema check never calls an invalid schema valid (property, against
jsonschema's own check_schema), and calls the schemas in schemas/ valid."""

from __future__ import annotations

import json

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from toolc.schema.metacheck import certainly_valid

META = jsonschema.Draft202012Validator(jsonschema.Draft202012Validator.META_SCHEMA)
DRAFTS = {uri: cls(cls.META_SCHEMA, format_checker=cls.FORMAT_CHECKER) for uri, cls in (
    ("http://json-schema.org/draft-07/schema#", jsonschema.Draft7Validator),
    ("http://json-schema.org/draft-06/schema#", jsonschema.Draft6Validator))}

_scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 5), st.floats(-2, 5),
                     st.sampled_from(["", "x", "string", "object", "integer", "dict"]))
_keys = st.sampled_from(["type", "properties", "required", "items", "enum", "const",
                         "minItems", "maxItems", "anyOf", "allOf", "not", "pattern",
                         "minimum", "additionalProperties", "prefixItems", "$defs", "$ref",
                         "description", "dependentRequired", "uniqueItems", "x-extra",
                         "$schema", "minLength", "examples", "$id", "$anchor",
                         "dependencies", "multipleOf", "additionalItems", "if"])


def _schemas():
    return st.recursive(
        st.one_of(st.booleans(), st.dictionaries(_keys, _scalars, max_size=3)),
        lambda inner: st.one_of(
            st.dictionaries(_keys, st.one_of(inner, st.lists(inner, max_size=3),
                                             st.dictionaries(st.sampled_from(["a", "b"]),
                                                             inner, max_size=2),
                                             st.lists(st.sampled_from(["a", "b", "a"]),
                                                      max_size=3),
                                             _scalars), max_size=4)),
        max_leaves=12)


@settings(max_examples=600, deadline=None, suppress_health_check=list(HealthCheck),
          derandomize=True)
@given(_schemas())
def test_never_more_lenient_than_jsonschema(schema):
    if certainly_valid(schema):
        assert META.is_valid(schema), schema


@settings(max_examples=600, deadline=None, suppress_health_check=list(HealthCheck),
          derandomize=True)
@given(st.sampled_from(sorted(DRAFTS)), _schemas())
def test_drafts_6_and_7_never_more_lenient_than_jsonschema(uri, schema):
    if isinstance(schema, dict):
        schema = dict(schema, **{"$schema": uri})
    if certainly_valid(schema):
        assert DRAFTS[uri].is_valid(schema), schema


def test_zod_style_draft7_tools_take_the_fast_path():
    schema = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
              "properties": {"pair": {"type": "array", "items": {"type": "string"},
                                      "additionalItems": False}},
              "required": ["pair"], "additionalProperties": False}
    assert certainly_valid(schema)
    assert not certainly_valid(dict(schema, properties={"p": {"additionalItems": 3}}))


@pytest.mark.parametrize("name", ["weather", "math", "assistant"])
def test_real_tool_files_take_the_fast_path(name):
    with open(f"schemas/{name}.json", encoding="utf-8") as fh:
        for tool in json.load(fh):
            assert certainly_valid(tool["function"]["parameters"])


def test_doubtful_shapes_go_to_jsonschema():
    assert not certainly_valid({"minItems": 2.0})          # valid, but let jsonschema say so
    assert not certainly_valid({"type": "dict"})
    assert not certainly_valid({"$schema": "http://json-schema.org/draft-04/schema#"})
    assert not certainly_valid({"required": ["a", "a"]})
    assert certainly_valid({"type": ["string", "null"], "x-vendor": {"any": 1}})


@pytest.mark.parametrize("value", [0, -1, 0.0, True, "2"])
def test_multiple_of_must_be_positive(value):
    # it was missing from the table, so multipleOf 0 passed as an unknown keyword
    assert not certainly_valid({"type": "integer", "multipleOf": value})
    assert not META.is_valid({"type": "integer", "multipleOf": value})
