"""``toolc parse`` at scale: MB of generated calls in every registered format, each parsed in a
fresh process, with its wall time and peak memory.

    python bench/parse_bench.py [--mb 10] [--shape many|one] [--cli] [FORMAT ...]

Every format of ``toolc formats`` (and ``custom``, a custom spec) is rendered here the way
it writes calls: the tag-per-parameter and JSON-framed families from their style tables
(:mod:`toolc.formats.tagstyle`, :mod:`toolc.formats.framedstyle`), so a new style of those
families is benched without code here; any other format needs a renderer in ``RENDER`` and
is reported as ``no renderer`` until it has one.

``--shape many`` (the default): as many copies of one small call as fill the size.
``--shape one``: one call whose ``items`` argument is a list of that many call arguments
(harmony, which holds one call per answer, is always benched this way).
``--cli``: run ``toolc parse`` itself (standard input, JSON on standard output, which goes
to /dev/null) instead of :func:`toolc.parse_tool_calls`.

Each child reports ``seconds`` (the parse alone, or the whole command with ``--cli``) and
``cpu_s`` (its CPU time, steadier than the wall clock on a loaded machine),
``peak_mb`` (the process's VmHWM: interpreter, imports, the text and the result) and
``base_mb`` (VmHWM before the text is read: the interpreter and ``import toolc``, no
numpy). The promise (docs/reliability.md): 10 MB of calls in every format parse in under
5 s and under 200 MB. Not a timed test (the machine is
shared); run it by hand and record the figures with the load average.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from toolc.formats import FORMATS  # noqa: E402  (standard library only)
from toolc.formats.framedstyle import STYLES as FRAMED  # noqa: E402
from toolc.formats.rules import string_only  # noqa: E402
from toolc.formats.tagstyle import STYLES as TAGGED  # noqa: E402

NAME = "get_weather"
ARGS = {"city": "Paris", "days": 3, "units": ["c", "f"], "opts": {"wind": True, "x": None}}
PROPS = {"city": {"type": "string"}, "days": {"type": "integer"}, "units": {"type": "array"},
         "opts": {"type": "object"}, "items": {"type": "array"}}
TOOLS = [{"type": "function", "function": {"name": NAME, "parameters": {
    "type": "object", "properties": PROPS}}}]
CUSTOM = {"name": "mine", "prefix": "<calls>", "call": "{name}::{arguments}", "separator": "|",
          "suffix": "</calls>", "trigger": "<calls>"}


def _js(v) -> str:
    return json.dumps(v, ensure_ascii=False)


def _objs(calls, key: str = "arguments") -> str:
    return ", ".join(f'{{"name": {_js(n)}, "{key}": {_js(a)}}}' for n, a in calls)


def _tagged(fmt: str, calls) -> str:
    st = TAGGED[fmt]

    def param(k, v):
        # a string is raw where its schema allows only strings, or where the value's type is
        # written in an attribute (kimi-k3's type="string")
        raw = string_only(PROPS.get(k, {})) or (st.attr == "type" and isinstance(v, str))
        kind = {str: "string", int: "number", list: "array", dict: "object"}.get(type(v))
        return (st.param_open + k + st.key_end + st.attr_text(raw, kind) + st.value_open
                + (v if raw else _js(v)) + st.close_of(k))

    text = st.block_open + st.call_sep.join(
        st.call_open + n + st.at(st.name_end, i) + "".join(param(k, v) for k, v in a.items())
        + st.call_close for i, (n, a) in enumerate(calls)) + st.block_close
    if fmt != "kimi-k3":
        return text
    # imported here: the format's module loads the compiler's side (numpy too), which the
    # children, measuring the parser's memory, must not import
    from toolc.formats.kimi_k3 import MESSAGE_END
    return text + MESSAGE_END


def _framed(fmt: str, calls) -> str:
    st = FRAMED[fmt]
    return st.block_open + st.call_sep.join(
        st.at(st.call_open, i) + n + st.at(st.name_end, i) + _js(a) + st.call_close
        for i, (n, a) in enumerate(calls)) + st.block_close


def _gemma(v) -> str:
    if isinstance(v, str):
        return f'<|"|>{v}<|"|>'
    if isinstance(v, dict):
        return "{" + ",".join(f"{k}:{_gemma(v[k])}" for k in sorted(v, key=str.lower)) + "}"
    if isinstance(v, list):
        return "[" + ",".join(_gemma(x) for x in v) + "]"
    return "None" if v is None else _js(v)


def _harmony(calls) -> str:
    if len(calls) != 1:
        raise ValueError("harmony holds one call per answer")
    (n, a), = calls
    return f"<|channel|>commentary to=functions.{n} <|constrain|>json<|message|>{_js(a)}<|call|>"


#: format -> calls [(name, args)] -> the text the model writes (no free content)
RENDER = {
    "hermes": lambda c: "\n".join(f'<tool_call>\n{{"name": {_js(n)}, "arguments": {_js(a)}}}'
                                  "\n</tool_call>" for n, a in c),
    "mistral": lambda c: "".join(f"[TOOL_CALLS]{n}[ARGS]{_js(a)}" for n, a in c),
    "phi4-mini": lambda c: f"<|tool_call|>[{_objs(c)}]<|/tool_call|>",
    "functools": lambda c: f"functools[{_objs(c)}]",
    "llama3-json": lambda c: "; ".join(f'{{"name": {_js(n)}, "parameters": {_js(a)}}}'
                                       for n, a in c),
    "json": lambda c: f"[{_objs(c)}]",
    "pythonic": lambda c: "[" + ", ".join(
        f"{n}(" + ", ".join(f"{k}={v!r}" for k, v in a.items()) + ")" for n, a in c) + "]",
    "tooldec": lambda c: "\n".join(f"<tool>{n}(" + ", ".join(repr(v) for v in a.values())
                                   + ")" for n, a in c),
    "custom": lambda c: "<calls>" + "|".join(f"{n}::{_js(a)}" for n, a in c) + "</calls>",
    "harmony": _harmony,
    "gemma4": lambda c: "".join(f"<|tool_call>call:{n}{_gemma(a)}<tool_call|>" for n, a in c),
}


def renderer(fmt: str):
    """The format's renderer, or None."""
    if fmt in RENDER:
        return RENDER[fmt]
    if fmt in TAGGED:
        return lambda c: _tagged(fmt, c)
    if fmt in FRAMED:
        return lambda c: _framed(fmt, c)
    return None


def all_formats() -> list[str]:
    return list(FORMATS) + ["custom"]


def document(fmt: str, size: int, shape: str = "many") -> str:
    """About ``size`` characters of calls in format ``fmt``."""
    render = renderer(fmt)
    if render is None:
        raise KeyError(f"no renderer for format {fmt!r}")
    if fmt == "harmony":
        shape = "one"
    if shape == "one":
        per = len(_js(ARGS)) + 2
        return render([(NAME, {"items": [ARGS] * max(1, size // per)})])
    call = (NAME, ARGS)
    per = (len(render([call] * 3)) - len(render([call]))) / 2     # a call and its separator
    return render([call] * max(1, int(size // per)))


def _hwm_mb() -> float:
    """This process's peak resident memory (VmHWM), in MB."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def child(fmt: str, path: str, cli: bool) -> None:
    from toolc.parse import parse_tool_calls
    base = _hwm_mb()
    spec = CUSTOM if fmt == "custom" else fmt
    if cli:
        from toolc.cli import main
        args = ["parse", "--tools", os.path.join(os.path.dirname(path), "tools.json")]
        args += ["--format-file", path + ".spec"] if fmt == "custom" else ["--format", fmt]
        t0, c0 = time.perf_counter(), time.process_time()
        with open(path, encoding="utf-8") as stdin, open(os.devnull, "w") as out, \
                contextlib.redirect_stdout(out):
            sys.stdin = stdin
            main([*args, "-"], standalone_mode=False)
        dt, cpu, calls = time.perf_counter() - t0, time.process_time() - c0, None
    else:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        t0, c0 = time.perf_counter(), time.process_time()
        out = parse_tool_calls(text, format=spec, tools=TOOLS)
        dt, cpu = time.perf_counter() - t0, time.process_time() - c0
        calls = len(out["tool_calls"])
    print(json.dumps({"format": fmt, "calls": calls, "seconds": round(dt, 2),
                      "cpu_s": round(cpu, 2), "peak_mb": round(_hwm_mb(), 1),
                      "base_mb": round(base, 1),
                      "mb": round(os.path.getsize(path) / 1e6, 1)}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("formats", nargs="*")
    ap.add_argument("--mb", type=float, default=10)
    ap.add_argument("--shape", choices=("many", "one"), default="many")
    ap.add_argument("--cli", action="store_true")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        return child(*a.child, a.cli)
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "tools.json"), "w") as fh:
            json.dump(TOOLS, fh)
        for fmt in a.formats or all_formats():
            if renderer(fmt) is None:
                print(json.dumps({"format": fmt, "error": "no renderer"}), flush=True)
                continue
            path = os.path.join(tmp, "calls.txt")
            with io.open(path, "w", encoding="utf-8") as fh:
                fh.write(document(fmt, int(a.mb * 1e6), a.shape))
            with open(path + ".spec", "w") as fh:
                json.dump(CUSTOM, fh)
            cmd = [sys.executable, __file__, "--child", fmt, path] + (["--cli"] if a.cli else [])
            r = subprocess.run(cmd, capture_output=True, text=True,
                               env=dict(os.environ, PYTHONPATH=ROOT))
            print(r.stdout.strip() or json.dumps({"format": fmt, "error":
                                                  r.stderr.strip()[-300:]}), flush=True)


if __name__ == "__main__":
    main()
