"""The unified prompt-injected format: ``functools[{"name": ..., "arguments": ...}, ...]``.

The trigger ``functools[`` is plain text: free text never spells it, and the DFA tracks a
partial match across token boundaries, so a token that completes it and runs on into the
call (``s[{"``) is handled like any other.
"""

from __future__ import annotations

from ..fsm import lit, seq
from .base import CallFormat, repeat
from .jsonish import call_object

TRIGGER = "functools["


class Functools(CallFormat):
    name = "functools"

    def block(self, tools, vocab, options, symbols):
        calls = repeat(call_object(tools), lit(", "), options)
        return seq(lit(TRIGGER), calls, lit("]")), [TRIGGER.encode()]
