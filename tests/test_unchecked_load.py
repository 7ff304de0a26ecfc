"""The compiler's own sections are loaded without the file checks (``checked=False``): the
same arrays and the same tables as the checked decode of the same sections, and of the saved
file read back; a file is always checked."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import toolc
from toolc.errors import ArtifactError
from toolc.runtime import Artifact
from toolc.runtime.fileformat import decode_sections
from toolc.schema.strings import expanded_lengths

SCHEMAS = Path(__file__).resolve().parent.parent / "schemas"
NOTE = [{"type": "function", "function": {"name": "note", "parameters": {
    "type": "object", "properties": {"title": {"type": "string", "maxLength": 8},
                                     "n": {"type": "integer"}},
    "required": ["title"]}}}]


def _compiled(qwen, which: str):
    if which == "bounded":          # a chain of states per bound: derived classes
        with expanded_lengths():
            return toolc.compile_tools(NOTE, qwen)
    if which == "counted":          # the bound as a counter: counted sections
        return toolc.compile_tools(NOTE, qwen)
    return toolc.compile_tools(json.loads((SCHEMAS / f"{which}.json").read_text()), qwen)


def _same(a: dict, b: dict) -> None:
    assert set(a) == set(b)
    for k in a:
        x, y = a[k], b[k]
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and np.array_equal(x, y), k
        else:
            assert x == y, k


@pytest.mark.parametrize("which", ["weather", "tools10", "bounded", "counted"])
def test_unchecked_decode_is_the_checked_one(qwen, which):
    art = _compiled(qwen, which)
    header, sections = art.header, art.sections
    if which == "bounded":
        assert "class_base" in sections
    if which == "counted":
        assert "cnt_tag" in sections
    _same(decode_sections(header, sections, checked=False), decode_sections(header, sections))
    again = Artifact.from_bytes(art.to_bytes())
    for k in ("st", "next", "etok", "ecode", "ebkt", "wbits", "codes", "state_row",
              "accepting", "only", "final"):
        assert getattr(art._t, k) == getattr(again._t, k), k


def test_a_file_is_always_checked(qwen, tmp_path):
    """Sections with a token out of order pass the unchecked decode (it trusts its caller)
    but are refused once they come from a file."""
    art = _compiled(qwen, "weather")
    sections = dict(art.sections)
    ep = np.frombuffer(sections["exc_ptr"], "<i4")
    c = int(np.flatnonzero(np.diff(ep) >= 2)[0])
    tok = np.frombuffer(sections["exc_tokens"], "<i4").copy()
    tok[ep[c]], tok[ep[c] + 1] = tok[ep[c] + 1], tok[ep[c]]
    sections["exc_tokens"] = tok.astype("<i4").tobytes()
    decode_sections(art.header, sections, checked=False)
    with pytest.raises(ArtifactError, match="out of order"):
        Artifact.from_parts(art.header, sections)
    from toolc.runtime.fileformat import pack
    with pytest.raises(ArtifactError, match="out of order"):
        Artifact.from_bytes(pack(art.header, sections))
