"""The vocabulary walk alone: CPU seconds (process_time), median of several runs, optionally
against the walk of another git revision.

    python bench/walk.py [--sets tools10,tools80,500] [--runs 5] [--against REF]

A set is a file in schemas/ or a number of tools from bench/gen_tools.py. Each set's DFA is
built once; the walks run in this process with the tokenizer and trie caches warm, the two
walks interleaved, and both must give the same runs. With --against, REF's walk module
(toolc/walk/index.py, or toolc/index.py before the walk had a package of its own) is loaded
beside this checkout's (it must run on this checkout's other modules).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

FIELDS = ("run_ptr", "run_lo", "run_hi", "run_target", "sp_ptr", "sp_tokens", "sp_targets")


def baseline(ref: str):
    for path, package in (("toolc/walk/index.py", "toolc.walk"), ("toolc/index.py", "toolc")):
        got = subprocess.run(["git", "show", f"{ref}:{path}"], cwd=ROOT, capture_output=True,
                             text=True)
        if got.returncode == 0:
            break
    else:
        raise SystemExit(f"{ref}: no walk module at toolc/walk/index.py or toolc/index.py")
    mod = types.ModuleType(f"{package}._walk_baseline")
    mod.__package__ = package
    sys.modules[mod.__name__] = mod
    exec(compile(got.stdout, f"{ref}:{path}", "exec"), mod.__dict__)
    return mod.walk


def dfa_of(name: str, vocab):
    from toolc.compiler import build_dfa

    if name.isdigit():
        sys.path.insert(0, HERE)
        import json

        from gen_tools import generate

        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
            json.dump(generate(int(name)), fh)
        try:
            b = build_dfa(fh.name, vocab)
        finally:
            os.unlink(fh.name)
    else:
        b = build_dfa(os.path.join(ROOT, "schemas", f"{name}.json"), vocab)
    return b.dfa, b.symbols


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default="tools10,tools80,500")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--against", help="a git revision whose walk to time as the baseline")
    args = ap.parse_args()

    import numpy as np

    from toolc.walk import walk
    from toolc.tokenizer import load_vocabulary

    vocab = load_vocabulary("qwen")
    walks = {"walk": walk}
    if args.against:
        walks = {"baseline": baseline(args.against), "walk": walk}
    print(f"{'set':>10} {'states':>7} " + " ".join(f"{k + ' s':>11}" for k in walks)
          + ("   ratio  same" if args.against else "") + "  frontier  regions  instances")
    for name in args.sets.split(","):
        dfa, symbols = dfa_of(name, vocab)
        times = {k: [] for k in walks}
        out = {}
        for f in walks.values():
            f(dfa, vocab, symbols)          # warm: trie, child keys
        for _ in range(args.runs):
            for k, f in walks.items():
                t0 = time.process_time()
                out[k] = f(dfa, vocab, symbols)
                times[k].append(time.process_time() - t0)
        stats: dict = {}
        walk(dfa, vocab, symbols, stats=stats)
        med = {k: statistics.median(v) for k, v in times.items()}
        line = f"{name:>10} {dfa.num_states:>7} " + " ".join(f"{med[k]:>11.3f}" for k in walks)
        if args.against:
            a, b = out["baseline"], out["walk"]
            same = all(np.array_equal(getattr(a, f), getattr(b, f)) for f in FIELDS)
            line += f" {med['baseline'] / med['walk']:>6.2f}x  {'yes' if same else 'NO':>4}"
        line += (f"  {sum(stats['frontier']):>8}  {stats.get('regions', 0):>7}"
                 f"  {stats.get('instances', 0):>9}")
        print(line, flush=True)


if __name__ == "__main__":
    main()
