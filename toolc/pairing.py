"""A format is the pair (framing, tokenizer): which tokenizer each call format is compiled with
by default, which of its markers must be atomic tokens of that tokenizer, and what proves the
format's bytes. Standard library only (``toolc formats`` and the CLI read it).

The table may name formats this build does not register yet; only registered formats are
listed by ``toolc formats``. Facts come from the facts sheet (formats-2026.md: the "Atomic
markers" column, and which tokenizers a package registry ships); "no registry" means no
package registry ships that family's tokenizer, so ``--tokenizer`` must name the user's own
file (a ``tokenizer.json``, a tiktoken rank file, a SentencePiece model).
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import TokenizerError

RENDERER, VENDOR_PARSER, SHEET = "renderer", "vendor parser", "facts sheet"
OWN = "toolc's own spec"     # a format no model family owns (its bytes are defined here)


@dataclass(frozen=True)
class Pairing:
    """``tokenizer``: the built-in alias compiled with by default (None: no registry ships
    the family's tokenizer); ``atomic``: markers the tokenizer must have as added tokens;
    ``proof``: what the tests check the format's bytes against."""

    tokenizer: str | None
    atomic: tuple[str, ...] = ()
    proof: str = SHEET
    family: str = ""


_DS_CALLS = tuple(f"<\uff5c{m}\uff5c>".replace(" ", "\u2581") for m in (
    "tool calls begin", "tool calls end", "tool call begin", "tool call end", "tool sep"))
_HARMONY = ("<|start|>", "<|end|>", "<|message|>", "<|channel|>", "<|constrain|>", "<|call|>",
            "<|return|>")

PAIRINGS: dict[str, Pairing] = {
    # formats registered today
    "hermes": Pairing("qwen3", ("<tool_call>", "</tool_call>"), RENDERER, "Qwen"),
    "qwen3-coder": Pairing("qwen3", ("<tool_call>", "</tool_call>"), RENDERER, "Qwen"),
    "mistral": Pairing("mistral", ("[TOOL_CALLS]",), RENDERER, "Mistral"),
    "phi4-mini": Pairing(None, ("<|tool_call|>", "<|/tool_call|>"), SHEET, "Phi-4-mini"),
    "functools": Pairing(None, (), SHEET),
    "llama3-json": Pairing("llama3", (), SHEET, "Llama 3"),
    # pythonic: llama-models' Llama 3 ChatFormat (tests/test_tokenizer_ranks.py)
    "pythonic": Pairing("llama4", (), RENDERER, "Llama 4"),
    "tooldec": Pairing(None, (), OWN),
    "json": Pairing(None, (), OWN),
    # the 2026 families (facts sheet section 1)
    "harmony": Pairing("gpt-oss", _HARMONY, RENDERER, "gpt-oss"),
    "deepseek-v3": Pairing("deepseek", _DS_CALLS, VENDOR_PARSER, "DeepSeek"),
    "deepseek-v3.1": Pairing("deepseek", _DS_CALLS, VENDOR_PARSER, "DeepSeek"),
    "deepseek-v3.2": Pairing("deepseek", ("\uff5cDSML\uff5c",), RENDERER, "DeepSeek"),
    "deepseek-v4": Pairing("deepseek", ("\uff5cDSML\uff5c",), SHEET, "DeepSeek"),
    "kimi-k2": Pairing(None, ("<|tool_calls_section_begin|>", "<|tool_calls_section_end|>",
                              "<|tool_call_begin|>", "<|tool_call_argument_begin|>",
                              "<|tool_call_end|>"), SHEET, "Kimi"),
    "kimi-k3": Pairing(None, ("<|open|>", "<|close|>", "<|sep|>"), VENDOR_PARSER, "Kimi"),
    "glm-4.5": Pairing(None, ("<tool_call>", "</tool_call>"), VENDOR_PARSER, "GLM"),
    "glm-4.7": Pairing(None, ("<tool_call>", "</tool_call>"), VENDOR_PARSER, "GLM"),
    "minimax-m2": Pairing(None, ("<minimax:tool_call>", "</minimax:tool_call>"), VENDOR_PARSER,
                          "MiniMax"),
    "mimo": Pairing(None, (), SHEET, "MiMo"),
    "seed-oss": Pairing(None, (), VENDOR_PARSER, "Seed-OSS"),
    "granite": Pairing(None, (), VENDOR_PARSER, "Granite"),
    "cohere": Pairing(None, (), VENDOR_PARSER, "Cohere"),
    # no vLLM 0.33 or SGLang 0.5.23 parser reads EXAONE 4 by name (tests/vendor_cases.py)
    "exaone": Pairing(None, (), SHEET, "EXAONE"),
    "gemma4": Pairing(None, ("<|tool_call>", "<tool_call|>"), VENDOR_PARSER, "Gemma 4"),
}

#: the tokenizer a format with no pairing entry, or none of its own, compiles with
FALLBACK_TOKENIZER = "qwen"


def pairing(format_name: str) -> Pairing:
    return PAIRINGS.get(format_name, Pairing(None))


def default_tokenizer(format_name: str) -> str:
    """The tokenizer ``toolc compile --format F`` uses when ``--tokenizer`` is not given.

    A format whose family's tokenizer no registry ships, and whose markers must be atomic,
    has none: that is an error naming ``--tokenizer``."""
    p = pairing(format_name)
    if p.tokenizer is not None:
        return p.tokenizer
    if p.atomic:
        raise TokenizerError(
            f"the {format_name} format needs {p.family}'s tokenizer (atomic markers "
            f"{', '.join(p.atomic)}), which no package registry ships, so toolc has no built-in "
            f"one: pass --tokenizer PATH (the model's tokenizer.json, tiktoken rank file or "
            f"SentencePiece model)")
    return FALLBACK_TOKENIZER


def missing_markers(format_name: str, added) -> list[str]:
    """The atomic markers of ``format_name`` that are not among ``added`` (spellings)."""
    return [m for m in pairing(format_name).atomic if m not in added]


def check_pairing(format_name: str, vocab) -> None:
    """Refuse a tokenizer that lacks the format's atomic markers, naming them: compiled with
    it, the markers would be matched as plain text the model never writes."""
    missing = missing_markers(format_name, vocab.added)
    if missing:
        p = pairing(format_name)
        hint = (f"use --tokenizer {p.tokenizer}" if p.tokenizer else
                f"pass --tokenizer PATH to {p.family}'s own tokenizer file (no package "
                "registry ships it)")
        raise TokenizerError(
            f"the {format_name} format needs the atomic marker"
            f"{'s' if len(missing) > 1 else ''} {', '.join(missing)}, which tokenizer "
            f"{vocab.name!r} does not have as added tokens; {hint}")
