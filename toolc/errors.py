"""Every error toolc raises on purpose: one hierarchy under :class:`ToolcError`.

This module imports nothing, so the runtime and the parser (standard library only) share it
with the compiler. Every class is also a ``ValueError``, so callers that caught ValueError
before keep working; catch :class:`ToolcError` to catch toolc's own.

::

    ToolcError
    ├── InvalidToolsError        the tools input is malformed              (located)
    ├── UnsupportedSchemaError   valid, but toolc cannot enforce it exactly (located)
    ├── BudgetExceededError      a compile outgrew a budget; .stage says which (located)
    ├── EmptyLanguageError       the grammar accepts nothing                (located)
    ├── InvalidOptionError       a compile option's value is not allowed; .option names it
    ├── TokenizerError           a tokenizer could not be found or loaded
    ├── FormatSpecError          a custom call format's spec is malformed
    ├── ArtifactError            an artifact file is damaged, foreign or mismatched
    ├── RejectedTokenError       Matcher.advance got a token the mask forbids
    ├── ParseError               generated text holds a malformed call
    └── GraphError               a graph cannot be drawn as asked

Two kinds of refusal for tool definitions: :class:`InvalidToolsError` (not JSON, a duplicate
name, a schema that fails the meta-schema) and :class:`UnsupportedSchemaError` (valid, but not
enforceable exactly, so refused rather than silently dropped). Located errors carry the file,
the tool and the JSON pointer of the offending part, and say how to fix it.

No code decides anything by matching an error's message: what a caller needs to tell apart
is a class or an attribute.
"""

from __future__ import annotations


class ToolcError(ValueError):
    """Base class of every error toolc raises on purpose (also a ``ValueError``)."""


class _Located(ToolcError):
    """An error about one place in a tools file: file, tool, JSON pointer."""

    def __init__(self, message: str, *, file: str | None = None, tool: str | None = None,
                 pointer: str | None = None, fix: str | None = None):
        self.message = message
        self.file = file
        self.tool = tool
        self.pointer = pointer
        self.fix = fix
        super().__init__(self._render())

    def _render(self) -> str:
        where = []
        if self.file:
            where.append(_printable(str(self.file)))
        if self.tool is not None:
            where.append(f"tool {self.tool!r}")
        if self.pointer is not None:
            where.append(f"at {_printable(self.pointer) or '/'}")
        head = ", ".join(where)
        text = f"{head}: {self.message}" if head else self.message
        if self.fix:
            text += f" ({self.fix})"
        return text

    def _copy_args(self) -> dict:
        """Keyword arguments, beyond the location, that a copy must keep."""
        return {}

    def located(self, *, file=None, tool=None, pointer_prefix: str | None = None):
        """Return a copy with missing location parts filled in."""
        pointer = self.pointer
        if pointer_prefix is not None:
            pointer = pointer_prefix + (pointer or "")
        return type(self)(self.message, file=self.file or file,
                          tool=self.tool if self.tool is not None else tool,
                          pointer=pointer, fix=self.fix, **self._copy_args())

    def with_message(self, message: str, **where):
        """A copy with another message (and, optionally, another file, tool or pointer)."""
        kw = dict(file=self.file, tool=self.tool, pointer=self.pointer, fix=self.fix)
        kw.update(where)
        return type(self)(message, **kw, **self._copy_args())


def _printable(text: str) -> str:
    """``text`` with control and other unprintable characters escaped, so a pointer through a
    key such as ``"a\\nb"`` keeps the error on one line."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


class InvalidToolsError(_Located):
    """The tools input is malformed: not JSON, wrong shape, duplicate names, invalid schema."""


class UnsupportedSchemaError(_Located):
    """A valid schema part that toolc cannot enforce exactly, so it refuses to compile it."""


class BudgetExceededError(_Located):
    """A compile outgrew a stated budget. :attr:`stage` says which one:

    * ``"automaton"``: the state budget (``max_states``) while the automaton was sized or
      built (a subschema's expression, the NFA, determinization, the minimized DFA);
    * ``"walk"``: the vocabulary walk's budget (``max_states`` x WALK_FACTOR token runs);
    * ``"deadline"``: the ``timeout``;
    * ``"nesting"``: the schema nesting bound (deep or self-referencing schemas).

    Carries the file, tool and pointer of the cause when they are known."""

    STAGES = ("automaton", "walk", "deadline", "nesting")

    def __init__(self, message: str, *, stage: str = "automaton", **where):
        if stage not in self.STAGES:
            raise ValueError(f"unknown budget stage {stage!r}")
        self.stage = stage
        super().__init__(message, **where)

    def _copy_args(self) -> dict:
        return {"stage": self.stage}


class EmptyLanguageError(_Located):
    """The grammar accepts nothing: no output can ever be completed (e.g. a schema whose
    constraints contradict each other, or a tool choice that leaves no call)."""


class InvalidOptionError(ToolcError):
    """A compile option has a value toolc does not accept. :attr:`option` is its keyword
    argument's name (``max_whitespace``); the CLI shows the flag (``--max-whitespace``)."""

    def __init__(self, option: str, message: str):
        self.option = option
        self.message = message
        super().__init__(f"invalid {option}: {message}")


class TokenizerError(ToolcError):
    """A tokenizer could not be found or loaded."""


class FormatSpecError(ToolcError):
    """A custom call format's spec (``--format-file``) is malformed."""


class ArtifactError(ToolcError):
    """An artifact file is damaged, of an unknown version, or does not match the tokenizer."""


class RejectedTokenError(ToolcError):
    """``Matcher.advance`` was given a token the mask does not allow; the state is unchanged."""

    def __init__(self, token_id: int, state: int):
        self.token_id = token_id
        self.state = state
        super().__init__(f"token {token_id} is not allowed in state {state}")


class ParseError(ToolcError):
    """Generated text holds a call that is not well-formed (the message gives the offset)."""


class GraphError(ToolcError):
    """The graph cannot be drawn as asked (too large, unknown tool)."""
