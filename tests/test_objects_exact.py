"""Object shapes built exactly: ``contains`` met with an item schema whose keys come in
another order, ``allOf`` where one side's ``additionalProperties`` meets the other side's
overlapping patterns or properties, "holds an undeclared key matching p" beside an open
object, the undeclared members read region by region (beside ``allOf``-built objects too),
``not`` of ``if``/``then``/``else``, ``dependentSchemas`` and object values, and combined
``propertyNames``. Each is checked against jsonschema (closed mode: on the closed reading that
``oracle`` writes out) in both ``--additional-properties`` modes."""

from __future__ import annotations

import json
import random

import jsonschema
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

from toolc.errors import EmptyLanguageError, UnsupportedSchemaError
from toolc.schema.keywords import NoValue

from test_algebra import accepts, all_spellings, dfa_of_mode, oracle
from test_negarrays_counts import exact_number

ITEM_BA = {"type": "object", "properties": {"b": {"type": "string"}, "a": {"const": 1}}}
CONTAINS_A = {"type": "object", "properties": {"a": {"type": "integer"}}}


def agree(schema, mode: str, pool: list, order: str = "schema") -> None:
    """toolc's verdict on each value (in some key order) is jsonschema's."""
    dfa = dfa_of_mode(schema, mode, order)
    v = jsonschema.Draft202012Validator(oracle(schema, mode))
    for x in pool:
        got = any(accepts(dfa, s) for s in all_spellings(x))
        assert got == v.is_valid(x), f"{mode} {json.dumps(schema)}: {x} accepted={got}"


@pytest.mark.parametrize("mode", ["closed", "schema"])
@pytest.mark.parametrize("schema", [
    {"type": "array", "items": ITEM_BA, "contains": CONTAINS_A},
    {"oneOf": [{"type": "array", "items": {"type": "string"}},
               {"type": "array", "items": ITEM_BA, "contains": CONTAINS_A}]},
    {"type": "array", "prefixItems": [ITEM_BA], "contains": CONTAINS_A},
    {"type": "array", "items": ITEM_BA, "contains": CONTAINS_A, "minContains": 2},
    {"type": "array", "items": {"type": "object", "properties": {
        "o": {"type": "object", "properties": {"y": {}, "x": {"type": "integer"}}}}},
     "contains": {"type": "object", "properties": {"o": {"type": "object", "properties": {
         "x": {"minimum": 1}}}}}},
])
def test_contains_over_objects_in_another_key_order_is_exact(schema, mode):
    """``contains`` was intersected with the item's automaton as text: an object item whose
    keys the schema lists in another order than ``contains`` does (``b`` then ``a`` against
    ``a``) matched nothing, so ``[{"a": 1, "b": "x"}]`` was refused in schema mode although
    valid. ``contains`` is now met with the item schema (one schema, in the item's order)."""
    pool = [[], [{"a": 1, "b": "x"}], [{"a": 1}], [{"b": "x"}], [{"a": 2}], ["s"],
            [{"a": 1, "b": "x"}, {"b": "y", "a": 1}], [{"a": 1}, {"b": "y"}],
            [{"o": {"x": 2, "y": 0}}], [{"o": {"x": 0, "y": 0}}], [{"o": {"x": 2}}]]
    agree(schema, mode, pool)


# -- shared helpers: random walks (soundness), hypothesis-jsonschema instances (completeness) --
def _live(dfa) -> np.ndarray:
    """States from which an accepting state can be reached."""
    trans = dfa.trans
    live = np.asarray(dfa.final, dtype=bool).copy()
    while True:
        ok = trans >= 0
        step = np.zeros_like(live)
        step[:] = (ok & live[np.where(ok, trans, 0)]).any(axis=1)
        new = live | step
        if (new == live).all():
            return live
        live = new


def random_texts(dfa, seed: int, n: int, cap: int = 120) -> list[bytes]:
    """Up to ``n`` texts the DFA accepts, drawn by random walks over live states."""
    rng = random.Random(seed)
    live = _live(dfa)
    if not live[0]:
        return []
    classes = dfa.alphabet.byte_class
    out = []
    for _ in range(n * 3):
        q, text = 0, bytearray()
        while len(text) < cap:
            if dfa.final[q] and rng.random() < 0.3:
                out.append(bytes(text))
                break
            nxt = [b for b in range(256) if (t := int(dfa.trans[q, classes[b]])) >= 0
                   and live[t]]
            if not nxt:
                out.append(bytes(text))
                break
            b = rng.choice(nxt)
            text.append(b)
            q = int(dfa.trans[q, classes[b]])
        if len(out) >= n:
            break
    return out


def _depth(x) -> int:
    if isinstance(x, dict):
        return 1 + max(map(_depth, x.values()), default=0)
    if isinstance(x, list):
        return 1 + max(map(_depth, x), default=0)
    return 0


def sound_and_complete(schema, mode: str, pool: list, data, order: str = "schema") -> None:
    """The pool agrees with jsonschema; random walks through the automaton validate; a few
    hypothesis-jsonschema instances (at most 4 keys, 2 levels) are accepted in some key order."""
    agree(schema, mode, pool, order)
    dfa = dfa_of_mode(schema, mode, order)
    v = jsonschema.Draft202012Validator(oracle(schema, mode))
    for t in random_texts(dfa, 7, 8):
        value = json.loads(t, parse_float=exact_number)     # (no float rounding to integers)
        assert v.is_valid(value), f"{mode} {json.dumps(schema)}: walked {t!r}"
    if data is None:
        return
    for _ in range(3):
        x = data.draw(from_schema(oracle(schema, mode)))
        if isinstance(x, dict) and len(x) > 4 or _depth(x) > 2:
            continue        # (free-form values are cut at the depth bound)
        assert any(accepts(dfa, s) for s in all_spellings(x)), \
            f"{mode} {json.dumps(schema)}: valid {x} refused"


# -- allOf: one side's additionalProperties beside the other side's overlapping patterns -----
NAMES = ["a", "ab", "b", "xb"]
PATS = ["^a", "b$", "^x"]
VALS = [{"type": "integer"}, {"type": "string"}, {"minimum": 2}, {"maxLength": 1}, {}]
EXTRAS = [False, {"type": "string"}, {"type": "integer"}, {"minimum": 3}]
OBJ_POOL = [{}] + [{k: v} for k in ["a", "ab", "b", "xb", "xz", "z", "cb"]
                   for v in [1, 5, "s", "st"]] + [
    {"a": 1, "b": "s"}, {"ab": 5, "z": "s"}, {"xb": 4, "a": 2}, {"b": 1, "xz": "s"},
    {"z": 1, "cb": 7}, 3, "s"]
ALLOF_COMPILED: list = []


@st.composite
def object_sides(draw):
    side: dict = {"type": "object"}
    props = draw(st.lists(st.sampled_from(NAMES), max_size=2, unique=True))
    if props:
        side["properties"] = {n: draw(st.sampled_from(VALS)) for n in props}
    pats = draw(st.lists(st.sampled_from(PATS), max_size=2, unique=True))
    if pats:
        side["patternProperties"] = {p: draw(st.sampled_from(VALS)) for p in pats}
    extra = draw(st.sampled_from([None] + EXTRAS))
    if extra is None and props:     # explicit beside properties: one reading in both modes
        extra = draw(st.sampled_from(EXTRAS))
    if extra is not None:
        side["additionalProperties"] = extra
    if draw(st.booleans()):
        side["required"] = [draw(st.sampled_from(NAMES))]
    return side


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(st.lists(object_sides(), min_size=2, max_size=3), st.sampled_from(["closed", "schema"]),
       st.data())
def test_allof_of_extra_properties_beside_other_patterns_is_exact(sides, mode, data):
    """``allOf`` whose one side's ``additionalProperties`` (false or a schema) meets the other
    side's patterns or properties that overlap its own (refused before): each name asks each
    side's property schema, else its matching patterns, else its additionalProperties; the
    merged object splits the names into the regions of every combination."""
    schema = {"allOf": sides}
    try:
        dfa_of_mode(schema, mode)
    except (EmptyLanguageError, NoValue):
        v = jsonschema.Draft202012Validator(schema)
        assert not any(v.is_valid(x) for x in OBJ_POOL if isinstance(x, dict))
        return
    # an optional property whose schemas contradict compiles as a forbidden key (exact: no
    # object holding it is valid), checked by the pool like every other shape
    ALLOF_COMPILED.append(True)
    sound_and_complete(schema, mode, OBJ_POOL, data)


def test_most_allof_object_pairs_compile():
    if not ALLOF_COMPILED:
        pytest.skip("runs after the property test")
    assert all(ALLOF_COMPILED), ALLOF_COMPILED


def checked_or_refused(schema, mode: str, pool: list, data, record: list) -> None:
    """``sound_and_complete`` where toolc compiles ``schema`` (``record`` gets True); where it
    finds no value, no object of ``pool`` is valid; a refusal's message goes to ``record``."""
    try:
        dfa_of_mode(schema, mode)
    except (EmptyLanguageError, NoValue):
        v = jsonschema.Draft202012Validator(oracle(schema, mode))
        assert not any(v.is_valid(x) for x in pool if isinstance(x, dict))
        return
    except UnsupportedSchemaError as e:
        record.append(e.message)
        return
    record.append(True)
    sound_and_complete(schema, mode, pool, data)


# -- "holds an undeclared key matching p" (or "outside these patterns") beside an open object --
OPEN_BASES = [{"type": "object", "additionalProperties": {"type": "string"}},
              {"type": "object", "properties": {"a": {"type": "integer"}},
               "additionalProperties": {"type": "string"}},
              {"type": "object", "additionalProperties": {"type": "integer"}},
              {"type": "object", "properties": {"xb": {}},
               "additionalProperties": {"maxLength": 1}}]
KEYS_COMPILED: list = []


@st.composite
def negated_sides(draw):
    side: dict = {"type": "object"}
    pats = draw(st.lists(st.sampled_from(PATS), min_size=1, max_size=2, unique=True))
    side["patternProperties"] = {p: draw(st.sampled_from(VALS + [False])) for p in pats}
    extra = draw(st.sampled_from([None, {"type": "integer"}, False, {"type": "string"}]))
    if extra is not None:
        side["additionalProperties"] = extra
    if draw(st.booleans()):
        side["properties"] = {"a": draw(st.sampled_from(VALS))}
        side.setdefault("additionalProperties", True)    # one reading in both modes
    return side


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(st.sampled_from(OPEN_BASES), negated_sides(), st.booleans(),
       st.sampled_from(["closed", "schema"]), st.data())
def test_an_undeclared_key_matching_a_pattern_beside_an_open_object_is_exact(
        base, neg, as_one_of, mode, data):
    """Beside an open object whose undeclared members all fail a negated pattern's (or
    additionalProperties') schema, "fails the negated schema" includes "holds an undeclared
    key matching that pattern" (outside those patterns): a set of keys, built as the open
    object less the same object with its keys narrowed to the other names (refused before).
    Keys are then written in json.dumps form, so no escaped spelling slips past a pattern."""
    schema = {"oneOf": [base, neg]} if as_one_of else dict(base, **{"not": neg})
    checked_or_refused(schema, mode, OBJ_POOL, data, KEYS_COMPILED)


def mostly_compiled(record: list, least: int) -> None:
    """What stays refused is forced (a member schema its undeclared members may pass or
    fail), and at least ``least`` schemas compiled."""
    if not record:
        pytest.skip("runs after the property test")
    assert all(x is True or "repeat a key" in x for x in record), record
    assert record.count(True) >= least, record


def test_most_undeclared_key_negations_compile():
    mostly_compiled(KEYS_COMPILED, 20)


@pytest.mark.parametrize("mode", ["closed", "schema"])
def test_an_escaped_key_is_matched_as_its_name_by_a_negated_pattern(mode):
    """``{"\\u0061": 1}`` holds the key ``a``: it matches ``^a`` (accepted before against
    ``not: {propertyNames: {pattern: "^a"}}``, whose narrowed side held "a" in one spelling)."""
    for schema in ({"type": "object", "not": {"propertyNames": {"pattern": "^a"}}},
                   {"type": "object", "additionalProperties": {"type": "string"},
                    "not": {"patternProperties": {"^a": {"type": "integer"}}}}):
        d = dfa_of_mode(schema, mode)
        v = jsonschema.Draft202012Validator(schema)
        for raw in [b'{"a":1}', b'{"\\u0061":1}', b'{"b":1}', b'{"\\u0061":"s"}',
                    b'{"a":"s"}', b'{"b":"s","\\u0061b":"t"}']:
            if accepts(d, raw):
                assert v.is_valid(json.loads(raw)), (schema, raw)


# -- end to end through Qwen3: the three shapes in one tool, in schema mode -----------------
E2E_PARAMS = {"type": "object", "required": ["rows"], "properties": {
    "rows": {"type": "array", "contains": CONTAINS_A,
             "items": dict(ITEM_BA, additionalProperties={"type": "integer"})},
    "tags": {"allOf": [{"type": "object", "patternProperties": {"^a": {"type": "integer"}},
                        "additionalProperties": False},
                       {"type": "object", "patternProperties": {"b$": {"minimum": 2}}}]},
    "meta": {"type": "object", "additionalProperties": {"type": "string"},
             "not": {"patternProperties": {"^x": {"type": "integer"}}}}}}
# keys in schema order, as the model writes them
E2E_CALLS = [{"rows": [{"b": "x", "a": 1}]}, {"rows": [{"b": "x", "a": 1, "c": 2}]},
             {"rows": [{"b": "y"}, {"b": "x", "a": 1}]},
             {"rows": [{"b": "y"}], "tags": {"ab": 3, "a": 0}},
             {"rows": [{"b": "y"}], "meta": {"xy": "s", "k": "v"}},
             {"rows": [{"b": "y"}], "tags": {}, "meta": {}}]
E2E_BAD = [{"rows": []}, {"rows": [{"a": 1, "c": "s"}]}, {"rows": [{"b": "y"}], "tags": {"cb": 5}},
           {"rows": [{"b": "y"}], "tags": {"ab": 1}}, {"rows": [{"b": "y"}], "meta": {"k": "v"}}]


@pytest.mark.slow
def test_the_three_shapes_end_to_end_through_qwen():
    """Rendered as Qwen3's template writes them (keys in schema order), valid calls are
    accepted to the end and invalid ones are not; random token walks parse and validate."""
    import toolc
    from helpers import accepts_all, distance_to_end, random_walk, render_answer
    from toolc.parse import parse_tool_calls
    from toolc.tokenizer import load_vocabulary
    tools = [{"type": "function", "function": {"name": "put", "parameters": E2E_PARAMS}}]
    art = toolc.compile_tools(tools, "qwen", tool_choice="required",
                              additional_properties="schema")
    vocab = load_vocabulary("qwen")
    v = jsonschema.Draft202012Validator(E2E_PARAMS)
    for args in E2E_CALLS + E2E_BAD:
        ok, at = accepts_all(art, vocab.encode(render_answer([("put", args)])))
        assert ok == v.is_valid(args), (args, at)
    dist, rng, seen = distance_to_end(art), random.Random(3), 0
    for _ in range(40):
        ids = random_walk(art, rng, dist, budget=rng.choice([20, 60]), trigger=151657)
        text = vocab.decode_bytes(ids[:-1]).decode("utf-8")
        for call in parse_tool_calls(text)["parsed"]:
            assert v.is_valid(call["arguments"]), text
            seen += 1
    assert seen >= 20


@pytest.mark.parametrize("mode", ["closed", "schema"])
def test_an_optional_property_no_value_satisfies_is_a_forbidden_key(mode):
    """JSON-Schema-Test-Suite's not.json "forbidden property": ``{"foo": {"not": {}}}`` lets
    every object without ``foo`` through and none with it (refused before)."""
    schema = {"type": "object", "properties": {"foo": {"not": {}}, "bar": {"type": "integer"}}}
    dfa = dfa_of_mode(schema, mode)
    for text, valid in (('{}', True), ('{"bar":1}', True), ('{"foo":1}', False),
                        ('{"foo":null,"bar":1}', False), ('{"bar":1,"foo":{}}', False)):
        assert jsonschema.Draft202012Validator(schema).is_valid(json.loads(text)) is valid
        assert accepts(dfa, text.encode()) is valid, (text, mode)


# -- the undeclared members region by region: allOf-built objects, patterns apart -------------
STR_MAP = {"type": "object", "additionalProperties": {"type": "string"}}
INT_MAP = {"type": "object", "additionalProperties": {"type": "integer"}}
B_MIN2 = {"type": "object", "patternProperties": {"b$": {"minimum": 2}}}
B_SHORT = {"type": "object", "patternProperties": {"b$": {"type": "string", "maxLength": 3}}}
REGION_POOL = OBJ_POOL + [{"b": "s", "ab": 1}, {"ab": "s"}, {"xb": "s", "a": 3}, {"k": 2},
                          {"k": "s", "b": "t"}, {"a": 1, "xb": 1}, {"ab": 3, "b": "u"}]


@pytest.mark.parametrize("mode", ["closed", "schema"])
@pytest.mark.parametrize("schema", [
    # allOf-built objects (one side's additionalProperties meets the other's patterns): the
    # undeclared values are read per region, each side's additionalProperties included
    {"allOf": [STR_MAP, B_MIN2], "not": {"additionalProperties": {"type": "integer"}}},
    {"allOf": [STR_MAP, B_MIN2], "not": {"patternProperties": {"^x": {"type": "integer"}}}},
    {"type": "object", "allOf": [STR_MAP, {"not": {"additionalProperties": {
        "type": "integer"}}}, B_MIN2]},
    {"allOf": [STR_MAP, B_MIN2], "minProperties": 1,
     "not": {"patternProperties": {"b$": {"type": "boolean"}, "^a": {"type": "string"}}}},
    # a oneOf branch that allOf builds beside an open branch
    {"oneOf": [{"allOf": [STR_MAP, B_SHORT]}, INT_MAP]},
    {"oneOf": [INT_MAP, {"allOf": [STR_MAP, B_SHORT]}]},
    # patterns apart: only the region of ^a can hold a key the negated ^a governs
    {"type": "object", "patternProperties": {"^a": {"type": "integer"}, "^b": {"type": "string"}},
     "not": {"patternProperties": {"^a": {"type": "string"}}}},
    # some regions never fail, the others always do: "holds a key in those"
    {"type": "object", "patternProperties": {"^a": {"type": "integer"}, "b$": {"type": "string"}},
     "additionalProperties": False, "not": {"additionalProperties": {"type": "integer"}}},
    {"type": "object", "patternProperties": {"^a": {"type": "integer"}, "b$": {"type": "string"}},
     "additionalProperties": {"type": "boolean"},
     "not": {"additionalProperties": {"type": "integer"}}},
    # propertyNames narrows the keys only: the values are still the extra keys' schema
    {"type": "object", "additionalProperties": {"type": "string"},
     "propertyNames": {"maxLength": 2}, "not": {"additionalProperties": {"type": "integer"}}},
])
def test_undeclared_members_read_region_by_region_are_exact(schema, mode):
    """Refused before ("may pass or fail": the undeclared values of an ``allOf``-built object
    were not derived, nor told apart by pattern region); exact now."""
    dfa_of_mode(schema, mode)       # (refused before)
    agree(schema, mode, REGION_POOL)
    sound_and_complete(schema, mode, [], None)


@pytest.mark.parametrize("mode", ["closed", "schema"])
def test_a_negated_member_schema_is_read_open_in_the_disjointness_proof(mode):
    """``not: {additionalProperties: X}`` reads ``X`` as JSON Schema does (open). Read closed,
    ``{"properties": {"b": {}}}`` was disjoint from the closed ``{"a": ...}`` members, so
    closed mode took every such member for a failing one and accepted ``{"k": {"a": 1}}``,
    which is invalid. Whatever toolc does with it now, it accepts nothing invalid."""
    member = {"type": "object", "properties": {"a": {}}, "required": ["a"]}
    for neg in ({"type": "object", "properties": {"b": {}}},
                {"type": "object", "properties": {"a": {"type": "string"}}}):
        schema = {"type": "object", "additionalProperties": member,
                  "not": {"additionalProperties": neg}}
        try:
            d = dfa_of_mode(schema, mode)
        except (UnsupportedSchemaError, EmptyLanguageError, NoValue):
            continue
        v = jsonschema.Draft202012Validator(oracle(schema, mode))
        for text in ['{"k":{"a":1}}', '{"k":{"a":"s"}}', '{"k":{"a":1,"b":2}}', '{}']:
            if accepts(d, text.encode()):
                assert v.is_valid(json.loads(text)), (mode, neg, text)


REGIONS_COMPILED: list = []
TYPED = [{"type": "integer"}, {"type": "string"}, {"type": "string", "maxLength": 1},
         {"type": "integer", "minimum": 2}, {"type": "boolean"}]


@st.composite
def typed_side(draw, negated: bool = False):
    """An object of patterns and extra keys whose member schemas are typed (so that a proof
    of "never fails" or "always fails" has something to go on)."""
    side: dict = {"type": "object"}
    pats = draw(st.lists(st.sampled_from(PATS), min_size=negated, max_size=2, unique=True))
    if pats:
        side["patternProperties"] = {p: draw(st.sampled_from(TYPED)) for p in pats}
    extra = draw(st.sampled_from([None, False] + TYPED))
    if extra is not None:
        side["additionalProperties"] = extra
    if not negated and draw(st.booleans()):
        side["properties"] = {draw(st.sampled_from(NAMES)): draw(st.sampled_from(TYPED))}
        side.setdefault("additionalProperties", True)    # one reading in both modes
    return side


@pytest.mark.slow     # 40 shapes, some with 16 key regions: about 50 s
@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(st.lists(typed_side(), min_size=2, max_size=2), typed_side(negated=True),
       st.booleans(), st.sampled_from(["closed", "schema"]), st.data())
def test_not_and_oneof_beside_an_allof_built_object_are_exact(sides, neg, as_one_of, mode,
                                                              data):
    """``not``/``oneOf`` of a pattern or member schema beside an ``allOf``-built object:
    exact where every region of its undeclared members that the negated rule governs never
    fails it or always does; refused (forced: a text may repeat a key) where one may do
    both."""
    base = {"allOf": sides}
    schema = {"oneOf": [base, neg]} if as_one_of else dict(base, **{"not": neg})
    checked_or_refused(schema, mode, REGION_POOL, data, REGIONS_COMPILED)


def test_most_negations_beside_allof_built_objects_compile():
    mostly_compiled(REGIONS_COMPILED, 15)


# -- not/oneOf of if/then/else and dependentSchemas over objects ------------------------------
COND_PARTS = [{"required": ["a"]}, {"required": ["b"]}, {"properties": {"a": {"type": "integer"}}},
              {"properties": {"b": {"minLength": 2}}}, {"minProperties": 2},
              {"additionalProperties": {"type": "string"}}]
COND_BASES = [{"type": "object"}, STR_MAP,
              {"type": "object", "properties": {"a": {"type": "integer"}, "b": {}}}]
COND_POOL = OBJ_POOL + [{"a": 1, "b": "st"}, {"a": "s", "b": "s"}, {"b": "st"}, {"a": 2, "z": 1}]


@st.composite
def conditions(draw):
    out: dict = {}
    if draw(st.booleans()):
        out["if"] = draw(st.sampled_from(COND_PARTS))
        for key in ("then", "else"):
            if draw(st.booleans()):
                out[key] = draw(st.sampled_from(COND_PARTS))
    if not out or draw(st.booleans()):
        out["dependentSchemas"] = {draw(st.sampled_from(["a", "b"])):
                                   draw(st.sampled_from(COND_PARTS))}
    return out


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(st.sampled_from(COND_BASES), conditions(), st.sampled_from(["closed", "schema"]))
def test_not_of_conditions_over_objects_is_exact(base, cond, mode):
    """``not: {if, then, else}`` is ``if`` and not ``then``, or not ``if`` and not ``else``;
    ``not: {dependentSchemas: {k: S}}`` is ``k`` present and not ``S`` (refused before: "'not'
    over objects is enforced for ... not 'if'"). What stays refused is forced."""
    schema = dict(base, **{"not": cond})
    try:
        dfa_of_mode(schema, mode)
    except (EmptyLanguageError, NoValue):
        v = jsonschema.Draft202012Validator(oracle(schema, mode))
        assert not any(v.is_valid(x) for x in COND_POOL)
        return
    except UnsupportedSchemaError as e:
        # forced: a text may repeat a key (minProperties beside open objects counts one)
        assert "repeat a key" in e.message or "same key" in e.message, e.message
        return
    sound_and_complete(schema, mode, COND_POOL, None)


@pytest.mark.parametrize("mode", ["closed", "schema"])
def test_known_negated_conditions(mode):
    schema = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {}},
              "not": {"if": {"required": ["a"]}, "then": {"required": ["b"]}}}
    agree(schema, mode, COND_POOL)
    assert accepts(dfa_of_mode(schema, mode), b'{"a":1}')
    schema = {"type": "object", "not": {"dependentSchemas": {"a": {"minProperties": 2}}}}
    agree(schema, mode, COND_POOL)
    assert accepts(dfa_of_mode(schema, mode), b'{"a":1}')


@pytest.mark.parametrize("mode", ["closed", "schema"])
@pytest.mark.parametrize("schema", [
    {"type": "object", "propertyNames": {"pattern": "^a", "not": {"pattern": "b$"}}},
    {"allOf": [{"type": "object", "propertyNames": {"const": "ab"}},
               {"propertyNames": {"const": "a"}}]},
    {"type": "object", "propertyNames": {"maxLength": 2, "anyOf": [{"pattern": "^x"},
                                                                  {"enum": ["a", "zzz"]}]}},
])
def test_property_names_combined_with_string_keywords_are_exact(schema, mode):
    """A ``propertyNames`` whose ``not``/``anyOf``/``enum`` stands beside string keywords, or
    two merged by ``allOf`` (refused before: "'propertyNames' with 'not' is not
    supported"): the names every part admits."""
    agree(schema, mode, REGION_POOL + [{"ab": 1}, {"a": 1, "xz": 2}, {"zzz": 1}, {"xyz": 1}])


@pytest.mark.parametrize("mode", ["closed", "schema"])
@pytest.mark.parametrize("schema", [
    {"type": "object", "not": {"const": {"a": 1}}},
    {"type": "object", "not": {"enum": [{"a": 1, "b": "s"}, {}, 3]}},
    {"type": "object", "additionalProperties": {"type": "integer"},
     "not": {"enum": [{"a": 1}, {"ab": 5}], "minProperties": 1}},
    {"oneOf": [{"type": "object", "properties": {"a": {"type": "integer"}}},
               {"const": {"a": 1}}]},
    {"type": "object", "not": {"const": {"o": {"a": 1}}}},
])
def test_not_of_object_values_is_exact(schema, mode):
    """``not: {const: {...}}``/``enum`` of objects (refused before: "'not' over objects is
    enforced for ... not 'enum'"): an object value is the closed object of its members."""
    pool = REGION_POOL + [{"a": 1.0}, {"a": 1, "b": "s"}, {"b": "s", "a": 1}, {"o": {"a": 1}},
                          {"o": {"a": 1, "c": 1}}, {"o": {"a": 2}}]
    agree(schema, mode, pool)
    sound_and_complete(schema, mode, [], None)
