"""Parsing harmony output (gpt-oss) back; see :mod:`toolc.formats.harmony` for its shape.
Runtime side: standard library only; one left-to-right pass."""

from __future__ import annotations

from .errors import ParseError
from .parse import _expect, _json_at, _result

_ANALYSIS = "<|channel|>analysis<|message|>"
_FINAL = "<|channel|>final<|message|>"


def parse_harmony(text: str, tools=None) -> dict:
    """``{"content", "tool_calls", "parsed", "reasoning"}`` from one harmony answer: the
    analysis message as reasoning, then the final message as content or the one call. Text
    with no harmony header at all is plain content."""
    pos, reasoning = 0, None
    if not text.startswith(("<|channel|>", " to=")):
        return _result(text, [])           # no harmony header: plain content
    if text.startswith(_ANALYSIS):
        end = text.find("<|end|>", len(_ANALYSIS))
        if end < 0:
            raise ParseError(f"at offset {len(_ANALYSIS)}: the analysis message is never ended "
                             "by <|end|>")
        reasoning = text[len(_ANALYSIS):end]
        pos = _expect(text, end, "<|end|><|start|>assistant", "the next message")
    if text.startswith(_FINAL, pos):
        body = text[pos + len(_FINAL):]
        body = body[:-len("<|return|>")] if body.endswith("<|return|>") else body
        out = _result(body, [])
    else:
        if text.startswith("<|channel|>commentary to=functions.", pos):
            pos += len("<|channel|>commentary to=functions.")
            stop = text.find("<|constrain|>", pos)
            name_end = stop - 1 if stop > 0 and text[stop - 1] == " " else stop
            after = "<|constrain|>json<|message|>"
        else:
            pos = _expect(text, pos, " to=functions.", "a final message or a call")
            name_end = text.find("<|channel|>commentary", pos)
            stop = name_end
            after = None
        if name_end < 0:
            raise ParseError(f"at offset {pos}: the call's header is never closed")
        name = text[pos:name_end]
        if after is None:
            pos = _expect(text, stop, "<|channel|>commentary", "the call's channel")
            pos += 1 if text.startswith(" ", pos) else 0
            pos = _expect(text, pos, "<|constrain|>json<|message|>", "the call's header")
        else:
            pos = _expect(text, stop, after, "the call's header")
        args, pos = _json_at(text, pos, f"the arguments of {name!r}")
        rest = text[pos:]
        if rest not in ("", "<|call|>"):
            raise ParseError(f"at offset {pos}: unexpected text after the call")
        out = _result("", [(name, args, None)])
    out["reasoning"] = reasoning
    return out
