"""toolc/tools.py: the accepted shapes of a tools file, validation, and the tools hash."""

from __future__ import annotations

import json
import re

import pytest

from conftest import object_schema, tools_list
from toolc.errors import InvalidToolsError
from toolc.tools import Tool, load_tools_file, parse_tools, tools_hash

CITY = object_schema({"city": {"type": "string"}})


def _error(data, file="tools.json") -> InvalidToolsError:
    with pytest.raises(InvalidToolsError) as exc:
        parse_tools(data, file=file)
    return exc.value


# -- accepted shapes --------------------------------------------------------------------------

@pytest.mark.parametrize("shape, pointer", [("openai", "/0/function"), ("bare", "/0"),
                                            ("wrapped", "/tools/0/function")])
def test_the_three_accepted_shapes(shape, pointer):
    data = tools_list(("weather", CITY), ("time", object_schema({})), shape=shape)
    tools = parse_tools(data)
    assert [t.name for t in tools] == ["weather", "time"]
    assert tools[0] == Tool(name="weather", description="The weather tool.", parameters=CITY,
                            pointer=pointer)
    assert tools[1].pointer == pointer.replace("/0", "/1")


def test_shapes_give_the_same_tools_and_hash():
    hashes = set()
    for shape in ("openai", "bare", "wrapped"):
        tools = parse_tools(tools_list(("weather", CITY), shape=shape))
        hashes.add(tools_hash(tools))
        assert tools[0].to_json() == {"name": "weather", "description": "The weather tool.",
                                      "parameters": CITY}
    assert len(hashes) == 1


def test_missing_parameters_mean_no_arguments():
    (tool,) = parse_tools([{"name": "ping"}])
    assert tool.parameters == {"type": "object", "properties": {}, "additionalProperties": False}
    assert tool.description == ""


def test_load_tools_file(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps(tools_list(("weather", CITY))), encoding="utf-8")
    (tool,) = load_tools_file(path)
    assert tool.name == "weather"
    assert tool.parameters == CITY


# -- malformed input --------------------------------------------------------------------------

def test_empty_list():
    e = _error([])
    assert "empty" in str(e)
    assert "tools.json" in str(e)


@pytest.mark.parametrize("data, kind", [({"name": "x"}, "an object"), ("x", "a string"),
                                        (5, "a number"), (None, "null"),
                                        ({"tools": {"name": "x"}}, "an object")])
def test_not_a_list(data, kind):
    e = _error(data)
    assert f"expected a list of tools, got {kind}" in str(e)


def test_entry_not_an_object():
    e = _error([tools_list(("a", CITY))[0], "b"])
    assert e.pointer == "/1"


def test_function_not_an_object():
    e = _error([{"type": "function", "function": "f"}])
    assert e.pointer == "/0/function"


def test_unsupported_tool_type():
    e = _error([{"type": "retrieval", "function": {"name": "x"}}])
    assert e.pointer == "/0/type"
    assert "'retrieval'" in str(e)


@pytest.mark.parametrize("fn", [{"description": "no name"}, {"name": ""}, {"name": 5},
                                {"name": None}])
def test_missing_or_empty_name(fn):
    e = _error([{"type": "function", "function": fn}])
    assert e.pointer == "/0/function/name"
    assert "non-empty string 'name'" in str(e)


def test_duplicate_name_names_both_positions():
    data = tools_list(("a", CITY), ("b", CITY), ("a", object_schema({})))
    e = _error(data)
    msg = str(e)
    assert "duplicate tool name 'a'" in msg
    assert "/0/function" in msg and "/2/function" in msg
    assert e.tool == "a"


@pytest.mark.parametrize("name", ['say"hi', "two\nlines", "back\\slash", "tab\there", "nul\x00"])
def test_names_the_format_cannot_write_are_rejected(name):
    e = _error(tools_list((name, CITY)))
    assert e.pointer == "/0/function/name"
    assert "tool name contains" in str(e)


def test_ordinary_names_are_accepted():
    tools = parse_tools(tools_list("get-weather_v2", "名前", "with space"))
    assert [t.name for t in tools] == ["get-weather_v2", "名前", "with space"]


def test_description_must_be_a_string():
    e = _error([{"name": "x", "description": ["a"]}])
    assert e.pointer == "/0/description"


@pytest.mark.parametrize("params, kind", [([], "a list"), ("object", "a string"),
                                          (True, "a boolean")])
def test_parameters_not_an_object(params, kind):
    e = _error([{"name": "x", "parameters": params}])
    assert e.pointer == "/0/parameters"
    assert f"got {kind}" in str(e)


@pytest.mark.parametrize("params", [{"type": "string"}, {"type": "array", "items": {}},
                                    {"type": ["object", "null"]}, {"enum": [1, 2]}])
def test_root_type_not_object(params):
    e = _error(tools_list(("x", params)))
    assert e.pointer == "/0/function/parameters/type"
    assert "must be an object" in str(e)
    assert '"type": "object"' in str(e)    # says how to fix it


@pytest.mark.parametrize("params, pointer", [
    ({"type": 5}, "/0/function/parameters/type"),
    (object_schema({"x": {"type": "strin"}}), "/0/function/parameters/properties/x/type"),
    (object_schema({"x": {"type": "string", "minLength": -1}}),
     "/0/function/parameters/properties/x/minLength"),
    (object_schema({"x": {"type": "array", "items": {"type": "string"}, "maxItems": "3"}}),
     "/0/function/parameters/properties/x/maxItems"),
    ({"type": "object", "required": "x"}, "/0/function/parameters/required"),
    (object_schema({"a/b": {"enum": 5}}), "/0/function/parameters/properties/a~1b/enum"),
])
def test_invalid_schema_per_meta_schema(params, pointer):
    e = _error(tools_list(("x", params)))
    assert e.pointer == pointer
    assert "invalid JSON Schema" in str(e)
    assert f"at {pointer}:" in str(e)
    assert "tools.json" in str(e) and "tool 'x'" in str(e)


def test_invalid_json_file_names_file_line_and_column(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('[\n  {"name": "a",\n   "parameters": {]\n  }\n]\n', encoding="utf-8")
    with pytest.raises(InvalidToolsError) as exc:
        load_tools_file(path)
    msg = str(exc.value)
    assert str(path) in msg
    assert "invalid JSON" in msg
    assert re.search(r"line 3 column 19\b", msg), msg


def test_file_not_utf8(tmp_path):
    path = tmp_path / "latin1.json"
    path.write_bytes('[{"name": "caf\u00e9"}]'.encode("latin-1"))
    with pytest.raises(InvalidToolsError, match="not UTF-8"):
        load_tools_file(path)


def test_missing_file(tmp_path):
    path = tmp_path / "nope.json"
    with pytest.raises(InvalidToolsError) as exc:
        load_tools_file(path)
    assert str(path) in str(exc.value)
    assert "cannot read" in str(exc.value)


def test_errors_are_value_errors():
    assert issubclass(InvalidToolsError, ValueError)


# -- the hash ---------------------------------------------------------------------------------

def test_tools_hash_is_stable():
    data = tools_list(("weather", CITY), ("time", object_schema({})))
    h = tools_hash(parse_tools(data))
    assert re.fullmatch(r"[0-9a-f]{64}", h)
    assert tools_hash(parse_tools(json.loads(json.dumps(data)))) == h


def test_tools_hash_is_order_sensitive():
    a = parse_tools(tools_list(("weather", CITY), ("time", object_schema({}))))
    b = parse_tools(tools_list(("time", object_schema({})), ("weather", CITY)))
    assert tools_hash(a) != tools_hash(b)


def test_tools_hash_sees_descriptions_and_schemas():
    base = tools_hash(parse_tools(tools_list(("weather", CITY))))
    other = tools_list(("weather", CITY))
    other[0]["function"]["description"] = "Changed."
    assert tools_hash(parse_tools(other)) != base
    assert tools_hash(parse_tools(tools_list(("weather", object_schema({}))))) != base


def test_tools_hash_sees_property_order():
    # properties are written in schema order, so their order changes what is compiled
    ab = object_schema({"a": {"type": "string"}, "b": {"type": "string"}})
    ba = object_schema({"b": {"type": "string"}, "a": {"type": "string"}}, required=["a", "b"])
    assert tools_hash(parse_tools(tools_list(("x", ab)))) != \
        tools_hash(parse_tools(tools_list(("x", ba))))


# -- every input shape (OpenAI chat and Responses, bare, MCP, Anthropic) ------------------------

ARGS = object_schema({"city": {"type": "string"}, "days": {"type": "integer"}}, required=["city"])


def _shapes() -> dict:
    """The same two tools in every accepted shape (with the keys each ecosystem adds)."""
    fns = [{"name": "weather", "description": "The weather.", "schema": ARGS},
           {"name": "ping", "description": "", "schema": object_schema({})}]
    chat = [{"type": "function", "function": {"name": f["name"], "description": f["description"],
                                              "parameters": f["schema"], "strict": True}}
            for f in fns]
    responses = [{"type": "function", "name": f["name"], "description": f["description"],
                  "parameters": f["schema"], "strict": True} for f in fns]
    bare = [{"name": f["name"], "description": f["description"], "parameters": f["schema"]}
            for f in fns]
    mcp = [{"name": f["name"], "title": f["name"].title(), "description": f["description"],
            "inputSchema": f["schema"], "outputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": True}, "_meta": {"x": 1}} for f in fns]
    anthropic = [{"name": f["name"], "description": f["description"],
                  "input_schema": f["schema"], "cache_control": {"type": "ephemeral"}}
                 for f in fns]
    return {"openai": chat, "responses": responses, "bare": bare, "mcp": mcp,
            "mcp-result": {"tools": mcp, "nextCursor": "abc"},
            "mcp-jsonrpc": {"jsonrpc": "2.0", "id": 1, "result": {"tools": mcp}},
            "anthropic": anthropic,
            "anthropic-custom": [dict(t, type="custom") for t in anthropic],
            "wrapped": {"tools": responses, "model": "any", "tool_choice": "auto"}}


@pytest.mark.parametrize("shape", sorted(_shapes()))
def test_every_shape_reads_as_the_openai_shape(shape):
    shapes = _shapes()
    want = parse_tools(shapes["openai"])
    got = parse_tools(shapes[shape])
    assert [t.to_json() for t in got] == [t.to_json() for t in want]
    assert tools_hash(got) == tools_hash(want)


def test_every_shape_compiles_to_the_same_artifact(qwen):
    import toolc
    blobs = {shape: toolc.compile_tools(data, qwen).to_bytes()
             for shape, data in _shapes().items()}
    assert len(set(blobs.values())) == 1, [k for k, v in blobs.items() if v != blobs["openai"]]


@pytest.mark.parametrize("shape, key, pointer", [
    ("mcp", "inputSchema", "/0/inputSchema/properties/days/type"),
    ("anthropic", "input_schema", "/0/input_schema/properties/days/type"),
    ("responses", "parameters", "/0/parameters/properties/days/type"),
])
def test_errors_point_into_the_schema_key_the_shape_uses(shape, key, pointer):
    data = _shapes()[shape]
    data[0][key] = object_schema({"days": {"type": "integr"}})
    e = _error(data)
    assert e.pointer == pointer
    assert "did you mean 'integer'?" in str(e)


@pytest.mark.parametrize("entry, key, hint", [
    ({"name": "a", "parameter": CITY}, "parameter", "parameters"),
    ({"name": "a", "inputschema": CITY}, "inputschema", "inputSchema"),
    ({"name": "a", "descripton": "x"}, "descripton", "description"),
    ({"type": "function", "function": {"name": "a"}, "parameters": CITY}, "parameters", None),
    ({"name": "a", "schema": CITY}, "schema", None),
])
def test_unknown_function_keys_are_errors_with_a_hint(entry, key, hint):
    # a schema under a key toolc does not read would compile into a tool without arguments
    e = _error([entry])
    assert f"unknown key {key!r}" in str(e)
    assert e.pointer.endswith("/" + key)
    assert (f"did you mean {hint!r}?" in str(e)) == (hint is not None)


def test_two_schema_keys_are_an_error():
    e = _error([{"name": "a", "parameters": CITY, "inputSchema": CITY}])
    assert e.pointer == "/0/inputSchema"
    assert "two argument schemas" in str(e)


@pytest.mark.parametrize("kind", ["web_search_20250305", "file_search", "computer_20241022"])
def test_server_side_tool_types_are_refused(kind):
    e = _error([{"type": kind, "name": "x"}])
    assert e.pointer == "/0/type" and repr(kind) in str(e)


@pytest.mark.parametrize("bad, pointer", [
    ({"const": float("nan")}, "/properties/x/const"),
    ({"enum": [1, float("inf")]}, "/properties/x/enum/1"),
    ({"type": "number", "maximum": float("-inf")}, "/properties/x/maximum"),
])
def test_non_finite_numbers_are_refused_with_the_pointer(bad, pointer):
    e = _error([{"name": "a", "inputSchema": object_schema({"x": bad})}])
    assert e.pointer == "/0/inputSchema" + pointer
    assert "not finite" in str(e)


def test_an_out_of_range_number_in_a_file_is_refused(tmp_path):
    path = tmp_path / "t.json"
    path.write_text('[{"name": "a", "parameters": {"type": "object", "properties": '
                    '{"x": {"const": 1e400}}}}]', encoding="utf-8")
    with pytest.raises(InvalidToolsError) as exc:
        load_tools_file(path)
    assert exc.value.pointer == "/0/parameters/properties/x/const"


def test_cli_compiles_an_mcp_result_and_names_a_misspelt_key(tmp_path):
    from click.testing import CliRunner

    from toolc.cli import main
    good, bad = tmp_path / "mcp.json", tmp_path / "typo.json"
    good.write_text(json.dumps(_shapes()["mcp-result"]), encoding="utf-8")
    bad.write_text(json.dumps([{"name": "a", "input_schema_": CITY}]), encoding="utf-8")
    runner = CliRunner()
    res = runner.invoke(main, ["compile", str(good), "-o", str(tmp_path / "a.toolc"), "-q"])
    assert res.exit_code == 0, res.stderr
    res = runner.invoke(main, ["compile", str(bad), "-o", str(tmp_path / "b.toolc"), "-q"])
    assert res.exit_code == 1
    assert res.stderr.count("\n") == 1 and "Traceback" not in res.stderr
    assert "unknown key 'input_schema_'" in res.stderr and "input_schema" in res.stderr


@pytest.mark.parametrize("value", [0, -2, 1e-400])
def test_multiple_of_zero_or_negative_is_invalid(value):
    e = _error(tools_list(("x", object_schema({"n": {"type": "integer", "multipleOf": value}}))))
    assert e.pointer == "/0/function/parameters/properties/n/multipleOf"
    assert "invalid JSON Schema" in str(e)


def test_one_list_may_mix_shapes():
    shapes = _shapes()
    mixed = [shapes["openai"][0], shapes["mcp"][1]]
    assert [t.to_json() for t in parse_tools(mixed)] == \
        [t.to_json() for t in parse_tools(shapes["openai"])]
