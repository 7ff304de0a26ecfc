"""The one carrier of compile options: :class:`CompileOptions`.

Built once, from the CLI's flags or from :func:`toolc.compile_tools`'s keyword arguments, and
handed as one value to the compile, to ``--check`` and to ``toolc graph``. Every value is
checked here, when the options are made: a bad one raises
:class:`~toolc.errors.InvalidOptionError` (a ValueError) naming the keyword argument.

Standard library only (the CLI builds options without importing the compiler).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass, fields, replace

from .errors import InvalidOptionError

#: the tokenizer a compile uses when none is named (Qwen3's, shipped in the package)
DEFAULT_TOKENIZER = "qwen"
WHITESPACE_MODES = ("model", "compact", "flexible")
ADDITIONAL_PROPERTIES_MODES = ("closed", "schema")
PROPERTY_ORDERS = ("schema", "any")
#: the flags :func:`object_flags` adds (how objects, and date-time formats, are read)
OBJECT_OPTS = ("additional_properties", "property_order", "leap_seconds")


def object_flags(f):
    """The CLI's ``--additional-properties`` and ``--property-order`` (click, imported here
    only when the CLI builds its commands)."""
    import click
    for flag, modes, text in (
            ("--additional-properties", ADDITIONAL_PROPERTIES_MODES, "closed: an object that "
             "declares properties admits no other keys unless it says so; schema: open unless "
             "additionalProperties closes it (JSON Schema)."),
            ("--property-order", PROPERTY_ORDERS, "schema: keys in the schema's order; any: in "
             "every order (up to 6 properties).")):
        f = click.option(flag, default=modes[0], show_default=True, type=click.Choice(modes),
                         help=text)(f)
    return click.option("--leap-seconds", is_flag=True, help=(
        "date-time and time admit second 60 where RFC 3339 does (23:59:60 UTC); about "
        "11,000 states per field."))(f)
TOOL_CHOICES = ("auto", "required", "none")

#: fields that do not change the artifact's automaton, so its header does not record them
_NOT_IN_HEADER = ("record_time", "timeout")
# recorded in the header only when set, so that artifacts made without them are unchanged
_DEFAULT_UNRECORDED = ("additional_properties", "property_order", "ignore", "leap_seconds")
MAX_DEPTH = 64


def _flag(name: str, value) -> None:
    if not isinstance(value, bool):
        raise InvalidOptionError(name, f"expected True, False or 'open', got {value!r}")


@dataclass(frozen=True)
class CompileOptions:
    """How to compile a tool set. The field order is the order of the header's ``options``
    map (artifacts stay byte-identical), so new fields go at the end.

    * ``format``: a format's name (:data:`toolc.formats.NAMES`) or a
      :class:`~toolc.formats.base.CallFormat` (a custom format from ``load_format_file``).
    * ``tool_choice``: ``auto`` (free text or calls), ``required`` (calls only), ``none``
      (free text only), or one tool's name (checked against the tools when they are read).
    * ``parallel``: several calls in one answer; ``max_calls`` bounds them (None: no bound).
    * ``max_depth``: nesting bound for free-form JSON values and recursive ``$ref``.
    * ``max_states``: the state budget (see :mod:`toolc.budget`).
    * ``whitespace``: ``model`` (json.dumps separators, as chat templates write them),
      ``compact`` (none) or ``flexible`` (any JSON whitespace, at most ``max_whitespace``
      characters in a row).
    * ``lenient``: drop what cannot be enforced (listed in the header's ``not_enforced``)
      instead of refusing it.
    * ``record_time``: record the compile seconds in the header (no longer byte-identical).
    * ``reasoning``: allow a reasoning section first; ``"open"``: the prompt has opened it
      already, so the output starts inside it and must close it.
    * ``timeout``: seconds for the whole compile (None or 0: no deadline).
    * ``additional_properties``: ``closed`` (an object that declares properties admits no
      other keys unless it says so, as strict tool calling expects) or ``schema`` (JSON
      Schema's reading: open unless ``additionalProperties`` closes it; extra keys come after
      the declared ones).
    * ``property_order``: ``schema`` (keys in the schema's order) or ``any`` (every order, for
      objects of up to 6 declared properties; a larger one is refused, naming it).
    * ``ignore``: keywords to drop everywhere, each listed in the header's ``not_enforced``
      (``ignore=("discriminator",)``; the CLI's repeatable ``--ignore``). Recorded in the
      header's ``options`` only when not empty, so artifacts made without it are unchanged.
    * ``leap_seconds``: ``date-time`` and ``time`` admit second 60 where RFC 3339 does (the
      time adjusted to UTC is 23:59:60), exactly; about 11,000 states per such field (see
      :func:`toolc.schema.formats.leap_seconds`). Off: written without it, a narrowing the
      header's notices say per field. Recorded in the header only when set.
    """

    format: object = "hermes"
    tool_choice: str = "auto"
    parallel: bool = True
    max_calls: int | None = None
    max_depth: int = 4
    max_states: int = 200_000
    whitespace: str = "model"
    max_whitespace: int = 4
    lenient: bool = False
    record_time: bool = False
    reasoning: bool | str = False
    timeout: float | None = None
    additional_properties: str = "closed"
    property_order: str = "schema"
    ignore: tuple = ()
    leap_seconds: bool = False

    def __post_init__(self):
        fmt = self.format
        if isinstance(fmt, str):
            from .formats import FORMATS
            if fmt not in FORMATS:
                raise InvalidOptionError("format", f"unknown call format {fmt!r}; known: "
                                                   f"{', '.join(sorted(FORMATS))}")
        elif not isinstance(getattr(fmt, "name", None), str):
            raise InvalidOptionError("format", "expected a format's name or a CallFormat, got "
                                               f"{type(fmt).__name__}")
        if not isinstance(self.tool_choice, str) or not self.tool_choice:
            raise InvalidOptionError("tool_choice", "expected auto, required, none or a "
                                                    f"tool's name, got {self.tool_choice!r}")
        if self.reasoning != "open":
            _flag("reasoning", self.reasoning)
        for name in ("parallel", "lenient", "record_time", "leap_seconds"):
            if not isinstance(getattr(self, name), bool):
                raise InvalidOptionError(name, "expected True or False, got "
                                               f"{getattr(self, name)!r}")
        _count("max_calls", self.max_calls, 1, none_ok=True)
        # deeper than this, even one free-form value needs more states than any budget
        # allows, and the expression builders would run out of stack before saying so
        _count("max_depth", self.max_depth, 0, most=MAX_DEPTH)
        _count("max_states", self.max_states, 1)
        _count("max_whitespace", self.max_whitespace, 1)
        if self.whitespace not in WHITESPACE_MODES:
            raise InvalidOptionError("whitespace", f"{self.whitespace!r} is not supported; use "
                                                   f"one of {', '.join(WHITESPACE_MODES)}")
        if self.additional_properties not in ADDITIONAL_PROPERTIES_MODES:
            raise InvalidOptionError("additional_properties",
                                     f"{self.additional_properties!r} is not supported; use "
                                     f"one of {', '.join(ADDITIONAL_PROPERTIES_MODES)}")
        if self.property_order not in PROPERTY_ORDERS:
            raise InvalidOptionError("property_order",
                                     f"{self.property_order!r} is not supported; use one of "
                                     f"{', '.join(PROPERTY_ORDERS)}")
        ig = self.ignore
        if isinstance(ig, str) or not isinstance(ig, (tuple, list)) \
                or not all(isinstance(k, str) and k for k in ig):
            raise InvalidOptionError("ignore", "expected a list of keyword names, got "
                                               f"{ig!r}")
        object.__setattr__(self, "ignore", tuple(sorted(set(ig))))
        t = self.timeout
        if t is not None and (isinstance(t, bool) or not isinstance(t, (int, float))
                              or not math.isfinite(t) or t < 0):
            raise InvalidOptionError("timeout", f"expected a finite number of seconds, at "
                                                f"least 0 (0 or None: none), got {t!r}")

    @classmethod
    def from_kwargs(cls, options: CompileOptions | None = None, **kwargs) -> CompileOptions:
        """``options`` (or the defaults) with ``kwargs`` replacing fields; an unknown keyword
        is an :class:`InvalidOptionError` naming the known ones."""
        known = {f.name for f in fields(cls)}
        for k in kwargs:
            if k not in known:
                raise InvalidOptionError(k, "not a compile option; known: "
                                            f"{', '.join(sorted(known))}")
        return replace(options, **kwargs) if options is not None else cls(**kwargs)

    @property
    def format_name(self) -> str:
        """The format's name, for a registered or a custom format."""
        return self.format if isinstance(self.format, str) else self.format.name

    def header_options(self) -> dict:
        """The header's ``options`` map: every field that shapes the automaton, in field
        order, the format by name."""
        out = {}
        for f in fields(self):
            if f.name in _DEFAULT_UNRECORDED and getattr(self, f.name) == f.default:
                continue        # artifacts made without the option stay byte-identical
            if f.name not in _NOT_IN_HEADER:
                out[f.name] = self.format_name if f.name == "format" else getattr(self, f.name)
        if "ignore" in out:
            out["ignore"] = list(out["ignore"])
        return out


#: how option names are written in messages: as keyword arguments unless the CLI said so
_spelling = {"style": "python"}


def use_cli_spelling() -> Callable[[], None]:
    """Messages from here on name options as the CLI's flags (``--lenient``); returns the
    function that restores the previous spelling (the CLI calls it when its command ends, so
    a program that runs the CLI in-process keeps keyword-argument messages afterwards)."""
    before = _spelling["style"]
    _spelling["style"] = "cli"
    return lambda: _spelling.update(style=before)


def spelled(name: str, value=True) -> str:
    """An option as the user gave it: ``lenient=True`` from Python, ``--lenient`` from the
    CLI; ``spelled("ignore", "x")`` is ``ignore=['x']`` or ``--ignore x``;
    ``spelled("max_states", None)`` (the option itself) is ``max_states`` or
    ``--max-states``."""
    if _spelling["style"] == "cli":
        flag = "--" + name.replace("_", "-")
        return flag if value is True or value is None else f"{flag} {value}"
    if value is None:
        return name
    return f"{name}={[value]!r}" if name == "ignore" else f"{name}={value!r}"


def with_option_keywords(func, leading: list[inspect.Parameter]):
    """Give ``func`` (which takes ``**kwargs`` of compile options) the signature that
    ``help()`` and editors show: ``leading`` parameters, then every CompileOptions field as a
    keyword argument with its default. The fields are written once, in the dataclass."""
    kw = [inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default,
                            annotation=f.type) for f in fields(CompileOptions)]
    func.__signature__ = inspect.Signature(leading + kw)
    return func


def _count(name: str, value, least: int, none_ok: bool = False,
           most: int | None = None) -> None:
    if value is None and none_ok:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < least \
            or (most is not None and value > most):
        upto = f" and at most {most}" if most is not None else ""
        raise InvalidOptionError(name, f"expected an integer of at least {least}{upto}, got "
                                       f"{value!r}")
