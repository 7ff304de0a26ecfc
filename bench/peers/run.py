"""``make bench-peers``: toolc side by side with outlines-core, xgrammar and llguidance on Qwen3.

For each tool set (weather, tools10, tools80) and each engine, ``worker.py`` runs in fresh
processes (3 by default; outlines-core, whose compile takes minutes here, once; a worker is
stopped after ``--timeout`` seconds, 600 by default) and measures:
tokenizer loading, compiling, the wall time from spawning the process to the first mask (tools
file to first mask, tokenizer cache warm), peak RSS, the compiled index's bytes, a new request,
and the per-token mask and advance costs along the same valid Qwen3 answers (the first answer
after compiling is the "first request"; the rest are measured after a warm-up pass). The first
run also compares each peer's masks with toolc's, step by step. Medians over the runs are
reported; the table goes to bench/results/peers.md and the raw figures to peers.json beside it.

    python bench/peers/run.py [--runs 3] [--answers 60] [--sets weather tools10 tools80]
                              [--peers toolc xgrammar llguidance outlines]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

# Fresh processes measure a deployment, where imports come from cached bytecode: a
# PYTHONDONTWRITEBYTECODE=1 in the caller's environment would make every child recompile
# the sources it imports (about 0.1 s for toolc) and count that as compile time.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from common import ROOT, extract_tokenizer, load_tools  # noqa: E402

PEERS = ["toolc", "xgrammar", "llguidance", "outlines"]
SETS = ["weather", "tools10", "tools80"]
# outlines-core's compile takes minutes for these sets (and GBs at 80 tools): once, not three times
SINGLE_RUN = {("outlines", "tools10"), ("outlines", "tools80")}
TIMEOUT_S = 600


def build_corpus(sets, answers: int, path: str) -> dict:
    """The corpus, built in a child process with a fixed hash seed (see corpus.main)."""
    env = dict(os.environ, PYTHONHASHSEED="0")
    subprocess.run([sys.executable, os.path.join(HERE, "corpus.py"), path, str(answers), *sets],
                   check=True, cwd=HERE, env=env)
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def run_worker(peer, set_name, corpus_path, tok_json, tmp, extra=(),
               timeout: float = TIMEOUT_S) -> dict:
    out = os.path.join(tmp, f"{peer}-{set_name}.json")
    cmd = [sys.executable, os.path.join(HERE, "worker.py"), peer, set_name, corpus_path,
           tok_json, out, *extra]
    spawn = time.time()
    try:
        r = subprocess.run(cmd, cwd=HERE, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"did not finish within {timeout:.0f} s (compile, walks and check)"}
    if r.returncode != 0:
        tail = (r.stderr or r.stdout).strip().splitlines()[-3:]
        return {"error": " | ".join(tail)}
    with open(out, encoding="utf-8") as fh:
        res = json.load(fh)
    res["first_mask_s"] = res.pop("first_mask_wall") - spawn
    return res


def median_of(runs: list[dict]) -> dict:
    """Medians of the numeric figures over runs; the rest (checks, rejections) from run 1."""
    out = dict(runs[0])
    for key in ("import_s", "tokenizer_s", "compile_s", "first_mask_s", "peak_rss_mb"):
        out[key] = statistics.median(r[key] for r in runs)
    for key in ("mask", "advance", "new_matcher", "first_mask", "first_advance", "mask_view"):
        if key in out:
            out[key] = {k: statistics.median(r[key][k] for r in runs)
                        for k in ("p50", "p99")} | {"n": out[key]["n"]}
    checks = [r["check"] for r in runs if "check" in r]
    out.pop("check", None)
    if checks:
        out["check"] = checks[0]
    out["runs"] = len(runs)
    return out


def measure(peers, sets, runs, corpus_path, tok_json, tmp, log, timeout) -> dict:
    results: dict = {}
    for s in sets:
        art = os.path.join(tmp, f"{s}.toolc")
        for p in peers:
            n = 1 if (p, s) in SINGLE_RUN else runs
            got = []
            for k in range(n):
                extra = []
                if p == "toolc" and k == 0:
                    extra = ["--save", art]      # the reference the others are checked against
                elif k == (1 if p == "toolc" else 0) and os.path.exists(art):
                    extra = ["--check", art]
                r = run_worker(p, s, corpus_path, tok_json, tmp, extra, timeout)
                log(f"{s} {p} run {k + 1}/{n}: " + (r["error"] if "error" in r else
                    f"compile {r['compile_s']:.2f} s, first mask {r['first_mask_s']:.2f} s"))
                if "error" in r:
                    got = [r]
                    break
                got.append(r)
            results[(p, s)] = got[0] if "error" in got[0] else median_of(got)
    return results


def _f(x, fmt="{:.2f}"):
    return "n/a" if x is None else fmt.format(x)


def render(results, peers, sets, n_tools) -> str:
    lines = ["| set | engine | import s | tokenizer s | compile s | tools → first mask s "
             "| peak RSS MB "
             "| index KB | new request µs | mask p50 / p99 µs | advance p50 / p99 µs "
             "| first request mask p50 / p99 µs | first request advance p50 / p99 µs "
             "| answers rejected |",
             "|" + "---|" * 14]
    for s in sets:
        for p in peers:
            r = results.get((p, s))
            if r is None:
                continue
            name = f"{s} ({n_tools[s]})"
            if "error" in r:
                lines.append(f"| {name} | {p} | failed: {r['error'][:120]} |" + " |" * 12)
                continue
            runs = "" if r["runs"] > 1 else " ¹"
            kb = None if r["bytes"] is None else r["bytes"] / 1024
            lines.append(
                f"| {name} | {r['peer']}{runs} | {_f(r['import_s'])} | {_f(r['tokenizer_s'])} "
                f"| {_f(r['compile_s'])} "
                f"| {_f(r['first_mask_s'])} | {_f(r['peak_rss_mb'], '{:,.0f}')} "
                f"| {_f(kb, '{:,.0f}')} | {_f(r['new_matcher']['p50'], '{:,.1f}')} "
                f"| {_pair(r['mask'])} | {_pair(r['advance'])} | {_pair(r['first_mask'])} "
                f"| {_pair(r['first_advance'])} | {len(r['rejected'])} / {r['answers']} |")
    return "\n".join(lines)


def _pair(d) -> str:
    return f"{_f(d['p50'], '{:,.1f}')} / {_f(d['p99'], '{:,.1f}')}"


RATIO_KEYS = [("compile s", lambda r: r["compile_s"]),
              ("tools → first mask", lambda r: r["first_mask_s"]),
              ("peak RSS", lambda r: r["peak_rss_mb"]),
              ("index bytes", lambda r: r["bytes"]),
              ("mask p50", lambda r: r["mask"]["p50"]),
              ("mask p99", lambda r: r["mask"]["p99"]),
              ("advance p50", lambda r: r["advance"]["p50"]),
              ("advance p99", lambda r: r["advance"]["p99"]),
              ("first-request mask p99", lambda r: r["first_mask"]["p99"])]


def render_ratios(results, peers, sets) -> str:
    others = [p for p in peers if p != "toolc"]
    head = "| set | peer | " + " | ".join(k for k, _ in RATIO_KEYS) + " |"
    lines = [head, "|" + "---|" * (2 + len(RATIO_KEYS))]
    for s in sets:
        t = results.get(("toolc", s))
        if not t or "error" in t:
            continue
        for p in others:
            r = results.get((p, s))
            if not r or "error" in r:
                continue
            cells = []
            for _, get in RATIO_KEYS:
                a, b = get(t), get(r)
                cells.append("n/a" if a is None or not b else _ratio(a / b))
            lines.append(f"| {s} | {r['peer']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _ratio(x: float) -> str:
    return f"{x:,.0f}×" if x >= 100 else f"{x:.2g}×"


def render_checks(results, peers, sets) -> str:
    lines = ["| set | engine | steps compared | steps allowing more than toolc (tokens) "
             "| steps allowing less than toolc (tokens) | special tokens allowed inside "
             "arguments (steps) |", "|" + "---|" * 6]
    for s in sets:
        for p in peers:
            r = results.get((p, s))
            if not r or "error" in r or "check" not in r:
                continue
            c = r["check"]
            sp = ", ".join(f"`{k}` ({v})".replace("|", "\\|")
                           for k, v in sorted(c["special_inside"].items())) or "none"
            lines.append(f"| {s} | {r['peer']} | {c['steps']:,} | {c['extra_steps']:,} "
                         f"({c['extra_tokens']:,}) | {c['missing_steps']:,} "
                         f"({c['missing_tokens']:,}) | {sp} |")
    return "\n".join(lines)


def render_rejections(results, peers, sets) -> str:
    out = []
    for s in sets:
        for p in peers:
            r = results.get((p, s))
            if not r or "error" in r or not r["rejected"]:
                continue
            ex = r["rejected"][0]
            out.append(f"- {s}, {r['peer']}: {len(r['rejected'])} of {r['answers']} valid "
                       f"answers rejected; first at token {ex['step']} (id {ex['token']}) of "
                       f"`{ex['context'][:120]!r}`")
    return "\n".join(out) or "- none"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="fresh processes per engine and set")
    ap.add_argument("--answers", type=int, default=60, help="valid answers per set")
    ap.add_argument("--sets", nargs="+", default=SETS)
    ap.add_argument("--peers", nargs="+", default=PEERS, choices=PEERS)
    ap.add_argument("--timeout", type=float, default=TIMEOUT_S,
                    help="seconds one worker process may take before it is stopped")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "peers.md"))
    ap.add_argument("--render-only", metavar="JSON",
                    help="print the report of an earlier run's peers.json, measuring nothing")
    args = ap.parse_args(argv)
    if args.render_only:
        with open(args.render_only, encoding="utf-8") as fh:
            print(report(json.load(fh)))
        return 0
    peers = ["toolc"] + [p for p in args.peers if p != "toolc"]

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="toolc-peers-") as tmp:
        tok_json = extract_tokenizer(tmp)
        corpus_path = os.path.join(tmp, "corpus.json")
        data = build_corpus(args.sets, args.answers, corpus_path)
        log(f"corpus: {sum(len(e['ids']) for v in data.values() for e in v):,} tokens "
            f"in {sum(len(v) for v in data.values())} answers")
        # one untimed run first, so the tokenizer caches and the page cache are warm
        run_worker("toolc", args.sets[0], corpus_path, tok_json, tmp)
        results = measure(peers, args.sets, args.runs, corpus_path, tok_json, tmp, log,
                          args.timeout)
    saved = {
        "meta": {"runs": args.runs, "answers": args.answers, "sets": args.sets, "peers": peers,
                 "tools": {s: len(load_tools(s)) for s in args.sets},
                 "tokens": {s: sum(len(e["ids"]) for e in data[s]) for s in args.sets},
                 "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                 "versions": _versions(), "seconds": round(time.time() - t0)},
        "results": {f"{p}/{s}": r for (p, s), r in results.items()},
    }
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(os.path.splitext(args.out)[0] + ".json", "w", encoding="utf-8") as fh:
        json.dump(saved, fh, indent=1, ensure_ascii=False)
    text = report(saved)
    with open(args.out, "w", encoding="utf-8") as fh:
        fh.write(text)
    print(text)
    return 0


def report(saved: dict) -> str:
    meta = saved["meta"]
    results = {tuple(k.split("/")): v for k, v in saved["results"].items()}
    peers, sets = meta["peers"], meta["sets"]
    return "\n\n".join([
        "# toolc side by side with its peers (Qwen3, tool_choice required)",
        f"`python bench/peers/run.py --peers {' '.join(peers)} --runs {meta['runs']} "
        f"--answers {meta['answers']}`, "
        f"{meta['date']}, {meta['versions']}; 2 shared cores, noisy. Medians of "
        f"{meta['runs']} fresh processes (¹: one process). Per-token figures along "
        + ", ".join(f"{s}: {meta['answers']} answers, {meta['tokens'][s]:,} tokens"
                    for s in sets)
        + ". toolc's mask is `Matcher.mask()` copied into the engine's bitmask row (the peers "
        "write into that row themselves). \"tools → first mask\" is the wall time from "
        "spawning a fresh process to the first mask, imports included (\"import s\").",
        *([meta["note"]] if meta.get("note") else []),
        render(results, peers, sets, meta["tools"]),
        "## toolc / peer (below 1: toolc is smaller or faster)",
        render_ratios(results, peers, sets),
        "## Masks compared with toolc's, step by step along the same answers",
        render_checks(results, peers, sets),
        "## Valid answers a peer rejected",
        render_rejections(results, peers, sets),
        f"Total bench time {meta['seconds']} s.",
    ]) + "\n"


def _versions() -> str:
    from importlib.metadata import PackageNotFoundError, version
    out = []
    for pkg in ("toolc", "outlines-core", "xgrammar", "llguidance"):
        try:
            out.append(f"{pkg} {version(pkg)}")
        except PackageNotFoundError:
            pass
    return ", ".join(out)


if __name__ == "__main__":
    sys.exit(main())
