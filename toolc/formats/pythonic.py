"""Pythonic tool calls (Llama 3.2 / Llama 4 style): ``[get_weather(city='Paris', unit='celsius'),
...]``, a Python list of calls with keyword arguments written as Python literals (``repr``).

The calls are the whole answer, so in auto mode the answer is either free text, which may not
begin with ``[``, or the list. Keyword arguments come in schema order; optional ones may be
left out.
"""

from __future__ import annotations

from ..fsm import alt_factored, lit, seq
from .base import CallFormat, first_byte_not, repeat
from .pyvalues import check_identifier, SEP, keyword_args


class Pythonic(CallFormat):
    name = "pythonic"
    calls_first = True

    def block(self, tools, vocab, options, symbols):
        for t, _ in tools:
            check_identifier("tool name", t.name, t, f"{t.pointer}/name", self.name)
        call = alt_factored(*(seq(lit(f"{t.name}("), keyword_args(t, options), lit(")"))
                     for t, _ in tools))
        return seq(lit("["), repeat(call, SEP, options), lit("]")), []

    def free_text(self, avoid):
        return first_byte_not("[", avoid)
