"""toolc.walk.twins: near twins copy their fallback state's runs but for a few first classes.

The property that matters: the walk with twins gives the plain walk's TokenIndex exactly
(every array, dtype included, so artifacts stay byte-identical), over several formats, tool
sets, byte partitions, and with hermes' closed strings, where the twins are the partial-tag
states inside every string.
"""

from __future__ import annotations

import numpy as np
import pytest

from toolc.compiler import build_dfa
from toolc.formats.hermes import Hermes
from toolc.walk import walk
from toolc.walk.twins import find_twins

from tag_helpers import vocab_for
from test_index import FIELDS, FINE_TOOLS, RAW_TOOLS, SHARED_TOOLS, VOCAB, _crossing_tokens
from toolc._reference.walk import walk_state


def _same_index(a, b):
    for f in FIELDS:
        x, y = getattr(a, f), getattr(b, f)
        assert x.dtype == y.dtype and np.array_equal(x, y), f


def _both_ways(dfa, vocab, symbols):
    stats = {}
    fast = walk(dfa, vocab, symbols, stats=stats)
    _same_index(fast, walk(dfa, vocab, symbols, twins=False))
    return stats["twins"]


@pytest.mark.parametrize("closed", [False, True])
@pytest.mark.parametrize("tools,opts", [
    (SHARED_TOOLS, {}),
    (SHARED_TOOLS, {"tool_choice": "required", "parallel": False}),
    (FINE_TOOLS, {}),               # a trie over the grammar's own byte partition
    ("schemas/weather.json", {"reasoning": True}),
])
def test_twins_give_the_plain_walk_exactly_in_hermes(tools, opts, closed, monkeypatch):
    monkeypatch.setattr(Hermes, "closed_strings", closed)
    b = build_dfa(tools, VOCAB, **opts)
    twins = _both_ways(b.dfa, b.vocab, b.symbols)
    # free text's partial <tool_call> states are twins; closed strings add their own
    assert twins > 40 if closed else twins >= (0 if opts.get("tool_choice") else 1)


@pytest.mark.parametrize("fmt,tools", [
    ("qwen3-coder", RAW_TOOLS),
    ("harmony", "schemas/weather.json"),
    ("deepseek-v3.2", RAW_TOOLS),
    ("json", SHARED_TOOLS),
])
def test_twins_give_the_plain_walk_exactly_in_other_formats(fmt, tools):
    vocab = VOCAB if fmt in ("qwen3-coder", "json") else vocab_for(fmt)
    b = build_dfa(tools, vocab, format=fmt)
    _both_ways(b.dfa, b.vocab, b.symbols)


@pytest.mark.slow
def test_twins_give_the_plain_walk_exactly_on_tools80_closed(monkeypatch):
    monkeypatch.setattr(Hermes, "closed_strings", True)
    b = build_dfa("schemas/tools80.json", VOCAB)
    assert _both_ways(b.dfa, b.vocab, b.symbols) > 1000


def test_twins_match_the_slow_twin_in_every_state_of_closed_strings(monkeypatch):
    """Independent of the plain walk: the byte-by-byte reference, on tokens that spell
    parts of the tags inside strings and cross a string's boundary."""
    monkeypatch.setattr(Hermes, "closed_strings", True)
    b = build_dfa(SHARED_TOOLS[:2], VOCAB)
    stats = {}
    index = walk(b.dfa, b.vocab, b.symbols, stats=stats)
    assert stats["twins"] > 20
    ids = set(_crossing_tokens(200, seed=11))
    for text in ["</tool_call>", "<tool_call>", "a</", "</to", "ol_call", "_call>", "<<", "<t"]:
        ids.update(VOCAB.encode(text))
    sample = sorted(ids)
    sample_set = np.array(sample)
    for q in range(b.dfa.num_states):
        slow = walk_state(b.dfa, VOCAB, b.symbols, q, token_ids=sample)
        toks, tg = index.transitions(q)
        keep = np.isin(toks, sample_set)
        assert dict(zip(toks[keep].tolist(), tg[keep].tolist())) == slow, f"state {q}"


def _kmp_table():
    """Classes 0..3 = 'a', '<', '/', 'x'. State 0 is a body looping on 'a' and 'x'; states
    1 and 2 have read '<' and '</' (a tag '</x' to avoid: 'x' from state 2 is dead); state 3
    is narrow, a literal 'a' then state 0."""
    return np.array([[0, 1, 0, 0],
                     [0, 1, 2, 0],
                     [0, 1, 0, -1],
                     [0, -1, -1, -1]], dtype=np.int32)


def test_find_twins_picks_the_fallback_state_and_the_differing_classes():
    size = np.array([70, 5, 5, 20])                     # tokens per first class
    twin_of, differs = find_twins(_kmp_table(), np.arange(4), size)
    assert twin_of.tolist() == [-1, 0, 0, -1]           # state 3 is narrow: walked in full
    assert differs[1].tolist() == [False, False, True, False]
    assert differs[2].tolist() == [False, False, False, True]
    assert not differs[[0, 3]].any()


def test_find_twins_refuses_a_twin_that_would_walk_most_tokens():
    size = np.array([10, 5, 5, 80])                     # 'x' starts most tokens
    twin_of, _ = find_twins(_kmp_table(), np.arange(4), size)
    assert twin_of[2] == -1 and twin_of[1] == 0


@pytest.mark.parametrize("closed", [False, True])
def test_a_sparse_index_filled_in_is_the_plain_walk(closed, monkeypatch):
    """A sparse index keeps the twins' own runs only; filled in, it is the walk's index."""
    monkeypatch.setattr(Hermes, "closed_strings", closed)
    b = build_dfa(SHARED_TOOLS, VOCAB)
    plain = walk(b.dfa, b.vocab, b.symbols)
    sparse = walk(b.dfa, b.vocab, b.symbols, sparse_twins=True)
    assert sparse.twin_of is not None and len(sparse.run_lo) < len(plain.run_lo)
    _same_index(sparse.full(), plain)
    assert sparse.full().twin_of is None and plain.full() is plain


def test_the_fallback_candidate_is_the_most_frequent_live_state_ties_to_the_smallest():
    """``_most_frequent`` against a plain count, on random rows with many ties."""
    from collections import Counter
    from toolc.walk.twins import _most_frequent
    rng = np.random.default_rng(18)
    for _ in range(200):
        k, nc, n = int(rng.integers(1, 8)), int(rng.integers(1, 10)), int(rng.integers(1, 6))
        rows = rng.integers(-1, n, size=(k, nc)).astype(np.int32)
        want = []
        for row in rows.tolist():
            c = Counter(v for v in row if v >= 0)
            want.append(min(c, key=lambda v: (-c[v], v)) if c else -1)
        assert _most_frequent(rows, n).tolist() == want
