"""The vocabulary's counting tables (toolc/walk/phasetables.py) on the real Qwen3 vocabulary:
every phase's table, the escapes' included, is the reference lexer's answer token by token,
and it and the quoted tokens are kept on disk and read back without lexing the vocabulary."""

from __future__ import annotations

import numpy as np
import pytest

from toolc.walk import phasetables
from toolc.walk.counts import IN0, NUM_PHASES, OUT, lex


def _sample(qwen, seed: int) -> list[int]:
    """Token ids with quotes, backslashes, multi-byte characters, and random ones."""
    spell = qwen.token_bytes
    picked = [i for i, b in enumerate(spell[:60000]) if b'"' in b or b"\\" in b][:60]
    picked += [i for i, b in enumerate(spell[100000:130000], 100000) if b and b[0] >= 0xC0][:30]
    rng = np.random.default_rng(seed)
    return picked + rng.integers(0, len(spell), 200).tolist()


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLC_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(phasetables, "_PHASE_TABLES", {})
    return tmp_path


@pytest.mark.parametrize("phase", range(NUM_PHASES))
def test_each_phase_table_is_the_lexers_answer(qwen, phase, fresh_cache):
    k, x, s = phasetables.phase_table(qwen, phase)
    assert len(k) == len(x) == len(s) == qwen.logits_size
    for t in sorted(qwen.added_ids)[:5]:
        assert (k[t], x[t], s[t]) == (0, 0, -1)
    spell = qwen.token_bytes
    for t in _sample(qwen, phase):
        b = spell[t]
        if not b or t in qwen.added_ids:
            continue
        kk, xx, ss, _ = lex(phase, np.array([len(b)]), np.array([0]),
                            np.frombuffer(b, dtype=np.uint8))
        want = (min(kk[0], 255), int(xx[0]), min(ss[0], 255))
        quoted = b'"' in b or b"\\" in b
        if quoted or phase == OUT:
            assert (k[t], x[t], s[t]) == want, (phase, b)
        elif phase == IN0:      # elsewhere a plain token's count holds where the DFA reads it
            assert k[t] == want[0], (phase, b)


def test_tables_and_quoted_tokens_come_back_from_the_disk(qwen, fresh_cache, monkeypatch):
    esc = 4                                    # inside an escape: read by few tokens
    made = [a.copy() for a in phasetables.phase_table(qwen, esc)]
    quoted = phasetables.quote_or_backslash(qwen).copy()
    want = np.zeros(qwen.logits_size, dtype=bool)
    for i, b in enumerate(qwen.token_bytes):
        if i not in qwen.added_ids and (b'"' in b or b"\\" in b):
            want[i] = True
    assert np.array_equal(quoted, want)
    monkeypatch.setattr(phasetables, "_PHASE_TABLES", {})
    monkeypatch.setattr(phasetables, "_lexing_arrays",
                        lambda v: pytest.fail("read from the disk, not lexed again"))
    assert np.array_equal(phasetables.quote_or_backslash(qwen), want)
    for a, b in zip(phasetables.phase_table(qwen, esc), made):
        assert np.array_equal(a, b)
