"""toolc.walk.trie's standard classes: they refine the byte classes of the grammars that every
ASCII-framed format builds, Unicode's whitespace in free text included, so that a new tool set
walks the one cached trie instead of building a trie of its own (a second or more on Qwen3)."""

from __future__ import annotations

import pytest

from toolc.compiler import build_dfa
from toolc.formats import NAMES
from toolc.walk.trie import STANDARD_CLASSES, UNICODE_SPACES, refines

from conftest import object_schema, tools_list

# formats whose framing spells non-ASCII text in Qwen3's vocabulary (DeepSeek's ｜ and ▁
# markers), or that need options or tokens this set-up does not give
OWN_CLASSES = {"deepseek-v3", "deepseek-v3.1", "deepseek-v3.2", "deepseek-v4", "kimi-k2",
               "harmony"}


def test_unicode_spaces_are_every_space_above_ascii():
    want = sorted(c for c in map(chr, range(0x80, 0x110000)) if c.isspace())
    assert sorted(UNICODE_SPACES) == want


@pytest.mark.parametrize("fmt", sorted(set(NAMES) - OWN_CLASSES))
def test_standard_classes_refine_every_ascii_format(fmt, qwen):
    tools = tools_list(("f", object_schema({"s": {"type": "string"}, "n": {"type": "integer"},
                                            "e": {"enum": ["a", "b", None]}})))
    dfa = build_dfa(tools, qwen, format=fmt).dfa
    assert refines(STANDARD_CLASSES, dfa.alphabet.byte_class)


def test_a_non_ascii_literal_still_gets_classes_of_its_own(qwen):
    tools = tools_list(("f", object_schema({"u": {"enum": ["°C", "°F"]}})))
    assert not refines(STANDARD_CLASSES, build_dfa(tools, qwen).dfa.alphabet.byte_class)
