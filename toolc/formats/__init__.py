"""Native call formats: one module each. A format frames the tools' argument automata the way
the model family writes a call, and names the special-token symbols it uses."""

from __future__ import annotations

from .base import CallFormat, FormatOptions
from .custom import Custom, FormatSpecError, load_format_file
from .functools_format import Functools
from .hermes import Hermes
from .json_format import Json
from .llama3_json import Llama3Json
from .mistral import Mistral
from .phi4_mini import Phi4Mini
from .pythonic import Pythonic
from .qwen3_coder import Qwen3Coder
from .tooldec import ToolDec

FORMATS: dict[str, type[CallFormat]] = {
    "hermes": Hermes, "qwen3-coder": Qwen3Coder, "mistral": Mistral, "phi4-mini": Phi4Mini,
    "functools": Functools, "llama3-json": Llama3Json, "pythonic": Pythonic,
    "tooldec": ToolDec, "json": Json,
}


def get_format(name) -> CallFormat:
    """A format by name, or ``name`` itself when it is already a :class:`CallFormat`."""
    if isinstance(name, CallFormat):
        return name
    try:
        return FORMATS[name]()
    except KeyError:
        raise ValueError(f"unknown call format {name!r}; known: {', '.join(sorted(FORMATS))}") \
            from None


__all__ = ["CallFormat", "FormatOptions", "FORMATS", "get_format", "Custom", "FormatSpecError",
           "load_format_file"]
