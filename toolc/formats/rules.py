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
