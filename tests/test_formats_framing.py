"""Framing proved against the model's own template, reasoning sections, and plain-text
triggers matched across token boundaries."""

from __future__ import annotations

import json

import jinja2
import pytest

import toolc
from toolc.tokenizer import load_vocabulary

from format_helpers import encode, render
from helpers import accepts_all, load_tools
from test_formats_e2e import artifact

QWEN = load_vocabulary("qwen")
CALLS = [("get_forecast", {"city": "Zürich", "days": 3, "unit": "celsius"}),
         ("get_current_weather", {"city": "東京 \"quoted\""})]


def _template():
    env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True,
                             loader=jinja2.BaseLoader())
    # transformers' tojson: json.dumps, non-ASCII raw (jinja2's own escapes <, >, &, ')
    env.filters["tojson"] = lambda x, **kw: json.dumps(x, ensure_ascii=False)
    return env.from_string(QWEN.chat_template)


def _assistant_turn(calls, content="", reasoning=None, last=False) -> str:
    """The assistant message as Qwen3's chat template renders it, through to <|im_end|>."""
    msg = {"role": "assistant", "content": content,
           "tool_calls": [{"type": "function", "function": {"name": n, "arguments": a}}
                          for n, a in calls]}
    if reasoning is not None:
        msg["reasoning_content"] = reasoning
    messages = [{"role": "user", "content": "Weather?"}, msg]
    if not last:
        messages.append({"role": "tool", "content": "{}"})
    text = _template().render(messages=messages, tools=load_tools("weather"),
                              add_generation_prompt=False)
    head = "<|im_start|>assistant\n"
    start = text.index(head) + len(head)
    return text[start:text.index("<|im_end|>", start) + len("<|im_end|>")]


@pytest.mark.parametrize("calls,content", [(CALLS[:1], ""), (CALLS, ""),
                                           (CALLS, "Let me check."), ([], "It is sunny.")])
def test_hermes_accepts_exactly_what_the_template_renders(calls, content):
    turn = _assistant_turn(calls, content)
    assert turn == render("hermes", calls, content)      # our renderer agrees with the template
    art = artifact("hermes")
    assert accepts_all(art, QWEN.encode(turn)) == (True, -1), turn
    # and nothing the template would not write: a second space, or a missing newline
    assert not accepts_all(art, QWEN.encode(turn.replace('{"name": ', '{"name":  ')))[0] \
        or not calls
    assert not accepts_all(art, QWEN.encode(turn.replace("}\n</tool_call>", "}</tool_call>")))[0]\
        or not calls


@pytest.mark.parametrize("mode", ["auto", "required"])
def test_reasoning_section_from_the_template(mode):
    turn = _assistant_turn(CALLS[:1], reasoning="The user wants the weather.", last=True)
    assert turn.startswith("<think>\nThe user wants the weather.\n</think>\n\n")
    art = artifact("hermes", tool_choice=mode, reasoning=True)
    assert accepts_all(art, QWEN.encode(turn)) == (True, -1), turn
    plain = artifact("hermes", tool_choice=mode)
    assert not accepts_all(plain, QWEN.encode(turn))[0]
    parsed = toolc.parse.parse_tool_calls(turn, format="hermes")
    assert parsed["reasoning"] == "The user wants the weather."
    assert [c["name"] for c in parsed["parsed"]] == ["get_forecast"]


def test_trigger_token_inside_reasoning_does_not_switch_modes():
    art = artifact("hermes", tool_choice="required", reasoning=True)
    m = art.matcher()
    for t in QWEN.encode("<think>\nmaybe "):
        m.advance(t)
    assert not m.accepts(QWEN.added["<tool_call>"])      # the special token is masked here
    # spelled in ordinary tokens, the trigger is just thought
    for t in QWEN.encode("<tool_call") + QWEN.encode("> spelled out\n</think>\n\n"):
        m.advance(t)
    assert m.accepts(QWEN.added["<tool_call>"])
    assert not m.accepts(QWEN.encode("Hello")[0])         # required: the call must follow


def test_required_mode_needs_a_call_after_reasoning():
    art = artifact("hermes", tool_choice="required", reasoning=True)
    assert not accepts_all(art, QWEN.encode("<think>\nhmm\n</think>\n\n<|im_end|>"))[0]
    assert not accepts_all(art, QWEN.encode("<think>\nhmm\n</think>\n\nNo.<|im_end|>"))[0]


def test_mistral_reasoning_is_text_on_a_tokenizer_without_think_tokens():
    art = artifact("mistral", "mistral", reasoning=True)
    call = render("mistral", CALLS[:1], tokenizer="mistral")
    text = "[THINK]I could write [TOOL_CALLS] here.[/THINK]" + call
    # the trigger spelled in ordinary tokens inside the reasoning is just thought
    ids = encode("[THINK]I could write [TOOL_CALLS", "mistral") + \
        encode("] here.[/THINK]", "mistral") + encode(call, "mistral")
    assert load_vocabulary("mistral").added["[TOOL_CALLS]"] not in ids[:-len(encode(call,
                                                                                   "mistral"))]
    assert accepts_all(art, ids) == (True, -1)
    parsed = toolc.parse.parse_tool_calls(text, format="mistral")
    assert parsed["reasoning"] == "I could write [TOOL_CALLS] here."
    assert parsed["parsed"] == [{"name": "get_forecast", "arguments": CALLS[0][1]}]


# -- a plain-text trigger across token boundaries -------------------------------------------

def _walk(art, ids):
    m = art.matcher()
    for t in ids:
        m.advance(t)
    return m


def test_token_completing_the_trigger_and_continuing_into_the_call():
    art = artifact("functools")
    open_brace = next(i for i in range(QWEN.vocab_size) if QWEN.token_bytes[i] == b"[{")
    head = QWEN.encode("Sure.functools")
    assert [QWEN.token_bytes[t] for t in head] == [b"Sure", b".f", b"unct", b"ools"]
    m = _walk(art, head)
    assert m.accepts(open_brace)                # completes "functools[" and opens the call
    m.advance(open_brace)
    for t in QWEN.encode('"name": "get_current_weather", "arguments": {"city": "Oslo"}}]'):
        m.advance(t)
    assert m.accepts(QWEN.added["<|im_end|>"])
    # after the partial trigger, only a call may follow the "["
    m = _walk(art, head)
    assert not m.accepts(QWEN.encode("[x")[0]) or QWEN.token_bytes[QWEN.encode("[x")[0]] == b"["


def test_plain_trigger_cannot_be_spelled_in_none_mode():
    art = artifact("functools", tool_choice="none")
    m = _walk(art, QWEN.encode("Use functools"))
    brackets = [t for t in range(QWEN.vocab_size) if t not in QWEN.added_ids
                and QWEN.token_bytes[t].startswith(b"[")]
    assert len(brackets) > 10 and not any(m.accepts(t) for t in brackets)
    assert m.accepts(QWEN.encode(" module")[0])


def test_phi4_tags_are_text_on_qwen_and_tracked_across_tokens():
    art = artifact("phi4-mini")
    text = render("phi4-mini", CALLS[:1], "Calling.")
    ids = encode(text)
    assert not set(ids[:-1]) & QWEN.added_ids        # the tags are plain text on Qwen3
    assert accepts_all(art, ids) == (True, -1)
    header = art.header["special_tokens"]
    assert set(header) == {"EOS"}


def test_mistral_args_form_on_a_tekken_file_with_an_args_token(tmp_path):
    # the shipped v3 file with a v11-style special-token list that has [ARGS] (rank 32)
    import gzip
    from importlib import resources
    raw = resources.files("toolc.data").joinpath("mistral/tekken_240911.json.gz").read_bytes()
    spec = json.loads(gzip.decompress(raw))
    names = ["<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]",
             "[/AVAILABLE_TOOLS]", "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[TOOL_CALLS]"]
    names += [f"<SPECIAL_{i}>" for i in range(len(names), 32)] + ["[ARGS]", "[CALL_ID]"]
    spec["special_tokens"] = [{"rank": i, "token_str": s, "is_control": True}
                              for i, s in enumerate(names)]
    path = tmp_path / "tekken_v11.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    art = toolc.compile_tools("schemas/weather.json", str(path), format="mistral")
    assert art.header["special_tokens"]["[ARGS]"] == [32]
    vocab = load_vocabulary(str(path))
    text = render("mistral-args", CALLS, "", tokenizer="mistral")
    assert text.startswith("[TOOL_CALLS]get_forecast[ARGS]{")
    # encode with the v11 specials: [ARGS] is one token there
    ids = []
    for i, part in enumerate(text[:-len("</s>")].split("[ARGS]")):
        if i:
            ids.append(32)
        ids += encode(part, "mistral")
    ids.append(vocab.added["</s>"])
    assert accepts_all(art, ids) == (True, -1)
    parsed = toolc.parse.parse_tool_calls(text, format="mistral")
    assert [(c["name"], c["arguments"]) for c in parsed["parsed"]] == CALLS


def test_mistral_sentencepiece_form_has_the_space(tmp_path):
    # a small SentencePiece-style tokenizer.json: byte-fallback pieces, "▁", and the two
    # control tokens; Mistral's v3 SentencePiece encoders write "[TOOL_CALLS] [" there
    vocab = {f"<0x{b:02X}>": b for b in range(256)}
    vocab["\u2581"] = 256
    spec = {"version": "1.0", "added_tokens": [
                {"id": 257, "content": "</s>", "special": True},
                {"id": 258, "content": "[TOOL_CALLS]", "special": True}],
            "normalizer": {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"},
            "pre_tokenizer": None,
            "decoder": {"type": "Sequence", "decoders": [
                {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
                {"type": "ByteFallback"}, {"type": "Fuse"}]},
            "model": {"type": "BPE", "vocab": vocab, "merges": [], "byte_fallback": True}}
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    (tmp_path / "tokenizer_config.json").write_text('{"eos_token": "</s>"}')
    art = toolc.compile_tools("schemas/weather.json", str(tmp_path), format="mistral")

    def ids(text):
        out = [258]
        for b in text.encode("utf-8"):
            out.append(256 if b == 0x20 else b)
        return out + [257]

    call = '[{"name": "get_current_weather", "arguments": {"city": "Oslo"}, "id": "abc123XYZ"}]'
    assert accepts_all(art, ids(" " + call)) == (True, -1)
    assert not accepts_all(art, ids(call))[0]
    assert toolc.parse_tool_calls("[TOOL_CALLS] " + call + "</s>",
                                  format="mistral")["tool_calls"][0]["id"] == "abc123XYZ"


@pytest.mark.parametrize("calls", [CALLS[:1], CALLS])
def test_mistral_accepts_exactly_what_mistral_common_encodes(calls):
    # mistral-common's own instruct tokenizer (v3, tekken) encodes the assistant's tool calls;
    # the artifact must accept those very ids, and parse them back
    from format_helpers import mistral_render_ids
    ids = mistral_render_ids(calls, ["a1B2c3D4e", "Z9y8X7w6V"][:len(calls)])
    art = artifact("mistral", "mistral")
    assert accepts_all(art, ids) == (True, -1)
    text = load_vocabulary("mistral").decode_bytes(ids).decode("utf-8")
    assert text == render("mistral", calls, tokenizer="mistral",
                          rng=_FixedIds(["a1B2c3D4e", "Z9y8X7w6V"]))
    parsed = toolc.parse_tool_calls(text, format="mistral")
    assert [(c["name"], c["arguments"]) for c in parsed["parsed"]] == calls
    assert [c["id"] for c in parsed["tool_calls"]] == ["a1B2c3D4e", "Z9y8X7w6V"][:len(calls)]
    # an id of the wrong length is refused
    bad = mistral_render_ids(calls[:1], ["short1234"[:8]])
    assert not accepts_all(art, bad)[0]


class _FixedIds:
    """Stands in for random.Random in render(): hands out the given ids' characters."""

    def __init__(self, ids):
        self._chars = iter("".join(ids))

    def choice(self, _alphabet):
        return next(self._chars)
