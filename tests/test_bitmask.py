"""toolc/runtime/bitmask.py: the ecosystem's bitmask names, against a plain reference and
against llguidance's own numpy helpers (the layout and argument order engines already use)."""

from __future__ import annotations

import random
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


@pytest.mark.parametrize("width,words", [(320, 10), (330, 11), (300, 10), (352, 10)])
def test_apply_on_real_like_masks_and_views_matches_the_reference(width, words):
    """Masks like real ones (most words all allowed or all forbidden, a few mixed), widths
    that end inside a mask byte or past the mask; a strided logits view is written in place
    too, and float64 logits take the same path."""
    rng = np.random.default_rng(width)
    mask = rng.choice(np.array([0, -1], np.int32), size=(6, words))
    mask[rng.integers(6, size=3), rng.integers(words, size=3)] = [5, -7, 1 << 30]
    logits = rng.standard_normal((6, 2 * width)).astype(np.float32)
    view = logits[:, ::2]                  # not contiguous: must still be written in place
    want = np.stack([reference(view[i], mask[i]) for i in range(6)])
    assert bm.apply_token_bitmask_inplace(view, mask) is view
    np.testing.assert_array_equal(view, want)
    np.testing.assert_array_equal(logits[:, 1::2] == -np.inf, False)   # others untouched
    one = rng.standard_normal((3, width)).astype(np.float32)
    got = bm.apply_token_bitmask_inplace(one.copy(), mask[2], indices=[0, 2])
    np.testing.assert_array_equal(got[[0, 2]], np.stack([reference(one[i], mask[2])
                                                        for i in (0, 2)]))
    np.testing.assert_array_equal(got[1], one[1])
    wide = rng.standard_normal((6, width))
    np.testing.assert_array_equal(bm.apply_token_bitmask_inplace(wide.copy(), mask),
                                  np.stack([reference(wide[i], mask[i]) for i in range(6)]))


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


# -- batches: one gather for many rows ---------------------------------------------------------

@pytest.fixture(scope="module")
def math_art():
    return toolc.compile_tools("schemas/math.json", "qwen")


def per_row(items, words):
    """The batch's masks, one ``Matcher.mask()`` at a time (the reference)."""
    out = np.zeros((len(items), words), dtype=np.int32)
    for i, x in enumerate(items):
        out[i] = x.mask() if hasattr(x, "mask") else x[0].matcher(int(x[1])).mask()
    return out


def random_matchers(art, n, seed):
    rng = np.random.default_rng(seed)
    return [art.matcher(int(q)) for q in rng.integers(art.num_states, size=n)]


def test_a_batch_of_matchers_fills_the_rows_their_masks_say(art):
    ms = random_matchers(art, 40, 1)
    words = art.mask_rows.shape[1]
    b = toolc.allocate_token_bitmask(45, art.logits_size)
    toolc.fill_next_token_bitmask(ms, b, 3)                 # rows 3..42
    np.testing.assert_array_equal(b[3:43], per_row(ms, words))
    assert (b[:3] == -1).all() and (b[43:] == -1).all()
    pairs = [(art, m.state) for m in ms]
    b2 = np.zeros((40, words), dtype=np.int32)
    toolc.fill_next_token_bitmask(pairs, b2)
    np.testing.assert_array_equal(b2, b[3:43])
    rows = list(range(39, -1, -1))                          # rows named one by one
    b3 = np.zeros((40, words), dtype=np.int32)
    toolc.fill_next_token_bitmask(ms, b3, rows)
    np.testing.assert_array_equal(b3[::-1], b2)


def test_a_batch_over_two_artifacts_fills_each_row_from_its_own(art, math_art):
    ms = random_matchers(art, 7, 2) + random_matchers(math_art, 5, 3)
    random.Random(4).shuffle(ms)
    words = art.mask_rows.shape[1]
    b = np.zeros((12, words), dtype=np.int32)
    toolc.fill_next_token_bitmask(ms, b)
    np.testing.assert_array_equal(b, per_row(ms, words))
    b2 = np.zeros((14, words), dtype=np.int32)
    toolc.fill_next_token_bitmask([(m._art, m.state) for m in ms], b2, list(range(2, 14)))
    np.testing.assert_array_equal(b2[2:], b)


def test_a_batch_refuses_what_it_cannot_fill(art):
    words = art.mask_rows.shape[1]
    b = np.zeros((4, words), dtype=np.int32)
    ms = random_matchers(art, 3, 5)
    with pytest.raises(ValueError, match="do not fit"):
        toolc.fill_next_token_bitmask(ms, b, 2)
    with pytest.raises(ValueError, match="row indices"):
        toolc.fill_next_token_bitmask(ms, b, [0, 1, 4])
    with pytest.raises(ValueError, match="row indices"):
        toolc.fill_next_token_bitmask(ms, b, [0, 1])
    with pytest.raises(ValueError, match="not one of"):
        toolc.fill_next_token_bitmask([(art, art.num_states)], b)
    with pytest.raises(ValueError, match="not one of"):
        toolc.fill_next_token_bitmask([(art, 1.0)], b)
    with pytest.raises(ValueError, match="pairs"):
        toolc.fill_next_token_bitmask([3, 4], b)
    with pytest.raises(ValueError, match="int32"):
        toolc.fill_next_token_bitmask(ms, b.astype(np.int64))
    toolc.fill_next_token_bitmask([], b)                    # nothing to fill
    assert not b.any()


def test_the_filler_copies_what_changed_and_stays_equal_to_the_masks(art, math_art):
    """Steps of a batch walking random tokens, a batch that shrinks, another artifact, a mixed
    batch: after every fill the rows are the matchers' masks."""
    filler = toolc.BitmaskFiller(16, art.logits_size)
    words = art.mask_rows.shape[1]
    rng = np.random.default_rng(6)
    ms = [art.matcher() for _ in range(16)]
    for step in range(30):
        got = filler.fill(ms)
        np.testing.assert_array_equal(got, per_row(ms, words))
        for m in ms:
            if m.is_terminated():
                m.reset()
            ids = m.allowed_token_ids()
            m.advance(int(ids[rng.integers(len(ids))]))
    for step in range(6):           # a few rows change per step: copied one by one
        for m in ms[step::7]:
            if m.is_terminated():
                m.reset()
            ids = m.allowed_token_ids()
            m.advance(int(ids[rng.integers(len(ids))]) if step % 2 else TOOL_CALL
                      if m.accepts(TOOL_CALL) else int(ids[-1]))
        np.testing.assert_array_equal(filler.fill(ms), per_row(ms, words))
    assert filler.fill(ms[:5]).shape == (5, words)
    other = random_matchers(math_art, 9, 7)
    np.testing.assert_array_equal(filler.fill(other), per_row(other, words))
    mixed = other[:4] + ms[:6]
    np.testing.assert_array_equal(filler.fill(mixed), per_row(mixed, words))
    np.testing.assert_array_equal(filler.fill(ms), per_row(ms, words))
    with pytest.raises(ValueError):
        filler.bitmask[0, 0] = 0                            # read-only to the engine
    with pytest.raises(ValueError, match="a batch of 17"):
        filler.fill(ms + ms[:1])


def test_a_matcher_whose_mask_is_not_its_stored_row_is_copied_by_itself(art):
    """A matcher that says ``thinned()`` (a mask narrowed from its state's stored row) gets
    its own mask, in a batch fill and in the filler, never its state's stored row."""
    class Thinned(type(art.matcher())):
        __slots__ = ("row",)

        def thinned(self):
            return True

        def mask(self):
            return self.row

    ms = random_matchers(art, 6, 8)
    odd = Thinned(art)
    odd.row = np.zeros(art.mask_rows.shape[1], dtype=np.int32)
    odd.row[0] = 5
    batch = ms[:3] + [odd] + ms[3:]
    want = per_row(batch, art.mask_rows.shape[1])
    b = np.full((7, art.mask_rows.shape[1]), -1, dtype=np.int32)
    toolc.fill_next_token_bitmask(batch, b)
    np.testing.assert_array_equal(b, want)
    filler = toolc.BitmaskFiller(7, art.logits_size)
    for _ in range(2):
        np.testing.assert_array_equal(filler.fill(batch), want)


# -- a filler over the engine's own bitmask ----------------------------------------------------

def step_some(ms, rng, every=3):
    """Advance every ``every``-th matcher by a random allowed token (reset once terminated)."""
    for m in ms[rng.integers(every)::every]:
        if m.is_terminated():
            m.reset()
        ids = m.allowed_token_ids()
        m.advance(int(ids[rng.integers(len(ids))]))


def test_a_reused_bitmask_is_filled_incrementally_and_stays_exact(art):
    """The engine's array, filled step after step: rows equal the masks after every fill;
    requests moved between rows, rollbacks and a shrinking batch included."""
    engine = toolc.allocate_token_bitmask(20, art.logits_size)
    filler = toolc.BitmaskFiller(16, art.logits_size, bitmask=engine)
    words = art.mask_rows.shape[1]
    rng = np.random.default_rng(11)
    ms = [art.matcher() for _ in range(16)]
    for step in range(24):
        got = filler.fill(ms)
        assert np.shares_memory(got, engine)
        np.testing.assert_array_equal(engine[:16], per_row(ms, words))
        step_some(ms, rng)
        if step % 5 == 4:
            ms = [ms[i] for i in rng.permutation(16)]        # requests change rows
        if step % 7 == 6:
            for m in ms[::4]:
                m.rollback(min(2, m.num_consumed))
    for m in ms[1::2]:
        m.reset()
    filler.fill(ms[:9])
    np.testing.assert_array_equal(engine[:9], per_row(ms[:9], words))
    assert (engine[16:] == -1).all()                    # rows past the batch: untouched


def test_a_reused_bitmask_skips_rows_whose_mask_did_not_change(art):
    """The point of the filler: a row whose (artifact, mask row) is the same is not written
    (here, a value only the filler's own handle could have put there survives)."""
    engine = toolc.allocate_token_bitmask(4, art.logits_size)
    filler = toolc.BitmaskFiller(4, art.logits_size, bitmask=engine)
    ms = [art.matcher() for _ in range(4)]
    filler.fill(ms)
    filler._buf[2, 0] ^= 1                      # behind the filler's back, on its own handle
    filler.fill(ms)
    assert engine[2, 0] != ms[2].mask()[0]      # kept: proves the row was skipped
    ms[2].advance(TOOL_CALL)
    filler.fill(ms)
    np.testing.assert_array_equal(engine, per_row(ms, engine.shape[1]))


def test_a_reused_bitmask_written_by_others_is_filled_whole_again(art, math_art):
    """Tampering that the filler can see: the array made writable and written, another
    toolc fill of the same memory (through its base), another filler over it, another
    artifact; and release() for the writes it cannot see."""
    words = art.mask_rows.shape[1]
    base = toolc.allocate_token_bitmask(8, art.logits_size)
    engine = base[:]                                 # a view: the base stays writable
    filler = toolc.BitmaskFiller(8, art.logits_size, bitmask=engine)
    rng = np.random.default_rng(3)
    ms = [art.matcher() for _ in range(8)]
    for m in ms[::2]:
        m.advance(TOOL_CALL)
    filler.fill(ms)
    with pytest.raises(ValueError):
        engine[0, 0] = 0                            # read-only while the filler holds it
    want = per_row(ms, words)

    engine.flags.writeable = True                   # 1. the engine takes it back and writes
    engine[:] = 0
    np.testing.assert_array_equal(filler.fill(ms), want)
    with pytest.raises(ValueError):
        toolc.fill_next_token_bitmask(ms[0], engine, 0)

    other = random_matchers(art, 8, 5)              # 2. a toolc fill through the base
    toolc.fill_next_token_bitmask(other, base)
    np.testing.assert_array_equal(filler.fill(ms), want)

    second = toolc.BitmaskFiller(8, art.logits_size, bitmask=base[:8])   # 3. another filler
    second.fill(other)
    np.testing.assert_array_equal(filler.fill(ms), want)
    np.testing.assert_array_equal(second.fill(other), per_row(other, words))
    np.testing.assert_array_equal(filler.fill(ms), want)

    maths = random_matchers(math_art, 8, 9)         # 4. another artifact, and back
    np.testing.assert_array_equal(filler.fill(maths), per_row(maths, words))
    np.testing.assert_array_equal(filler.fill(ms), want)

    filler.release()                                # 5. writes it cannot see: release first
    assert engine.flags.writeable
    base[:] = 0
    step_some(ms, rng, every=2)
    np.testing.assert_array_equal(filler.fill(ms), per_row(ms, words))
    assert not engine.flags.writeable


def test_a_filler_refuses_a_bitmask_it_cannot_hold(art):
    b = toolc.allocate_token_bitmask(4, art.logits_size)
    with pytest.raises(ValueError, match="8 rows or more"):
        toolc.BitmaskFiller(8, art.logits_size, bitmask=b)
    with pytest.raises(ValueError, match="int32"):
        toolc.BitmaskFiller(4, art.logits_size, bitmask=b.astype(np.int64))
    b.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        toolc.BitmaskFiller(4, art.logits_size, bitmask=b)


# -- advance_batch: a batch's step in one call ------------------------------------------------

@pytest.fixture(scope="module")
def counted_art():
    tool = {"type": "function", "function": {"name": "note", "parameters": {
        "type": "object", "properties": {"text": {"type": "string", "maxLength": 5}},
        "required": ["text"], "additionalProperties": False}}}
    return toolc.compile_tools([tool], "qwen")


@pytest.mark.parametrize("which,n", [("art", 12), ("art", 40), ("counted_art", 40)])
def test_advance_batch_moves_every_matcher_as_advance_does(which, n, request):
    """Random walks, plain and counted matchers, small batches (a Python loop) and large ones
    (plain: the lookups in numpy): advance_batch's states (and counters, and histories for
    rollback) are those of advance called row by row."""
    a = request.getfixturevalue(which)
    rng = random.Random(3)
    ms = [a.matcher() for _ in range(n)]
    twins = [m.copy() for m in ms]
    for _ in range(40):
        toks = []
        for m, tw in zip(ms, twins):
            if m.is_terminated():
                m.reset()
                tw.reset()
            ids = m.allowed_token_ids()
            toks.append(int(ids[rng.randrange(len(ids))]) if rng.random() < 0.7
                        else TOOL_CALL if m.accepts(TOOL_CALL) else int(ids[0]))
        toolc.advance_batch(ms, np.array(toks) if rng.random() < 0.5 else toks)
        for tw, t in zip(twins, toks):
            tw.advance(t)
        assert [m.state for m in ms] == [m.state for m in twins]
        assert [getattr(m, "counter", 0) for m in ms] == [getattr(m, "counter", 0)
                                                         for m in twins]
    for m, tw in zip(ms, twins):
        n = min(3, m.num_consumed)
        m.rollback(n)
        tw.rollback(n)
        assert m.state == tw.state and m.num_consumed == tw.num_consumed


@pytest.mark.parametrize("which,n", [("art", 3), ("art", 20), ("counted_art", 3)])
def test_advance_batch_is_all_or_nothing(which, n, request):
    a = request.getfixturevalue(which)
    ms = [a.matcher() for _ in range(n)]
    before = [m.state for m in ms]
    for bad in (next(t for t in range(a.logits_size) if not ms[1].accepts(t)), -1,
                a.logits_size):
        with pytest.raises(toolc.RejectedTokenError) as e:
            toolc.advance_batch(ms, [TOOL_CALL, bad] + [TOOL_CALL] * (n - 2))
        assert e.value.batch_index == 1 and e.value.token_id == bad
        assert [m.state for m in ms] == before and all(m.num_consumed == 0 for m in ms)
        assert all(getattr(m, "counter", 0) == 0 for m in ms)
    with pytest.raises(ValueError, match=f"2 tokens for {n}"):
        toolc.advance_batch(ms, [TOOL_CALL, TOOL_CALL])
    with pytest.raises(TypeError):
        toolc.advance_batch(ms, [TOOL_CALL, 1.5] + [TOOL_CALL] * (n - 2))
    assert [m.state for m in ms] == before and all(m.num_consumed == 0 for m in ms)
