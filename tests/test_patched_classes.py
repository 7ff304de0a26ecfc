"""Patched classes (format 7): a twin's class stored as its twin's class plus a patch. The
artifact means what the one with every class stored whole means, state by state and along
random walks through the runtime's tables, and damaged patches are refused."""

from __future__ import annotations

import hashlib
import json
import zlib
from pathlib import Path

import msgpack
import numpy as np
import pytest

import toolc
from toolc import encode_patch
from toolc.runtime import Artifact
from toolc.runtime.fileformat import MAGIC, PATCHED_VERSION
from toolc.runtime.matcher import advance_batch

from test_artifact import artifact_error, outer, state_masks, state_transitions

SCHEMAS = Path(__file__).resolve().parent.parent / "schemas"


@pytest.fixture(scope="module")
def pair(qwen):
    """schemas/tools10 (hermes, closed strings) compiled patched and whole."""
    return _patched_and_whole(json.loads((SCHEMAS / "tools10.json").read_text()), qwen)


def _patched_and_whole(tools, qwen):
    """The tools compiled with patched classes (the default) and with every class whole."""
    patched = toolc.compile_tools(tools, qwen)
    encode_patch.PATCH = False
    try:
        whole = toolc.compile_tools(tools, qwen)
    finally:
        encode_patch.PATCH = True
    return patched, whole


def _patched(art) -> np.ndarray:
    base = np.frombuffer(art.sections["class_base"], "<i4")
    ep = np.frombuffer(art.sections["exc_ptr"], "<i4")
    return np.flatnonzero((base >= 0) & (np.diff(ep) > 0))


def test_patches_store_a_fraction_and_change_nothing(pair):
    patched, whole = pair
    assert len(_patched(patched)) >= 20 and "class_base" not in whole.sections
    assert outer(patched.to_bytes())["version"] == PATCHED_VERSION
    assert outer(whole.to_bytes())["version"] < PATCHED_VERSION
    assert 4 * len(patched._arrays["exc_tokens"]) < len(whole._arrays["exc_tokens"])
    assert len(patched.to_bytes()) < len(whole.to_bytes())
    assert np.array_equal(state_masks(patched), state_masks(whole))
    expect = state_transitions(whole)
    assert state_transitions(patched) == expect
    again = Artifact.from_bytes(patched.to_bytes())
    assert again.to_bytes() == patched.to_bytes()
    assert state_transitions(again) == expect


def _walk(art, seed: int, steps: int = 40) -> list:
    """A random walk of every kind of token (allowed, exceptions, forbidden): the states."""
    rng = np.random.default_rng(seed)
    m = art.matcher()
    out = []
    for _ in range(steps):
        ids = m.allowed_token_ids()
        if not len(ids):
            break
        t = int(rng.choice(ids)) if rng.random() < 0.9 else int(rng.integers(art.logits_size))
        try:
            m.advance(t)
            out.append((t, m.state))
        except toolc.RejectedTokenError:
            out.append((t, None))
    return out


def test_random_walks_agree(pair):
    """advance() reads the patched classes' buckets (a patch's own and its base's): the
    walks go where the whole artifact's go, token by token."""
    patched, whole = pair
    for seed in range(60):
        assert _walk(patched, seed) == _walk(whole, seed), seed


def test_every_patched_state_advances_alike(pair):
    """Every token of every state of a patched class, one by one and in a batch."""
    patched, whole = pair
    sc = patched._arrays["state_class"]
    states = np.flatnonzero(np.isin(sc, _patched(patched)))[:40].tolist()
    assert states
    for q in states:
        ids = whole.matcher(q).allowed_token_ids().tolist()
        exc, default = whole.transitions(q)     # the whole artifact's table, as the oracle
        want = [exc.get(t, default) for t in ids]
        a = [patched.matcher(q) for _ in ids]
        advance_batch(a, ids)
        assert [m.state for m in a] == want, q
        for j in range(0, len(ids), 97):
            x = patched.matcher(q)
            x.advance(ids[j])
            assert x.state == want[j], (q, ids[j])


# -- damaged patches ----------------------------------------------------------------------------

def _sections(art):
    return msgpack.unpackb(zlib.decompress(outer(art.to_bytes())["body"]), raw=False)


def _resign(header, sections, version) -> bytes:
    body = zlib.compress(msgpack.packb([header, sections], use_bin_type=True))
    return msgpack.packb({"magic": MAGIC, "version": version, "compression": "zlib",
                          "body": body, "sha256": hashlib.sha256(body).digest()},
                         use_bin_type=True)


def _edit(s, name, change):
    a = np.frombuffer(s[name], "<i4").copy()
    change(a)
    s[name] = a.astype("<i4").tobytes()


def _patch_at(s) -> tuple[int, int]:
    """(a patched class, the index of its first entry)."""
    base = np.frombuffer(s["class_base"], "<i4")
    ep = np.frombuffer(s["exc_ptr"], "<i4")
    c = int(np.flatnonzero((base >= 0) & (np.diff(ep) > 0))[0])
    return c, int(ep[c])


def _zero_outside_a_patch(s):
    base = np.frombuffer(s["class_base"], "<i4")
    ep = np.frombuffer(s["exc_ptr"], "<i4")
    c = int(np.flatnonzero((base < 0) & (np.diff(ep) > 0))[0])
    _edit(s, "exc_code", lambda a: a.__setitem__(int(ep[c]), 0))


def _code_past_the_targets(s):
    _, i = _patch_at(s)
    _edit(s, "exc_code", lambda a: a.__setitem__(i, 1 << 20))


def _base_is_patched(s):
    base = np.frombuffer(s["class_base"], "<i4")
    ep = np.frombuffer(s["exc_ptr"], "<i4")
    p = np.flatnonzero((base >= 0) & (np.diff(ep) > 0))
    _edit(s, "class_base", lambda a: a.__setitem__(int(p[1]), int(p[0])))


def _patch_out_of_order(s):
    c, i = _patch_at(s)
    ep = np.frombuffer(s["exc_ptr"], "<i4")
    assert ep[c + 1] - i >= 2
    _edit(s, "exc_tokens", lambda a: a.__setitem__(slice(i, i + 2), a[i:i + 2][::-1].copy()))


@pytest.mark.parametrize("change", [_zero_outside_a_patch, _code_past_the_targets,
                                    _base_is_patched, _patch_out_of_order])
def test_damaged_patches_are_refused(pair, tmp_path, change):
    header, sections = _sections(pair[0])
    Artifact.from_bytes(_resign(header, sections, PATCHED_VERSION))     # sound before
    change(sections)
    assert "damaged" in artifact_error(_resign(header, sections, PATCHED_VERSION), tmp_path)


@pytest.mark.parametrize("version", [3, 4, 6])
def test_patches_need_version_7(pair, tmp_path, version):
    """An older reader would take a patch for a derived class's whole exceptions (format 4
    refuses entries there): the version says a file has patches, and must."""
    header, sections = _sections(pair[0])
    assert "patched" in artifact_error(_resign(header, sections, version), tmp_path)
    header, sections = _sections(pair[1])
    assert "patched" in artifact_error(_resign(header, sections, PATCHED_VERSION), tmp_path)


def test_patches_beside_counted_regions(qwen):
    """tools10 with four bounded strings: counted regions and patches in one file (version
    7); its masks and states along random walks are those of the file stored whole."""
    tools = json.loads((SCHEMAS / "tools10.json").read_text())
    bounded = []

    def bound(o):
        if isinstance(o, dict):
            if o.get("type") == "string" and "enum" not in o and len(bounded) < 4:
                o["maxLength"] = 20 + len(bounded)
                bounded.append(o)
            for v in o.values():
                bound(v)
        elif isinstance(o, list):
            for v in o:
                bound(v)

    bound(tools)
    patched, whole = _patched_and_whole(tools, qwen)
    assert "cnt_tag" in patched.sections and len(_patched(patched))
    assert outer(patched.to_bytes())["version"] == PATCHED_VERSION
    again = Artifact.from_bytes(patched.to_bytes())
    for seed in range(30):
        rng = np.random.default_rng(seed)
        ms = [patched.matcher(), again.matcher(), whole.matcher()]
        for _ in range(40):
            ids = ms[2].allowed_token_ids()
            if not len(ids):
                break
            assert all(np.array_equal(m.allowed_token_ids(), ids) for m in ms[:2])
            t = int(rng.choice(ids))
            for m in ms:
                m.advance(t)
            assert len({m.state for m in ms}) == 1, seed
