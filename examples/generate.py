"""Generate tool calls with a causal LM (transformers) under a toolc artifact.

A runtime script: it loads an artifact (toolc's runtime, numpy + msgpack) and a model with
transformers, generates with :class:`toolc.integrations.transformers.ToolcLogitsProcessor`,
parses the calls and prints them as OpenAI ``tool_calls`` JSON.

    python examples/generate.py artifacts/weather.toolc --model PATH_OR_HUB_ID \\
        --tools schemas/weather.json --prompt "What's the weather in Paris?"

The loop is written out (rather than ``model.generate``) for two things ``generate`` lacks:

* jump-forward: when ``Matcher.forced_tokens()`` gives more than one token, they are appended
  without sampling and fed to the model in one forward pass; the script reports how many
  model calls that saved;
* a length budget that always ends with EOS: near the end of ``--max-new-tokens`` only tokens
  that can still reach EOS in time are allowed (``toolc.debug.explore.Finisher``); the script
  reports how many steps that narrowed.

``--no-toolc`` runs the same loop without any mask, for comparison.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass, field

import torch

import toolc
from toolc.debug.explore import Finisher
from toolc.integrations.torch import apply_token_bitmask_inplace
from toolc.integrations.transformers import ToolcLogitsProcessor
from toolc.parse import ParseError, parse_tool_calls


@dataclass
class Generation:
    tokens: list[int]
    text: str
    ended_with_eos: bool
    model_calls: int = 0          # forward passes after the prompt (one per step, even when
                                  # jump-forward feeds several tokens at once)
    saved_calls: int = 0          # forward passes jump-forward made unnecessary
    forced_tokens: int = 0        # tokens appended by jump-forward
    budget_steps: int = 0         # steps the length budget narrowed
    seconds: float = 0.0
    parsed: dict | None = None
    error: str | None = None      # why the output is not a valid answer, if it is not
    extra: dict = field(default_factory=dict)


class Generator:
    """One model + tokenizer; ``run`` generates one answer for a prompt."""

    def __init__(self, model, tokenizer, eos_token_ids):
        self.model = model.eval()
        self.device = next(model.parameters()).device   # the ids live where the model does
        self.tokenizer = tokenizer
        self.eos = set(int(t) for t in eos_token_ids)

    def prompt_ids(self, messages, tools=None) -> list[int]:
        ids = self.tokenizer.apply_chat_template(messages, tools=tools, add_generation_prompt=True,
                                                 tokenize=True)
        if isinstance(ids, dict) or hasattr(ids, "keys"):
            ids = ids["input_ids"]
        return [int(t) for t in ids]

    def run(self, prompt: list[int], artifact=None, *, max_new_tokens: int = 64, seed: int = 0,
            temperature: float = 1.0, jump_forward: bool = True) -> Generation:
        """One answer for ``prompt`` (token ids); ``artifact=None`` generates unconstrained."""
        return self.run_batch(prompt, artifact, seeds=[seed], max_new_tokens=max_new_tokens,
                              temperature=temperature, jump_forward=jump_forward)[0]

    @torch.inference_mode()
    def run_batch(self, prompt: list[int], artifact=None, *, seeds: list[int],
                  max_new_tokens: int = 64, temperature: float = 1.0,
                  jump_forward: bool = True) -> list[Generation]:
        """One answer per seed for the same prompt, generated as one batch (a row per seed,
        each sampled with its own ``torch.Generator(seed)``). Jump-forward applies to a batch
        of one only: rows of a batch advance in lockstep."""
        t0 = time.perf_counter()
        rows = len(seeds)
        gens = [torch.Generator().manual_seed(s) for s in seeds]
        proc = ToolcLogitsProcessor(artifact, prompt_length=len(prompt),
                                    tokenizer=self.tokenizer) if artifact else None
        finisher = Finisher(artifact) if artifact else None
        ids = torch.tensor([prompt] * rows, dtype=torch.long, device=self.device)
        out = self.model(input_ids=ids, use_cache=True, logits_to_keep=1)
        past, logits = out.past_key_values, out.logits[:, -1, :].float()
        new: list[list[int]] = [[] for _ in range(rows)]
        done = [False] * rows
        stats = [dict(calls=0, saved=0, forced=0, budget=0) for _ in range(rows)]
        pad = next(iter(self.eos))
        steps = 0
        while steps < max_new_tokens and not all(done):
            step: list[list[int]]
            if proc is not None:
                scores = proc(ids, logits)
                ms = proc.matchers
                forced = ms[0].forced_tokens() if (jump_forward and rows == 1) else []
                forced = forced[:max_new_tokens - steps]
                if len(forced) > 1:
                    step = [forced]
                    stats[0]["forced"] += len(forced)
                    stats[0]["saved"] += len(forced) - 1
                else:
                    for i, m in enumerate(ms):
                        if done[i]:
                            continue
                        limit = finisher.mask(m, max_new_tokens - steps)
                        if limit is not None:
                            stats[i]["budget"] += 1
                            apply_token_bitmask_inplace(scores, limit[None, :], indices=[i])
                    step = [[self._sample(scores[i], temperature, gens[i])] for i in range(rows)]
            else:
                step = [[self._sample(logits[i], temperature, gens[i])] for i in range(rows)]
            for i in range(rows):
                if done[i]:
                    step[i] = [pad] * len(step[i])
                    continue
                new[i].extend(step[i])
                if step[i][-1] in self.eos:
                    done[i] = True
            steps += len(step[0])
            step_ids = torch.tensor(step, dtype=torch.long, device=self.device)
            ids = torch.cat([ids, step_ids], dim=1)
            if all(done) or steps >= max_new_tokens:
                break
            for i in range(rows):
                if not done[i]:
                    stats[i]["calls"] += 1
            out = self.model(input_ids=step_ids, past_key_values=past, use_cache=True)
            past, logits = out.past_key_values, out.logits[:, -1, :].float()
        if proc is not None:
            proc(ids, logits)       # let the matchers consume the last tokens (EOS)
        seconds = time.perf_counter() - t0
        res = []
        for i in range(rows):
            text = self.tokenizer.decode(new[i], skip_special_tokens=False)
            st = stats[i]
            g = Generation(new[i], text, done[i], st["calls"], st["saved"], st["forced"],
                           st["budget"], seconds / rows)
            if proc is not None:
                g.extra["terminated"] = proc.matchers[i].is_terminated()
            res.append(g)
        return res

    @staticmethod
    def _sample(scores: torch.Tensor, temperature: float, gen: torch.Generator) -> int:
        """Greedy at temperature 0; otherwise a draw from softmax(scores / temperature), taken
        with the Gumbel-max trick (argmax of scores/T plus Gumbel noise), which is exact and
        several times faster than torch.multinomial over 151,936 logits on CPU. The noise is
        drawn on the CPU from the row's seeded generator, then moved to the scores' device, so a
        seed draws the same noise on every device."""
        if temperature <= 0:
            return int(torch.argmax(scores))
        u = torch.rand(scores.shape[-1], generator=gen).clamp_(min=1e-20).to(scores.device)
        return int(torch.argmax(scores / temperature - torch.log(-torch.log(u))))


def check(g: Generation, tools: list[dict], require_call: bool = False) -> Generation:
    """Parse the answer and validate each call against its tool's schema; set ``g.error``."""
    import jsonschema
    schemas = {t["function"]["name"]: t["function"].get("parameters", {}) for t in tools}
    if not g.ended_with_eos:
        g.error = "no EOS within the length budget"
        return g
    try:
        g.parsed = parse_tool_calls(g.text)
    except ParseError as e:
        g.error = f"parse: {e}"
        return g
    if require_call and not g.parsed["tool_calls"]:
        g.error = "no tool call"
    for call in g.parsed["parsed"]:
        if call["name"] not in schemas:
            g.error = f"unknown tool {call['name']!r}"
        else:
            try:
                jsonschema.validate(call["arguments"], schemas[call["name"]])
            except jsonschema.ValidationError as e:
                g.error = f"tool {call['name']!r}: {e.message}"
    return g


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("artifact")
    ap.add_argument("--model", required=True, help="a local model directory or a hub id")
    ap.add_argument("--tools", help="the tools file (put into the prompt, and used to validate)")
    ap.add_argument("--prompt", default="What's the weather like in Paris today?")
    ap.add_argument("--max-new-tokens", type=int, default=96)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--temperature", type=float, default=1.0)
    ap.add_argument("--no-toolc", action="store_true", help="generate without the artifact")
    ap.add_argument("--no-jump-forward", action="store_true")
    ap.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    ap.add_argument("--device", default="cpu", help="where the model runs: cpu, cuda, cuda:1...")
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    try:                                            # before the model loads: one clear line
        device = torch.device(args.device)
        if device.type == "cuda" and not torch.cuda.is_available():
            raise RuntimeError("this torch sees no CUDA device")
    except RuntimeError as e:
        print(f"error: --device {args.device}: {str(e).splitlines()[0]}", file=sys.stderr)
        return 2

    from transformers import AutoModelForCausalLM, AutoTokenizer
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float32).to(device)
    try:
        art = toolc.load(args.artifact, tokenizer=tokenizer)   # refuses another vocabulary
    except (toolc.ArtifactError, TypeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    tools = None
    if args.tools:
        with open(args.tools, encoding="utf-8") as fh:
            tools = json.load(fh)
        tools = tools["tools"] if isinstance(tools, dict) else tools
    g = Generator(model, tokenizer, art.eos_token_ids)
    prompt = g.prompt_ids([{"role": "user", "content": args.prompt}], tools=tools)
    res = g.run(prompt, None if args.no_toolc else art, max_new_tokens=args.max_new_tokens,
                seed=args.seed, temperature=args.temperature,
                jump_forward=not args.no_jump_forward)
    if tools is not None:
        check(res, tools)
    else:
        try:
            res.parsed = parse_tool_calls(res.text)
        except ParseError as e:
            res.error = f"parse: {e}"
    report = {
        "content": res.parsed["content"] if res.parsed else None,
        "tool_calls": res.parsed["tool_calls"] if res.parsed else [],
        "valid": res.error is None, "error": res.error,
        "tokens": len(res.tokens), "ended_with_eos": res.ended_with_eos,
        "model_calls": res.model_calls, "model_calls_saved_by_jump_forward": res.saved_calls,
        "budget_narrowed_steps": res.budget_steps, "seconds": round(res.seconds, 3),
    }
    print(json.dumps(report, indent=2, ensure_ascii=False))
    return 0 if res.error is None else 1


if __name__ == "__main__":
    sys.exit(main())
