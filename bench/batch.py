"""Batch figures: one step of a 256-request batch (fill the bitmask, advance every row) and
the batched calls it is made of, on one artifact (Qwen3).

    python bench/batch.py [SET or PATH ...] [--batch 256] [--steps 300] [--json PATH]

Each request follows its own walk: valid answers sampled as bench/bench.py samples them, or
random walks (``--walks random``: the trigger, then any allowed token, so arguments wander); a
request that ends starts again on its next walk. Per step: ``fill_next_token_bitmask`` over the
batch (one gather), :class:`toolc.BitmaskFiller` (copies only the rows whose mask changed),
``advance`` on every row, and numpy's ``apply_token_bitmask_inplace`` on the batch's float32
logits; "copy" is one plain ``np.copyto`` of a bitmask that size, the memory's floor for a fill
that writes every row. Medians and p99 over the steps; the machine is shared and noisy.
Targets (issue 18): 256 rows filled in <= 100 µs, and fill + advance of a 256-request step
<= 1 ms.
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


def random_walks(art, n: int, seed: int = 0, length: int = 200,
                 trigger: int = 151657) -> list[list[int]]:
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


def stats(ns: list[int]) -> dict:
    xs = np.array(ns, dtype=np.float64) / 1e3
    return {"p50": float(np.median(xs)), "p99": float(np.percentile(xs, 99))}


def run(spec: str, batch: int, steps: int, walks_kind: str, seed: int = 0) -> dict:
    import toolc
    art = toolc.Artifact.from_bytes(artifact_bytes(spec))
    pool = (sample_walks(art, 2 * batch, seed) if walks_kind == "valid"
            else random_walks(art, 2 * batch, seed))
    pool = [w for w in pool if w]
    rng = random.Random(seed)
    walks = [list(rng.choice(pool)) for _ in range(batch)]
    pos = [rng.randrange(len(w)) for w in walks]        # requests at different points
    ms = []
    for w, p in zip(walks, pos):
        m = art.matcher()
        for t in w[:p]:
            m.advance(t)
        ms.append(m)
    bitmask = toolc.allocate_token_bitmask(batch, art.logits_size)
    filler = toolc.BitmaskFiller(batch, art.logits_size)
    logits = np.zeros((batch, art.logits_size), dtype=np.float32)
    clock = time.perf_counter_ns
    t_fill, t_filler, t_adv, t_step, t_apply, changed = [], [], [], [], [], []
    spare, t_copy = bitmask.copy(), []
    prev = None
    for step in range(steps):
        t0 = clock()
        toolc.fill_next_token_bitmask(ms, bitmask)
        t1 = clock()
        filler.fill(ms)
        t2 = clock()
        for i, m in enumerate(ms):
            p = pos[i]
            if p >= len(walks[i]):
                walks[i], pos[i], p = list(rng.choice(pool)), 0, 0
                m.reset()
            m.advance(walks[i][p])
            pos[i] = p + 1
        t3 = clock()
        np.copyto(spare, bitmask)
        t_copy.append(clock() - t3)
        t3 = clock()
        if step < 20:
            toolc.apply_token_bitmask_inplace(logits, bitmask)
            t_apply.append(clock() - t3)
        rows = [art.state_row(m.state) for m in ms]
        if prev is not None:
            changed.append(sum(a != b for a, b in zip(rows, prev)))
        prev = rows
        t_fill.append(t1 - t0)
        t_filler.append(t2 - t1)
        t_adv.append(t3 - t2)
        t_step.append(t3 - t0 - (t1 - t0))         # filler + advance: the step as served
    return {"set": spec, "batch": batch, "steps": steps, "walks": walks_kind,
            "copy": stats(t_copy), "fill": stats(t_fill), "filler": stats(t_filler),
            "advance_all": stats(t_adv),
            "step_filler_advance": stats(t_step), "apply_numpy": stats(t_apply),
            "rows_changed_mean": float(np.mean(changed))}


def render(r: dict) -> str:
    f = "{p50:.0f} / {p99:.0f}"
    return (f"| {r['set']} | {r['walks']} | {r['batch']} | {f.format(**r['copy'])} "
            f"| {f.format(**r['fill'])} "
            f"| {f.format(**r['filler'])} | {r['rows_changed_mean']:.0f} "
            f"| {f.format(**r['advance_all'])} | {f.format(**r['step_filler_advance'])} "
            f"| {r['apply_numpy']['p50'] / 1e3:.1f} |")


HEAD = ("| set | walks | batch | copy p50/p99 µs | fill p50/p99 µs | BitmaskFiller p50/p99 µs "
        "| rows changed per step | advance all p50/p99 µs | step (filler + advance) p50/p99 µs "
        "| apply numpy p50 ms |\n|" + "---|" * 10)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sets", nargs="*", default=["tools10", "tools80"])
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--walks", choices=["valid", "random", "both"], default="both")
    ap.add_argument("--json", default=os.path.join(HERE, "results", "batch.json"))
    args = ap.parse_args(argv)
    kinds = ["valid", "random"] if args.walks == "both" else [args.walks]
    rows = [run(s, args.batch, args.steps, k) for s in args.sets for k in kinds]
    print(HEAD)
    for r in rows:
        print(render(r))
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w", encoding="utf-8") as fh:
        json.dump(rows, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
