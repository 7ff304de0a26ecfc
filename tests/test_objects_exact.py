"""Object shapes built exactly: ``contains`` met with an item schema whose keys come in
another order, ``allOf`` where one side's ``additionalProperties`` meets the other side's
overlapping patterns or properties, and "holds an undeclared key matching p" beside an open
object. Each is checked against jsonschema (closed mode: on the closed reading that
``oracle`` writes out) in both ``--additional-properties`` modes."""

from __future__ import annotations

import json

import jsonschema
import pytest

from test_algebra import accepts, all_spellings, dfa_of_mode, oracle

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
