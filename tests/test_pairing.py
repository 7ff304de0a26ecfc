"""A format is the pair (framing, tokenizer): each format's default tokenizer, the refusal of
a tokenizer that lacks the format's atomic markers, ``toolc formats``, and a compile of
schemas/weather.json with each new tokenizer alias for a format it pairs with, whose rendered
call (tokenized by that tokenizer) the artifact accepts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import toolc
from toolc.cli import main
from toolc.errors import TokenizerError
from toolc.formats import FORMATS
from toolc.formats.custom import Custom
from toolc.pairing import PAIRINGS, check_pairing, default_tokenizer, missing_markers
from toolc.tokenizer import builtin_names, load_vocabulary

from helpers import accepts_all

WEATHER = Path(__file__).resolve().parent.parent / "schemas" / "weather.json"


def test_every_registered_format_has_a_pairing():
    assert set(FORMATS) <= set(PAIRINGS)


@pytest.mark.parametrize("fmt", sorted(f for f, p in PAIRINGS.items() if p.tokenizer))
def test_each_default_tokenizer_is_built_in_and_has_the_atomic_markers(fmt):
    alias = PAIRINGS[fmt].tokenizer
    assert alias in builtin_names()
    vocab = load_vocabulary(alias)
    assert missing_markers(fmt, vocab.added) == []
    check_pairing(fmt, vocab)


def _with_markers(vocab, markers):
    """Qwen3's vocabulary with a family's atomic markers added as special tokens."""
    new = [m for m in markers if m not in vocab.added]
    ids = range(vocab.vocab_size, vocab.vocab_size + len(new))
    return vocab.with_changes(
        token_bytes=vocab.token_bytes + tuple(m.encode() for m in new),
        added={**vocab.added, **dict(zip(new, ids))},
        special_ids=vocab.special_ids | frozenset(ids),
        logits_size=max(vocab.logits_size, vocab.vocab_size + len(new)))


@pytest.mark.parametrize("fmt", ["kimi-k2", "kimi-k3", "minimax-m2", "gemma4", "phi4-mini"])
def test_a_family_without_a_shipped_tokenizer(fmt, qwen):
    # no default: the error names --tokenizer PATH and the markers
    with pytest.raises(TokenizerError) as e:
        default_tokenizer(fmt)
    msg = str(e.value)
    assert "--tokenizer PATH" in msg and "no package registry ships" in msg
    assert all(m in msg for m in PAIRINGS[fmt].atomic)
    # Qwen3's vocabulary lacks the markers: refused, naming the missing ones only
    missing = missing_markers(fmt, qwen.added)
    assert missing and all(m not in qwen.added for m in missing)
    with pytest.raises(TokenizerError, match="does not have as added tokens") as e:
        check_pairing(fmt, qwen)
    assert all(m in str(e.value) for m in missing)
    # with the markers added as special tokens, the pairing holds
    check_pairing(fmt, _with_markers(qwen, PAIRINGS[fmt].atomic))


def test_formats_without_markers_fall_back_to_qwen():
    assert default_tokenizer("json") == default_tokenizer("functools") == "qwen"
    assert default_tokenizer("a-format-nobody-registered") == "qwen"


# -- the CLI -----------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt, tok, names", [
    ("hermes", "mistral", "<tool_call>, </tool_call>"),
    ("mistral", "gpt-oss", "[TOOL_CALLS]"),
    ("qwen3-coder", "llama3", "<tool_call>, </tool_call>"),
])
def test_cli_refuses_a_pairing_naming_the_markers(fmt, tok, names, tmp_path):
    out = tmp_path / "x.toolc"
    res = CliRunner().invoke(main, ["compile", str(WEATHER), "--format", fmt, "-t", tok,
                                    "-o", str(out), "-q"])
    assert res.exit_code == 1 and not out.exists(), res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and names in lines[0] and f"'{tok}'" in lines[0], res.output
    assert f"use --tokenizer {PAIRINGS[fmt].tokenizer}" in lines[0]


def test_cli_without_a_tokenizer_for_an_unshipped_family(tmp_path):
    res = CliRunner().invoke(main, ["compile", str(WEATHER), "--format", "phi4-mini",
                                    "-o", str(tmp_path / "x.toolc"), "-q"])
    assert res.exit_code == 1 and "--tokenizer PATH" in res.output, res.output


@pytest.mark.parametrize("fmt, vocab_size", [("mistral", 131072), ("llama3-json", 128256)])
def test_cli_picks_the_formats_tokenizer(fmt, vocab_size, tmp_path):
    out = tmp_path / "x.toolc"
    res = CliRunner().invoke(main, ["compile", str(WEATHER), "--format", fmt, "-o", str(out),
                                    "-q"])
    assert res.exit_code == 0, res.output
    art = toolc.load(str(out))
    assert art.logits_size == vocab_size
    assert art.fingerprint == load_vocabulary(PAIRINGS[fmt].tokenizer).fingerprint


def test_cli_formats_lists_every_format():
    res = CliRunner().invoke(main, ["formats", "--json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.output)
    assert [r["name"] for r in rows] == list(FORMATS)
    for r in rows:
        p = PAIRINGS[r["name"]]
        assert r["tokenizer"] == p.tokenizer and r["atomic_markers"] == list(p.atomic)
        assert r["proof"] in ("renderer", "vendor parser", "facts sheet", "toolc's own spec")
    text = CliRunner().invoke(main, ["formats"]).output
    assert all(name in text for name in FORMATS) and "llama4" in text


# -- each new alias compiles weather.json for a format it pairs with ----------------------------

def _accepts_call(art, vocab, text, eos):
    ids = vocab.encode(text) + [eos]
    assert accepts_all(art, ids) == (True, -1), (text, ids)
    # one byte of the framing changed is refused
    assert not accepts_all(art, vocab.encode(text.replace("city", "citz", 1)) + [eos])[0]


_DS = {k: f"<\uff5c{k.replace(' ', chr(0x2581))}\uff5c>" for k in (
    "tool calls begin", "tool calls end", "tool call begin", "tool call end", "tool sep")}

CASES = {
    # Qwen3.6 writes Qwen3-Coder's XML form
    "qwen3.6": ("qwen3-coder", "<tool_call>\n<function=get_current_weather>\n<parameter=city>"
                               "\nParis\n</parameter>\n</function>\n</tool_call>", "<|im_end|>"),
    "llama3": ("llama3-json", '{"name": "get_current_weather", "parameters": {"city": "Paris"}}',
               "<|eot_id|>"),
    "llama4": ("pythonic", '[get_current_weather(city="Paris")]', "<|eot|>"),
    # DeepSeek V3.1's framing as a custom spec (the facts sheet: "custom spec can")
    "deepseek": ({"name": "deepseek-v3.1", "prefix": _DS["tool calls begin"],
                  "call": _DS["tool call begin"] + "{name}" + _DS["tool sep"] + "{arguments}"
                          + _DS["tool call end"], "suffix": _DS["tool calls end"]},
                 _DS["tool calls begin"] + _DS["tool call begin"] + "get_current_weather"
                 + _DS["tool sep"] + '{"city": "Paris"}' + _DS["tool call end"]
                 + _DS["tool calls end"], "<\uff5cend\u2581of\u2581sentence\uff5c>"),
    # harmony's call as a custom spec, <|call|> (an EOS of gpt-oss) ending it
    "gpt-oss": ({"name": "harmony-call", "trigger": "<|channel|>",
                 "call": "<|channel|>commentary to=functions.{name} <|constrain|>json<|message|>"
                         "{arguments}"},
                '<|channel|>commentary to=functions.get_current_weather <|constrain|>json'
                '<|message|>{"city": "Paris"}', "<|call|>"),
}


@pytest.mark.parametrize("alias", sorted(CASES))
def test_weather_compiles_with_each_new_alias(alias):
    fmt, text, eos = CASES[alias]
    vocab = load_vocabulary(alias)
    framing = Custom(fmt) if isinstance(fmt, dict) else fmt
    if isinstance(fmt, str):
        check_pairing(fmt, vocab)
    art = toolc.compile_tools(str(WEATHER), vocab, format=framing, tool_choice="required")
    assert art.logits_size == vocab.logits_size and art.fingerprint == vocab.fingerprint
    _accepts_call(art, vocab, text, vocab.added[eos])


def test_mistral_sentencepiece_v3_accepts_what_mistral_common_encodes():
    """The SentencePiece reader and the mistral-v3 alias with the mistral format (its
    `[TOOL_CALLS] [` form), checked against mistral-common's own v3 instruct tokenizer on the
    same .model file."""
    pytest.importorskip("sentencepiece")
    import mistral_common
    from mistral_common.protocol.instruct.messages import AssistantMessage
    from mistral_common.protocol.instruct.tool_calls import FunctionCall, ToolCall
    from mistral_common.tokens.tokenizers.mistral import MistralTokenizer
    path = Path(mistral_common.__file__).parent / "data" / \
        "mistral_instruct_tokenizer_240323.model.v3"
    ref = MistralTokenizer.from_file(str(path))
    msg = AssistantMessage(tool_calls=[ToolCall(id="a1B2c3D4e", function=FunctionCall(
        name="get_current_weather", arguments=json.dumps({"city": "Paris"})))])
    ids = ref.instruct_tokenizer.encode_assistant_message(msg, False)
    vocab = load_vocabulary("mistral-v3")      # the built-in copy of the same file
    assert vocab.token_bytes == load_vocabulary(str(path)).token_bytes
    assert vocab.added == load_vocabulary(str(path)).added and vocab.eos_ids == (2,)
    check_pairing("mistral", vocab)
    art = toolc.compile_tools(str(WEATHER), vocab, format="mistral", tool_choice="required")
    assert accepts_all(art, ids) == (True, -1)
    assert not accepts_all(art, ids[:1] + ids[2:])[0]


def test_readme_format_table_names_each_formats_tokenizer():
    readme = (WEATHER.parent.parent / "README.md").read_text(encoding="utf-8")
    for name in FORMATS:
        row = next(line for line in readme.splitlines() if line.startswith(f"| `{name}` |"))
        cell = row.split(" | ")[2]
        expected = PAIRINGS[name].tokenizer or ("your file" if PAIRINGS[name].atomic
                                                else default_tokenizer(name))
        assert cell.strip("`") == expected, row


def test_trace_reads_a_rank_file_artifact(tmp_path):
    """toolc trace tokenizes with the artifact's tokenizer: here gpt-oss's, through tiktoken."""
    out = tmp_path / "g.toolc"
    runner = CliRunner()
    res = runner.invoke(main, ["compile", str(WEATHER), "--format", "json", "-t", "gpt-oss",
                               "-o", str(out), "-q"])
    assert res.exit_code == 0, res.output
    call = '{"name": "get_current_weather", "arguments": {"city": "Paris"}}'
    res = runner.invoke(main, ["trace", str(out), call + "<|return|>"])
    assert res.exit_code == 0 and "accepted: the text ends with EOS" in res.output, res.output
    res = runner.invoke(main, ["trace", str(out), call.replace("city", "town")])
    assert res.exit_code == 1 and "rejected" in res.output, res.output


@pytest.mark.parametrize("fmt", [f for f in FORMATS if PAIRINGS[f].atomic])
def test_declared_atomic_markers_are_the_formats_special_symbols(fmt, qwen):
    """The pairing table agrees with the framing code: with its tokenizer, each marker the
    table calls atomic is a special symbol of the format's grammar (not plain text)."""
    from toolc.compiler import build_dfa
    p = PAIRINGS[fmt]
    vocab = load_vocabulary(p.tokenizer) if p.tokenizer else _with_markers(qwen, p.atomic)
    counted = {"max_calls": 2} if fmt in ("kimi-k2", "kimi-k3", "cohere") else {}   # ids count
    built = build_dfa(str(WEATHER), vocab, format=fmt, tool_choice="required", **counted)
    assert set(p.atomic) <= set(built.symbols), (fmt, sorted(built.symbols))


def test_graph_of_a_tools_file_uses_the_formats_tokenizer(tmp_path):
    res = CliRunner().invoke(main, ["graph", str(WEATHER), "--format", "phi4-mini", "-o",
                                    str(tmp_path / "g.dot")])
    assert res.exit_code == 1 and "--tokenizer PATH" in res.output, res.output


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_each_proof_claim_has_its_test(fmt):
    """The proof column claims only what a test checks: the named test file exists, holds
    the named renderer or the sheet, and (for a renderer or a vendor parser) the format."""
    p = PAIRINGS[fmt]
    assert p.proof in ("renderer", "vendor parser", "facts sheet", "toolc's own spec")
    assert p.proved_by and p.evidence, fmt
    path, needle = p.evidence
    text = (WEATHER.parent.parent / path).read_text(encoding="utf-8")
    assert needle in text, (fmt, path, needle)
    if p.proof in ("renderer", "vendor parser"):
        assert fmt in text, (fmt, path)


def test_readme_proof_column_is_the_pairings():
    readme = (WEATHER.parent.parent / "README.md").read_text(encoding="utf-8")
    for name in FORMATS:
        row = next(line for line in readme.splitlines() if line.startswith(f"| `{name}` |"))
        assert row.split(" | ")[3] == PAIRINGS[name].proof_text.replace("|", "\\|"), row
