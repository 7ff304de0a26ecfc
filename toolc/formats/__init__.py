"""Native call formats: one module each, and the one registry of their names.

A format frames the tools' argument automata the way the model family writes a call, and names
the special-token symbols it uses (:class:`~toolc.formats.base.CallFormat`). :data:`FORMATS`
is the only list of format names: the CLI's choices, ``toolc.parse``'s parsers and
:func:`get_format` all read it. This module is standard library only and imports a format's
module (which builds automata) only when that format is asked for, so ``toolc --help`` and
the parser stay light.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass


@dataclass(frozen=True)
class FormatInfo:
    """One registered format: its name, the class that frames it (``module:Class`` under
    :mod:`toolc.formats`), the :mod:`toolc.parse` function that reads it back, and who
    writes it."""

    name: str
    framing: str
    parser: str
    models: str
    #: the reasoning section's (open, close) tags, as the framing writes and the parser reads
    think: tuple[str, str] = ("<think>", "</think>")

    def load(self) -> type:
        """The :class:`~toolc.formats.base.CallFormat` subclass (imports its module)."""
        module, cls = self.framing.split(":")
        return getattr(importlib.import_module(f"{__name__}.{module}"), cls)


FORMATS: dict[str, FormatInfo] = {i.name: i for i in (
    FormatInfo("hermes", "hermes:Hermes", "parse_hermes", "Qwen2.5, Qwen3, Hermes 2/3"),
    FormatInfo("qwen3-coder", "qwen3_coder:Qwen3Coder", "parse_qwen3_coder", "Qwen3-Coder"),
    FormatInfo("mistral", "mistral:Mistral", "parse_mistral",
               "Mistral (SentencePiece v3, tekken v3-v7, v11+ args form)",
               ("[THINK]", "[/THINK]")),
    FormatInfo("phi4-mini", "phi4_mini:Phi4Mini", "parse_phi4_mini", "Phi-4-mini"),
    FormatInfo("functools", "functools_format:Functools", "parse_functools",
               "prompt-injected functools[...] (any model)"),
    FormatInfo("llama3-json", "llama3_json:Llama3Json", "parse_llama3_json",
               "Llama 3.1, 3.2 (JSON calls)"),
    FormatInfo("pythonic", "pythonic:Pythonic", "parse_pythonic",
               "Llama 3.2, Llama 4 (pythonic calls)"),
    FormatInfo("tooldec", "tooldec:ToolDec", "parse_tooldec", "the ToolDec paper's form"),
    FormatInfo("json", "json_format:Json", "parse_json", "plain JSON structured output"),
    FormatInfo("mimo", "tagged:Mimo", "parse_tagged", "MiMo-V2.6"),
    FormatInfo("seed-oss", "tagged:SeedOss", "parse_tagged", "Seed-OSS",
               ("<seed:think>", "</seed:think>")),
    FormatInfo("glm-4.5", "tagged:Glm45", "parse_tagged", "GLM-4.5, GLM-4.6"),
    FormatInfo("glm-4.7", "tagged:Glm47", "parse_tagged", "GLM-4.7, GLM-5, GLM-5.3"),
    FormatInfo("minimax-m2", "tagged:MinimaxM2", "parse_tagged",
               "MiniMax-M2, M2.5, M2.7"),
    FormatInfo("minimax-m3", "tagged:MinimaxM3", "parse_tagged", "MiniMax-M3",
               ("<mm:think>", "</mm:think>")),
    FormatInfo("deepseek-v3.2", "tagged:DeepseekV32", "parse_tagged",
               "DeepSeek V3.2 (DSML)"),
    FormatInfo("deepseek-v4", "tagged:DeepseekV4", "parse_tagged", "DeepSeek V4 (DSML)"),
    FormatInfo("deepseek-v3", "framed:DeepseekV3", "parse_framed",
               "DeepSeek V3, V3-0324, R1"),
    FormatInfo("deepseek-v3.1", "framed:DeepseekV31", "parse_framed",
               "DeepSeek V3.1, V3.2-Exp"),
    FormatInfo("kimi-k2", "framed:KimiK2", "parse_framed", "Kimi K2, K2.5, K2-Thinking"),
    FormatInfo("kimi-k3", "kimi_k3:KimiK3", "parse_kimi_k3", "Kimi K3 (XTML)",
               ("<|open|>think<|sep|>", "<|close|>think<|sep|>")),
    FormatInfo("exaone", "framed:Exaone", "parse_framed", "EXAONE 4"),
    FormatInfo("granite", "framed:Granite", "parse_framed", "Granite 3.1+"),
    FormatInfo("cohere", "cohere:Cohere", "parse_cohere", "Cohere Command A (CMD4)",
               ("<|START_THINKING|>", "<|END_THINKING|>")),
    FormatInfo("harmony", "harmony:Harmony", "parse_harmony", "gpt-oss (harmony)"),
    FormatInfo("gemma4", "gemma4:Gemma4", "parse_gemma4", "Gemma 4",
               ("<|channel>thought\n", "<channel|>")),
)}

#: every registered format's name, in registry order
NAMES: tuple[str, ...] = tuple(FORMATS)


def get_format(name):
    """A format by name, or ``name`` itself when it is already a
    :class:`~toolc.formats.base.CallFormat` (a custom format from :func:`load_format_file`).
    Raises :class:`~toolc.errors.InvalidOptionError` (a ValueError) for an unknown name."""
    from .base import CallFormat

    if isinstance(name, CallFormat):
        return name
    info = FORMATS.get(name) if isinstance(name, str) else None
    if info is None:
        from ..errors import InvalidOptionError
        raise InvalidOptionError("format", f"unknown call format {name!r}; known: "
                                           f"{', '.join(sorted(FORMATS))}")
    return info.load()()


def __getattr__(attr: str):
    """The framing classes and helpers, imported on first use (``toolc.formats.CallFormat``,
    ``Custom``, ``load_format_file``, ``FormatOptions``)."""
    lazy = {"CallFormat": "base", "FormatOptions": "base", "Custom": "custom",
            "load_format_file": "custom", "check_spec": "custom"}
    if attr in lazy:
        return getattr(importlib.import_module(f"{__name__}.{lazy[attr]}"), attr)
    if attr == "FormatSpecError":
        from ..errors import FormatSpecError
        return FormatSpecError
    raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")


__all__ = ["FORMATS", "NAMES", "FormatInfo", "get_format", "CallFormat", "FormatOptions",
           "Custom", "FormatSpecError", "load_format_file"]
