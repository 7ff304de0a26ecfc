"""The JSON-Schema-Test-Suite tallies: per suite and ``--additional-properties`` mode, how
many groups toolc compiles exactly, compiles with a valid instance rejected (the groups the
exclusions of docs/json-schema.md must list), and refuses; with ``--refused``, each refused
group with its file, pointer and message (the classification table of docs/json-schema.md is
made from it).

Example: PYTHONPATH=$PWD python bench/suite_tally.py --refused
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from test_json_schema_suite import SUITE_FILES, accepts, compiled, fetch_suite  # noqa: E402
from test_json_schema_suite_drafts import DRAFT7, prepared  # noqa: E402
from toolc.errors import ToolcError  # noqa: E402

RUNS = [("2020-12", "closed"), ("2020-12", "schema"), ("draft 7", "closed")]


def tally(suite: str, mode: str) -> tuple[dict, list]:
    draft = "draft2020-12" if suite == "2020-12" else "draft7"
    files = SUITE_FILES if suite == "2020-12" else DRAFT7
    counts = {"exact": 0, "listed": 0, "refused": 0, "unsound": 0}
    refused = []
    for name in files:
        for g in json.loads((fetch_suite(draft) / f"{name}.json").read_text("utf-8")):
            schema = g["schema"] if suite == "2020-12" else prepared(g["schema"], "draft7")
            if schema is None:
                continue        # the keyword pass dropped a part: not counted
            dfa = compiled(schema, mode)
            if isinstance(dfa, ToolcError):
                counts["refused"] += 1
                refused.append((name, g["description"], dfa.pointer, dfa.message))
                continue
            got = [(accepts(dfa, t["data"]), t["valid"]) for t in g["tests"]]
            if any(ok and not valid for ok, valid in got):
                counts["unsound"] += 1
            elif all(ok == valid for ok, valid in got):
                counts["exact"] += 1
            else:
                counts["listed"] += 1
    return counts, refused


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--refused", action="store_true", help="list the refused groups")
    args = ap.parse_args(argv)
    for suite, mode in RUNS:
        counts, refused = tally(suite, mode)
        print(f"{suite} {mode}: {counts['exact']} / {counts['listed']} / {counts['refused']} "
              f"exact / listed / refused, {counts['unsound']} unsound")
        if args.refused:
            for name, desc, ptr, msg in refused:
                print(f"  {name}.json | {desc} | {ptr} | {msg}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
