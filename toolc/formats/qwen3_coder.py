"""Qwen3-Coder's XML-style calls, as its chat template writes them:

    <tool_call>\n<function=NAME>\n<parameter=KEY>\nVALUE\n</parameter>\n...</function>\n</tool_call>

Parameters come in schema order, required ones always, optional ones when given. A value whose
schema admits only strings is written raw: no quotes, no escapes, any well-formed UTF-8 text
that does not contain ``</parameter>``. Every other value is JSON (``json.dumps``). Parallel
calls are joined by ``\n``; the tags are special symbols when the tokenizer has them.

A property whose schema mixes strings with other types is written as JSON (a departure: the
template would write a string raw there, and a parser cannot tell ``null`` from "null").
"""

from __future__ import annotations

from ..errors import UnsupportedSchemaError
from ..fsm import (EMPTY, NOTHING, Bytes, Repeat, Subseq, alt, alt_factored, byte_range, byte_set,
                   lit, seq)
from ..schema import SchemaCompiler, SchemaOptions
from ..schema.json_grammar import _utf8_multibyte
from .base import CallFormat, plain_parts, repeat, text
from .rules import string_only

OPEN, CLOSE = "<tool_call>", "</tool_call>"
END_PARAM = "</parameter>"


def _char(excluded: str):
    """One UTF-8 character other than the ASCII characters in ``excluded``."""
    ascii_ok = byte_range(0x00, 0x7F)
    return alt(Bytes(ascii_ok & ~byte_set(excluded)), _utf8_multibyte())


def raw_text(avoid: str = END_PARAM):
    """Well-formed UTF-8 text without ``avoid`` as a substring (``avoid`` has no border and
    starts with ``<``, as ``</parameter>`` does)."""
    head, rest = avoid[0], avoid[1:]
    lts = Repeat(lit(head), 1, None)
    # after one or more '<' and a proper prefix of the rest, a character that breaks the match
    breaks = alt(*(seq(lit(rest[:k]), _char(head + rest[k])) for k in range(len(rest))))
    piece = alt(_char(head), seq(lts, breaks))
    tail = alt(EMPTY, *(seq(lts, lit(rest[:k])) for k in range(len(rest))))
    return seq(Repeat(piece, 0, None), tail)


class Qwen3Coder(CallFormat):
    name = "qwen3-coder"

    def block(self, tools, vocab, options, symbols):
        bodies = []
        for tool, _ in tools:
            bodies.append(seq(lit(f"\n<function={tool.name}>\n"), self._params(tool, options),
                              lit("</function>\n")))
        call = seq(text(vocab, OPEN, symbols), alt_factored(*bodies), text(vocab, CLOSE, symbols))
        avoid = plain_parts(vocab, OPEN) + plain_parts(vocab, CLOSE)
        return repeat(call, lit("\n"), options), avoid

    def _params(self, tool, options):
        schema = tool.parameters
        props = schema.get("properties") or {}
        required = set(schema.get("required", []))
        if not props:
            if schema.get("additionalProperties", True) is not False and not required:
                raise UnsupportedSchemaError(
                    "free-form arguments (no 'properties') cannot be written as "
                    "<parameter=KEY> tags", tool=tool.name, pointer=tool.schema_pointer,
                    fix="declare the properties")
            return EMPTY
        items, req = [], []
        for key, sub in props.items():
            ptr = f"{tool.schema_pointer}/properties/{key}"
            try:   # compiled as JSON first: every keyword is enforced or refused there
                value = SchemaCompiler(SchemaOptions(max_depth=options.max_depth)).compile(sub)
            except UnsupportedSchemaError as e:
                raise e.located(tool=tool.name, pointer_prefix=ptr) from None
            if string_only(sub):
                value = self._raw(sub)
            if value == NOTHING:
                raise UnsupportedSchemaError(f"property {key!r} admits no value in this format",
                                             tool=tool.name, pointer=ptr)
            items.append(seq(lit(f"<parameter={key}>\n"), value, lit("\n</parameter>\n")))
            req.append(key in required)
        return Subseq(tuple(items), tuple(req), EMPTY)

    @staticmethod
    def _raw(schema):
        if "const" in schema or "enum" in schema:
            import jsonschema
            values = [schema["const"]] if "const" in schema else schema["enum"]
            check = jsonschema.Draft202012Validator(schema)
            return alt(*(lit(v) for v in values if END_PARAM not in v and check.is_valid(v)))
        return raw_text()
