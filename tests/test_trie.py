"""toolc.walk.trie's standard classes: they refine the byte classes of the grammars that every
ASCII-framed format builds, Unicode's whitespace in free text included, so that a new tool set
walks the one cached trie instead of building a trie of its own (a second or more on Qwen3)."""

from __future__ import annotations

import pytest

from toolc.compiler import build_dfa
from toolc.formats import NAMES
import numpy as np

from toolc.walk.trie import STANDARD_CLASSES, UNICODE_SPACES, refines, standard_trie

from conftest import object_schema, tools_list
from tag_helpers import MARKERS, vocab_for

# formats whose framing spells non-ASCII text in Qwen3's vocabulary (DeepSeek's ｜ and ▁
# markers), or that need options or tokens this set-up does not give
COUNTING = {"cohere", "kimi-k3"}      # they number their calls: parallel calls need a bound
OWN_CLASSES = {"deepseek-v3", "deepseek-v3.1", "deepseek-v3.2", "deepseek-v4", "kimi-k2",
               "harmony"}


def test_unicode_spaces_are_every_space_above_ascii():
    want = sorted(c for c in map(chr, range(0x80, 0x110000)) if c.isspace())
    assert sorted(UNICODE_SPACES) == want


@pytest.mark.parametrize("fmt", sorted(set(NAMES) - OWN_CLASSES))
def test_standard_classes_refine_every_ascii_format(fmt, qwen):
    # kimi-k3 writes each value's type in an attribute: one type per property
    e = {"type": "string", "enum": ["a", "b"]} if fmt == "kimi-k3" else {"enum": ["a", "b", None]}
    tools = tools_list(("f", object_schema({"s": {"type": "string"}, "n": {"type": "integer"},
                                            "e": e})))
    # formats with atomic markers Qwen3 lacks get them as added tokens; counting formats a bound
    vocab = vocab_for(fmt) if fmt in MARKERS and MARKERS[fmt] else qwen
    opts = {"max_calls": 2} if fmt in COUNTING else {}
    dfa = build_dfa(tools, vocab, format=fmt, **opts).dfa
    assert refines(STANDARD_CLASSES, dfa.alphabet.byte_class)


def test_a_non_ascii_literal_still_gets_classes_of_its_own(qwen):
    tools = tools_list(("f", object_schema({"u": {"enum": ["°C", "°F"]}})))
    assert not refines(STANDARD_CLASSES, build_dfa(tools, qwen).dfa.alphabet.byte_class)


def _chars_below(trie, vocab, d, node):
    """The character ids the tokens below a depth-d node use from depth d on, decoded from
    their bytes; None when one of them does not continue with whole UTF-8 characters."""
    ids = {tuple(x for x in c if x >= 0): i for i, c in enumerate(trie.chars.tolist())}
    out = set()
    for tok in trie.order[trie.lo[d - 1][node]:trie.hi[d - 1][node]]:
        rest = vocab.token_bytes[int(tok)][d:]
        try:
            text = rest.decode("utf-8")
        except UnicodeDecodeError:
            return None
        for ch in text:
            out.add(ids[tuple(int(STANDARD_CLASSES[b]) for b in ch.encode("utf-8"))])
    return out


def test_character_lists_are_the_characters_below_each_node(qwen):
    trie = standard_trie(qwen)
    rng = np.random.default_rng(7)
    words = (len(trie.chars) + 63) // 64
    for d in (1, 2, 3, 5):
        nodes = rng.choice(len(trie.lo[d - 1]), size=min(40, len(trie.lo[d - 1])), replace=False)
        for node in nodes:
            want = _chars_below(trie, qwen, d, int(node))
            got = set(trie.charids[trie.charlo[d - 1][node]:trie.charhi[d - 1][node]].tolist())
            assert bool(trie.chargood[d - 1][node]) == (want is not None)
            if want is None:
                continue
            assert got == want
            # a state looping on all of them but one character: chars_loop says no, then yes
            loops = np.zeros((2, words), np.uint64)
            for c in want:
                loops[:, c // 64] |= np.uint64(1) << np.uint64(c % 64)
            if want:
                c = min(want)
                loops[0, c // 64] &= ~(np.uint64(1) << np.uint64(c % 64))
            res = trie.chars_loop(d, np.array([node, node]), loops, np.array([0, 1]))
            assert res.tolist() == [not want, True]
