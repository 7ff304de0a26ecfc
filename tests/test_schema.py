"""toolc/schema/: JSON Schema to Expr, checked through small compiled DFAs.

Each schema is compiled alone, followed by an EOS symbol, so a byte string is accepted iff it
leads from the start state to a final state after EOS.
"""

from __future__ import annotations

import json

import pytest

import toolc
from conftest import object_schema, tools_list
from toolc.errors import InvalidToolsError, UnsupportedSchemaError
from toolc.fsm import Sym, compile_expr, seq
from toolc.schema import SchemaCompiler, SchemaOptions
from toolc.schema import json_grammar as jg
from toolc.schema.arrays import expanded_items



class Lang:
    """The language of one schema, as a small DFA."""

    def __init__(self, schema, max_depth: int = 4):
        with expanded_items():          # an automaton alone: item counts as states
            expr = SchemaCompiler(SchemaOptions(max_depth=max_depth)).compile(schema)
        self.dfa = compile_expr(seq(expr, Sym("EOS")))

    def __contains__(self, text) -> bool:
        data = text.encode("utf-8") if isinstance(text, str) else text
        q = self.dfa.step_bytes(0, data)
        q = self.dfa.step_symbol(q, "EOS")
        return q >= 0 and bool(self.dfa.final[q])


def dumps(value) -> str:
    return json.dumps(value, ensure_ascii=False)


def unsupported(schema) -> UnsupportedSchemaError:
    with pytest.raises(UnsupportedSchemaError) as exc:
        SchemaCompiler().compile(schema)
    return exc.value


# -- objects ----------------------------------------------------------------------------------

ABC = {"type": "object",
       "properties": {"a": {"type": "integer"}, "b": {"type": "string"}, "c": {"type": "boolean"}},
       "required": ["b"]}


@pytest.mark.parametrize("required", [[], ["a"], ["b"], ["c"], ["a", "b"], ["a", "c"],
                                      ["b", "c"], ["a", "b", "c"]])
def test_object_members_in_every_combination(required):
    schema = dict(ABC, required=required)
    lang = Lang(schema)
    values = {"a": 1, "b": "x", "c": True}
    for mask in range(8):
        present = [k for i, k in enumerate("abc") if mask >> i & 1]
        text = dumps({k: values[k] for k in present})
        assert (text in lang) == (set(required) <= set(present)), text


def test_object_members_only_in_schema_order():
    lang = Lang(ABC)
    assert '{"a": 1, "b": "x", "c": true}' in lang
    assert '{"b": "x", "a": 1}' not in lang
    assert '{"c": true, "b": "x"}' not in lang
    assert '{"a": 1, "a": 2, "b": "x"}' not in lang


def test_object_rejects_unknown_keys_and_other_spacing():
    lang = Lang(ABC)
    assert '{"b": "x"}' in lang
    assert '{"b": "x", "d": 1}' not in lang
    assert '{"d": 1, "b": "x"}' not in lang
    assert '{"b":"x"}' not in lang              # json.dumps separators only
    assert '{ "b": "x" }' not in lang
    assert '{"b": "x",}' not in lang
    assert '{"b": 1}' not in lang               # and the value follows the property schema


def test_object_with_no_properties():
    lang = Lang(object_schema({}))      # properties: {} is any object, as JSON Schema says
    assert "{}" in lang
    assert '{"a": 1}' in lang
    assert '{"a": 1}' not in Lang({"type": "object", "additionalProperties": False})


def test_property_names_are_rendered_by_json_dumps():
    lang = Lang(object_schema({'sa"y': {"type": "null"}, "café": {"type": "null"}}))
    assert dumps({'sa"y': None, "café": None}) in lang   # {"sa\"y": null, "café": null}
    assert '{"sa\\"y": null, "caf\\u00e9": null}' not in lang


def test_nested_objects():
    point = object_schema({"lat": {"type": "number"}, "lon": {"type": "number"}})
    lang = Lang(object_schema({"name": {"type": "string"}, "at": point}, required=["at"]))
    assert '{"at": {"lat": 1.5, "lon": -2}}' in lang
    assert '{"name": "x", "at": {"lat": 0, "lon": 0}}' in lang
    assert '{"at": {"lat": 1.5}}' not in lang
    assert '{"at": {"lon": 1, "lat": 2}}' not in lang
    assert '{"name": "x"}' not in lang


# -- enum and const ---------------------------------------------------------------------------

MIXED = ["a", 1, -2.5, None, True, False, {"k": [1, "é"], "z": {}}, [1, 2], "日本", 'q"x']


def test_enum_of_mixed_values_rendered_by_json_dumps():
    lang = Lang({"enum": MIXED})
    for v in MIXED:
        assert dumps(v) in lang, v
    for text in ['{"k":[1,"é"],"z":{}}', '{"k": [1, "\\u00e9"], "z": {}}', "[1,2]",
                 '"\\u65e5\\u672c"', '"b"', "2", "1.0", "-2.50", "0", '{"z": {}, "k": [1, "é"]}']:
        assert text not in lang, text


def test_const():
    lang = Lang({"const": {"unit": "celsius"}})
    assert '{"unit": "celsius"}' in lang
    assert '{"unit": "kelvin"}' not in lang
    assert '{"unit":"celsius"}' not in lang


@pytest.mark.parametrize("schema, yes, no", [
    ({"type": "string", "enum": ["a", 1]}, ['"a"'], ["1"]),
    ({"enum": ["ab", "abc"], "maxLength": 2}, ['"ab"'], ['"abc"']),
    ({"type": "integer", "enum": [1, 2.5, "3"], "minimum": 0}, ["1"], ["2.5", '"3"']),
    ({"enum": ["x", "y", "z"], "const": "y"}, ['"y"'], ['"x"', '"z"']),
    ({"enum": ["a1", "b2", "c"], "pattern": "^[a-z][0-9]$"}, ['"a1"', '"b2"'], ['"c"']),
    ({"enum": [{"a": 1}, {"b": 1}], "required": ["a"]}, ['{"a": 1}'], ['{"b": 1}']),
    ({"enum": ["2024-01-31", "soon"], "format": "date"}, ['"2024-01-31"'], ['"soon"']),
])
def test_enum_filtered_by_sibling_keywords(schema, yes, no):
    lang = Lang(schema)
    for text in yes:
        assert text in lang, text
    for text in no:
        assert text not in lang, text


@pytest.mark.parametrize("schema, key", [({"type": "integer", "enum": ["a", "b"]}, "enum"),
                                         ({"enum": ["abc"], "maxLength": 2}, "enum"),
                                         ({"const": 1, "type": "string"}, "const"),
                                         ({"enum": []}, "enum")])
def test_enum_with_no_valid_value_is_unsupported(schema, key):
    e = unsupported(object_schema({"x": schema}))
    assert e.pointer == f"/properties/x/{key}"
    assert f"/properties/x/{key}" in str(e)


# -- alternatives and types -------------------------------------------------------------------

def test_any_of():
    lang = Lang({"anyOf": [{"type": "integer"}, {"type": "null"},
                           object_schema({"a": {"type": "string"}})]})
    for text in ["3", "null", '{"a": "x"}']:
        assert text in lang
    for text in ['"3"', "true", "{}", "1.5"]:
        assert text not in lang


def test_type_list():
    lang = Lang({"type": ["integer", "string"]})
    assert "12" in lang and '"12"' in lang
    assert "null" not in lang and "1.5" not in lang


def test_boolean_and_null():
    assert "true" in Lang({"type": "boolean"}) and "false" in Lang({"type": "boolean"})
    assert "null" not in Lang({"type": "boolean"})
    assert "null" in Lang({"type": "null"}) and "None" not in Lang({"type": "null"})


# -- arrays -----------------------------------------------------------------------------------

@pytest.mark.parametrize("lo, hi", [(0, None), (1, None), (2, 3), (0, 2), (3, 3), (0, 0),
                                    (2, None)])
def test_array_counts(lo, hi):
    schema = {"type": "array", "items": {"type": "integer"}, "minItems": lo}
    if hi is not None:
        schema["maxItems"] = hi
    lang = Lang(schema)
    for n in range(6):
        text = dumps(list(range(n)))
        assert (text in lang) == (lo <= n and (hi is None or n <= hi)), text


def test_array_items_follow_their_schema_and_separators():
    lang = Lang({"type": "array", "items": {"type": "string"}})
    assert '["a", "b"]' in lang
    assert '["a","b"]' not in lang
    assert '["a", 1]' not in lang
    assert "[,]" not in lang


def test_array_max_below_min_admits_no_value():
    e = unsupported(object_schema({"x": {"type": "array", "minItems": 3, "maxItems": 1}}))
    assert e.pointer == "/properties/x"


# -- free-form values to the depth bound ------------------------------------------------------

def nest(depth: int) -> str:
    return "[" * depth + "1" + "]" * depth


@pytest.mark.parametrize("schema", [{}, True, {"description": "anything"}])
def test_any_value_to_the_depth_bound(schema):
    lang = Lang(schema, max_depth=2)
    for text in ["1", '"a"', "null", "true", "-0.5e3", "[]", "{}", nest(1), nest(2),
                 '{"a": {"b": 1}}', '{"a": [1, "x"], "b": null}']:
        assert text in lang, text
    for text in [nest(3), '{"a": {"b": {"c": 1}}}', '[{"a": [1]}]', '{"a":1}', "[1,2]"]:
        assert text not in lang, text


@pytest.mark.parametrize("schema", [{"type": "object"},
                                    {"type": "object", "additionalProperties": True},
                                    {"type": "object", "additionalProperties": {}},
                                    {"type": "object", "properties": {},
                                     "additionalProperties": True}])
def test_bare_object_is_any_object_to_the_depth_bound(schema):
    lang = Lang(schema, max_depth=2)
    for text in ["{}", '{"a": 1}', '{"a": {"b": 1}}',
                 '{"x": [1, 2], "y": "z"}']:
        assert text in lang, text
    for text in ["1", "[]", '{"a": {"b": {"c": 1}}}', '{"a": [[1]]}']:
        assert text not in lang, text


def test_bare_array_is_any_array_to_the_depth_bound():
    lang = Lang({"type": "array"}, max_depth=2)
    assert "[]" in lang and nest(2) in lang and '[{"a": 1}, "b"]' in lang
    assert nest(3) not in lang and "{}" not in lang


def test_depth_bound_zero_allows_only_scalars_in_free_values():
    lang = Lang({}, max_depth=0)
    assert "1" in lang and '"s"' in lang
    assert "[]" not in lang and "{}" not in lang and "[1]" not in lang
    with pytest.raises(UnsupportedSchemaError, match="max_depth"):
        SchemaCompiler(SchemaOptions(max_depth=0)).compile({"type": "object"})


@pytest.mark.parametrize("depth", [0, 1, 2, 3])
def test_true_and_empty_schema_are_the_same_language(depth):
    # {} and true are the same JSON Schema; the depth bound must treat them alike
    a, b = Lang(True, max_depth=depth).dfa, Lang({}, max_depth=depth).dfa
    assert a.num_states == b.num_states
    assert (a.trans == b.trans).all() and (a.final == b.final).all()
    assert (a.alphabet.byte_class == b.alphabet.byte_class).all()


# -- strings ----------------------------------------------------------------------------------

STRING_OK = [b'""', b'"abc"', b'"a b"', b'"\\n\\t\\r\\b\\f\\/\\\\\\""', b'"\\u00e9\\uD83D\\ude00"',
             '"héllo 日本 😀"'.encode(), b'"\x7f"', b'"\xf4\x8f\xbf\xbf"', b'"\xed\x9f\xbf"']
STRING_BAD = [
    b'"', b'"abc', b'abc', b"'a'",
    b'"\\x"', b'"\\u12"', b'"\\u00G9"', b'"\\U00e9"', b'"\\"',     # bad escapes
    b'"\n"', b'"\t"', b'"\x00"', b'"\x1f"',                        # raw control characters
    b'"\x80"', b'"a\xbfb"',                                        # lone continuation bytes
    b'"\xc3"', b'"\xe6\x97"',                                      # truncated characters
    b'"\xff"', b'"\xc0\xaf"', b'"\xe0\x80\xaf"',                   # invalid and overlong
    b'"\xed\xa0\x80"', b'"\xf4\x90\x80\x80"',                      # surrogate, past U+10FFFF
]


@pytest.mark.parametrize("text", STRING_OK)
def test_strings_accepted(text):
    assert text in Lang({"type": "string"})


@pytest.mark.parametrize("text", STRING_BAD)
def test_strings_rejected(text):
    assert text not in Lang({"type": "string"})


def test_every_json_dumps_string_of_every_bmp_char_class_is_accepted():
    lang = Lang({"type": "string"})
    sample = "".join(chr(c) for c in list(range(0, 0x300)) + [0x7FF, 0x800, 0xFFFD, 0x10000,
                                                               0x10FFFF])
    assert dumps(sample).encode() in lang
    assert json.dumps(sample).encode() in lang        # ASCII-escaped form is JSON too


# -- numbers ----------------------------------------------------------------------------------

@pytest.mark.parametrize("text, integer, number", [
    ("0", True, True), ("-0", True, True), ("7", True, True), ("-12", True, True),
    ("1234567890", True, True),
    ("01", False, False), ("-01", False, False), ("00", False, False), ("+1", False, False),
    ("1.0", False, True), ("-0.5", False, True), ("1e5", False, True),
    ("1E+5", False, True), ("2.5e-3", False, True), ("1e05", False, True),
    ("1.", False, False), (".5", False, False), ("1.5e", False, False), ("-", False, False),
    ("", False, False), ("1 ", False, False), ("NaN", False, False), ("Infinity", False, False),
])
def test_integer_and_number_grammar(text, integer, number):
    assert (text in Lang({"type": "integer"})) == integer
    assert (text in Lang({"type": "number"})) == number


def test_render_is_json_dumps_with_raw_non_ascii():
    assert jg.render({"a": [1, "é"], "b": None}) == '{"a": [1, "é"], "b": null}'.encode()


# -- unsupported keywords ---------------------------------------------------------------------

@pytest.mark.parametrize("sub, key", [
    ({"type": "string", "pattern": "(?<=a)b"}, "pattern"),
    ({"type": "string", "format": "color"}, "format"),
    ({"type": "number", "multipleOf": 0.00012347}, "multipleOf"),
    ({"$ref": "http://example.com/a"}, "$ref"),
    ({"$ref": "#/$defs/missing"}, "$ref"),
    ({"not": {"type": "string", "format": "email"}}, "not"),
    ({"type": "array", "uniqueItems": True}, "uniqueItems"),
    # (five anyOf branches that evaluate: 31 cases, over the budget of 4 branches)
    ({"type": "object", "anyOf": [{"properties": {c: {}}} for c in "abcde"],
      "unevaluatedProperties": False}, "unevaluatedProperties"),
    ({"type": "array", "anyOf": [{"prefixItems": [{}] * n} for n in range(1, 6)],
      "unevaluatedItems": False}, "unevaluatedItems"),
    ({"type": "array", "items": [{"type": "string"}]}, "items"),
    ({"type": "object", "properties": {}, "required": ["q"], "additionalProperties": False},
     "required"),
    ({"type": "decimal"}, "type"),
    ({"type": "string", "x-order": 1}, "x-order"),
])
def test_unsupported_keywords_name_their_pointer(sub, key):
    e = unsupported(object_schema({"x": sub}))
    assert e.pointer == f"/properties/x/{key}"
    assert f"at /properties/x/{key}" in str(e)


def test_unsupported_pointer_escapes_property_names():
    e = unsupported(object_schema({"a/b~c": {"type": "string", "$dynamicRef": "#a"}}))
    assert e.pointer == "/properties/a~1b~0c/$dynamicRef"


def test_unsupported_deep_inside_arrays_and_any_of():
    schema = object_schema({"xs": {"type": "array", "items": {
        "anyOf": [{"type": "null"},
                  object_schema({"y": {"type": "string", "$dynamicRef": "#a"}})]}}})
    e = unsupported(schema)
    assert e.pointer == "/properties/xs/items/anyOf/1/properties/y/$dynamicRef"


def test_annotations_are_ignored():
    lang = Lang({"type": "string", "description": "d", "title": "t", "examples": ["x"],
                 "default": "x", "$comment": "c", "deprecated": True})
    assert '"x"' in lang


def test_a_schema_that_admits_nothing_is_unsupported():
    e = unsupported(False)
    assert "no value" in str(e)
    with pytest.raises(UnsupportedSchemaError):
        SchemaCompiler().compile(object_schema({"x": False}))


# -- through compile_tools: file, tool and full pointer ---------------------------------------

def test_compile_tools_error_names_file_tool_and_full_pointer(tmp_path):
    path = tmp_path / "tools.json"
    data = tools_list(("ok", object_schema({})),
                      ("lookup", object_schema({"x": {"type": "string", "$dynamicRef": "#a"}})))
    path.write_text(json.dumps(data))
    with pytest.raises(UnsupportedSchemaError) as exc:
        toolc.compile_tools(str(path))
    e = exc.value
    assert e.file == str(path) and e.tool == "lookup"
    assert e.pointer == "/1/function/parameters/properties/x/$dynamicRef"
    msg = str(e)
    assert str(path) in msg
    assert "'lookup'" in msg
    assert "/1/function/parameters/properties/x/$dynamicRef" in msg


@pytest.mark.parametrize("shape, prefix", [("openai", "/0/function"), ("bare", "/0"),
                                           ("wrapped", "/tools/0/function")])
def test_compile_tools_pointer_follows_the_input_shape(shape, prefix):
    data = tools_list(("t", object_schema({"x": {"type": "integer", "$dynamicRef": "#a"}})),
                      shape=shape)
    with pytest.raises(UnsupportedSchemaError) as exc:
        toolc.compile_tools(data)
    assert exc.value.pointer == f"{prefix}/parameters/properties/x/$dynamicRef"
    assert exc.value.tool == "t"


def test_compile_tools_invalid_schema_is_an_invalid_tools_error(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(tools_list(("t", {"type": 5}))))
    with pytest.raises(InvalidToolsError) as exc:
        toolc.compile_tools(str(path))
    assert str(path) in str(exc.value)
    assert "/0/function/parameters/type" in str(exc.value)


def test_standardized_maps_type_names_in_a_copy_that_shares_nothing():
    from toolc.schema.refs import standardized
    original = {"type": "object", "properties": {
        "a": {"type": "int", "nullable": True, "enum": [1, 2]},
        "b": {"type": "array", "items": {"type": ["str", "null"]}},
        "c": {"anyOf": [{"type": "dict"}, {"const": [1, {"x": 1}]}]}}}
    before = json.dumps(original)
    out = standardized(original)
    assert out["properties"]["a"] == {"type": ["integer", "null"], "enum": [1, 2, None]}
    assert out["properties"]["b"]["items"]["type"] == ["string", "null"]
    assert out["properties"]["c"]["anyOf"][0] == {"type": "object"}
    assert json.dumps(original) == before

    def containers(x):
        if isinstance(x, dict):
            yield x
            for v in x.values():
                yield from containers(v)
        elif isinstance(x, list):
            yield x
            for v in x:
                yield from containers(v)

    assert not {id(c) for c in containers(out)} & {id(c) for c in containers(original)}
