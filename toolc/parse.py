"""Generated text back to OpenAI-shaped tool calls. Runtime side: standard library only."""

from __future__ import annotations

import json

_OPEN, _CLOSE = "<tool_call>", "</tool_call>"


class ParseError(ValueError):
    """The text holds a call that is not well-formed."""


def parse_tool_calls(text: str, format: str = "hermes") -> dict:
    """Split ``text`` into its free content and its calls.

    Returns ``{"content": str | None, "tool_calls": [{"id", "type", "function": {"name",
    "arguments"}}]}`` where ``arguments`` is a JSON string, as in OpenAI's chat API, plus
    ``"parsed"``: the arguments as Python values, one per call.
    """
    if format != "hermes":
        raise ValueError(f"no parser for format {format!r}")
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as e:
            raise ParseError(f"the text is not UTF-8 ({e.reason} at byte {e.start})") from None
    for end in ("<|im_end|>", "<|endoftext|>"):
        if text.endswith(end):
            text = text[: -len(end)]
    calls, parsed = [], []
    first = None
    for i, (start, body) in enumerate(_hermes_calls(text)):
        if first is None:
            first = start
        try:
            obj = json.loads(body)
        except json.JSONDecodeError as e:
            raise ParseError(f"call {i}: invalid JSON: {e.msg} at column {e.colno}") from None
        except RecursionError:
            raise ParseError(f"call {i}: JSON nested too deeply") from None
        if not isinstance(obj, dict) or not isinstance(obj.get("name"), str) \
                or "arguments" not in obj:
            raise ParseError(f"call {i}: expected {{\"name\": ..., \"arguments\": ...}}")
        args = obj["arguments"]
        parsed.append({"name": obj["name"], "arguments": args})
        calls.append({"id": f"call_{i}", "type": "function",
                      "function": {"name": obj["name"],
                                   "arguments": json.dumps(args, ensure_ascii=False)}})
    content = text if first is None else text[:first]
    content = content.strip() or None
    return {"content": content, "tool_calls": calls, "parsed": parsed}


def _hermes_calls(text: str):
    """(start offset, stripped body) of each ``<tool_call>...</tool_call>``, in one left-to-right
    pass with ``str.find`` (linear time however many tags are left open). A tag opened inside a
    call, a call never closed, or a closing tag outside a call is a :class:`ParseError`."""
    pos, i = 0, 0
    while True:
        start = text.find(_OPEN, pos)
        stray = text.find(_CLOSE, pos, len(text) if start < 0 else start)
        if stray >= 0:
            raise ParseError(f"'{_CLOSE}' at offset {stray} closes no call")
        if start < 0:
            return
        end = text.find(_CLOSE, start + len(_OPEN))
        if end < 0:
            raise ParseError(f"call {i}: '{_OPEN}' at offset {start} is never closed")
        body = text[start + len(_OPEN):end]
        nested = body.find(_OPEN)
        if nested >= 0:
            raise ParseError(f"call {i}: '{_OPEN}' at offset {start + len(_OPEN) + nested} "
                             "opens a call inside another")
        yield start, body.strip()
        pos, i = end + len(_CLOSE), i + 1
