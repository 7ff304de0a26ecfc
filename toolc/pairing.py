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
    ``proof``: what the tests check the format's bytes against (a renderer, a vendor
    parser, the facts sheet, or toolc's own spec), ``proved_by`` names it exactly, and
    ``evidence`` is (test file, a text that file must hold): tests/test_pairing.py checks
    that each claim has its test."""

    tokenizer: str | None
    atomic: tuple[str, ...] = ()
    proof: str = SHEET
    family: str = ""
    proved_by: str = "the bytes of formats-2026.md section 2"
    evidence: tuple[str, str] = ()

    @property
    def proof_text(self) -> str:
        """The proof column: its kind and exactly what."""
        return f"{self.proof}: {self.proved_by}"


_DS_CALLS = tuple(f"<\uff5c{m}\uff5c>".replace(" ", "\u2581") for m in (
    "tool calls begin", "tool calls end", "tool call begin", "tool call end", "tool sep"))
_HARMONY = ("<|start|>", "<|end|>", "<|message|>", "<|channel|>", "<|constrain|>", "<|call|>",
            "<|return|>")

_SHEET_TAGGED = ("tests/test_formats_tagged.py", "facts sheet")


def _read_by(vllm: str, sglang: str | None = None) -> str:
    """A vendor-parser proof: the parsers that read the format's sampled outputs as toolc
    does (tests/test_vendor_parsers.py, in the vendors' own virtualenv)."""
    also = f" and SGLang 0.5.23's `{sglang}`" if sglang else ""
    return f"vLLM 0.33.0's `{vllm}`{also} read its sampled outputs as toolc does"


def _cases(name: str) -> tuple[str, str]:
    return ("tests/vendor_cases.py", f'"{name}": ["')

_SHEET_FRAMED = ("tests/test_formats_framed.py", "facts sheet")

PAIRINGS: dict[str, Pairing] = {
    # formats registered today; a proof claim holds only what a test on this branch checks
    "hermes": Pairing("qwen3", ("<tool_call>", "</tool_call>"), RENDERER, "Qwen",
                      "Qwen3's chat template (toolc's data/qwen3) through jinja2",
                      ("tests/test_formats_framing.py", "QWEN.chat_template")),
    "qwen3-coder": Pairing("qwen3", ("<tool_call>", "</tool_call>"), VENDOR_PARSER, "Qwen",
                          _read_by("qwen3_coder", "qwen3_coder"), _cases("qwen3-coder")),
    "mistral": Pairing("mistral", ("[TOOL_CALLS]",), RENDERER, "Mistral",
                       "mistral-common 1.13.1's encoders (tekken v3 and SentencePiece v3)",
                       ("tests/test_formats_framing.py", "mistral_common")),
    "phi4-mini": Pairing(None, ("<|tool_call|>", "<|/tool_call|>"), SHEET, "Phi-4-mini",
                         "llguidance docs/toolcalls.md as quoted there",
                         ("tests/format_helpers.py", "phi4-mini")),
    "functools": Pairing(None, (), VENDOR_PARSER, "",
                        _read_by("phi4_mini_json"), _cases("functools")),
    "llama3-json": Pairing("llama3", (), VENDOR_PARSER, "Llama 3",
                          _read_by("llama3_json", "llama3"), _cases("llama3-json")),
    "pythonic": Pairing("llama4", (), RENDERER, "Llama 4",
                        "llama-models 0.3.0's Llama 3 ChatFormat (one call, Llama 3 tokenizer)",
                        ("tests/test_tokenizer_ranks.py", "ChatFormat")),
    "tooldec": Pairing(None, (), OWN, "", "toolc's own definition (formats/tooldec.py)",
                       ("tests/format_helpers.py", "tooldec")),
    "json": Pairing(None, (), OWN, "", "toolc's own definition (formats/json_format.py)",
                    ("tests/format_helpers.py", '"json"')),
    # the 2026 families (facts sheet section 1)
    "harmony": Pairing("gpt-oss", _HARMONY, RENDERER, "gpt-oss",
                       "openai-harmony 0.0.8's renderer on the shipped o200k_harmony file",
                       ("tests/test_formats_harmony.py", "openai_harmony")),
    "deepseek-v3": Pairing("deepseek", _DS_CALLS, VENDOR_PARSER, "DeepSeek",
                          _read_by("deepseek_v3", "deepseekv3"), _cases("deepseek-v3")),
    "deepseek-v3.1": Pairing("deepseek", _DS_CALLS, VENDOR_PARSER, "DeepSeek",
                            _read_by("deepseek_v31", "deepseekv31"), _cases("deepseek-v3.1")),
    "deepseek-v3.2": Pairing("deepseek", ("\uff5cDSML\uff5c",), VENDOR_PARSER, "DeepSeek",
                            _read_by("deepseek_v32", "deepseekv32"), _cases("deepseek-v3.2")),
    "deepseek-v4": Pairing("deepseek", ("\uff5cDSML\uff5c",), VENDOR_PARSER, "DeepSeek",
                          _read_by("deepseek_v4", "deepseekv4"), _cases("deepseek-v4")),
    "kimi-k2": Pairing(None, ("<|tool_calls_section_begin|>", "<|tool_calls_section_end|>",
                              "<|tool_call_begin|>", "<|tool_call_argument_begin|>",
                              "<|tool_call_end|>"), VENDOR_PARSER, "Kimi",
                      _read_by("kimi_k2", "kimi_k2"), _cases("kimi-k2")),
    "kimi-k3": Pairing(None, ("<|open|>", "<|close|>", "<|sep|>"), VENDOR_PARSER, "Kimi",
                       _read_by("kimi_k3", "kimi_k3"), _cases("kimi-k3")),
    "glm-4.5": Pairing(None, ("<tool_call>", "</tool_call>"), VENDOR_PARSER, "GLM",
                      _read_by("glm45", "glm45"), _cases("glm-4.5")),
    "glm-4.7": Pairing(None, ("<tool_call>", "</tool_call>"), VENDOR_PARSER, "GLM",
                      _read_by("glm47", "glm47"), _cases("glm-4.7")),
    "minimax-m2": Pairing(None, ("<minimax:tool_call>", "</minimax:tool_call>"), VENDOR_PARSER,
                          "MiniMax",
                         _read_by("minimax_m2", "minimax-m2"), _cases("minimax-m2")),
    "minimax-m3": Pairing(None, (), VENDOR_PARSER, "MiniMax",
                          _read_by("minimax_m3", "minimax-m3"), _cases("minimax-m3")),
    "mimo": Pairing(None, (), VENDOR_PARSER, "MiMo",
                   _read_by("mimo", "mimo"), _cases("mimo")),
    "seed-oss": Pairing(None, (), VENDOR_PARSER, "Seed-OSS",
                       _read_by("seed_oss"), _cases("seed-oss")),
    "granite": Pairing(None, (), VENDOR_PARSER, "Granite",
                      _read_by("granite"), _cases("granite")),
    "cohere": Pairing(None, (), RENDERER, "Cohere",
                      "cohere_melody 0.15.3's render_cmd4, and its parser PyFilter.cmd4; "
                      + _read_by("cohere_command4", "cohere_command4"),
                      ("tests/test_formats_cohere.py", "cohere_melody")),
    "exaone": Pairing(None, (), SHEET, "EXAONE", evidence=_SHEET_FRAMED),
    "gemma4": Pairing(None, ("<|tool_call>", "<tool_call|>"), VENDOR_PARSER, "Gemma 4",
                     _read_by("gemma4", "gemma4"), _cases("gemma4")),
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
