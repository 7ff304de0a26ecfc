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

import json
import os

from ..errors import FormatSpecError
from ..fsm import alt_factored, lit, seq
from .base import CallFormat, plain_parts, repeat, text

KEYS = ("name", "trigger", "prefix", "call", "separator", "suffix")


def split_template(call: str) -> tuple[str, str, str, str]:
    """``(before, between, after, order)`` where order is ``"na"`` when ``{name}`` comes
    before ``{arguments}``, ``"an"`` otherwise."""
    i, j = call.find("{name}"), call.find("{arguments}")
    if i < 0 or j < 0 or call.count("{name}") != 1 or call.count("{arguments}") != 1:
        raise ValueError("'call' must hold {name} and {arguments} exactly once each")
    if i < j:
        return call[:i], call[i + 6:j], call[j + 11:], "na"
    return call[:j], call[j + 11:i], call[i + 6:], "an"


def check_spec(spec, where: str = "format spec") -> dict:
    """Validate a spec value; return it with defaults filled in."""
    if not isinstance(spec, dict):
        raise FormatSpecError(f"{where}: expected a JSON object")
    for k in spec:
        if k not in KEYS:
            raise FormatSpecError(f"{where}, at /{k}: unknown key (known: {', '.join(KEYS)})")
    for k, v in spec.items():
        if not isinstance(v, str):
            raise FormatSpecError(f"{where}, at /{k}: expected a string")
    if "call" not in spec:
        raise FormatSpecError(f"{where}: missing 'call', the template of one call "
                              "(with {name} and {arguments})")
    try:
        split_template(spec["call"])
    except ValueError as e:
        raise FormatSpecError(f"{where}, at /call: {e}") from None
    out = {"name": "custom", "prefix": "", "separator": "", "suffix": ""}
    out.update(spec)
    out.setdefault("trigger", out["prefix"])
    if not out["trigger"]:
        raise FormatSpecError(f"{where}, at /trigger: a non-empty trigger is needed (or a "
                              "prefix, which it defaults to) so free text and calls can be told "
                              "apart")
    before = split_template(out["call"])[0]
    if not (out["prefix"] + before).startswith(out["trigger"]):
        raise FormatSpecError(f"{where}, at /trigger: the call block must begin with the "
                              f"trigger {out['trigger']!r}")
    return out


def load_format_file(path: str | os.PathLike) -> "Custom":
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as fh:
            spec = json.load(fh)
    except OSError as e:
        raise FormatSpecError(f"{path}: cannot read the format spec: {e.strerror}") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise FormatSpecError(f"{path}: the format spec is not valid JSON ({e})") from None
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
