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
from dataclasses import dataclass, fields, replace

from .errors import InvalidOptionError

#: the tokenizer a compile uses when none is named (Qwen3's, shipped in the package)
DEFAULT_TOKENIZER = "qwen"
WHITESPACE_MODES = ("model", "compact", "flexible")
ADDITIONAL_PROPERTIES_MODES = ("closed", "schema")
PROPERTY_ORDERS = ("schema", "any")
TOOL_CHOICES = ("auto", "required", "none")

#: fields that do not change the artifact's automaton, so its header does not record them
_NOT_IN_HEADER = ("record_time", "timeout")


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
    * ``reasoning``: allow a reasoning section first.
    * ``timeout``: seconds for the whole compile (None or 0: no deadline).
    * ``additional_properties``: ``closed`` (an object that declares properties admits no
      other keys unless it says so, as strict tool calling expects) or ``schema`` (JSON
      Schema's reading: open unless ``additionalProperties`` closes it; extra keys come after
      the declared ones).
    * ``property_order``: ``schema`` (keys in the schema's order) or ``any`` (every order, for
      objects of up to 6 declared properties; a larger one is refused, naming it).
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
    reasoning: bool = False
    timeout: float | None = None
    additional_properties: str = "closed"
    property_order: str = "schema"

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
        for name in ("parallel", "lenient", "record_time", "reasoning"):
            if not isinstance(getattr(self, name), bool):
                raise InvalidOptionError(name, "expected True or False, got "
                                               f"{getattr(self, name)!r}")
        _count("max_calls", self.max_calls, 1, none_ok=True)
        _count("max_depth", self.max_depth, 0)
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
        t = self.timeout
        if t is not None and (isinstance(t, bool) or not isinstance(t, (int, float))
                              or math.isnan(t) or t < 0):
            raise InvalidOptionError("timeout", f"expected a number of seconds, at least 0 "
                                                f"(0 or None: none), got {t!r}")

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
            if f.name not in _NOT_IN_HEADER:
                out[f.name] = self.format_name if f.name == "format" else getattr(self, f.name)
        return out


def with_option_keywords(func, leading: list[inspect.Parameter]):
    """Give ``func`` (which takes ``**kwargs`` of compile options) the signature that
    ``help()`` and editors show: ``leading`` parameters, then every CompileOptions field as a
    keyword argument with its default. The fields are written once, in the dataclass."""
    kw = [inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default,
                            annotation=f.type) for f in fields(CompileOptions)]
    func.__signature__ = inspect.Signature(leading + kw)
    return func


def _count(name: str, value, least: int, none_ok: bool = False) -> None:
    if value is None and none_ok:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise InvalidOptionError(name, f"expected an integer of at least {least}, got "
                                       f"{value!r}")
