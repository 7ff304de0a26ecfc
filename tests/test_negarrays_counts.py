"""Array shapes under ``not``/``oneOf`` that were refused before: ``items`` after a
``prefixItems`` over objects (on either side), and ``contains`` with ``minContains`` above 1 or
``maxContains`` (:mod:`toolc.schema.negarrays`); and ``maxContains`` itself, counted exactly
(:mod:`toolc.schema.containscount`).

Properties against jsonschema, in both ``--additional-properties`` modes (closed mode: on the
closed reading of ``tests/test_algebra.oracle``):

* soundness: random walks through the byte automaton end in JSON texts that validate;
* completeness: hypothesis-jsonschema instances of each positive part, where valid, are
  accepted in some key order (toolc writes an object in its schema's order), and a fixed pool
  of arrays gets every verdict right.

The end-to-end test (slow) compiles such schemas as tools through Qwen3's tokenizer: random
token walks parse and validate, and rendered valid calls are accepted token by token.
"""

from __future__ import annotations

import json
import math
import random
from decimal import Decimal, InvalidOperation

import jsonschema
import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

from test_algebra import accepts, all_spellings, dfa_of_mode, oracle
from toolc.errors import BudgetExceededError, EmptyLanguageError, UnsupportedSchemaError
from toolc.schema.keywords import NoValue

OBJ_A = {"type": "object", "properties": {"a": {"type": "integer"}}}
OBJ_AB = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
          "required": ["b"]}
OBJ_BA = {"type": "object", "properties": {"b": {"type": "string"}, "a": {"const": 1}}}
ITEMS = [{}, {"type": "integer"}, OBJ_A, OBJ_AB, OBJ_BA, {"type": "object"},
         {"anyOf": [{"type": "integer"}, OBJ_A]}, {"anyOf": [{"type": "string"}, OBJ_BA]}]
POOL = [[], [1], ["s"], [{}], [{"a": 1}], [{"a": 2}], [{"b": "x"}], [{"a": 1, "b": "x"}],
        [1, {"a": 1}], [{"a": 1}, 1], [{"a": 1}, {"a": 2}], [{"b": "x"}, {"b": "y"}],
        [1, {"b": "x"}, {"a": 1, "b": "y"}], [{"a": 1}, {"a": 1}, {"a": 1}], [1, 2, 3],
        [{"c": 1}], ["s", 1, {"a": 1}], [[1]], [None, {"a": 1}]]


@st.composite
def prefixed(draw):
    """An array schema whose ``items`` follow a ``prefixItems`` of 0 to 2 schemas."""
    out = {"type": "array", "items": draw(st.sampled_from(ITEMS[1:]))}
    n = draw(st.integers(0, 2))
    if n:
        out["prefixItems"] = [draw(st.sampled_from(ITEMS)) for _ in range(n)]
    return out


@st.composite
def counted(draw):
    """An array schema with ``contains`` and ``minContains``/``maxContains``."""
    out = {"type": "array", "contains": draw(st.sampled_from(ITEMS[1:6]))}
    lo = draw(st.sampled_from([None, 0, 1, 2, 3]))
    hi = draw(st.sampled_from([None, None, 0, 1, 2]))
    if lo is not None:
        out["minContains"] = lo
    if hi is not None or lo in (None, 1):
        out["maxContains"] = 1 if hi is None else hi
    if draw(st.booleans()):
        out["items"] = draw(st.sampled_from(ITEMS[1:]))
    return out


def shape(draw_base, draw_other, negate: bool):
    return dict(draw_base, **{"not": draw_other}) if negate else \
        {"oneOf": [draw_base, draw_other]}


def walks(dfa, rng: random.Random, n: int) -> list[bytes]:
    """``n`` random texts of the DFA's language (bytes only), each steered to an end after
    40 bytes."""
    trans, final = dfa.trans, dfa.final
    byte_class = np.asarray(dfa.alphabet.byte_class[:256])
    first = {int(c): b for b, c in reversed(list(enumerate(byte_class)))}
    cols = np.array(sorted(first))
    step_to = trans[:, cols]
    dist = np.where(np.asarray(final, dtype=bool), 0, 10 ** 9)
    while True:     # distance to a final state, relaxed over all states at once
        via = np.where(step_to >= 0, dist[np.maximum(step_to, 0)] + 1, 10 ** 9).min(axis=1)
        nxt = np.minimum(dist, via)
        if (nxt == dist).all():
            break
        dist = nxt
    out = []
    for _ in range(n):
        q, text = 0, bytearray()
        for step in range(400):
            if final[q] and (step > 40 or rng.random() < 0.15):
                break
            moves = [(c, int(t)) for c, t in enumerate(trans[q]) if t >= 0 and c in first]
            if not moves:
                break
            if step > 40:
                best = min(dist[t] for _, t in moves)
                moves = [m for m in moves if dist[m[1]] == best]
            c, q = rng.choice(moves)
            members = [b for b in range(256) if byte_class[b] == c]
            text.append(rng.choice(members))
        assert final[q], bytes(text)
        out.append(bytes(text))
    return out


def positive_parts(schema: dict) -> list:
    """The schemas whose instances may be valid: the one beside ``not``, or each branch."""
    if "oneOf" in schema:
        return schema["oneOf"]
    return [{k: v for k, v in schema.items() if k != "not"}]


def few_spellings(x) -> bool:
    """Whether ``all_spellings`` stays small (a handful of items of up to three keys)."""
    def count(v):
        if isinstance(v, list):
            return math.prod(count(i) for i in v)
        if isinstance(v, dict):
            return math.factorial(len(v)) * math.prod(count(i) for i in v.values())
        return 1
    return len(json.dumps(x)) < 120 and count(x) <= 64


def exact_number(text: str):
    """A JSON fraction as its exact value (a float would round 1e19 + 0.5 to an integer)."""
    try:
        d = Decimal(text)
    except InvalidOperation:        # an exponent past Decimal's range
        return float(text)
    if abs(d.adjusted()) > 30:      # 1e999999: no int of a million digits
        return float(d)
    return int(d) if d == d.to_integral_value() else d


RESULTS: list = []
# no shrinking: a failing shape is reported as drawn (shrinking recompiles it for minutes)
NO_SHRINK = (Phase.explicit, Phase.generate)


def check_exact(schema: dict, mode: str, data) -> None:
    try:
        dfa = dfa_of_mode(schema, mode)
    except (EmptyLanguageError, NoValue):
        dfa = None
    except UnsupportedSchemaError:
        RESULTS.append(False)
        return
    RESULTS.append(True)
    v = jsonschema.Draft202012Validator(oracle(schema, mode))
    for x in POOL:
        got = dfa is not None and any(accepts(dfa, s) for s in all_spellings(x))
        assert got == v.is_valid(x), f"{mode} {json.dumps(schema)}: {x} accepted={got}"
    if dfa is None:
        return
    for t in walks(dfa, random.Random(json.dumps(schema) + mode), 12):
        value = json.loads(t, parse_float=exact_number)
        assert v.is_valid(value), f"{mode} {json.dumps(schema)}: {t!r} accepted, invalid"
    for part in positive_parts(schema):
        for _ in range(2):
            x = data.draw(from_schema(oracle(part, mode)))
            if few_spellings(x) and v.is_valid(x):
                assert any(accepts(dfa, s) for s in all_spellings(x)), \
                    f"{mode} {json.dumps(schema)}: valid {x} rejected"


@settings(max_examples=15, deadline=None, derandomize=True, phases=NO_SHRINK,
          suppress_health_check=list(HealthCheck))
@given(prefixed(), prefixed(), st.sampled_from(["closed", "schema"]), st.booleans(), st.data())
def test_items_after_a_prefix_under_not_and_oneof_are_exact(a, b, mode, negate, data):
    """``not``/``oneOf`` where either side has ``items`` after a ``prefixItems``, over
    objects, free-form and composed items (refused before)."""
    check_exact(shape(a, b, negate), mode, data)


@pytest.mark.slow     # some shapes (a prefix, a count, a nested not) take seconds to build
@settings(max_examples=8, deadline=None, derandomize=True, phases=NO_SHRINK,
          suppress_health_check=list(HealthCheck))
@given(prefixed(), counted(), st.sampled_from(["closed", "schema"]), st.booleans(), st.data())
def test_contains_counts_under_not_and_oneof_are_exact(a, b, mode, negate, data):
    """``not``/``oneOf`` of ``contains`` with ``minContains`` above 1 or ``maxContains``
    (refused before)."""
    check_exact(shape(a, b, negate), mode, data)


@settings(max_examples=12, deadline=None, derandomize=True, phases=NO_SHRINK,
          suppress_health_check=list(HealthCheck))
@given(counted(), st.sampled_from(["closed", "schema"]), st.data())
def test_max_contains_is_exact(schema, mode, data):
    """``maxContains`` on its own (refused before): each item counted or not by its value."""
    check_exact(schema, mode, data)


def test_most_shapes_compile():
    if len(RESULTS) < 30:
        pytest.skip("runs after the property tests")
    assert sum(RESULTS) >= len(RESULTS) * 9 // 10, RESULTS


@pytest.mark.parametrize("mode", ["closed", "schema"])
@pytest.mark.parametrize("schema, good, bad", [
    # an item after the prefix fails `items`; a failing prefix item alone is not enough
    ({"type": "array", "not": {"prefixItems": [{"type": "integer"}], "items": OBJ_AB}},
     [[1, {"a": 1}], ["s"], [1, 2], [{"b": "x"}, {"b": "x"}, 3]],
     [[], [1], [1, {"b": "x"}], [1, {"b": "x"}, {"a": 2, "b": "y"}]]),
    # the kept side has the prefix: its prefix items do not count against `items`
    ({"type": "array", "prefixItems": [{"type": "integer"}, OBJ_A], "items": OBJ_A,
      "not": {"items": {"type": "object"}}},
     [[1], [1, {"a": 1}], [1, {}, {"a": 2}]], [[]]),
    # fewer than two matches, or more than three
    ({"type": "array", "items": {"anyOf": [{"type": "integer"}, OBJ_A]},
      "not": {"contains": OBJ_A, "minContains": 2, "maxContains": 3}},
     [[], [1], [{"a": 1}], [{}, {}, {}, {}]], [[{}, {}], [{}, 1, {"a": 1}, 2, {}]]),
])
def test_known_cases(schema, good, bad, mode):
    dfa = dfa_of_mode(schema, mode)
    v = jsonschema.Draft202012Validator(oracle(schema, mode))
    for x in good:
        assert v.is_valid(x) and any(accepts(dfa, s) for s in all_spellings(x)), x
    for x in bad:
        assert not v.is_valid(x) and not any(accepts(dfa, s) for s in all_spellings(x)), x


def test_a_long_prefix_under_not_is_refused_with_its_pointer():
    schema = {"type": "array", "not": {"prefixItems": [{}] * 5, "items": OBJ_A}}
    with pytest.raises(UnsupportedSchemaError) as e:
        dfa_of_mode(schema, "closed")
    assert e.value.pointer == "/not/items" and "over the state budget" in e.value.message


def test_contains_counts_over_the_state_budget_are_refused_with_their_pointer():
    schema = {"type": "array", "maxItems": 10 ** 6, "contains": OBJ_A, "maxContains": 10 ** 5}
    with pytest.raises(BudgetExceededError) as e:
        dfa_of_mode(schema, "closed")
    assert e.value.pointer == "/maxContains" and "over the state budget" in e.value.message
    schema = {"type": "array", "not": {"contains": OBJ_A, "minContains": 10 ** 7}}
    with pytest.raises(BudgetExceededError) as e:
        dfa_of_mode(schema, "closed")
    assert e.value.pointer is not None and "over the state budget" in e.value.message


# -- end to end through Qwen3: the shapes as tool arguments, rendered as the model writes them --
def e2e_params(close: bool) -> dict:
    """One tool's arguments holding each shape: ``minContains`` 2 and ``maxContains`` over
    objects whose keys ``contains`` lists in another order, ``not``/``oneOf`` of arrays of
    objects with ``items`` after a ``prefixItems``, and ``not`` of a ``contains`` count. With
    ``close`` the item objects say ``additionalProperties: false`` (schema mode's open
    objects inside a negation are over the state budget as tool arguments)."""
    c = {"additionalProperties": False} if close else {}
    ba = dict(OBJ_BA, properties={"b": {"type": "string"}, "a": {"type": "integer"}}, **c)
    has_a1 = {"type": "object", "properties": {"a": {"const": 1}, "b": {"type": "string"}},
              "required": ["a"]}
    obj_a, obj_ab = dict(OBJ_A, **c), dict(OBJ_AB, **c)
    int_or_a = {"anyOf": [{"type": "integer"}, OBJ_A]}
    return {"type": "object", "required": ["pairs"], "properties": {
        "pairs": {"type": "array", "items": ba, "contains": has_a1, "minContains": 2},
        "capped": {"type": "array", "items": int_or_a, "contains": obj_a, "maxContains": 1},
        "rows": {"type": "array", "prefixItems": [{"type": "integer"}], "items": obj_ab,
                 "not": {"prefixItems": [{"type": "integer"}, obj_a],
                         "items": {"type": "object", "properties": {"a": {"maximum": 5}}}}},
        "either": {"oneOf": [{"type": "array", "prefixItems": [
                                  {"anyOf": [{"type": "integer"}, obj_a]}], "items": obj_ab},
                             {"type": "array", "items": ba}]},
        "once": {"oneOf": [{"type": "array", "items": ba, "contains": has_a1, "maxContains": 1},
                           {"type": "array", "items": obj_a}]},
        "not2to3": {"type": "array", "items": {"anyOf": [{"type": "integer"}, obj_a]},
                    "not": {"contains": obj_a, "minContains": 2, "maxContains": 3}}}}


TWO = [{"a": 1}, {"b": "x", "a": 1}]
# keys in schema order, as the model writes them; valid and invalid mixed (jsonschema decides)
E2E_ARGS = [
    {"pairs": TWO}, {"pairs": [{"a": 1}]}, {"pairs": [{"a": 1}, {"a": 2}]},
    {"pairs": [{"b": "y", "a": 2}, {"a": 1}, {"b": "z", "a": 1}]}, {"pairs": [{"b": "y"}] + TWO},
    {"pairs": TWO, "capped": [1, {"a": 3}, 2]}, {"pairs": TWO, "capped": [{"a": 1}, {"a": 2}]},
    {"pairs": TWO, "capped": [1, 2]}, {"pairs": TWO, "capped": [{"a": 1}, 5, {"c": 1}]},
    {"pairs": TWO, "rows": [1]}, {"pairs": TWO, "rows": [1, {"a": 9, "b": "x"}]},
    {"pairs": TWO, "rows": [1, {"a": 3, "b": "x"}]}, {"pairs": TWO, "rows": [1, {"b": "x"}]},
    {"pairs": TWO, "rows": [1, {"a": 3, "b": "x"}, {"a": 7, "b": "y"}]},
    {"pairs": TWO, "rows": [1, {"a": 3, "b": "x"}, {"a": 4, "b": "y"}]},
    {"pairs": TWO, "either": [{"a": 2}, {"b": "x"}]}, {"pairs": TWO, "either": [{"a": 2}]},
    {"pairs": TWO, "either": [{"b": "x", "a": 1}, {"b": "y"}]},
    {"pairs": TWO, "either": [{"a": 2}, {"a": 1, "b": "x"}]}, {"pairs": TWO, "either": [5]},
    {"pairs": TWO, "either": [5, {"a": 1, "b": "x"}]}, {"pairs": TWO, "either": [{}, {}]},
    {"pairs": TWO, "once": []}, {"pairs": TWO, "once": [{"b": "x", "a": 1}]},
    {"pairs": TWO, "once": [{"b": "x", "a": 1}, {"b": "y"}]}, {"pairs": TWO, "once": TWO},
    {"pairs": TWO, "once": [{"a": 2}, {"a": 3}]}, {"pairs": TWO, "once": [{"a": 2}, {"b": "s"}]},
    {"pairs": TWO, "not2to3": []}, {"pairs": TWO, "not2to3": [1, {"a": 1}]},
    {"pairs": TWO, "not2to3": [{}, 1, {"a": 2}]}, {"pairs": TWO, "not2to3": [{}, {}, {}, {}]},
    {"pairs": TWO, "not2to3": [{}, {"a": 1}, {}]}, {"pairs": TWO, "not2to3": [{"c": 1}]}]


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["closed", "schema"])
def test_the_array_shapes_end_to_end_through_qwen(mode):
    """Compiled as a tool with Qwen3's tokenizer: each call of ``E2E_ARGS``, rendered as
    Qwen3's template writes it (hermes), is accepted to the end exactly when jsonschema calls
    it valid (closed mode: on the closed reading), and random token walks through the
    artifact end in calls that parse and validate, using every shape."""
    import toolc
    from helpers import accepts_all, distance_to_end, random_walk, render_answer
    from toolc.parse import parse_tool_calls
    from toolc.tokenizer import load_vocabulary
    params = e2e_params(close=mode == "schema")
    tools = [{"type": "function", "function": {"name": "put", "parameters": params}}]
    art = toolc.compile_tools(tools, "qwen", tool_choice="required",
                              additional_properties=mode)
    vocab = load_vocabulary("qwen")
    v = jsonschema.Draft202012Validator(oracle(params, mode))
    verdicts = []
    for args in E2E_ARGS:
        ok, at = accepts_all(art, vocab.encode(render_answer([("put", args)])))
        verdicts.append(v.is_valid(args))
        assert ok == verdicts[-1], (mode, args, at)
    assert 10 <= sum(verdicts) <= len(verdicts) - 10, verdicts
    dist, rng, seen = distance_to_end(art), random.Random(7), 0
    for key in params["properties"]:
        # each walk starts inside one shape's array, then goes where the artifact lets it
        head = '<tool_call>\n{"name": "put", "arguments": {"pairs": '
        head += '[' if key == "pairs" else json.dumps(TWO) + ', "' + key + '": ['
        for _ in range(8):
            ids = random_walk(art, rng, dist, budget=rng.choice([20, 60]),
                              prefix=vocab.encode(head))
            text = vocab.decode_bytes(ids[:-1]).decode("utf-8")
            calls = parse_tool_calls(text)["parsed"]
            for call in calls:
                assert v.is_valid(call["arguments"]), (mode, text)
            seen += len(calls[0]["arguments"][key]) > 0     # the walk's own call
    assert seen >= 30, seen


@pytest.mark.parametrize("schema", [
    {"type": "array", "contains": {"not": {"type": "object", "properties": {
        "a": {"type": "integer"}}}}, "minContains": 2},
    {"type": "array", "contains": {"not": {"type": "object", "properties": {
        "a": {"type": "integer"}}}}, "maxContains": 1, "minItems": 1},
    {"type": "array", "items": {"type": "object"}, "not": {
        "contains": {"not": {"type": "object", "properties": {"a": {"type": "integer"}}}},
        "maxContains": 1}},
])
def test_a_counted_contains_reads_its_not_open_in_closed_mode(schema):
    """Closed mode closes the objects of a counted ``contains`` but not those under a ``not``
    inside it (JSON Schema's reading, as everywhere else): ``{"b": 1}`` passes
    ``{"properties": {"a": {"type": "integer"}}}`` and so fails its ``not``. The counted
    path closed them too, and took ``[{"b": 1}, {"b": 2}]`` for two matches."""
    v = jsonschema.Draft202012Validator(oracle(schema, "closed"))
    dfa = dfa_of_mode(schema, "closed")
    for x in ([{"b": 1}, {"b": 2}], [{"a": "s"}, {"b": 2}], [{"a": "s"}, {"a": "t"}],
              [{"a": "s"}], [{"b": 1}], [1, 2], [{"a": 1}, {"a": "s"}, {"a": "t"}]):
        got = any(accepts(dfa, s) for s in all_spellings(x))
        assert got == v.is_valid(x), (json.dumps(schema), x, got)


@pytest.mark.parametrize("schema", [
    {"not": {"not": {"type": "object", "properties": {"a": {"type": "integer"}}}}},
    {"type": "object", "properties": {"a": {}, "b": {}},
     "not": {"not": {"properties": {"a": {"type": "integer"}}}}},
])
def test_a_double_not_reads_its_schema_open_in_closed_mode(schema):
    """``not: {not: N}`` is N as ``not`` reads it (open), met with the rest read closed: it
    was merged into the rest and read closed (``{"a": 1, "b": 2}`` rejected)."""
    v = jsonschema.Draft202012Validator(oracle(schema, "closed"))
    dfa = dfa_of_mode(schema, "closed")
    for x in ({"a": 1, "b": 2}, {"a": 1}, {"b": 2}, {"a": "s"}, {"a": 1, "c": 3}, {}, 3):
        got = any(accepts(dfa, s) for s in all_spellings(x))
        assert got == v.is_valid(x), (json.dumps(schema), x, got)
