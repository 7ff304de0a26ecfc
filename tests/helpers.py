"""Shared test helpers: sampling through an artifact, rendering calls as Qwen3 writes them."""

from __future__ import annotations

import ctypes
import json
import random
import subprocess
import sys
import types

import jsonschema
import numpy as np
import pytest

from toolc.debug.explore import distance_to_end  # noqa: F401  (the tests' walks use it)
from toolc.parse import parse_tool_calls

# tools10 and tools80 come from bench/gen_tools.py (2k and 15k states): their tests are slow
SCHEMA_SETS = ["weather", "math", "assistant",
               pytest.param("tools10", marks=pytest.mark.slow),
               pytest.param("tools80", marks=pytest.mark.slow)]


def load_tools(name: str) -> list[dict]:
    with open(f"schemas/{name}.json", encoding="utf-8") as fh:
        return json.load(fh)


def params_by_name(tools: list[dict]) -> dict[str, dict]:
    return {t["function"]["name"]: t["function"]["parameters"] for t in tools}


def render_call(name: str, args: dict) -> str:
    """One call exactly as Qwen3's chat template writes it (tojson: json.dumps defaults)."""
    return ('<tool_call>\n{"name": "' + name + '", "arguments": '
            + json.dumps(args, ensure_ascii=False) + "}\n</tool_call>")


def render_answer(calls: list[tuple[str, dict]], content: str = "") -> str:
    parts = [render_call(n, a) for n, a in calls]
    text = "\n".join(parts)
    if content:
        text = content + ("\n" if parts else "") + text
    return text + "<|im_end|>"


def spells_an_added_token(vocab, args) -> bool:
    """Whether ``args``' JSON text holds an added token's text (Qwen3's ``<tool_call>``).

    The tokenizer encodes such text as the added token, which no artifact takes inside a value
    (no special token ever leaks into a call); a model spells it in ordinary tokens, which the
    formats that search for their tags refuse too (README: "No value ... spells one of the
    format's tags"). So a rendered call holding one is not a completeness case; the refusal
    has its own tests (``test_formats_closure*``, ``test_grammar_promises``).
    """
    text = json.dumps(args, ensure_ascii=False)
    return any(t in text for t in vocab.added)


def assert_rendered_call_accepted(art, vocab, name: str, args: dict) -> None:
    """``name(args)``, rendered as Qwen3's template writes it, is accepted token by token and
    ends the answer (nothing to check where the text cannot be encoded as UTF-8, or where a
    value spells an added token: :func:`spells_an_added_token`)."""
    try:
        text = render_answer([(name, args)])
        text.encode("utf-8")
    except UnicodeEncodeError:
        return
    if spells_an_added_token(vocab, args):
        return
    m = art.matcher()
    for t in vocab.encode(text):
        assert m.accepts(t), (text, vocab.token_bytes[t] if t < len(vocab.token_bytes) else t)
        m.advance(t)
    assert m.is_terminated()


def random_walk(art, rng: random.Random, dist: list[int], budget: int = 60,
                leave_bias: float = 0.5, trigger: int | None = None,
                prefix: list[int] = (), prefer: list[int] = ()) -> list[int]:
    """A random token sequence the artifact accepts, to EOS.

    Uniform over the allowed tokens, but with probability ``leave_bias`` only over tokens that
    change the state (so strings end and calls happen), and ``trigger`` taken whenever allowed
    with probability 1/3; after ``budget`` tokens, only tokens that bring the end closer.
    The walk starts with ``prefix`` (accepted tokens, included in the result; not counted in
    ``budget``). With ``prefer``, a third of the steps before ``budget`` try a few of those
    tokens first (to steer strings towards quotes, backslashes and brackets).
    """
    m = art.matcher()
    out: list[int] = []
    for t in prefix:
        m.advance(t)
        out.append(t)
    for step in range(budget + 400):
        if m.is_terminated():
            return out
        q = m.state
        allowed = m.allowed_token_ids()
        assert len(allowed) > 0, f"state {q} allows nothing but is not terminated"
        exc = art.transitions(q)[0]
        if getattr(m, "thinned", None) is not None and m.thinned():
            # near a counted bound the counter forbids some of the state's tokens
            exc = {t: r for t, r in exc.items() if m.accepts(t)}
        steer = [c for c in (rng.choice(prefer) for _ in range(8)) if m.accepts(c)] \
            if prefer and step < budget and rng.random() < 1 / 3 else []
        if trigger is not None and m.accepts(trigger) and rng.random() < 1 / 3:
            t = trigger
        elif steer:
            t = steer[0]
        elif step >= budget:
            t = _closest(art, q, allowed, exc, dist, rng)
            # the distances know nothing of counters: where a minimum forbids the nearest
            # way out, a token that stays put (a digit of a number) would be taken forever
            moving = {u: r for u, r in exc.items() if r != q}
            if getattr(m, "counter", None) is not None and moving \
                    and exc.get(t, art.default_next(q)) == q:
                t = min(moving, key=lambda u: (dist[moving[u]], u))
        elif rng.random() < leave_bias and exc:
            t = rng.choice(sorted(exc))
        else:
            t = int(allowed[rng.randrange(len(allowed))])
        m.advance(t)
        out.append(t)
    raise AssertionError("the walk did not terminate")


def _closest(art, q, allowed, exc, dist, rng) -> int:
    """An allowed token whose next state is nearest to the end."""
    best_exc = min(exc.items(), key=lambda kv: (dist[kv[1]], kv[0])) if exc else None
    default = art.default_next(q)
    d_default = dist[default] if default >= 0 else None
    if best_exc is not None and (d_default is None or dist[best_exc[1]] <= d_default):
        return best_exc[0]
    plain = [t for t in allowed.tolist() if t not in exc]
    return plain[rng.randrange(len(plain))]


def check_output(text: str, tools: list[dict], require_call: bool = False) -> dict:
    """Parse ``text`` and validate every call against its tool's schema; return the parse."""
    schemas = params_by_name(tools)
    parsed = parse_tool_calls(text)
    if require_call:
        assert parsed["tool_calls"], f"no call in {text!r}"
    for call in parsed["parsed"]:
        assert call["name"] in schemas, f"unknown tool {call['name']!r}"
        jsonschema.validate(call["arguments"], schemas[call["name"]])
    return parsed


def accepts_all(art, ids: list[int]) -> tuple[bool, int]:
    """Walk ``ids``; return (terminated, index of the first rejected token or -1)."""
    m = art.matcher()
    for i, t in enumerate(ids):
        if not m.accepts(t):
            return False, i
        m.advance(t)
    return m.is_terminated(), -1


# -- a stand-in of llama-cpp-python's C API (the package cannot be installed here) ------------

# llama.h's llama_token_attr bits
NORMAL, UNUSED, CONTROL, USER_DEFINED = 4, 2, 8, 16


class FakeLlamaCpp(types.ModuleType):
    """The three functions of the ``llama_cpp`` module that toolc's fingerprint reader calls,
    with llama-cpp-python 0.3's signatures, over a GGUF-style vocabulary.

    ``llama_token_to_piece`` copies like llama.cpp's ``_try_copy``: it returns the piece's
    length, or minus that length when the buffer is too small.
    """

    def __init__(self, pieces: list[bytes], attrs: list[int]):
        super().__init__("llama_cpp")
        self.pieces, self.attrs = pieces, attrs
        self.normal = {p: i for i, (p, a) in enumerate(zip(pieces, attrs)) if a == NORMAL}
        self.eog: set[int] = set()      # the tokens llama.cpp ends generation on

    def llama_vocab_is_eog(self, vocab, token):
        return token in self.eog

    def llama_vocab_n_tokens(self, vocab):
        return len(self.pieces)

    def llama_vocab_get_attr(self, vocab, token):
        return self.attrs[token]

    def llama_tokenize(self, vocab, text, text_len, tokens, n_max, add_special, parse_special):
        """Ordinary text only (``parse_special`` False): a normal token's own bytes are that
        token; anything else here is taken as two tokens."""
        if add_special or parse_special:
            raise AssertionError("the reader tokenizes ordinary text only")
        tid = self.normal.get(bytes(text[:text_len]))
        if tid is None:
            return 2 if n_max >= 2 else -2
        tokens[0] = tid
        return 1

    def llama_token_to_piece(self, vocab, token, buf, length, lstrip, special):
        if lstrip != 0 or special is not True:
            raise AssertionError("the reader asks for whole pieces, special tokens included")
        piece = self.pieces[token]
        if len(piece) > length:
            return -len(piece)
        ctypes.memmove(buf, piece, len(piece))
        return len(piece)


def gguf_layout(vocab, logits_size: int):
    """A toolc Vocabulary as llama.cpp's convert_hf_to_gguf.py writes a tokenizer: added tokens
    CONTROL (special ones) or USER_DEFINED, the rest NORMAL, then UNUSED ``[PADn]`` tokens up
    to the model's logits size. Pieces are what ``llama_token_to_piece(special=True)`` gives:
    decoded bytes for normal tokens, the text of the others, nothing for unused ones."""
    pieces = list(vocab.token_bytes)
    attrs = [NORMAL] * len(pieces)
    for tid in vocab.added_ids:
        attrs[tid] = CONTROL if tid in vocab.special_ids else USER_DEFINED
    pad = logits_size - len(pieces)
    return pieces + [b""] * pad, attrs + [UNUSED] * pad


class FakeLlama:
    """The attributes of a ``llama_cpp.Llama`` that the fingerprint reader uses."""

    def __init__(self, path: str):
        self.model_path = path
        self._model = types.SimpleNamespace(vocab=object())


# what the runtime side must never import: the compiler and its dependencies (the formats'
# registry, toolc.formats itself, is standard library only: the parser reads it; the framing
# modules build automata)
HEAVY_MODULES = ("tokenizers", "transformers", "jsonschema", "interegular", "click",
                 "toolc.compiler", "toolc.encode", "toolc.budget", "toolc.batch", "toolc.fsm",
                 "toolc.walk", "toolc.schema", "toolc.tokenizer", "toolc.tools",
                 "toolc.formats.base", "toolc.debug")


def heavy_modules_after(code: str) -> list[str]:
    """The modules of HEAVY_MODULES imported once ``code`` has run in a fresh interpreter."""
    probe = (code + "\nimport json as _json, sys as _sys\n"
             f"print(_json.dumps([h for h in {HEAVY_MODULES!r} if h in _sys.modules]))\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def same_masks_along_walks(counted, expanded, rng: random.Random, walks: int,
                           steps: int) -> None:
    """A counted artifact and its expanded twin allow the same tokens at every step of
    ``walks`` random walks (uniform over the allowed tokens), and never a dead end."""
    for walk in range(walks):
        a, b = counted.matcher(), expanded.matcher()
        for step in range(steps):
            A, B = a.allowed_token_ids(), b.allowed_token_ids()
            assert np.array_equal(A, B), (walk, step, set(A.tolist()) ^ set(B.tolist()))
            if b.is_terminated():
                break
            assert len(A), "a dead end"
            t = int(A[rng.randrange(len(A))])
            a.advance(t)
            b.advance(t)
