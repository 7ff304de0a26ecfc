"""--lenient, --whitespace, the state budget and its located error, type-name notices, and
schemas that blow up elsewhere but stay small here."""

from __future__ import annotations

import json
import random

import pytest
from click.testing import CliRunner

import toolc
from schema_cases import ByteLang, obj, validator
from toolc.cli import main
from toolc.errors import BudgetExceededError, UnsupportedSchemaError
from toolc.schema import SchemaCompiler, SchemaOptions
from toolc.schema.strings import expanded_lengths

BOOL_STRINGS = {"type": "boolean", "enum": ["True", "False"]}   # seen in real tool files


def tools(params, name="t"):
    return [{"type": "function", "function": {"name": name, "parameters": params}}]


# -- lenient ------------------------------------------------------------------------------------

LOOSE = obj({"tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
             "n": {"type": "number", "multipleOf": 0.00012347, "minimum": 0},
             "s": {"type": "string", "$dynamicRef": "#meta", "order": 3},
             "flag": BOOL_STRINGS}, ["tags", "n", "s"])


def test_strict_mode_refuses_each_with_its_pointer():
    with pytest.raises(UnsupportedSchemaError) as exc:
        toolc.compile_tools(tools(LOOSE), source="tools.json")
    e = exc.value
    assert (e.file, e.tool) == ("tools.json", "t")
    assert e.pointer == "/0/function/parameters/properties/tags/uniqueItems"


def test_lenient_drops_and_records_every_keyword():
    art = toolc.compile_tools(tools(LOOSE), lenient=True)
    dropped = {(d["pointer"], d["keyword"]) for d in art.header["not_enforced"]}
    base = "/0/function/parameters/properties"
    assert dropped == {(f"{base}/tags/uniqueItems", "uniqueItems"),
                       (f"{base}/n/multipleOf", "multipleOf"),
                       (f"{base}/s/$dynamicRef", "$dynamicRef"),
                       (f"{base}/s/order", "order")}
    assert all(d["tool"] == "t" and d["why"] for d in art.header["not_enforced"])
    assert art.header["options"]["lenient"] is True
    # the property no value can satisfy is left out, with a notice: still exact
    notes = [n for n in art.header["notices"] if "flag" in n["pointer"]]
    assert notes and "left out" in notes[0]["message"]


def test_lenient_keeps_what_it_can_enforce():
    lang = ByteLang(LOOSE, lenient=True)
    assert lang.accepts('{"tags": ["a", "a"], "n": 0.3, "s": "x"}')    # dropped: not checked
    assert not lang.accepts('{"tags": [], "n": -1, "s": ""}')          # minimum still holds
    assert not lang.accepts('{"tags": [], "n": 1, "s": "", "flag": true}')


def test_optional_property_without_a_value_is_an_error_by_default():
    with pytest.raises(UnsupportedSchemaError, match="enum"):
        SchemaCompiler().compile(obj({"flag": BOOL_STRINGS}, []))


def test_required_property_without_a_value_stays_an_error_when_lenient():
    with pytest.raises(UnsupportedSchemaError):
        SchemaCompiler(SchemaOptions(lenient=True)).compile(obj({"flag": BOOL_STRINGS}))


def test_lenient_never_drops_structure():
    with pytest.raises(UnsupportedSchemaError, match="unknown type"):
        SchemaCompiler(SchemaOptions(lenient=True)).compile(obj({"x": {"type": "decimal"}}))


def test_cli_lenient_warns_per_keyword_and_inspect_shows_them(tmp_path):
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(tools(LOOSE)))
    out = tmp_path / "a.toolc"
    runner = CliRunner()
    strict = runner.invoke(main, ["compile", str(path), "-o", str(out), "-q"])
    assert strict.exit_code == 1 and "uniqueItems" in strict.stderr
    assert not out.exists()
    res = runner.invoke(main, ["compile", str(path), "-o", str(out), "-q", "--lenient"])
    assert res.exit_code == 0, res.stderr
    warnings = [ln for ln in res.stderr.splitlines() if ln.startswith("warning:")]
    assert len(warnings) == 4
    assert any(str(path) in w and "'t'" in w and "/properties/n/multipleOf" in w
               for w in warnings)
    shown = runner.invoke(main, ["inspect", str(out)])
    assert "4 keyword(s) not enforced" in shown.stdout
    assert "/properties/s/$dynamicRef" in shown.stdout


def test_type_alias_notices_reach_the_cli(tmp_path):
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(tools(obj({"d": {"type": "dict"}, "n": {"type": "int"}}))))
    res = CliRunner().invoke(main, ["compile", str(path), "-o", str(tmp_path / "a.toolc"),
                                    "-q"])
    assert res.exit_code == 0, res.stderr
    assert "non-standard type 'dict' read as 'object'" in res.stderr
    assert "non-standard type 'int' read as 'integer'" in res.stderr


# -- whitespace ---------------------------------------------------------------------------------

NESTED = obj({"a": {"type": "integer"}, "o": obj({"b": {"type": "array",
                                                         "items": {"type": "string"}}}),
              "e": {"enum": [[1, 2]]}}, ["a", "o"])
VALUE = {"a": 1, "o": {"b": ["x", "y"]}, "e": [1, 2]}


def test_whitespace_model_is_json_dumps():
    lang = ByteLang(NESTED)
    assert lang.accepts(json.dumps(VALUE))
    assert not lang.accepts(json.dumps(VALUE, separators=(",", ":")))


def test_whitespace_compact_has_no_spaces():
    lang = ByteLang(NESTED, whitespace="compact")
    assert lang.accepts(json.dumps(VALUE, separators=(",", ":")))
    assert not lang.accepts(json.dumps(VALUE))


def test_whitespace_flexible_is_any_json_whitespace_bounded():
    lang = ByteLang(obj({"a": {"type": "integer"}, "o": obj({"b": {"type": "array",
                        "items": {"type": "string"}}})}), whitespace="flexible", max_ws=4)
    v = {"a": 1, "o": {"b": ["x", "y"]}}
    for text in (json.dumps(v), json.dumps(v, separators=(",", ":")), json.dumps(v, indent=1),
                 '{ "a" :1 ,\t"o": {"b": [ ]}\r\n}', '{"a": 1, "o": {"b": [    ]}}'):
        assert lang.accepts(text), text
    assert not lang.accepts('{"a": 1, "o": {"b": [     ]}}')       # five in a row
    assert not lang.accepts(json.dumps(v, indent=4))               # five: newline + four
    rng = random.Random(0)
    check = validator(obj({"a": {"type": "integer"}, "o": obj({"b": {"type": "array",
                          "items": {"type": "string"}}})}))
    for _ in range(100):
        data = lang.walk(rng, budget=30)
        assert check.is_valid(json.loads(data))


def test_unknown_whitespace_mode_is_refused():
    with pytest.raises(ValueError, match="flexible"):
        toolc.compile_tools(tools(obj({})), whitespace="pretty")


# -- budgets and schemas that blow up elsewhere -------------------------------------------------

def test_state_budget_error_names_tool_and_pointer():
    params = obj({"small": {"type": "string"},
                  "big": obj({"inner": {"enum": [f"value {i:05d}" for i in range(4000)]}})})
    with pytest.raises(BudgetExceededError) as exc:
        toolc.compile_tools(tools(obj({}, additionalProperties=False)) + tools(params, "heavy"),
                            max_states=2000,
                            source="tools.json")
    e = exc.value
    assert e.tool == "heavy" and e.file == "tools.json"
    assert e.pointer == "/1/function/parameters/properties/big/properties/inner"


def test_budget_error_from_a_combined_constraint_names_its_pointer(monkeypatch):
    from toolc.schema import automata
    monkeypatch.setattr(automata, "MAX_PRODUCT_STATES", 50)
    # built as states, a length beside a pattern is a product (counted, it is none)
    with pytest.raises(BudgetExceededError) as exc, expanded_lengths():
        SchemaCompiler().compile(obj({"s": {"type": "string", "pattern": "^[a-z]+$",
                                            "maxLength": 100}}))
    assert exc.value.pointer == "/properties/s"


def _states(schema, **opts) -> int:
    return ByteLang(schema, **opts).dfa.num_states


def test_several_max_length_strings_stay_linear():
    one = _states(obj({"a": {"type": "string", "maxLength": 100}}))
    five = _states(obj({k: {"type": "string", "maxLength": 100} for k in "abcde"}))
    assert five < 6 * one            # the sum of the parts, not their product


def test_thirty_optional_properties_stay_linear():
    n10 = _states(obj({f"p{i}": {"type": "integer"} for i in range(10)}, []))
    n30 = _states(obj({f"p{i}": {"type": "integer"} for i in range(30)}, []))
    assert n30 < 4 * n10


def test_enum_of_five_thousand_values():
    values = [f"item-{i}" for i in range(5000)]
    lang = ByteLang(obj({"v": {"enum": values}}))
    assert lang.accepts('{"v": "item-4999"}') and not lang.accepts('{"v": "item-5000"}')
    assert lang.dfa.num_states < 10_000


def test_recursive_tree_is_small():
    from schema_cases import TREE
    assert _states(TREE) < 2_000


def test_number_bounds_are_linear_in_digits():
    assert _states(obj({"n": {"type": "integer", "minimum": 0, "maximum": 10 ** 9}})) < 60
    assert _states(obj({"n": {"type": "number", "minimum": -12.375,
                              "maximum": 1e6}})) < 80
