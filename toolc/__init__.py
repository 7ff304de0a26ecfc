"""toolc: tool calls compiled ahead of time into token masks.

``import toolc`` loads only the runtime (numpy, msgpack); the compiler is imported on first use
of :func:`compile_tools`.
"""

from __future__ import annotations

__version__ = "0.1.0"

from .errors import (ArtifactError, BudgetExceededError, InvalidToolsError,  # noqa: E402
                     RejectedTokenError, TokenizerError, ToolcError, UnsupportedSchemaError)
from .runtime import Artifact, Matcher, apply_mask, fill_bitmask, load  # noqa: E402
from .parse import ParseError, parse_tool_calls  # noqa: E402  (standard library only)


def compile_tools(tools, tokenizer="qwen", **options) -> Artifact:
    """Compile tool definitions into an in-memory :class:`Artifact` (see toolc.compiler)."""
    from .compiler import compile_tools as _compile
    return _compile(tools, tokenizer, **options)


__all__ = ["__version__", "Artifact", "Matcher", "apply_mask", "fill_bitmask", "load",
           "compile_tools", "parse_tool_calls", "ParseError", "ArtifactError",
           "BudgetExceededError", "InvalidToolsError", "RejectedTokenError", "TokenizerError",
           "ToolcError", "UnsupportedSchemaError"]
