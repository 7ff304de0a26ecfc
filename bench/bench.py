"""``make bench``: compile, size, load and per-token costs for every schemas/ set on Qwen3.

Each compile runs in a fresh process (tokenizer loading is reported apart from compiling);
per-token figures are ``mask()`` followed by ``advance()`` along valid tool calls sampled from
the artifact itself. Medians and p99 are quoted: the machine is shared and noisy.

    python bench/bench.py [--runs 3] [--json bench/results/latest.json] [SET ...]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

# Fresh processes measure a deployment, where imports come from cached bytecode: a
# PYTHONDONTWRITEBYTECODE=1 in the caller's environment would make every child recompile
# the sources it imports (about 0.1 s for toolc) and count that as compile time.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

_COMPILE = r"""
import json, resource, sys, time
t0 = time.perf_counter()
from toolc.tokenizer import load_vocabulary
vocab = load_vocabulary("qwen"); vocab.fingerprint; vocab.ordinary_bytes()
t1 = time.perf_counter()
import toolc
art = toolc.compile_tools(sys.argv[1], vocab)
t2 = time.perf_counter()
size = art.save(sys.argv[2])
# this process's own high-water mark: ru_maxrss keeps the parent's at the fork (Linux carries
# it across exec), so a bench that had loaded tools80 reported 330 MB for weather
try:
    with open("/proc/self/status") as fh:
        peak = next(int(l.split()[1]) for l in fh if l.startswith("VmHWM:")) / 1024
except (OSError, StopIteration):
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"tokenizer_s": t1 - t0, "compile_s": t2 - t1, "bytes": size,
                  "states": art.num_states, "rows": art.num_mask_rows, "peak_rss_mb": peak}))
"""


def compile_runs(tools: str, runs: int) -> dict:
    out = []
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "a.toolc")
        for _ in range(runs):
            r = subprocess.run([sys.executable, "-c", _COMPILE, tools, path], check=True,
                               capture_output=True, text=True, cwd=ROOT)
            out.append(json.loads(r.stdout))
        with open(path, "rb") as fh:
            data = fh.read()
    res = {k: statistics.median(o[k] for o in out) for k in out[0]}
    res["compile_min_s"] = min(o["compile_s"] for o in out)   # the least disturbed run
    res["data"] = data
    return res


def load_times(data: bytes, reps: int) -> list[float]:
    """Milliseconds of ``toolc.load`` on ``data`` written to a file, after one untimed load."""
    import toolc
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "a.toolc")
        with open(p, "wb") as fh:
            fh.write(data)
        toolc.load(p)
        times = []
        for _ in range(reps):
            t = time.perf_counter()
            toolc.load(p)
            times.append((time.perf_counter() - t) * 1e3)
    return times


def load_ms(data: bytes, reps: int = 15) -> float:
    return statistics.median(load_times(data, reps))


def token_costs(data: bytes, n_walks: int = 200, seed: int = 0) -> dict:
    """Per-token microseconds of mask(), advance() and apply_mask() on a float32 row of
    logits, along valid sampled outputs: warm (a loaded artifact, 200 walks) and first
    request (a freshly loaded artifact, the first walk that makes a call)."""
    import toolc
    art = toolc.Artifact.from_bytes(data)
    walks = sample_walks(art, n_walks, seed)
    fresh = toolc.Artifact.from_bytes(data)
    first = _time_walk(fresh, first_call(walks))
    warm = [[], [], []]
    for w in walks:
        for acc, got in zip(warm, _time_walk(art, w)):
            acc.extend(got)
    out = {"tokens": len(warm[0])}
    for name, xs, ys in zip(("mask", "advance", "apply"), warm, first):
        xs = np.array(xs, dtype=np.float64) / 1e3
        ys = np.array(ys, dtype=np.float64) / 1e3
        out[f"{name}_p50"] = float(np.median(xs))
        out[f"{name}_p99"] = float(np.percentile(xs, 99))
        out[f"{name}_first_max"] = float(ys.max())
    return out


def sample_walks(art, n_walks: int = 200, seed: int = 0) -> list[list[int]]:
    """Valid outputs sampled from the artifact (tests/helpers.random_walk), reproducibly."""
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    from helpers import distance_to_end, random_walk
    dist = distance_to_end(art)
    rng = random.Random(seed)
    return [random_walk(art, rng, dist, budget=rng.choice([20, 60, 120]), trigger=151657)
            for _ in range(n_walks)]


def first_call(walks: list[list[int]], trigger: int = 151657) -> list[int]:
    """The first walk with a tool call in it (some sampled walks are only free text and EOS:
    a first request of four tokens would never reach the argument states)."""
    return next((w for w in walks if trigger in w), walks[0])


def _time_walk(art, ids):
    import toolc
    m = art.matcher()
    clock = time.perf_counter_ns
    logits = np.zeros(art.logits_size, dtype=np.float32)
    mask_t, adv_t, apply_t = [], [], []
    for t in ids:
        t0 = clock()
        m.mask()
        t1 = clock()
        toolc.apply_mask(logits, m)
        t2 = clock()
        m.advance(t)
        t3 = clock()
        mask_t.append(t1 - t0)
        apply_t.append(t2 - t1)
        adv_t.append(t3 - t2)
    return mask_t, adv_t, apply_t


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sets", nargs="*", help="schema set names (default: every schemas/*.json)")
    ap.add_argument("--runs", type=int, default=5, help="compile runs per set (median and min)")
    ap.add_argument("--json", default=os.path.join(HERE, "results", "latest.json"))
    args = ap.parse_args(argv)
    sets = args.sets or sorted(os.path.splitext(os.path.basename(p))[0]
                               for p in glob.glob(os.path.join(ROOT, "schemas", "*.json")))
    rows = []
    for name in sets:
        tools_path = os.path.join(ROOT, "schemas", f"{name}.json")
        with open(tools_path, encoding="utf-8") as fh:
            n_tools = len(json.load(fh))
        c = compile_runs(tools_path, args.runs)
        data = c.pop("data")
        row = {"set": name, "tools": n_tools, **c, "load_ms": load_ms(data),
               **token_costs(data)}
        rows.append(row)
        print(f"{name}: done", file=sys.stderr)
    print(render(rows))
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w", encoding="utf-8") as fh:
        json.dump(rows, fh, indent=2)
    return 0


def render(rows) -> str:
    head = ("| set | tools | states | compile s (median / min) | tokenizer s | peak RSS MB "
            "| artifact KB "
            "| load ms | mask p50/p99 µs | advance p50/p99 µs | apply_mask p50/p99 µs "
            "| first request max µs (mask/advance/apply) |")
    lines = [head, "|" + "---|" * 12]
    for r in rows:
        lines.append(
            f"| {r['set']} | {r['tools']} | {r['states']:,} | {r['compile_s']:.2f} / "
            f"{r['compile_min_s']:.2f} "
            f"| {r['tokenizer_s']:.2f} | {r['peak_rss_mb']:.0f} | {r['bytes'] / 1024:,.0f} "
            f"| {r['load_ms']:.1f} | {r['mask_p50']:.2f} / {r['mask_p99']:.2f} "
            f"| {r['advance_p50']:.2f} / {r['advance_p99']:.2f} "
            f"| {r['apply_p50']:.1f} / {r['apply_p99']:.1f} "
            f"| {r['mask_first_max']:.1f} / {r['advance_first_max']:.1f} / "
            f"{r['apply_first_max']:.0f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
