"""Batch figures: one step of a 256-request batch (fill the bitmask, advance every row) and
the batched calls it is made of, on one artifact (Qwen3), beside the memory's floors.

    python bench/batch.py [SET or PATH ...] [--batch 256] [--steps 300] [--json PATH]

Each request follows its own walk, of one of three kinds (``--walks``):

* ``valid``: valid answers sampled as bench/bench.py samples them (half the tokens chosen to
  change the state: the filler's worst case, nearly every row changes every step);
* ``random``: the trigger, then any allowed token, so arguments wander (long strings);
* ``mixed``: what a served batch looks like: free text of 0-150 tokens (a model writing
  before it calls), then a valid call whose strings run on (a tenth of the tokens chosen to
  change the state).

A request that ends starts again on its next walk. Per step: ``fill_next_token_bitmask``
over the batch (one gather), :class:`toolc.BitmaskFiller` (copies only the rows whose mask
changed; once over a bitmask it owns, once over the engine's own array, ``bitmask=``),
:func:`toolc.advance_batch` on every row (and, for comparison, ``advance`` called
row by row), and numpy's ``apply_token_bitmask_inplace`` on the batch's float32 logits.

The floors, measured in the same run on a bitmask of the same shape: ``copy`` (one
``np.copyto`` from another bitmask, both warm in the caches), ``copy cold`` (the same after
64 MB of other memory was written), ``memset`` (``fill(-1)``: writes only) and
``broadcast`` (one row copied into every row); and, for the apply, one ``fill`` of the
logits. Medians and p99 over the steps; the machine is shared and noisy (the load average
is printed). Targets (issue 18): 256 rows filled in <= 100 µs, and fill + advance of a
256-request step <= 1 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from runtime_micro import artifact_bytes  # noqa: E402
from bench import sample_walks  # noqa: E402

TRIGGER = 151657


def random_walks(art, n: int, seed: int = 0, length: int = 200,
                 trigger: int = TRIGGER) -> list[list[int]]:
    """The trigger, then uniformly random allowed tokens (until EOS or ``length`` tokens):
    arguments as a model that has lost its way writes them (long strings, mostly)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        m, w = art.matcher(), [trigger]
        m.advance(trigger)
        while len(w) < length and not m.is_terminated():
            ids = m.allowed_token_ids()
            t = int(ids[rng.integers(len(ids))])
            m.advance(t)
            w.append(t)
        out.append(w)
    return out


def mixed_walks(art, n: int, seed: int = 0) -> list[list[int]]:
    """Free text of 0-150 ordinary tokens, then a valid call that stays in its strings."""
    sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))
    from helpers import distance_to_end, random_walk
    dist = distance_to_end(art)
    rng = random.Random(seed)
    prose = [int(t) for t in art.matcher().allowed_token_ids() if t < art.vocab_size
             and t < TRIGGER - 14]                   # ordinary tokens (Qwen3's specials last)
    return [random_walk(art, rng, dist, budget=rng.choice([40, 120]), leave_bias=0.1,
                        trigger=TRIGGER,
                        prefix=[rng.choice(prose) for _ in range(rng.randrange(151))])
            for _ in range(n)]


def stats(ns: list[int]) -> dict:
    xs = np.array(ns, dtype=np.float64) / 1e3
    return {"p50": float(np.median(xs)), "p99": float(np.percentile(xs, 99))}


def floors(shape, reps: int = 60) -> dict:
    """Microseconds of the memory's floors for a bitmask of ``shape`` (see the docstring)."""
    src = np.full(shape, -1, dtype=np.int32)
    dst = np.zeros(shape, dtype=np.int32)
    junk = np.zeros(64 << 20, dtype=np.uint8)
    clock = time.perf_counter_ns
    out = {k: [] for k in ("copy", "copy_cold", "memset", "broadcast")}
    for _ in range(reps):
        t0 = clock()
        np.copyto(dst, src)
        t1 = clock()
        dst.fill(-1)
        t2 = clock()
        np.copyto(dst, src[:1])
        t3 = clock()
        junk += 1
        t4 = clock()
        np.copyto(dst, src)
        t5 = clock()
        out["copy"].append(t1 - t0)
        out["memset"].append(t2 - t1)
        out["broadcast"].append(t3 - t2)
        out["copy_cold"].append(t5 - t4)
    return {k: stats(v) for k, v in out.items()}


def make_walks(art, kind: str, n: int, seed: int) -> list[list[int]]:
    if kind == "valid":
        return sample_walks(art, n, seed)
    if kind == "random":
        return random_walks(art, n, seed)
    return mixed_walks(art, n, seed)


def run(spec: str, batch: int, steps: int, walks_kind: str, seed: int = 0) -> dict:
    import toolc
    art = toolc.Artifact.from_bytes(artifact_bytes(spec))
    pool = [w for w in make_walks(art, walks_kind, 2 * batch, seed) if w]
    rng = random.Random(seed)
    walks = [list(rng.choice(pool)) for _ in range(batch)]
    pos = [rng.randrange(len(w)) for w in walks]        # requests at different points
    ms = []
    for w, p in zip(walks, pos):
        m = art.matcher()
        for t in w[:p]:
            m.advance(t)
        ms.append(m)
    twins = [m.copy() for m in ms]                       # advanced row by row
    bitmask = toolc.allocate_token_bitmask(batch, art.logits_size)
    filler = toolc.BitmaskFiller(batch, art.logits_size)
    engine = toolc.allocate_token_bitmask(batch, art.logits_size)     # the engine's own array
    reused = toolc.BitmaskFiller(batch, art.logits_size, bitmask=engine)
    logits = np.zeros((batch, art.logits_size), dtype=np.float32)
    clock = time.perf_counter_ns
    t = {k: [] for k in ("fill", "filler", "reused", "advance_batch", "advance_loop", "step",
                         "apply", "logits_fill")}
    changed, distinct = [], []
    for step in range(steps):
        toks = []
        for i, m in enumerate(ms):
            if pos[i] >= len(walks[i]):
                walks[i], pos[i] = list(rng.choice(pool)), 0
                m.reset()
                twins[i].reset()
            toks.append(walks[i][pos[i]])
            pos[i] += 1
        before = [art.state_row(m.state) for m in ms]
        t0 = clock()
        toolc.fill_next_token_bitmask(ms, bitmask)
        t1 = clock()
        filler.fill(ms)
        t2 = clock()
        reused.fill(ms)
        t["reused"].append(clock() - t2)
        t2 = clock()
        if step % 2:        # the second to run finds the same states in the caches: alternate
            for m, tok in zip(twins, toks):
                m.advance(tok)
            t3 = clock()
            toolc.advance_batch(ms, toks)
            t4 = clock()
            t["advance_loop"].append(t3 - t2)
            t["advance_batch"].append(t4 - t3)
        else:
            toolc.advance_batch(ms, toks)
            t3 = clock()
            for m, tok in zip(twins, toks):
                m.advance(tok)
            t4 = clock()
            t["advance_batch"].append(t3 - t2)
            t["advance_loop"].append(t4 - t3)
        if step < 20:
            toolc.apply_token_bitmask_inplace(logits, bitmask)
            t5 = clock()
            logits.fill(1.0)
            t["apply"].append(t5 - t4)
            t["logits_fill"].append(clock() - t5)
        after = [art.state_row(m.state) for m in ms]
        changed.append(sum(a != b for a, b in zip(before, after)))
        distinct.append(len(set(before)))
        t["fill"].append(t1 - t0)
        t["filler"].append(t2 - t1)
        t["step"].append(t2 - t1 + t["advance_batch"][-1])   # filler + advance_batch
    return {"set": spec, "batch": batch, "steps": steps, "walks": walks_kind,
            **{k: stats(v) for k, v in t.items()},
            "rows_changed_mean": float(np.mean(changed)),
            "distinct_rows_mean": float(np.mean(distinct))}


def render(r: dict) -> str:
    f = "{p50:.0f} / {p99:.0f}"
    return (f"| {r['set']} | {r['walks']} | {r['batch']} | {f.format(**r['fill'])} "
            f"| {f.format(**r['filler'])} | {f.format(**r['reused'])} "
            f"| {r['rows_changed_mean']:.0f} "
            f"| {r['distinct_rows_mean']:.0f} "
            f"| {f.format(**r['advance_batch'])} | {f.format(**r['advance_loop'])} "
            f"| {f.format(**r['step'])} "
            f"| {r['apply']['p50'] / 1e3:.1f} / {r['logits_fill']['p50'] / 1e3:.1f} |")


HEAD = ("| set | walks | batch | fill p50/p99 µs | BitmaskFiller p50/p99 µs "
        "| BitmaskFiller over the engine's bitmask p50/p99 µs "
        "| rows changed per step | distinct rows | advance_batch p50/p99 µs "
        "| advance row by row p50/p99 µs | step (filler + advance_batch) p50/p99 µs "
        "| apply numpy / logits fill p50 ms |\n|" + "---|" * 12)


def render_floors(batch: int, words: int, fl: dict) -> str:
    f = "{p50:.0f} / {p99:.0f}"
    return (f"floors for a ({batch}, {words}) int32 bitmask ({batch * words * 4 / 1e6:.1f} MB), "
            "p50 / p99 µs: " + ", ".join(f"{k.replace('_', ' ')} {f.format(**v)}"
                                         for k, v in fl.items()))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sets", nargs="*", default=["tools10", "tools80"])
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--walks", choices=["valid", "random", "mixed", "all"], default="all")
    ap.add_argument("--json", default=os.path.join(HERE, "results", "batch.json"))
    args = ap.parse_args(argv)
    kinds = ["valid", "random", "mixed"] if args.walks == "all" else [args.walks]
    words = (151936 + 31) // 32                          # Qwen3's logits size
    fl = floors((args.batch, words))
    rows = [run(s, args.batch, args.steps, k) for s in args.sets for k in kinds]
    fl_after = floors((args.batch, words))
    print(f"load average {os.getloadavg()[0]:.1f}")
    print(render_floors(args.batch, words, fl) + " (before)")
    print(render_floors(args.batch, words, fl_after) + " (after)")
    print(HEAD)
    for r in rows:
        print(render(r))
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w", encoding="utf-8") as fh:
        json.dump({"floors": [fl, fl_after], "runs": rows}, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
