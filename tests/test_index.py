"""The numpy vocabulary walk against its plain byte-by-byte twin, state by state."""

from __future__ import annotations

import random

import numpy as np
import pytest

from toolc.compiler import _argument_exprs
from toolc.formats import FormatOptions, get_format
from toolc.fsm import compile_expr
from toolc.index import walk
from toolc.trie import build_trie
from toolc._slow import walk_state
from toolc.tokenizer import load_vocabulary
from toolc.tools import load_tools_file

VOCAB = load_vocabulary("qwen")


def _dfa(name, **opts):
    tools = load_tools_file(f"schemas/{name}.json")
    exprs = _argument_exprs(tools, name, 4)
    grammar, symbols = get_format("hermes").grammar(exprs, VOCAB, FormatOptions(**opts))
    return compile_expr(grammar), symbols


def _sample_tokens(n: int, seed: int) -> list[int]:
    rng = random.Random(seed)
    ids = set(rng.sample(range(VOCAB.vocab_size), n))
    # tokens that cross grammar boundaries and byte-class edge cases
    for text in ['"}', '"}}\n', '", "', '": ', "\\u00", "\\", '"', "{\"", "\n", "日本", "é"]:
        ids.update(VOCAB.encode(text))
    ids.update(VOCAB.added.values())
    return sorted(ids)


@pytest.mark.parametrize("name,n_tokens", [("weather", 3000), ("math", 1500),
                                           ("assistant", 400)])
def test_fast_walk_matches_slow_twin_in_every_state(name, n_tokens):
    dfa, symbols = _dfa(name)
    index = walk(dfa, VOCAB, symbols)
    sample = _sample_tokens(n_tokens, seed=len(name))
    sample_set = np.array(sample)
    for q in range(dfa.num_states):
        slow = walk_state(dfa, VOCAB, symbols, q, token_ids=sample)
        toks, tg = index.transitions(q)
        keep = np.isin(toks, sample_set)
        fast = dict(zip(toks[keep].tolist(), tg[keep].tolist()))
        assert fast == slow, f"state {q}"
        assert index.num_allowed(q) == len(toks)


@pytest.mark.slow
def test_fast_walk_matches_slow_twin_on_whole_vocabulary():
    dfa, symbols = _dfa("weather")
    index = walk(dfa, VOCAB, symbols)
    rng = random.Random(1)
    states = [0] + rng.sample(range(1, dfa.num_states), 5)
    widest = int(np.argmax([index.num_allowed(q) for q in range(dfa.num_states)
                            if q not in states]))
    for q in states + [widest]:
        toks, tg = index.transitions(q)
        assert dict(zip(toks.tolist(), tg.tolist())) == walk_state(dfa, VOCAB, symbols, q)


def test_trie_groups_tokens_by_class_sequence():
    dfa, _ = _dfa("weather")
    trie = build_trie(VOCAB, dfa.alphabet.byte_class, dfa.alphabet.num_byte_classes)
    ids, _, _ = VOCAB.ordinary_bytes()
    assert sorted(trie.order.tolist()) == ids.tolist()
    # every depth-1 node's run shares its first class, and runs tile the sorted tokens
    cls = dfa.alphabet.byte_class
    assert trie.lo[0][0] == 0 and trie.hi[0][-1] == len(trie.order)
    assert np.array_equal(trie.lo[0][1:], trie.hi[0][:-1])
    for i in range(len(trie.lo[0])):
        firsts = {int(cls[VOCAB.token_bytes[t][0]])
                  for t in trie.order[trie.lo[0][i]:trie.hi[0][i]]}
        assert firsts == {int(trie.cls[0][i])}


def test_special_tokens_only_where_the_grammar_puts_them():
    dfa, symbols = _dfa("weather")
    index = walk(dfa, VOCAB, symbols)
    placed = {t for ids in symbols.values() for t in ids}
    others = set(VOCAB.added.values()) - placed
    for q in range(dfa.num_states):
        toks = set(index.allowed(q).tolist())
        assert not toks & others
        assert all(t < VOCAB.vocab_size for t in toks)
