"""JSON Pointer (RFC 6901) tokens: the one place that escapes and unescapes them (standard
library only; errors, budgets, schemas and the debug views all write pointers)."""

from __future__ import annotations


def esc(token) -> str:
    """A pointer token for a key or index: ``~`` as ``~0``, ``/`` as ``~1``."""
    return str(token).replace("~", "~0").replace("/", "~1")


def unesc(token: str) -> str:
    """The key a pointer token names."""
    return token.replace("~1", "/").replace("~0", "~")
