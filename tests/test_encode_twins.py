"""toolc.encode_twins: near twins encoded from their twins' results, never copied.

The property: the artifact encoded from a sparse index (the twins' own runs only) means
exactly what the walk found, state by state and token by token: the same mask row and the same
next state for every allowed token as the filled-in index (and so as the artifact encoded
from it). Over hermes with closed strings (a partial ``</tool_call>`` in every string), free
text's partial ``<tool_call>`` states (twins with special tokens), and other formats.
"""

from __future__ import annotations

import numpy as np
import pytest

import toolc.encode_twins as ET
from toolc.compiler import build_dfa
from toolc.encode import build_artifact, encode_index
from toolc.formats.hermes import Hermes
from toolc.walk import walk

from tag_helpers import vocab_for
from test_index import RAW_TOOLS, SHARED_TOOLS, VOCAB


def _header(index, fmt="hermes"):
    return {"num_states": index.num_states, "logits_size": index.logits_size,
            "vocab_size": index.vocab_size, "eos_token_ids": list(index.eos_ids),
            "tools": [], "format": fmt, "fingerprint": "x", "tokenizer": "x"}


def _means_the_index(art, index, twin_of):
    """Each twin's (and every fifth other state's) mask row allows the index's tokens, each
    leading where the index says."""
    n = index.num_states
    states = np.union1d(np.flatnonzero(twin_of >= 0), np.arange(0, n, 5))
    for q in states.tolist():
        toks, tg = index.transitions(q)
        bits = np.unpackbits(art.matcher(q).mask().view(np.uint8), bitorder="little")
        assert np.array_equal(np.flatnonzero(bits[:index.logits_size]), toks), f"state {q}"
        assert np.array_equal(art._dense_targets(q, index.logits_size)[toks], tg), f"state {q}"


def _sparse(tools, vocab, **opts):
    b = build_dfa(tools, vocab, **opts)
    return walk(b.dfa, b.vocab, b.symbols, sparse_twins=True)


@pytest.mark.parametrize("closed,opts", [
    (True, {}),
    (True, {"tool_choice": "required", "parallel": False}),
    (False, {}),                    # free text's partial <tool_call> states only
    (True, {"reasoning": True}),
])
def test_twin_aware_encoding_means_what_the_walk_found(closed, opts, monkeypatch):
    monkeypatch.setattr(Hermes, "closed_strings", closed)
    monkeypatch.setattr(ET, "MIN_COPIES", 0)        # the twin-aware way, however few
    sparse = _sparse(SHARED_TOOLS, VOCAB, **opts)
    assert sparse.twin_of is not None and ET.encoded_as_twins(sparse)
    full = sparse.full()
    art = build_artifact(_header(full), sparse)
    _means_the_index(art, full, sparse.twin_of)
    # fewer or as many classes, rows and exceptions as the filled-in index's encoding
    a, b = encode_index(sparse), encode_index(full)
    for name in ("class_row", "row_kind", "exc_tokens"):
        assert len(a[name]) <= len(b[name]), name


@pytest.mark.parametrize("fmt,tools", [
    ("qwen3-coder", RAW_TOOLS),
    ("harmony", "schemas/weather.json"),
    ("deepseek-v3.2", RAW_TOOLS),
])
def test_twin_aware_encoding_in_other_formats(fmt, tools, monkeypatch):
    monkeypatch.setattr(ET, "MIN_COPIES", 0)
    vocab = VOCAB if fmt == "qwen3-coder" else vocab_for(fmt)
    sparse = _sparse(tools, vocab, format=fmt)
    if sparse.twin_of is None:
        pytest.skip(f"no near twins in {fmt}")
    full = sparse.full()
    _means_the_index(build_artifact(_header(full, fmt), sparse), full, sparse.twin_of)


def test_a_few_twins_are_filled_in_and_encoded_as_before(monkeypatch):
    """Free text's few twins (strings left open): the sparse index is filled in, byte for
    byte the plain way."""
    monkeypatch.setattr(Hermes, "closed_strings", False)
    sparse = _sparse(SHARED_TOOLS, VOCAB)
    assert sparse.twin_of is not None and not ET.encoded_as_twins(sparse)
    assert encode_index(sparse) == encode_index(sparse.full())


def test_closed_strings_are_encoded_the_twin_aware_way(monkeypatch):
    monkeypatch.setattr(Hermes, "closed_strings", True)
    sparse = _sparse(SHARED_TOOLS, VOCAB)
    assert ET.encoded_as_twins(sparse)
    # the twins' copies are never made: the sparse index holds a fraction of the runs
    assert len(sparse.run_lo) * 2 < len(sparse.full().run_lo)


def test_breaking_the_twin_codes_is_caught(monkeypatch):
    """The comparison above can fail: a twin given its own default instead of its twin's
    leads its copied tokens astray."""
    monkeypatch.setattr(Hermes, "closed_strings", True)
    sparse = _sparse(SHARED_TOOLS[:2], VOCAB)
    real = ET.twin_codes

    def shifted(twin_of, pairs, p_state, p_tg, first_at, default, code, tgt, tgt_ptr):
        tgt, ptr = real(twin_of, pairs, p_state, p_tg, first_at, default, code, tgt, tgt_ptr)
        tw = np.flatnonzero(twin_of >= 0)
        tgt = tgt.copy()
        tgt[ptr[tw[0]]] = tgt[ptr[tw[0]]] + 1       # one twin's first target moved
        return tgt, ptr

    import toolc.encode as E
    monkeypatch.setattr(E, "twin_codes", shifted)
    full = sparse.full()
    with pytest.raises(AssertionError):
        _means_the_index(build_artifact(_header(full), sparse), full, sparse.twin_of)


def test_partial_tag_rows_are_flips_of_a_string_row(monkeypatch):
    """A closed string's partial-tag states forbid a little more than a bitmap's words: their
    rows are stored as deltas against a string's complement row, not as bitmaps."""
    from toolc.runtime.fileformat import BITMAP, DELTA
    kinds = {}
    for closed in (False, True):
        monkeypatch.setattr(Hermes, "closed_strings", closed)
        s = encode_index(_sparse("schemas/tools10.json", VOCAB))
        kinds[closed] = np.frombuffer(s["row_kind"], "u1")
    assert (kinds[True] == BITMAP).sum() == (kinds[False] == BITMAP).sum()
    assert (kinds[True] == DELTA).sum() > (kinds[False] == DELTA).sum()
