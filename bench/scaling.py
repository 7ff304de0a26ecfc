"""How compile cost grows with the number of tools: seconds, peak memory and artifact bytes.

Each size is compiled in a fresh process (tokenizer and trie caches warm) from a generated set
(``bench/gen_tools.py``); the figures go to a JSON file and a PNG plot.

    python bench/scaling.py [--sizes 1,10,30,80,200,500] [--png docs/scaling.png]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

# Fresh processes measure a deployment, where imports come from cached bytecode: a
# PYTHONDONTWRITEBYTECODE=1 in the caller's environment would make every child recompile
# the sources it imports (about 0.1 s for toolc) and count that as compile time.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

_ONE = r"""
import json, resource, sys, time
from toolc.tokenizer import load_vocabulary
vocab = load_vocabulary("qwen"); vocab.fingerprint
import toolc
w0, c0 = time.perf_counter(), time.process_time()
art = toolc.compile_tools(sys.argv[1], vocab)
w1, c1 = time.perf_counter(), time.process_time()
print(json.dumps({"wall_s": w1 - w0, "cpu_s": c1 - c0, "bytes": len(art.to_bytes()),
                  "states": art.num_states,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def measure(n: int, runs: int) -> dict:
    sys.path.insert(0, HERE)
    from gen_tools import generate

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, f"tools{n}.json")
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(generate(n), fh)
        # warm the caches once, then measure
        subprocess.run([sys.executable, "-c", _ONE, path], check=True, capture_output=True,
                       cwd=ROOT)
        out = []
        for _ in range(runs):
            r = subprocess.run([sys.executable, "-c", _ONE, path], check=True,
                               capture_output=True, text=True, cwd=ROOT)
            out.append(json.loads(r.stdout))
    out.sort(key=lambda o: o["cpu_s"])
    best = out[len(out) // 2]
    return {"tools": n, **best}


def plot(rows, png: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = [r["tools"] for r in rows]
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    series = [("cpu_s", "compile CPU seconds"), ("peak_rss_mb", "peak RSS (MB)"),
              ("bytes", "artifact (KB)")]
    for ax, (key, label) in zip(axes, series):
        ys = [r[key] / 1024 if key == "bytes" else r[key] for r in rows]
        ax.plot(n, ys, "o-")
        ax.set_xlabel("tools")
        ax.set_title(label)
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
    fig.suptitle("toolc compile cost against tool count (Qwen3, 151,669 tokens)")
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(png)), exist_ok=True)
    fig.savefig(png, dpi=110)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1,10,30,80,200,500")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--png", default=os.path.join(ROOT, "docs", "scaling.png"))
    ap.add_argument("--json", default=os.path.join(HERE, "results", "scaling.json"))
    args = ap.parse_args(argv)
    rows = []
    for n in [int(x) for x in args.sizes.split(",")]:
        rows.append(measure(n, args.runs))
        r = rows[-1]
        print(f"{n:4d} tools: {r['states']:7,} states, {r['cpu_s']:6.2f} s CPU "
              f"({r['wall_s']:.2f} s wall), {r['peak_rss_mb']:6.0f} MB, "
              f"{r['bytes'] / 1024:8,.0f} KB", flush=True)
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w", encoding="utf-8") as fh:
        json.dump(rows, fh, indent=2)
    plot(rows, args.png)
    return 0


if __name__ == "__main__":
    sys.exit(main())
