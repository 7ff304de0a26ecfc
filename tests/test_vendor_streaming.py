"""The vendors' streaming parsers against toolc's artifact: every sampled output, fed token by
token as a serving engine feeds it, streams the same calls (names, and arguments as JSON
values) as ``toolc.parse_tool_calls`` reads from the whole text.

vLLM 0.33.0: the ``Parser`` that ``ParserManager.get_parser`` composes for
``--tool-call-parser NAME`` (what the chat stream processor drives), its ``parse_delta`` called
once per token with ``finished`` on the last; the calls are the ``DeltaToolCall`` fragments
joined by index, as a client joins them. SGLang 0.5.23: ``FunctionCallParser``'s
``parse_stream_chunk`` once per token, then ``parse_stream_end``; the ``ToolCallItem``
fragments joined by ``tool_index``. Each token's text is what an incremental UTF-8 decoder
gives for its bytes (a character split over tokens arrives whole, with its last byte), as
the engines' detokenizers give it. The samples and tokenizers are tests/test_vendor_parsers.py's
(the same walks); a sample that hits a known non-streaming gap there is skipped here too.
``STREAM_GAPS`` lists misreadings only the streaming path has, each checked still to happen.
"""

from __future__ import annotations

import codecs
import json

import pytest

from test_vendor_parsers import (GAPS, KEEP_EOS, SCHEMAS, ChatCompletionRequest,
                                 FunctionCallParser, SglangTool, harmony_reader, hf_tokenizer,
                                 samples, toolc_vocab)
from tag_helpers import encode_for
from toolc.parse import parse_tool_calls
from vendor_cases import FORMS

#: case -> (vLLM parser name, SGLang parser name or None): the main formats
STREAMED = {"hermes": ("hermes", "hermes"), "qwen3-coder": ("qwen3_coder", "qwen3_coder"),
            "deepseek-v3.1": ("deepseek_v31", "deepseekv31"), "glm-4.7": ("glm47", "glm47"),
            "kimi-k2": ("kimi_k2", "kimi_k2"), "kimi-k3": ("kimi_k3", "kimi_k3"),
            "cohere": ("cohere_command4", "cohere_command4"),
            "minimax-m3": ("minimax_m3", "minimax-m3"),
            "kimi-k3/parallel": ("kimi_k3", "kimi_k3"),
            "cohere/parallel": ("cohere_command4", None),     # SGLang's: the gap below
            "harmony": ("openai", None), "harmony/after-analysis": (None, "gpt-oss")}
#: (engine, parser) -> (does a sample hit it (text, calls, tools), a text showing it, what the
#: streaming path does wrong); checked still to happen by test_the_streaming_gaps_still_happen
STREAM_GAPS = {
    ("sglang", "cohere_command4"): (
        lambda text, calls, tools: len(calls) > 1,
        '<|START_ACTION|>[\n    {"tool_call_id": "0", "tool_name": "search_web", "parameters": '
        '{"query": "a"}},\n    {"tool_call_id": "1", "tool_name": "search_web", "parameters": '
        '{"query": "b"}}\n]<|END_ACTION|>',
        "streams each call of a block under the index of its tool in the request (the "
        "tool_index parse_base_json gives), not under its ordinal, so two calls of one tool "
        "share an index and a client joins them into one"),
}
PARAMS = [(engine, case, names[i]) for case, names in sorted(STREAMED.items())
          for i, engine in enumerate(("vllm", "sglang")) if names[i]]


def _deltas(vocab, ids):
    """(text, token id) per token, as an incremental detokenizer gives them."""
    dec = codecs.getincrementaldecoder("utf-8")(errors="replace")
    return [(dec.decode(vocab.token_bytes[t]), t) for t in ids]


def vllm_stream(name, vocab, tools):
    from vllm.parser.parser_manager import ParserManager
    tok = hf_tokenizer(vocab)
    to_hf = {i: tok.convert_tokens_to_ids(m) for m, i in vocab.added.items()}
    if name == "openai":    # gpt-oss: HarmonyParser over the o200k ids themselves
        cls, to_hf = harmony_reader(vocab, tools).parser_cls, {}
    else:
        cls = ParserManager.get_parser(tool_parser_name=name, enable_auto_tools=True)

    def read(ids):
        parser = cls(tok, tools)
        req = ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "hi"}],
                                    tools=tools, tool_choice="auto")
        req = parser.adjust_request(req)
        calls: dict[int, list] = {}
        steps = _deltas(vocab, ids)
        for k, (text, t) in enumerate(steps):
            delta = parser.parse_delta(text, [to_hf.get(t, t)], req, [],
                                       finished=k == len(steps) - 1)
            for tc in (delta.tool_calls if delta is not None else None) or ():
                call = calls.setdefault(tc.index, [None, ""])
                fn = tc.function
                if fn is not None and fn.name:
                    call[0] = fn.name
                if fn is not None and fn.arguments:
                    call[1] += fn.arguments
        return [(n, _args(a)) for _, (n, a) in sorted(calls.items())]
    return read


def _args(joined: str):
    """The joined argument fragments as a JSON value (as they are, if they are not JSON)."""
    try:
        return json.loads(joined or "{}")
    except ValueError:
        return joined


def sglang_stream(name, vocab, tools):
    tools_ = [SglangTool(**t) for t in tools]

    def read(ids):
        parser = FunctionCallParser(tools_, name)
        calls: dict[int, list] = {}
        items = []
        for text, _ in _deltas(vocab, ids):
            items += parser.parse_stream_chunk(text)[1]
        items += parser.parse_stream_end()[1]
        for it in items:
            call = calls.setdefault(it.tool_index, [None, ""])
            if it.name:
                call[0] = it.name
            call[1] += it.parameters or ""
        return [(n, _args(a)) for _, (n, a) in sorted(calls.items())]
    return read


STREAMS = {"vllm": ("vLLM 0.33.0", vllm_stream), "sglang": ("SGLang 0.5.23", sglang_stream)}


@pytest.mark.slow
@pytest.mark.parametrize("schema,mode", SCHEMAS)
@pytest.mark.parametrize("engine,case,name", PARAMS)
def test_sampled_outputs_stream_the_same_calls(engine, case, name, schema, mode):
    label, reader = STREAMS[engine]
    vocab, tools, texts = samples(case, schema, mode)
    read = reader(name, vocab, tools)
    gaps = [g[0] for g in (GAPS.get((engine, name)), STREAM_GAPS.get((engine, name))) if g]
    compared = 0
    for text, ours, ids in texts:
        ids = ids if (engine, name) in KEEP_EOS else ids[:-1]
        if not any(hit(text, ours, tools) for hit in gaps):
            assert read(ids) == ours, f"{label} {name} streams {text!r} differently"
            compared += 1
    assert compared or mode == "auto", f"every sample hit {label} {name}'s known gap"


@pytest.mark.parametrize("engine,name", sorted(STREAM_GAPS))
def test_the_streaming_gaps_still_happen(engine, name):
    label, reader = STREAMS[engine]
    case = next(c for c, names in sorted(STREAMED.items()) if name in names)
    fmt, alias, _ = FORMS[case]
    hits, text, why = STREAM_GAPS[engine, name]
    tools = samples(case, "assistant", "required")[1]
    ours = [(c["name"], c["arguments"]) for c in
            parse_tool_calls(text, format=fmt, tools=tools)["parsed"]]
    assert ours and hits(text, ours, tools)
    vocab = toolc_vocab(fmt, alias)
    ids = vocab.encode(text) if alias else encode_for(fmt, text)
    assert reader(name, vocab, tools)(ids) != ours, f"{label} {name} no longer {why}"
