"""The JSON-argument families as data: each call is ``call_open NAME name_end ARGS call_close``
with ARGS the arguments object as JSON (``json.dumps``), calls joined by ``call_sep`` inside
``block_open ... block_close``. ``{index}`` in ``call_open`` or ``name_end`` is the call's
number within the block (0, 1, ...). Standard library only: the framing
(:mod:`toolc.formats.framed`) and the parser (:mod:`toolc.parse_tags`) both read these values.

Bytes from issue 16's facts sheet (§1 and §2); DeepSeek's markers there are quoted from SGLang's
detectors and xgrammar's builtins, Kimi K2's from Moonshot's tool-call guide, EXAONE's and
Granite's from the vendors' parser docstrings (their separators between calls are not verified
against a template).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class FramedStyle:
    name: str
    trigger: str            # the first tag of the block: free text never spells it
    call_open: str
    name_end: str
    call_close: str
    call_sep: str = ""
    block_open: str = ""
    block_close: str = ""
    #: characters a tool name may not hold here, beyond '<', '>' and '"' (each ends a name)
    name_forbids: str = ""
    #: what an argument never spells besides the tags (Cohere: every marker of its turn)
    avoid: tuple[str, ...] = ()

    @property
    def counted(self) -> bool:
        return "{index}" in self.call_open + self.name_end

    def at(self, s: str, index: int) -> str:
        return s.replace("{index}", str(index))

    def closers(self) -> tuple[str, ...]:
        """Tags an argument value never spells in ordinary tokens: a parser searching for
        them (the vendors' regexes do) would cut the call there."""
        tags = (self.call_close, self.block_close, self.trigger)
        return tuple(dict.fromkeys([*(t for s in tags for t in re.findall(r"<[^<>]+>", s)),
                                    *self.avoid]))


_B, _E, _S = "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>"

STYLES: dict[str, FramedStyle] = {s.name: s for s in (
    # DeepSeek V3 / V3-0324 / R1: a ```json fence per call, calls joined by '\n'
    FramedStyle("deepseek-v3", trigger="<｜tool▁calls▁begin｜>",
                block_open="<｜tool▁calls▁begin｜>", call_open=f"{_B}function{_S}",
                name_end="\n```json\n", call_close=f"\n```{_E}", call_sep="\n",
                block_close="<｜tool▁calls▁end｜>"),
    # DeepSeek V3.1 / V3.2-Exp: name, separator, JSON; calls concatenated
    FramedStyle("deepseek-v3.1", trigger="<｜tool▁calls▁begin｜>",
                block_open="<｜tool▁calls▁begin｜>", call_open=_B, name_end=_S, call_close=_E,
                block_close="<｜tool▁calls▁end｜>"),
    # Kimi K2 / K2.5 / K2-Thinking: the call id functions.NAME:IDX counts the calls
    FramedStyle("kimi-k2", trigger="<|tool_calls_section_begin|>",
                block_open="<|tool_calls_section_begin|>",
                call_open="<|tool_call_begin|>functions.",
                name_end=":{index}<|tool_call_argument_begin|>", call_close="<|tool_call_end|>",
                block_close="<|tool_calls_section_end|>", name_forbids=":"),
    # EXAONE 4: <tool_call>{"name": N, "arguments": A}</tool_call> per call
    FramedStyle("exaone", trigger="<tool_call>", call_open='<tool_call>{"name": "',
                name_end='", "arguments": ', call_close="}</tool_call>", call_sep="\n"),
    # Cohere Command A (CMD4), as cohere_melody 0.15.3's render_cmd4 writes a chatbot turn's
    # tool calls: a JSON list indented by four spaces; the ids count the calls
    FramedStyle("cohere", trigger="<|START_ACTION|>", block_open="<|START_ACTION|>[\n    ",
                call_open='{"tool_call_id": "{index}", "tool_name": "',
                name_end='", "parameters": ', call_close="}", call_sep=",\n    ",
                block_close="\n]<|END_ACTION|>",
                avoid=("<|START_RESPONSE|>", "<|END_RESPONSE|>", "<|START_THINKING|>",
                       "<|END_THINKING|>")),
    # Granite 3.1+: <tool_call>[{"name": N, "arguments": A}, ...]
    FramedStyle("granite", trigger="<tool_call>", block_open="<tool_call>[",
                call_open='{"name": "', name_end='", "arguments": ', call_close="}",
                call_sep=", ", block_close="]"),
)}
