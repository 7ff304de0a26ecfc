"""Rendering calls the way each native format writes them, written from the formats' published
templates (independently of toolc.formats), plus tokenizing for Qwen3 and Mistral's tekken.
"""

from __future__ import annotations

import json
import random
import re
import string

from toolc.formats.rules import string_only
from toolc.tokenizer import load_vocabulary

EOS_TEXT = {"qwen": "<|im_end|>", "mistral": "</s>"}


def _id(rng: random.Random) -> str:
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(9))


def render(fmt: str, calls: list[tuple[str, dict]], content: str = "", *, tokenizer="qwen",
           schemas: dict | None = None, rng: random.Random | None = None,
           python_tag: bool = False) -> str:
    """The whole answer: ``content``, then ``calls`` in format ``fmt``, then EOS."""
    rng = rng or random.Random(0)
    eos = EOS_TEXT[tokenizer]
    if fmt == "hermes":
        block = "\n".join('<tool_call>\n{"name": "' + n + '", "arguments": '
                          + json.dumps(a, ensure_ascii=False) + "}\n</tool_call>" for n, a in calls)
        sep = "\n"
    elif fmt == "qwen3-coder":
        parts = []
        for n, a in calls:
            props = ((schemas or {}).get(n) or {}).get("properties", {})
            params = "".join(
                f"<parameter={k}>\n"
                + (v if string_only(props.get(k)) else json.dumps(v, ensure_ascii=False))
                + "\n</parameter>\n" for k, v in a.items())
            parts.append(f"<tool_call>\n<function={n}>\n{params}</function>\n</tool_call>")
        block, sep = "\n".join(parts), "\n"
    elif fmt == "mistral":
        objs = [{"name": n, "arguments": a, "id": _id(rng)} for n, a in calls]
        block, sep = "[TOOL_CALLS]" + json.dumps(objs, ensure_ascii=False), ""
    elif fmt == "mistral-args":
        block = "".join(f"[TOOL_CALLS]{n}[ARGS]" + json.dumps(a, ensure_ascii=False)
                        for n, a in calls)
        sep = ""
    elif fmt == "phi4-mini":
        objs = [{"name": n, "arguments": a} for n, a in calls]
        block, sep = "<|tool_call|>" + json.dumps(objs, ensure_ascii=False) + "<|/tool_call|>", ""
    elif fmt == "functools":
        objs = [{"name": n, "arguments": a} for n, a in calls]
        block, sep = "functools" + json.dumps(objs, ensure_ascii=False), " "
    elif fmt == "llama3-json":
        block = "; ".join(json.dumps({"name": n, "parameters": a}, ensure_ascii=False)
                          for n, a in calls)
        block, sep = ("<|python_tag|>" if python_tag else "") + block, None
    elif fmt == "pythonic":
        block = "[" + ", ".join(f"{n}(" + ", ".join(f"{k}={v!r}" for k, v in a.items()) + ")"
                                for n, a in calls) + "]"
        sep = None
    elif fmt == "tooldec":
        block = "\n".join(f"<tool>{n}(" + ", ".join(repr(v) for v in a.values()) + ")"
                          for n, a in calls)
        sep = " "
    elif fmt == "json":
        objs = [{"name": n, "arguments": a} for n, a in calls]
        block = json.dumps(objs if len(calls) != 1 else objs[0], ensure_ascii=False)
        sep = None
    else:
        raise ValueError(fmt)
    if not calls:
        return content + eos
    if content and sep is not None:
        return content + sep + block + eos
    return block + eos


_TEKKEN = []


def tekkenizer():
    """mistral-common's own Tekkenizer over the shipped tekken file (test-only dependency)."""
    if not _TEKKEN:
        import gzip
        import tempfile
        from importlib import resources

        from mistral_common.tokens.tokenizers.mistral import MistralTokenizer
        packed = resources.files("toolc.data").joinpath("mistral/tekken_240911.json.gz")
        tmp = tempfile.NamedTemporaryFile(prefix="tekken_", suffix=".json", delete=False)
        tmp.write(gzip.decompress(packed.read_bytes()))
        tmp.close()
        _TEKKEN.append(MistralTokenizer.from_file(tmp.name))
    return _TEKKEN[0]


def mistral_render_ids(calls: list[tuple[str, dict]], ids: list[str]) -> list[int]:
    """An assistant tool-call message encoded by mistral-common itself (ends with </s>)."""
    from mistral_common.protocol.instruct.messages import AssistantMessage
    from mistral_common.protocol.instruct.tool_calls import FunctionCall, ToolCall
    msg = AssistantMessage(tool_calls=[
        ToolCall(id=i, function=FunctionCall(name=n, arguments=json.dumps(a, ensure_ascii=False)))
        for (n, a), i in zip(calls, ids)])
    return tekkenizer().instruct_tokenizer.encode_assistant_message(msg, False)


def encode(text: str, tokenizer: str = "qwen") -> list[int]:
    """Token ids as the model's tokenizer writes them (added tokens taken atomically)."""
    vocab = load_vocabulary(tokenizer)
    if tokenizer == "qwen":
        return vocab.encode(text)
    tok = tekkenizer().instruct_tokenizer.tokenizer
    specials = sorted((k for k in vocab.added if k in text), key=len, reverse=True)
    ids: list[int] = []
    parts = re.split("(" + "|".join(map(re.escape, specials)) + ")", text) if specials else [text]
    for p in parts:
        if p in vocab.added:
            ids.append(vocab.added[p])
        elif p:
            ids.extend(tok.encode(p, bos=False, eos=False))
    return ids
