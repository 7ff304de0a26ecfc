"""For the tag-per-parameter formats: Qwen3's vocabulary with a family's atomic markers added as
special tokens (the families' own tokenizers are not in the repo), encoding over it, and a
renderer written from the bytes of issue 16's facts sheet (§2; Seed-OSS
from its chat template), independently of toolc.formats.
"""

from __future__ import annotations

import json
import re

from toolc.formats.rules import string_only
from toolc.tokenizer import load_vocabulary

QWEN = load_vocabulary("qwen")

_DEEPSEEK = ("<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>", "<｜tool▁call▁begin｜>",
             "<｜tool▁call▁end｜>", "<｜tool▁sep｜>")

#: each family's atomic markers, per the facts sheet (those already in Qwen3's vocabulary,
#: <tool_call> and </tool_call>, are kept as Qwen3 has them)
MARKERS = {
    "qwen3-coder": (), "mimo": (),
    "seed-oss": ("<seed:tool_call>", "</seed:tool_call>", "<seed:think>", "</seed:think>"),
    "glm-4.5": ("<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"),
    "glm-4.7": ("<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"),
    "minimax-m2": ("<minimax:tool_call>", "</minimax:tool_call>"),
    "minimax-m3": (),     # whether ']<]minimax[>[' is one token is not known (the sheet)
    "deepseek-v3.2": ("｜DSML｜",), "deepseek-v4": ("｜DSML｜",),
    "deepseek-v3": _DEEPSEEK, "deepseek-v3.1": _DEEPSEEK,
    "kimi-k2": ("<|tool_calls_section_begin|>", "<|tool_calls_section_end|>",
                "<|tool_call_begin|>", "<|tool_call_argument_begin|>", "<|tool_call_end|>"),
    "exaone": (), "granite": (),
    "gemma4": ("<|tool_call>", "<tool_call|>", '<|"|>', "<|channel>", "<channel|>"),
    "kimi-k3": ("<|open|>", "<|close|>", "<|sep|>"),
    "cohere": ("<|START_ACTION|>", "<|END_ACTION|>", "<|START_RESPONSE|>", "<|END_RESPONSE|>",
               "<|START_THINKING|>", "<|END_THINKING|>"),
    "harmony": ("<|start|>", "<|end|>", "<|message|>", "<|channel|>", "<|constrain|>",
                "<|return|>", "<|call|>"),
}
_VOCABS: dict = {}


def with_markers(vocab, name: str, markers):
    """``vocab`` plus those of ``markers`` it lacks, as added special tokens after its last."""
    extra = [m for m in markers if m not in vocab.added]
    if not extra:
        return vocab
    base = len(vocab.token_bytes)
    added = dict(vocab.added)
    added.update({m: base + i for i, m in enumerate(extra)})
    return vocab.with_changes(
        name=name, token_bytes=vocab.token_bytes + tuple(m.encode("utf-8") for m in extra),
        added=added, special_ids=vocab.special_ids | {added[m] for m in extra},
        logits_size=max(vocab.logits_size, base + len(extra)))


def vocab_for(fmt: str):
    """Qwen3's vocabulary plus ``fmt``'s atomic markers, as added special tokens."""
    if fmt not in _VOCABS:
        _VOCABS[fmt] = with_markers(QWEN, f"qwen3+{fmt}", MARKERS[fmt])
    return _VOCABS[fmt]


def encode_for(fmt: str, text: str) -> list[int]:
    """``text`` tokenized: the added markers atomically, the rest by Qwen3's tokenizer."""
    vocab = vocab_for(fmt)
    extra = sorted((m for m in MARKERS[fmt] if m in text), key=len, reverse=True)
    if not extra:
        return QWEN.encode(text)
    ids: list[int] = []
    for part in re.split("(" + "|".join(map(re.escape, extra)) + ")", text):
        if part in extra:
            ids.append(vocab.added[part])
        elif part:
            ids.extend(QWEN.encode(part))
    return ids


def _value(v, raw: bool) -> str:
    return v if raw else json.dumps(v, ensure_ascii=False)


def render_tagged(fmt: str, calls, content: str = "", schemas: dict | None = None) -> str:
    """The answer in ``fmt`` as the sheet writes it: content, the calls, then <|im_end|>."""
    def raw(name, k):
        return string_only(((schemas or {}).get(name) or {}).get("properties", {}).get(k))

    out = []
    for n, a in calls:
        if fmt == "qwen3-coder":
            ps = "".join(f"<parameter={k}>\n{_value(v, raw(n, k))}\n</parameter>\n"
                         for k, v in a.items())
            out.append(f"<tool_call>\n<function={n}>\n{ps}</function>\n</tool_call>")
        elif fmt == "mimo":
            ps = "".join(f"<parameter={k}>{_value(v, raw(n, k))}</parameter>"
                         for k, v in a.items())
            out.append(f"<tool_call><function={n}>{ps}</function></tool_call>")
        elif fmt == "seed-oss":
            ps = "".join(f"<parameter={k}>{_value(v, raw(n, k))}</parameter>\n"
                         for k, v in a.items())
            out.append(f"<seed:tool_call>\n<function={n}>\n{ps}</function>\n</seed:tool_call>")
        elif fmt == "glm-4.5":
            ps = "".join(f"<arg_key>{k}</arg_key>\n<arg_value>{_value(v, raw(n, k))}"
                         "</arg_value>\n" for k, v in a.items())
            out.append(f"<tool_call>{n}\n{ps}</tool_call>")
        elif fmt == "glm-4.7":
            ps = "".join(f"<arg_key>{k}</arg_key><arg_value>{_value(v, raw(n, k))}</arg_value>"
                         for k, v in a.items())
            out.append(f"<tool_call>{n}{ps}</tool_call>")
        elif fmt == "minimax-m2":
            ps = "".join(f'<parameter name="{k}">{_value(v, raw(n, k))}</parameter>\n'
                         for k, v in a.items())
            out.append(f'<invoke name="{n}">\n{ps}</invoke>')
        elif fmt in ("deepseek-v3.2", "deepseek-v4"):
            ps = "".join(f'<｜DSML｜parameter name="{k}" string="{str(raw(n, k)).lower()}">'
                         f"{_value(v, raw(n, k))}</｜DSML｜parameter>\n" for k, v in a.items())
            out.append(f'<｜DSML｜invoke name="{n}">\n{ps}</｜DSML｜invoke>')
        else:
            raise ValueError(fmt)
    sep = {"qwen3-coder": "\n", "seed-oss": "\n", "glm-4.5": "\n", "minimax-m2": "\n",
           "deepseek-v3.2": "\n", "deepseek-v4": "\n"}.get(fmt, "")
    block = sep.join(out)
    if calls and fmt == "minimax-m2":
        block = f"<minimax:tool_call>\n{block}\n</minimax:tool_call>"
    elif calls and fmt.startswith("deepseek"):
        word = "function_calls" if fmt == "deepseek-v3.2" else "tool_calls"
        block = f"<｜DSML｜{word}>\n{block}\n</｜DSML｜{word}>"
    return content + block + "<|im_end|>"


def render_framed(fmt: str, calls, content: str = "") -> str:
    """A JSON-argument family's answer as the sheet writes it, then <|im_end|>."""
    def js(a):
        return json.dumps(a, ensure_ascii=False)

    if not calls:
        return content + "<|im_end|>"
    if fmt == "deepseek-v3":
        block = "<｜tool▁calls▁begin｜>" + "\n".join(
            f"<｜tool▁call▁begin｜>function<｜tool▁sep｜>{n}\n```json\n{js(a)}\n```"
            "<｜tool▁call▁end｜>" for n, a in calls) + "<｜tool▁calls▁end｜>"
    elif fmt == "deepseek-v3.1":
        block = "<｜tool▁calls▁begin｜>" + "".join(
            f"<｜tool▁call▁begin｜>{n}<｜tool▁sep｜>{js(a)}<｜tool▁call▁end｜>"
            for n, a in calls) + "<｜tool▁calls▁end｜>"
    elif fmt == "kimi-k2":
        block = "<|tool_calls_section_begin|>" + "".join(
            f"<|tool_call_begin|>functions.{n}:{i}<|tool_call_argument_begin|>{js(a)}"
            "<|tool_call_end|>" for i, (n, a) in enumerate(calls)) \
            + "<|tool_calls_section_end|>"
    elif fmt == "exaone":
        block = "\n".join("<tool_call>" + js({"name": n, "arguments": a}) + "</tool_call>"
                          for n, a in calls)
    elif fmt == "granite":
        block = "<tool_call>" + js([{"name": n, "arguments": a} for n, a in calls])
    else:
        raise ValueError(fmt)
    return content + block + "<|im_end|>"


def sampled_texts(art, vocab, seed: str, n: int):
    """``n`` random walks through ``art`` to EOS, decoded without the EOS (free text need not
    be UTF-8, as in every format; arguments are checked to be)."""
    import random

    from helpers import distance_to_end, random_walk
    dist = distance_to_end(art)
    rng = random.Random(seed)
    for _ in range(n):
        ids = random_walk(art, rng, dist, budget=rng.choice([10, 40, 80]))
        yield vocab.decode_bytes(ids[:-1]).decode("utf-8", errors="replace")
