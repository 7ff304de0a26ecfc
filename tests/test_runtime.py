"""The runtime contract (DESIGN.md): masks as stored views, O(1) advance, the rejection rule,
forced tokens, rollback/reset/copy, and a runtime that imports nothing heavy."""

from __future__ import annotations


import numpy as np
import pytest

import toolc
from toolc.runtime.tables import DROP, KEEP
from toolc.tokenizer import load_vocabulary
from toolc.schema.strings import expanded_lengths
from helpers import heavy_modules_after

VOCAB = load_vocabulary("qwen")
TOOL_CALL, IM_END = 151657, 151645


@pytest.fixture(scope="module")
def art():
    return toolc.compile_tools("schemas/weather.json", "qwen")


@pytest.fixture(scope="module")
def required():
    return toolc.compile_tools("schemas/weather.json", "qwen", tool_choice="required",
                               parallel=False)


def _call_ids(args='{"city": "Paris"}', name="get_current_weather"):
    text = ('<tool_call>\n{"name": "' + name + '", "arguments": ' + args
            + '}\n</tool_call><|im_end|>')
    return VOCAB.encode(text)


def test_describes_itself(art):
    assert art.vocab_size == 151669
    assert art.logits_size == 151936
    assert art.eos_token_ids == (151645, 151643)
    assert art.tool_names == ["get_current_weather", "get_forecast"]
    assert art.format == "hermes"
    assert art.fingerprint == VOCAB.fingerprint
    assert art.num_states > 10


def test_mask_is_a_read_only_view_of_a_stored_row(art):
    m = art.matcher()
    a, b = m.mask(), m.mask()
    assert a.dtype == np.int32 and a.shape == ((art.logits_size + 31) // 32,)
    assert np.shares_memory(a, b) and np.shares_memory(a, art.mask_rows)
    with pytest.raises(ValueError):
        a[0] = 0


def test_mask_bits_match_accepts_and_allowed_ids(art):
    m = art.matcher()
    for t in _call_ids()[:6]:
        mask = m.mask().view(np.uint32)
        allowed = m.allowed_token_ids()
        bits = np.flatnonzero(np.unpackbits(mask.view(np.uint8), bitorder="little"))
        assert np.array_equal(bits, allowed)
        for probe in list(allowed[:50]) + [0, 100, 151668, 151700, 151935]:
            assert m.accepts(int(probe)) == bool((mask[probe // 32] >> (probe % 32)) & 1)
        assert not any(t >= art.vocab_size for t in allowed)
        m.advance(t)


def test_advance_along_a_call_then_terminate(art):
    m = art.matcher()
    ids = _call_ids()
    for t in ids[:-1]:
        assert not m.is_terminated()
        m.advance(t)
    assert m.is_accepting()
    m.advance(ids[-1])
    assert m.is_terminated()
    assert len(m.allowed_token_ids()) == 0
    with pytest.raises(toolc.RejectedTokenError):
        m.advance(IM_END)


def test_rejected_token_leaves_state_unchanged(art):
    m = art.matcher()
    ids = _call_ids()
    for t in ids[:5]:
        m.advance(t)
    before, consumed = m.state, m.num_consumed
    bad = next(t for t in range(1000) if not m.accepts(t))
    with pytest.raises(toolc.RejectedTokenError) as e:
        m.advance(bad)
    assert isinstance(e.value, ValueError)
    assert m.state == before and m.num_consumed == consumed
    for t in (-1, art.logits_size, 10**9):
        assert not m.accepts(t)
        with pytest.raises(toolc.RejectedTokenError):
            m.advance(t)


def test_rollback_reset_copy(art):
    m = art.matcher()
    ids = _call_ids()
    states = [m.state]
    for t in ids:
        m.advance(t)
        states.append(m.state)
    m.rollback(3)
    assert m.state == states[-4]
    c = m.copy()
    m.rollback(len(ids) - 3)
    assert m.state == states[0] == 0
    assert c.state == states[-4]          # a copy is independent
    for t in ids[-3:]:
        c.advance(t)
    assert c.is_terminated()
    with pytest.raises(ValueError):
        m.rollback(1)
    c.reset()
    assert c.state == 0 and c.num_consumed == 0


def test_forced_tokens(required):
    m = required.matcher()
    # required mode: the call's opening token is the only choice
    forced = m.forced_tokens()
    assert forced[:1] == [TOOL_CALL]
    for t in forced:
        assert m.accepts(t)
        m.advance(t)
    ids = _call_ids()
    m2 = required.matcher()
    for t in ids[:-1]:
        m2.advance(t)
    # after the closing tag without parallel calls, only EOS may follow
    assert set(m2.forced_tokens()) <= set(required.eos_token_ids)


def test_save_load_same_bytes(art, tmp_path):
    p = tmp_path / "w.toolc"
    size = art.save(p)
    assert p.stat().st_size == size
    loaded = toolc.load(p, tokenizer=VOCAB)
    assert loaded.to_bytes() == art.to_bytes()
    assert np.array_equal(loaded.mask_rows, art.mask_rows)


def test_runtime_imports_nothing_heavy(art, tmp_path):
    p = tmp_path / "w.toolc"
    art.save(p)
    code = f"""
import toolc
a = toolc.load({str(p)!r})
m = a.matcher(); m.mask(); m.advance({TOOL_CALL})
"""
    assert heavy_modules_after(code) == []


def test_threads_share_one_artifact(art):
    from concurrent.futures import ThreadPoolExecutor
    ids = _call_ids()

    def run(_):
        m = art.matcher()
        seen = []
        for t in ids:
            seen.append(m.state)
            m.advance(t)
        return seen, m.is_terminated()

    with ThreadPoolExecutor(4) as ex:
        results = list(ex.map(run, range(16)))
    assert all(r == results[0] for r in results) and results[0][1]


def _reference(logits: np.ndarray, m) -> np.ndarray:
    bits = np.unpackbits(m.mask().view(np.uint8), bitorder="little")[:len(logits)]
    out = np.full_like(logits, -np.inf)
    n = min(len(bits), len(logits))
    keep = np.zeros(len(logits), bool)
    keep[:n] = bits[:n].astype(bool)
    out[keep] = logits[keep]
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_apply_mask_matches_the_bits_in_every_visited_state(art, dtype):
    rng = np.random.default_rng(0)
    m = art.matcher()
    ids = _call_ids('{"city": "Zürich \\"ZH\\"", "unit": "celsius"}')
    seen_kinds = set()
    for t in ids:
        logits = rng.standard_normal(art.logits_size).astype(dtype)
        expect = _reference(logits, m)
        got = toolc.apply_mask(logits.copy(), m)
        assert np.array_equal(got, expect)
        seen_kinds.add(art.apply_plan(art.state_row(m.state))[0])
        m.advance(t)
    assert seen_kinds == {KEEP, DROP}      # both the few-allowed and the few-forbidden paths
    with pytest.raises(ValueError):
        toolc.apply_mask(np.zeros(10, np.float32), m)


def test_apply_mask_forbids_padding_past_the_logits_size(art):
    m = art.matcher()
    logits = np.zeros(art.logits_size + 64, np.float32)
    toolc.apply_mask(logits, m)
    assert np.all(np.isneginf(logits[art.vocab_size:]))


def test_bounded_string_classes_advance_like_the_flat_tables():
    """A bounded string's counting states are wide classes with 100k+ exceptions each (every
    token length leads elsewhere), hundreds to a bucket of advance's bisection: every state,
    on its allowed tokens (sampled) and on forbidden ones, advances as the artifact's flat
    per-state tables (built from the file's arrays, not the runtime's) say."""
    tools = [{"type": "function", "function": {"name": "note", "parameters": {
        "type": "object", "properties": {"title": {"type": "string", "maxLength": 6}},
        "required": ["title"]}}}]
    with expanded_lengths():        # the bound as a chain of states, not a counter
        art = toolc.compile_tools(tools, VOCAB)
    sizes = np.diff(np.frombuffer(art.sections["exc_ptr"], "<i4"))
    assert sizes.max() > 50_000
    rng = np.random.default_rng(0)
    checked = 0
    for q in range(art.num_states):
        m = art.matcher(q)
        allowed = m.allowed_token_ids()
        exc, default = art.transitions(q)
        sample = rng.choice(allowed, min(len(allowed), 300), replace=False) \
            if len(allowed) else []
        for t in [int(x) for x in sample]:
            c = m.copy()
            c.advance(t)
            assert c.state == exc.get(t, default), (q, t)
            checked += 1
        mask = np.zeros(art.logits_size, dtype=bool)
        mask[allowed] = True
        for t in rng.choice(np.flatnonzero(~mask), 20).tolist():
            assert not m.accepts(t)
    assert checked > 10_000


# -- a strict API (issue 17) ------------------------------------------------------------------

@pytest.mark.parametrize("bad", [0.9, 1.0, "5", True, False, np.bool_(True), np.array([5]),
                                 np.float32(3), None, [1]])
def test_a_token_that_is_not_an_integer_is_a_type_error_and_changes_nothing(art, bad):
    m = art.matcher()
    first = int(m.allowed_token_ids()[0])
    m.advance(first)
    before, consumed = m.state, m.num_consumed
    with pytest.raises(TypeError):
        m.advance(bad)
    with pytest.raises(TypeError):
        m.accepts(bad)
    assert m.state == before and m.num_consumed == consumed


@pytest.mark.parametrize("kind", [np.int32, np.int64, np.uint16, np.intp])
def test_numpy_integers_are_token_ids(art, kind):
    m = art.matcher()
    t = int(m.allowed_token_ids()[0])
    assert m.accepts(kind(t))
    m.advance(kind(t))
    assert m.num_consumed == 1
    m.rollback(kind(1))
    assert m.num_consumed == 0


@pytest.mark.parametrize("bad,error", [(0.5, TypeError), ("1", TypeError), (True, TypeError),
                                       (-1, ValueError), (2, ValueError)])
def test_rollback_takes_a_non_negative_integer_within_the_history(art, bad, error):
    m = art.matcher()
    m.advance(int(m.allowed_token_ids()[0]))
    before = m.state
    with pytest.raises(error):
        m.rollback(bad)
    assert m.state == before and m.num_consumed == 1


def test_a_terminated_matcher_allows_nothing_and_apply_mask_agrees(art):
    """The documented rule: after EOS the mask is all zeros; apply_mask fills every logit."""
    from toolc.runtime.bitmask import apply_mask
    m = art.matcher()
    for t in _call_ids():
        m.advance(t)
    assert m.is_terminated()
    assert not m.mask().any() and len(m.allowed_token_ids()) == 0
    logits = np.zeros(art.logits_size, dtype=np.float32)
    apply_mask(logits, m)
    assert np.all(logits == -np.inf)
    assert not any(m.accepts(t) for t in (0, IM_END, art.logits_size - 1))


def test_every_state_advances_as_the_flat_tables_say():
    """tools10 (wide classes with and without exceptions, derived ones, narrow dict classes):
    in every state, advance, accepts and advance_batch's numpy lookups agree with the
    artifact's per-state tables built from the file's arrays (not the runtime's), on every
    exception token, on sampled default tokens and on sampled forbidden ones."""
    art = toolc.compile_tools("schemas/tools10.json", "qwen")
    rng = np.random.default_rng(1)
    kinds = {"narrow": 0, "wide": 0, "exception": 0}
    batch_ms, batch_toks, batch_want = [], [], []
    for q in range(art.num_states):
        m = art.matcher(q)
        allowed = m.allowed_token_ids()
        exc, default = art.transitions(q)
        plain = np.setdiff1d(allowed, np.fromiter(exc, dtype=np.int64, count=len(exc)))
        picks = list(exc)[:40] + rng.choice(plain, min(len(plain), 8), replace=False).tolist()
        wide = art._t.st[4 * q] >= 0
        for t in picks:
            c = m.copy()
            c.advance(t)
            assert c.state == exc.get(t, default), (q, t)
            assert c.num_consumed == 1 and m.accepts(t)
            kinds["exception" if t in exc else "wide" if wide else "narrow"] += 1
            batch_ms.append(art.matcher(q))
            batch_toks.append(t)
            batch_want.append(c.state)
        mask = np.zeros(art.logits_size, dtype=bool)
        mask[allowed] = True
        for t in rng.choice(np.flatnonzero(~mask), 4).tolist():
            assert not m.accepts(t)
            with pytest.raises(toolc.RejectedTokenError):
                m.advance(t)
            assert m.state == q
    assert min(kinds.values()) > 500, kinds
    for lo in range(0, len(batch_ms), 256):
        ms = batch_ms[lo:lo + 256]
        toolc.advance_batch(ms, batch_toks[lo:lo + 256])
        assert [m.state for m in ms] == batch_want[lo:lo + 256]


def test_warming_takes_every_branch_of_advance():
    """The load's warm-up advances from a state of each kind (toolc/runtime/warm.py): a wide
    class's default token, one of its exceptions and a narrow class's token, each allowed
    there and leading where the file's tables say."""
    from toolc.runtime.warm import branch_picks
    art = toolc.compile_tools("schemas/tools10.json", "qwen")
    picks = branch_picks(art)
    kinds = set()
    for q, t in picks:
        exc, default = art.transitions(q)
        m = art.matcher(q)
        m.advance(t)
        assert m.state == exc.get(t, default)
        kinds.add("narrow" if art._t.st[4 * q] < 0 else "exception" if t in exc else "default")
    assert kinds == {"narrow", "exception", "default"}


def test_a_load_brings_the_engines_calls_with_it(weather_file):
    """After a load, a process's first ``apply_mask`` or bitmask fill imports nothing: the
    warm-up imported their module (a first request paid 4 ms for it here)."""
    import subprocess
    import sys
    code = ("import sys, toolc\n"
            "before = 'toolc.runtime.bitmask' in sys.modules\n"
            f"toolc.load({str(weather_file)!r})\n"
            "print(before, 'toolc.runtime.bitmask' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "True"]
