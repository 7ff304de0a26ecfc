"""Every error toolc raises on purpose.

This module imports nothing, so the runtime can share it with the compiler.

Two kinds of refusal for tool definitions:

* :class:`InvalidToolsError`: the input is malformed (not JSON, a duplicate name, a schema that
  fails the meta-schema).
* :class:`UnsupportedSchemaError`: the input is valid, but toolc cannot enforce a part of it
  exactly, so it refuses rather than silently dropping the constraint.

Both carry the file, the tool and the JSON pointer of the offending part, and say how to fix it.
"""

from __future__ import annotations


class ToolcError(Exception):
    """Base class of every error toolc raises on purpose."""


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
            where.append(str(self.file))
        if self.tool is not None:
            where.append(f"tool {self.tool!r}")
        if self.pointer is not None:
            where.append(f"at {_printable(self.pointer) or '/'}")
        head = ", ".join(where)
        text = f"{head}: {self.message}" if head else self.message
        if self.fix:
            text += f" ({self.fix})"
        return text

    def located(self, *, file=None, tool=None, pointer_prefix: str | None = None):
        """Return a copy with missing location parts filled in."""
        pointer = self.pointer
        if pointer_prefix is not None:
            pointer = pointer_prefix + (pointer or "")
        return type(self)(self.message, file=self.file or file,
                          tool=self.tool if self.tool is not None else tool,
                          pointer=pointer, fix=self.fix)


def _printable(text: str) -> str:
    """``text`` with control and other unprintable characters escaped, so a pointer through a
    key such as ``"a\\nb"`` keeps the error on one line."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


class InvalidToolsError(_Located, ValueError):
    """The tools input is malformed: not JSON, wrong shape, duplicate names, invalid schema."""


class UnsupportedSchemaError(_Located, ValueError):
    """A valid schema part that toolc cannot enforce exactly, so it refuses to compile it."""


class TokenizerError(ToolcError, ValueError):
    """A tokenizer could not be found or loaded."""


class BudgetExceededError(_Located, ValueError):
    """A compile outgrew a stated budget: ``max_states``, the schema nesting bound or the
    timeout. Carries the file, tool and pointer of the cause when they are known."""


class ArtifactError(ToolcError, ValueError):
    """An artifact file is damaged, of an unknown version, or does not match the tokenizer."""


class RejectedTokenError(ToolcError, ValueError):
    """``Matcher.advance`` was given a token the mask does not allow; the state is unchanged."""

    def __init__(self, token_id: int, state: int):
        self.token_id = token_id
        self.state = state
        super().__init__(f"token {token_id} is not allowed in state {state}")
