"""A string that holds a JSON text: ``contentMediaType: application/json`` with a
``contentSchema`` (pydantic's ``Json[T]`` writes exactly that, and validates the content).

JSON Schema 2020-12 makes both keywords annotations; toolc enforces them, a narrower language
(what it accepts still validates), because the tools that declare them (pydantic) refuse a
string whose content is not such a JSON text. The content is the ``contentSchema``'s own
automaton, written with the compiler's whitespace; the string's body is that automaton with
every byte spelled as ``json.dumps`` spells it inside a string (``"`` as ``\\"``, a newline as
``\\n``; other bytes as themselves), so the body's decoded value is exactly a text of the
content's language. String keywords beside it (``maxLength``, ``pattern``) are intersected.
"""

from __future__ import annotations

import json

from ..fsm import NOTHING, Bytes, Expr, Graph, lit
from .automata import _dfa

# bytes that json.dumps(ensure_ascii=False) escapes inside a string, and how
_ESCAPED = {b: json.dumps(chr(b), ensure_ascii=False)[1:-1].encode()
            for b in [*range(0x20), 0x22, 0x5C]}
_ESCAPED_MASK = sum(1 << b for b in _ESCAPED)


def is_json_content(schema: dict) -> bool:
    """Whether a schema object's ``contentSchema`` describes a JSON text it holds."""
    return "contentSchema" in schema and schema.get("contentMediaType") == "application/json" \
        and "contentEncoding" not in schema


def escaped_body(content: Expr) -> Expr:
    """The JSON string bodies (``json.dumps`` spelling, no quotes) whose decoded value is a
    text of ``content``."""
    d = _dfa(content)
    if d is None:
        return NOTHING
    classes = d.alphabet.byte_class
    masks: dict[int, int] = {}
    for byte in range(256):
        masks[int(classes[byte])] = masks.get(int(classes[byte]), 0) | (1 << byte)
    edges = []
    for q in range(d.trans.shape[0]):
        for cls, mask in masks.items():
            r = int(d.trans[q, cls])
            if r < 0:
                continue
            plain = mask & ~_ESCAPED_MASK
            if plain:
                edges.append((q, Bytes(plain), r))
            for b, spelled in _ESCAPED.items():
                if mask >> b & 1:
                    edges.append((q, lit(spelled), r))
    finals = tuple(q for q in range(d.trans.shape[0]) if d.final[q])
    if not finals:
        return NOTHING
    return Graph(d.trans.shape[0], 0, finals, tuple(edges))
