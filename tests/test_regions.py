"""Isomorphic regions (toolc/walk/regions.py) on small hand-made automata, and on a real grammar."""

from __future__ import annotations

import numpy as np

from toolc.fsm import Bytes, byte_set, compile_expr, lit, seq, star, alt
from toolc.walk.index import _char_loops, _loop_masks
from toolc.walk.regions import find_regions
from toolc.tokenizer import load_vocabulary
from toolc.walk.trie import STANDARD_CLASSES, standard_trie

VOCAB = load_vocabulary("qwen")


def _regions(dfa):
    table = np.ascontiguousarray(dfa.trans[:, :dfa.alphabet.num_byte_classes])
    to_dfa = np.zeros(STANDARD_CLASSES.max() + 1, dtype=np.int64)
    to_dfa[STANDARD_CLASSES] = dfa.alphabet.byte_class
    loops, wide_states = _loop_masks(table, to_dfa)
    wide = np.zeros(len(table), dtype=bool)
    wide[wide_states] = True
    charloops = _char_loops(table, to_dfa, standard_trie(VOCAB).chars, wide_states)
    return table, loops, charloops, find_regions(table, loops, charloops, wide)


def _check_maps(table, loops, charloops, reg):
    """Every state's form is an image under a homomorphism of its region: same edges, same
    loops, region edges to the paired targets."""
    forms = np.flatnonzero(reg.can >= 0)
    for q in forms.tolist():
        r = int(reg.can[q])
        assert reg.rid[r] >= 0
        img = lambda s: int(reg.phi[reg.base[q] + reg.loc[s]])     # noqa: E731
        assert img(r) == q
        assert np.array_equal(table[q] >= 0, table[r] >= 0)
        assert np.array_equal(loops[q], loops[r]) and np.array_equal(charloops[q], charloops[r])
        for c in np.flatnonzero(table[r] >= 0).tolist():
            t = int(table[r, c])
            if reg.rid[t] == reg.rid[r]:
                assert table[q, c] == img(t), (q, c)
    return forms


def test_copies_that_differ_only_in_their_exits_share_one_region():
    # three "strings" with the same interior and escape, closed by a quote, then different
    # continuations
    body = star(alt(Bytes(byte_set("xyz")), seq(lit("\\"), Bytes(byte_set("nt")))))
    dfa = compile_expr(alt(seq(lit("a"), body, lit('"1')), seq(lit("c"), body, lit('"22')),
                           seq(lit("e"), body, lit('"333'))))
    table, loops, charloops, reg = _regions(dfa)
    forms = _check_maps(table, loops, charloops, reg)
    # one representative region (interior + escape state), two copies of it
    reps = np.flatnonzero(reg.rid >= 0)
    assert len(reps) == 2 and reg.num_instances == 4 and len(forms) == 6
    inter = {int(dfa.step_bytes(0, p)) for p in (b"a", b"c", b"e")}
    assert {int(reg.can[q]) for q in inter} == {int(reg.can[dfa.step_bytes(0, b"a")])}


def test_a_different_interior_is_not_a_copy():
    dfa = compile_expr(alt(seq(lit("a"), star(Bytes(byte_set("xy"))), lit('"1')),
                           seq(lit("c"), star(Bytes(byte_set("xyz"))), lit('"22'))))
    table, loops, charloops, reg = _regions(dfa)
    _check_maps(table, loops, charloops, reg)
    assert reg.num_instances == 0
    # each loop is a region of its own (paths that meet there are walked together)
    assert reg.num_regions == 2


def test_no_loops_no_regions():
    dfa = compile_expr(alt(lit("abc"), lit("abd")))
    _, _, _, reg = _regions(dfa)
    assert reg.num_regions == 0 and not (reg.can >= 0).any()


def test_string_properties_of_a_real_set_are_copies():
    from toolc.compiler import build_dfa

    dfa = build_dfa("schemas/assistant.json", VOCAB).dfa
    table, loops, charloops, reg = _regions(dfa)
    forms = _check_maps(table, loops, charloops, reg)
    assert reg.num_instances >= 100 and len(forms) > reg.num_instances
