"""toolc/artifact.py (and toolc.load): the file round trip, determinism, and damaged files."""

from __future__ import annotations

import hashlib
import zlib

import msgpack
import numpy as np
import pytest

import toolc
from toolc.artifact import FORMAT_VERSION, MAGIC
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
    return art._masks[np.asarray(art._state_row)]


def state_transitions(art):
    return (art._default, art._exc_ptr, art._exc_tokens, art._exc_next, art._final)


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


@pytest.mark.parametrize("version", [FORMAT_VERSION + 1, 0, "1", None])
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


def _bad_state_row(h, s):
    rows = np.frombuffer(s["state_row"], "<i4").copy()
    rows[0] = len(s["rows"])
    s["state_row"] = rows.tobytes()


def _bad_next(h, s):
    nxt = np.frombuffer(s["default_next"], "<i4").copy()
    nxt[0] = h["num_states"]
    s["default_next"] = nxt.tobytes()


def _bad_row_kind(h, s):
    s["rows"][0][0] = 9


def _short_section(h, s):
    s["final"] = s["final"][:-1]


def _missing_section(h, s):
    del s["exc_ptr"]


@pytest.mark.parametrize("change", [_bump_states, _bad_state_row, _bad_next, _bad_row_kind,
                                    _short_section, _missing_section])
def test_consistent_checksum_but_damaged_tables(saved, tmp_path, change):
    assert "damaged" in artifact_error(_tamper(saved, change), tmp_path)


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
