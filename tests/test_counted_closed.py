"""Hermes' closed strings beside counted regions (issue #14 with #16's default).

Only the tools that hold a counted region keep their string bodies closed in the grammar;
the rest of the DFA is closed by the product with the tags' matcher, which leaves counted
states alone. The walk then fills in only the near twins one token can lead from into or
through a counted region (the counters read those), and the other twins stay sparse. Both
are checked against the plain way: every tool closed in the grammar, every twin filled in.
"""

from __future__ import annotations

import numpy as np
import pytest

import toolc
import toolc.compiler
import toolc.formats.hermes
from toolc.assemble import walk_parts
from toolc.compiler import build_dfa
from toolc.walk.index import TokenIndex
from toolc.walk.twins import within_reach


def _tool(name, props, required=None):
    return {"type": "function", "function": {"name": name, "parameters": {
        "type": "object", "properties": props, "required": required or list(props)}}}


TOOLS = [
    _tool("post", {"title": {"type": "string"},
                   "body": {"type": "string", "maxLength": 300},
                   "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 40}}),
    _tool("search", {"query": {"type": "string"}, "limit": {"type": "integer"}}),
    _tool("rename", {"old": {"type": "string"}, "new": {"type": "string"}}),
    _tool("note", {"text": {"type": "string"}}, required=[]),
]


@pytest.fixture(scope="module")
def plain_and_new():
    """(every tool closed in the grammar and every twin filled in, the default)."""
    mp = pytest.MonkeyPatch()
    try:
        mp.setattr(toolc.formats.hermes, "holds_counted", lambda expr: True)
        mp.setattr(toolc.compiler, "within_reach",
                   lambda trans, nc, marked, depth: np.ones(len(marked), dtype=bool))
        plain = toolc.compile_tools(TOOLS)
    finally:
        mp.undo()
    return plain, toolc.compile_tools(TOOLS)


def test_the_same_automaton_whichever_way_it_is_closed(plain_and_new):
    plain, new = plain_and_new
    assert new.num_states == plain.num_states
    for q in range(new.num_states):
        assert new.transitions(q) == plain.transitions(q), q
        assert np.array_equal(new.state_mask(q), plain.state_mask(q)), q
        assert new.is_final_state(q) == plain.is_final_state(q)
    counted = [k for k in plain.sections if k[:4] in ("cnt_", "itm_", "itn_", "run_")]
    assert counted
    for k in counted:
        assert new.sections[k] == plain.sections[k], k


def test_within_reach_counts_bytes_not_symbols():
    # 0 -a-> 1 -a-> 2 -a-> 3 (marked); 4 -symbol-> 3; 5 -a-> 5
    trans = np.full((6, 2), -1, dtype=np.int32)
    trans[0, 0], trans[1, 0], trans[2, 0], trans[4, 1], trans[5, 0] = 1, 2, 3, 3, 5
    marked = np.zeros(6, dtype=bool)
    marked[3] = True
    for depth, want in ((0, [3]), (1, [2, 3]), (2, [1, 2, 3]), (9, [0, 1, 2, 3])):
        assert np.flatnonzero(within_reach(trans, 1, marked, depth)).tolist() == want


def _runs(index, q):
    r0, r1 = index.run_ptr[q], index.run_ptr[q + 1]
    return (index.run_lo[r0:r1].tolist(), index.run_hi[r0:r1].tolist(),
            index.run_target[r0:r1].tolist())


def test_a_partial_fill_is_the_whole_fill_where_the_counters_read():
    """The twins filled in get the runs the whole fill gives them; the others keep their own
    (sparse) runs, and neither they nor their twins have a run that enters, leaves or lies
    in a counted region: the counters never read a sparse row."""
    from toolc.tokenizer import load_vocabulary
    vocab = load_vocabulary("qwen")
    b = build_dfa(TOOLS, vocab)
    index = walk_parts(b.dfa, b.vocab, b.symbols, sparse_twins=True)
    assert index.twin_of is not None
    tagged = b.dfa.tags >= 0
    near = within_reach(b.dfa.trans, b.dfa.alphabet.num_byte_classes, tagged,
                        int(vocab.ordinary_bytes()[1].max()))
    part, whole = index.full(near=near), index.full()
    left = np.zeros(index.num_states, dtype=bool) if part.twin_of is None \
        else part.twin_of >= 0
    assert left.any() and (index.twin_of >= 0).sum() > left.sum()
    for q in range(index.num_states):
        assert _runs(part, q) == (_runs(index, q) if left[q] else _runs(whole, q)), q
    owner = np.repeat(np.arange(whole.num_states), np.diff(whole.run_ptr))
    touches = tagged[owner] | tagged[whole.run_target]
    bases = part.twin_of[left]
    assert not touches[left[owner]].any()
    assert not touches[np.isin(owner, bases)].any()
    assert not near[left].any() and not near[bases].any()


def test_twins_far_from_the_counted_regions_stay_sparse(monkeypatch):
    seen = []
    real = TokenIndex.full

    def spy(self, *args, **kwargs):
        out = real(self, *args, **kwargs)
        seen.append((self.twin_of is not None, out.twin_of is not None))
        return out

    monkeypatch.setattr(TokenIndex, "full", spy)
    toolc.compile_tools(TOOLS)
    # the walk's index had twins, and some of them (the open tools' strings) stayed sparse
    assert (True, True) in seen, seen


def test_counted_walks_match_through_the_closed_tags(plain_and_new):
    """The counters agree along a call that fills the counted string to its bound."""
    from toolc.tokenizer import load_vocabulary
    plain, new = plain_and_new
    vocab = load_vocabulary("qwen")
    text = ('<tool_call>\n{"name": "post", "arguments": {"title": "</tool", "body": "'
            + "ab" * 150 + '", "tags": ["x"]}}\n</tool_call>')
    over = text.replace("ab" * 150, "ab" * 150 + "c")
    for t, ok in ((text, True), (over, False)):
        ids = vocab.encode(t)
        verdicts = []
        for art in (plain, new):
            m = art.matcher()
            good = all(m.accepts(i) and (m.advance(i) or True) for i in ids)
            verdicts.append(good)
        assert verdicts == [ok, ok], (t[-80:], verdicts)
