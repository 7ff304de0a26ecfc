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
* ``{index}`` in ``call`` (optional) is the call's number in the block, 0, 1, ...; such a
  format needs ``max_calls`` (or no parallel calls), as the count is unrolled.
* Only ``call`` is required; ``name`` defaults to ``"custom"``.
"""

from __future__ import annotations

import os

from ..errors import FormatSpecError
from ..fsm import alt_factored, lit, seq
from .base import CallFormat, numbered, plain_parts, repeat, text
from .spec import KEYS, check_spec, split_template  # noqa: F401  (KEYS: re-exported)

def load_format_file(path: str | os.PathLike) -> "Custom":
    from ..inputs import MAX_SPEC_BYTES, read_json_file
    from ..runtime.files import shown
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
        # the parser finds a name's end by the text that follows it
        ends = [between] if order == "na" else \
            [after] if after else [x for x in (sp["separator"], sp["suffix"]) if x]
        ends = [p for e in ends for p in e.split("{index}")[:1] if p] or \
            [p for e in ends for p in e.split("{index}")[1:2] if p]
        for t, args in tools:
            bad = next((e for e in ends if e in t.name), None)
            if bad is not None:
                from ..errors import UnsupportedSchemaError
                raise UnsupportedSchemaError(
                    f"tool name {t.name!r} holds {bad!r}, where format {sp['name']!r} looks for "
                    "the end of the name", tool=t.name, pointer=f"{t.pointer}/name",
                    fix="rename the tool")
            calls.append((t, args))

        def call(i: int):
            def at(s):
                return text(vocab, s.replace("{index}", str(i)), symbols)
            return alt_factored(*(
                seq(at(before), *((lit(t.name), at(between), a) if order == "na" else
                                  (a, at(between), lit(t.name))), at(after))
                for t, a in calls))

        sep = text(vocab, sp["separator"], symbols)
        body = numbered(call, sep, options, sp["name"]) if "{index}" in sp["call"] else \
            repeat(call(0), sep, options)
        block = seq(text(vocab, sp["prefix"], symbols), body, text(vocab, sp["suffix"], symbols))
        return block, plain_parts(vocab, sp["trigger"])
