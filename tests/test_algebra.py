"""Exact boolean combinations (toolc/schema/algebra.py): on random small schemas built with
``oneOf``, ``allOf``, ``anyOf``, ``not`` and ``if``/``then``/``else`` over scalar, array and
object atoms, the compiled automaton's verdict on every instance of a fixed pool equals
jsonschema's (instances written compactly, numbers in their canonical spelling). A schema
toolc refuses must be refused with a toolc error; the test asserts most are compiled."""

from __future__ import annotations

import json

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schema_cases import closed
from toolc.errors import EmptyLanguageError, ToolcError, UnsupportedSchemaError
from toolc.fsm import compile_expr
from toolc.schema import SchemaCompiler, SchemaOptions
from toolc.schema.canon import CANON, canon_number
from toolc.schema.keywords import NoValue
from toolc.schema.strings import expanded_lengths

ATOMS = [
    {"type": "integer"}, {"type": "number"}, {"type": "string"}, {"type": "null"},
    {"type": "boolean"}, {"minimum": 1}, {"maximum": 0}, {"exclusiveMinimum": -1},
    {"maxLength": 1}, {"minLength": 2}, {"pattern": "^a"}, {"enum": [1, "a", None]},
    {"const": 2}, {"const": "ab"}, {"type": "array", "items": {"type": "integer"}},
    {"type": "array", "maxItems": 1, "items": {"type": "string"}}, {"multipleOf": 2},
    {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
    {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}},
    {"required": ["b"]}, {"properties": {"a": {"minimum": 1}}},
]
POOL = [-3, -1, 0, 1, 2, 3, 4, 1.5, -0.5, "", "a", "ab", "abc", "b", "ba", None, True, False,
        [], [1], [1, 2], ["a"], ["a", "b"], [1.5], {}, {"a": 1}, {"a": 0}, {"b": "x"},
        {"a": 2, "b": "y"}, {"a": "s"}]


def schemas():
    leaf = st.sampled_from(ATOMS)
    return st.recursive(leaf, lambda inner: st.one_of(
        st.lists(inner, min_size=2, max_size=3).map(lambda xs: {"oneOf": xs}),
        st.lists(inner, min_size=2, max_size=2).map(lambda xs: {"allOf": xs}),
        st.lists(inner, min_size=2, max_size=2).map(lambda xs: {"anyOf": xs}),
        inner.map(lambda x: {"not": x}),
        st.tuples(inner, inner, inner).map(lambda t: {"if": t[0], "then": t[1],
                                                       "else": t[2]}),
        st.tuples(inner, inner).map(lambda t: dict(t[0], oneOf=[t[1], {"type": "null"}])
                                    if "oneOf" not in t[0] else t[0]),
    ), max_leaves=4)


def dfa_of(schema):
    return dfa_of_mode(schema, "closed")


def text(value) -> bytes:
    def canon(v):
        if isinstance(v, float) and v.is_integer():
            return int(v)
        return v
    return json.dumps(canon(value), ensure_ascii=False, separators=(",", ":")).encode()


def accepts(dfa, data: bytes) -> bool:
    q = dfa.step_bytes(0, data)
    return q >= 0 and bool(dfa.final[q])


def verdicts_agree(schema) -> bool:
    """Whether toolc and jsonschema agree on every pool instance (False: toolc refused)."""
    try:
        dfa = dfa_of(schema)
    except ToolcError:
        return False
    v = jsonschema.Draft202012Validator(schema)
    wrong = [(x, accepts(dfa, text(x))) for x in POOL
             if accepts(dfa, text(x)) != v.is_valid(x)]
    # the one departure that shows on this pool: objects are closed, keys in schema order
    wrong = [(x, got) for x, got in wrong if got or not isinstance(x, dict)]
    assert not wrong, f"{json.dumps(schema)}: toolc says {wrong}"
    return True


COMPILED: list = []


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(schemas())
def test_random_combinations_agree_with_jsonschema(schema):
    COMPILED.append(verdicts_agree(schema))


def test_most_random_combinations_compile():
    if not COMPILED:
        pytest.skip("runs after the property test")
    assert sum(COMPILED) >= len(COMPILED) // 2, f"{sum(COMPILED)} of {len(COMPILED)}"


@pytest.mark.parametrize("schema, good, bad", [
    ({"oneOf": [{"type": "integer"}, {"minimum": 2}]}, [1, 2.5, "x"], [2, 3]),
    ({"oneOf": [{"type": "string", "maxLength": 3}, {"type": "string", "pattern": "^a"}]},
     ["abcd", "xy"], ["ab", "xyzw"]),
    ({"type": "string", "not": {"enum": ["a", "b"]}}, ["c", ""], ["a", "b"]),
    ({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
      "not": {"required": ["a"]}}, [{}, {"b": "x"}], [{"a": 1}]),
    ({"type": "object", "properties": {"c": {"enum": ["US", "CA"]}, "z": {"type": "string"}},
      "if": {"properties": {"c": {"const": "US"}}}, "then": {"required": ["z"]}},
     [{"c": "US", "z": "1"}, {"c": "CA"}], [{"c": "US"}, {}]),
    ({"type": "array", "allOf": [{"prefixItems": [{"type": "integer"}]},
                                 {"items": {"type": "integer", "minimum": 5}}]},
     [[5], [5, 6]], [[1], [5, 1]]),
    ({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
      "dependentSchemas": {"a": {"required": ["b"]}}}, [{}, {"b": 1}, {"a": 1, "b": 2}],
     [{"a": 1}]),
    ({"minimum": 3}, [3, "x", None, [1]], [2, 2.5]),
    ({"format": "email"}, [1, None], ["not an email"]),
])
def test_known_cases(schema, good, bad):
    dfa = dfa_of(schema)
    for x in good:
        assert accepts(dfa, text(x)), x
    for x in bad:
        assert not accepts(dfa, text(x)), x


def test_const_compares_numbers_by_value():
    dfa = dfa_of({"const": -2.0})
    assert accepts(dfa, b"-2") and accepts(dfa, b"-2.0") and not accepts(dfa, b"2")
    assert canon_number(1e2) == "100" and canon_number(-0.0) == "0"
    assert canon_number(2.50) == "2.5"


def test_canon_is_one_spelling_per_value():
    dfa = compile_expr(CANON)
    for good in [b'{"a":[1,-2.5,"\\n",true]}', b'"\\u0001"', b"0", b"-0.5"]:
        assert accepts(dfa, good), good
    for bad in [b"1.0", b"1e5", b"-0", b'"\\u0061"', b'"\\/"', b"0.50"]:
        assert not accepts(dfa, bad), bad


PATTERN_ONEOF = {"oneOf": [{"type": "object", "patternProperties": {"^x": {"type": "integer"}}},
                           {"type": "object", "properties": {"a": {}}}]}


def test_oneof_over_overlapping_objects_is_refused_with_the_branch_and_the_reason():
    """Open (``--additional-properties schema``), ``{a}`` keeps the objects with an ``x...``
    key whose value is not an integer: ``{"x":"s","y":1}`` is kept, ``{"x":"s","x":1}`` (the
    value ``{"x": 1}``, both branches) is not, and no regular language tells the two apart."""
    with pytest.raises(UnsupportedSchemaError) as e:
        SchemaCompiler(SchemaOptions(additional_properties="schema")).compile(PATTERN_ONEOF)
    assert e.value.pointer.startswith("/oneOf/") and "repeat a key" in e.value.message


def test_oneof_of_a_pattern_map_and_a_closed_object_is_exact():
    """Refused before; closed, ``{a}`` holds no ``x...`` key, so it fails the pattern branch
    never (every object of it matches both) and the pattern branch keeps its objects with a
    key other than ``a``."""
    d = dfa_of(PATTERN_ONEOF)
    v = jsonschema.Draft202012Validator(closed(PATTERN_ONEOF))
    for x in [{}, {"a": 1}, {"x1": 1}, {"x1": "s"}, {"b": "s"}, {"a": 1, "x": 2}, {"a": "s"}]:
        assert any(accepts(d, s) for s in all_spellings(x)) == v.is_valid(x), x


def test_lenient_reads_an_inexact_oneof_as_anyof_and_records_it():
    sc = SchemaCompiler(SchemaOptions(lenient=True, additional_properties="schema"))
    sc.compile(PATTERN_ONEOF)
    assert [d["keyword"] for d in sc.dropped] == ["oneOf"]


def test_a_product_over_the_budget_is_refused_at_its_pointer(monkeypatch):
    from toolc.errors import BudgetExceededError
    from toolc.schema import automata
    monkeypatch.setattr(automata, "MAX_PRODUCT_STATES", 20)
    schema = {"type": "object", "properties": {"s": {"oneOf": [
        {"type": "string", "maxLength": 40}, {"type": "string", "pattern": "^a"}]}}}
    with pytest.raises(BudgetExceededError) as e, expanded_lengths():
        SchemaCompiler().compile(schema)
    assert e.value.pointer.startswith("/properties/s")


def test_a_key_declared_only_inside_a_branch_defeats_the_closed_object_proof():
    a = {"type": "object", "properties": {"k": {"type": "integer"}}, "required": ["k"]}
    b = {"type": "object", "properties": {"z": {"type": "null"}},
         "anyOf": [{"properties": {"k": {"type": "integer"}}}]}
    sc = SchemaCompiler()
    sc.root = {}
    assert not sc.disjoint(a, b)
    assert sc.disjoint(a, {"type": "object", "properties": {"z": {"type": "null"}}})


def test_oneof_over_open_objects_keeps_the_branches_exclusive():
    schema = {"oneOf": [{"type": "object", "properties": {"a": {"type": "integer"}},
                         "required": ["a"]},
                        {"type": "object", "properties": {"b": {"type": "integer"}},
                         "required": ["b"]}]}
    d = dfa_of_mode(schema, "schema")
    v = jsonschema.Draft202012Validator(schema)
    for x in [{"a": 1}, {"b": 1}, {"a": 1, "b": 2}, {}, {"a": 1, "b": "s"}, {"a": 1, "c": 1}]:
        assert accepts(d, text(x)) == v.is_valid(x), x


def dfa_of_mode(schema, mode, order="schema"):
    """The schema's DFA with lengths as chains of states (counters are the runtime's)."""
    sc = SchemaCompiler(SchemaOptions(whitespace="compact", additional_properties=mode,
                                      property_order=order))
    sc.root = schema
    with expanded_lengths():
        return compile_expr(sc._schema(schema, ""))


# -- allOf: the merge where it is exact, the product of automata where it is not ------------
ALLOF_ATOMS = [
    {"multipleOf": 2}, {"multipleOf": 3}, {"const": 2}, {"const": 6}, {"enum": [1, 2, "a"]},
    {"type": "integer"}, {"minimum": 2}, {"format": "date"}, {"pattern": "^2"},
    {"format": "ipv4"}, {"maxLength": 10}, {"contains": {"const": 1}},
    {"contains": {"const": 2}}, {"minContains": 0}, {"items": {"type": "integer"}},
    {"prefixItems": [{"const": 1}]}, {"oneOf": [{"type": "integer"}, {"minimum": 3}]},
    {"oneOf": [{"type": "string"}, {"const": 6}]},
    {"type": "object", "properties": {"a": {"multipleOf": 2}}},
    {"type": "object", "properties": {"a": {"multipleOf": 3}}},
    {"type": "object", "patternProperties": {"^a": {}}, "additionalProperties": False},
    {"type": "object", "patternProperties": {"^b": {}}},
]
ALLOF_POOL = [0, 1, 2, 3, 4, 6, 12, 1.5, "", "a", "2", "2020-01-02", "1.2.3.4",
              "20000000000", None, True, [], [1], [2], [1, 2], [2, 1], [1, 1], [3, "x"],
              {}, {"a": 6}, {"a": 4}, {"a": 9}, {"b": 1}, {"ab": 2}]


@settings(max_examples=120, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(ALLOF_ATOMS), min_size=2, max_size=3))
def test_allof_is_the_intersection(branches):
    """Every allOf of these atoms compiles (or is refused with a toolc error when two object
    branches cannot share one key order) and agrees with jsonschema on the pool; formats are
    checked as jsonschema's format checker reads them."""
    schema = {"allOf": branches}
    try:
        dfa = dfa_of(schema)
    except (EmptyLanguageError, NoValue):
        dfa = None      # no value at all: jsonschema must agree
    except UnsupportedSchemaError as e:
        assert "objects" in e.message, e.message
        return
    v = jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    wrong = [x for x in ALLOF_POOL
             if (dfa is not None and accepts(dfa, text(x))) != v.is_valid(x)
             and not (isinstance(x, dict) and v.is_valid(x))]   # closed objects: narrower
    assert not wrong, f"{json.dumps(schema)}: toolc disagrees on {wrong}"


@pytest.mark.parametrize("schema, good, bad", [
    ({"allOf": [{"multipleOf": 2}, {"multipleOf": 3}]}, [0, 6, -12, "x"], [2, 3, 4]),
    ({"allOf": [{"contains": {"const": 1}}, {"contains": {"const": 2}}]},
     [[1, 2], [2, 0, 1], 5], [[1], [2], []]),
    # contains alone is "at least one"; the other branch's minContains does not lower it
    ({"allOf": [{"contains": {"const": 1}}, {"minContains": 0}]}, [[1], [2, 1]], [[], [2]]),
    ({"properties": {"a": {"allOf": [{"multipleOf": 2}, {"multipleOf": 3}]}}},
     [{"a": 6}, {}], [{"a": 4}]),
    ({"allOf": [{"properties": {"a": {"multipleOf": 2}}}, {"properties": {"a": {
        "multipleOf": 3}}}]}, [{"a": 12}], [{"a": 2}, {"a": 9}]),
])
def test_allof_known_cases(schema, good, bad):
    dfa = dfa_of(schema)
    for x in good:
        assert accepts(dfa, text(x)), x
    for x in bad:
        assert not accepts(dfa, text(x)), x


def test_allof_pattern_beside_the_other_sides_closed_extra_names_is_exact():
    # one branch's additionalProperties governs names the other's patterns would let in,
    # and its own pattern overlaps them ("ab"); refused before, exact now: a name matching
    # "b" but not "^a" falls to the first branch's additionalProperties (false)
    schema = {"allOf": [{"type": "object", "patternProperties": {"^a": {}},
                         "additionalProperties": False},
                        {"type": "object", "patternProperties": {"b": {}}}]}
    dfa = dfa_of(schema)
    v = jsonschema.Draft202012Validator(schema)
    for x in [{}, {"ab": 1}, {"a": 1}, {"b": 1}, {"cb": 1}, {"ab": 1, "a": 2}]:
        assert accepts(dfa, text(x)) == v.is_valid(x), x


# -- oneOf over object branches that may share a value: one shared key order ----------------
OBJ_PROPS = [("a", {"type": "integer"}), ("a", {"type": "integer", "minimum": 2}),
             ("b", {"type": "string"}), ("b", {"enum": ["x", "y"]}), ("c", {"type": "integer"}),
             ("c", {"type": "array", "items": {"type": "integer"}})]
OBJ_POOL = [{}, {"a": 1}, {"a": 3}, {"b": "x"}, {"b": "z"}, {"c": 1}, {"c": [1]},
            {"a": 1, "b": "x"}, {"a": 3, "b": "y"}, {"b": "x", "c": 2}, {"a": 1, "c": 2},
            {"a": 2, "b": "x", "c": 3}, 1, "s"]


@st.composite
def closed_objects(draw):
    props = dict(draw(st.lists(st.sampled_from(OBJ_PROPS), min_size=1, max_size=3)))
    names = list(props)
    order = draw(st.permutations(names))
    required = draw(st.lists(st.sampled_from(names), max_size=2, unique=True))
    out = {"type": "object", "properties": {k: props[k] for k in order}}
    return dict(out, required=required) if required else out


def spellings(x):
    import itertools
    if not isinstance(x, dict):
        return [text(x)]
    return [text(dict(p)) for p in itertools.permutations(x.items())]


@settings(max_examples=80, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(st.lists(closed_objects(), min_size=2, max_size=3),
       st.sampled_from(["closed", "schema"]))
def test_oneof_over_closed_objects_is_exactly_one(branches, mode):
    """Closed object branches (closed by default, or by an explicit additionalProperties
    false) that may share a value: "exactly one" agrees with jsonschema on the closed
    reading, in some key order for a valid object and in none for an invalid one."""
    explicit = [dict(b, additionalProperties=False) for b in branches]
    schema = {"oneOf": branches if mode == "closed" else explicit}
    try:
        dfa = dfa_of_mode(schema, mode)
    except EmptyLanguageError:
        dfa = None      # no value at all: jsonschema must agree
    v = jsonschema.Draft202012Validator({"oneOf": explicit})
    for x in OBJ_POOL:
        got = dfa is not None and any(accepts(dfa, s) for s in spellings(x))
        assert got == v.is_valid(x), f"{json.dumps(schema)}: {x} accepted={got}"


def test_overlapping_oneof_objects_with_pattern_properties_are_exact_or_refused():
    """Closed, the pattern branch differs by its ``x...`` keys (a set of keys: exact);
    open, the first branch's undeclared members may pass or fail it (refused)."""
    branch = {"type": "object", "properties": {"a": {"type": "integer"}},
              "patternProperties": {"^x": {"type": "string"}}}
    schema = {"oneOf": [{"type": "object", "properties": {"a": {"type": "integer"}}},
                        branch]}
    d = dfa_of(schema)      # closed mode closes both (the patterns' keys aside)
    v = jsonschema.Draft202012Validator({"oneOf": [
        dict(b, additionalProperties=False) for b in schema["oneOf"]]})
    for x in [{}, {"a": 1}, {"x1": "s"}, {"a": 1, "x1": "s"}, {"x1": 1}, {"b": 1}]:
        assert any(accepts(d, s) for s in all_spellings(x)) == v.is_valid(x), x
    with pytest.raises(UnsupportedSchemaError) as e:
        SchemaCompiler(SchemaOptions(additional_properties="schema")).compile(schema)
    assert e.value.pointer.startswith("/oneOf/")


def test_overlapping_oneof_objects_with_a_free_form_property_are_exact():
    """Refused before the closed negation (:mod:`toolc.schema.negation`): ``{}`` and
    ``{"a": 1}`` match both branches, ``{"a": "s"}`` only the second."""
    schema = {"oneOf": [{"type": "object", "properties": {"a": {"type": "integer"}}},
                        {"type": "object", "properties": {"a": {}}}]}
    d = dfa_of(schema)
    v = jsonschema.Draft202012Validator(closed(schema))
    for x in [{}, {"a": 1}, {"a": "s"}, {"a": [1]}, {"a": None}, {"b": 1}]:
        assert accepts(d, text(x)) == v.is_valid(x), x


def test_an_allof_product_over_the_budget_is_refused_at_its_pointer(monkeypatch):
    from toolc.errors import BudgetExceededError
    from toolc.schema import automata
    monkeypatch.setattr(automata, "MAX_PRODUCT_STATES", 20)
    schema = {"type": "object", "properties": {"n": {"allOf": [
        {"type": "integer", "multipleOf": 37}, {"type": "integer", "multipleOf": 41}]}}}
    with pytest.raises(BudgetExceededError) as e, expanded_lengths():
        SchemaCompiler().compile(schema)
    assert e.value.pointer.startswith("/properties/n")


# -- oneOf over nested, composed and open object branches -----------------------------------
INNER = [{"type": "object", "properties": {"a": {"type": "integer"}}},
         {"type": "object", "properties": {"a": {"const": 1}}, "required": ["a"]},
         {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
          "required": ["b"]}]
NESTED_PROPS = OBJ_PROPS[:4] + [("x", s) for s in INNER]
NESTED_POOL = [{}, {"a": 1}, {"a": 3}, {"b": "x"}, {"a": 1, "b": "x"}, {"x": {}},
               {"x": {"a": 1}}, {"x": {"a": 2}}, {"x": {"b": "s"}}, {"x": {"a": 1, "b": "s"}},
               {"a": 1, "x": {"a": 1}}, {"b": "y", "x": {"a": 2, "b": "t"}}, {"x": 1},
               {"c": 1}, {"a": 1, "c": 2}, 1]


@st.composite
def object_branches(draw):
    props = dict(draw(st.lists(st.sampled_from(NESTED_PROPS), min_size=1, max_size=2)))
    names = list(props)
    required = draw(st.lists(st.sampled_from(names), max_size=2, unique=True))
    out = {"type": "object", "properties": props}
    if required:
        out["required"] = required
    how = draw(st.sampled_from(["plain", "plain", "anyOf", "allOf", "open"]))
    if how == "anyOf":
        return {"anyOf": [out, {"type": "object", "properties": {"b": {"enum": ["x", "y"]}}}]}
    if how == "allOf":
        return {"allOf": [out, {"required": [draw(st.sampled_from(names))]}]}
    if how == "open":
        return dict(out, additionalProperties=True)
    return out


def all_spellings(x) -> list[bytes]:
    """Every key order of ``x``, nested objects (in arrays too) included."""
    import itertools
    if isinstance(x, list):
        return [b"[" + b",".join(items) + b"]"
                for items in itertools.product(*(all_spellings(v) for v in x))]
    if not isinstance(x, dict):
        return [text(x)]
    out = []
    for perm in itertools.permutations(x):
        for values in itertools.product(*(all_spellings(x[k]) for k in perm)):
            out.append(b"{" + b",".join(text(k) + b":" + v for k, v in zip(perm, values))
                       + b"}")
    return out


NESTED_COMPILED: list = []


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(st.lists(object_branches(), min_size=2, max_size=3),
       st.sampled_from(["closed", "schema"]))
def test_oneof_over_nested_composed_and_open_objects_is_exactly_one(branches, mode):
    """Branches with nested objects, ``anyOf``/``allOf`` parts, or open (extra keys): where
    toolc compiles the ``oneOf`` it agrees with jsonschema (closed mode: on the closed
    reading) in some key order for a valid object and in none for an invalid one; where it
    does not, the refusal is a toolc error."""
    schema = {"oneOf": branches}
    try:
        dfa = dfa_of_mode(schema, mode)
    except EmptyLanguageError:
        dfa = None
    except UnsupportedSchemaError:
        NESTED_COMPILED.append(False)
        return
    NESTED_COMPILED.append(True)
    v = jsonschema.Draft202012Validator(closed(schema) if mode == "closed" else schema)
    for x in NESTED_POOL:
        got = dfa is not None and any(accepts(dfa, s) for s in all_spellings(x))
        assert got == v.is_valid(x), f"{mode} {json.dumps(schema)}: {x} accepted={got}"


def test_most_nested_oneofs_compile():
    if not NESTED_COMPILED:
        pytest.skip("runs after the property test")
    assert sum(NESTED_COMPILED) >= len(NESTED_COMPILED) // 2, NESTED_COMPILED


@pytest.mark.parametrize("mode", ["closed", "schema"])
def test_if_is_read_open_in_both_modes(mode):
    """The closed reading is for ``oneOf`` branches only: an ``if`` that names one property
    tests it whatever the other keys (``{"country": "US", "zip": "abc"}`` passes the ``if``,
    so ``then`` applies and rejects it)."""
    schema = {"type": "object", "properties": {"country": {"type": "string"},
                                               "zip": {"type": "string"}},
              "if": {"properties": {"country": {"const": "US"}}},
              "then": {"properties": {"zip": {"pattern": "^[0-9]+$"}}}}
    d = dfa_of_mode(schema, mode)
    got = [accepts(d, text(x)) for x in [{"country": "US", "zip": "abc"},
                                         {"country": "US", "zip": "12"},
                                         {"country": "CA", "zip": "abc"}]]
    assert got == [False, True, True]


def test_oneof_over_nested_closed_objects_is_exact():
    """Refused before: the branches differ inside a nested object. ``{"x": {"a": 1}}``
    matches both; ``{"x": {"a": 2}}`` and ``{"x": {"a": 1, "b": "s"}}`` only the second
    (closed mode: the nested object is closed too)."""
    schema = {"oneOf": [
        {"type": "object", "properties": {"x": {"type": "object", "properties": {
            "a": {"const": 1}}, "required": ["a"]}}, "required": ["x"]},
        {"type": "object", "properties": {"x": {"type": "object", "properties": {
            "a": {"type": "integer"}, "b": {"type": "string"}}}}, "required": ["x"]}]}
    d = dfa_of(schema)
    v = jsonschema.Draft202012Validator(closed(schema))
    for x in [{"x": {"a": 1}}, {"x": {"a": 2}}, {"x": {"a": 1, "b": "s"}}, {"x": {}},
              {"x": {"b": "s"}}, {}]:
        assert any(accepts(d, s) for s in all_spellings(x)) == v.is_valid(x), x
    assert not accepts(d, text({"x": {"a": 1}})) and accepts(d, text({"x": {"a": 2}}))


# -- allOf over objects whose own keywords conflict ----------------------------------------
OBJ_ALLOF_ATOMS = [
    {"type": "object", "properties": {"a": {"type": "integer"}}},
    {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}},
    {"oneOf": [{"required": ["a"]}, {"required": ["b"]}]},
    {"oneOf": [{"properties": {"a": {"const": 1}}, "required": ["a"]},
               {"properties": {"a": {"minimum": 1}}}]},
    {"dependentSchemas": {"a": {"required": ["b"]}}},
    {"dependentSchemas": {"a": {"properties": {"b": {"const": "x"}}},
                          "b": {"required": ["a"]}}},
    {"type": "object", "properties": {"a": {}}, "additionalProperties": {"type": "string"}},
    {"type": "object", "patternProperties": {"^x": {"type": "integer"}}},
    {"type": "object", "properties": {"b": {}}, "additionalProperties": False},
]
OBJ_ALLOF_POOL = [{}, {"a": 1}, {"a": 2}, {"a": "s"}, {"b": "x"}, {"b": "y"}, {"b": 1},
                  {"a": 1, "b": "x"}, {"a": 2, "b": "y"}, {"x1": 1}, {"x1": "s"},
                  {"a": 1, "x1": 2}, {"c": "s"}, {"b": "x", "c": 1}, 3]


@settings(max_examples=80, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(OBJ_ALLOF_ATOMS), min_size=2, max_size=3))
def test_allof_over_conflicting_object_keywords_is_the_intersection(branches):
    """Two ``oneOf``s, two ``dependentSchemas``, ``patternProperties`` beside the other
    branch's ``additionalProperties``: where toolc compiles the ``allOf`` it agrees with
    jsonschema in some key order (``--additional-properties schema``: closed mode closes the
    merged object, not each branch, a reading of its own)."""
    schema = {"allOf": branches}
    try:
        dfa = dfa_of_mode(schema, "schema")
    except (EmptyLanguageError, NoValue):
        dfa = None
    except UnsupportedSchemaError:
        return
    v = jsonschema.Draft202012Validator(schema)
    for x in OBJ_ALLOF_POOL:
        got = dfa is not None and any(accepts(dfa, s) for s in all_spellings(x))
        assert got == v.is_valid(x), f"{json.dumps(schema)}: {x} accepted={got}"


@pytest.mark.parametrize("schema, good, bad", [
    ({"allOf": [{"type": "object", "dependentSchemas": {"a": {"required": ["b"]}}},
                {"type": "object", "dependentSchemas": {"a": {"required": ["c"]}}}]},
     [{}, {"a": 1, "b": 1, "c": 1}, {"b": 1}], [{"a": 1, "b": 1}, {"a": 1, "c": 1}]),
    ({"allOf": [{"type": "object", "oneOf": [
        {"properties": {"k": {"const": "x"}}, "required": ["k"]},
        {"properties": {"k": {"const": "y"}}, "required": ["k"]}]},
                {"type": "object", "oneOf": [{"required": ["b"]}, {"required": ["c"]}]}]},
     [{"k": "x", "b": 1}, {"k": "y", "c": 1}],
     [{"k": "x"}, {"k": "x", "b": 1, "c": 1}, {"b": 1}, {"k": "z", "b": 1}]),
    ({"allOf": [{"type": "object", "properties": {"a": {}}, "additionalProperties": False},
                {"type": "object", "patternProperties": {"^x": {}}}]},
     [{"a": 1}, {}], [{"x1": 1}, {"a": 1, "x": 2}]),
])
def test_allof_object_keyword_conflicts_known_cases(schema, good, bad):
    """Refused before this: the objects' own keywords conflicted (schema mode: open)."""
    dfa = dfa_of_mode(schema, "schema")
    for x in good:
        assert any(accepts(dfa, s) for s in all_spellings(x)), x
    for x in bad:
        assert not any(accepts(dfa, s) for s in all_spellings(x)), x


def test_oneof_of_any_object_and_a_closed_one_keeps_the_objects_with_other_keys():
    """Refused before: the closed branch ``{a}`` rejects every object holding another key,
    which no schema of ``properties``/``required`` says; it is an automaton difference
    (``not: {propertyNames: ...}``, :mod:`toolc.schema.negation`)."""
    schema = {"oneOf": [{"type": "object"}, {"type": "object", "properties": {"a": {}}}]}
    d = dfa_of(schema)
    v = jsonschema.Draft202012Validator(closed(schema))
    for x in [{}, {"a": 1}, {"b": 1}, {"a": 1, "b": 2}, {"b": {"a": 1}}, {"a": {"c": 1}}]:
        assert any(accepts(d, s) for s in all_spellings(x)) == v.is_valid(x), x


@pytest.mark.parametrize("mode", ["closed", "schema"])
def test_oneof_of_a_string_map_and_a_closed_model_is_exact(mode):
    """pydantic's ``dict[str, str] | Model``: the map's ``additionalProperties`` schema is
    negated over the model's keys (a key whose value is not a string)."""
    model = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
             "additionalProperties": False}
    schema = {"oneOf": [{"type": "object", "additionalProperties": {"type": "string"}},
                        model]}
    d = dfa_of_mode(schema, mode)
    v = jsonschema.Draft202012Validator(schema)
    for x in [{}, {"a": 1}, {"b": "s"}, {"a": 1, "b": "s"}, {"a": "s"}, {"c": "s"},
              {"c": 1}, {"a": 1, "c": "s"}]:
        assert any(accepts(d, s) for s in all_spellings(x)) == v.is_valid(x), (mode, x)


# -- arrays whose items hold objects or free-form values: the negation rewrite --------------
ITEM_ATOMS = [{}, {"type": "string"}, {"type": "integer"},
              {"type": "object", "properties": {"a": {"type": "integer"}}},
              {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
               "required": ["b"]},
              {"type": "object", "properties": {"b": {"type": "string"}, "a": {"const": 1}}},
              {"type": "object"}, {"anyOf": [{"type": "string"}, {"type": "object"}]}]
# contains schemas whose keys come in another order than an item's (met with the item's
# schema, so a match is written in the item's key order)
CONTAINS_ATOMS = [{"type": "object", "properties": {"a": {"type": "integer"}}},
                  {"type": "object", "properties": {"a": {"const": 1}, "b": {"type": "string"}}},
                  {"type": "object", "properties": {"b": {"const": "x"}}, "required": ["b"]}]
ARRAY_POOL = [[], [1], ["s"], [{}], [{"a": 1}], [{"a": 2}], [{"b": "x"}], [{"a": 1, "b": "x"}],
              [{"c": 1}], [1, "s"], ["s", {"a": 1}], [{"a": 1}, {"b": "y"}], [[1]], [None],
              [{"a": 1}, {"a": 1}], [1, 2, 3], "s", {"a": 1}, [{"a": 1, "b": "y"}],
              [{"a": 2, "b": "x"}, "s"]]


@st.composite
def array_branches(draw):
    out = {"type": "array", "items": draw(st.sampled_from(ITEM_ATOMS))}
    extra = draw(st.sampled_from(["none", "none", "min", "max", "prefix", "contains",
                                  "contains"]))
    if extra == "min":
        out["minItems"] = 1
    elif extra == "max":
        out["maxItems"] = 1
    elif extra == "prefix":
        out = {"type": "array", "prefixItems": [draw(st.sampled_from(ITEM_ATOMS))],
               "items": False}
    elif extra == "contains":
        out["contains"] = draw(st.sampled_from(ITEM_ATOMS[1:6] + CONTAINS_ATOMS))
    return out


ARRAY_COMPILED: list = []


def oracle(schema, mode: str):
    """The schema as toolc reads it: closed mode closes the objects that declare properties
    (their patterns' keys aside), but not those under ``not``, which is read as JSON Schema
    reads it (open)."""
    if mode != "closed" or not isinstance(schema, dict):
        return schema
    out = dict(schema)
    for k in ("items", "additionalProperties", "contains"):
        if k in out:
            out[k] = oracle(out[k], mode)
    for k in ("prefixItems", "anyOf", "oneOf", "allOf"):
        if k in out:
            out[k] = [oracle(x, mode) for x in out[k]]
    for k in ("properties", "patternProperties"):
        if k in out:
            out[k] = {n: oracle(x, mode) for n, x in out[k].items()}
    if schema.get("properties") and "additionalProperties" not in schema:
        out["additionalProperties"] = False
    return out


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(st.lists(array_branches(), min_size=2, max_size=2), st.sampled_from(["closed", "schema"]),
       st.booleans())
def test_oneof_and_not_over_arrays_of_objects_and_free_form_values_are_exact(branches, mode,
                                                                                negate):
    """``oneOf`` of two array branches whose items hold objects, free-form or composed values
    (refused before: such an automaton cannot be subtracted), and ``not`` of one beside the
    other: the arrays failing a branch are written as array schemas merged into the other
    (:mod:`toolc.schema.negarrays`). Where toolc compiles the schema it agrees with
    jsonschema (closed mode: on the closed reading) in some key order of each object."""
    schema = dict(branches[0], **{"not": branches[1]}) if negate else {"oneOf": branches}
    try:
        dfa = dfa_of_mode(schema, mode)
    except (EmptyLanguageError, NoValue):
        dfa = None
    except UnsupportedSchemaError:
        ARRAY_COMPILED.append(False)
        return
    ARRAY_COMPILED.append(True)
    v = jsonschema.Draft202012Validator(oracle(schema, mode))
    for x in ARRAY_POOL:
        got = dfa is not None and any(accepts(dfa, s) for s in all_spellings(x))
        assert got == v.is_valid(x), f"{mode} {json.dumps(schema)}: {x} accepted={got}"


def test_most_array_combinations_compile():
    if not ARRAY_COMPILED:
        pytest.skip("runs after the property test")
    assert sum(ARRAY_COMPILED) >= len(ARRAY_COMPILED) * 3 // 4, ARRAY_COMPILED


# -- objects failing counts, dependencies, names, a nested oneOf, undeclared-member schemas --
NEG_OBJ_ATOMS = [
    {"type": "object", "properties": {"a": {"type": "integer"}}, "minProperties": 1},
    {"type": "object", "maxProperties": 1},
    {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
     "dependentRequired": {"a": ["b"]}},
    {"type": "object", "propertyNames": {"enum": ["a", "b"]}},
    {"type": "object", "properties": {"a": {}, "b": {}},
     "oneOf": [{"required": ["a"]}, {"required": ["b"]}]},
    {"type": "object", "additionalProperties": {"type": "string"}},
    {"type": "object", "additionalProperties": {"type": "integer"}},
    {"type": "object", "properties": {"a": {"type": "integer"}},
     "additionalProperties": {"type": "string"}},
    {"type": "object", "patternProperties": {"^x": {"type": "integer"}}},
    {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
    {"type": "object", "properties": {"b": {"type": "string"}, "a": {"type": "integer"}},
     "not": {"required": ["a", "b"]}},
    {"type": "object"},
    {"type": "object", "properties": {"xa": {"type": "integer"}},
     "patternProperties": {"^x": {"minimum": 5}}},
]
NEG_OBJ_POOL = [{}, {"a": 1}, {"a": "s"}, {"b": "x"}, {"b": 1}, {"a": 1, "b": "x"}, {"x1": 1},
                {"x1": "s"}, {"c": "s"}, {"c": 1}, {"a": 1, "c": "s"}, {"b": "x", "c": "y"},
                {"c": "s", "d": 2}, {"xa": 3}, {"xa": 7}, {"x1": 7}, 3]
NEG_OBJ_COMPILED: list = []


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(NEG_OBJ_ATOMS), min_size=2, max_size=2, unique_by=json.dumps),
       st.sampled_from(["closed", "schema"]), st.sampled_from(["schema", "any"]), st.booleans())
def test_not_and_oneof_over_object_counts_names_and_member_schemas_are_exact(
        branches, mode, order, negate):
    """``minProperties``/``maxProperties``, ``dependentRequired``, ``propertyNames``, a
    nested ``oneOf`` or ``not``, ``additionalProperties``/``patternProperties`` schemas in the
    negated (or subtracted) object (refused before): where toolc compiles, it agrees with
    jsonschema (closed mode: on the closed reading) in some key order and in none for an
    invalid object, with both property orders; the refusals that remain are toolc errors
    (a member schema beside an open object whose undeclared members may pass or fail it)."""
    schema = dict(branches[0], **{"not": branches[1]}) if negate and \
        "not" not in branches[0] else {"oneOf": branches}
    try:
        dfa = dfa_of_mode(schema, mode, order)
    except (EmptyLanguageError, NoValue):
        dfa = None
    except UnsupportedSchemaError:
        NEG_OBJ_COMPILED.append(False)
        return
    NEG_OBJ_COMPILED.append(True)
    v = jsonschema.Draft202012Validator(oracle(schema, mode))
    for x in NEG_OBJ_POOL:
        got = dfa is not None and any(accepts(dfa, s) for s in all_spellings(x))
        assert got == v.is_valid(x), f"{mode} {order} {json.dumps(schema)}: {x} accepted={got}"


def test_most_object_negations_compile():
    if not NEG_OBJ_COMPILED:
        pytest.skip("runs after the property test")
    assert sum(NEG_OBJ_COMPILED) >= len(NEG_OBJ_COMPILED) // 2, NEG_OBJ_COMPILED


@pytest.mark.parametrize("schema, mode", [
    ({"oneOf": [{"type": "object"}, {"type": "object", "properties": {"a": {}}}]}, "closed"),
    ({"type": "object", "not": {"propertyNames": {"enum": ["a"]}}}, "schema"),
    ({"type": "object", "properties": {"b": {"type": "integer"}},
      "propertyNames": {"enum": ["a", "b"]}, "additionalProperties": {"type": "string"}},
     "schema"),
])
def test_a_key_spelled_with_escapes_is_the_same_key(schema, mode):
    """``"\\u0061"`` is the key ``a``: where an object's keys are a set of names (a free-form
    object less the objects whose keys all lie in a set; ``propertyNames`` with an enum),
    every spelling of a name counts as that name (accepted before: the set held one)."""
    d = dfa_of_mode(schema, mode)
    v = jsonschema.Draft202012Validator(oracle(schema, mode))
    for raw in [b'{"a":1}', b'{"\\u0061":1}', b'{"\\u0061":"s"}', b'{"b":1}', b'{"\\u0062":1}',
                b'{"\\u0062":"s"}', b'{"c":1}']:
        if accepts(d, raw):
            assert v.is_valid(json.loads(raw)), raw


# -- overlapping patternProperties (an allOf of pattern maps merges into them) ---------------
PATTERNS = ["^a", "b$", "^ab", "c"]
PATTERN_VALUES = [{"type": "integer"}, {"minimum": 2}, {"type": "string"}, {"maxLength": 1},
                  {"enum": [1, "s", 3]}, {}]
PATTERN_POOL = [{}, {"a": 1}, {"a": 3}, {"ab": 3}, {"ab": 1}, {"ab": "s"}, {"b": "s"},
                {"cb": 2}, {"cb": "s"}, {"abc": 3}, {"abc": "xy"}, {"z": 1}, {"z": "s"},
                {"a": 3, "b": "s", "z": None}, {"abcb": 3}, 4]


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(st.lists(st.tuples(st.sampled_from(PATTERNS), st.sampled_from(PATTERN_VALUES)),
                min_size=2, max_size=3, unique_by=lambda t: t[0]),
       st.sampled_from([None, False, {"type": "string"}]), st.booleans(),
       st.sampled_from(["closed", "schema"]))
def test_overlapping_pattern_properties_are_exact(pats, extra, as_allof, mode):
    """Overlapping patterns (refused before): a name matching several must satisfy each
    schema; as one object's ``patternProperties`` or as an ``allOf`` of pattern maps,
    in both modes (no declared properties: closed mode leaves the object open)."""
    obj = {"type": "object", "patternProperties": dict(pats)}
    if extra is not None:
        obj["additionalProperties"] = extra
    schema = {"allOf": [{"type": "object", "patternProperties": {p: s}} for p, s in pats]} \
        if as_allof and extra is None else obj
    dfa = dfa_of_mode(schema, mode)
    v = jsonschema.Draft202012Validator(schema)
    for x in PATTERN_POOL:
        got = any(accepts(dfa, s) for s in all_spellings(x))
        assert got == v.is_valid(x), f"{mode} {json.dumps(schema)}: {x} accepted={got}"


def test_rewrites_that_keep_nesting_are_refused_not_recursed(monkeypatch):
    """A bound on combinations built from rewritten parts (a random oneOf of objects with
    nested oneOfs once recursed without end): past it, a refusal with the pointer."""
    from toolc.schema import negation
    monkeypatch.setattr(negation, "MAX_REWRITE_DEPTH", 2)
    schema = {"oneOf": [{"type": "object", "properties": {"a": {"type": "integer"}}},
                        {"type": "object", "properties": {"a": {}, "b": {}},
                         "oneOf": [{"required": ["a"]}, {"required": ["b"]}]}]}
    with pytest.raises(UnsupportedSchemaError) as e:
        dfa_of_mode(schema, "closed")
    assert "levels deep" in e.value.message and e.value.pointer.startswith("/oneOf/")
    monkeypatch.setattr(negation, "MAX_REWRITE_DEPTH", 40)
    dfa_of_mode(schema, "closed")
