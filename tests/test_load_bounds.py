"""Loading a forged artifact is bounded by what its file can pay for (toolc/runtime/limits.py):
the regressions of issue 17, each a file with a valid checksum that once took gigabytes,
crashed a command, or blocked."""

from __future__ import annotations

import os
import threading

import pytest
from click.testing import CliRunner

import toolc
from forge import forge, open_file, run_cases, sign
from toolc.cli import main
from toolc.runtime import limits


def _write(tmp_path, header, sections, name="forged.toolc"):
    path = tmp_path / name
    path.write_bytes(sign(header, sections))
    return path


def _refused(path) -> str:
    with pytest.raises(toolc.ArtifactError) as e:
        toolc.load(path)
    return str(e.value)


def test_many_classes_over_one_empty_row_are_refused_before_allocating(tmp_path):
    """50,000 classes over one empty complement row: 71 KB that took 7.8 s and 3.98 GB."""
    path = _write(tmp_path, *forge(n=50_000, classes=50_000, rows=1, kind=1))
    assert path.stat().st_size < 200_000
    msg = _refused(path)
    assert "forged" in msg and "wide classes' bit rows" in msg


def test_many_complement_rows_are_refused(tmp_path):
    """3,000 complement rows in a few KB once took 3.9 GB."""
    path = _write(tmp_path, *forge(n=3000, classes=3000, rows=3000, kind=1))
    assert path.stat().st_size < 100_000
    assert "forged" in _refused(path)


def test_a_body_of_zeros_may_not_inflate_past_a_multiple_of_the_file(tmp_path):
    path = _write(tmp_path, *forge(n=2_000_000, classes=1, rows=1, kind=1))
    assert "does not inflate within the size limit" in _refused(path)


def test_the_same_shapes_at_genuine_sizes_load(tmp_path):
    """The forger's artifacts are sound: scaled down, they load (the refusals above are the
    bound's, not some other check's)."""
    for args in (dict(n=50, classes=50, rows=1, kind=1), dict(n=30, classes=30, rows=30, kind=1),
                 dict(n=10, classes=10, rows=10, kind=2), dict(n=20, classes=20, rows=1,
                                                              kind=0, row_len=64)):
        art = toolc.load(_write(tmp_path, *forge(**args)))
        assert art.num_states == args["n"]


def test_the_forged_cases_stay_under_the_stated_bound(tmp_path):
    """In a subprocess capped at the stated bound for each file's size: refused, never a
    MemoryError (the cap makes a blow-up fail this test, not the machine)."""
    files = []
    for i, args in enumerate([dict(n=50_000, classes=50_000), dict(n=3000, classes=3000,
                                                                   rows=3000),
                              dict(n=2000, classes=2000, rows=2000, kind=2),
                              dict(n=4096, vocab=1 << 24, logits=1 << 24),
                              dict(n=50_000, classes=50_000, kind=0, row_len=64)]):
        files.append(str(_write(tmp_path, *forge(**args), name=f"case{i}")))
    got = run_cases(files)
    assert all(v.startswith(("refused", "consistent")) for v in got.values()), got


def test_the_stated_bound(tmp_path):
    """docs/reliability.md and limits' docstring: 768 f + 212 MiB for Qwen3's logits."""
    f = 1 << 20
    bound = limits.budget(limits.max_body_bytes(f), 151936)
    assert bound == 768 * f + int(212.375 * (1 << 20))
    assert limits.budget(limits.max_body_bytes(f), 1 << 24) == 768 * f + (320 << 20)


def test_genuine_artifacts_load_well_under_the_budget(weather_file):
    from toolc.runtime.fileformat import _ITEMSIZE, decode_sections, unpack
    from toolc.runtime.tables import DICT_MAX
    header, sections = unpack(weather_file.read_bytes())
    sizes = limits.table_sizes(limits.section_sizes(header, sections, _ITEMSIZE),
                               decode_sections(header, sections), header["logits_size"],
                               DICT_MAX)
    cost = sum(f(sizes) for _, _, f in limits.COSTS)
    assert 4 * cost < limits.budget(sum(map(len, sections.values())), header["logits_size"])


def test_an_unknown_section_is_refused(weather_file, tmp_path):
    header, sections = open_file(weather_file.read_bytes())
    sections["extra"] = b"\0" * 16
    assert "unknown section 'extra'" in _refused(_write(tmp_path, header, sections))


@pytest.mark.parametrize("field,value", [
    ("format", ["hermes"]), ("tools", [b"x"]), ("fingerprint", b"f"), ("options", []),
    ("special_tokens", {"EOS": [b"x"]}), ("not_enforced", [{"tool": "t"}]),
    ("notices", [b"n"]), ("compile_seconds", "1"), ("num_states", True),
    ("eos_token_ids", [10**12])])
def test_forged_header_fields_are_refused_by_load_inspect_and_check(
        weather_file, tmp_path, field, value):
    header, sections = open_file(weather_file.read_bytes())
    header[field] = value
    path = _write(tmp_path, header, sections)
    assert "damaged artifact" in _refused(path)
    r = CliRunner().invoke(main, ["inspect", str(path)])
    assert r.exit_code == 1 and "Traceback" not in r.output
    assert len(r.output.strip().splitlines()) == 1 and "damaged artifact" in r.output


def test_a_bytes_key_in_the_header_is_refused(weather_file, tmp_path):
    header, sections = open_file(weather_file.read_bytes())
    header[b"extra"] = 1
    assert "not a string" in _refused(_write(tmp_path, header, sections))


def test_compile_check_reads_a_forged_header_as_stale(weather_file, weather_path, tmp_path):
    header, sections = open_file(weather_file.read_bytes())
    header["options"] = [b"x"]
    path = _write(tmp_path, header, sections)
    r = CliRunner().invoke(main, ["compile", str(weather_path), "-o", str(path), "--check"])
    assert r.exit_code == 1 and "Traceback" not in r.output and "unreadable" in r.output


def test_dev_zero_is_refused_before_reading():
    assert "not a regular file" in _refused("/dev/zero")


def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe.toolc"
    os.mkfifo(fifo)
    out = []
    t = threading.Thread(target=lambda: out.append(_refused(fifo)), daemon=True)
    t.start()
    t.join(10)
    assert out and "not a regular file" in out[0]


def test_a_directory_is_refused(tmp_path):
    assert "a directory" in _refused(tmp_path)


def test_a_file_larger_than_any_artifact_is_refused_unread(tmp_path, monkeypatch):
    import toolc.runtime.artifact as artifact
    path = tmp_path / "big.toolc"
    path.write_bytes(b"\0" * 4096)
    monkeypatch.setattr(artifact, "MAX_FILE_BYTES", 1024)
    assert "larger than any artifact" in _refused(path)


def test_a_newline_in_the_path_stays_on_one_line(tmp_path):
    path = tmp_path / "a\nb.toolc"
    path.write_bytes(b"nonsense")
    assert "\n" not in _refused(path)
