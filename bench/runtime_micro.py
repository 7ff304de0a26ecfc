"""Runtime micro-benchmark: load, mask(), advance() and apply_mask() on one artifact.

A quicker loop than ``make bench`` for work on the runtime: no compiles in fresh processes,
only the costs an inference server pays. Medians and p99 over many repetitions; the machine
is shared and noisy, so compare figures taken in the same run.

    python bench/runtime_micro.py [SET or PATH ...] [--loads 30] [--walks 200] [--rounds 5]

A set name (``tools80``) is compiled from ``schemas/<set>.json`` through toolc's cache; a
path is loaded as it is. Per-token figures come from the walks ``bench/bench.py`` uses (200
valid outputs sampled from the artifact, same seed), timed ``--rounds`` times; "first" is
the slowest call of the first walk that makes a call, on a freshly loaded artifact (median
over ``--rounds`` loads). "random" is advance along random walks (the trigger, then any
allowed token: arguments as a model that lost its way writes them; bench/batch.py's walks),
where the issue asks the same p99 as along valid answers. The random walks are timed three
ways, interleaved walk by walk: as a server steps (mask, ``apply_mask`` over a row of
logits, advance), without ``apply_mask`` (its 600 KB write evicts the caches advance reads),
and advance alone: what the tail owes to the engine's cache traffic.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from bench import _time_walk, first_call, load_times, sample_walks  # noqa: E402


def artifact_bytes(spec: str) -> bytes:
    if os.path.exists(spec):
        with open(spec, "rb") as fh:
            return fh.read()
    from toolc.batch import build_one     # through toolc's artifact cache
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "a.toolc")
        build_one(os.path.join(ROOT, "schemas", f"{spec}.json"), out, "qwen")
        with open(out, "rb") as fh:
            return fh.read()


def run(spec: str, loads: int, n_walks: int, rounds: int) -> dict:
    import toolc
    data = artifact_bytes(spec)
    lt = load_times(data, loads)
    art = toolc.Artifact.from_bytes(data)
    walks = sample_walks(art, n_walks)
    warm = [[], [], []]
    for _ in range(rounds):
        for w in walks:
            for acc, got in zip(warm, _time_walk(art, w)):
                acc.extend(got)
    from batch import random_walks
    rand = []
    rwalks = random_walks(art, max(20, n_walks // 4), seed=1)
    bare = {"no_apply": [], "alone": []}
    for _ in range(rounds):
        for w in rwalks:
            rand.extend(_time_walk(art, w)[1])
            bare["no_apply"].extend(_time_advance(art, w, mask=True))
            bare["alone"].extend(_time_advance(art, w, mask=False))
    rand = np.array(rand, dtype=np.float64) / 1e3
    first = [[], [], []]
    for _ in range(rounds):
        fresh = toolc.Artifact.from_bytes(data)
        for acc, got in zip(first, _time_walk(fresh, first_call(walks))):
            acc.append(max(got) / 1e3)
    out = {"set": spec, "kb": len(data) / 1024, "states": art.num_states,
           "load_p50": statistics.median(lt), "load_min": min(lt), "tokens": len(warm[0]),
           "random_advance_p50": float(np.median(rand)),
           "random_advance_p99": float(np.percentile(rand, 99))}
    for k, xs in bare.items():
        xs = np.array(xs, dtype=np.float64) / 1e3
        out[f"random_{k}_p50"] = float(np.median(xs))
        out[f"random_{k}_p99"] = float(np.percentile(xs, 99))
    for name, xs, fs in zip(("mask", "advance", "apply"), warm, first):
        xs = np.array(xs, dtype=np.float64) / 1e3
        out[f"{name}_p50"] = float(np.median(xs))
        out[f"{name}_p99"] = float(np.percentile(xs, 99))
        out[f"{name}_first"] = statistics.median(fs)
    return out


def _time_advance(art, ids, mask: bool) -> list[int]:
    """advance()'s ns along a walk, with mask() before each (``mask``) or alone."""
    import time
    m = art.matcher()
    clock = time.perf_counter_ns
    out = []
    for t in ids:
        if mask:
            m.mask()
        t0 = clock()
        m.advance(t)
        out.append(clock() - t0)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sets", nargs="*", default=["tools80"])
    ap.add_argument("--loads", type=int, default=30)
    ap.add_argument("--walks", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    print("| set | KB | load p50 / min ms | mask p50 / p99 µs | advance p50 / p99 µs "
          "| apply p50 / p99 µs | first request max µs (mask/advance/apply) "
          "| random walks: advance p50 / p99 µs | without apply_mask | advance alone |")
    print("|" + "---|" * 10)
    for spec in args.sets:
        r = run(spec, args.loads, args.walks, args.rounds)
        print(f"| {r['set']} | {r['kb']:,.0f} | {r['load_p50']:.1f} / {r['load_min']:.1f} "
              f"| {r['mask_p50']:.2f} / {r['mask_p99']:.2f} "
              f"| {r['advance_p50']:.2f} / {r['advance_p99']:.2f} "
              f"| {r['apply_p50']:.1f} / {r['apply_p99']:.1f} "
              f"| {r['mask_first']:.1f} / {r['advance_first']:.1f} / {r['apply_first']:.0f} "
              f"| {r['random_advance_p50']:.2f} / {r['random_advance_p99']:.2f} "
              f"| {r['random_no_apply_p50']:.2f} / {r['random_no_apply_p99']:.2f} "
              f"| {r['random_alone_p50']:.2f} / {r['random_alone_p99']:.2f} |",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
