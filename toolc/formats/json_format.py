"""Plain structured output, for engines that want JSON and nothing around it: the bare call
object ``{"name": ..., "arguments": ...}``, or (with parallel calls) a JSON array of them; a
single call may then be written either way. In auto mode the answer is either the calls or
free text that does not begin with ``{`` or ``[``.
"""

from __future__ import annotations

from ..fsm import alt, lit, seq
from .base import CallFormat, first_byte_not, repeat
from .jsonish import call_object


class Json(CallFormat):
    name = "json"
    calls_first = True

    def block(self, tools, vocab, options, symbols):
        obj = call_object(tools)
        if not options.parallel:
            return obj, []
        return alt(obj, seq(lit("["), repeat(obj, lit(", "), options), lit("]"))), []

    def free_text(self, avoid):
        return first_byte_not("{[", avoid)
