"""``make bench``, counted bounds: what a bound costs (compile seconds, peak RSS, artifact
bytes, load ms, per-token mask/advance inside the bounded string), case by case.

Each case compiles in a fresh process on Qwen3 (the tokenizer's load is not counted, and
Python's bytecode cache is allowed), under ``--timeout 60``, after one untimed run that warms
the on-disk caches; a refusal is reported with the seconds it took and its message. The
timed runs go in rounds, every case once a round, and each figure is the median of the
rounds (``--repeat``, 3 by default).

    python bench/counting.py [--json bench/results/counting.json] [--repeat R] [CASE ...]

The table is followed by the issue's target lines (a bound at the cost of one), each marked
met or MISSED.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def one(prop: dict, n: int = 1) -> list:
    props = {f"p{i}": prop for i in range(n)}
    return [{"type": "function", "function": {"name": "post", "parameters": {
        "type": "object", "properties": props, "required": list(props)}}}]


def mixed_set() -> list:
    """100 tools from bench/gen_tools.py, 10 of them given the bounds real tools carry:
    maxLength 280 to 2,083, patterns with {1,64}, arrays with maxItems 100."""
    sys.path.insert(0, HERE)
    import gen_tools
    tools = gen_tools.generate(100, seed=0)
    bounds = [{"type": "string", "maxLength": 280}, {"type": "string", "maxLength": 2083},
              {"type": "string", "maxLength": 500},
              {"type": "string", "pattern": "^[a-z0-9_]{1,64}$"},
              {"type": "array", "items": {"type": "integer"}, "maxItems": 100}]
    for k, t in enumerate(tools[:10]):
        params = t["function"]["parameters"]
        params.setdefault("properties", {})[f"bounded_{k}"] = bounds[k % len(bounds)]
    return tools


CASES = {
    "string": one({"type": "string"}),
    "maxLength 64": one({"type": "string", "maxLength": 64}),
    "maxLength 1000": one({"type": "string", "maxLength": 1000}),
    "maxLength 100000": one({"type": "string", "maxLength": 100000}),
    "3 x maxLength 100": one({"type": "string", "maxLength": 100}, 3),
    "maxLength 1000000": one({"type": "string", "maxLength": 1000000}),
    "minLength 1000": one({"type": "string", "minLength": 1000}),
    "100 tools, 10 bounded": None,
    "array, minItems 1": one({"type": "array", "items": {"type": "integer"}, "minItems": 1}),
    "maxItems 10": one({"type": "array", "items": {"type": "integer"}, "minItems": 1,
                        "maxItems": 10}),
    "maxItems 1000": one({"type": "array", "items": {"type": "integer"}, "minItems": 1,
                          "maxItems": 1000}),
    "maxItems 1e9": one({"type": "array", "items": {"type": "integer"}, "minItems": 1,
                         "maxItems": 1000000000}),
    "objects, maxItems 100": one({"type": "array", "maxItems": 100, "items": {
        "type": "object", "properties": {"id": {"type": "integer"}, "tags": {
            "type": "array", "items": {"type": "string"}}}, "required": ["id"]}}),
    # nested: a counted string in a counted array's items (the counter a pair)
    "maxItems 100 of maxLength 280 strings": one({"type": "array", "maxItems": 100, "items": {
        "type": "string", "maxLength": 280}}),
    "maxItems 1e9 of maxLength 1e6 strings": one({"type": "array", "maxItems": 1000000000,
                                                  "minItems": 1, "items": {
                                                      "type": "string", "maxLength": 1000000}}),
    # three levels: a counted string in a counted array in a counted array's items (the
    # counter a triple); with maxLength 20, every character is near the string's bound
    "maxItems 1e9 of arrays of 1e6 strings of 1e6": one({
        "type": "array", "maxItems": 1000000000, "items": {
            "type": "array", "maxItems": 1000000, "items": {
                "type": "string", "maxLength": 1000000}}}),
    "maxItems 100 of arrays of 50 strings of 20": one({
        "type": "array", "maxItems": 100, "items": {
            "type": "array", "maxItems": 50, "items": {"type": "string", "maxLength": 20}}}),
    "pattern ^[a-z]{1,64}$": one({"type": "string", "pattern": "^[a-z]{1,64}$"}),
    "pattern ^x{100000}$": one({"type": "string", "pattern": "^x{100000}$"}),
    "pattern ^.{0,500}x.{0,500}$": one({"type": "string", "pattern": "^.{0,500}x.{0,500}$"}),
    "pattern (a|b)*a(a|b){18}": one({"type": "string", "pattern": "(a|b)*a(a|b){18}"}),
    "pattern x{100000}": one({"type": "string", "pattern": "x{100000}"}),
    "pattern ^ab[a-z]{20,100000}$": one({"type": "string",
                                         "pattern": "^ab[a-z]{20,100000}$"}),
    # unanchored runs (a counter that resets): x{100000} above, and a class of letters
    "pattern [a-z]{20,}": one({"type": "string", "pattern": "[a-z]{20,}"}),
}
RUNS = ("pattern x{100000}", "pattern [a-z]{20,}")

_RUN = r"""
import json, resource, sys, time
import numpy as np
from toolc.tokenizer import load_vocabulary
vocab = load_vocabulary("qwen"); vocab.fingerprint; vocab.ordinary_bytes()
import toolc
given = json.loads(sys.stdin.read())
tools, text = given["tools"], given["text"]
t0, c0 = time.perf_counter(), time.process_time()
try:
    art = toolc.compile_tools(tools, vocab, timeout=60)
except toolc.ToolcError as e:
    print(json.dumps({"refused_s": time.perf_counter() - t0, "error": str(e)[:160],
                      "refused_cpu_s": time.process_time() - c0,
                      "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
    sys.exit(0)
compile_s, compile_cpu_s = time.perf_counter() - t0, time.process_time() - c0
data = art.to_bytes()
loads, walls = [], []
for _ in range(21):
    t, c = time.perf_counter(), time.process_time()
    toolc.Artifact.from_bytes(data)
    loads.append(time.process_time() - c); walls.append(time.perf_counter() - t)
out = {"compile_s": compile_s, "compile_cpu_s": compile_cpu_s, "bytes": len(data),
       "states": art.num_states, "load_ms": 1000 * sorted(loads)[10],
       "load_wall_ms": 1000 * sorted(walls)[10],
       "counted": type(art.matcher()).__name__ != "Matcher",
       "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
# per token, along a call whose first argument is a 300-character string or a long array
mask, adv = [], []
try:
    ids = vocab.encode(text)
    for rep in range(60):
        m = art.matcher()
        for t in ids:
            if not m.accepts(t):
                break
            a = time.perf_counter_ns(); m.mask(); b = time.perf_counter_ns(); m.advance(t)
            c = time.perf_counter_ns()
            if rep:
                mask.append(b - a); adv.append(c - b)
except Exception:
    pass
if mask:
    out.update(mask_p50_us=np.percentile(mask, 50) / 1e3,
               mask_p99_us=np.percentile(mask, 99) / 1e3,
               advance_p50_us=np.percentile(adv, 50) / 1e3,
               advance_p99_us=np.percentile(adv, 99) / 1e3)
print(json.dumps(out))
"""


def per_token_text(name: str) -> str:
    """The call the per-token figures walk (as far as the schema allows it)."""
    head = '<tool_call>\n{"name": "post", "arguments": {"p0": '
    if "objects" in name:
        return head + "[" + ", ".join(f'{{"id": {i}, "tags": ["a", "b"]}}'
                                      for i in range(60)) + "]"
    if "arrays of" in name:
        return head + "[" + ", ".join('["lorem ipsum", "dolor sit amet"]'
                                      for _ in range(30)) + "]"
    if "strings" in name:
        return head + "[" + ", ".join('"lorem ipsum dolor"' for _ in range(60)) + "]"
    if name in RUNS:        # a run: broken, then long enough
        return head + '"' + "lorem ipsum xx " * 10 + "x" * 300 + ' dolor"'
    if "Items" in name or "array" in name:
        return head + "[" + ", ".join(str(i % 10) for i in range(300)) + "]"
    return head + '"' + "lorem ipsum " * 25 + '"'


def _child_env() -> dict:
    """The children's environment: Python's bytecode cache allowed (a machine that sets
    PYTHONDONTWRITEBYTECODE would otherwise recompile toolc's modules from source in every
    fresh process, some 0.1 s that is Python's and not the compile's; an installed package
    has its bytecode)."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def once(name: str) -> dict:
    """One compile of the case in a fresh process."""
    tools = CASES[name] if CASES[name] is not None else mixed_set()
    given = json.dumps({"tools": tools, "text": per_token_text(name)})
    try:
        r = subprocess.run([sys.executable, "-c", _RUN], input=given, cwd=ROOT, env=_child_env(),
                           capture_output=True, text=True, timeout=180)
    except subprocess.TimeoutExpired:
        return {"error": "no answer within 180 s"}
    if r.returncode:
        return {"error": (r.stderr.strip().splitlines() or ["?"])[-1][:160]}
    return json.loads(r.stdout)


def run_all(names: list, repeat: int = 1) -> dict:
    """Every case in a fresh process, after one untimed run of each: the on-disk caches (the
    vocabulary's tries for this automaton's byte classes, its count tables) are warm, as
    they are for every compile after a machine's first. With ``repeat`` > 1, the medians of
    that many timed runs, made in rounds (each round runs every case once), so that the
    cases compared with each other (a bound against none, one bound against another) are
    measured side by side and not minutes apart."""
    got = {n: [once(n)] for n in names}
    for _ in range(repeat):
        for n in names:
            if "error" not in got[n][0]:
                got[n].append(once(n))
    rows = {}
    for n, runs in got.items():
        if any("error" in g for g in runs):
            rows[n] = next(g for g in runs if "error" in g)
            continue
        out = dict(runs[-1])
        for k, v in out.items():
            if isinstance(v, float):
                out[k] = sorted(g[k] for g in runs[1:])[(len(runs) - 2) // 2]
        rows[n] = out
    return rows


def render(rows: dict) -> str:
    """The table: compile and load as CPU time (``time.process_time``: on a shared machine
    the wall clock adds the time spent waiting for a core), the wall clock beside it."""
    lines = ["| case | compile s CPU (wall) | peak MB | bytes | load ms CPU | states | counted "
             "| mask p99 µs | advance p99 µs |", "|---|---|---|---|---|---|---|---|---|"]
    for name, r in rows.items():
        if "compile_s" not in r:
            took = (f"refused in {r['refused_cpu_s']:.2f} s CPU ({r['refused_s']:.2f} s)"
                    if "refused_s" in r else "failed")
            lines.append(f"| {name} | {took}: {r.get('error', '')} | "
                         f"{r.get('peak_rss_mb', 0):.0f} | | | | | | |")
            continue
        lines.append(
            f"| {name} | {r['compile_cpu_s']:.2f} ({r['compile_s']:.2f}) | "
            f"{r['peak_rss_mb']:.0f} | {r['bytes']:,} | "
            f"{r['load_ms']:.1f} | {r['states']:,} | {'yes' if r['counted'] else 'no'} | "
            f"{r.get('mask_p99_us', float('nan')):.2f} | "
            f"{r.get('advance_p99_us', float('nan')):.2f} |")
    return "\n".join(lines)


# the targets (issue 14): (what, cases, limit) checked by ``targets``
ONE_STRING = ("maxLength 64", "maxLength 1000", "maxLength 100000")
UNDER_1S = ("maxItems 1e9", "maxLength 1000000", "pattern ^[a-z]{1,64}$", "pattern x{100000}")
REFUSED_1S = ("pattern ^.{0,500}x.{0,500}$", "pattern (a|b)*a(a|b){18}")


def targets(rows: dict) -> str:
    """The issue's target lines, each with the figures it is judged on and met / MISSED.
    Seconds are judged as CPU time (the wall clock is given beside them)."""
    def mark(ok: bool) -> str:
        return "met" if ok else "MISSED"

    def have(*names):
        return all(n in rows and "compile_s" in rows[n] for n in names)

    out = ["", "Targets (issue 14):"]
    if have("string", *ONE_STRING):
        base = rows["string"]
        for n in ONE_STRING:
            r = rows[n]
            d = (r["compile_cpu_s"] - base["compile_cpu_s"],
                 r["peak_rss_mb"] - base["peak_rss_mb"],
                 r["bytes"] - base["bytes"], r["load_ms"] - base["load_ms"])
            wall = r["compile_s"] - base["compile_s"]
            out.append(f"- {n} vs no bound: {d[0]:+.2f} s CPU ({wall:+.2f} s wall), "
                       f"{d[1]:+.0f} MB, {d[2]:+,} bytes, "
                       f"load {d[3]:+.1f} ms (within 0.1 s, 50 MB, 50 KB: "
                       f"{mark(d[0] <= 0.1 and d[1] <= 50 and d[2] <= 50_000)})")
        spread = []
        for key, label in (("compile_cpu_s", "compile"), ("peak_rss_mb", "peak RSS"),
                           ("bytes", "bytes"), ("load_ms", "load")):
            v = [rows[n][key] for n in ONE_STRING]
            spread.append((label, max(v) / min(v) - 1))
        out.append("- across maxLength 64 / 1,000 / 100,000: " + ", ".join(
            f"{label} {100 * s:.1f}%" for label, s in spread)
            + f" apart (within 5%: {mark(all(s <= 0.05 for _, s in spread))})")
    for name, secs, mb in (("3 x maxLength 100", 0.5, 200), ("100 tools, 10 bounded", 2, 400)):
        if have(name):
            r = rows[name]
            out.append(f"- {name}: {r['compile_cpu_s']:.2f} s CPU ({r['compile_s']:.2f} s "
                       f"wall), {r['peak_rss_mb']:.0f} MB (under {secs} s and {mb} MB: "
                       f"{mark(r['compile_cpu_s'] < secs and r['peak_rss_mb'] < mb)})")
    for name in UNDER_1S:
        r = rows.get(name)
        if r is None:
            continue
        if "compile_s" in r:
            out.append(f"- {name}: compiled in {r['compile_cpu_s']:.2f} s CPU "
                       f"({r['compile_s']:.2f} s wall; under 1 s: "
                       f"{mark(r['compile_cpu_s'] < 1)})")
        else:
            out.append(f"- {name}: not compiled ({r.get('error', '?')[:60]}...): MISSED")
    for name in REFUSED_1S:
        r = rows.get(name)
        if r is not None:
            ok = "refused_s" in r and r["refused_cpu_s"] < 1 and "/" in r.get("error", "")
            took = (f"refused in {r['refused_cpu_s']:.2f} s CPU ({r['refused_s']:.2f} s wall)"
                    if "refused_s" in r else "compiled")
            out.append(f"- {name}: {took}, with its pointer (within 1 s: {mark(ok)})")
    counted = [r for r in rows.values() if r.get("counted") and "mask_p99_us" in r]
    if counted:
        m = max(r["mask_p99_us"] for r in counted)
        a = max(r["advance_p99_us"] for r in counted)
        out.append(f"- per token in counted artifacts, worst case: mask p99 {m:.2f} µs, "
                   f"advance p99 {a:.2f} µs (2 and 3 µs: {mark(m <= 2 and a <= 3)})")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cases", nargs="*", help=f"cases (default: all of {', '.join(CASES)})")
    ap.add_argument("--json", default=os.path.join(HERE, "results", "counting.json"))
    ap.add_argument("--repeat", type=int, default=3,
                    help="timed rounds over the cases (medians reported); default 3")
    args = ap.parse_args(argv)
    rows = run_all(list(args.cases or CASES), args.repeat)
    for name, row in rows.items():
        print(name, json.dumps(row), file=sys.stderr)
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w", encoding="utf-8") as fh:
        json.dump(rows, fh, indent=1)
    print(render(rows))
    print(targets(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
