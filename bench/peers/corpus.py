"""The valid-call corpus every engine walks: schema-valid arguments rendered as Qwen3 renders them.

Arguments come from hypothesis-jsonschema (derandomized, so the corpus is the same every run),
with object keys put in schema order; each answer holds 1 to 3 calls and is rendered as Qwen3's
chat template writes it (``<tool_call>\\n{"name": "N", "arguments": ARGS}\\n</tool_call>`` joined
by ``\\n``, then ``<|im_end|>``) and tokenized by the real Qwen3 tokenizer. For each answer we
keep the token ids and which steps are inside arguments (the bytes consumed so far end inside an
``ARGS``), where no special token may ever be allowed.
"""

from __future__ import annotations

import json

import jsonschema
from hypothesis import HealthCheck, given, settings, strategies as st
from hypothesis_jsonschema import from_schema

from common import CALL_TAIL, head


def schema_order(value, schema):
    """``value`` with its object keys in the order ``schema`` declares them (anyOf: the first
    branch the value validates against)."""
    if not isinstance(schema, dict):
        return value
    if "anyOf" in schema:
        for branch in schema["anyOf"]:
            if jsonschema.Draft202012Validator(branch).is_valid(value):
                return schema_order(value, branch)
        return value
    if isinstance(value, dict) and "properties" in schema:
        props = schema["properties"]
        return {k: schema_order(value[k], props[k]) for k in props if k in value}
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [schema_order(v, schema["items"]) for v in value]
    return value


def sample_calls(tools: list[dict], n: int) -> list[list[tuple[str, dict]]]:
    """``n`` answers of 1 to 3 (tool name, arguments) calls, the same every run."""
    pairs = [(t["function"]["name"], t["function"].get("parameters", {})) for t in tools]
    one = st.sampled_from(pairs).flatmap(
        lambda p: st.tuples(st.just(p[0]), from_schema(p[1]), st.just(p[1])))
    out: list = []

    @settings(max_examples=n * 3, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.lists(one, min_size=1, max_size=3))
    def collect(calls):
        if len(out) >= n:
            return
        answer = []
        for name, args, schema in calls:
            args = schema_order(args, schema)
            try:
                json.dumps(args, ensure_ascii=False).encode("utf-8")
            except UnicodeEncodeError:      # lone surrogates: not text a model can write
                return
            answer.append((name, args))
        out.append(answer)

    collect()
    return out


def render(calls: list[tuple[str, dict]]) -> tuple[str, list[tuple[int, int]]]:
    """The answer's text and the byte spans of each call's arguments."""
    text, spans, pos = "", [], 0
    for k, (name, args) in enumerate(calls):
        pre = ("\n" if k else "") + "<tool_call>" + head(name)
        body = json.dumps(args, ensure_ascii=False)
        start = pos + len(pre.encode("utf-8"))
        end = start + len(body.encode("utf-8"))
        spans.append((start, end))
        piece = pre + body + CALL_TAIL
        text += piece
        pos += len(piece.encode("utf-8"))
    return text + "<|im_end|>", spans


def build(tools: list[dict], vocab, n: int) -> list[dict]:
    """``n`` corpus entries: ``{"ids": [...], "inside": [step, ...], "text": str}``.

    ``inside`` lists the steps (mask before token ``ids[step]``) whose consumed bytes end inside
    some call's arguments.
    """
    out = []
    for calls in sample_calls(tools, n):
        text, spans = render(calls)
        ids = vocab.encode(text)
        if vocab.decode_bytes(ids) != text.encode("utf-8"):
            raise RuntimeError(f"the tokenizer does not round-trip {text!r}")
        inside, pos = [], 0
        for step, t in enumerate(ids):
            if any(lo <= pos < hi for lo, hi in spans):
                inside.append(step)
            pos += len(vocab.token_bytes[t])
        out.append({"ids": ids, "inside": inside, "text": text})
    return out


def main(argv) -> int:
    """``corpus.py OUT ANSWERS SET...``: write the corpus of each set to OUT (JSON).

    Run it with ``PYTHONHASHSEED=0`` (run.py does): hypothesis-jsonschema's choices depend on
    set iteration order, so only a fixed hash seed gives the same corpus in every process.
    """
    from toolc.tokenizer import load_vocabulary

    from common import load_tools
    out, answers, sets = argv[0], int(argv[1]), argv[2:]
    vocab = load_vocabulary("qwen")
    data = {s: build(load_tools(s), vocab, answers) for s in sets}
    with open(out, "w", encoding="utf-8") as fh:
        json.dump(data, fh)
    return 0


if __name__ == "__main__":
    import sys
    sys.exit(main(sys.argv[1:]))
