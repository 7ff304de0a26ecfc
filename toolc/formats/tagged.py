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


def check_name(what: str, name: str, tool, pointer: str, fmt: str) -> None:
    """Refuse a tool name or key that the format writes unescaped and no parser could read."""
    bad = [c for c in name if c in FORBIDDEN_IN_NAMES or ord(c) < 0x20 or ord(c) == 0x7F]
    if bad or not name:
        raise UnsupportedSchemaError(
            f"{what} {name!r} cannot be written in the {fmt} format: "
            + (f"it holds {bad[0]!r}, which ends a tag there" if bad else "it is empty"),
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
            try:   # compiled as JSON first: every keyword is enforced or refused there
                value = SchemaCompiler(SchemaOptions(max_depth=options.max_depth)).compile(
                    sub, rel, root=schema)
            except UnsupportedSchemaError as e:
                raise e.located(tool=tool.name,
                                pointer_prefix=tool.schema_pointer) from None
            raw = string_only(sub)
            if raw:
                value = raw_string(sub, closer.tags, tool, ptr)
            elif may_hold(value, ord("<")):     # every tag starts with '<'
                value = closer.close(value, tool, st.name)
            if value == NOTHING:
                raise UnsupportedSchemaError(f"property {key!r} admits no value in this format",
                                             tool=tool.name, pointer=ptr)
            head = seq(text(vocab, st.param_open, symbols), lit(key),
                       text(vocab, st.key_end, symbols))
            if st.attr == "type":
                head = seq(head, lit(st.attr_text(raw, _json_type(sub, raw, tool, ptr))))
            elif st.attr:
                head = seq(head, lit(st.attr_text(raw)))
            items.append(seq(head, text(vocab, st.value_open, symbols), value,
                             text(vocab, st.value_close, symbols)))
            req.append(key in required)
        return Subseq(tuple(items), tuple(req), EMPTY)


def _json_type(schema, raw: bool, tool, ptr: str) -> str:
    if raw:
        return "string"
    t = schema.get("type") if isinstance(schema, dict) else None
    if isinstance(t, str):
        return t
    raise UnsupportedSchemaError(
        "this format writes each value's JSON type in an attribute, so the property needs "
        "one 'type'", tool=tool.name, pointer=ptr,
        fix="give the property a single 'type' (a string, not a list)")


def _make(name: str) -> type:
    return type(name.title().replace("-", "").replace(".", ""), (Tagged,),
                {"name": name, "style": STYLES[name]})


Mimo = _make("mimo")
SeedOss = _make("seed-oss")
Glm45 = _make("glm-4.5")
Glm47 = _make("glm-4.7")
MinimaxM2 = _make("minimax-m2")
DeepseekV32 = _make("deepseek-v3.2")
DeepseekV4 = _make("deepseek-v4")
