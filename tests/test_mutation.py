"""Damaged artifacts are refused before use: truncations, bit flips and section swaps.

1,000 mutations of a real artifact (schemas/weather.json for Qwen3). Each is either refused with
:class:`toolc.ArtifactError` (a ``ValueError``), or it loads and is proven harmless: the loaded
tables equal the original's. Section swaps are also tried with the checksum recomputed (what a
buggy writer or a forger produces): those must be refused or give an artifact whose tables are
consistent, so that no mask or advance can index out of bounds.
"""

from __future__ import annotations

import hashlib
import random

import msgpack
import numpy as np
import pytest

import toolc
from toolc.runtime.fileformat import MAGIC, FORMAT_VERSION, pack, unpack
from toolc.schema.strings import expanded_lengths



@pytest.fixture(scope="module")
def original(weather_artifact):
    return weather_artifact.to_bytes()


def _load(data: bytes):
    """Artifact or ArtifactError; anything else (IndexError, MemoryError...) fails the test."""
    try:
        return toolc.Artifact.from_bytes(data, source="mutant")
    except toolc.ArtifactError as e:
        assert isinstance(e, ValueError)
        assert str(e).startswith("mutant: "), str(e)
        return None


def _same(a: toolc.Artifact, b: toolc.Artifact) -> bool:
    return (a.header == b.header and np.array_equal(a.mask_rows, b.mask_rows)
            and all(getattr(a, f"_{k}") == getattr(b, f"_{k}") for k in
                    ("state_row", "default", "exc_ptr", "exc_tokens", "exc_next", "final")))


def test_truncations_are_refused(original):
    rng = random.Random(1)
    cuts = sorted(set([0, 1, 2, len(original) - 1] + [rng.randrange(len(original))
                                                       for _ in range(296)]))
    for n in cuts:
        assert _load(original[:n]) is None, f"a file truncated to {n} bytes was accepted"
    # extra bytes after the document are damage too
    assert _load(original + b"\0") is None


def test_bit_flips_are_refused_or_harmless(original, weather_artifact):
    rng = random.Random(2)
    refused = harmless = 0
    for _ in range(500):
        data = bytearray(original)
        i = rng.randrange(len(data))
        data[i] ^= 1 << rng.randrange(8)
        art = _load(bytes(data))
        if art is None:
            refused += 1
        else:
            assert _same(art, weather_artifact), f"a flip at byte {i} changed the artifact"
            harmless += 1
    assert refused >= 490, (refused, harmless)


def _repack(header, sections, checksum: bool) -> bytes:
    if checksum:
        return pack(header, sections)
    body = msgpack.packb([header, sections], use_bin_type=True)
    return msgpack.packb({"magic": MAGIC, "version": FORMAT_VERSION, "body": body,
                          "sha256": hashlib.sha256(body + b"x").digest()}, use_bin_type=True)


def _consistent(art: toolc.Artifact, rng: random.Random) -> None:
    """Every state's mask and every allowed token's advance stay in bounds."""
    n = art.num_states
    for q in range(n):
        m = art.matcher(q)
        assert m.mask().shape == ((art.logits_size + 31) // 32,)
        allowed = m.allowed_token_ids()
        for t in rng.sample(allowed.tolist(), min(5, len(allowed))):
            c = m.copy()
            c.advance(t)
            assert -1 <= c.state < n
        m.is_accepting(), m.is_terminated()


def test_section_swaps_are_refused_or_consistent(original):
    header, sections = unpack(original)
    names = sorted(sections)
    rng = random.Random(3)
    refused = loaded = 0
    for k in range(200):
        a, b = rng.sample(names, 2)
        swapped = dict(sections)
        swapped[a], swapped[b] = sections[b], sections[a]
        checksum = k % 2 == 0
        art = _load(_repack(header, swapped, checksum))
        if art is None:
            refused += 1
            continue
        assert checksum, "a body with a wrong checksum was accepted"
        _consistent(art, rng)
        loaded += 1
    assert refused + loaded == 200 and refused >= 100


@pytest.mark.parametrize("field,value", [
    ("num_states", 10**12), ("logits_size", 1 << 40), ("vocab_size", -1),
    ("num_states", "175"), ("eos_token_ids", [1 << 40]), ("tools", [1]), ("fingerprint", None),
])
def test_forged_header_sizes_are_refused_without_allocating(original, field, value):
    header, sections = unpack(original)
    header = dict(header, **{field: value})
    assert _load(pack(header, sections)) is None


def test_forged_row_count_cannot_allocate_gigabytes(original):
    """A few MB of empty mask rows would expand to a 19 KB row each: refused before numpy
    allocates the matrix."""
    header, sections = unpack(original)
    n = 200_000
    forged_header = dict(header, num_states=n)
    zeros = np.zeros(n, "<i4").tobytes()
    forged = dict(sections, row_kind=np.zeros(n, "u1").tobytes(),
                  row_ptr=np.zeros(n + 1, "<i4").tobytes(), row_data=b"",
                  class_row=np.arange(n, dtype="<i4").tobytes(),
                  exc_ptr=np.zeros(n + 1, "<i4").tobytes(), exc_tokens=b"", exc_code=b"",
                  state_class=zeros, default_next=zeros, tgt_ptr=np.zeros(n + 1, "<i4").tobytes(),
                  tgt=b"", final=np.zeros(n, "u1").tobytes())
    with pytest.raises(toolc.ArtifactError, match="mask rows"):
        toolc.Artifact.from_bytes(pack(forged_header, forged))


def test_forged_msgpack_lengths_are_refused():
    """A map, array or bin header claiming billions of entries in a tiny file."""
    for blob in (b"\xdd\xff\xff\xff\xff", b"\xdf\xff\xff\xff\xff", b"\xc6\xff\xff\xff\xff",
                 b"\xdb\xff\xff\xff\xff", b"\xc7\x05\x01abcde"):
        assert _load(blob) is None
        outer = msgpack.packb({"magic": MAGIC, "version": FORMAT_VERSION, "body": blob,
                               "sha256": hashlib.sha256(blob).digest()}, use_bin_type=True)
        assert _load(outer) is None


def test_load_refuses_another_tokenizer(tmp_path, weather_artifact, qwen):
    path = tmp_path / "w.toolc"
    weather_artifact.save(path)
    other = qwen.with_changes(eos_ids=(151643,))
    assert other.fingerprint != qwen.fingerprint
    with pytest.raises(toolc.ArtifactError) as e:
        toolc.load(path, tokenizer=other)
    assert qwen.fingerprint[:12] in str(e.value) and other.fingerprint[:12] in str(e.value)
    assert toolc.load(path, tokenizer=qwen).num_states == weather_artifact.num_states


def test_derived_classes_forged_entry_by_entry_are_refused_or_consistent(qwen):
    """Format 4 (a bounded string, classes derived from others): one int32 entry of a section
    set to a nearby or out-of-range value, the checksum recomputed, 150 times. The mutant is
    refused, or it loads with every mask and advance in bounds."""
    tools = [{"type": "function", "function": {"name": "note", "parameters": {
        "type": "object", "properties": {"title": {"type": "string", "maxLength": 6}},
        "required": ["title"]}}}]
    with expanded_lengths():        # a chain of states, not a counter: derived classes
        art = toolc.compile_tools(tools, qwen)
    header, sections = unpack(art.to_bytes())
    assert "class_base" in sections
    names = ["class_base", "exc_ptr", "exc_tokens", "exc_code", "class_row", "state_class",
             "tgt", "tgt_ptr"]
    rng = random.Random(4)
    refused = loaded = 0
    for _ in range(150):
        name = rng.choice(names)
        a = np.frombuffer(sections[name], "<i4").copy()
        i = rng.randrange(len(a))
        a[i] = rng.choice([-2, -1, 0, int(a[i]) - 1, int(a[i]) + 1, int(a.max()) + 1, 1 << 30])
        mutant = _load(pack(header, dict(sections, **{name: a.tobytes()})))
        if mutant is None:
            refused += 1
        else:
            _consistent(mutant, rng)
            loaded += 1
    assert refused + loaded == 150 and refused >= 75, (refused, loaded)
