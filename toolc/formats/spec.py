"""A custom call format's spec: its keys, its checks, and how its call template splits.

Standard library only: the compiler's framing (:mod:`toolc.formats.custom`) and the parser
(:func:`toolc.parse.parse_custom`) both read a spec through :func:`check_spec`, so a spec the
compiler would refuse is refused by the parser too, with the same :class:`FormatSpecError`.
"""

from __future__ import annotations

from ..errors import FormatSpecError

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
    before, between, _, order = split_template(out["call"])
    if order == "na" and not between:
        raise FormatSpecError(f"{where}, at /call: nothing separates {{name}} from "
                              "{arguments}, so a parser cannot find where the name ends; put "
                              "text between them (e.g. '{name}: {arguments}')")
    if not (out["prefix"] + before).startswith(out["trigger"]):
        raise FormatSpecError(f"{where}, at /trigger: the call block must begin with the "
                              f"trigger {out['trigger']!r}")
    return out
