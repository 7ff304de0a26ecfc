"""Against the vendors' own parsers: every sampled output of toolc's artifact parses, with the
serving engine's tool parser, into the same calls (names, and arguments as JSON values) as
``toolc.parse_tool_calls``.

The parsers are vLLM 0.33.0's (``vllm/tool_parsers/*``: the non-streaming ``extract_tool_calls``
that the serving layer calls for ``tool_choice`` auto) and SGLang 0.5.23's
(``sglang/srt/function_call``: ``FunctionCallParser.parse_non_stream``), imported from their
wheels on CPU in the test-only environment that ``make vendor-env`` builds
(``build/venv-vendor``: the wheels with ``--no-deps`` plus the pure-Python modules the parsers
import, seeing ``.venv``'s packages). Elsewhere this file is skipped, with the reason. The
parsers read text; the tokenizer object vLLM's are given is Qwen3's ``tokenizer.json`` loaded by
transformers, with the added tokens of the vocabulary the artifact was compiled with (they look
their markers up in it).

The walks are steered towards tokens holding quotes, backslashes, brackets and angle brackets,
so string arguments are tricky; they include parallel calls and, in ``auto``, free text. The
tables ``VLLM`` and ``SGLANG`` are what ``docs/formats.md`` reports as proved by which parser;
``GAPS`` lists the vendor parsers' own known misreadings (each checked still to happen, so the
list cannot go stale silently).
"""

from __future__ import annotations

import gzip
import json
import random
import re
from importlib import resources
from pathlib import Path

import pytest

from toolc.formats.rules import string_only
from toolc.parse import parse_tool_calls
from toolc.tokenizer import load_vocabulary

from helpers import distance_to_end, load_tools, random_walk
from tag_helpers import encode_for, vocab_for, with_markers
from vendor_cases import FORMS, INSTEAD, PREFIX, SGLANG, VLLM

_SKIPPED = Path("build/venv-vendor/SKIPPED")
try:
    import transformers
    from sglang.srt.entrypoints.openai.protocol import Tool as SglangTool
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.tool_parsers import ToolParserManager
except ImportError as e:    # not the vendor environment
    why = _SKIPPED.read_text().strip() if _SKIPPED.exists() else \
        "run it with build/venv-vendor/bin/python (make vendor-env builds it)"
    pytest.skip(f"the vendors' parsers do not import here ({e}); {why}", allow_module_level=True)

import toolc  # noqa: E402

def _holds(value, pred) -> bool:
    if isinstance(value, dict):
        return any(_holds(v, pred) for v in value.values())
    if isinstance(value, list):
        return any(_holds(v, pred) for v in value)
    return pred(value)


def _is_json(v) -> bool:
    try:
        json.loads(v)
    except ValueError:
        return False
    return True


def _nullable(tools, calls) -> bool:
    props = {t["function"]["name"]: t["function"]["parameters"].get("properties", {})
             for t in tools}
    return any("null" in (props[n].get(k, {}).get("type") or ())
               for n, args in calls for k in args)


def _mixed_string(tools, calls) -> bool:
    props = {t["function"]["name"]: t["function"]["parameters"].get("properties", {})
             for t in tools}
    return any(isinstance(v, str) and not string_only(props[n].get(k, {}))
               for n, args in calls for k, v in args.items())


#: (engine, parser) -> (does a sample hit the gap (text, toolc's calls, tools), a text showing
#: it, what the vendor's parser does wrong). Samples that hit a gap are not compared; each
#: example is checked to be read differently still (test_the_vendors_known_misreadings).
GAPS = {
    ("vllm", "phi4_mini_json"): (
        lambda text, calls, tools: "]" in text[text.find("functools[") + 10:-1],
        'functools[{"name": "get_current_weather", "arguments": {"city": "a]b"}}]',
        "reads the calls with the regex functools\\[(.*?)\\], which ends at the first ']', "
        "even inside a string or a nested array"),
    ("vllm", "gemma4"): (
        lambda text, calls, tools: _holds([a for _, a in calls], lambda v: v is None),
        "<|tool_call>call:search_web{query:<|\"|>x<|\"|>,site:None}<tool_call|>",
        "reads null, which Gemma 4's chat template prints as Jinja prints None (None), as the "
        "string 'None' (it reads a bare null as null)"),
    ("sglang", "gemma4"): (
        lambda text, calls, tools: _holds([a for _, a in calls], lambda v: v is None),
        "<|tool_call>call:search_web{query:<|\"|>x<|\"|>,site:None}<tool_call|>",
        "the same as vLLM's: None is read as the string 'None'"),
    ("sglang", "mistral"): (
        lambda text, calls, tools: "[TOOL_CALLS][" in text,
        '[TOOL_CALLS][{"name": "get_current_weather", "arguments": {"city": "Paris"}, '
        '"id": "abcdefghi"}]',
        "finds the JSON-list form only as '[TOOL_CALLS] [' (SentencePiece v3), not as tekken "
        "writes it, '[TOOL_CALLS][' (no space)"),
    ("sglang", "pythonic"): (
        lambda text, calls, tools: bool(re.search(r"[=\[,(]\s*-", text)),
        "[get_forecast(city='Oslo', days=-1)]",
        "refuses a call with a negative number ('Tool call arguments must be literals': a unary "
        "minus is not an ast.Constant)"),
    ("sglang", "mimo"): (
        lambda text, calls, tools: _mixed_string(tools, calls),
        "<tool_call><function=set_reminder><parameter=message>m</parameter>"
        '<parameter=when>"9am"</parameter></function></tool_call>',
        "reads a value whose schema admits a string and another type as raw text, so a JSON "
        "string there keeps its quotes (toolc writes JSON in such a slot)"),
    ("sglang", "minimax-m2"): (
        lambda text, calls, tools: _nullable(tools, calls) or _holds(
            [a for _, a in calls], lambda v: isinstance(v, str) and v != v.strip()),
        '<minimax:tool_call>\n<invoke name="control_smart_home">\n<parameter name="device">'
        'lamp</parameter>\n<parameter name="action">set_level</parameter>\n'
        '<parameter name="level">40</parameter>\n</invoke>\n</minimax:tool_call>',
        "reads every value of a parameter whose type list has 'null' as null, and strips the "
        "whitespace around a string value"),
    ("sglang", "gpt-oss"): (
        lambda text, calls, tools: "<|start|>assistant<|channel|>commentary" not in text,
        " to=functions.get_forecast<|channel|>commentary <|constrain|>json<|message|>"
        '{"city": "Paris"}<|call|>',
        "finds a call only after '<|start|>assistant<|channel|>commentary', so not as the "
        "first message (the prompt wrote '<|start|>assistant') nor with the recipient in the "
        "role header, as openai-harmony renders it"),
}
#: SGLang's gpt-oss detector reads a call only when the text holds its closing <|call|>
KEEP_EOS = {("sglang", "gpt-oss")}
SCHEMAS = [("weather", "auto"), ("assistant", "required")]
WALKS = 10
_CACHE: dict = {}


def _cached(key, make):
    if key not in _CACHE:
        _CACHE[key] = make()
    return _CACHE[key]


def toolc_vocab(fmt: str, alias: str | None):
    if alias is None:
        return vocab_for(fmt)
    if alias.endswith("+[ARGS]"):        # a v11+ Mistral tokenizer: [ARGS] is a special token
        base = load_vocabulary(alias.split("+")[0])
        return _cached(alias, lambda: with_markers(base, "mistral-v11", ["[ARGS]"]))
    try:
        return _cached(alias, lambda: load_vocabulary(alias))
    except Exception as e:    # llama3/llama4 are fetched by `make install`, not shipped
        pytest.skip(f"tokenizer {alias!r} is not available here ({e})")


def hf_tokenizer(vocab):
    """Qwen3's tokenizer.json through transformers, plus the added tokens of ``vocab``."""
    def make():
        path = Path(".pytest_cache/vendor-qwen3-tokenizer.json")
        if not path.exists():
            path.parent.mkdir(exist_ok=True)
            path.write_bytes(gzip.decompress(resources.files("toolc.data").joinpath(
                "qwen3/tokenizer.json.gz").read_bytes()))
        tok = transformers.PreTrainedTokenizerFast(tokenizer_file=str(path))
        have = tok.get_vocab()
        extra = [m for m in vocab.added if m not in have]
        if extra:
            tok.add_special_tokens({"additional_special_tokens": extra})
        return tok
    return _cached(("hf", vocab.name, len(vocab.added)), make)


def tricky_tokens(vocab) -> list[int]:
    """Ordinary tokens holding a quote, backslash, bracket, angle bracket or newline."""
    def make():
        marks = set(b'"\\<>{}[]|=,:\n\'')
        added = set(vocab.added.values())
        return [t for t, b in enumerate(vocab.token_bytes)
                if t not in added and b and len(b) <= 4 and marks & set(b)]
    return _cached(("tricky", vocab.name, len(vocab.added)), make)


def samples(case: str, schema: str, mode: str):
    """(vocabulary, tools, [(text, toolc's calls)]) for ``WALKS`` walks of the case's artifact."""
    def make():
        fmt, alias, opts = FORMS[case]
        vocab = toolc_vocab(fmt, alias)
        file = INSTEAD.get(case, {}).get(schema, schema)
        tools = load_tools(file)
        art = toolc.compile_tools(f"schemas/{file}.json", vocab, format=fmt,
                                  tool_choice=mode, **opts)
        dist = distance_to_end(art)
        rng = random.Random(f"{case}-{schema}")
        head = PREFIX.get(case, "")
        head = head[schema] if isinstance(head, dict) else head
        prefix = vocab.encode(head) if alias else encode_for(fmt, head)
        out = []
        for _ in range(WALKS):
            ids = random_walk(art, rng, dist, budget=rng.choice([15, 40, 80]),
                              prefer=tricky_tokens(vocab), prefix=prefix)
            text = vocab.decode_bytes(ids[:-1]).decode("utf-8", errors="replace")
            calls = [(c["name"], c["arguments"]) for c in parse_tool_calls(
                text, format=fmt, tools=tools, reasoning=opts.get("reasoning"))["parsed"]]
            out.append((text, calls, ids))
        assert mode == "auto" or all(calls for _, calls, _ in out)
        return vocab, tools, out
    return _cached(("samples", case, schema, mode), make)


def vllm_reader(name, vocab, tools):
    if name == "openai":
        return harmony_reader(vocab, tools)
    if name == "cohere_command4":
        return cohere_reader(vocab, tools)
    parser = ToolParserManager.get_tool_parser(name)(hf_tokenizer(vocab), tools)
    req = ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "hi"}],
                                tools=tools, tool_choice="auto")

    def read(text, ids=()):
        info = parser.extract_tool_calls(text, req)
        return [(c.function.name, json.loads(c.function.arguments)) for c in info.tool_calls]
    return read


def harmony_reader(vocab, tools):
    """vLLM's gpt-oss path: ``HarmonyParser`` over the token ids (openai-harmony's streaming
    parser), pointed at the shipped o200k file (openai-harmony would download it)."""
    import os

    from vllm.parser.harmony import HarmonyParser
    from vllm.reasoning.gptoss_reasoning_parser import GptOssReasoningParser
    from vllm.tool_parsers.gptoss_tool_parser import GptOssToolParser
    folder = Path(".pytest_cache/vendor-o200k")
    if not (folder / "o200k_base.tiktoken").exists():
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "o200k_base.tiktoken").write_bytes(gzip.decompress(resources.files(
            "toolc.data").joinpath("gpt_oss/o200k_base.tiktoken.gz").read_bytes()))
    os.environ["TIKTOKEN_ENCODINGS_BASE"] = str(folder.resolve())

    class Parser(HarmonyParser):
        reasoning_parser_cls = GptOssReasoningParser
        tool_parser_cls = GptOssToolParser
    req = ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "hi"}],
                                tools=tools, tool_choice="auto")

    def read(text, ids):
        _, _, calls = Parser(hf_tokenizer(vocab), tools).parse(text, req, True, list(ids))
        return [(c.name, json.loads(c.arguments)) for c in calls or ()]
    read.parser_cls = Parser     # tests/test_vendor_streaming.py streams through it
    return read


def cohere_reader(vocab, tools):
    """vLLM's Cohere path: ``CohereCommandParser``, which reads the text with cohere_melody's
    ``PyFilter`` (the cmd4 preset that ``--tool-call-parser cohere_command4`` names)."""
    from vllm.parser.cohere_command import CohereCommandParser
    from vllm.tool_parsers.cohere_command_tool_parser import CohereCommand4ToolParser

    class Parser(CohereCommandParser):
        reasoning_parser_cls = None
        tool_parser_cls = CohereCommand4ToolParser
    req = ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "hi"}],
                                tools=tools, tool_choice="auto")

    def read(text, ids=()):
        _, _, calls = Parser(hf_tokenizer(vocab), tools).parse(text, req, True, list(ids))
        return [(c.name, json.loads(c.arguments)) for c in calls or ()]
    return read


def sglang_reader(name, vocab, tools):
    tools_ = [SglangTool(**t) for t in tools]

    def read(text, ids=()):
        _, calls = FunctionCallParser(tools_, name).parse_non_stream(text)
        return [(c.name, json.loads(c.parameters)) for c in calls]
    return read


READERS = {"vllm": ("vLLM 0.33.0", VLLM, vllm_reader),
           "sglang": ("SGLang 0.5.23", SGLANG, sglang_reader)}
PARAMS = [(engine, case, name) for engine, (_, table, _) in READERS.items()
          for case in sorted(table) for name in table[case]]


@pytest.mark.parametrize("schema,mode", SCHEMAS)
@pytest.mark.parametrize("engine,case,name", PARAMS)
def test_sampled_outputs_parse_the_same_in_the_vendors_parser(engine, case, name, schema, mode):
    label, _, reader = READERS[engine]
    vocab, tools, texts = samples(case, schema, mode)
    read = reader(name, vocab, tools)
    hits = GAPS.get((engine, name), (lambda text, calls, tools: False,))[0]
    compared = 0
    for text, ours, ids in texts:
        if (engine, name) in KEEP_EOS:     # the parser wants the end token in the text
            text, ids = vocab.decode_bytes(ids).decode("utf-8", errors="replace"), ids
        else:
            ids = ids[:-1]
        if not hits(text, ours, tools):
            assert read(text, ids) == ours, f"{label} {name} reads {text!r} differently"
            compared += 1
    assert compared or mode == "auto", f"every sample hit {label} {name}'s known gap"


@pytest.mark.parametrize("engine,name", sorted(GAPS))
def test_the_vendors_known_misreadings_still_happen(engine, name):
    """Each gap's example: toolc reads it as the format means it, the vendor's parser does not
    (when a release fixes it, this fails, and the gap goes)."""
    label, table, reader = READERS[engine]
    case = next(c for c in sorted(table) if name in table[c])
    fmt, alias, _ = FORMS[case]
    hits, text, why = GAPS[engine, name]
    tools = load_tools("assistant" if "search_web" in text or "set_reminder" in text or
                       "control_smart_home" in text else "weather")
    ours = [(c["name"], c["arguments"]) for c in
            parse_tool_calls(text, format=fmt, tools=tools)["parsed"]]
    assert ours and hits(text, ours, tools)
    vocab = toolc_vocab(fmt, alias)
    theirs = reader(name, vocab, tools)(text, vocab.encode(text))
    assert theirs != ours, f"{label} {name} no longer {why}"
