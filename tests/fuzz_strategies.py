"""Hypothesis strategies for hostile tools files, shared by the fuzz tests and ``make fuzz``.

``KEYWORDS`` maps each JSON Schema keyword to a strategy of well-typed values; the schema
strategy mixes those with values of the wrong type, so adding a keyword the compiler learns is
one line here. ``NASTY_NAMES`` and ``NASTY_KEYS`` hold the names that broke parsers before:
quotes, backslashes, JSON syntax, newlines, control and non-ASCII characters, huge and empty.
"""

from __future__ import annotations

import os

from hypothesis import strategies as st

# how many cases: a CI-sized run by default; `make fuzz` sets TOOLC_FUZZ_EXAMPLES=10000
EXAMPLES = int(os.environ.get("TOOLC_FUZZ_EXAMPLES", "0")) or None

NASTY_NAMES = ["", "a", "get_weather", "get_weather ", "Get_Weather", "get-weather", 'a"b',
               "a\\b", "a\nb", "a\tb", "}", "{", '"', "\\", "\x00", "\x7f", "ü名前", "😀",
               "a" * 10_000, "<tool_call>", "</tool_call>", "<|im_end|>", " ", "a b", "\u2028"]
NASTY_KEYS = ['"', "\\", "}", "{", ":", ",", '", "', '": "', "", " ", "\n", "\x00", "ü", "名",
              "a" * 300, "~", "/", "~1", "$ref", "properties", "<tool_call>"]
# lone surrogates: valid JSON escapes, not Unicode text (issue 17: they crashed the hashing)
LONE_SURROGATES = ["\ud800", "a\udfff"]
NASTY_NAMES += LONE_SURROGATES
NASTY_KEYS += ["a b", "a%20b"]
# regexes that once escaped as a RecursionError or an interegular exception (issue 17)
PATHOLOGICAL_PATTERNS = ["(" * 200 + "a" + ")" * 200, "a{1001,1000}", "\ud800",
                         "(?:" * 60 + ")" * 60]

json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70),
                         st.floats(allow_nan=False, allow_infinity=False),
                         st.text(max_size=12))
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=12)
keys = st.one_of(st.sampled_from(NASTY_KEYS), st.text(max_size=10),
                 st.sampled_from(LONE_SURROGATES))
types = st.sampled_from(["object", "array", "string", "integer", "number", "boolean", "null"])


def _schemas(inner):
    return {
        "type": st.one_of(types, st.lists(types, min_size=1, max_size=3, unique=True)),
        "properties": st.dictionaries(keys, inner, max_size=4),
        "required": st.lists(keys, max_size=3),
        "additionalProperties": st.one_of(st.booleans(), inner),
        "items": inner,
        "minItems": st.integers(0, 5),
        "maxItems": st.one_of(st.integers(0, 6), st.sampled_from([1000, 100_000])),
        "enum": st.lists(json_values, min_size=1, max_size=5),
        "const": json_values,
        "anyOf": st.lists(inner, min_size=1, max_size=3),
        "oneOf": st.lists(inner, min_size=1, max_size=3),
        "allOf": st.lists(inner, min_size=1, max_size=2),
        "not": inner,
        "$ref": st.sampled_from(["#", "#/$defs/a", "#/$defs/missing", "#/properties/x",
                                 "http://example.com/s.json", "#/$defs/a/properties/a",
                                 "#/$defs/a%20b", "#/$defs/%61"]),
        "$defs": st.dictionaries(st.sampled_from(["a", "b", "a b"]), inner, max_size=2),
        "pattern": st.sampled_from(["^a+$", "[", "(a|b)*", "\\d{1,3}", ".*",
                                    *PATHOLOGICAL_PATTERNS]),
        "format": st.sampled_from(["date", "email", "uuid", "nonsense"]),
        "minLength": st.integers(0, 5),
        "maxLength": st.one_of(st.integers(0, 8), st.sampled_from([100_000])),
        "minimum": st.integers(-10, 10),
        "maximum": st.integers(-10, 10),
        "multipleOf": st.sampled_from([1, 2, 0.5]),
        "uniqueItems": st.booleans(),
        "description": st.text(max_size=20),
        "default": json_values,
    }


KEYWORDS = list(_schemas(st.nothing()))


@st.composite
def _schema_node(draw, inner):
    """A schema-shaped object: known keywords, right-typed or (sometimes) wrong-typed."""
    goods = _schemas(inner)
    chosen = draw(st.lists(st.sampled_from(KEYWORDS), max_size=4, unique=True))
    out = {}
    for k in chosen:
        wrong = draw(st.integers(0, 9)) == 0
        out[k] = draw(json_values if wrong else goods[k])
    if draw(st.integers(0, 19)) == 0:
        out[draw(st.text(min_size=1, max_size=6))] = draw(json_values)
    return out


schemas = st.recursive(st.one_of(st.builds(dict), st.booleans(), types.map(lambda t: {"type": t})),
                       lambda inner: _schema_node(inner), max_leaves=8)
object_schemas = st.one_of(
    st.builds(lambda props, req, extra: {"type": "object", "properties": props,
                                         "required": req, **extra},
              st.dictionaries(keys, schemas, max_size=4), st.lists(keys, max_size=3),
              st.dictionaries(st.sampled_from(KEYWORDS), json_values, max_size=1)),
    schemas)
names = st.one_of(st.sampled_from(NASTY_NAMES), st.text(max_size=20),
                  st.from_regex(r"[a-z_][a-z0-9_]{0,15}", fullmatch=True))


@st.composite
def tools_values(draw):
    """Anything a tools file might hold: mostly tools lists, sometimes any JSON at all."""
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return draw(json_values)
    fns = []
    for _ in range(draw(st.integers(1, 4))):
        fn = {"name": draw(names)}
        if draw(st.booleans()):
            fn["description"] = draw(st.one_of(st.text(max_size=10), json_scalars))
        if draw(st.integers(0, 5)):
            fn["parameters"] = draw(object_schemas)
        fns.append(fn)
    if len(fns) > 1 and draw(st.integers(0, 4)) == 0:
        fns[-1]["name"] = fns[0]["name"]          # a duplicate name
    shape = draw(st.integers(0, 3))
    if shape == 0:
        return fns
    wrapped = [{"type": draw(st.sampled_from(["function"] * 5 + ["tool", 1])), "function": f}
               for f in fns]
    return {"tools": wrapped} if shape == 1 else wrapped


# fixed adversarial cases every run includes
SELF_REFERENCE = {"type": "object", "properties": {"node": {"$ref": "#/$defs/n"}},
                  "$defs": {"n": {"type": "object",
                                  "properties": {"child": {"$ref": "#/$defs/n"}}}}}
ROOT_REFERENCE = {"type": "object", "properties": {"again": {"$ref": "#"}}}
MUTUAL_REFERENCE = {"type": "object", "properties": {"a": {"$ref": "#/$defs/a"}},
                    "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}}


def nested(levels: int, key: str = "c") -> dict:
    d: dict = {"type": "string"}
    for _ in range(levels):
        d = {"type": "object", "properties": {key: d}, "required": [key]}
    return d


def any_of_tower(levels: int) -> dict:
    d: dict = {"type": "string"}
    for i in range(levels):
        d = {"anyOf": [{"type": "object", "properties": {f"k{i}": d}, "required": [f"k{i}"]},
                       {"type": "integer"}]}
    return {"type": "object", "properties": {"x": d}, "required": ["x"]}
