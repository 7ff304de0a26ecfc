"""``make bench``, counted bounds: what a bound costs (compile seconds, peak RSS, artifact
bytes, load ms, per-token mask/advance inside the bounded string), case by case.

Each case compiles in a fresh process on Qwen3 (the tokenizer's load is not counted), under
``--timeout 60``, after one untimed run that warms the on-disk caches; a refusal is reported
with the seconds it took and its message.

    python bench/counting.py [--json bench/results/counting.json] [CASE ...]
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
    "pattern ^[a-z]{1,64}$": one({"type": "string", "pattern": "^[a-z]{1,64}$"}),
    "pattern ^x{100000}$": one({"type": "string", "pattern": "^x{100000}$"}),
    "pattern ^.{0,500}x.{0,500}$": one({"type": "string", "pattern": "^.{0,500}x.{0,500}$"}),
    "pattern (a|b)*a(a|b){18}": one({"type": "string", "pattern": "(a|b)*a(a|b){18}"}),
    "pattern x{100000}": one({"type": "string", "pattern": "x{100000}"}),
    "pattern ^ab[a-z]{20,100000}$": one({"type": "string",
                                         "pattern": "^ab[a-z]{20,100000}$"}),
}

_RUN = r"""
import json, resource, sys, time
import numpy as np
from toolc.tokenizer import load_vocabulary
vocab = load_vocabulary("qwen"); vocab.fingerprint; vocab.ordinary_bytes()
import toolc
given = json.loads(sys.stdin.read())
tools, text = given["tools"], given["text"]
t0 = time.perf_counter()
try:
    art = toolc.compile_tools(tools, vocab, timeout=60)
except toolc.ToolcError as e:
    print(json.dumps({"refused_s": time.perf_counter() - t0, "error": str(e)[:160],
                      "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
    sys.exit(0)
compile_s = time.perf_counter() - t0
data = art.to_bytes()
loads = []
for _ in range(7):
    t = time.perf_counter(); toolc.Artifact.from_bytes(data); loads.append(time.perf_counter() - t)
out = {"compile_s": compile_s, "bytes": len(data), "states": art.num_states,
       "load_ms": 1000 * sorted(loads)[3], "counted": type(art.matcher()).__name__ != "Matcher",
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
    if "strings" in name:
        return head + "[" + ", ".join('"lorem ipsum dolor"' for _ in range(60)) + "]"
    if "Items" in name or "array" in name:
        return head + "[" + ", ".join(str(i % 10) for i in range(300)) + "]"
    return head + '"' + "lorem ipsum " * 25 + '"'


def run(name: str) -> dict:
    """The case in a fresh process, after one untimed run of it: the on-disk caches (the
    vocabulary's tries for this automaton's byte classes, its count tables) are warm, as
    they are for every compile after a machine's first."""
    tools = CASES[name] if CASES[name] is not None else mixed_set()
    given = json.dumps({"tools": tools, "text": per_token_text(name)})
    for _ in range(2):
        try:
            r = subprocess.run([sys.executable, "-c", _RUN], input=given, cwd=ROOT,
                               capture_output=True, text=True, timeout=180)
        except subprocess.TimeoutExpired:
            return {"error": "no answer within 180 s"}
        if r.returncode:
            return {"error": (r.stderr.strip().splitlines() or ["?"])[-1][:160]}
    return json.loads(r.stdout)


def render(rows: dict) -> str:
    lines = ["| case | compile s | peak MB | bytes | load ms | states | counted | mask p99 µs "
             "| advance p99 µs |", "|---|---|---|---|---|---|---|---|---|"]
    for name, r in rows.items():
        if "compile_s" not in r:
            took = f"refused in {r['refused_s']:.2f} s" if "refused_s" in r else "failed"
            lines.append(f"| {name} | {took}: {r.get('error', '')} | "
                         f"{r.get('peak_rss_mb', 0):.0f} | | | | | | |")
            continue
        lines.append(
            f"| {name} | {r['compile_s']:.2f} | {r['peak_rss_mb']:.0f} | {r['bytes']:,} | "
            f"{r['load_ms']:.1f} | {r['states']:,} | {'yes' if r['counted'] else 'no'} | "
            f"{r.get('mask_p99_us', float('nan')):.2f} | "
            f"{r.get('advance_p99_us', float('nan')):.2f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cases", nargs="*", help=f"cases (default: all of {', '.join(CASES)})")
    ap.add_argument("--json", default=os.path.join(HERE, "results", "counting.json"))
    args = ap.parse_args(argv)
    rows = {}
    for name in args.cases or CASES:
        rows[name] = run(name)
        print(name, json.dumps(rows[name]), file=sys.stderr)
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w", encoding="utf-8") as fh:
        json.dump(rows, fh, indent=1)
    print(render(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
