"""Native call formats: one module each. A format frames the tools' argument automata the way
the model family writes a call, and names the special-token symbols it uses."""

from __future__ import annotations

from .base import CallFormat, FormatOptions
from .hermes import Hermes

FORMATS: dict[str, type[CallFormat]] = {"hermes": Hermes}


def get_format(name: str) -> CallFormat:
    try:
        return FORMATS[name]()
    except KeyError:
        raise ValueError(f"unknown call format {name!r}; known: {', '.join(sorted(FORMATS))}") \
            from None


__all__ = ["CallFormat", "FormatOptions", "FORMATS", "get_format"]
