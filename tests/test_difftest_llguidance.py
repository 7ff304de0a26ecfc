"""Masks checked against an independent engine: llguidance (a test-only extra).

The same language is written for llguidance as a Lark grammar: ``<tool_call>``, then
``\\n{"name": "NAME", "arguments": `` + ``%json{schema}`` + ``}\\n``, then ``</tool_call>``, calls
joined by ``\\n`` (tool_choice "required", parallel calls), with the json.dumps separators and
no other whitespace, ``additionalProperties: false`` made explicit where toolc implies it. At
every step of sampled walks both allowed-token sets are compared.

One documented llguidance behaviour is accounted for, not counted as a disagreement: where the
grammar forces bytes (inside a literal such as ``{"name": "``), llguidance allows only the
tokens of the forced text's canonical tokenization (llguidance issues #263, guidance #1352),
while toolc allows every token that spells a prefix of the forced bytes. So at each step:
llguidance's set must be a subset of ours, and every token only we allow must spell a prefix of
llguidance's forced bytes (``compute_ff_bytes``). Anything else is a disagreement.

Two departures are known and counted apart: toolc accepts every escape JSON allows, ``\\/``
and any ``\\uXXXX`` (surrogates only in valid pairs) and a raw DEL (0x7F) in strings, as JSON
and json.dumps do, while llguidance accepts a narrower set of escapes and no raw DEL. A token only we allow that opens such an escape is counted as a departure, and a
walk that takes one stops there (llguidance cannot follow it).

A small sample runs in ``make test``; ``make difftest`` (TOOLC_DIFFTEST_WALKS) runs more.
"""

from __future__ import annotations

import copy
import json
import os
import random
import re

import numpy as np
import pytest

import toolc

from helpers import SCHEMA_SETS, distance_to_end, load_tools, random_walk

llguidance = pytest.importorskip("llguidance")

WALKS = int(os.environ.get("TOOLC_DIFFTEST_WALKS", "3"))
STATS = {"steps": 0, "walks": 0, "forced_prefix_steps": 0, "escape_departures": 0}
_ESCAPE = re.compile(rb"(?<!\\)(?:\\\\)*\\[/u]")


_OPEN_U = re.compile(rb"(?<!\\)(?:\\\\)*\\u[0-9a-fA-F]{0,3}$")


def _opens_wide_escape(before: bytes, token: bytes) -> bool:
    """Does ``token`` written after ``before`` complete a ``\\/``, start a ``\\u`` escape, or
    continue one that ``before`` left open (llguidance takes fewer ``\\uXXXX`` values)?"""
    tail = before[-8:]
    if _OPEN_U.search(tail):
        return True
    return any(m.end() > len(tail) for m in _ESCAPE.finditer(tail + token))
SEPARATORS = {"item_separator": ", ", "key_separator": ": ", "whitespace_flexible": False}

# small generated tool sets beside schemas/: JSON-syntax keys, enums, arrays, nesting, anyOf
GENERATED = {
    "nasty_keys": [{"name": "k", "parameters": {
        "type": "object", "properties": {k: {"type": "integer"} for k in
                                         ['"', "\\", "}", ": ", "ü名", "a b"]},
        "required": ['"', "}"]}}],
    "enums_arrays": [{"name": "pick", "parameters": {
        "type": "object", "properties": {
            "c": {"enum": ["red", "green", 3, None, True, {"a": [1]}]},
            "xs": {"type": "array", "items": {"type": "number"}, "minItems": 1, "maxItems": 3},
            "flag": {"type": "boolean"}},
        "required": ["c"]}}],
    "nested_any_of": [{"name": "n", "parameters": {
        "type": "object", "properties": {"v": {"anyOf": [
            {"type": "string"}, {"type": "null"},
            {"type": "object", "properties": {"w": {"type": "array",
                                                    "items": {"type": "integer"}}},
             "required": ["w"]}]}}, "required": ["v"]}}],
}


def _closed(schema):
    """Make toolc's implied defaults explicit for llguidance (additionalProperties false)."""
    if isinstance(schema, list):
        return [_closed(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: (_closed(v) if k in ("items", "anyOf") else v) for k, v in schema.items()}
    if "properties" in out:
        out["properties"] = {k: _closed(v) for k, v in out["properties"].items()}
        out.setdefault("additionalProperties", False)
    return out


def lark_grammar(functions: list[dict]) -> str:
    lines = []
    for i, f in enumerate(functions):
        schema = copy.deepcopy(_closed(f["parameters"]))
        schema["x-guidance"] = SEPARATORS
        head = json.dumps('\n{"name": "' + f["name"] + '", "arguments": ')
        lines.append(f'call{i}: <tool_call> {head} args{i} "}}\\n" </tool_call>')
        lines.append(f"args{i}: %json {json.dumps(schema)}")
    alts = " | ".join(f"call{i}" for i in range(len(functions)))
    return "\n".join(['start: call ("\\n" call)*', f"call: {alts}"] + lines)


@pytest.fixture(scope="module")
def lltok(qwen):
    return llguidance.LLTokenizer(qwen.tokenizer_json, n_vocab=qwen.logits_size,
                                  eos_token=list(qwen.eos_ids))


def _functions(tools) -> list[dict]:
    return [t.get("function", t) for t in tools]


def _llg_allowed(m) -> set[int]:
    words = np.frombuffer(m.compute_bitmask(), dtype="<u4")
    return set(np.flatnonzero(np.unpackbits(words.view(np.uint8), bitorder="little")).tolist())


def compare(qwen, lltok, tools, walks: int, seed: str) -> list[str]:
    """Walk ``walks`` sampled outputs through both engines; return the disagreements."""
    fns = _functions(tools)
    art = toolc.compile_tools(tools, qwen, tool_choice="required")
    grammar = llguidance.LLMatcher.grammar_from_lark(lark_grammar(fns))
    llm = llguidance.LLMatcher(lltok, grammar, log_level=1)
    assert not llm.is_error(), llm.get_error()
    dist = distance_to_end(art)
    rng = random.Random(seed)
    problems = []
    for _ in range(walks):
        ids = random_walk(art, rng, dist, budget=rng.choice([15, 40, 80]))
        llm.reset()
        ours = art.matcher()
        for step, t in enumerate(ids):
            a, b = set(ours.allowed_token_ids().tolist()), _llg_allowed(llm)
            STATS["steps"] += 1
            if a != b:
                where = qwen.decode_bytes(ids[:step])[-40:]
                only_llg, only_ours = b - a, a - b
                forced = llm.compute_ff_bytes()
                before = qwen.decode_bytes(ids[:step])
                escapes = {x for x in only_ours if x < qwen.vocab_size
                           and (_opens_wide_escape(before, qwen.token_bytes[x])
                                or b"\x7f" in qwen.token_bytes[x])}
                STATS["escape_departures"] += len(escapes)
                bad_ours = [x for x in only_ours - escapes
                            if x >= qwen.vocab_size or not forced
                            or not forced.startswith(qwen.token_bytes[x])]
                if only_llg or bad_ours:
                    problems.append(f"after {where!r}: llguidance only "
                                    f"{[qwen.token_bytes[x] for x in sorted(only_llg)[:5]]}, "
                                    f"toolc only {[qwen.token_bytes[x] for x in bad_ours[:5]]}")
                    break
                if forced:
                    STATS["forced_prefix_steps"] += 1
                if t in escapes:
                    break
            ours.advance(t)
            if not llm.consume_token(t):
                problems.append(f"llguidance refused token {t} after {where!r}: "
                                f"{llm.get_error()}")
                break
        STATS["walks"] += 1
    return problems


@pytest.mark.parametrize("name", SCHEMA_SETS)
def test_schema_sets_agree_with_llguidance(qwen, lltok, name):
    problems = compare(qwen, lltok, load_tools(name), WALKS, name)
    assert not problems, "\n".join(problems[:10])


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_generated_sets_agree_with_llguidance(qwen, lltok, name):
    problems = compare(qwen, lltok, GENERATED[name], WALKS, name)
    assert not problems, "\n".join(problems[:10])


def test_report(capsys):
    """Prints the figures of this run (steps compared) for docs/reliability.md."""
    with capsys.disabled():
        print(f"\ndifftest: {STATS['walks']} walks, {STATS['steps']} steps compared, "
              f"{STATS['forced_prefix_steps']} forced-prefix steps, "
              f"{STATS['escape_departures']} escape-departure tokens")
