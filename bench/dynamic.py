"""Dynamic tool sets: requests that carry their own tool lists, drawn from a catalogue.

A server process loads the tokenizer once; then each of ``--requests`` requests carries 5 to 20
tools drawn at random from a ``--catalogue``-tool set made by bench/gen_tools.py (the same seed,
the same workload). With ``--reuse P`` a request resends, with probability P, the tool list of
an earlier request (a client that keeps its tools). For each request we time what the server
does before it can sample the first token: compile the list (or fetch it) and fill the first
mask. Reported: p50, p99, mean and max over the requests (wall clock, and the process's CPU
time: xgrammar compiles on several threads, so its CPU time can exceed its wall time), and
the cache's hits.

Engines (``--engines``):

* ``toolc``: ``toolc.compile_tools(tools, vocab, cache=ToolCache())``, one cache for the run,
  then ``matcher().mask()``.
* ``toolc-cold``: the same without a cache (every request compiles from scratch).
* ``xgrammar``: xgrammar's ``GrammarCompiler`` (its compile cache on, as by default) compiling
  the structural tag of bench/peers/peer_xgrammar.py, then a ``GrammarMatcher`` filling its
  bitmask; needs the peers' virtualenv (``make bench-peers``).

    python bench/dynamic.py [--requests 1000] [--catalogue 500] [--reuse 0.0]
                            [--engines toolc toolc-cold] [--json out.json]

``--stages N`` instead reports where a compile's CPU time goes (``time.process_time``, ms,
medians of N): a full compile of schemas/tools80.json with nothing kept; the same into an
empty ``ToolCache`` (what a server pays for a set of new tools); the same set with
one tool edited (a property added), the cache warm from the unedited set; and a new 12-tool
set of the catalogue whose tools were all compiled before. Stages: ``schemas`` (reading the
tools, their argument Exprs), ``dfa`` (the rest of the DFA: framing, blocks or the whole
grammar, minimization), ``walk``, ``encode`` (the encoder and the load), ``other`` (the
total less these: header, cache keys). It runs on any version of toolc (it wraps the
compiler's stage functions), so before and after can be interleaved.

``--cold-stages`` (with ``--requests N``) compiles each request from scratch with toolc,
stage by stage as above (CPU ms, plus the wall clock), and, where xgrammar imports (the
peers' virtualenv), with xgrammar right after it, request by request: medians over the
requests after the first 10, both engines on the same machine at the same moments.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# bench/ is not on the path: a module there could hide a package of the same name (which
# xgrammar's imports need); gen_tools is loaded from its file
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != HERE]
sys.path.insert(0, ROOT)


def _load(name: str, path: str):
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


generate = _load("gen_tools", os.path.join(HERE, "gen_tools.py")).generate

ENGINES = ("toolc", "toolc-cold", "xgrammar")


def workload(requests: int, catalogue: int, lo: int, hi: int, reuse: float,
             seed: int = 0) -> list[list[dict]]:
    """The requests' tool lists: deterministic for the same arguments."""
    tools = generate(catalogue)
    rng = random.Random(seed)
    out: list[list[dict]] = []
    for _ in range(requests):
        if out and rng.random() < reuse:
            out.append(out[rng.randrange(len(out))])
        else:
            out.append(rng.sample(tools, rng.randint(lo, min(hi, catalogue))))
    return out


def run_toolc(reqs: list[list[dict]], cached: bool) -> tuple[list[float], dict]:
    import toolc
    from toolc.toolcache import ToolCache
    vocab = _qwen()
    cache = ToolCache() if cached else None
    times = []
    for tools in reqs:
        t0, c0 = time.perf_counter(), time.process_time()
        art = toolc.compile_tools(tools, vocab, cache=cache)
        art.matcher().mask()
        times.append((time.perf_counter() - t0, time.process_time() - c0))
    from toolc import assemble
    heads = assemble.stats()
    heads = {"head_hits": heads["head_hits"], "head_misses": heads["head_misses"]}
    return times, ({**cache.stats(), **heads} if cache is not None else heads)


def _xgrammar():
    """A function that compiles a request's tools with xgrammar and fills its first bitmask
    (the peers' virtualenv; ImportError elsewhere)."""
    sys.path.append(os.path.join(HERE, "peers"))
    import numpy as np
    from common import WORDS, extract_tokenizer
    import peer_xgrammar as px
    with tempfile.TemporaryDirectory() as tmp:
        compiler = px.load_tokenizer(extract_tokenizer(tmp))
    buf = np.zeros(WORDS, dtype=np.int32)
    return lambda tools: px.new_matcher(px.compile(tools, compiler), compiler, buf).fill()


def run_xgrammar(reqs: list[list[dict]]) -> tuple[list[float], dict]:
    first_mask = _xgrammar()
    times = []
    for tools in reqs:
        t0, c0 = time.perf_counter(), time.process_time()
        first_mask(tools)
        times.append((time.perf_counter() - t0, time.process_time() - c0))
    return times, {}


_STAGES = {"compile_arguments": "schemas", "build_dfa": "dfa", "walk_parts": "walk",
           "build_artifact": "encode"}


def _timed_stages() -> dict:
    """Wrap the compiler's stage functions so that each adds its CPU seconds to the returned
    dict under its stage's name (``schemas`` is inside ``dfa``: callers subtract it)."""
    import toolc.compiler as C
    spent: dict = {}
    for fn, stage in _STAGES.items():
        def timed(*a, _real=getattr(C, fn), _stage=stage, **k):
            c0 = time.process_time()
            try:
                return _real(*a, **k)
            finally:
                spent[_stage] = spent.get(_stage, 0.0) + time.process_time() - c0
        setattr(C, fn, timed)
    return spent


def _stage_row(spent: dict, total_s: float) -> dict:
    row = {k: spent.get(k, 0.0) * 1e3 for k in ("schemas", "dfa", "walk", "encode")}
    row["dfa"] -= row["schemas"]
    row["other"] = total_s * 1e3 - sum(row.values())
    row["total"] = total_s * 1e3
    return row


def _qwen():
    from toolc.tokenizer import load_vocabulary
    vocab = load_vocabulary("qwen")
    vocab.fingerprint
    vocab.ordinary_bytes()
    return vocab


def stages(rounds: int) -> dict:
    """Per-stage CPU ms (medians over ``rounds``) of the three cases in the module's doc."""
    import toolc
    from toolc import assemble
    from toolc.toolcache import ToolCache
    vocab = _qwen()
    spent = _timed_stages()
    with open(os.path.join(ROOT, "schemas", "tools80.json"), encoding="utf-8") as fh:
        tools80 = json.load(fh)
    catalogue = generate(500)
    rng = random.Random(12)

    def one(tools, cache) -> dict:
        spent.clear()
        c0 = time.process_time()
        toolc.compile_tools(tools, vocab, cache=cache)
        return _stage_row(spent, time.process_time() - c0)

    cases: dict = {"full tools80": [], "tools80, empty cache": [],
                   "tools80, one tool edited": [], "12 known tools": []}
    warm = ToolCache()
    toolc.compile_tools(catalogue, vocab, cache=warm)    # every catalogue tool seen once
    for r in range(rounds):
        assemble.clear()
        cases["full tools80"].append(one(tools80, None))
        cache = ToolCache()
        cases["tools80, empty cache"].append(one(tools80, cache))
        edited = json.loads(json.dumps(tools80))
        fn = edited[r % len(edited)]["function"]
        fn["parameters"].setdefault("properties", {})[f"edit_{r}"] = {"type": "integer"}
        cases["tools80, one tool edited"].append(one(edited, cache))
        toolc.compile_tools(catalogue, vocab, cache=warm)   # no-op: the artifact is kept
        cases["12 known tools"].append(one(rng.sample(catalogue, 12), warm))
    return {name: {k: round(statistics.median(r[k] for r in rows), 1) for k in rows[0]}
            for name, rows in cases.items()}


def cold_stages(reqs: list[list[dict]], warmup: int = 10) -> dict:
    """Each request compiled from scratch by toolc (no ToolCache; the process's kept heads
    and trie warm), per stage, then by xgrammar where it imports, alternated request by
    request so that both see the same machine: medians in ms over the requests after the
    first ``warmup``."""
    import toolc
    vocab = _qwen()
    spent = _timed_stages()
    try:
        xgrammar = _xgrammar()
    except ImportError:
        xgrammar = None
    rows, xg = [], []
    for i, tools in enumerate(reqs):
        spent.clear()
        c0, w0 = time.process_time(), time.perf_counter()
        toolc.compile_tools(tools, vocab).matcher().mask()
        row = _stage_row(spent, time.process_time() - c0)
        row["wall"] = (time.perf_counter() - w0) * 1e3
        if xgrammar is not None:
            c1, w1 = time.process_time(), time.perf_counter()
            xgrammar(tools)
            xrow = {"cpu": (time.process_time() - c1) * 1e3,
                    "wall": (time.perf_counter() - w1) * 1e3}
        if i >= warmup:
            rows.append(row)
            if xgrammar is not None:
                xg.append(xrow)
    out = {"toolc-cold": {k: round(statistics.median(r[k] for r in rows), 1) for k in rows[0]}}
    if xg:
        out["xgrammar"] = {k: round(statistics.median(r[k] for r in xg), 1) for k in xg[0]}
    return out


def summary(times: list[tuple[float, float]]) -> dict:
    """Wall-clock figures, and the process's CPU time per request (the same on a quiet
    machine for a single-threaded compile; a shared machine inflates the wall clock)."""
    ms = sorted(t * 1e3 for t, _ in times)
    cpu = sorted(c * 1e3 for _, c in times)

    def p99(xs):
        return round(xs[min(len(xs) - 1, int(round(0.99 * (len(xs) - 1))))], 2)

    return {"requests": len(ms), "p50_ms": round(statistics.median(ms), 2), "p99_ms": p99(ms),
            "mean_ms": round(statistics.fmean(ms), 2), "max_ms": round(ms[-1], 2),
            "total_s": round(sum(ms) / 1e3, 2), "cpu_p50_ms": round(statistics.median(cpu), 2),
            "cpu_p99_ms": p99(cpu)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=1000)
    ap.add_argument("--catalogue", type=int, default=500)
    ap.add_argument("--min-tools", type=int, default=5)
    ap.add_argument("--max-tools", type=int, default=20)
    ap.add_argument("--reuse", type=float, default=0.0,
                    help="probability that a request resends an earlier request's tools")
    ap.add_argument("--engines", nargs="+", default=["toolc"], choices=ENGINES)
    ap.add_argument("--json", help="write the figures here too")
    ap.add_argument("--stages", type=int, metavar="N",
                    help="per-stage CPU ms of three compiles, medians of N (see the doc)")
    ap.add_argument("--cold-stages", action="store_true",
                    help="per-stage ms of the requests compiled from scratch, beside "
                         "xgrammar's compile of each where it imports (see the doc)")
    args = ap.parse_args(argv)
    if not (1 <= args.min_tools <= args.max_tools) or args.requests < 1 \
            or not 0 <= args.reuse <= 1:
        ap.error("need 1 <= --min-tools <= --max-tools, --requests >= 1, 0 <= --reuse <= 1")
    if args.cold_stages or args.stages:
        if args.cold_stages:
            reqs = workload(args.requests, args.catalogue, args.min_tools, args.max_tools, 0.0)
            key, width, got = "cold_stages", 11, cold_stages(
                reqs, warmup=min(10, args.requests - 1))
        else:
            key, width, got = "stages", 26, stages(args.stages)
        for name, row in got.items():
            print(f"  {name:<{width}}" + "  ".join(f"{k} {v:7.1f}" for k, v in row.items()))
        if args.json:
            with open(args.json, "w", encoding="utf-8") as fh:
                json.dump({"args": vars(args), key: got}, fh, indent=2)
        return 0
    reqs = workload(args.requests, args.catalogue, args.min_tools, args.max_tools, args.reuse)
    print(f"{args.requests} requests, {args.min_tools}-{args.max_tools} tools each from a "
          f"{args.catalogue}-tool catalogue, reuse {args.reuse}: time to first mask (ms)")
    results = {}
    for engine in args.engines:
        if engine == "xgrammar":
            times, stats = run_xgrammar(reqs)
        else:
            times, stats = run_toolc(reqs, cached=engine == "toolc")
        row = summary(times)
        results[engine] = {**row, "cache": stats}
        print(f"  {engine:<11} p50 {row['p50_ms']:8.2f}  p99 {row['p99_ms']:8.2f}  mean "
              f"{row['mean_ms']:8.2f}  max {row['max_ms']:8.2f}  total {row['total_s']:.1f} s"
              f"  (CPU p50 {row['cpu_p50_ms']:.2f}, p99 {row['cpu_p99_ms']:.2f})"
              + (f"  {stats}" if stats else ""))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"args": vars(args), "results": results}, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
