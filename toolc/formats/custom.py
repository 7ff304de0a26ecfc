"""A call format described by a small spec file (``toolc compile --format-file spec.json``).

Example, a format that writes ``<calls>{"tool": "NAME", "args": {...}} | {...}</calls>``::

    {
      "name": "my-format",
      "trigger": "<calls>",
      "prefix": "<calls>",
      "call": "{\"tool\": \"{name}\", \"args\": {arguments}}",
      "separator": " | ",
      "suffix": "</calls>"
    }

* ``call`` holds ``{name}`` and ``{arguments}`` once each; ``{arguments}`` is the arguments
  object as JSON (``json.dumps``), ``{name}`` the tool's name; everything else is literal.
* The call block is ``prefix call (separator call)* suffix``, then EOS.
* ``trigger`` (default: ``prefix``) starts tool mode: the block must begin with it, and free
  text never spells it. Any added token of the tokenizer spelled in these strings is that
  special token; the rest is plain text, matched across token boundaries.
* Only ``call`` is required; ``name`` defaults to ``"custom"``.
"""

from __future__ import annotations

import os

from ..errors import FormatSpecError
from ..fsm import alt_factored, lit, seq
from .base import CallFormat, plain_parts, repeat, text
from .spec import KEYS, check_spec, split_template  # noqa: F401  (KEYS: re-exported)

def load_format_file(path: str | os.PathLike) -> "Custom":
    from ..inputs import MAX_SPEC_BYTES, read_json_file
    from ..runtime.artifact import shown
    path = os.fspath(path)
    def error(reason):
        if not reason.startswith(("cannot read", "larger")) and "bytes is larger" not in reason:
            reason = f"the format spec is not valid JSON ({reason})"
        return FormatSpecError(f"{shown(path)}: {reason}")
    spec = read_json_file(path, "format spec", MAX_SPEC_BYTES, error)
    return Custom(check_spec(spec, path))


class Custom(CallFormat):
    """A format from a spec (see the module docstring)."""

    def __init__(self, spec: dict):
        self.spec = check_spec(spec)
        self.name = self.spec["name"]

    def block(self, tools, vocab, options, symbols):
        sp = self.spec
        before, between, after, order = split_template(sp["call"])
        calls = []
        for t, args in tools:
            first, second = (lit(t.name), args) if order == "na" else (args, lit(t.name))
            calls.append(seq(text(vocab, before, symbols), first, text(vocab, between, symbols),
                             second, text(vocab, after, symbols)))
        block = seq(text(vocab, sp["prefix"], symbols),
                    repeat(alt_factored(*calls), text(vocab, sp["separator"], symbols), options),
                    text(vocab, sp["suffix"], symbols))
        return block, plain_parts(vocab, sp["trigger"])
