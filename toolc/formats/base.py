"""What every call format provides."""

from __future__ import annotations

from dataclasses import dataclass

from ..fsm import Expr
from ..tokenizer import Vocabulary
from ..tools import Tool


@dataclass(frozen=True)
class FormatOptions:
    tool_choice: str = "auto"       # auto | required | none | a tool's name
    parallel: bool = True
    max_calls: int | None = None    # with parallel: at most this many calls (None: unbounded)


class CallFormat:
    """Frames argument automata in a model family's native call syntax."""

    name: str = ""

    def grammar(self, tools: list[tuple[Tool, Expr]], vocab: Vocabulary,
                options: FormatOptions) -> tuple[Expr, dict[str, tuple[int, ...]]]:
        """The whole output language, and the token ids of each special symbol it uses."""
        raise NotImplementedError
