"""Where in a call a text prefix stands: free text, or (tool, JSON pointer) inside a call.

Used by ``toolc trace`` (where the first rejected token fell) and ``toolc graph`` (state
labels). It needs no compiler internals: it reads the text a state is reached by, with a
small incremental JSON-path tracker. Only the hermes format is read this way
(``<tool_call>\\n{"name": "NAME", "arguments": ARGS}\\n</tool_call>``); for any other format
:func:`locate` says so plainly (kind ``output``, with the offset) instead of guessing.
Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..pointer import esc

OPEN, CLOSE = "<tool_call>", "</tool_call>"


@dataclass(frozen=True)
class Location:
    """``kind``: "free text", "call" (inside a call's JSON), "call end" (after the JSON, before
    the closing tag), "between calls", or "end" (EOS consumed). Inside a call, ``tool`` is the
    tool's name once it is known (else None) and ``pointer`` the JSON pointer, relative to the
    arguments, of the value being written; ``field`` is "name" or "arguments" or None."""

    kind: str
    tool: str | None = None
    field: str | None = None
    pointer: str | None = None
    partial_name: str | None = None
    offset: int | None = None        # kind "output": characters of output so far
    format: str | None = None        # kind "output": the format that is not located

    def describe(self) -> str:
        if self.kind == "output":
            return (f"offset {self.offset} of the output (toolc names the tool and the JSON "
                    f"pointer for the hermes format only; this artifact is {self.format})")
        if self.kind != "call":
            if self.kind == "call end" and self.tool:
                return f"after the arguments of tool {self.tool!r}"
            return self.kind
        if self.field == "name" or (self.tool is None and self.partial_name is not None):
            return f"tool name (so far {self.partial_name or ''!r})"
        if self.field == "arguments" and self.tool is not None:
            return f"tool {self.tool!r}, arguments at {self.pointer or '/'}"
        if self.tool is not None:
            return f"tool {self.tool!r}, call object"
        return "call object, before the name"

    def short(self) -> str:
        """A compact label for graph nodes."""
        if self.kind == "output":
            return f"@{self.offset}"
        if self.kind == "call end":
            return f"{self.tool} end" if self.tool else self.kind
        if self.kind != "call":
            return self.kind
        if self.tool is None:
            return "name:" + (self.partial_name or "")
        if self.field == "arguments":
            return f"{self.tool}{self.pointer or '/'}"
        return self.tool


class _JsonPath:
    """Follows JSON text character by character and knows the pointer of the current value."""

    def __init__(self):
        # stack entries: ["obj", key | None] or ["arr", index]
        self.stack: list[list] = []
        self.in_string = False
        self.escape = False
        self.string_is_key = False
        self.buf: list[str] = []
        self.done = False           # the top-level value is complete
        self.last_value: str | None = None   # the last string value completed, with its path

    def feed(self, ch: str) -> None:
        if self.in_string:
            if self.escape:
                self.escape = False
                self.buf.append(ch)
            elif ch == "\\":
                self.escape = True
            elif ch == '"':
                self.in_string = False
                text = "".join(self.buf)
                if self.string_is_key:
                    self.stack[-1][1] = text
                else:
                    self.last_value = (tuple(self.path()), text)
                    self._value_done()
            else:
                self.buf.append(ch)
            return
        if ch == '"':
            self.in_string, self.buf = True, []
            top = self.stack[-1] if self.stack else None
            self.string_is_key = bool(top and top[0] == "obj" and top[1] is None)
        elif ch in "{[":
            self.stack.append(["obj", None] if ch == "{" else ["arr", 0])
        elif ch in "}]":
            if self.stack:
                self.stack.pop()
            self._value_done()
        elif ch == ",":
            if self.stack:
                top = self.stack[-1]
                if top[0] == "obj":
                    top[1] = None
                else:
                    top[1] += 1

    def _value_done(self) -> None:
        if not self.stack:
            self.done = True

    def path(self) -> list:
        out = []
        for kind, v in self.stack:
            if v is not None:
                out.append(v)
        return out

    def partial(self) -> str:
        return "".join(self.buf)


#: the formats whose calls :func:`locate` can read
LOCATED_FORMATS = ("hermes",)


def locate(text: str, eos: tuple[str, ...] = ("<|im_end|>", "<|endoftext|>"),
           format: str = "hermes") -> Location:
    """The location after ``text`` (the decoded tokens consumed so far) in output of the
    call format ``format``; for a format not in :data:`LOCATED_FORMATS`, an ``output``
    location that gives the offset and says that this format is not located."""
    if format not in LOCATED_FORMATS:
        return Location("output", offset=len(text), format=format)
    for e in eos:
        if text.endswith(e):
            return Location("end")
    start = text.rfind(OPEN)
    if start < 0:
        return Location("free text")
    if text.find(CLOSE, start) >= 0:
        return Location("between calls")
    body = text[start + len(OPEN):]
    jp = _JsonPath()
    tool = None
    for ch in body:
        if jp.done:
            break
        jp.feed(ch)
        if tool is None and jp.last_value is not None and jp.last_value[0] == ("name",):
            tool = jp.last_value[1]
    if jp.done:
        return Location("call end", tool=tool)
    path = jp.path()
    field = path[0] if path else None
    if field == "name" and jp.in_string and tool is None:
        return Location("call", field="name", partial_name=jp.partial())
    if field == "arguments":
        rest = path[1:]
        pointer = "".join("/" + esc(str(p)) for p in rest)
        return Location("call", tool=tool, field="arguments", pointer=pointer)
    return Location("call", tool=tool, field=field if isinstance(field, str) else None)
