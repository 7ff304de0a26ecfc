"""The grammar's promises, checked in every state of every artifact built from schemas/.

* No special (added) token is allowed anywhere except the ones the grammar places: the
  ``<tool_call>`` trigger, the ``</tool_call>`` closing tag and EOS.
* Free text never spells out ``<tool_call>`` or ``</tool_call>`` in ordinary tokens: every
  tokenization of either tag, after any of a few prefixes, is refused.
"""

from __future__ import annotations

import numpy as np
import pytest

import toolc

from helpers import SCHEMA_SETS

OPEN, CLOSE, IM_END, ENDOFTEXT = 151657, 151658, 151645, 151643
PLACED = {OPEN, CLOSE, IM_END, ENDOFTEXT}


def _params():
    """(set, tool choice) pairs, keeping the slow marks SCHEMA_SETS puts on the big sets."""
    out = []
    for entry in SCHEMA_SETS:
        name, marks = (entry.values[0], entry.marks) if hasattr(entry, "values") else (entry, ())
        for choice in ("auto", "required"):
            out.append(pytest.param((name, choice), marks=marks, id=f"{name}-{choice}"))
    return out


@pytest.fixture(scope="module", params=_params())
def artifact(request, qwen):
    name, choice = request.param
    return toolc.compile_tools(f"schemas/{name}.json", qwen, tool_choice=choice)


def test_only_placed_special_tokens_in_every_state(artifact, qwen):
    added = np.array(sorted(qwen.added_ids | set(range(qwen.vocab_size, qwen.logits_size))))
    masks = artifact.mask_rows.view(np.uint32)
    bits = (masks[:, added >> 5] >> (added & 31).astype(np.uint32)) & 1
    for r in np.unique(np.array(artifact.state_rows())):
        allowed = set(added[bits[r] == 1].tolist())
        assert allowed <= PLACED, f"mask row {r} allows {sorted(allowed - PLACED)}"
    # and each placed one is allowed somewhere (the check above is not vacuous)
    seen = set(added[bits.any(axis=0)].tolist())
    assert {CLOSE} <= seen and (IM_END in seen or ENDOFTEXT in seen)


def _tokenizations(qwen, text: bytes, limit: int = 20_000) -> list[list[int]]:
    """Every way to write ``text`` with ordinary tokens (each a substring of it)."""
    pieces: dict[int, list[tuple[int, int]]] = {}
    added = qwen.added_ids
    for tid, tb in enumerate(qwen.token_bytes):
        if tid in added or not tb or tb not in text:
            continue
        start = text.find(tb)
        while start >= 0:
            pieces.setdefault(start, []).append((tid, len(tb)))
            start = text.find(tb, start + 1)
    out: list[list[int]] = []

    def go(pos: int, acc: list[int]):
        if len(out) >= limit:
            return
        if pos == len(text):
            out.append(list(acc))
            return
        for tid, n in pieces.get(pos, ()):
            acc.append(tid)
            go(pos + n, acc)
            acc.pop()

    go(0, [])
    return out


@pytest.mark.parametrize("tag", [b"<tool_call>", b"</tool_call>"])
@pytest.mark.parametrize("prefix", ["", "Sure. ", "x<", "<<"])
def test_free_text_never_spells_a_tag(qwen, weather_artifact, tag, prefix):
    art = weather_artifact
    lead = qwen.encode(prefix) if prefix else []
    ways = _tokenizations(qwen, tag)
    assert len(ways) > 20
    for ids in ways:
        m = art.matcher()
        for t in lead:
            m.advance(t)
        refused = False
        for t in ids:
            if not m.accepts(t):
                refused = True
                break
            m.advance(t)
        assert refused, f"free text spelled {tag!r} as {ids}"
