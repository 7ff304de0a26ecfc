"""JSON Schema to the Expr of Python literals, for the formats that write calls as Python
(``pythonic``, ``tooldec``): ``'text'`` or ``"text"``, ``True``/``False``/``None``, ``[a, b]``,
``{'key': value}``, numbers as JSON writes them (which Python reads the same way).

The schema is first compiled by :class:`toolc.schema.SchemaCompiler`, so every keyword is
enforced or refused exactly as for JSON; this module then writes the same language in Python
syntax, over the keywords that compiler accepts.
"""

from __future__ import annotations

import json

from ..fsm import NOTHING, Bytes, Subseq, alt, byte_range, byte_set, lit, opt, seq, star, Repeat
from ..schema import SchemaCompiler, SchemaOptions
from ..schema import json_grammar as jg
from ..schema.json_grammar import _utf8_multibyte

SEP, KEY_SEP = lit(", "), lit(": ")
_HEX = Bytes(byte_set(b"0123456789abcdefABCDEF"))
_ESCAPE = seq(lit("\\"), alt(Bytes(byte_set("\\'\"abfnrtv")), seq(lit("x"), _HEX, _HEX),
                             seq(lit("u"), *([_HEX] * 4)),
                             seq(lit("U00"), alt(seq(lit("0"), _HEX), lit("10")), *([_HEX] * 4))))


def _quoted(q: str):
    plain = Bytes(byte_range(0x20, 0x7E) & ~byte_set(q + "\\"))
    return seq(lit(q), star(alt(plain, _utf8_multibyte(), _ESCAPE)), lit(q))


STRING = alt(_quoted("'"), _quoted('"'))
BOOLEAN = alt(lit("True"), lit("False"))
NONE = lit("None")


def render(value) -> str:
    """A JSON value as Python writes it (``repr``), the way the pythonic format renders it."""
    return repr(value)


def _literal(value):
    """An enum or const value: as ``repr`` writes it and, for a string, also double-quoted
    (the form Llama 3's and Llama 4's own renderers write, as free strings may be)."""
    forms = [render(value)]
    if isinstance(value, str):
        forms.append(json.dumps(value, ensure_ascii=False))   # a valid Python literal too
    return alt(*(lit(f) for f in dict.fromkeys(forms)))


def _list(item, lo=0, hi=None):
    if hi == 0:
        return lit("[]")
    body = seq(item, Repeat(seq(SEP, item), max(lo, 1) - 1, None if hi is None else hi - 1))
    return seq(lit("["), opt(body) if lo == 0 else body, lit("]"))


def _dict(value):
    member = seq(STRING, KEY_SEP, value)
    return seq(lit("{"), opt(seq(member, star(seq(SEP, member)))), lit("}"))


def any_value(depth: int):
    scalar = alt(STRING, jg.NUMBER, BOOLEAN, NONE)
    if depth <= 0:
        return scalar
    inner = any_value(depth - 1)
    return alt(scalar, _list(inner), _dict(inner))


class PythonValues:
    """Compile one schema to Python-literal syntax; refusals come from the JSON compiler."""

    def __init__(self, max_depth: int = 4):
        self.max_depth = max_depth

    def compile(self, schema, pointer: str = ""):
        SchemaCompiler(SchemaOptions(max_depth=self.max_depth)).compile(schema, pointer)
        return self._schema(schema)

    def _schema(self, s):
        if s is True:
            return any_value(self.max_depth)
        if s is False:
            return NOTHING
        if "enum" in s or "const" in s:
            values = [s["const"]] if "const" in s else s["enum"]
            rest = {k: v for k, v in s.items() if k not in ("enum", "const")}
            if "const" in s and "enum" in s:
                rest["enum"] = s["enum"]
            import jsonschema
            check = jsonschema.Draft202012Validator(
                rest, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
            return alt(*(_literal(v) for v in values if check.is_valid(v)))
        if "anyOf" in s:
            return alt(*(self._schema(b) for b in s["anyOf"]))
        t = s.get("type")
        if t is None:
            t = "object" if ("properties" in s or "required" in s) else \
                "array" if "items" in s else ["object", "array", "string", "integer", "number",
                                               "boolean", "null"]
        types = [t] if isinstance(t, str) else list(t)
        return alt(*(self._typed(x, s) for x in types))

    def _typed(self, t, s):
        if t == "object":
            return self._object(s)
        if t == "array":
            return self._array(s)
        return {"string": STRING, "integer": jg.INTEGER, "number": jg.NUMBER,
                "boolean": BOOLEAN, "null": NONE}[t]

    def _object(self, s):
        props = s.get("properties") or {}
        required = set(s.get("required", []))
        if not props and not required:
            return NOTHING if self.max_depth <= 0 else _dict(any_value(self.max_depth - 1))
        items = [seq(lit(render(k)), KEY_SEP, self._schema(v)) for k, v in props.items()]
        return seq(lit("{"), Subseq(tuple(items), tuple(k in required for k in props), SEP),
                   lit("}"))

    def _array(self, s):
        items = s.get("items", True)
        lo, hi = int(s.get("minItems", 0)), s.get("maxItems")
        hi = None if hi is None else int(hi)
        if items is True or items == {}:
            item = NOTHING if self.max_depth <= 0 else any_value(self.max_depth - 1)
        else:
            item = self._schema(items)
        if item == NOTHING:
            return lit("[]") if lo == 0 else NOTHING
        return _list(item, lo, hi)


def keyword_args(tool, options, positional: bool = False):
    """The argument list of a call: ``key=value, ...`` in schema order (optional ones may be
    left out), or with ``positional`` the values alone, in schema order, where only trailing
    optional arguments may be left out."""
    from ..errors import UnsupportedSchemaError
    schema = tool.parameters
    props = schema.get("properties") or {}
    required = set(schema.get("required", []))
    if not props and schema.get("additionalProperties", True) is not False:
        raise UnsupportedSchemaError(
            "free-form arguments (no 'properties') cannot be written as Python arguments",
            tool=tool.name, pointer=tool.schema_pointer, fix="declare the properties")
    pv = PythonValues(options.max_depth)
    values = []
    for k, v in props.items():
        ptr = f"{tool.schema_pointer}/properties/{k}"
        try:
            values.append(pv.compile(v))
        except UnsupportedSchemaError as e:
            raise e.located(tool=tool.name, pointer_prefix=ptr) from None
    if not values:
        return lit("")
    if not positional:
        items = [seq(lit(f"{k}="), v) for k, v in zip(props, values)]
        return Subseq(tuple(items), tuple(k in required for k in props), SEP)
    # positional: a prefix of the arguments that contains every required one
    last_required = max((i for i, k in enumerate(props) if k in required), default=-1)
    options_ = []
    for n in range(last_required + 1, len(values) + 1):
        options_.append(seq(*[x for i, v in enumerate(values[:n])
                              for x in ((SEP, v) if i else (v,))]) if n else lit(""))
    return alt(*options_)
