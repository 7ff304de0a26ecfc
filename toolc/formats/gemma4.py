"""Gemma 4's calls, as its chat template writes them:

    <|tool_call>call:NAME{key:VALUE,key:VALUE}<tool_call|>

concatenated, one per call. Keys are bare and sorted as Jinja's ``dictsort`` sorts them (case
folded); a string is ``<|"|>text<|"|>`` (raw: no escapes, never holding ``<|"|>``); an object
is ``{key:VALUE,...}`` with bare sorted keys, an array ``[VALUE,...]``, booleans ``true`` and
``false``, ``null`` as Jinja prints None (``None``), numbers as JSON writes them.

This module writes the language of each schema in that syntax over a small set of keywords:
``type``, ``properties``, ``required``, ``additionalProperties: false``, ``items``,
``minItems``/``maxItems``, ``enum``/``const``, ``anyOf``, ``$ref`` into the parameters, and the
raw-string keywords of :func:`toolc.formats.tagged.raw_string`. Anything else is refused with
its pointer (exact or refused), as is a nested object without ``properties`` (its keys could be
anything, and a bare key cannot hold ``:`` or ``,``) and a key holding a character that ends a
bare key. Only declared properties are written (extra keys that ``additionalProperties`` would
allow are left out: a narrower language, never a wider one).
"""

from __future__ import annotations

import re

from ..errors import UnsupportedSchemaError
from ..fsm import NOTHING, Repeat, Subseq, alt, alt_factored, lit, seq
from ..pointer import esc
from ..schema import SchemaCompiler, SchemaOptions
from ..schema import json_grammar as jg
from ..schema.keywords import ANNOTATIONS
from ..schema.refs import merge, resolve
from .base import CallFormat, plain_parts, repeat, text
from .tagged import check_name, raw_string

QUOTE, OPEN, CLOSE = '<|"|>', "<|tool_call>", "<tool_call|>"
_KEYWORDS = frozenset({"type", "properties", "required", "additionalProperties", "items",
                       "minItems", "maxItems", "enum", "const", "anyOf", "$ref", "minLength",
                       "maxLength"}) | ANNOTATIONS
_BARE_KEY = re.compile(r"[A-Za-z0-9_.\-]+\Z")


def sort_keys(keys):
    """Jinja's ``dictsort`` order (case-insensitive by default)."""
    return sorted(keys, key=lambda k: k.lower())


class GemmaValues:
    def __init__(self, tool, root, vocab, symbols, max_depth: int):
        self.tool, self.root, self.vocab, self.symbols = tool, root, vocab, symbols
        self.max_depth = max_depth
        self.avoid = (QUOTE.encode(), OPEN.encode(), CLOSE.encode())
        self._active: dict[str, int] = {}

    def refuse(self, msg: str, ptr: str):
        return UnsupportedSchemaError(msg, tool=self.tool.name,
                                      pointer=f"{self.tool.schema_pointer}{ptr}",
                                      fix="simplify the schema, or use a JSON-argument format")

    def quoted(self, inner):
        q = text(self.vocab, QUOTE, self.symbols)
        return seq(q, inner, q)

    def literal(self, v):
        if isinstance(v, str):
            return self.quoted(lit(v))
        if isinstance(v, bool):
            return lit("true" if v else "false")
        if v is None:
            return lit("None")
        if isinstance(v, (int, float)):
            return lit(jg.render(v).decode())
        if isinstance(v, list):
            return seq(lit("["), *[x for i, e in enumerate(v)
                                   for x in ((lit(","),) if i else ()) + (self.literal(e),)],
                       lit("]"))
        items = [seq(lit(f"{k}:"), self.literal(v[k])) for k in sort_keys(v)]
        return seq(lit("{"), *[x for i, e in enumerate(items)
                               for x in ((lit(","),) if i else ()) + (e,)], lit("}"))

    def value(self, s, ptr: str):
        if s is True or s == {}:
            raise self.refuse("a free-form value has no Gemma 4 spelling here", ptr)
        if s is False:
            return NOTHING
        extra = sorted(set(s) - _KEYWORDS)
        if extra:
            raise self.refuse(f"keyword {extra[0]!r} is not enforced in the gemma4 format",
                              f"{ptr}/{esc(extra[0])}")
        if "$ref" in s:
            ref = s["$ref"]
            depth = self._active.get(ref, 0)
            if depth >= max(self.max_depth, 1):
                return NOTHING
            target, _ = resolve(self.root, ref, ptr)
            rest = {k: v for k, v in s.items() if k != "$ref" and k not in ANNOTATIONS}
            self._active[ref] = depth + 1
            try:
                return self.value(merge(target, rest, ptr) if rest else target, ptr)
            finally:
                self._active[ref] = depth
        if "enum" in s or "const" in s:
            import jsonschema
            values = [s["const"]] if "const" in s else s["enum"]
            check = jsonschema.Draft202012Validator(s)
            return alt(*(self.literal(v) for v in values
                         if check.is_valid(v) and not (isinstance(v, str) and QUOTE in v)))
        if "anyOf" in s:
            return alt(*(self.value(b, f"{ptr}/anyOf/{i}") for i, b in enumerate(s["anyOf"])))
        t = s.get("type")
        if t is None:
            raise self.refuse("a value without 'type' has no Gemma 4 spelling here", ptr)
        return alt(*(self.typed(x, s, ptr) for x in ([t] if isinstance(t, str) else t)))

    def typed(self, t: str, s: dict, ptr: str):
        if t == "string":
            return self.quoted(raw_string({k: v for k, v in s.items() if k in
                                           ("type", "minLength", "maxLength")} | {"type":
                                                                                "string"},
                                          self.avoid, self.tool, ptr))
        if t == "object":
            return self.object(s, ptr)
        if t == "array":
            items = s.get("items")
            if not isinstance(items, dict):
                raise self.refuse("an array needs an 'items' schema here", ptr)
            item = self.value(items, f"{ptr}/items")
            lo, hi = int(s.get("minItems", 0)), s.get("maxItems")
            body = Repeat(item, lo, None if hi is None else int(hi), lit(","))
            return seq(lit("["), body, lit("]"))
        return {"integer": jg.INTEGER, "number": jg.NUMBER, "boolean": jg.BOOLEAN,
                "null": lit("None")}[t]

    def object(self, s, ptr: str):
        props = s.get("properties") or {}
        if not props and ptr:     # only the declared keys are written: a bare key can't be any
            raise self.refuse("an object without 'properties' has no Gemma 4 spelling here",
                              ptr)
        required = set(s.get("required", []))
        keys = sort_keys(props)
        items = []
        for k in keys:
            kp = f"{ptr}/properties/{esc(k)}"
            if not _BARE_KEY.match(k):
                raise self.refuse(f"key {k!r} cannot be written bare in the gemma4 format",
                                  kp)
            items.append(seq(lit(f"{k}:"), self.value(props[k], kp)))
        return seq(lit("{"), Subseq(tuple(items), tuple(k in required for k in keys),
                                    lit(",")), lit("}"))


class Gemma4(CallFormat):
    name = "gemma4"
    think = ("<|channel>thought\n", "<channel|>")

    def block(self, tools, vocab, options, symbols):
        calls = []
        for tool, _ in tools:
            check_name("tool name", tool.name, tool, f"{tool.pointer}/name", self.name)
            if "{" in tool.name:
                raise UnsupportedSchemaError(f"tool name {tool.name!r} holds '{{', where the "
                                             "arguments begin", tool=tool.name,
                                             pointer=f"{tool.pointer}/name")
            params = tool.parameters
            try:    # the JSON compiler refuses what no format can enforce
                SchemaCompiler(SchemaOptions(max_depth=options.max_depth)).compile(params)
            except UnsupportedSchemaError as e:
                raise e.located(tool=tool.name,
                                pointer_prefix=tool.schema_pointer) from None
            gv = GemmaValues(tool, params, vocab, symbols, options.max_depth)
            args = gv.object(params, "")
            calls.append(seq(text(vocab, OPEN, symbols), lit(f"call:{tool.name}"), args,
                             text(vocab, CLOSE, symbols)))
        avoid = [OPEN.encode(), CLOSE.encode()] + plain_parts(vocab, QUOTE)
        return repeat(alt_factored(*calls), lit(""), options), avoid
