"""toolc: tool calls compiled ahead of time into token masks.

``import toolc`` loads only the parser and the errors (standard library): the runtime (numpy,
msgpack) is imported on first use of one of its names (``toolc.load``, ``toolc.Artifact``,
...), the compiler on first use of :func:`compile_tools`. A process that only parses
generated calls never imports numpy (22 MB of its peak memory).

Built once per model: a :class:`~toolc.tokenizer.Vocabulary` (compile side). Built once per
tool set: an :class:`Artifact` (``compile_tools`` or ``load``; shared, read-only). Built per
request: a :class:`Matcher` (``artifact.matcher()``; cheap).
"""

from __future__ import annotations

__version__ = "0.1.0"

import inspect as _inspect  # noqa: E402
from typing import TYPE_CHECKING  # noqa: E402

from .errors import (ArtifactError, BudgetExceededError, EmptyLanguageError,  # noqa: E402
                     FormatSpecError, GraphError, InvalidOptionError, InvalidToolsError,
                     ParseError, RejectedTokenError, TokenizerError, ToolcError,
                     UnsupportedSchemaError)
from .options import DEFAULT_TOKENIZER, CompileOptions, with_option_keywords  # noqa: E402
from .parse import parse_tool_calls  # noqa: E402  (standard library only)

if TYPE_CHECKING:   # for annotations only: at run time the runtime is imported on first use
    from .runtime import Artifact

#: the runtime's names, imported from :mod:`toolc.runtime` on first use (numpy is loaded then)
_RUNTIME_NAMES = frozenset(("Artifact", "BitmaskFiller", "Matcher", "allocate_token_bitmask",
                            "apply_mask", "apply_token_bitmask_inplace", "fill_bitmask",
                            "fill_next_token_bitmask", "get_bitmask_shape", "load",
                            "advance_batch"))


def __getattr__(name: str):
    """The runtime's names and ``toolc.runtime`` itself, imported on first use."""
    if name in _RUNTIME_NAMES or name == "runtime":
        import importlib
        runtime = importlib.import_module(f"{__name__}.runtime")
        value = runtime if name == "runtime" else getattr(runtime, name)
        globals()[name] = value      # later look-ups are plain attribute reads
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | _RUNTIME_NAMES)


def compile_tools(tools, tokenizer=DEFAULT_TOKENIZER, *, options=None, source=None,
                  progress=None, cache=None, **kwargs) -> Artifact:
    """Compile tool definitions for a tokenizer into an in-memory :class:`Artifact`.

    ``tools``: a tools file's path, or the tools value (an OpenAI tools list, a list of
    function objects, or ``{"tools": [...]}``). ``tokenizer``: an alias (``qwen``,
    ``mistral``), a tokenizer file or folder, or a ``Vocabulary``. Options: a
    :class:`CompileOptions` (``options=``), keyword arguments naming its fields, or both (the
    keywords win); a bad value raises :class:`InvalidOptionError` naming the keyword.
    ``source`` names the tools in errors when they are not a file; ``progress(level,
    total)`` is called during the vocabulary walk. ``cache``: a
    :class:`toolc.toolcache.ToolCache` shared by compiles whose tool lists change per request.
    See :mod:`toolc.compiler`.
    """
    from .compiler import compile_tools as _compile
    return _compile(tools, tokenizer, options=options, source=source, progress=progress,
                    cache=cache, **kwargs)


def tool_from(obj, *, name=None, description=None) -> dict:
    """An OpenAI tool dict for a pydantic model class, a dataclass, or a function with type
    hints (pydantic imported on first use). See :func:`toolc.from_python.tool_from`."""
    from .from_python import tool_from as _tool_from
    return _tool_from(obj, name=name, description=description)


_P = _inspect.Parameter
with_option_keywords(compile_tools, [
    _P("tools", _P.POSITIONAL_OR_KEYWORD),
    _P("tokenizer", _P.POSITIONAL_OR_KEYWORD, default=DEFAULT_TOKENIZER),
    _P("options", _P.KEYWORD_ONLY, default=None),
    _P("source", _P.KEYWORD_ONLY, default=None),
    _P("progress", _P.KEYWORD_ONLY, default=None),
    _P("cache", _P.KEYWORD_ONLY, default=None),
])
del _P

__all__ = ["__version__", "Artifact", "Matcher", "CompileOptions", "load", "compile_tools",
           "tool_from",
           "parse_tool_calls", "apply_mask", "get_bitmask_shape", "allocate_token_bitmask",
           "fill_next_token_bitmask", "apply_token_bitmask_inplace", "fill_bitmask",
           "BitmaskFiller", "advance_batch",
           "ToolcError", "ArtifactError", "BudgetExceededError", "EmptyLanguageError",
           "FormatSpecError", "GraphError", "InvalidOptionError", "InvalidToolsError",
           "ParseError", "RejectedTokenError", "TokenizerError", "UnsupportedSchemaError"]
