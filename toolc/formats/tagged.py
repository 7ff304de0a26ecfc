"""One argument engine for the formats that write one tag per parameter (Qwen3-Coder, MiMo,
Seed-OSS, GLM-4.5 and 4.7, MiniMax-M2, DeepSeek's DSML): the bytes of each come from its
:class:`~toolc.formats.tagstyle.TagStyle`.

Parameters come in schema order, required ones always, optional ones when given. A value whose
schema admits only strings is written raw: well-formed UTF-8 that spells none of the format's
tags (:meth:`TagStyle.closers`), with ``minLength``/``maxLength`` counted in characters and
``enum``/``const`` kept exactly; a raw string under ``pattern`` or ``format`` is refused (the
raw writing of those is not built yet). Every other value is JSON, compiled by
:class:`~toolc.schema.SchemaCompiler` (so every keyword is enforced or refused there, and
``$ref`` reaches the parameters' ``$defs``), and it too spells none of the tags: a JSON string
holding ``</parameter>`` would end the value early for any parser.

A property whose schema mixes strings with other types is written as JSON (a departure: a
template would write a string raw there, and a parser cannot tell ``null`` from "null").
Names and keys holding ``<``, ``>``, ``"`` or a control character are refused: each format
writes them unescaped inside a tag.
"""

from __future__ import annotations

from ..errors import UnsupportedSchemaError
from ..fsm import (EMPTY, NOTHING, Alt, Avoid, Bytes, Repeat, Seq, Subseq, Sym, alt,
                   alt_factored, byte_range, lit, seq)
from ..pointer import esc
from ..schema import SchemaCompiler, SchemaOptions
from ..schema.automata import intersect
from ..schema.json_grammar import _utf8_multibyte
from .base import CallFormat, numbered, repeat, text
from .closure import Closer
from .rules import string_only
from .tagstyle import FORBIDDEN_IN_NAMES, STYLES, TagStyle

#: keywords a raw string value enforces exactly (annotations aside)
_RAW_KEYWORDS = frozenset({"type", "enum", "const", "minLength", "maxLength", "description",
                           "title", "default", "examples", "deprecated", "readOnly",
                           "writeOnly", "$comment"})
_CHAR = alt(Bytes(byte_range(0x00, 0x7F)), _utf8_multibyte())


#: characters a format's own encoder escapes in names (Kimi K3's writes '&' as '&amp;', which
#: toolc does not write), or that its element names cannot hold (MiniMax-M3 names an element
#: after each key: '/' would start a closing tag, and its parsers strip whitespace): refused
_ESCAPED = {"kimi-k3": "&", "minimax-m3": "/ \t\r\n"}


def check_name(what: str, name: str, tool, pointer: str, fmt: str) -> None:
    """Refuse a tool name or key that the format writes unescaped and no parser could read."""
    bad = [c for c in name if c in FORBIDDEN_IN_NAMES + _ESCAPED.get(fmt, "")
           or ord(c) < 0x20 or ord(c) == 0x7F]
    if bad or not name:
        raise UnsupportedSchemaError(
            f"{what} {name!r} cannot be written in the {fmt} format: "
            + (f"it holds {bad[0]!r}, which " + ("the format's encoder escapes" if bad[0] == "&"
                                                 else "an element name cannot hold"
                                                 if bad[0] in _ESCAPED["minimax-m3"]
                                                 else "ends a tag there")
               if bad else "it is empty"),
            tool=tool.name, pointer=pointer, fix="rename it with letters, digits, '_' and '-'")


def raw_string(schema: dict, avoid: tuple[bytes, ...], tool, ptr: str):
    """A string value written raw, under ``schema`` (string-only), spelling none of ``avoid``."""
    extra = sorted(set(schema) - _RAW_KEYWORDS)
    if extra:
        raise UnsupportedSchemaError(
            f"{extra[0]!r} on a string this format writes raw (unquoted) is not enforced yet",
            tool=tool.name, pointer=f"{ptr}/{esc(extra[0])}",
            fix="drop the keyword, or use a format that writes arguments as JSON")
    if "const" in schema or "enum" in schema:
        import jsonschema
        values = [schema["const"]] if "const" in schema else schema["enum"]
        check = jsonschema.Draft202012Validator(schema)
        keep = [v for v in values if check.is_valid(v)
                and not any(a in v.encode("utf-8") for a in avoid)]
        return alt(*(lit(v) for v in dict.fromkeys(keep)))
    lo, hi = int(schema.get("minLength", 0)), schema.get("maxLength")
    key = (lo, hi, avoid)
    if key not in _RAW_BODIES:      # the same few bodies for every property: built once
        _RAW_BODIES[key] = intersect(Repeat(_CHAR, lo, None if hi is None else int(hi)),
                                     Avoid(avoid))
    return _RAW_BODIES[key]


_RAW_BODIES: dict = {}


def may_hold(expr, byte: int, memo: dict | None = None) -> bool:
    """Can a string of ``expr`` hold ``byte``? (No: its tags cannot be spelled in it, and the
    product that would forbid them is skipped: integers, booleans, most enums.)"""
    memo = {} if memo is None else memo
    key = id(expr)
    if key not in memo:
        memo[key] = True      # a cycle cannot occur in an Expr tree; this only guards repeats
        if isinstance(expr, Bytes):
            out = bool(expr.mask >> byte & 1)
        elif isinstance(expr, (Seq, Alt)):
            out = any(may_hold(e, byte, memo) for e in expr.items)
        elif isinstance(expr, Repeat):
            out = may_hold(expr.item, byte, memo) or (expr.sep is not None
                                                      and may_hold(expr.sep, byte, memo))
        elif isinstance(expr, Subseq):
            out = any(may_hold(e, byte, memo) for e in (*expr.items, expr.sep))
        elif isinstance(expr, Sym):
            out = False
        else:                 # Avoid, Graph, anything new: assume it may
            out = True
        memo[key] = out
    return memo[key]


class Tagged(CallFormat):
    """A tag-per-parameter format; subclasses name their :attr:`style`."""

    style: TagStyle

    @property
    def think(self):
        return self.style.think

    def block(self, tools, vocab, options, symbols):
        st = self.style
        avoid = tuple(t.encode("utf-8") for t in st.closers())
        closer = Closer(avoid)
        parts = []
        for tool, _ in tools:
            check_name("tool name", tool.name, tool, f"{tool.pointer}/name", st.name)
            parts.append((tool, self._params(tool, options, vocab, symbols, closer)))

        def call(i: int):
            return alt_factored(*(seq(text(vocab, st.call_open, symbols), lit(tool.name),
                                      text(vocab, st.at(st.name_end, i), symbols), params,
                                      text(vocab, st.call_close, symbols))
                                  for tool, params in parts))

        sep = text(vocab, st.call_sep, symbols)
        calls = numbered(call, sep, options, st.name) if st.counted else \
            repeat(call(0), sep, options)
        block = seq(text(vocab, st.block_open, symbols), calls,
                    text(vocab, st.block_close, symbols))
        free_avoid = [st.trigger.encode("utf-8"), *avoid]
        return block, free_avoid

    def _params(self, tool, options, vocab, symbols, closer):
        st = self.style
        schema = tool.parameters
        props = schema.get("properties") or {}
        required = set(schema.get("required", []))
        if not props:
            if schema.get("additionalProperties", True) is not False and not required:
                raise UnsupportedSchemaError(
                    "free-form arguments (no 'properties') cannot be written one tag per "
                    "parameter", tool=tool.name, pointer=tool.schema_pointer,
                    fix="declare the properties")
            return EMPTY
        items, req = [], []
        for key, sub in props.items():
            rel = f"/properties/{esc(key)}"
            ptr = f"{tool.schema_pointer}{rel}"
            check_name("property name", key, tool, ptr, st.name)
            head = seq(text(vocab, st.param_open, symbols), lit(key),
                       text(vocab, st.key_end, symbols))
            tail = (text(vocab, st.value_open, symbols), text(vocab, st.close_of(key), symbols))
            if st.scalars_only and not _scalar(sub):
                raise UnsupportedSchemaError(
                    f"the {st.name} format writes an object or array value as nested elements, "
                    "which toolc does not write yet", tool=tool.name, pointer=ptr,
                    fix="give the property a string, number, integer, boolean or null type")
            if st.attr == "type":     # one branch per JSON type, each naming it
                branches = {}
                for name, typed in _typed(sub, tool, ptr):
                    value = self._value(typed, rel, schema, options, closer, tool, ptr)
                    if value != NOTHING:
                        branches.setdefault(name, []).append(value)
                item = alt(*(seq(lit(st.attr_text(False, name)), tail[0], alt(*values),
                                 tail[1]) for name, values in branches.items())) \
                    if branches else NOTHING
            else:
                value = self._value(sub, rel, schema, options, closer, tool, ptr)
                attr = lit(st.attr_text(string_only(sub))) if st.attr else EMPTY
                item = seq(attr, tail[0], value, tail[1]) if value != NOTHING else NOTHING
            if item == NOTHING:
                raise UnsupportedSchemaError(f"property {key!r} admits no value in this format",
                                             tool=tool.name, pointer=ptr)
            items.append(seq(head, item))
            req.append(key in required)
        return Subseq(tuple(items), tuple(req), EMPTY)

    def _value(self, sub, rel, schema, options, closer, tool, ptr):
        """The value of one parameter: raw where ``sub`` admits only strings, else JSON."""
        try:   # compiled as JSON first: every keyword is enforced or refused there
            value = SchemaCompiler(SchemaOptions(max_depth=options.max_depth)).compile(
                sub, rel, root=schema)
        except UnsupportedSchemaError as e:
            raise e.located(tool=tool.name, pointer_prefix=tool.schema_pointer) from None
        if string_only(sub):
            value = raw_string(sub, closer.tags, tool, ptr)
        elif may_hold(value, ord("<")):     # every tag starts with '<'
            value = closer.close(value, tool, self.style.name)
        return value


_SCALARS = frozenset({"string", "number", "integer", "boolean", "null"})


def _scalar(schema) -> bool:
    """Does ``schema`` admit only strings, numbers, booleans and null (no object or array)?"""
    if string_only(schema):
        return True
    if not isinstance(schema, dict):
        return False
    t = schema.get("type")
    if isinstance(t, str) or isinstance(t, list):
        return set([t] if isinstance(t, str) else t) <= _SCALARS
    values = [schema["const"]] if "const" in schema else schema.get("enum")
    return values is not None and not any(isinstance(v, (dict, list)) for v in values)


#: a value's type as Kimi K3's encoder names it in ``type="..."`` (integers are numbers)
_TYPE_NAMES = {"string": "string", "integer": "number", "number": "number",
               "boolean": "boolean", "null": "null", "array": "array", "object": "object"}


def _typed(schema, tool, ptr: str):
    """``(type name, schema)`` for each JSON type ``schema`` admits, the schema narrowed to
    that type (a string's value is written raw, the others as JSON)."""
    if string_only(schema):
        return [("string", schema)]
    t = schema.get("type") if isinstance(schema, dict) else None
    types = [t] if isinstance(t, str) else t if isinstance(t, list) else None
    if types is None and isinstance(schema, dict):
        options = _options_by_type(schema)
        if options:
            return [(_TYPE_NAMES[x], o) for x, o in options]
    if not types or not all(x in _TYPE_NAMES for x in types):
        raise UnsupportedSchemaError(
            "this format writes each value's JSON type in an attribute, so the property "
            "needs a 'type' (a name or a list of names)", tool=tool.name, pointer=ptr,
            fix="give the property a 'type'")
    out = []
    for x in types:
        typed = dict(schema, type=x)
        if x == "string" and "enum" in typed:     # a string is raw: only its string values
            typed["enum"] = [v for v in typed["enum"] if isinstance(v, str)]
        if x == "string" and "const" in typed and not isinstance(typed["const"], str):
            continue
        if x == "string" and typed.get("enum") == []:
            continue
        out.append((_TYPE_NAMES[x], typed))
    return out


def _make(name: str) -> type:
    return type(name.title().replace("-", "").replace(".", ""), (Tagged,),
                {"name": name, "style": STYLES[name]})


Mimo = _make("mimo")
SeedOss = _make("seed-oss")
Glm45 = _make("glm-4.5")
Glm47 = _make("glm-4.7")
MinimaxM2 = _make("minimax-m2")
MinimaxM3 = _make("minimax-m3")
DeepseekV32 = _make("deepseek-v3.2")
DeepseekV4 = _make("deepseek-v4")


def _options_by_type(schema: dict):
    """``anyOf`` (or ``oneOf``) whose branches each name one type, a type to one branch:
    ``(type, branch)`` for each, or None. (Annotations beside them are dropped.)"""
    key = "anyOf" if "anyOf" in schema else "oneOf" if "oneOf" in schema else None
    rest = set(schema) - {key, "description", "title", "default", "examples", "$comment"}
    branches = schema.get(key) if key else None
    if rest or not isinstance(branches, list) or not branches:
        return None
    types = [b.get("type") if isinstance(b, dict) else None for b in branches]
    if not all(isinstance(x, str) and x in _TYPE_NAMES for x in types) or \
            len(set(types)) < len(types):
        return None
    return list(zip(types, branches))
