"""``unevaluatedProperties`` and ``unevaluatedItems`` (toolc/schema/unevaluated.py): rewritten
before compilation where what is evaluated is static or splits into cases, refused with the
pointer otherwise. Every verdict is also checked against jsonschema's, so a test cannot assert
a reading JSON Schema does not have; each compiled case was refused before the rewrite."""

from __future__ import annotations

import json
from itertools import permutations

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolc.errors import ToolcError, UnsupportedSchemaError
from toolc.fsm import compile_expr
from toolc.schema import SchemaCompiler, SchemaOptions
from toolc.schema.strings import expanded_lengths

BASE = {"properties": {"id": {"type": "integer"}}, "required": ["id"]}


def dfa_of(schema, mode="schema", order="schema", lenient=False):
    sc = SchemaCompiler(SchemaOptions(whitespace="compact", additional_properties=mode,
                                      property_order=order, lenient=lenient))
    sc.root = schema
    with expanded_lengths():
        return compile_expr(sc._schema(schema, "")), sc


def accepts(dfa, value) -> bool:
    """Whether the value is accepted in some order of its keys (declared keys come before
    undeclared ones, in any order of their own: not what these tests are about)."""
    orders = [dict(p) for p in permutations(value.items())] if isinstance(value, dict) \
        else [value]
    for v in orders:
        q = dfa.step_bytes(0, json.dumps(v, separators=(",", ":")).encode())
        if q >= 0 and dfa.final[q]:
            return True
    return False


def check(schema, good, bad, modes=("schema", "closed")):
    v = jsonschema.Draft202012Validator(schema)
    for x in good:
        assert v.is_valid(x), ("the test's own claim", x)
    for x in bad:
        assert not v.is_valid(x), ("the test's own claim", x)
    for mode in modes:      # (every key order: the order rule is not what is tested here)
        dfa, _ = dfa_of(schema, mode, order="any")
        assert [x for x in good if not accepts(dfa, x)] == [], mode
        assert [x for x in bad if accepts(dfa, x)] == [], mode


@pytest.mark.parametrize("schema, good, bad", [
    # closed inheritance: the base's names through $ref inside allOf
    ({"$defs": {"Base": BASE}, "allOf": [{"$ref": "#/$defs/Base"}],
      "properties": {"name": {"type": "string"}}, "unevaluatedProperties": False},
     [{"id": 1}, {"id": 1, "name": "x"}], [{"id": 1, "x": 1}, {"name": "x"}]),
    # a schema for every name outside the evaluated ones; patterns evaluate what they match
    ({"properties": {"a": {"type": "integer"}}, "patternProperties": {"^x": {}},
      "unevaluatedProperties": {"type": "string"}},
     [{"a": 1, "b": "s"}, {"x1": 2}, {"a": 1, "x": 1, "z": "t"}], [{"a": 1, "b": 2}, {"z": None}]),
    # a cousin's names are not seen: the allOf branch evaluates nothing of "foo"
    ({"allOf": [{"properties": {"foo": True}}, {"unevaluatedProperties": False}]},
     [{}], [{"foo": 1}]),
    # a nested unevaluatedProperties evaluates every name of its object
    ({"properties": {"foo": {"type": "string"}}, "allOf": [{"unevaluatedProperties": True}],
      "unevaluatedProperties": False}, [{"foo": "a", "bar": 1}], [{"foo": 1}]),
    # if/then/else: "then"'s names when "if" passes, "else"'s when it fails
    ({"if": {"properties": {"k": {"const": 1}}, "required": ["k"]},
      "then": {"properties": {"t": True}}, "else": {"properties": {"e": True}},
      "unevaluatedProperties": False},
     # (a failed "if" evaluates nothing: "k" is then unevaluated)
     [{"k": 1, "t": 2}, {"e": 1}, {}], [{"k": 1, "e": 1}, {"k": 2, "t": 1}, {"k": 2, "e": 1}]),
    # dependentSchemas: the names of a present key's schema
    ({"properties": {"a": True}, "dependentSchemas": {"a": {"properties": {"b": True}}},
      "unevaluatedProperties": False}, [{"a": 1, "b": 2}, {"a": 1}], [{"b": 1}, {"a": 1, "c": 1}]),
    # a discriminated oneOf: each branch's own names
    ({"properties": {"kind": {"type": "string"}}, "required": ["kind"],
      "oneOf": [{"properties": {"kind": {"const": "a"}, "x": True}},
                {"properties": {"kind": {"const": "b"}, "y": True}}],
      "unevaluatedProperties": False},
     [{"kind": "a", "x": 1}, {"kind": "b", "y": 1}], [{"kind": "a", "y": 1}, {"kind": "c"}]),
    # not evaluates nothing
    ({"properties": {"a": True}, "not": {"properties": {"b": {"const": 1}}, "required": ["b"]},
      "unevaluatedProperties": False}, [{"a": 1}], [{"a": 1, "b": 2}]),
])
def test_unevaluated_properties_cases(schema, good, bad):
    check(schema, good, bad)


def test_anyof_and_overlapping_oneof_split_into_cases():
    # anyOf: the names of every branch that passes; oneOf (branches may share a value):
    # exactly one passes, then its names
    any_of = {"properties": {"foo": True}, "anyOf": [
        {"properties": {"bar": {"const": 1}}, "required": ["bar"]},
        {"properties": {"baz": {"const": 2}}, "required": ["baz"]}],
        "unevaluatedProperties": False}
    check(any_of, [{"foo": 0, "bar": 1}, {"foo": 0, "bar": 1, "baz": 2}, {"foo": 0, "baz": 2}],
          [{"foo": 0, "bar": 1, "baz": 3}, {"foo": 0}, {"foo": 0, "bar": 1, "q": 1}])
    one_of = dict(any_of, oneOf=any_of["anyOf"])
    del one_of["anyOf"]
    check(one_of, [{"foo": 0, "bar": 1}, {"foo": 0, "baz": 2}],
          [{"foo": 0, "bar": 1, "baz": 2}, {"foo": 0, "bar": 1, "baz": 3}, {"foo": 0}])


def test_overlapping_one_of_in_an_allof_branch_and_a_ref_beside_the_keyword():
    # the suite's "ref inside allOf / oneOf": refused before (a oneOf beside the cases)
    schema = {"$defs": {"one": {"properties": {"a": True}},
                        "two": {"required": ["x"], "properties": {"x": True}}},
              "allOf": [{"$ref": "#/$defs/one"}, {"properties": {"b": True}},
                        {"oneOf": [{"$ref": "#/$defs/two"},
                                   {"required": ["y"], "properties": {"y": True}}]}],
              "unevaluatedProperties": False}
    check(schema, [{"a": 1, "x": 1}, {"a": 1, "b": 1, "y": 1}],
          [{"a": 1, "x": 1, "y": 1}, {"a": 1}, {"x": 1, "z": 1}])
    # a $ref beside the keyword: the node's own names are written first (schema order)
    ref = {"$defs": {"B": {"properties": {"bar": True}}}, "properties": {"foo": True},
           "$ref": "#/$defs/B", "unevaluatedProperties": False}
    for mode in ("schema", "closed"):
        dfa, _ = dfa_of(ref, mode)
        q = dfa.step_bytes(0, b'{"foo":1,"bar":2}')
        assert q >= 0 and dfa.final[q]


def test_unevaluated_properties_true_keeps_a_closed_mode_object_open():
    schema = {"properties": {"a": {"type": "integer"}}, "unevaluatedProperties": True}
    check(schema, [{"a": 1}, {"a": 1, "b": "s"}], [{"a": "s"}], modes=("closed",))
    dfa, _ = dfa_of({"properties": {"a": {"type": "integer"}}}, "closed")
    assert not accepts(dfa, {"a": 1, "b": "s"})     # without it, closed by default


@pytest.mark.parametrize("schema, good, bad", [
    ({"prefixItems": [{"type": "string"}], "allOf": [{"prefixItems": [True, {"type": "number"}]}],
      "unevaluatedItems": False}, [["a"], ["a", 1]], [["a", 1, 2], [1]]),
    ({"items": {"type": "number"}, "unevaluatedItems": {"type": "string"}}, [[1, 2]], [["a"]]),
    ({"prefixItems": [True], "unevaluatedItems": {"type": "integer"}}, [["x", 1, 2], []],
     [["x", "y"]]),
    # contains evaluates the items it matches
    ({"prefixItems": [True], "contains": {"type": "string"}, "unevaluatedItems": False},
     [[1, "a", "b"], ["x", "y"]], [[1, "a", 2], [1, 2]]),
    ({"prefixItems": [{"const": "foo"}], "if": {"prefixItems": [True, {"const": "bar"}]},
      "then": {"prefixItems": [True, True, {"const": "then"}]},
      "else": {"prefixItems": [True, True, True, {"const": "else"}]}, "unevaluatedItems": False},
     [["foo", "bar", "then"], ["foo", "x", "y", "else"]], [["foo", "bar", "then", "x"],
                                                           ["foo", "x", "y", "else", 1]]),
    ({"unevaluatedItems": {"type": "boolean"}, "anyOf": [{"items": {"type": "string"}}, True]},
     [["a", "b"], [True, False]], [["a", True]]),
])
def test_unevaluated_items_cases(schema, good, bad):
    check(schema, good, bad)


@pytest.mark.parametrize("schema, pointer, words", [
    ({"anyOf": [{"properties": {c: True}} for c in "abcde"], "unevaluatedProperties": False},
     "/unevaluatedProperties", "5 branches"),
    ({"$defs": {"A": {"allOf": [{"$ref": "#/$defs/A"}], "properties": {"a": True}}},
      "$ref": "#/$defs/A", "unevaluatedProperties": False}, "/unevaluatedProperties",
     "recurses in place"),
    ({"properties": {"x": {"$dynamicRef": "#a", "unevaluatedItems": False}}},
     "/properties/x/unevaluatedItems", "$dynamicRef"),
])
def test_refused_with_the_pointer_and_the_reason(schema, pointer, words):
    with pytest.raises(UnsupportedSchemaError) as e:
        dfa_of(schema)
    assert e.value.pointer == pointer and words in e.value.message


def test_lenient_drops_a_refused_one_and_records_it():
    schema = {"type": "object", "properties": {"x": {
        "anyOf": [{"properties": {c: True}} for c in "abcde"],
        "unevaluatedProperties": False}}}
    dfa, sc = dfa_of(schema, lenient=True)
    assert [d["pointer"] for d in sc.dropped] == ["/properties/x/unevaluatedProperties"]
    assert accepts(dfa, {"x": {"a": 1, "z": 2}})      # dropped: wider, and recorded


def test_merge_leaves_a_shared_properties_map_alone():
    # an allOf whose other branch has additionalProperties used to rewrite the $ref target's
    # own properties map in place, so the target's other uses rejected its declared names
    schema = {"$defs": {"A": {"properties": {"foo": {}}}}, "properties": {
        "p": {"allOf": [{"additionalProperties": False}, {"$ref": "#/$defs/A"}]},
        "q": {"$ref": "#/$defs/A"}}}
    check(schema, [{"q": {"foo": 1}}, {"p": {}}], [{"p": {"foo": 1}}], modes=("schema",))


# -- property: random small schemas against jsonschema --------------------------------------
ATOMS = [
    {"properties": {"a": {"type": "integer"}}}, {"properties": {"b": True}},
    {"properties": {"a": True, "c": {"type": "string"}}},
    {"patternProperties": {"^x": {"type": "integer"}}},
    {"required": ["a"]}, {"properties": {"b": {"const": 1}}, "required": ["b"]},
    {"additionalProperties": {"type": "integer"}}, {"unevaluatedProperties": True},
    {"properties": {"c": True}, "unevaluatedProperties": False}, True,
]
POOL = [{}, {"a": 1}, {"a": "s"}, {"b": 1}, {"b": 2}, {"c": "s"}, {"x1": 1}, {"z": 1},
        {"a": 1, "b": 1}, {"a": 1, "c": "s"}, {"b": 1, "z": "s"}, {"a": 1, "x": 2, "z": 3},
        {"c": "s", "x": 1}, 1, "s"]


def combined(atoms, dependent: bool):
    """Up to three atoms under allOf/anyOf/oneOf/if/(dependentSchemas)/not, nested."""
    def extend(sub):
        parts = [
            st.lists(sub, min_size=1, max_size=2).map(lambda xs: {"allOf": xs}),
            st.lists(sub, min_size=2, max_size=2).map(lambda xs: {"anyOf": xs}),
            st.lists(sub, min_size=2, max_size=2).map(lambda xs: {"oneOf": xs}),
            st.tuples(sub, sub, sub).map(lambda t: {"if": t[0], "then": t[1], "else": t[2]}),
        ]
        if dependent:
            parts.append(sub.map(lambda x: {"dependentSchemas": {"a": x}}))
        return st.one_of(*parts, sub.map(lambda x: {"not": x}))
    return st.recursive(st.sampled_from(atoms), extend, max_leaves=3)


def uneval_schemas():
    inner = combined(ATOMS, True)
    top = st.sampled_from([False, True, {"type": "integer"}])
    return st.tuples(inner, st.sampled_from(ATOMS[:4] + [True]), top).map(
        lambda t: {"allOf": [t[0], t[1]], "unevaluatedProperties": t[2]})


@settings(max_examples=30, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(uneval_schemas())
def test_unevaluated_properties_agrees_with_jsonschema(schema):
    """Schema mode (every key order): toolc's verdict is jsonschema's on the pool; closed mode:
    sound (a valid object may be rejected: closed by default). Refusals are toolc errors."""
    v = jsonschema.Draft202012Validator(schema)
    for mode in ("schema", "closed"):
        try:
            dfa, _ = dfa_of(schema, mode, order="any")
        except ToolcError:
            continue
        wrong = [x for x in POOL if accepts(dfa, x) != v.is_valid(x)
                 and not (mode == "closed" and v.is_valid(x))]
        assert not wrong, f"{mode}: {json.dumps(schema)} disagrees on {wrong}"


def test_draft_2019_09_contains_beside_unevaluated_items_is_refused():
    # 2019-09's contains evaluates no item; read as 2020-12 it would let [1, "a"] through
    from toolc.schema.vocabulary import prepare
    schema = {"$schema": "https://json-schema.org/draft/2019-09/schema", "items": [True],
              "allOf": [{"contains": {"type": "string"}}], "unevaluatedItems": False}
    with pytest.raises(UnsupportedSchemaError) as e:
        prepare(schema)
    assert e.value.pointer == "/unevaluatedItems" and "2019-09" in e.value.message
    assert [d["pointer"] for d in prepare(schema, lenient=True).dropped] == ["/unevaluatedItems"]
    assert prepare(dict(schema, **{"$schema": "https://json-schema.org/draft/2020-12/schema"}))


# -- through the real Qwen3 tokenizer -------------------------------------------------------
E2E_TOOLS = {
    "create_pet": {"$defs": {"Base": {"type": "object", "properties": {
        "id": {"type": "integer"}}, "required": ["id"]}},
        "type": "object", "allOf": [{"$ref": "#/$defs/Base"}],
        "properties": {"name": {"type": "string", "maxLength": 8}}, "required": ["name"],
        "unevaluatedProperties": False},
    "shape": {"type": "object", "properties": {"kind": {"enum": ["a", "b"]}}, "required": ["kind"],
              "oneOf": [{"properties": {"kind": {"const": "a"}, "x": {"type": "boolean"}}},
                        {"properties": {"kind": {"const": "b"}, "y": {"type": "null"}}}],
              "unevaluatedProperties": False},
    "pair": {"type": "object", "properties": {"p": {
        "type": "array", "prefixItems": [{"type": "string", "maxLength": 4}],
        "contains": {"type": "boolean"}, "unevaluatedItems": False}}, "required": ["p"]},
}


@pytest.mark.slow
def test_tokenized_calls_are_exact():
    """Random token walks parse and validate; valid calls as Qwen3 renders them are accepted;
    a call with a name outside the evaluated set is rejected at its key."""
    import random

    import toolc
    from helpers import accepts_all, distance_to_end, random_walk, render_answer
    from toolc.parse import parse_tool_calls
    from toolc.tokenizer import load_vocabulary
    vocab = load_vocabulary("qwen")
    tools = [{"type": "function", "function": {"name": n, "parameters": s}}
             for n, s in E2E_TOOLS.items()]
    art = toolc.compile_tools(tools, "qwen", tool_choice="required", max_depth=2)
    validators = {n: jsonschema.Draft202012Validator(s) for n, s in E2E_TOOLS.items()}
    dist, rng, seen = distance_to_end(art), random.Random(5), set()
    for _ in range(60):
        ids = random_walk(art, rng, dist, budget=rng.choice([30, 80]), trigger=151657)
        for call in parse_tool_calls(vocab.decode_bytes(ids[:-1]).decode("utf-8"))["parsed"]:
            assert validators[call["name"]].is_valid(call["arguments"]), call
            seen.add(call["name"])
    assert len(seen) == len(E2E_TOOLS)
    for name, args in [("create_pet", {"name": "rex", "id": 1}),
                       ("shape", {"kind": "a", "x": True}), ("shape", {"kind": "b", "y": None}),
                       ("pair", {"p": ["ab", True, False]}), ("pair", {"p": ["", False]})]:
        assert validators[name].is_valid(args)
        ok, bad = accepts_all(art, vocab.encode(render_answer([(name, args)])))
        assert ok, (name, args, bad)
    for name, args in [("create_pet", {"name": "rex", "id": 1, "extra": 1}),
                       ("shape", {"kind": "b", "x": True}), ("pair", {"p": ["ab", True, 1]})]:
        assert not validators[name].is_valid(args)
        ok, _ = accepts_all(art, vocab.encode(render_answer([(name, args)])))
        assert not ok, (name, args)


def test_an_unused_def_is_not_refused():
    schema = {"$defs": {"Unused": {"anyOf": [{"properties": {c: True}} for c in "abcde"],
                                   "unevaluatedProperties": False}},
              "properties": {"a": True}, "unevaluatedProperties": False}
    check(schema, [{"a": 1}], [{"b": 1}])


ITEM_ATOMS = [{"prefixItems": [{"type": "integer"}]}, {"prefixItems": [True, {"type": "string"}]},
              {"items": {"type": "integer"}}, {"contains": {"type": "string"}},
              {"unevaluatedItems": True}, {"prefixItems": [True], "unevaluatedItems": False},
              {"minItems": 2}, True]
ITEM_POOL = [[], [1], ["a"], [1, "a"], [1, 2], ["a", "b"], [1, "a", 2], [1, "a", "b"],
             [None], [1, None], [2, 3, 4], {}, "s"]


def uneval_item_schemas():
    inner = combined(ITEM_ATOMS, False)
    top = st.sampled_from([False, True, {"type": "integer"}])
    return st.tuples(inner, top).map(lambda t: {"allOf": [t[0]], "unevaluatedItems": t[1]})


@settings(max_examples=30, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(uneval_item_schemas())
def test_unevaluated_items_agrees_with_jsonschema(schema):
    """Arrays have no closed reading: both modes get every verdict of the pool right."""
    v = jsonschema.Draft202012Validator(schema)
    for mode in ("schema", "closed"):
        try:
            dfa, _ = dfa_of(schema, mode)
        except ToolcError:
            continue
        wrong = [x for x in ITEM_POOL if accepts(dfa, x) != v.is_valid(x)]
        assert not wrong, f"{mode}: {json.dumps(schema)} disagrees on {wrong}"
