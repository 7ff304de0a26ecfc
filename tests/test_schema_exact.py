"""Keywords enforced exactly since issue 15: finite-domain ``uniqueItems`` (schema/arrays.py),
decimal ``multipleOf`` (schema/numbers.py), and objects under ``--additional-properties``
(schema/objects.py): each checked against jsonschema or exact decimal arithmetic."""

from __future__ import annotations

import itertools
import json
import random
from decimal import Decimal

import jsonschema
import pytest
from click.testing import CliRunner

import toolc
from toolc.cli import main
from toolc.errors import UnsupportedSchemaError
from toolc.fsm import compile_expr
from toolc.schema import SchemaCompiler, SchemaOptions
from toolc.schema.strings import expanded_lengths


def dfa(schema, **options):
    with expanded_lengths():        # lengths as states: counters are the runtime's
        return compile_expr(SchemaCompiler(SchemaOptions(**options)).compile(schema))


def accepts(d, text: str) -> bool:
    q = d.step_bytes(0, text.encode())
    return q >= 0 and bool(d.final[q])


@pytest.mark.parametrize("schema", [
    {"type": "array", "uniqueItems": True, "items": {"enum": ["a", "b", "c", 1, 1.0]}},
    {"type": "array", "uniqueItems": True, "items": {"enum": ["a", "b", "c"]}, "minItems": 2,
     "maxItems": 2},
    {"type": "array", "uniqueItems": True, "items": {"type": "boolean"}},
    {"type": "array", "uniqueItems": True, "items": {"$ref": "#/$defs/color"},
     "$defs": {"color": {"enum": ["red", "green"]}}},
])
def test_unique_items_over_a_finite_domain_is_exact(schema):
    d, v = dfa(schema), jsonschema.Draft202012Validator(schema)
    pool = ["a", "b", "c", 1, True, False, "red", "green"]
    for n in range(4):
        for xs in itertools.product(pool, repeat=n):
            assert accepts(d, json.dumps(list(xs))) == v.is_valid(list(xs)), xs


def test_unique_items_over_an_open_domain_is_refused_with_its_pointer():
    with pytest.raises(UnsupportedSchemaError) as e:
        SchemaCompiler().compile({"type": "array", "uniqueItems": True,
                                  "items": {"type": "string"}})
    assert e.value.pointer == "/uniqueItems"
    assert "finite" in str(e.value)


@pytest.mark.parametrize("m, integer", [(0.5, False), (0.3, False), (0.01, False), (7, False),
                                        (1.5, True), (4, True)])
def test_multiple_of_is_exact_on_written_decimals(m, integer):
    d = dfa({"type": "integer" if integer else "number", "multipleOf": m})
    rng = random.Random(str(m))
    for _ in range(2000):
        text = rng.choice(["-", ""]) + str(rng.randint(0, 80))
        if not integer and rng.random() < 0.6:
            text += "." + "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 4)))
        value = Decimal(text)
        want = value % Decimal(repr(m)) == 0
        assert accepts(d, text) == want, text


def test_multiple_of_zero_or_negative_is_refused():
    for m in (0, -2):
        with pytest.raises(UnsupportedSchemaError):
            SchemaCompiler().compile({"type": "number", "multipleOf": m})


OBJ = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}


def test_additional_properties_closed_and_schema_modes():
    closed, open_ = dfa(OBJ), dfa(OBJ, additional_properties="schema")
    assert accepts(closed, '{"a": 1}') and not accepts(closed, '{"a": 1, "z": [2]}')
    assert accepts(open_, '{"a": 1, "z": [2]}') and accepts(open_, '{"a": 1}')
    assert not accepts(open_, '{"z": 2, "a": 1}')          # extra keys after the declared ones
    shut = dict(OBJ, additionalProperties=False)
    assert not accepts(dfa(shut, additional_properties="schema"), '{"a": 1, "z": 2}')


@pytest.mark.parametrize("mode", ["closed", "schema"])
def test_empty_properties_and_required_only_objects_mean_what_json_schema_says(mode):
    assert accepts(dfa({"type": "object", "properties": {}}, additional_properties=mode),
                   '{"x": 1}')
    req = dfa({"type": "object", "required": ["q"]}, additional_properties=mode)
    assert accepts(req, '{"q": [1]}') and not accepts(req, "{}")
    undeclared = dfa({"type": "object", "properties": {"a": {}}, "required": ["q"]},
                     additional_properties=mode)
    assert accepts(undeclared, '{"a": 1, "q": "any"}') and not accepts(undeclared, '{"a": 1}')


def test_truly_unsatisfiable_required_is_refused_naming_it():
    with pytest.raises(UnsupportedSchemaError) as e:
        SchemaCompiler().compile({"type": "object", "properties": {}, "required": ["q"],
                                  "additionalProperties": False})
    assert e.value.pointer == "/required" and "'q'" in str(e.value)


def test_the_option_reaches_the_artifact_and_the_cli(tmp_path):
    tools = [{"type": "function", "function": {"name": "t", "parameters": OBJ}}]
    art = toolc.compile_tools(tools, additional_properties="schema")
    assert art.header["options"]["additional_properties"] == "schema"
    with pytest.raises(toolc.InvalidOptionError):
        toolc.compile_tools(tools, additional_properties="open")
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(tools))
    res = CliRunner().invoke(main, ["compile", str(path), "-o", str(tmp_path / "a.toolc"), "-q",
                                    "--additional-properties", "schema"])
    assert res.exit_code == 0, res.stderr
    assert toolc.load(str(tmp_path / "a.toolc")).header["options"][
        "additional_properties"] == "schema"


ORDERED = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"},
                                            "c": {"type": "null"}}, "required": ["a"]}


def test_property_order_any_admits_every_order_and_keeps_required():
    d = dfa(ORDERED, property_order="any")
    values = {"a": 1, "b": "x", "c": None}
    v = jsonschema.Draft202012Validator(ORDERED)
    for n in range(4):
        for keys in itertools.permutations("abc", n):
            obj = {k: values[k] for k in keys}
            assert accepts(d, json.dumps(obj)) == v.is_valid(obj), obj
    assert not accepts(dfa(ORDERED), '{"b": "x", "a": 1}')     # schema order by default


@pytest.mark.parametrize("extra", [
    {"additionalProperties": {"type": "integer"}},
    {"additionalProperties": {"type": "integer"}, "minProperties": 2, "maxProperties": 3},
    {"minProperties": 2},
    {"maxProperties": 2},
    {"dependentRequired": {"b": ["c"]}},
    {"additionalProperties": {"type": "integer"}, "dependentRequired": {"c": ["a", "b"]},
     "maxProperties": 4},
])
def test_property_order_any_with_extra_keys_counts_and_dependencies(extra):
    """Declared keys in every order, then extra keys; counts and dependencies exact (the
    extra keys 'x', 'y' are distinct, so the count rule's one-extra-key minimum is moot
    below two)."""
    schema = dict(ORDERED, **extra)
    d = dfa(schema, property_order="any")
    values = {"a": 1, "b": "x", "c": None, "x": 2, "y": 3}
    v = jsonschema.Draft202012Validator(dict(schema, additionalProperties=schema.get(
        "additionalProperties", False)))
    for n in range(4):
        for keys in itertools.permutations("abc", n):
            for tail in ("", "x", "xy"):
                if tail and "additionalProperties" not in schema:
                    continue
                obj = {k: values[k] for k in keys + tuple(tail)}
                want = v.is_valid(obj)
                if want and len(tail) == 2 and schema.get("minProperties", 0) > n + 1:
                    want = False    # two extra keys count as one toward the minimum
                assert accepts(d, json.dumps(obj)) == want, obj
    if "additionalProperties" in schema:    # extra keys come after the declared ones
        assert not accepts(d, '{"x": 2, "a": 1}')


def test_property_order_any_says_when_an_object_is_too_large():
    big = {"type": "object", "properties": {k: {"type": "integer"} for k in "abcdefg"}}
    with pytest.raises(UnsupportedSchemaError) as e:
        SchemaCompiler(SchemaOptions(property_order="any")).compile(
            {"type": "object", "properties": {"x": big}})
    assert e.value.pointer == "/properties/x" and "7 properties" in str(e.value)


# -- one type with no value beside others -----------------------------------------------------

def _verdicts(schema, mode):
    from test_algebra import accepts, all_spellings, dfa_of_mode, oracle
    v = jsonschema.Draft202012Validator(oracle(schema, mode))
    dfa = dfa_of_mode(schema, mode)
    for x in (1, "s", None, [], True, {}, {"a": 1}, {"b": 1}, {"a": 1, "b": 2}):
        yield x, any(accepts(dfa, t) for t in all_spellings(x)), v.is_valid(x)


@pytest.mark.parametrize("mode", ["closed", "schema"])
@pytest.mark.parametrize("schema", [
    {"if": {"required": ["b"]}, "then": {"additionalProperties": False}},
    {"allOf": [{"if": {"required": ["b"]}, "then": {"additionalProperties": False}},
               {"properties": {"a": {"type": "integer"}}}]},
    {"properties": {"a": False}, "required": ["a"]},
    {"type": ["object", "string"], "properties": {"a": {"not": {}}}, "required": ["a"]},
])
def test_an_object_part_with_no_value_leaves_the_other_types(schema, mode):
    """Where the objects of an untyped (or multi-typed) schema admit nothing (a required key
    no value satisfies, met in a conditional's branch), its other values still pass, as
    JSON Schema reads it: the whole schema was refused, or its branch dropped, before."""
    for x, got, want in _verdicts(schema, mode):
        assert got == want, (json.dumps(schema), mode, x, got)


def test_a_typed_object_with_no_value_is_still_an_error():
    from toolc.schema.keywords import NoValue
    from test_algebra import dfa_of_mode
    with pytest.raises(NoValue, match="required property 'a' admits no value"):
        dfa_of_mode({"type": "object", "properties": {"a": False}, "required": ["a"]},
                    "closed")


@pytest.mark.parametrize("mode", ["closed", "schema"])
@pytest.mark.parametrize("schema", [
    {"type": "object", "propertyNames": {"enum": []}},
    {"type": "object", "propertyNames": {"enum": ["a"], "minLength": 2}},
    {"allOf": [{"if": {"additionalProperties": False}, "then": {"type": "object"}},
               {"if": {"required": ["b"]}, "else": {
                   "if": {"not": {"patternProperties": {"^x": {}}}},
                   "else": {"maxProperties": 1}}}]},
])
def test_property_names_that_no_name_passes_leave_the_empty_object(schema, mode):
    """A ``propertyNames`` no name satisfies means "no member", not "no object" (it was the
    error "no value of 'enum'", so a conditional's branch that met it was dropped and ``{}``
    rejected)."""
    for x, got, want in _verdicts(schema, mode):
        assert got == want, (json.dumps(schema), mode, x, got)


@pytest.mark.parametrize("mode", ["closed", "schema"])
def test_not_over_a_conditional_whose_if_is_false(mode):
    """``if: false`` inside a negated object conditional (never "if and not then"): a
    TypeError came out of the negation before."""
    schema = {"type": "object", "properties": {"a": {}}, "additionalProperties": False,
              "not": {"if": False, "then": {"required": ["a"]}, "else": {"required": ["a"]}}}
    for x, got, want in _verdicts(schema, mode):
        assert got == want, (json.dumps(schema), mode, x, got)


@pytest.mark.parametrize("mode", ["closed", "schema"])
@pytest.mark.parametrize("schema", [
    {"type": "object", "allOf": [{"propertyNames": {"pattern": "^a"}},
                                 {"propertyNames": {"pattern": "b$"}}],
     "properties": {"ab": {}, "a": {}}},
    {"allOf": [{"anyOf": [{"properties": {"b": False}}, {"additionalProperties": False}]},
               {"propertyNames": {"pattern": "^[ab]"}},
               {"propertyNames": {"pattern": "^[ab]"}, "type": ["string", "object"]}]},
])
def test_merged_patterns_are_read_by_jsonschema_as_all_of(schema, mode):
    """Two ``propertyNames`` patterns merged by ``allOf`` are held as a list; the checks
    that ask jsonschema about declared names passed that list on (a TypeError)."""
    for x, got, want in _verdicts(schema, mode):
        assert got == want, (json.dumps(schema), mode, x, got)
