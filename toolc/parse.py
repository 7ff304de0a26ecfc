"""Generated text back to OpenAI-shaped tool calls. Runtime side: standard library only."""

from __future__ import annotations

import json
import re

_HERMES = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)


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
    for end in ("<|im_end|>", "<|endoftext|>"):
        if text.endswith(end):
            text = text[: -len(end)]
    calls, parsed = [], []
    first = None
    for i, m in enumerate(_HERMES.finditer(text)):
        if first is None:
            first = m.start()
        try:
            obj = json.loads(m.group(1))
        except json.JSONDecodeError as e:
            raise ParseError(f"call {i}: invalid JSON: {e.msg} at column {e.colno}") from None
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
