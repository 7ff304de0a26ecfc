"""The JSON-argument families with their own framing (DeepSeek V3 and V3.1, Kimi K2, EXAONE,
Granite): each call is a name and the arguments object as JSON, between the bytes of its
:class:`~toolc.formats.framedstyle.FramedStyle`.

The arguments spell none of the format's tags in ordinary tokens (a string holding
``<｜tool▁call▁end｜>`` would end the call for the vendors' parsers), and free text never spells
the trigger. Where the call id counts the calls (Kimi K2's ``functions.NAME:IDX``), the block is
unrolled per index, so the number of calls must be bounded: ``max_calls``, or one call without
``parallel``.
"""

from __future__ import annotations

from ..errors import UnsupportedSchemaError
from ..fsm import alt_factored, lit, seq
from .base import CallFormat, numbered, repeat, text
from .closure import Closer
from .framedstyle import STYLES, FramedStyle
from .tagged import check_name


class Framed(CallFormat):
    style: FramedStyle

    def block(self, tools, vocab, options, symbols):
        st = self.style
        avoid = tuple(t.encode("utf-8") for t in st.closers())
        bodies, closer = [], Closer(avoid)
        for tool, args in tools:
            check_name("tool name", tool.name, tool, f"{tool.pointer}/name", st.name)
            bad = next((c for c in st.name_forbids if c in tool.name), None)
            if bad:
                raise UnsupportedSchemaError(
                    f"tool name {tool.name!r} cannot be written in the {st.name} format: it "
                    f"holds {bad!r}, which ends the name there", tool=tool.name,
                    pointer=f"{tool.pointer}/name", fix="rename the tool")
            bodies.append((tool, closer.close(args, tool, st.name)))

        def call(i: int):
            return alt_factored(*(seq(text(vocab, st.at(st.call_open, i), symbols),
                                      lit(t.name), text(vocab, st.at(st.name_end, i), symbols),
                                      a, text(vocab, st.call_close, symbols))
                                  for t, a in bodies))

        sep = text(vocab, st.call_sep, symbols)
        calls = numbered(call, sep, options, st.name) if st.counted else \
            repeat(call(0), sep, options)
        block = seq(text(vocab, st.block_open, symbols), calls,
                    text(vocab, st.block_close, symbols))
        return block, [st.trigger.encode("utf-8"), *avoid]


def _make(name: str) -> type:
    return type(name.title().replace("-", "").replace(".", ""), (Framed,),
                {"name": name, "style": STYLES[name]})


DeepseekV3 = _make("deepseek-v3")
DeepseekV31 = _make("deepseek-v3.1")
KimiK2 = _make("kimi-k2")
Exaone = _make("exaone")
Granite = _make("granite")
