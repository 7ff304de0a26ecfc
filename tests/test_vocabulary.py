"""toolc/schema/vocabulary.py and drafts.py: annotations ignored, unknown keywords recorded as not
enforced, near-misses refused with a did-you-mean, older drafts read by their $schema, and
ignore= / --ignore dropping one keyword everywhere."""

from __future__ import annotations

import json

import jsonschema
import pytest
from click.testing import CliRunner

import toolc
from conftest import object_schema, tools_list
from schema_cases import ByteLang
from toolc.cli import main
from toolc.errors import InvalidToolsError, UnsupportedSchemaError
from toolc.schema.vocabulary import ANNOTATION_KEYWORDS, prepare

D4 = "http://json-schema.org/draft-04/schema#"
D7 = "http://json-schema.org/draft-07/schema#"


def lang(schema, **options) -> ByteLang:
    return ByteLang(prepare(schema, lenient=options.get("lenient", False)).schema, **options)


def agrees(schema, instances, draft_validator=None):
    """The compiled language and jsonschema (in the schema's own draft) agree on each instance
    written as json.dumps writes it."""
    bl = lang(schema)
    cls = draft_validator or jsonschema.validators.validator_for(schema)
    v = cls(schema)
    for x in instances:
        assert bl.accepts(json.dumps(x)) == v.is_valid(x), (schema, x)


# -- annotations ------------------------------------------------------------------------------

ANNOTATED = {"type": "object", "title": "T", "$comment": "c", "x-vendor": {"a": 1},
             "discriminator": {"propertyName": "kind"}, "examples": [{}],
             # (a JSON content without an encoding is enforced: tests/test_schema_content.py)
             "properties": {"s": {"type": "string", "contentMediaType": "application/json",
                                  "contentEncoding": "base64",
                                  "contentSchema": {"type": "object"}, "deprecated": True,
                                  "readOnly": True, "writeOnly": False, "default": "x",
                                  "x-order": 1, "example": "e"}},
             "required": ["s"]}


def test_annotations_are_removed_and_not_recorded():
    ready = prepare(ANNOTATED)
    assert ready.schema == {"type": "object", "properties": {"s": {"type": "string"}},
                            "required": ["s"]}
    assert ready.dropped == [] and ready.notices == []


def test_the_documented_annotation_list():
    for k in ("description", "title", "examples", "default", "deprecated", "readOnly",
              "writeOnly", "$comment", "discriminator", "contentSchema", "contentMediaType",
              "contentEncoding"):
        assert k in ANNOTATION_KEYWORDS


def test_annotations_compile_to_the_same_artifact_as_without(qwen):
    plain = {"type": "object", "properties": {"s": {"type": "string"}}, "required": ["s"]}
    a = toolc.compile_tools(tools_list(("t", ANNOTATED)), qwen)
    b = toolc.compile_tools(tools_list(("t", plain)), qwen)
    assert a.header["not_enforced"] == []
    assert a.num_states == b.num_states and a.header["num_states"] == b.header["num_states"]


# -- unknown keywords and near-misses ---------------------------------------------------------

def test_unknown_keywords_are_annotations_recorded_in_the_header(qwen):
    params = object_schema({"q": {"type": "string", "widget": "textarea"}}, uiOrder=["q"])
    art = toolc.compile_tools(tools_list(("t", params)), qwen)
    got = {(d["pointer"], d["keyword"]) for d in art.header["not_enforced"]}
    base = "/0/function/parameters"
    assert got == {(f"{base}/properties/q/widget", "widget"), (f"{base}/uiOrder", "uiOrder")}
    assert all("annotation" in d["why"] for d in art.header["not_enforced"])


@pytest.mark.parametrize("key, hint", [("minlength", "minLength"), ("maxitems", "maxItems"),
                                       ("requried", "required"), ("patern", "pattern"),
                                       ("additionalproperties", "additionalProperties"),
                                       ("Enum", "enum")])
def test_near_misses_of_enforced_keywords_are_refused(key, hint):
    schema = {"type": "object", "properties": {"x": {"type": "string", key: 3}}}
    with pytest.raises(UnsupportedSchemaError) as exc:
        prepare(schema)
    assert exc.value.pointer == f"/properties/x/{key}"
    assert f"did you mean {hint!r}?" in str(exc.value)
    assert "ignore=" in str(exc.value)          # the Python API's spelling, not --ignore
    dropped = prepare(schema, lenient=True).dropped
    assert [d["keyword"] for d in dropped] == [key] and hint in dropped[0]["why"]


def test_property_names_are_not_keywords():
    schema = object_schema({"minlength": {"type": "string"}, "type": {"type": "integer"}})
    assert prepare(schema).schema == schema


def test_values_of_const_and_enum_are_not_walked():
    schema = {"const": {"minlength": 1, "x-a": 2}, "enum": [{"title": 1}]}
    assert prepare(schema).schema == schema


# -- drafts -----------------------------------------------------------------------------------

def test_draft4_boolean_exclusive_bounds():
    schema = {"$schema": D4, "type": "number", "minimum": 5, "exclusiveMinimum": True,
              "maximum": 10, "exclusiveMaximum": False}
    assert prepare(schema).schema == {"type": "number", "exclusiveMinimum": 5, "maximum": 10}
    agrees(schema, [4, 5, 5.5, 10, 10.5])


def test_draft4_id_is_an_annotation():
    schema = {"$schema": D4, "id": "http://x/y", "type": "object",
              "properties": {"id": {"type": "integer"}}}
    assert prepare(schema).schema == {"type": "object", "properties": {"id": {"type": "integer"}}}


@pytest.mark.parametrize("draft", [D4, "http://json-schema.org/draft-06/schema#", D7,
                                   "https://json-schema.org/draft/2019-09/schema"])
def test_tuple_items_with_additional_items(draft):
    schema = {"$schema": draft, "type": "array", "items": [{"type": "integer"},
                                                            {"type": "string"}],
              "additionalItems": False}
    assert prepare(schema).schema == {"type": "array", "prefixItems": [{"type": "integer"},
                                                                       {"type": "string"}],
                                      "items": False}
    agrees(schema, [[], [1], [1, "a"], [1, "a", 2], ["a"], [1, 2]])


def test_additional_items_without_a_tuple_is_meaningless():
    schema = {"$schema": D7, "type": "array", "items": {"type": "integer"},
              "additionalItems": False}
    assert prepare(schema).schema == {"type": "array", "items": {"type": "integer"}}
    agrees(schema, [[], [1, 2], ["a"]])


def test_dependencies_split_into_required_and_schemas():
    schema = {"$schema": D7, "type": "object",
              "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
              "dependencies": {"a": ["b"], "b": {"required": ["a"]}}}
    got = prepare(schema).schema
    assert got["dependentRequired"] == {"a": ["b"]}
    assert got["dependentSchemas"] == {"b": {"required": ["a"]}}
    assert "dependencies" not in got


def test_draft7_definitions_resolve_by_pointer():
    schema = {"$schema": D7, "type": "object", "definitions": {"n": {"type": "integer"}},
              "properties": {"x": {"$ref": "#/definitions/n"}}, "required": ["x"],
              "additionalProperties": False}
    agrees(schema, [{"x": 1}, {"x": "a"}, {}])


@pytest.mark.parametrize("draft", [D4, D7])
def test_ref_overrides_its_siblings_before_2019(draft):
    schema = {"$schema": draft, "type": "object", "definitions": {"n": {"type": "integer"}},
              "properties": {"x": {"$ref": "#/definitions/n", "maximum": 2}},
              "required": ["x"], "additionalProperties": False}
    assert prepare(schema).schema["properties"]["x"] == {"$ref": "#/definitions/n"}
    agrees(schema, [{"x": 1}, {"x": 5}, {"x": "a"}])
    later = dict(schema, **{"$schema": "https://json-schema.org/draft/2019-09/schema"})
    agrees(later, [{"x": 1}, {"x": 5}, {"x": "a"}])


def test_the_input_is_not_changed():
    schema = {"$schema": D4, "type": "object", "dependencies": {"a": ["b"]},
              "dependentRequired": {"c": ["d"]}, "properties": {"a": {"x-k": 1}}}
    before = json.dumps(schema)
    prepare(schema)
    assert json.dumps(schema) == before


def test_draft3_is_refused_and_unknown_dialects_noted():
    with pytest.raises(UnsupportedSchemaError, match="draft 3"):
        prepare({"$schema": "http://json-schema.org/draft-03/schema#", "type": "object"})
    ready = prepare({"$schema": "https://example.com/my-dialect", "type": "object"})
    assert ready.notices and "2020-12" in ready.notices[0]["message"]


def test_tuple_items_without_a_schema_uri_get_a_hint():
    params = object_schema({"t": {"type": "array", "items": [{"type": "integer"}]}})
    with pytest.raises(InvalidToolsError) as exc:
        toolc.compile_tools(tools_list(("t", params)))
    assert "prefixItems" in str(exc.value) and "draft-07" in str(exc.value)


def test_a_draft7_tool_compiles_end_to_end(qwen):
    params = {"$schema": D7, "type": "object",
              "properties": {"pair": {"type": "array", "items": [{"type": "integer"},
                                                                  {"type": "string"}],
                                      "additionalItems": False, "minItems": 2}},
              "required": ["pair"], "additionalProperties": False}
    art = toolc.compile_tools(tools_list(("t", params)), qwen)
    assert art.header["not_enforced"] == []


# -- ignore= / --ignore -----------------------------------------------------------------------

LOOSE = object_schema({"tags": {"type": "array", "items": {"type": "string"},
                                "uniqueItems": True},
                       "inner": object_schema({"u": {"type": "array", "uniqueItems": True}})})


def test_ignore_drops_one_keyword_everywhere(qwen):
    with pytest.raises(UnsupportedSchemaError, match="uniqueItems"):
        toolc.compile_tools(tools_list(("t", LOOSE)), qwen)
    art = toolc.compile_tools(tools_list(("t", LOOSE)), qwen, ignore=["uniqueItems"])
    got = sorted(d["pointer"] for d in art.header["not_enforced"])
    base = "/0/function/parameters/properties"
    assert got == [f"{base}/inner/properties/u/uniqueItems", f"{base}/tags/uniqueItems"]
    assert all("ignore=" in d["why"] for d in art.header["not_enforced"])
    assert art.header["options"]["ignore"] == ["uniqueItems"]
    assert art.header["options"]["lenient"] is False


def test_ignore_is_recorded_only_when_used():
    assert "ignore" not in toolc.CompileOptions().header_options()
    assert toolc.CompileOptions(ignore=["b", "a", "b"]).ignore == ("a", "b")


@pytest.mark.parametrize("bad", ["uniqueItems", [""], [3], 5])
def test_ignore_must_be_a_list_of_names(bad):
    with pytest.raises(toolc.InvalidOptionError) as exc:
        toolc.CompileOptions(ignore=bad)
    assert exc.value.option == "ignore"


def test_python_errors_name_keyword_arguments():
    with pytest.raises(UnsupportedSchemaError) as exc:
        toolc.compile_tools(tools_list(("t", LOOSE)))
    assert "lenient=True" in str(exc.value) and "ignore=['uniqueItems']" in str(exc.value)
    assert "--lenient" not in str(exc.value)


def test_cli_ignore_is_repeatable_warns_and_inspect_shows(tmp_path):
    path = tmp_path / "tools.json"
    params = dict(LOOSE, properties=dict(LOOSE["properties"],
                                         n={"type": "integer", "not": {"const": 3}}))
    params["required"] = list(params["properties"])
    path.write_text(json.dumps(tools_list(("t", params))))
    out = tmp_path / "a.toolc"
    runner = CliRunner()
    strict = runner.invoke(main, ["compile", str(path), "-o", str(out), "-q"])
    assert strict.exit_code == 1 and "--lenient" in strict.stderr
    assert "--ignore uniqueItems" in strict.stderr and "lenient=True" not in strict.stderr
    res = runner.invoke(main, ["compile", str(path), "-o", str(out), "-q",
                               "--ignore", "uniqueItems", "--ignore", "not"])
    assert res.exit_code == 0, res.stderr
    warnings = [ln for ln in res.stderr.splitlines() if ln.startswith("warning:")]
    assert len(warnings) == 3 and all("--ignore" in w for w in warnings)
    shown = runner.invoke(main, ["inspect", str(out)])
    assert "3 keyword(s) not enforced" in shown.stdout
    assert "/properties/n/not" in shown.stdout


def test_python_spelling_is_back_after_the_cli_ran(tmp_path):
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(tools_list(("t", LOOSE))))
    res = CliRunner().invoke(main, ["compile", str(path), "-o", str(tmp_path / "a.toolc")])
    assert res.exit_code == 1 and "--lenient" in res.stderr
    with pytest.raises(UnsupportedSchemaError) as exc:
        toolc.compile_tools(tools_list(("t", LOOSE)))
    assert "lenient=True" in str(exc.value) and "--lenient" not in str(exc.value)


def test_containers_a_ref_points_into_are_kept_and_prepared():
    # OpenAPI-generated tools keep their schemas under components; vendors under x- keys
    schema = {"type": "object", "properties": {"pet": {"$ref": "#/components/schemas/Pet"},
                                               "tag": {"$ref": "#/x-defs/tag"}},
              "components": {"schemas": {"Pet": {"type": "string", "x-kind": 1, "colour": 2},
                                         "Unused": {"type": "integer"}}},
              "x-defs": {"tag": {"type": "integer", "minimum": 1, "title": "t"}},
              "required": ["pet", "tag"]}
    ready = prepare(schema)
    defs = ready.schema["$defs"]
    assert defs["toolc:/components"]["schemas"]["Pet"] == {"type": "string"}
    assert defs["toolc:/x-defs"]["tag"] == {"type": "integer", "minimum": 1}
    assert ready.schema["properties"]["pet"] == {"$ref": "#/$defs/toolc:~1components/schemas/Pet"}
    assert [d["pointer"] for d in ready.dropped] == ["/components/schemas/Pet/colour"]
    bl = ByteLang(ready.schema)
    assert bl.accepts('{"pet": "rex", "tag": 3}') and not bl.accepts('{"pet": "rex", "tag": 0}')


def test_older_keywords_without_a_schema_uri_say_how_to_enforce_them():
    schema = {"type": "object", "properties": {"a": {"type": "integer"}},
              "dependencies": {"a": ["b"]}}
    ready = prepare(schema)
    assert "dependencies" not in ready.schema
    (d,) = ready.dropped
    assert d["keyword"] == "dependencies" and "draft-07" in d["why"]
    with_uri = prepare(dict(schema, **{"$schema": D7}))
    assert with_uri.dropped == [] and with_uri.schema["dependentRequired"] == {"a": ["b"]}


def test_pointers_name_the_spelling_the_schema_was_written_in():
    params = {"$schema": D7, "type": "object", "required": ["pair"],
              "properties": {"pair": {"type": "array", "items": [
                  {"type": "integer"}, {"type": "array", "items": [{"type": "string",
                                                                   "minlength": 3}]}],
                  "additionalItems": {"type": "string", "$dynamicRef": "#x"}}}}
    base = "/0/function/parameters/properties/pair"
    with pytest.raises(UnsupportedSchemaError) as exc:          # refused in the pass
        toolc.compile_tools(tools_list(("t", params)))
    assert exc.value.pointer == f"{base}/items/1/items/0/minlength"
    ready = prepare(params, lenient=True)
    assert [d["pointer"] for d in ready.dropped] == ["/properties/pair/items/1/items/0/minlength"]
    assert ready.original("/properties/pair/prefixItems/1/prefixItems/0") == \
        "/properties/pair/items/1/items/0"
    del params["properties"]["pair"]["items"][1]["items"][0]["minlength"]
    with pytest.raises(UnsupportedSchemaError) as exc:          # refused by the compiler
        toolc.compile_tools(tools_list(("t", params)))
    assert exc.value.pointer == f"{base}/additionalItems/$dynamicRef"


def test_a_draft4_bound_error_points_at_minimum():
    ready = prepare({"$schema": D4, "type": "number", "minimum": 1, "exclusiveMinimum": True})
    assert ready.original("/exclusiveMinimum") == "/minimum"


# -- a property: annotations change nothing ---------------------------------------------------

_NOTES = {"title": "T", "description": "d", "examples": [1], "default": None, "x-k": {"a": 1},
          "$comment": "c", "deprecated": False, "discriminator": {"propertyName": "k"}}


def _annotated(s, rng):
    """``s`` with random annotations in its schema objects (walked independently of the
    module: properties, items, prefixItems, anyOf/allOf/oneOf, $defs)."""
    if not isinstance(s, dict):
        return s
    out = {}
    for k, v in s.items():
        if k in ("properties", "$defs", "definitions", "patternProperties"):
            v = {n: _annotated(x, rng) for n, x in v.items()}
        elif k in ("items", "additionalProperties", "contains", "propertyNames") \
                and isinstance(v, dict):
            v = _annotated(v, rng)
        elif k in ("prefixItems", "anyOf", "allOf", "oneOf"):
            v = [_annotated(x, rng) for x in v]
        out[k] = v
    for k in rng.sample(sorted(_NOTES), rng.randrange(0, 4)):
        out.setdefault(k, _NOTES[k])
    return out


def test_annotations_never_change_the_prepared_schema():
    import random

    from schema_cases import CASES
    rng = random.Random(15)
    for name, schema in sorted(CASES.items()):
        plain = prepare(schema)
        for _ in range(5):
            noted = prepare(_annotated(schema, rng))
            assert noted.schema == plain.schema, name
            assert noted.dropped == plain.dropped, name


def test_a_misspelt_ignore_gets_a_notice():
    ready = prepare({"type": "array", "uniqueItems": True}, ignore=["uniqueitems"])
    assert "uniqueItems" in ready.schema
    assert "did you mean 'uniqueItems'?" in ready.notices[0]["message"]
    assert prepare({"type": "array", "widget": 1}, ignore=["widget"]).notices == []
