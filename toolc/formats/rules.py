"""Rules a format's framing and its parser must agree on, written once (standard library
only: :mod:`toolc.parse` reads them without the compiler)."""

from __future__ import annotations


def string_only(schema) -> bool:
    """Does ``schema`` admit strings and nothing else? Formats that write one tag per
    argument (qwen3-coder) write such values raw, and read them back raw."""
    if not isinstance(schema, dict):
        return False
    if "const" in schema:
        return isinstance(schema["const"], str)
    if "enum" in schema:
        return all(isinstance(v, str) for v in schema["enum"])
    return schema.get("type") == "string"


#: the reasoning sections toolc.parse.split_reasoning looks for at the start of an answer
REASONING_TAGS = (("<think>", "</think>"), ("[THINK]", "[/THINK]"))

#: what str.lstrip() removes: every character Python counts as whitespace (str.isspace; a test
#: checks the list against all of Unicode)
WHITESPACE = tuple("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680"
                   + "".join(map(chr, range(0x2000, 0x200B)))
                   + "\u2028\u2029\u202f\u205f\u3000")
