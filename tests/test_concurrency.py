"""Concurrency: racing compiles to one path, a compile killed mid-walk, one artifact shared by
many threads each with its own matcher."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading

import pytest

import toolc

from helpers import distance_to_end, random_walk

TOOL_CALL = 151657


def _leftovers(folder) -> list[str]:
    return sorted(p for p in os.listdir(folder) if p.startswith(".toolc-"))


def test_racing_saves_leave_one_complete_artifact(tmp_path, weather_artifact, qwen):
    """Eight threads save two different artifacts to one path at once, many times: the file is
    always one of the two, complete, and no temp file is left."""
    other = toolc.compile_tools("schemas/weather.json", qwen, tool_choice="required")
    blobs = {weather_artifact.to_bytes(), other.to_bytes()}
    path = tmp_path / "race.toolc"
    errors = []

    def worker(art):
        try:
            for _ in range(25):
                art.save(path)
                data = path.read_bytes()
                assert data in blobs
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(a,)) for a in
               [weather_artifact, other] * 4]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert path.read_bytes() in blobs
    assert toolc.load(path).num_states in (weather_artifact.num_states, other.num_states)
    assert _leftovers(tmp_path) == []


@pytest.mark.slow
def test_racing_cli_compiles_leave_one_complete_artifact(tmp_path):
    """Three `toolc compile` processes to the same output path."""
    out = tmp_path / "w.toolc"
    cmd = [sys.executable, "-m", "toolc.cli", "compile", "schemas/weather.json", "-q", "-o",
           str(out)]
    procs = [subprocess.Popen(cmd, stderr=subprocess.PIPE) for _ in range(3)]
    for p in procs:
        assert p.wait(timeout=300) == 0, p.stderr.read()
    assert toolc.load(out).tool_names
    assert _leftovers(tmp_path) == []


def test_compile_killed_mid_walk_leaves_nothing(tmp_path):
    """SIGKILL while the vocabulary is being walked: no output, no temp file."""
    out = tmp_path / "killed.toolc"
    code = ("import sys, toolc, toolc.walk.index as ix\n"
            "real = ix.walk\n"
            "def slow(*a, progress=None, **k):\n"
            "    def p(level, total):\n"
            "        print('WALKING', flush=True)\n"
            "        import time; time.sleep(30)\n"
            "    return real(*a, progress=p, **k)\n"
            "import toolc.assemble as a; a.walk = slow\n"
            "from toolc.cli import main\n"
            f"main(['compile', 'schemas/weather.json', '--no-cache', '-o', {str(out)!r}])\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.strip() == "WALKING", (line, proc.stderr.read())
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert not out.exists()
    assert _leftovers(tmp_path) == []


def test_failed_save_leaves_nothing(tmp_path, weather_artifact, monkeypatch):
    """An error while writing (disk full) removes the temp file and keeps the old artifact."""
    path = tmp_path / "a.toolc"
    weather_artifact.save(path)
    before = path.read_bytes()

    def boom(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", boom)
    with pytest.raises(OSError):
        weather_artifact.save(path)
    assert path.read_bytes() == before
    assert _leftovers(tmp_path) == []


def _walks(art, n: int) -> list[list[int]]:
    rng = random.Random(0)
    dist = distance_to_end(art)
    return [random_walk(art, rng, dist, budget=rng.choice([10, 40]), trigger=TOOL_CALL)
            for _ in range(n)]


def _script(art, walks, seed: int, steps: int) -> list[tuple]:
    """A fixed script of ``steps`` operations: sampled walks, with foreign tokens (mostly
    rejected) and rollbacks mixed in."""
    rng = random.Random(seed)
    script = []
    while len(script) < steps:
        ids = rng.choice(walks)
        script.append(("reset",))
        for t in ids:
            if rng.random() < 0.1:
                script.append(("try", rng.randrange(art.logits_size)))
            script.append(("advance", t))
            if rng.random() < 0.05:
                script.append(("rollback",))
                script.append(("advance", t))
    return script[:steps]


def _play(art, script) -> list:
    m = art.matcher()
    seen = []
    for op in script:
        if op[0] == "reset":
            m.reset()
        elif op[0] == "try":
            ok = m.accepts(op[1])
            if ok:
                m.advance(op[1])
                m.rollback(1)
            else:
                with pytest.raises(toolc.RejectedTokenError):
                    m.advance(op[1])
            seen.append(ok)
        elif op[0] == "rollback":
            m.rollback(1)
        else:
            m.advance(op[1])
        mask = m.mask()
        seen.append((m.state, mask[::97].tobytes(), m.is_accepting(), m.is_terminated()))
    return seen


def test_shared_artifact_eight_threads_ten_thousand_steps(weather_artifact):
    """8 threads x 10,000 steps on one Artifact, each with its own Matcher, give exactly what a
    single thread gives for the same scripts."""
    art = weather_artifact
    walks = _walks(art, 40)
    scripts = [_script(art, walks, seed, 10_000) for seed in range(8)]
    expected = [_play(art, s) for s in scripts]
    results: list = [None] * 8
    barrier = threading.Barrier(8)

    def worker(i):
        barrier.wait()
        results[i] = _play(art, scripts[i])

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(8):
        assert results[i] == expected[i], f"thread {i} diverged"
    assert not art.mask_rows.flags.writeable
