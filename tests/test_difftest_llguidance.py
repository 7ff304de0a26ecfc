"""Masks checked against an independent engine: llguidance (a test-only extra).

The same language is written for llguidance as a Lark grammar: ``<tool_call>``, then
``\\n{"name": "NAME", "arguments": `` + ``%json{schema}`` + ``}\\n``, then ``</tool_call>``, calls
joined by ``\\n`` (parallel calls), with the json.dumps separators and no other whitespace,
``additionalProperties: false`` made explicit where toolc implies it. Two tool choices are
compared: "required" (the call block alone) and "auto": free text first, written as the
terminal ``/(?s:.+)/ & ~/(?s:.*)(<tool_call>|<\\/tool_call>)(?s:.*)/`` (text that never spells
either tag), then optionally the call block, then EOS. At every step of sampled walks both
allowed-token sets are compared.

One documented llguidance behaviour is accounted for, not counted as a disagreement: where the
grammar forces bytes (inside a literal such as ``{"name": "``), llguidance allows only the
tokens of the forced text's canonical tokenization (llguidance issues #263, guidance #1352),
while toolc allows every token that spells a prefix of the forced bytes. So at each step:
llguidance's set must be a subset of ours, and every token only we allow must spell a prefix of
llguidance's forced bytes (``compute_ff_bytes``), or be one of the departures below. Anything
else is a disagreement.

Known departures, counted apart:

* Escapes and DEL: toolc accepts every escape JSON allows, ``\\/`` and any ``\\uXXXX``
  (surrogates only in valid pairs) and a raw DEL (0x7F) in strings, as JSON and json.dumps do,
  while llguidance accepts a narrower set of escapes and no raw DEL.
* UTF-8 in free text: toolc's free text is every ordinary token in any order (it constrains
  only the tags), so it may hold bytes that are not UTF-8 and may end, or meet the trigger, in
  the middle of a character. llguidance's terminals match valid UTF-8 only (its regexes refuse
  patterns that could match anything else, and it reserves the byte 0xFF, whose Qwen3 token it
  treats as special, to mark special tokens), so there it allows a token only if the text stays
  a prefix of valid UTF-8, and EOS or the trigger only after a whole character.

A token only we allow that is a departure is counted; a walk that takes one stops there
(llguidance cannot follow it). The auto walks never take a UTF-8 departure: their free text is
sampled to stay valid UTF-8 (with characters split across tokens), and often spells part of a
tag, so the states that track a partial ``<tool_call>`` or ``</tool_call>`` are compared.

A small sample runs in ``make test``; ``make difftest`` (TOOLC_DIFFTEST_WALKS) runs more.
"""

from __future__ import annotations

import copy
import functools
import json
import os
import random
import re
from collections import Counter

import numpy as np
import pytest

import toolc

from helpers import SCHEMA_SETS, distance_to_end, load_tools, random_walk

llguidance = pytest.importorskip("llguidance")

WALKS = int(os.environ.get("TOOLC_DIFFTEST_WALKS", "3"))
CHOICES = ("required", "auto")
STATS = {choice: Counter() for choice in CHOICES}
TRIGGER = "<tool_call>"
TAGS = (b"<tool_call>", b"</tool_call>")
SEPARATORS = {"item_separator": ", ", "key_separator": ": ", "whitespace_flexible": False}
# free text for tool_choice auto: any (UTF-8) text that never spells either tag
FREE_TEXT = r"TEXT: /(?s:.+)/ & ~/(?s:.*)(<tool_call>|<\/tool_call>)(?s:.*)/"

_ESCAPE = re.compile(rb"(?<!\\)(?:\\\\)*\\[/u]")
_OPEN_U = re.compile(rb"(?<!\\)(?:\\\\)*\\u[0-9a-fA-F]{0,3}$")


def _opens_wide_escape(before: bytes, token: bytes) -> bool:
    """Does ``token`` written after ``before`` complete a ``\\/``, start a ``\\u`` escape, or
    continue one that ``before`` left open (llguidance takes fewer ``\\uXXXX`` values)?"""
    tail = before[-8:]
    if _OPEN_U.search(tail):
        return True
    return any(m.end() > len(tail) for m in _ESCAPE.finditer(tail + token))


def _utf8_need(lead: int) -> tuple[int, int, int] | None:
    """(continuation bytes needed, range of the first one) after a lead byte; None if the byte
    cannot start a character (the Unicode standard's table 3-7)."""
    if lead < 0x80:
        return 0, 0, 0
    if 0xC2 <= lead <= 0xDF:
        return 1, 0x80, 0xBF
    if lead == 0xE0:
        return 2, 0xA0, 0xBF
    if lead == 0xED:
        return 2, 0x80, 0x9F
    if 0xE1 <= lead <= 0xEF:
        return 2, 0x80, 0xBF
    if lead == 0xF0:
        return 3, 0x90, 0xBF
    if 0xF1 <= lead <= 0xF3:
        return 3, 0x80, 0xBF
    if lead == 0xF4:
        return 3, 0x80, 0x8F
    return None


def utf8_pending(data: bytes) -> bytes | None:
    """The unfinished character at the end of ``data`` (b"" if none), or None when ``data`` is
    not a prefix of valid UTF-8 (no surrogates, overlong forms or code points past U+10FFFF)."""
    i, n = 0, len(data)
    while i < n:
        need = _utf8_need(data[i])
        if need is None:
            return None
        k, lo, hi = need
        for j in range(1, k + 1):
            if i + j >= n:
                return data[i:]
            c = data[i + j]
            if not ((lo <= c <= hi) if j == 1 else (0x80 <= c <= 0xBF)):
                return None
        i += k + 1
    return b""


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


def lark_grammar(functions: list[dict], tool_choice: str = "required") -> str:
    lines = []
    for i, f in enumerate(functions):
        schema = copy.deepcopy(_closed(f["parameters"]))
        schema["x-guidance"] = SEPARATORS
        head = json.dumps('\n{"name": "' + f["name"] + '", "arguments": ')
        lines.append(f'call{i}: <tool_call> {head} args{i} "}}\\n" </tool_call>')
        lines.append(f"args{i}: %json {json.dumps(schema)}")
    alts = " | ".join(f"call{i}" for i in range(len(functions)))
    calls = 'call ("\\n" call)*'
    if tool_choice == "auto":
        top = [f"start: TEXT? ({calls})?", FREE_TEXT]
    else:
        top = [f"start: {calls}"]
    return "\n".join(top + [f"call: {alts}"] + lines)


@pytest.fixture(scope="module")
def lltok(qwen):
    return llguidance.LLTokenizer(qwen.tokenizer_json, n_vocab=qwen.logits_size,
                                  eos_token=list(qwen.eos_ids))


class FreeTextSampler:
    """Free-text tokens for the auto walks: ordinary tokens that keep the text a prefix of valid
    UTF-8 (characters split across tokens included), and often tokens that spell part of a tag,
    so the walk passes through the states that track a partial ``<tool_call>``."""

    def __init__(self, vocab):
        self.bytes = tb = vocab.token_bytes
        self.placed = frozenset(vocab.eos_ids) | {vocab.token_id(TRIGGER)}
        added = vocab.added_ids
        self.ordinary = [t for t in range(vocab.vocab_size) if t not in added and tb[t]]
        self.ordinary_set = frozenset(self.ordinary)
        # tokens that begin with a continuation byte: the only way to finish a split character
        self.continuations = [t for t in self.ordinary if 0x80 <= tb[t][0] <= 0xBF]
        # tokens that start with a whole character and end inside one
        self.splitting = [t for t in self.ordinary if not tb[t].isascii()
                          and not 0x80 <= tb[t][0] <= 0xBF and utf8_pending(tb[t])]
        # ASCII tokens inside a tag, or ending with its start, or starting with its end
        prefixes = tuple({tag[:k] for tag in TAGS for k in range(1, len(tag))})
        suffixes = tuple({tag[k:] for tag in TAGS for k in range(1, len(tag) - 1)})
        self.tag_pieces = [t for t in self.ordinary if tb[t].isascii() and (
            any(tb[t] in tag for tag in TAGS) or tb[t].endswith(prefixes)
            or tb[t].startswith(suffixes))]

    def departures(self, pending: bytes, only_ours: set[int]) -> set[int]:
        """The tokens of ``only_ours`` (allowed by toolc, not by llguidance) that llguidance's
        UTF-8 terminals cannot take after free text ending with the unfinished character
        ``pending``: any that breaks UTF-8, and with a character unfinished, EOS and the
        trigger. Other special tokens are never departures."""
        ordinary = only_ours & self.ordinary_set
        if pending:
            return (ordinary - set(self.finishing(pending))) | (only_ours & self.placed)
        return {t for t in ordinary if utf8_pending(self.bytes[t]) is None}

    @staticmethod
    def progress(tail: bytes) -> int:
        """The length of the longest unfinished tag at the end of ``tail``."""
        return max((k for tag in TAGS for k in range(1, len(tag))
                    if tail.endswith(tag[:k])), default=0)

    @functools.lru_cache(maxsize=None)
    def finishing(self, pending: bytes) -> tuple[int, ...]:
        return tuple(t for t in self.continuations
                     if utf8_pending(pending + self.bytes[t]) is not None)

    def pick(self, m, rng: random.Random, tail: bytes, pending: bytes) -> int:
        if pending:
            return rng.choice([t for t in self.finishing(pending) if m.accepts(t)])
        now = self.progress(tail)
        if now or rng.random() < 0.3:
            cands = [(self.progress(tail + self.bytes[t]), t) for t in self.tag_pieces
                     if m.accepts(t)]
            deeper = [t for p, t in cands if p > now]
            started = [t for p, t in cands if p > 0]
            if now and deeper and rng.random() < 0.85:   # spell more of the tag
                return rng.choice(deeper)
            if not now and started:                      # start spelling one
                return rng.choice(started)
        for _ in range(1000):
            t = rng.choice(self.splitting if rng.random() < 0.1 else self.ordinary)
            if m.accepts(t) and utf8_pending(self.bytes[t]) is not None:
                return t
        raise AssertionError("no free-text token found")


@pytest.fixture(scope="module")
def free_sampler(qwen):
    return FreeTextSampler(qwen)


def auto_walk(art, vocab, sampler: FreeTextSampler, rng: random.Random, dist) -> list[int]:
    """Free text for a while, then EOS (a third of the walks) or the trigger and calls."""
    m = art.matcher()
    out: list[int] = []
    tail, pending = b"", b""
    length = rng.choice([0, 3, 10, 25, 50])
    while len(out) < length or pending:
        t = sampler.pick(m, rng, tail, pending)
        m.advance(t)
        out.append(t)
        tail = (tail + vocab.token_bytes[t])[-16:]
        pending = utf8_pending(pending + vocab.token_bytes[t])
    if rng.random() < 1 / 3:
        return out + [rng.choice(sorted(vocab.eos_ids))]
    return random_walk(art, rng, dist, budget=rng.choice([15, 40, 80]),
                       prefix=out + [vocab.token_id(TRIGGER)])


def _functions(tools) -> list[dict]:
    return [t.get("function", t) for t in tools]


def _ids(words: np.ndarray) -> set[int]:
    return set(np.flatnonzero(np.unpackbits(words.view(np.uint8), bitorder="little")).tolist())


def compare(qwen, lltok, tools, walks: int, seed: str, tool_choice: str = "required",
            sampler: FreeTextSampler | None = None) -> list[str]:
    """Walk ``walks`` sampled outputs through both engines; return the disagreements."""
    fns = _functions(tools)
    art = toolc.compile_tools(tools, qwen, tool_choice=tool_choice)
    grammar = llguidance.LLMatcher.grammar_from_lark(lark_grammar(fns, tool_choice))
    llm = llguidance.LLMatcher(lltok, grammar, log_level=1)
    assert not llm.is_error(), llm.get_error()
    dist = distance_to_end(art)
    rng = random.Random(f"{seed}-{tool_choice}")
    stats = STATS[tool_choice]
    problems = []
    for _ in range(walks):
        if tool_choice == "auto":
            ids = auto_walk(art, qwen, sampler, rng, dist)
        else:
            ids = random_walk(art, rng, dist, budget=rng.choice([15, 40, 80]))
        llm.reset()
        ours = art.matcher()
        free = tool_choice == "auto"    # still in free text (no special token taken yet)
        pending = b""                   # the free text's unfinished UTF-8 character
        tail = b""                      # the free text's last bytes
        stopped_early = False
        for step, t in enumerate(ids):
            a = ours.mask().view(np.uint32)
            b = np.frombuffer(llm.compute_bitmask(), dtype="<u4")
            b, beyond = b[:len(a)], b[len(a):]     # llguidance rounds its mask up a word
            assert not beyond.any(), "llguidance allows a token past the logits"
            stats["steps"] += 1
            stats["free_text_steps"] += free
            stats["one_byte_short_of_a_tag"] += free and any(tail.endswith(g[:-1]) for g in TAGS)
            stats["inside_a_split_character"] += free and pending != b""
            if not np.array_equal(a, b):
                where = qwen.decode_bytes(ids[:step])[-40:]
                only_llg, only_ours = _ids(b & ~a), _ids(a & ~b)
                forced = llm.compute_ff_bytes()
                if free:
                    departures = sampler.departures(pending, only_ours)
                    stats["utf8_departures"] += len(departures)
                    stats["utf8_departure_steps"] += bool(departures)
                else:
                    before = qwen.decode_bytes(ids[:step])
                    departures = {x for x in only_ours if x < qwen.vocab_size
                                  and (_opens_wide_escape(before, qwen.token_bytes[x])
                                       or b"\x7f" in qwen.token_bytes[x])}
                    stats["escape_departures"] += len(departures)
                bad_ours = [x for x in only_ours - departures
                            if x >= qwen.vocab_size or not forced
                            or not forced.startswith(qwen.token_bytes[x])]
                if only_llg or bad_ours:
                    problems.append(f"after {where!r}: llguidance only "
                                    f"{[qwen.token_bytes[x] for x in sorted(only_llg)[:5]]}, "
                                    f"toolc only {[qwen.token_bytes[x] for x in bad_ours[:5]]}")
                    break
                if forced:
                    stats["forced_prefix_steps"] += 1
                if t in departures:
                    stopped_early = True
                    break
            ours.advance(t)
            if not llm.consume_token(t):
                problems.append(f"llguidance refused token {t} after "
                                f"{qwen.decode_bytes(ids[:step])[-40:]!r}: {llm.get_error()}")
                break
            if free and (t in qwen.added_ids or t >= qwen.vocab_size):
                free = False
            elif free:
                pending = utf8_pending(pending + qwen.token_bytes[t])
                tail = (tail + qwen.token_bytes[t])[-16:]
        else:
            if not (ours.is_terminated() and llm.is_stopped()):
                problems.append(f"after the whole walk {qwen.decode_bytes(ids)[-40:]!r}: "
                                f"toolc terminated {ours.is_terminated()}, "
                                f"llguidance stopped {llm.is_stopped()}")
        stats["walks"] += 1
        stats["walks_with_calls"] += qwen.token_id(TRIGGER) in ids
        stats["stopped_at_departure"] += stopped_early
    stats["disagreements"] += len(problems)
    return problems


def _sampler_for(choice, request):
    return request.getfixturevalue("free_sampler") if choice == "auto" else None


@pytest.mark.parametrize("choice", CHOICES)
@pytest.mark.parametrize("name", SCHEMA_SETS)
def test_schema_sets_agree_with_llguidance(qwen, lltok, request, name, choice):
    problems = compare(qwen, lltok, load_tools(name), WALKS, name, choice,
                       _sampler_for(choice, request))
    assert not problems, "\n".join(problems[:10])


@pytest.mark.parametrize("choice", CHOICES)
@pytest.mark.parametrize("name", sorted(GENERATED))
def test_generated_sets_agree_with_llguidance(qwen, lltok, request, name, choice):
    problems = compare(qwen, lltok, GENERATED[name], WALKS, name, choice,
                       _sampler_for(choice, request))
    assert not problems, "\n".join(problems[:10])


def test_report(capsys):
    """Prints the figures of this run for docs/reliability.md."""
    with capsys.disabled():
        for choice in CHOICES:
            s = STATS[choice]
            print(f"\ndifftest {choice}: {s['walks']} walks ({s['walks_with_calls']} with "
                  f"calls), {s['steps']} steps compared ({s['free_text_steps']} in free text), "
                  f"{s['disagreements']} disagreements; {s['forced_prefix_steps']} "
                  f"forced-prefix steps, {s['escape_departures']} escape-departure tokens, "
                  f"{s['utf8_departures']} UTF-8 departure tokens at "
                  f"{s['utf8_departure_steps']} steps; {s['stopped_at_departure']} walks "
                  f"stopped at a departure; free-text steps one byte short of a tag "
                  f"{s['one_byte_short_of_a_tag']}, inside a split character "
                  f"{s['inside_a_split_character']}")
