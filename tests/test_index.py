"""The numpy vocabulary walk against its plain byte-by-byte twin, state by state."""

from __future__ import annotations

import json

import random

import numpy as np
import pytest

from toolc.compiler import _argument_exprs
from toolc.formats import FormatOptions, get_format
from toolc.fsm import compile_expr
from toolc.walk import walk
from toolc.walk.trie import build_trie
from toolc._reference.walk import walk_state
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


# -- region sharing ---------------------------------------------------------------------------
# String interiors (and other looping states) are walked once per family of isomorphic copies;
# the rest of each copy's walk (tokens crossing the closing quote, paths entering a string from
# a key) is renamed or walked per instance. These sets have many such copies.

def _tool(name, props, required=None):
    return {"type": "function", "function": {"name": name, "parameters": {
        "type": "object", "properties": props,
        "required": list(props) if required is None else required,
        "additionalProperties": False}}}


S = {"type": "string"}
SHARED_TOOLS = [
    _tool("note", {"title": S, "body": S, "tags": {"type": "array", "items": S, "maxItems": 3}}),
    _tool("mail", {"to": {"type": "string", "format": "uuid"}, "subject": S,
                   "cc": {"type": ["string", "null"]}, "urgent": {"type": "boolean"}},
          required=["to", "subject"]),
    _tool("code", {"id": {"type": "string", "pattern": "^[a-z_]+$"},
                   "short": {"type": "string", "maxLength": 3},
                   "when": {"type": "string", "format": "date-time"},
                   "count": {"type": "integer"}, "ratio": {"type": "number"}}),
    _tool("search", {"query": S, "lang": {"enum": ["en", "fr", "de"]},
                     "filter": {"type": "object", "properties": {"text": S, "near": S},
                                "required": ["text"], "additionalProperties": False}},
          required=["query"]),
    _tool("translate", {"source": S, "target": S, "glossary": {
        "type": "array", "items": {"type": "object", "properties": {"from": S, "to": S},
                                   "required": ["from", "to"], "additionalProperties": False}}}),
]
# qwen3-coder writes string arguments raw, where a pattern or format is refused: plain strings
RAW_TOOLS = json.loads(json.dumps(SHARED_TOOLS).replace('"format": "uuid"', '"minLength": 1')
                       .replace('"pattern": "^[a-z_]+$"', '"minLength": 1')
                       .replace('"format": "date-time"', '"minLength": 1'))
# non-ASCII literals and pattern ranges split the high bytes finer: the walk builds its own trie
FINE_TOOLS = SHARED_TOOLS[:2] + [
    _tool("accent", {"word": {"type": "string", "pattern": "^[a-zà-ÿ]+$"}, "free": S,
                     "lang": {"enum": ["en", "日本語"]}})]

# tokens that cross a region's boundary, escape, or end inside a character
CROSSING = ['"}', '"}}', '"},', '",', '", "', '":', '": "', '"\n', '"]', '"],', '\\', '\\"',
            '\\n', '\\u', '\\u00', 'é', '日本', ' "', '"a', 'abc"', '<tool', '</tool',
            '<tool_call>', '\n', '", "to": "']


def _built(tools, **opts):
    from toolc.compiler import build_dfa
    b = build_dfa(tools, VOCAB, **opts)
    return b.dfa, b.symbols


def _crossing_tokens(n: int, seed: int) -> list[int]:
    ids = set(_sample_tokens(n, seed))
    for text in CROSSING:
        ids.update(VOCAB.encode(text))
    # tokens that begin or end inside a UTF-8 character
    partial = [t for t in range(VOCAB.vocab_size) if t not in VOCAB.added_ids
               and VOCAB.token_bytes[t] and not _utf8(VOCAB.token_bytes[t])]
    ids.update(random.Random(seed).sample(partial, min(60, len(partial))))
    return sorted(ids)


def _utf8(b: bytes) -> bool:
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def _without_regions(monkeypatch, dfa, symbols, stats=None):
    import toolc.walk.index as index_module
    from toolc.walk.regions import _empty
    with monkeypatch.context() as m:
        m.setattr(index_module, "find_regions", lambda trans, *a, **k: _empty(trans.shape[0]))
        return walk(dfa, VOCAB, symbols, stats=stats)


FIELDS = ("run_ptr", "run_lo", "run_hi", "run_target", "sp_ptr", "sp_tokens", "sp_targets",
          "order", "final")


@pytest.mark.parametrize("tools,opts", [
    (SHARED_TOOLS, {}),
    (SHARED_TOOLS, {"tool_choice": "required", "parallel": False}),
    (RAW_TOOLS, {"format": "qwen3-coder"}),
    (FINE_TOOLS, {}),
])
def test_region_sharing_gives_the_plain_walk_exactly(tools, opts, monkeypatch):
    """Whole vocabulary, every state: the same runs as the walk with sharing turned off."""
    dfa, symbols = _built(tools, **opts)
    stats = {}
    shared = walk(dfa, VOCAB, symbols, stats=stats)
    assert stats["instances"] > 0 and stats["exits"] > 0 and stats["joins"] > 0
    plain_stats = {}
    plain = _without_regions(monkeypatch, dfa, symbols, plain_stats)
    for f in FIELDS:
        a, b = getattr(shared, f), getattr(plain, f)
        assert a.dtype == b.dtype and np.array_equal(a, b), f
    assert sum(stats["frontier"]) < sum(plain_stats["frontier"])


@pytest.mark.parametrize("tools,opts", [
    (SHARED_TOOLS, {}),
    (RAW_TOOLS, {"format": "qwen3-coder"}),
    (FINE_TOOLS, {"tool_choice": "required"}),
])
def test_narrow_levels_give_the_numpy_levels_exactly(tools, opts, monkeypatch):
    """Whole vocabulary, every state: the walk with narrow frontiers done triple by triple in
    Python (toolc.walk.narrow; here every frontier it can take) equals the numpy levels'."""
    import toolc.walk.index as index_module
    from toolc.walk import narrow
    dfa, symbols = _built(tools, **opts)
    taken = []

    def counting(*a):
        got = narrow.narrow_level(*a)
        taken.append(got is not None)
        return got

    with monkeypatch.context() as m:
        m.setattr(index_module, "NARROW", 0)
        numpy_only = walk(dfa, VOCAB, symbols)
        m.setattr(index_module, "NARROW", 10 ** 9)
        m.setattr(index_module, "narrow_level", counting)
        narrowed = walk(dfa, VOCAB, symbols)
    assert sum(taken) >= 10 and not all(taken)     # taken often, and refused sometimes
    for f in FIELDS:
        a, b = getattr(narrowed, f), getattr(numpy_only, f)
        assert a.dtype == b.dtype and np.array_equal(a, b), f


@pytest.mark.parametrize("tools", [SHARED_TOOLS, FINE_TOOLS])
def test_region_sharing_matches_slow_twin_in_every_state(tools):
    dfa, symbols = _built(tools)
    index = walk(dfa, VOCAB, symbols)
    sample = _crossing_tokens(300, seed=7)
    sample_set = np.array(sample)
    for q in range(dfa.num_states):
        slow = walk_state(dfa, VOCAB, symbols, q, token_ids=sample)
        toks, tg = index.transitions(q)
        keep = np.isin(toks, sample_set)
        assert dict(zip(toks[keep].tolist(), tg[keep].tolist())) == slow, f"state {q}"


def _runs_reference(o, lo, hi, tg):
    """Runs sorted by (origin, lo), adjacent runs of one origin to one target merged."""
    out = []
    for r in sorted(zip(o.tolist(), lo.tolist(), hi.tolist(), tg.tolist())):
        if out and out[-1][0] == r[0] and out[-1][2] == r[1] and out[-1][3] == r[3]:
            out[-1][2] = r[2]
        else:
            out.append(list(r))
    return [list(c) for c in zip(*out)] if out else [[], [], [], []]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("origin_bits", [6, 50])     # 50: the keys do not fit beside the index
def test_sorted_runs_sorts_and_merges(seed, origin_bits):
    from toolc.walk.runs import _run_keys, _sorted_runs
    rng = np.random.default_rng(seed)
    span_bits = 10
    # each origin's positions 0..1000 cut into runs, shuffled; targets from a small set so
    # that neighbours often share one
    o, lo, hi, tg = [], [], [], []
    for origin in rng.choice(1 << origin_bits, size=20, replace=False).tolist():
        cuts = np.unique(np.concatenate([[0, 1000], rng.integers(1, 1000, size=30)]))
        keep = rng.random(len(cuts) - 1) < 0.8
        for a, b in zip(cuts[:-1][keep].tolist(), cuts[1:][keep].tolist()):
            o.append(origin), lo.append(a), hi.append(b), tg.append(int(rng.integers(0, 3)))
    k = rng.permutation(len(o))
    o, lo, hi, tg = (np.array(x, dtype=np.int64)[k] for x in (o, lo, hi, tg))
    lo32, hi32 = lo.astype(np.int32), hi.astype(np.int32)
    got = _sorted_runs(*_run_keys(o, lo32, hi32, tg, span_bits), span_bits, np.int32)
    want = _runs_reference(o, lo, hi, tg)
    assert [g.tolist() for g in got] == want
    assert got[1].dtype == np.int32 and got[2].dtype == np.int32 and got[3].dtype == np.int64
    assert len(got[0]) < len(o)         # some runs were merged
