"""toolc/runtime/bitmask.py: the ecosystem's bitmask names, against a plain reference and
against llguidance's own numpy helpers (the layout and argument order engines already use)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import toolc
from toolc.runtime import bitmask as bm

TOOL_CALL = 151657


@pytest.fixture(scope="module")
def art():
    return toolc.compile_tools("schemas/weather.json", "qwen")


def reference(logits: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """-inf wherever bit t % 32 of word t // 32 is clear, or past the mask's last bit."""
    out = logits.astype(np.float64).copy()
    for t in range(out.shape[-1]):
        w = t // 32
        if w >= mask.shape[-1] or not (int(mask[..., w]) >> (t % 32)) & 1:
            out[..., t] = -np.inf
    return out.astype(logits.dtype)


def test_shape_and_allocation_follow_the_logits_size(art):
    assert toolc.get_bitmask_shape(4, art.logits_size) == (4, (art.logits_size + 31) // 32)
    assert toolc.get_bitmask_shape(1, 33) == (1, 2)
    b = toolc.allocate_token_bitmask(3, art.logits_size)
    assert b.dtype == np.int32 and b.shape == (3, (art.logits_size + 31) // 32)
    assert (b == -1).all()                  # every token allowed until filled


def test_fill_next_token_bitmask_takes_llguidances_argument_order(art):
    bitmask = toolc.allocate_token_bitmask(3, art.logits_size)
    m, m2 = art.matcher(), art.matcher()
    m2.advance(TOOL_CALL)
    toolc.fill_next_token_bitmask(m, bitmask)          # index 0 by default
    toolc.fill_next_token_bitmask(m2, bitmask, 2)
    assert np.array_equal(bitmask[0], m.mask()) and np.array_equal(bitmask[2], m2.mask())
    assert (bitmask[1] == -1).all()                     # an unfilled row is untouched
    with pytest.raises(ValueError):
        toolc.fill_next_token_bitmask(m, np.zeros((2, bitmask.shape[1]), np.int64))
    with pytest.raises(ValueError):
        toolc.fill_next_token_bitmask(m, np.zeros((2, 7), np.int32))


def test_fill_bitmask_is_a_deprecated_alias(art):
    bitmask = np.zeros((2, (art.logits_size + 31) // 32), dtype=np.int32)
    m = art.matcher()
    with pytest.warns(DeprecationWarning, match="fill_next_token_bitmask"):
        toolc.fill_bitmask(bitmask, 1, m)
    assert np.array_equal(bitmask[1], m.mask()) and not bitmask[0].any()


@pytest.mark.parametrize("width,words", [(64, 2), (70, 2), (50, 2), (96, 3)])
def test_apply_matches_the_reference_for_rows_and_batches(width, words):
    rng = np.random.default_rng(width)
    mask = rng.integers(-2**31, 2**31, size=(3, words), dtype=np.int64).astype(np.int32)
    logits = rng.standard_normal((3, width)).astype(np.float32)
    got = bm.apply_token_bitmask_inplace(logits.copy(), mask)
    want = np.stack([reference(logits[i], mask[i]) for i in range(3)])
    np.testing.assert_array_equal(got, want)
    one = logits[0].copy()
    assert bm.apply_token_bitmask_inplace(one, mask[0]) is one       # in place, 1-D
    np.testing.assert_array_equal(one, want[0])


def test_apply_with_indices_masks_only_those_rows():
    rng = np.random.default_rng(5)
    mask = rng.integers(-2**31, 2**31, size=(2, 2), dtype=np.int64).astype(np.int32)
    logits = rng.standard_normal((4, 64)).astype(np.float32)
    got = bm.apply_token_bitmask_inplace(logits.copy(), mask, indices=[3, 1])
    want = logits.copy()
    want[3], want[1] = reference(logits[3], mask[0]), reference(logits[1], mask[1])
    np.testing.assert_array_equal(got, want)


def test_apply_refuses_what_it_cannot_read():
    with pytest.raises(TypeError):
        bm.apply_token_bitmask_inplace(np.zeros((1, 32)), np.zeros((1, 1), np.int64))
    with pytest.raises(ValueError):
        bm.apply_token_bitmask_inplace(np.zeros(32), np.zeros((2, 1), np.int32))
    with pytest.raises(ValueError):
        bm.apply_token_bitmask_inplace(np.zeros((3, 32)), np.zeros((2, 1), np.int32))


def test_agrees_with_llguidances_numpy_helpers(art):
    """Filled from real matchers, applied to a Qwen3-sized batch: llguidance's helpers and
    toolc's give the same logits, so an engine wired for one takes the other."""
    lg = pytest.importorskip("llguidance.numpy")
    assert lg.get_bitmask_shape(2, art.logits_size) == toolc.get_bitmask_shape(2, art.logits_size)
    b = toolc.allocate_token_bitmask(2, art.logits_size)
    assert np.array_equal(b, lg.allocate_token_bitmask(2, art.logits_size))
    m = art.matcher()
    m.advance(TOOL_CALL)
    toolc.fill_next_token_bitmask(art.matcher(), b, 0)
    toolc.fill_next_token_bitmask(m, b, 1)
    logits = np.random.default_rng(0).standard_normal((2, art.logits_size)).astype(np.float32)
    ours = bm.apply_token_bitmask_inplace(logits.copy(), b)
    theirs = logits.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lg.apply_token_bitmask_inplace(theirs, b)
    np.testing.assert_array_equal(ours, theirs)
    # and one row agrees with the runtime's own path, apply_mask
    row = logits[1].copy()
    toolc.apply_mask(row, m)
    np.testing.assert_array_equal(ours[1], row)
