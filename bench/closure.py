"""What keeping arguments from spelling a format's tags costs (toolc/formats/closure.py).

For one format and tools file, compiles in one process, interleaved, ``--runs`` times each:

* ``open``: no closure (hermes only: its default, ``Hermes.closed_strings = False``);
* ``per-tool``: each tool's whole arguments intersected with ``Avoid(tags)`` (the construction
  before closure.py; one determinization and product per tool);
* ``bodies``: closure.py's, the string bodies intersected once each (hermes: in the grammar,
  as before the DFA product);
* ``dfa`` (hermes only): ``Hermes.closed_strings = True`` as the compiler runs it, the tags
  kept out of the calls on the built DFA (toolc.fsm.unspelled).

Prints the least time of each (seconds), the states and the artifact's bytes. Formats whose
markers Qwen3 lacks compile over Qwen3's vocabulary with the markers added (as the tests do).

    python bench/closure.py [--format hermes] [--runs 3] [schemas/tools80.json]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tools", nargs="?", default=os.path.join(ROOT, "schemas", "tools80.json"))
    ap.add_argument("--format", default="hermes")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()

    import toolc
    import toolc.formats.closure as closure
    from tag_helpers import MARKERS, QWEN, vocab_for
    import toolc.formats.hermes as hermes
    from toolc.formats.hermes import Hermes
    from toolc.schema.automata import intersect

    def per_tool(self, a, tool, fmt):
        return intersect(a, self._avoid) if self.tags else a

    modes = [("per-tool", per_tool, True), ("bodies", closure.Closer.close, True)]
    if args.format == "hermes":
        modes.insert(0, ("open", lambda self, a, tool, fmt: a, False))
        modes.append(("dfa", closure.Closer.close, True))
    on_dfa, counted = Hermes.unspelled_within, hermes.holds_counted
    vocab = vocab_for(args.format) if args.format in MARKERS else QWEN
    vocab.ordinary_bytes()
    extra = {"max_calls": 3} if args.format in ("kimi-k2", "kimi-k3", "cohere") else {}
    toolc.compile_tools(args.tools, vocab, format=args.format, **extra)     # warm the trie
    best: dict = {}
    with tempfile.TemporaryDirectory() as d:
        for _ in range(args.runs):
            for name, close, closed in modes:
                closure.Closer.close, Hermes.closed_strings = close, closed
                # every closed mode but "dfa" closes the grammar (as a counted length does)
                Hermes.unspelled_within = on_dfa if name == "dfa" else lambda self: None
                hermes.holds_counted = counted if name == "dfa" else lambda a: True
                t = time.perf_counter()
                art = toolc.compile_tools(args.tools, vocab, format=args.format, **extra)
                took = time.perf_counter() - t
                size = art.save(os.path.join(d, "a.toolc"))
                old = best.get(name)
                best[name] = (min(took, old[0]) if old else took, art.num_states, size)
    for name, (s, states, size) in best.items():
        print(f"{args.format:10} {name:9} {s:6.2f} s  {states:7,} states  {size:9,} bytes")


if __name__ == "__main__":
    main()
