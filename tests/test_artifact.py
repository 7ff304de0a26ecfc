"""toolc/runtime/fileformat.py and toolc/encode.py (and toolc.load): the file round trip,
determinism, and damaged files."""

from __future__ import annotations

import hashlib
import zlib

import msgpack
import numpy as np
import pytest

import toolc
from toolc import segments as S
from toolc.runtime.fileformat import FORMAT_VERSION, MAGIC, PATCHED_VERSION, pack
from toolc.schema.strings import expanded_lengths
from toolc.errors import ArtifactError
from toolc.runtime import Artifact


@pytest.fixture(scope="module")
def saved(tmp_path_factory, weather_artifact):
    path = tmp_path_factory.mktemp("art") / "weather.toolc"
    size = weather_artifact.save(path)
    assert size == path.stat().st_size
    return path


def state_masks(art) -> np.ndarray:
    """The mask of every state, one row per state."""
    return art.mask_rows[np.asarray(art.state_rows())]


def state_transitions(art):
    return [(art.transitions(q), art.is_final_state(q)) for q in range(art.num_states)]


def outer(data: bytes) -> dict:
    return msgpack.unpackb(data, raw=False)


def repack(o: dict) -> bytes:
    return msgpack.packb(o, use_bin_type=True)


def artifact_error(data: bytes, tmp_path) -> str:
    """Load ``data`` from a file; return the ArtifactError's message with the path cut out
    (the temp path names the test, so it must not satisfy the checks on the reason)."""
    path = tmp_path / "suspect.toolc"
    path.write_bytes(data)
    with pytest.raises(ArtifactError) as exc:
        toolc.load(path)
    msg = str(exc.value)
    assert msg.startswith(f"{path}: ")
    assert "\n" not in msg
    return msg[len(str(path)):]


# -- round trip -------------------------------------------------------------------------------

def test_save_load_round_trip_keeps_every_mask(saved, weather_artifact):
    loaded = toolc.load(saved)
    assert loaded.num_states == weather_artifact.num_states
    assert loaded.header == weather_artifact.header
    a, b = state_masks(weather_artifact), state_masks(loaded)
    assert a.shape == (weather_artifact.num_states, (151936 + 31) // 32)
    assert a.dtype == b.dtype == np.int32
    assert np.array_equal(a, b)
    assert state_transitions(loaded) == state_transitions(weather_artifact)


def test_round_trip_walks_alike(saved, weather_artifact, qwen):
    loaded = toolc.load(saved)
    text = ('<tool_call>\n{"name": "get_current_weather", "arguments": {"city": "Paris"}}\n'
            "</tool_call>")
    ids = qwen.encode(text) + [151645]
    m1, m2 = weather_artifact.matcher(), loaded.matcher()
    for t in ids:
        assert np.array_equal(m1.mask(), m2.mask())
        m1.advance(t)
        m2.advance(t)
    assert m1.is_terminated() and m2.is_terminated()


def test_the_file_is_what_to_bytes_gives(saved, weather_artifact):
    assert saved.read_bytes() == weather_artifact.to_bytes()
    assert Artifact.from_bytes(saved.read_bytes()).to_bytes() == saved.read_bytes()


def test_two_compiles_give_byte_identical_files(tmp_path, weather_artifact, weather_path):
    again = toolc.compile_tools(str(weather_path))
    assert again is not weather_artifact
    p1, p2 = tmp_path / "a.toolc", tmp_path / "b.toolc"
    weather_artifact.save(p1)
    again.save(p2)
    assert p1.read_bytes() == p2.read_bytes()
    assert hashlib.sha256(p1.read_bytes()).hexdigest() == \
        hashlib.sha256(again.to_bytes()).hexdigest()


@pytest.mark.parametrize("fast_above", [0, 1 << 40])
def test_a_large_body_is_compressed_fast_and_reads_back(saved, fast_above, monkeypatch):
    """Past ZLIB_FAST_ABOVE bytes the body is compressed at level 1 (a bounded string's
    92 MB body took 6.4 s at level 6); below it at ZLIB_LEVEL. Either reads back the same."""
    import zlib
    from toolc.runtime import fileformat as A
    monkeypatch.setattr(A, "ZLIB_FAST_ABOVE", fast_above)
    art = Artifact.from_bytes(saved.read_bytes())
    data = art.to_bytes()
    body = outer(data)["body"]
    raw = zlib.decompress(body)
    assert body == zlib.compress(raw, 1 if fast_above == 0 else A.ZLIB_LEVEL)
    again = Artifact.from_bytes(data)
    assert np.array_equal(again.mask_rows, art.mask_rows)
    assert again.to_bytes() == data


def test_file_layout(saved):
    o = outer(saved.read_bytes())
    assert set(o) == {"magic", "version", "compression", "body", "sha256"}
    assert o["magic"] == MAGIC and o["version"] == FORMAT_VERSION
    assert hashlib.sha256(o["body"]).digest() == o["sha256"]


def test_save_leaves_no_temp_file(tmp_path, weather_artifact):
    weather_artifact.save(tmp_path / "sub" / "w.toolc")
    assert [p.name for p in (tmp_path / "sub").iterdir()] == ["w.toolc"]


# -- damaged files ----------------------------------------------------------------------------

@pytest.mark.parametrize("keep", [0, 1, 10, 100, 0.5, -1])
def test_truncated_file(saved, tmp_path, keep):
    data = saved.read_bytes()
    n = int(len(data) * keep) if isinstance(keep, float) else (keep % len(data))
    artifact_error(data[:n], tmp_path)


def test_truncated_file_says_so(saved, tmp_path):
    data = saved.read_bytes()
    reason = artifact_error(data[: len(data) // 2], tmp_path)
    assert "truncated" in reason or "damaged" in reason


@pytest.mark.parametrize("where", [0.25, 0.5, 0.9])
def test_flipped_byte_in_the_body(saved, tmp_path, where):
    data = bytearray(saved.read_bytes())
    body = outer(bytes(data))["body"]
    start = bytes(data).find(body)
    assert start > 0
    data[start + int(len(body) * where)] ^= 0x40
    assert "checksum" in artifact_error(bytes(data), tmp_path)


def test_flipped_byte_in_the_checksum(saved, tmp_path):
    data = bytearray(saved.read_bytes())
    data[-1] ^= 0x01
    assert "checksum" in artifact_error(bytes(data), tmp_path)


def test_wrong_magic(saved, tmp_path):
    o = outer(saved.read_bytes())
    o["magic"] = "gguf-artifact"
    assert "magic" in artifact_error(repack(o), tmp_path)


@pytest.mark.parametrize("version", [PATCHED_VERSION + 1, 5, 0, "1", None, True])
def test_wrong_version(saved, tmp_path, version):
    o = outer(saved.read_bytes())
    o["version"] = version
    msg = artifact_error(repack(o), tmp_path)
    assert "version" in msg
    assert "recompile" in msg


@pytest.mark.parametrize("data", [b"", b"hello world", b'{"magic": "toolc-artifact"}',
                                  msgpack.packb([1, 2, 3]), msgpack.packb({"magic": MAGIC})])
def test_not_an_artifact(tmp_path, data):
    artifact_error(data, tmp_path)


def _tamper(saved, change) -> bytes:
    """Change the decoded body, then re-sign it: damage the checksum cannot see."""
    o = outer(saved.read_bytes())
    header, sections = msgpack.unpackb(zlib.decompress(o["body"]), raw=False)
    change(header, sections)
    o["body"] = zlib.compress(msgpack.packb([header, sections], use_bin_type=True))
    o["sha256"] = hashlib.sha256(o["body"]).digest()
    return repack(o)


def _bump_states(h, s):
    h["num_states"] += 1


def _set(s, name, dtype, change):
    a = np.frombuffer(s[name], dtype).copy()
    change(a)
    s[name] = a.tobytes()


def _bad_state_class(h, s):
    _set(s, "state_class", "<i4", lambda a: a.__setitem__(0, len(s["class_row"]) // 4))


def _bad_class_row(h, s):
    _set(s, "class_row", "<i4", lambda a: a.__setitem__(0, len(s["row_kind"])))


def _bad_next(h, s):
    _set(s, "default_next", "<i4", lambda a: a.__setitem__(0, h["num_states"]))


def _bad_target(h, s):
    _set(s, "tgt", "<i4", lambda a: a.__setitem__(-1, -1))


def _bad_row_kind(h, s):
    _set(s, "row_kind", "u1", lambda a: a.__setitem__(0, 9))


def _short_section(h, s):
    s["final"] = s["final"][:-1]


def _missing_section(h, s):
    del s["exc_ptr"]


def _section_of_wrong_type(h, s):
    s["tgt"] = [1, 2, 3]


def _pointers_past_the_end(h, s):
    _set(s, "tgt_ptr", "<i4", lambda a: a.__setitem__(-1, a[-1] + 1))


def _pointers_going_back(h, s):
    _set(s, "row_ptr", "<i4", lambda a: a.__setitem__(1, a[2] + 1))


def _row_ids_out_of_order(h, s):
    kind = np.frombuffer(s["row_kind"], "u1")
    ptr = np.frombuffer(s["row_ptr"], "<i4")
    r = next(r for r in range(len(kind)) if kind[r] == 0 and ptr[r + 1] - ptr[r] >= 2)
    _set(s, "row_data", "<i4", lambda a: a.__setitem__(slice(ptr[r], ptr[r] + 2),
                                                        a[ptr[r]:ptr[r] + 2][::-1].copy()))


def _row_token_out_of_range(h, s):
    kind = np.frombuffer(s["row_kind"], "u1")
    ptr = np.frombuffer(s["row_ptr"], "<i4")
    r = next(r for r in range(len(kind)) if kind[r] == 0 and ptr[r + 1] > ptr[r])
    _set(s, "row_data", "<i4", lambda a: a.__setitem__(ptr[r + 1] - 1, h["logits_size"]))


def _exception_tokens_out_of_order(h, s):
    ptr = np.frombuffer(s["exc_ptr"], "<i4")
    c = next(c for c in range(len(ptr) - 1) if ptr[c + 1] - ptr[c] >= 2)
    _set(s, "exc_tokens", "<i4", lambda a: a.__setitem__(slice(ptr[c], ptr[c] + 2),
                                                         a[ptr[c]:ptr[c] + 2][::-1].copy()))


def _exception_the_row_forbids(h, s):
    """An exception its mask row does not allow: advance would take a token mask() forbids."""
    ptr = np.frombuffer(s["exc_ptr"], "<i4")
    c = next(c for c in range(len(ptr) - 1) if ptr[c + 1] > ptr[c])
    _set(s, "exc_tokens", "<i4", lambda a: a.__setitem__(ptr[c + 1] - 1,
                                                         h["logits_size"] - 1))


def _code_beyond_the_targets(h, s):
    _set(s, "exc_code", "<i4", lambda a: a.__setitem__(0, a.max() + 50))


def _default_missing(h, s):
    """A state whose allowed tokens are not all exceptions, but with no default state."""
    sc = np.frombuffer(s["state_class"], "<i4")
    cr = np.frombuffer(s["class_row"], "<i4")
    ep = np.frombuffer(s["exc_ptr"], "<i4")
    kind = np.frombuffer(s["row_kind"], "u1")
    rp = np.frombuffer(s["row_ptr"], "<i4")
    q = next(q for q in range(len(sc)) if kind[cr[sc[q]]] == 0
             and rp[cr[sc[q]] + 1] - rp[cr[sc[q]]] > ep[sc[q] + 1] - ep[sc[q]])
    _set(s, "default_next", "<i4", lambda a: a.__setitem__(q, -1))


DAMAGE = [_bump_states, _bad_state_class, _bad_class_row, _bad_next, _bad_target, _bad_row_kind,
          _short_section, _missing_section, _section_of_wrong_type, _pointers_past_the_end,
          _pointers_going_back, _row_ids_out_of_order, _row_token_out_of_range,
          _exception_tokens_out_of_order, _exception_the_row_forbids, _code_beyond_the_targets,
          _default_missing]


@pytest.mark.parametrize("change", DAMAGE)
def test_consistent_checksum_but_damaged_tables(saved, tmp_path, change):
    assert "damaged" in artifact_error(_tamper(saved, change), tmp_path)


def test_the_damage_cases_start_from_a_sound_artifact(saved):
    """_tamper without a change loads: the cases above fail for their change alone."""
    toolc.Artifact.from_bytes(_tamper(saved, lambda h, s: None))


def test_unreadable_path(tmp_path):
    with pytest.raises(ArtifactError, match="cannot read"):
        toolc.load(tmp_path / "missing.toolc")
    with pytest.raises(ArtifactError, match="cannot read"):
        toolc.load(tmp_path)


def test_artifact_error_is_a_value_error():
    assert issubclass(ArtifactError, ValueError)
    assert issubclass(ArtifactError, toolc.ToolcError)


# -- the tokenizer check ----------------------------------------------------------------------

def test_load_accepts_the_matching_vocabulary(saved, qwen):
    art = toolc.load(saved, tokenizer=qwen)
    assert art.fingerprint == qwen.fingerprint
    assert toolc.load(saved, tokenizer=qwen.fingerprint).fingerprint == qwen.fingerprint


def test_load_refuses_another_fingerprint_naming_both(saved, qwen):
    other = "0123456789ab" + "0" * 52
    with pytest.raises(ArtifactError) as exc:
        toolc.load(saved, tokenizer=other)
    msg = str(exc.value)
    assert qwen.fingerprint[:12] in msg
    assert other[:12] in msg
    assert "recompile" in msg


def test_load_refuses_another_vocabulary(saved, qwen):
    other = qwen.with_changes(eos_ids=(151645,), name="qwen3-im-end-only")
    assert other.fingerprint != qwen.fingerprint
    with pytest.raises(ArtifactError) as exc:
        toolc.load(saved, tokenizer=other)
    assert "qwen3-im-end-only" in str(exc.value)
    assert other.fingerprint[:12] in str(exc.value)


def test_load_refuses_a_vocabulary_with_other_logits_size(saved, qwen):
    other = qwen.with_changes(logits_size=152064)
    with pytest.raises(ArtifactError):
        toolc.load(saved, tokenizer=other)


def test_load_rejects_a_tokenizer_without_fingerprint(saved):
    with pytest.raises(TypeError):
        toolc.load(saved, tokenizer=42)


# -- the encoder on synthetic indexes -------------------------------------------------------
# Small vocabularies give every row kind (id list, complement, bitmap), logits sizes that are
# not a multiple of 32, special tokens inside and past the vocabulary, and states whose runs
# split one allowed set differently.

def synthetic_index(seed: int, n: int = 12, vocab: int = 70, logits: int = 75):
    from toolc.walk import TokenIndex
    rng = np.random.default_rng(seed)
    specials = np.array([vocab - 3, vocab - 1, vocab + 2])   # the last one past the vocabulary
    ordinary = np.setdiff1d(np.arange(vocab), specials)
    order = rng.permutation(ordinary).astype(np.int64)
    P = len(order)
    lo, hi, tg, ptr = [], [], [], [0]
    s_tok, s_tg, s_ptr = [], [], [0]
    common = rng.random(P) < 0.985       # near-copies of it make complement deltas
    for q in range(n):
        density = rng.choice([0.0, 0.05, 0.5, 0.97, 1.0, -1.0])
        if density < 0:
            allowed = common ^ (rng.random(P) < 0.002)
        else:
            allowed = rng.random(P) < density
        # targets: a few per state, drawn so that states share shapes
        targets = rng.integers(0, n, size=P) % (1 + rng.integers(0, 3)) + q % 2
        pos = np.flatnonzero(allowed)
        for p in pos:
            if lo and len(lo) > ptr[-1] and hi[-1] == p and tg[-1] == targets[p] \
                    and rng.random() < 0.8:
                hi[-1] = p + 1                  # merged runs, but not always (as a walk may)
            else:
                lo.append(p), hi.append(p + 1), tg.append(int(targets[p]))
        ptr.append(len(lo))
        for t in specials:
            if rng.random() < 0.4:
                s_tok.append(int(t)), s_tg.append(int(rng.integers(0, n)))
        s_ptr.append(len(s_tok))
    def a(x):
        return np.array(x, dtype=np.int64)
    return TokenIndex(num_states=n, vocab_size=vocab, logits_size=logits, order=order,
                      run_ptr=a(ptr), run_lo=a(lo), run_hi=a(hi), run_target=a(tg),
                      sp_ptr=a(s_ptr), sp_tokens=a(s_tok), sp_targets=a(s_tg),
                      final=np.zeros(n, dtype=bool), eos_ids=(vocab - 1,))


def _header(index) -> dict:
    return {"num_states": index.num_states, "vocab_size": index.vocab_size,
            "logits_size": index.logits_size, "fingerprint": "f" * 64, "tokenizer": "synthetic",
            "format": "hermes", "tools": [], "eos_token_ids": list(index.eos_ids)}


def check_against_index(art, index) -> None:
    """Every state's mask, transitions, accepts and rejections equal the index's."""
    L = index.logits_size
    for q in range(index.num_states):
        toks, targets = index.transitions(q)
        m = art.matcher(q)
        assert np.array_equal(m.allowed_token_ids(), toks), q
        for t, r in zip(toks.tolist(), targets.tolist()):
            c = m.copy()
            c.advance(t)
            assert c.state == r, (q, t)
        forbidden = sorted(set(range(-2, L + 2)) - set(toks.tolist()))
        rng = np.random.default_rng(q)
        for t in forbidden[:5] + forbidden[-5:] + rng.choice(forbidden, 50).tolist():
            assert not m.accepts(t)
            with pytest.raises(toolc.RejectedTokenError):
                m.copy().advance(t)
        logits = np.arange(L, dtype=np.float32)
        toolc.apply_mask(logits, m)
        keep = np.zeros(L, dtype=bool)
        keep[toks] = True
        assert np.array_equal(logits[keep], np.flatnonzero(keep).astype(np.float32))
        assert np.all(np.isneginf(logits[~keep]))
        assert m.is_accepting() == (index.vocab_size - 1 in toks)
        assert m.forced_tokens()[:1] == (toks.tolist() if len(toks) == 1 else [])


SIZES = [(70, 75, 12), (64, 96, 12), (200, 230, 12), (3000, 3040, 30)]   # vocab, logits, states


def sized_index(seed: int):
    vocab, logits, n = SIZES[seed % len(SIZES)]
    return synthetic_index(seed, n=n, vocab=vocab, logits=logits)


@pytest.mark.parametrize("seed", range(12))
def test_encoded_index_walks_like_the_index(seed):
    from toolc.encode import build_artifact
    index = sized_index(seed)
    art = build_artifact(_header(index), index)
    check_against_index(art, index)
    again = Artifact.from_bytes(art.to_bytes())
    check_against_index(again, index)
    assert again.to_bytes() == art.to_bytes()


@pytest.mark.parametrize("bits", [0, 3, 20])
@pytest.mark.parametrize("seed", [3, 7, 11])
def test_wide_class_buckets_of_any_width_walk_alike(seed, bits, monkeypatch):
    """A wide class's exception codes are bisected within buckets of 2**EXC_BUCKET_BITS ids:
    one id a bucket, a few, or one bucket for all of them, the walks are the index's."""
    from toolc.encode import build_artifact
    from toolc.runtime import matcher, tables
    index = sized_index(seed)
    data = build_artifact(_header(index), index).to_bytes()
    monkeypatch.setattr(tables, "EXC_BUCKET_BITS", bits)     # the tables are built with it
    monkeypatch.setattr(matcher, "EXC_BUCKET_BITS", bits)    # and advance reads them with it
    art = Artifact.from_bytes(data)
    assert len(art._t.etok) > 0                      # some wide class has exceptions
    check_against_index(art, index)


def test_every_row_kind_is_exercised():
    from toolc.encode import encode_index
    kinds = set()
    for seed in range(12):
        kinds |= set(np.frombuffer(encode_index(sized_index(seed))["row_kind"], "u1").tolist())
    assert kinds == {0, 1, 2, 3}


def test_hash_collisions_fall_back_to_exact_grouping(monkeypatch):
    """Should every segment hash alike, grouping is still exact: the same file results."""
    from toolc import encode as A
    index = synthetic_index(3, n=30)
    expected = pack(_header(index), A.encode_index(index))
    monkeypatch.setattr(S, "_segment_hashes", lambda ptr, cols: np.zeros(len(ptr) - 1, np.int64))
    assert pack(_header(index), A.encode_index(index)) == expected


def test_a_bitmap_bit_past_the_logits_is_refused():
    from toolc import encode as A
    index = synthetic_index(1, vocab=70, logits=75)
    header, sections = _header(index), A.encode_index(index)
    kind = np.frombuffer(sections["row_kind"], "u1")
    assert 2 in kind
    r = int(np.flatnonzero(kind == 2)[0])
    ptr = np.frombuffer(sections["row_ptr"], "<i4")
    data = np.frombuffer(sections["row_data"], "<i4").copy()
    data[ptr[r + 1] - 1] |= np.int32(1 << 30)          # token 94 of a 75-logit vocabulary
    sections["row_data"] = data.tobytes()
    with pytest.raises(ArtifactError, match="past the logits size"):
        Artifact.from_parts(header, sections)


def _delta_damage(change):
    """A synthetic artifact with a delta row, changed by ``change(kind, ptr, data, r)``."""
    from toolc import encode as A
    for seed in range(12):
        index = sized_index(seed)
        sections = A.encode_index(index)
        kind = np.frombuffer(sections["row_kind"], "u1").copy()
        if 3 in kind:
            break
    ptr = np.frombuffer(sections["row_ptr"], "<i4").copy()
    data = np.frombuffer(sections["row_data"], "<i4").copy()
    r = int(np.flatnonzero(kind == 3)[0])
    change(kind, ptr, data, r)
    sections.update(row_kind=kind.tobytes(), row_ptr=ptr.tobytes(), row_data=data.tobytes())
    return _header(index), sections


@pytest.mark.parametrize("change", [
    lambda kind, ptr, data, r: data.__setitem__(ptr[r], r),              # its own base
    lambda kind, ptr, data, r: data.__setitem__(ptr[r], len(kind)),      # a base past the end
    lambda kind, ptr, data, r: data.__setitem__(ptr[r], -1),
    lambda kind, ptr, data, r: data.__setitem__(slice(ptr[r] + 1, ptr[r + 1]),
                                                data[ptr[r] + 1:ptr[r + 1]][::-1].copy()),
    lambda kind, ptr, data, r: data.__setitem__(ptr[r + 1] - 1, 10**6),
], ids=["self", "later", "negative", "unsorted", "range"])
def test_damaged_delta_rows_are_refused(change):
    header, sections = _delta_damage(change)
    with pytest.raises(ArtifactError, match="damaged"):
        Artifact.from_parts(header, sections)


def test_a_delta_row_on_a_delta_row_is_refused():
    def change(kind, ptr, data, r):
        later = [x for x in np.flatnonzero(kind == 3) if x > r]
        if later:
            data[ptr[later[0]]] = r
        else:                         # make r's base a delta row made of its own base
            kind[data[ptr[r]]] = 3
    header, sections = _delta_damage(change)
    with pytest.raises(ArtifactError, match="damaged"):
        Artifact.from_parts(header, sections)


def _parts_reference(parts, nseg):
    """Groups and firsts of segments made of parts, by Python tuples."""
    seen, group, firsts = {}, [], []
    for s in range(nseg):
        key = tuple(tuple(tuple(int(c[i]) for c in cols) for i in range(ptr[s], ptr[s + 1]))
                    for ptr, cols, _ in parts)
        if key not in seen:
            seen[key] = len(firsts)
            firsts.append(s)
        group.append(seen[key])
    return group, firsts


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("collide", [False, True])
def test_segments_of_several_parts_group_exactly(seed, collide, monkeypatch):
    if collide:
        monkeypatch.setattr(S, "_segment_hashes",
                            lambda ptr, cols: np.zeros(len(ptr) - 1, np.int64))
    rng = np.random.default_rng(seed)
    nseg = 60
    parts = []
    for width in (1, 3, 2):
        lens = rng.integers(0, 3, size=nseg)
        lens = lens[rng.integers(0, 6, size=nseg)]     # segments that repeat others' shapes
        ptr = np.concatenate([[0], np.cumsum(lens)])
        cols = [rng.integers(0, 2, size=int(ptr[-1])) for _ in range(width)]
        seg = np.repeat(np.arange(nseg), lens)
        parts.append((ptr, cols, seg if rng.random() < 0.5 else None))
    group, firsts = S.group_parts(parts)
    ref_group, ref_firsts = _parts_reference(parts, nseg)
    assert group.tolist() == ref_group and firsts.tolist() == ref_firsts


def test_parts_are_not_mistaken_for_one_another():
    """[1, 2] + [] and [1] + [2] are different segments, though their elements are alike."""
    a = (np.array([0, 2, 3]), [np.array([1, 2, 1])], None)
    b = (np.array([0, 0, 1]), [np.array([2])], None)
    group, firsts = S.group_parts([a, b])
    assert group.tolist() == [0, 1] and firsts.tolist() == [0, 1]
    assert S._group_exact(*S._concat_parts([a, b]))[0].tolist() == [0, 1]


@pytest.mark.parametrize("seed", range(6))
def test_exceptions_sort_like_a_stable_lexsort(seed):
    from toolc.encode import _sort_exceptions
    rng = np.random.default_rng(seed)
    m = 500
    cls = rng.integers(0, 20, size=m)
    tok = rng.integers(0, 1 << 17, size=m)
    code = rng.integers(1, 9, size=m)
    if seed % 2:    # the same (class, token) twice, codes in decreasing order: kept as given
        cls[:3], tok[:3], code[:3] = 7, 1234, [5, 3, 1]
    k = np.lexsort((tok, cls))
    got = _sort_exceptions(cls, tok, code)
    assert [g.tolist() for g in got] == [cls[k].tolist(), tok[k].tolist(), code[k].tolist()]


def test_expand_runs_lists_every_position_of_every_run():
    from toolc.runtime.arrays import expand_runs as _expand_runs
    lo = np.array([5, 9, 9, 0, 30], dtype=np.int32)
    hi = np.array([8, 9, 11, 2, 31], dtype=np.int32)
    rep, pos = _expand_runs(lo, hi)
    assert rep.tolist() == [0, 0, 0, 2, 2, 3, 3, 4]
    assert pos.tolist() == [5, 6, 7, 9, 10, 0, 1, 30]
    assert _expand_runs(lo[:0], hi[:0])[1].tolist() == []


# -- derived classes (format version 4) ----------------------------------------------------------

BOUNDED = [{"type": "function", "function": {"name": "note", "parameters": {
    "type": "object", "properties": {"title": {"type": "string", "maxLength": 8},
                                     "n": {"type": "integer"}},
    "required": ["title"]}}}]


@pytest.fixture(scope="module")
def bounded_pair(qwen):
    """One bounded-string tool set compiled with classes derived and without (DERIVE_MIN
    past every class's size)."""
    from toolc import encode_derive as A
    with expanded_lengths():        # the bound as a chain of states (a counter derives none)
        derived = toolc.compile_tools(BOUNDED, qwen)
        real = A.DERIVE_MIN
        A.DERIVE_MIN = 1 << 40
        try:
            whole = toolc.compile_tools(BOUNDED, qwen)
        finally:
            A.DERIVE_MIN = real
    return derived, whole


def test_derived_classes_shrink_a_bounded_string_and_change_nothing(bounded_pair):
    """The counting states near the bound derive their exceptions from a longer class's:
    the file shrinks by half or more, and every state's mask, default and exceptions (the flat
    per-state tables, targets included) are exactly those of the artifact stored whole."""
    derived, whole = bounded_pair
    assert "class_base" in derived.sections and "class_base" not in whole.sections
    base = np.frombuffer(derived.sections["class_base"], "<i4")
    assert (base >= 0).sum() >= 3 and derived.num_derived_classes == (base >= 0).sum()
    assert whole.num_derived_classes == 0 and derived.num_classes == whole.num_classes
    assert len(derived.to_bytes()) * 2 < len(whole.to_bytes())
    assert np.array_equal(state_masks(derived), state_masks(whole))
    assert state_transitions(derived) == state_transitions(whole)
    assert outer(derived.to_bytes())["version"] == 4 and outer(whole.to_bytes())["version"] == 3
    again = Artifact.from_bytes(derived.to_bytes())
    assert again.to_bytes() == derived.to_bytes()
    assert state_transitions(again) == state_transitions(whole)


def test_derived_classes_walk_alike(bounded_pair):
    """advance() agrees on sampled tokens of every state, though the derived artifact's
    runtime tables hold only the bases' exceptions (a derived class reads its base's)."""
    derived, whole = bounded_pair
    assert 2 * len(derived._t.etok) < len(whole._t.etok)
    rng = np.random.default_rng(1)
    for q in range(derived.num_states):
        a, b = derived.matcher(q), whole.matcher(q)
        ids = a.allowed_token_ids()
        for t in rng.choice(ids, min(len(ids), 200), replace=False).tolist() if len(ids) else []:
            x, y = a.copy(), b.copy()
            x.advance(t)
            y.advance(t)
            assert x.state == y.state, (q, t)


def _derived_sections(bounded_pair):
    derived, _ = bounded_pair
    header, sections = msgpack.unpackb(zlib.decompress(outer(derived.to_bytes())["body"]),
                                       raw=False)
    return header, sections


def _resign(header, sections, version=4) -> bytes:
    body = zlib.compress(msgpack.packb([header, sections], use_bin_type=True))
    return repack({"magic": MAGIC, "version": version, "compression": "zlib", "body": body,
                   "sha256": hashlib.sha256(body).digest()})


def _first_derived(s) -> int:
    return int(np.flatnonzero(np.frombuffer(s["class_base"], "<i4") >= 0)[0])


def _base_later(h, s):
    c = _first_derived(s)
    _set(s, "class_base", "<i4", lambda a: a.__setitem__(c, c))


def _base_derived(h, s):
    base = np.frombuffer(s["class_base"], "<i4")
    d = np.flatnonzero(base >= 0)
    _set(s, "class_base", "<i4", lambda a: a.__setitem__(d[-1], d[0]))


def _base_out_of_range(h, s):
    c = _first_derived(s)
    _set(s, "class_base", "<i4", lambda a: a.__setitem__(c, -2))


def _derived_with_entries(h, s):
    """A derived class that also stores entries of its own."""
    c = _first_derived(s)
    ptr = np.frombuffer(s["exc_ptr"], "<i4").copy()
    ptr[c + 1:] += 1
    s["exc_ptr"] = ptr.tobytes()
    tok = np.frombuffer(s["exc_tokens"], "<i4")
    s["exc_tokens"] = np.insert(tok, ptr[c], tok[0]).astype("<i4").tobytes()
    code = np.frombuffer(s["exc_code"], "<i4")
    s["exc_code"] = np.insert(code, ptr[c], 1).astype("<i4").tobytes()


def _short_class_base(h, s):
    s["class_base"] = s["class_base"][:-4]


@pytest.mark.parametrize("change", [_base_later, _base_derived, _base_out_of_range,
                                    _derived_with_entries, _short_class_base])
def test_damaged_derived_classes_are_refused(bounded_pair, tmp_path, change):
    header, sections = _derived_sections(bounded_pair)
    change(header, sections)
    assert "damaged" in artifact_error(_resign(header, sections), tmp_path)


def test_the_derived_damage_cases_start_from_a_sound_artifact(bounded_pair):
    header, sections = _derived_sections(bounded_pair)
    toolc.Artifact.from_bytes(_resign(header, sections))


def test_the_version_says_whether_classes_derive(bounded_pair, saved, tmp_path):
    """Version 4 has a class_base section and version 3 none: a version-3 reader that met
    derived classes would take their empty exception lists at face value."""
    header, sections = _derived_sections(bounded_pair)
    assert "version" in artifact_error(_resign(header, sections, version=3), tmp_path)
    o = outer(saved.read_bytes())
    o["version"] = 4
    assert "version" in artifact_error(repack(o), tmp_path)


def test_derivation_on_synthetic_indexes_walks_like_the_index(monkeypatch):
    """With DERIVE_MIN at 2, classes of random synthetic indexes derive from one another
    wherever their exceptions allow it (codes renamed, target lists re-laid): every state's
    mask, transitions and rejections are still the index's, before and after a round trip."""
    from toolc import encode, encode_derive
    monkeypatch.setattr(encode_derive, "DERIVE_MIN", 2)
    A = encode
    derived = 0
    for seed in range(40):
        index = sized_index(seed)
        art = A.build_artifact(_header(index), index)
        derived += art.num_derived_classes
        check_against_index(art, index)
        check_against_index(Artifact.from_bytes(art.to_bytes()), index)
    assert derived >= 5


def test_the_encoders_sorted_xor_is_setxor1d():
    """The complement rows' flips (toolc.encode._xor_sorted) against numpy's setxor1d: sorted
    and shuffled rows, empty ones, disjoint and equal ones."""
    from toolc.encode import _xor_sorted
    rng = np.random.default_rng(4)
    for trial in range(500):
        a = np.unique(rng.integers(0, 60, int(rng.integers(0, 40))))
        b = a.copy() if trial % 7 == 0 else np.unique(rng.integers(0, 60, int(rng.integers(0, 40))))
        if trial % 3 == 0:
            rng.shuffle(a)
        got, want = _xor_sorted(a, b), np.setxor1d(a, b, assume_unique=True)
        assert got.dtype == want.dtype and np.array_equal(got, want), trial
