"""The JSON call object most formats share: ``{"name": "NAME", "arguments": ARGS}``.

Written as ``json.dumps`` writes it (the chat templates' ``tojson``): ``", "`` and ``": "``.
"""

from __future__ import annotations

from ..fsm import Bytes, Expr, Repeat, alt_factored, byte_set, lit, seq
from .base import json_name

ALNUM = Bytes(byte_set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"))


def call_object(tools, args_key: str = "arguments", extra: Expr | None = None) -> Expr:
    """``{"name": N, "<args_key>": ARGS[, extra]}`` for any of ``tools``."""
    tail = lit("}") if extra is None else seq(extra, lit("}"))
    return alt_factored(*(seq(lit('{"name": ' + json_name(t.name) + ', "' + args_key + '": '),
                              args, tail)
                          for t, args in tools))


def call_id(length: int = 9) -> Expr:
    """``, "id": "XXXXXXXXX"``: Mistral's call id, ``length`` ASCII letters and digits."""
    return seq(lit(', "id": "'), Repeat(ALNUM, length, length), lit('"'))
