"""``$ref`` through base URIs (toolc/schema/uris.py): ``$id``/``id`` bases, relative URIs,
URNs, anchors and embedded resources resolved inside the tool's schema, each schema compiled
as a tool's is (the keyword pass, then the schema compiler) and its verdicts compared with
jsonschema's (which resolves the same references in the same document); references that lead
outside the schema refused with their pointer."""

from __future__ import annotations

import json

import jsonschema
import pytest
from click.testing import CliRunner

from conftest import tools_list
from toolc.cli import main
from toolc.errors import UnsupportedSchemaError
from toolc.fsm import compile_expr
from toolc.schema import SchemaCompiler, SchemaOptions
from toolc.schema.uris import join, localized, split_fragment
from toolc.schema.vocabulary import prepare

DRAFT7 = "http://json-schema.org/draft-07/schema#"
DRAFT4 = "http://json-schema.org/draft-04/schema#"


def dfa(schema):
    """The byte DFA of ``schema`` read as a tool's arguments (open objects, compact JSON)."""
    sc = SchemaCompiler(SchemaOptions(whitespace="compact", additional_properties="schema"))
    return compile_expr(sc.compile(prepare(schema).schema))


def accepts(d, value) -> bool:
    q = d.step_bytes(0, json.dumps(value, separators=(",", ":")).encode())
    return q >= 0 and bool(d.final[q])


def agrees(schema, *values) -> None:
    """toolc's verdict on each value is jsonschema's, and the values hold both verdicts (so a
    reference that resolved to the wrong place shows)."""
    d = dfa(schema)
    validator = jsonschema.validators.validator_for(schema)(schema)
    verdicts = [validator.is_valid(v) for v in values]
    assert True in verdicts and False in verdicts, verdicts
    for v, want in zip(values, verdicts):
        assert accepts(d, v) == want, (v, want)


def refused(schema) -> UnsupportedSchemaError:
    with pytest.raises(UnsupportedSchemaError) as e:
        dfa(schema)
    return e.value


# -- RFC 3986 --------------------------------------------------------------------------------

@pytest.mark.parametrize("ref, want", [
    # RFC 3986, section 5.4.1 (normal) and 5.4.2 (abnormal), against http://a/b/c/d;p?q
    ("g:h", "g:h"), ("g", "http://a/b/c/g"), ("./g", "http://a/b/c/g"), ("g/", "http://a/b/c/g/"),
    ("/g", "http://a/g"), ("//g", "http://g"), ("?y", "http://a/b/c/d;p?y"),
    ("g?y", "http://a/b/c/g?y"), ("#s", "http://a/b/c/d;p?q#s"), ("g#s", "http://a/b/c/g#s"),
    ("", "http://a/b/c/d;p?q"), (".", "http://a/b/c/"), ("..", "http://a/b/"),
    ("../g", "http://a/b/g"), ("../..", "http://a/"), ("../../g", "http://a/g"),
    ("../../../g", "http://a/g"), ("/./g", "http://a/g"), ("/../g", "http://a/g"),
    ("g.", "http://a/b/c/g."), ("..g", "http://a/b/c/..g"), ("./../g", "http://a/b/g"),
    ("g/./h", "http://a/b/c/g/h"), ("g/../h", "http://a/b/c/h"), ("g;x=1/../y", "http://a/b/c/y"),
])
def test_join_is_rfc_3986(ref, want):
    assert join("http://a/b/c/d;p?q", ref) == want


def test_join_against_a_urn_and_an_empty_base():
    urn = "urn:uuid:deadbeef-1234-ffff-ffff-4321feebdaed"
    assert join(urn, "#/$defs/bar") == urn + "#/$defs/bar"
    assert join(urn, "") == urn
    assert join("", "int.json#foo") == "int.json#foo"
    assert split_fragment("HTTP://Example.COM/a#") == ("http://example.com/a", "")


# -- resolution inside the schema --------------------------------------------------------------

def test_nested_id_bases():
    schema = {"$id": "http://example.com/root.json", "type": "object",
              "properties": {"a": {"$ref": "dir/b.json"}, "b": {"$ref": "dir/c.json"}},
              "$defs": {"A": {"$id": "dir/a.json", "$defs": {
                  "B": {"$id": "b.json", "type": "integer"},       # http://example.com/dir/b
                  "C": {"$id": "../dir/c.json", "type": "string"}}}}}
    agrees(schema, {"a": 1, "b": "x"}, {"a": "x"}, {"b": 1})


def test_relative_refs_resolve_against_their_own_resource():
    """"#/$defs/x" inside an embedded resource is a pointer into that resource."""
    schema = {"$id": "http://example.com/outer.json", "type": "object",
              "properties": {"a": {"$ref": "inner.json"}},
              "$defs": {"x": {"type": "string"},
                        "inner": {"$id": "inner.json", "$defs": {"x": {"type": "integer"}},
                                  "$ref": "#/$defs/x"}}}
    agrees(schema, {"a": 1}, {"a": "s"})
    assert localized(schema)["$defs"]["inner"]["$ref"] == "#/$defs/inner/$defs/x"


def test_absolute_path_reference_and_percent_encoding():
    schema = {"$id": "http://example.com/ref/absref.json", "type": "object",
              "properties": {"a": {"$ref": "/absref/foobar.json"},
                             "b": {"$ref": "absref/foobar.json#/$defs/p%25q"}},
              "$defs": {"a": {"$id": "http://example.com/ref/absref/foobar.json",
                              "$defs": {"p%q": {"type": "boolean"}}, "type": "number"},
                        "b": {"$id": "http://example.com/absref/foobar.json", "type": "string"}}}
    agrees(schema, {"a": "s", "b": True}, {"a": 1}, {"b": "s"})


def test_urn_with_pointer_and_with_anchor():
    urn = "urn:uuid:deadbeef-1234-ff00-00ff-4321feebdaed"
    schema = {"$id": urn, "type": "object",
              "properties": {"p": {"$ref": urn + "#/$defs/s"}, "q": {"$ref": urn + "#num"},
                             "r": {"$ref": "urn:example:nested"}},
              "$defs": {"s": {"type": "string"}, "n": {"$anchor": "num", "type": "number"},
                        "nested": {"$id": "urn:example:nested", "$ref": "#/$defs/b",
                                   "$defs": {"b": {"type": "boolean"}}}}}
    agrees(schema, {"p": "x", "q": 1, "r": True}, {"p": 1}, {"q": "x"}, {"r": 1})


def test_anchors_in_embedded_resources_and_the_same_anchor_under_two_bases():
    schema = {"$id": "http://example.com/root", "type": "object",
              "properties": {"a": {"$ref": "child1#it"}, "b": {"$ref": "child2#it"},
                             "c": {"$ref": "#it"}},
              "$defs": {"root_it": {"$anchor": "it", "type": "null"},
                        "c1": {"$id": "child1", "allOf": [
                            {"$id": "child2", "$anchor": "it", "type": "number"},
                            {"$anchor": "it", "type": "string"}]}}}
    agrees(schema, {"a": "x", "b": 1, "c": None}, {"a": 1}, {"b": "x"}, {"c": 1})


def test_dynamic_anchor_is_an_anchor_for_ref():
    schema = {"type": "object", "properties": {"a": {"$ref": "#dyn"}},
              "$defs": {"d": {"$dynamicAnchor": "dyn", "type": "integer"}}}
    agrees(schema, {"a": 1}, {"a": "x"})


def test_draft7_plain_name_ids_and_draft4_ids():
    seven = {"$schema": DRAFT7, "$id": "http://example.com/s7", "type": "object",
             "properties": {"a": {"$ref": "#foo"}, "b": {"$ref": "nested.json#bar"}},
             "definitions": {"A": {"$id": "#foo", "type": "integer"},
                             "N": {"$id": "nested.json", "definitions": {
                                 "B": {"$id": "#bar", "type": "string"}}}}}
    agrees(seven, {"a": 1, "b": "x"}, {"a": "x"}, {"b": 1})
    four = {"$schema": DRAFT4, "id": "http://example.com/s4", "type": "object",
            "properties": {"a": {"$ref": "#foo"}, "b": {"$ref": "n.json"}},
            "definitions": {"A": {"id": "#foo", "type": "integer"},
                            "N": {"id": "n.json", "type": "string"}}}
    agrees(four, {"a": 1, "b": "x"}, {"a": "x"}, {"b": 1})


@pytest.mark.parametrize("dialect, want", [(DRAFT7, "number"), (None, "string")])
def test_a_sibling_id_of_ref_changes_no_base_in_draft_7(dialect, want):
    """Drafts 4-7: a ``$ref`` object ignores its siblings, its ``$id`` included; 2020-12
    resolves the ``$ref`` against that ``$id``."""
    schema = {"$id": "http://example.com/sibling/base/", "type": "object",
              "properties": {"a": {"$id": "http://example.com/sibling/", "$ref": "foo.json"}},
              "definitions": {"foo": {"$id": "http://example.com/sibling/foo.json",
                                      "type": "string"},
                              "base_foo": {"$id": "foo.json", "type": "number"}}}
    if dialect:
        schema["$schema"] = dialect
    agrees(schema, {"a": 1}, {"a": "x"})
    assert accepts(dfa(schema), {"a": 1 if want == "number" else "x"})


def test_draft7_tuple_pointer_maps_to_prefix_items():
    schema = {"$schema": DRAFT7, "type": "object", "properties": {
        "t": {"type": "array", "items": [{"type": "integer"}, {"$ref": "#/properties/t/items/0"}],
              "additionalItems": False},
        "u": {"$ref": "#/properties/t/items/1"}}}
    agrees(schema, {"t": [1, 2], "u": 3}, {"t": [1, "x"]}, {"u": "x"})
    assert prepare(schema).schema["properties"]["t"]["prefixItems"][1]["$ref"] == \
        "#/properties/t/prefixItems/0"


def test_draft7_additional_items_and_dependencies_pointers_are_mapped():
    schema = {"$schema": DRAFT7, "type": "object", "properties": {
        "t": {"type": "array", "items": [{"type": "integer"}],
              "additionalItems": {"type": "string"}},
        "u": {"$ref": "#/properties/t/additionalItems"},
        "v": {"$ref": "#/dependencies/a/properties/b"},
        "w": {"$ref": "#/properties/dependencies"},     # a property named like the keyword
        "dependencies": {"type": "null"}},
        "dependencies": {"a": {"properties": {"b": {"type": "boolean"}}}}}
    agrees(schema, {"t": [1, "x"], "u": "y", "v": True, "w": None}, {"u": 1}, {"v": 1}, {"w": 1})
    props = prepare(schema).schema["properties"]
    assert [props[k]["$ref"] for k in "uvw"] == [
        "#/properties/t/items", "#/dependentSchemas/a/properties/b", "#/properties/dependencies"]


def test_a_ref_into_a_container_resolves_the_refs_inside_it():
    """A ``$ref`` into a place that is not a keyword (OpenAPI's components) makes that place
    a schema, whose own relative references resolve against the base around it."""
    schema = {"$id": "http://example.com/api.json", "type": "object",
              "properties": {"a": {"$ref": "#/components/schemas/A"}},
              "components": {"schemas": {"A": {"$ref": "api.json#/components/schemas/B"},
                                         "B": {"type": "integer"}}}}
    agrees(schema, {"a": 1}, {"a": "x"})


def test_refs_inside_enum_and_const_are_values():
    schema = {"$id": "http://example.com/v", "type": "object",
              "properties": {"a": {"enum": [{"$ref": "v#/$defs/s"}]}},
              "$defs": {"s": {"type": "string"}}}
    out = localized(schema)
    assert out["properties"]["a"]["enum"] == [{"$ref": "v#/$defs/s"}]
    agrees(schema, {"a": {"$ref": "v#/$defs/s"}}, {"a": "x"})


def test_a_ref_into_an_enum_value_leaves_the_value_as_written():
    """A ``$ref`` whose target lies in an ``enum`` does not make that value a schema whose
    own ``$ref`` would be rewritten: the enum's data stays as written."""
    schema = {"properties": {"a": {"enum": [{"$ref": "x.json"}]},
                             "b": {"$ref": "#/properties/a/enum/0"}},
              "$defs": {"x": {"$id": "x.json", "type": "string"}}}
    assert localized(schema)["properties"]["a"]["enum"] == [{"$ref": "x.json"}]


def test_an_id_that_repeats_its_parents_uri_breaks_nothing():
    schema = {"$id": "http://example.com/a", "type": "object",
              "properties": {"p": {"$id": "http://example.com/a#", "type": "string"},
                             "q": {"$ref": "#/properties/p"}}}
    agrees(schema, {"p": "x", "q": "y"}, {"q": 1})


def test_a_cycle_without_progress_still_compiles():
    """``{"$ref": "#"}`` chains (the suites' infinite-loop-detection) as before, through an
    ``$id`` too."""
    schema = {"$id": "http://example.com/loop", "type": "object",
              "properties": {"a": {"$ref": "loop"}, "b": {"$ref": "#"}}, "maxProperties": 1}
    agrees(schema, {"a": {"b": {}}}, {"a": 1})


# -- outside the schema: refused ---------------------------------------------------------------

@pytest.mark.parametrize("ref", [
    "http://localhost:1234/integer.json", "https://json-schema.org/draft/2020-12/schema",
    "int.json", "#nowhere", "other.json#/$defs/x",
])
def test_a_ref_outside_the_schema_is_refused_with_its_pointer(ref):
    schema = {"$id": "http://example.com/root.json", "type": "object",
              "properties": {"a": {"$ref": ref}}, "$defs": {"x": {"type": "integer"}}}
    e = refused(schema)
    assert e.pointer == "/properties/a/$ref"
    assert ref in e.message and "does not resolve inside the tool's schema" in e.message
    assert "fetches nothing" in e.message


def test_an_id_defined_twice_names_nothing():
    schema = {"type": "object", "properties": {"a": {"$ref": "dup.json"}},
              "$defs": {"x": {"$id": "dup.json", "type": "integer"},
                        "y": {"$id": "dup.json", "type": "string"}}}
    assert refused(schema).pointer == "/properties/a/$ref"
    # a pointer inside such a resource is not read as a pointer from the root either
    schema = {"type": "object", "properties": {"a": {"$ref": "#/$defs/y"}},
              "$defs": {"x": {"$id": "dup.json"}, "s": {"type": "string"},
                        "y": {"$id": "dup.json", "$ref": "#/$defs/s"}}}
    e = refused(schema)
    assert e.pointer == "/$defs/y/$ref" and "dup.json#/$defs/s" in e.message


def test_cli_remote_ref_is_one_error_line(tmp_path):
    path = tmp_path / "tools.json"
    params = {"type": "object", "properties": {"a": {"$ref": "http://localhost:1234/x.json"}}}
    path.write_text(json.dumps(tools_list(("get", params))))
    r = CliRunner().invoke(main, ["compile", str(path), "-o", str(tmp_path / "o.toolc")])
    assert r.exit_code == 1, (r.output, r.exception)
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and "Traceback" not in r.output
    assert "/properties/a/$ref" in lines[0] and "does not resolve inside" in lines[0]


@pytest.mark.slow
def test_references_through_ids_compile_end_to_end_with_qwen():
    """Through compile_tools and the real Qwen3 tokenizer: a valid call, rendered as Qwen3's
    template renders it, is accepted to the end; a call whose anchored value has the wrong
    type is rejected."""
    import toolc
    from helpers import assert_rendered_call_accepted, render_answer
    from toolc.tokenizer import load_vocabulary

    urn = "urn:uuid:6e8bc430-9c3a-11d9-9669-0800200c9a66"
    params = {"$id": urn, "type": "object", "required": ["city", "unit"],
              "properties": {"city": {"$ref": "place.json#name"}, "unit": {"$ref": "#unit"}},
              "$defs": {"u": {"$anchor": "unit", "enum": ["c", "f"]},
                        "place": {"$id": "place.json", "$defs": {
                            "n": {"$anchor": "name", "type": "string", "maxLength": 8}}}}}
    art = toolc.compile_tools(tools_list(("weather", params)), "qwen", tool_choice="required")
    vocab = load_vocabulary("qwen")
    assert_rendered_call_accepted(art, vocab, "weather", {"city": "Oslo", "unit": "c"})
    m = art.matcher()
    ids = vocab.encode(render_answer([("weather", {"city": "Oslo", "unit": "k"})]))
    assert not all(m.accepts(t) and m.advance(t) is None for t in ids)
