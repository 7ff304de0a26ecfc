"""``toolc parse`` at scale: MB of generated calls in every format, each parsed in a fresh
process, with its wall time and peak memory (ru_maxrss, the interpreter included).

    python bench/parse_bench.py [--mb 10] [FORMAT ...]

The promise (docs/reliability.md): 10 MB of calls in every format parse in under 5 s and
under 200 MB. Not a timed test (the machine is shared); run it by hand and record the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

ARGS = {"city": "Paris", "days": 3, "units": ["c", "f"], "opts": {"wind": True, "x": None}}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"},
                                     "units": {"type": "array"}, "opts": {"type": "object"}}}}}]
CUSTOM = {"name": "mine", "prefix": "<calls>", "call": "{name}::{arguments}", "separator": "|",
          "suffix": "</calls>", "trigger": "<calls>"}


def _py(v) -> str:
    return repr(v)


def one_call(fmt: str) -> str:
    a = json.dumps(ARGS)
    if fmt == "hermes":
        return f'<tool_call>\n{{"name": "get_weather", "arguments": {a}}}\n</tool_call>'
    if fmt == "mistral":
        return f"[TOOL_CALLS]get_weather[ARGS]{a}"
    if fmt == "qwen3-coder":
        params = "".join(f"<parameter={k}>\n{v if isinstance(v, str) else json.dumps(v)}\n"
                         "</parameter>\n" for k, v in ARGS.items())
        return f"<tool_call>\n<function=get_weather>\n{params}</function>\n</tool_call>"
    if fmt == "pythonic":
        return "get_weather(" + ", ".join(f"{k}={_py(v)}" for k, v in ARGS.items()) + ")"
    if fmt == "tooldec":
        return "<tool>get_weather(" + ", ".join(_py(v) for v in ARGS.values()) + ")"
    if fmt == "custom":
        return f"get_weather::{a}"
    key = "parameters" if fmt == "llama3-json" else "arguments"
    return f'{{"name": "get_weather", "{key}": {a}}}'


def document(fmt: str, size: int) -> str:
    call = one_call(fmt)
    n = max(1, size // (len(call) + 2))
    joins = {"hermes": "\n", "mistral": "", "qwen3-coder": "\n", "pythonic": ", ",
             "tooldec": "\n", "custom": "|", "json": ", ", "functools": ", ",
             "phi4-mini": ", ", "llama3-json": "; "}
    body = joins[fmt].join([call] * n)
    if fmt == "pythonic" or fmt == "json":
        return f"[{body}]"
    if fmt == "functools":
        return f"functools[{body}]"
    if fmt == "phi4-mini":
        return f"<|tool_call|>[{body}]<|/tool_call|>"
    if fmt == "custom":
        return f"<calls>{body}</calls>"
    return body


def child(fmt: str, path: str) -> None:
    from toolc.parse import parse_tool_calls
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    t0 = time.perf_counter()
    out = parse_tool_calls(text, format=CUSTOM if fmt == "custom" else fmt, tools=TOOLS)
    dt = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"format": fmt, "calls": len(out["tool_calls"]), "seconds": round(dt, 2),
                      "peak_mb": round(peak, 1), "mb": round(len(text) / 1e6, 1)}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("formats", nargs="*")
    ap.add_argument("--mb", type=float, default=10)
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        return child(*a.child)
    fmts = a.formats or ["hermes", "mistral", "qwen3-coder", "custom", "pythonic", "tooldec",
                         "json", "functools", "phi4-mini", "llama3-json"]
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in fmts:
            path = os.path.join(tmp, "calls.txt")
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(document(fmt, int(a.mb * 1e6)))
            r = subprocess.run([sys.executable, __file__, "--child", fmt, path],
                               capture_output=True, text=True, env=dict(os.environ,
                                                                        PYTHONPATH=ROOT))
            print(r.stdout.strip() or f"{fmt}: failed: {r.stderr.strip()[-300:]}", flush=True)


if __name__ == "__main__":
    main()
