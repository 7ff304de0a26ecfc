"""Each built-in tokenizer: load time with a cold and a warm vocabulary cache, the first
``encode`` (which builds the tiktoken / sentencepiece / tokenizers encoder), and a compile of
schemas/weather.json in the format it pairs with (cold caches: the trie is built too).

Each alias runs in a fresh process with an empty cache directory; the machine is shared, so
read the figures as orders of magnitude.

    python bench/tokenizer_load.py [ALIAS ...]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

PAIRS = {"qwen": "hermes", "qwen3.6": "qwen3-coder", "deepseek": "json", "gpt-oss": "json",
         "llama3": "llama3-json", "llama4": "pythonic", "mistral": "mistral",
         "mistral-v3": "mistral"}

_ONE = r"""
import resource, sys, time
import toolc
from toolc.tokenizer import _CACHE, load_vocabulary
alias, fmt = sys.argv[1], sys.argv[2]
t = time.perf_counter(); v = load_vocabulary(alias); cold = time.perf_counter() - t
_CACHE.clear()
t = time.perf_counter(); v = load_vocabulary(alias); warm = time.perf_counter() - t
t = time.perf_counter(); v.encode("hello world"); enc = time.perf_counter() - t
t = time.perf_counter()
art = toolc.compile_tools("schemas/weather.json", v, format=fmt)
comp = time.perf_counter() - t
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
print(f"{alias:10s} {fmt:12s} {v.vocab_size:>8,} {cold:7.2f} {warm:7.2f} {enc:7.2f} "
      f"{comp:8.2f} {rss:6d}")
"""


def main(argv: list[str]) -> int:
    print(f"{'alias':10s} {'format':12s} {'ids':>8s} {'cold s':>7s} {'warm s':>7s} "
          f"{'enc s':>7s} {'compile':>8s} {'MB':>6s}")
    for alias in argv or list(PAIRS):
        with tempfile.TemporaryDirectory() as cache:
            env = {**os.environ, "TOOLC_CACHE_DIR": cache}
            subprocess.run([sys.executable, "-c", _ONE, alias, PAIRS[alias]], env=env,
                           check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
