"""Load an artifact and walk a real Qwen3 tool call through it, token by token.

A runtime script: it imports only ``toolc`` (numpy + msgpack). The call's token ids were
produced once by Qwen3's tokenizer and are spelled out below, so no tokenizer is needed here.

    python examples/walk.py artifacts/weather.toolc
"""

from __future__ import annotations

import sys
import time

import toolc

# '<tool_call>\n{"name": "get_current_weather", "arguments": {"city": "Paris", "unit":
# "celsius"}}\n</tool_call><|im_end|>' as Qwen3 tokenizes it.
CALL = [151657, 198, 4913, 606, 788, 330, 455, 11080, 69364, 497, 330, 16370, 788, 5212,
        8926, 788, 330, 59604, 497, 330, 3843, 788, 330, 66, 40247, 95642, 151658, 151645]


def main(path: str) -> int:
    t0 = time.perf_counter()
    art = toolc.load(path)
    load_ms = (time.perf_counter() - t0) * 1e3
    print(f"loaded {art} in {load_ms:.1f} ms")
    m = art.matcher()
    for i, t in enumerate(CALL):
        allowed = m.allowed_token_ids()
        forced = m.forced_tokens()
        note = f" forced={forced[:4]}" if forced else ""
        if not m.accepts(t):
            print(f"step {i}: token {t} rejected in state {m.state} "
                  f"({len(allowed)} tokens allowed)")
            return 1
        m.advance(t)
        print(f"step {i:2d}: token {t:6d} ok -> state {m.state:4d}, "
              f"{len(allowed):6d} tokens were allowed{note}")
    print("terminated" if m.is_terminated() else "not terminated")
    return 0 if m.is_terminated() else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "artifacts/weather.toolc"))
