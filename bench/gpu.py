"""toolc on a CUDA GPU: what the mask costs beside a model's forward pass.

Three figures, each a median (and p99) over timed repetitions after warm-up, with
``torch.cuda.synchronize()`` around every timed step so that GPU work is counted:

* **apply**: ``apply_token_bitmask_inplace`` on CUDA logits of Qwen3's 151,936 columns, for
  batches of 1, 32 and 256 rows, fp32 and bf16, the bitmask given as a numpy array (copied to
  the GPU each call, as an engine that fills it on the host does) or already on the GPU, by
  the Triton kernel and by the torch path;
* **step**: one serving step's whole mask overhead for a batch: fill the rows of a host
  bitmask from the matchers (``fill_next_token_bitmask``, one vectorized gather), copy it to
  the GPU, apply it, and advance every matcher by the token sampled on the GPU;
* **generation**: a randomly initialised Qwen3-architecture model (``--hidden``, ``--layers``,
  bf16; no weights downloaded) decoding with its KV cache, batch 1 and ``--batch``, with and
  without toolc: milliseconds per step and tokens per second, and the overhead as a ratio.

    python bench/gpu.py --json results.json

Needs torch with CUDA and transformers; the artifact is compiled here from ``schemas/``
(``--tools``), so the compiler's dependencies must be importable.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

VOCAB = 151936


def _stats(samples: list[float]) -> dict:
    a = np.asarray(samples) * 1e6
    return {"p50_us": round(float(np.median(a)), 1),
            "p99_us": round(float(np.percentile(a, 99)), 1), "n": len(samples)}


def _timed(fn, reps: int, warm: int = 10) -> dict:
    import torch
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        out.append(time.perf_counter() - t0)
    return _stats(out)


def bench_apply(reps: int) -> list[dict]:
    import torch

    import toolc.integrations.torch as helper
    rng = np.random.default_rng(0)
    rows = []
    paths = ["triton", "torch"] if helper._kernel() is not None else ["torch"]
    for batch in (1, 32, 256):
        host = rng.integers(-2**31, 2**31, size=(batch, -(-VOCAB // 32)),
                            dtype=np.int64).astype(np.int32)
        dev = torch.from_numpy(host).cuda()
        for dtype in (torch.float32, torch.bfloat16):
            logits = torch.randn(batch, VOCAB, device="cuda", dtype=dtype)
            for where, mask in (("host", host), ("gpu", dev)):
                for path in paths:
                    helper.USE_TRITON = path == "triton"
                    r = _timed(lambda: helper.apply_token_bitmask_inplace(logits, mask), reps)
                    rows.append({"batch": batch, "dtype": str(dtype).split(".")[1],
                                 "bitmask": where, "path": path, **r})
    helper.USE_TRITON = True
    return rows


def _walkers(art, batch: int, rng):
    """``batch`` matchers, each advanced some random valid steps into the artifact."""
    ms = []
    for i in range(batch):
        m = art.matcher()
        for _ in range(int(rng.integers(0, 40))):
            ids = m.allowed_token_ids()
            if m.is_terminated() or not len(ids):
                break
            m.advance(int(rng.choice(ids)))
        ms.append(m)
    return ms


def bench_step(art, reps: int) -> list[dict]:
    """fill + copy + apply + sample on GPU + advance, for a batch of matchers."""
    import torch

    from toolc.integrations.torch import apply_token_bitmask_inplace
    from toolc.runtime import fill_next_token_bitmask
    rng = np.random.default_rng(1)
    rows = []
    for batch in (1, 32, 256):
        words = -(-art.logits_size // 32)
        host = torch.zeros((batch, words), dtype=torch.int32).pin_memory()
        host_np = host.numpy()
        logits = torch.randn(batch, art.logits_size, device="cuda")
        state = {"ms": _walkers(art, batch, rng)}
        fill_t, apply_t, advance_t, total_t = [], [], [], []

        def one():
            ms = state["ms"]
            t0 = time.perf_counter()
            fill_next_token_bitmask(ms, host_np)
            t1 = time.perf_counter()
            apply_token_bitmask_inplace(logits, host.to("cuda", non_blocking=True))
            toks = torch.argmax(logits, dim=-1).tolist()      # the sampled tokens, on the host
            t2 = time.perf_counter()
            for m, t in zip(ms, toks):
                if m.is_terminated() or not m.accepts(t):
                    continue
                m.advance(t)
            t3 = time.perf_counter()
            fill_t.append(t1 - t0)
            apply_t.append(t2 - t1)
            advance_t.append(t3 - t2)
            total_t.append(t3 - t0)
            logits.normal_()
            if sum(m.is_terminated() for m in ms) > batch // 2:
                state["ms"] = _walkers(art, batch, rng)

        for _ in range(10):
            one()
        for lst in (fill_t, apply_t, advance_t, total_t):
            lst.clear()
        for _ in range(reps):
            one()
        rows.append({"batch": batch, "fill": _stats(fill_t),
                     "copy_apply_sample": _stats(apply_t), "advance": _stats(advance_t),
                     "total": _stats(total_t)})
    return rows


def _decode(model, art, prompt: list[int], rows: int, with_toolc: bool, steps: int) -> list:
    """Seconds per decoding step of ``rows`` sequences, with or without toolc's mask."""
    import torch

    from toolc.integrations.torch import apply_token_bitmask_inplace
    from toolc.runtime import fill_next_token_bitmask
    gen = torch.Generator(device="cuda").manual_seed(0)
    host = torch.zeros((rows, -(-art.logits_size // 32)), dtype=torch.int32).pin_memory()
    ms = [art.matcher() for _ in range(rows)]
    times = []
    with torch.inference_mode():
        ids = torch.tensor([prompt] * rows, device="cuda")
        res = model(input_ids=ids, use_cache=True, logits_to_keep=1)
        past, logits = res.past_key_values, res.logits[:, -1, :].float()
        torch.cuda.synchronize()
        for _ in range(steps):
            t0 = time.perf_counter()
            if with_toolc:
                for i, m in enumerate(ms):
                    if m.is_terminated():
                        ms[i] = art.matcher()      # start a new answer in place
                fill_next_token_bitmask(ms, host.numpy())
                apply_token_bitmask_inplace(logits, host.to("cuda", non_blocking=True))
            noise = torch.rand(logits.shape, device="cuda", generator=gen).clamp_(min=1e-20)
            nxt = torch.argmax(logits - torch.log(-torch.log(noise)), dim=-1)
            toks = nxt.tolist()
            if with_toolc:
                for m, t in zip(ms, toks):
                    m.advance(t)
            res = model(input_ids=nxt[:, None], past_key_values=past, use_cache=True)
            past, logits = res.past_key_values, res.logits[:, -1, :].float()
            torch.cuda.synchronize()
            times.append(time.perf_counter() - t0)
    return times[5:]


def bench_generation(art, hidden: int, layers: int, batch: int, steps: int) -> list[dict]:
    import torch
    import transformers
    torch.manual_seed(0)
    cfg = transformers.Qwen3Config(
        vocab_size=VOCAB, hidden_size=hidden, intermediate_size=hidden * 3,
        num_hidden_layers=layers, num_attention_heads=max(1, hidden // 128),
        num_key_value_heads=max(1, hidden // 512), head_dim=128,
        max_position_embeddings=4096, tie_word_embeddings=True)
    model = transformers.Qwen3ForCausalLM(cfg).to("cuda", dtype=torch.bfloat16).eval()
    params = sum(p.numel() for p in model.parameters())
    prompt = [151644, 872, 198, 9707, 151645, 198, 151644, 77091, 198]
    out = []
    # each configuration runs in rounds (without, with, without, with, ...); the first round
    # pays for kernel selection and clock ramp-up per shape and is dropped
    for rows in (1, batch):
        kept = {False: [], True: []}
        for rnd in range(3):
            for with_toolc in (False, True):
                times = _decode(model, art, prompt, rows, with_toolc, steps)
                if rnd:
                    kept[with_toolc].extend(times)
        for with_toolc, times in kept.items():
            ms_step = float(np.median(times)) * 1e3
            out.append({"batch": rows, "toolc": with_toolc, "params": params,
                        "step_ms_p50": round(ms_step, 3),
                        "step_ms_p99": round(float(np.percentile(times, 99)) * 1e3, 3),
                        "tokens_per_s": round(rows / (ms_step / 1e3), 1)})
        base, with_ = (o["step_ms_p50"] for o in out[-2:])
        out[-1]["overhead_ratio"] = round(with_ / base, 3)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tools", default=str(ROOT / "schemas" / "tools10.json"))
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--hidden", type=int, default=1024)
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--steps", type=int, default=128)
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args(argv)
    import torch
    if not torch.cuda.is_available():
        print("error: no CUDA device here", file=sys.stderr)
        return 1
    import toolc
    with open(args.tools, encoding="utf-8") as fh:
        tools = json.load(fh)
    art = toolc.compile_tools(tools)
    report = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
              "python": platform.python_version(), "tools": Path(args.tools).name,
              "apply": bench_apply(args.reps), "step": bench_step(art, args.reps),
              "generation": bench_generation(art, args.hidden, args.layers, args.batch,
                                             args.steps)}
    text = json.dumps(report, indent=1)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
