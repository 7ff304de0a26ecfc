"""``toolc formats``: every registered call format with its models, default tokenizer, atomic
markers and what proves its bytes (a command of its own module; ``toolc.cli`` adds it)."""

from __future__ import annotations

import json

import click

from .formats import FORMATS
from .pairing import pairing


def format_rows() -> list[dict]:
    """One row per registered format, in registry order."""
    rows = []
    for name, info in FORMATS.items():
        p = pairing(name)
        rows.append({"name": name, "models": info.models,
                     "tokenizer": p.tokenizer, "atomic_markers": list(p.atomic),
                     "proof": p.proof, "proved_by": p.proved_by})
    return rows


@click.command("formats")
@click.option("--json", "as_json", is_flag=True, help="Print the table as a JSON list.")
def formats(as_json):
    """List every call format: its models, the tokenizer `compile --format F` uses when
    --tokenizer is not given, the markers that must be atomic tokens of that tokenizer, and
    what its bytes are checked against (renderer, vendor parser or facts sheet), and
    exactly which one.

    A tokenizer of "-" means no package registry ships the family's tokenizer: pass
    --tokenizer PATH (toolc then compiles with Qwen3's when the format has no atomic markers).

    \b
    Example:
      toolc formats
      toolc formats --json
    """
    rows = format_rows()
    if as_json:
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    header = ("format", "tokenizer", "proof", "atomic markers", "models")
    table = [(r["name"], r["tokenizer"] or "-", f'{r["proof"]}: {r["proved_by"]}',
              " ".join(r["atomic_markers"]) or "-", r["models"]) for r in rows]
    widths = [max(len(str(x[i])) for x in table + [header]) for i in range(4)]
    for line in [header] + table:
        click.echo("  ".join(str(c).ljust(w) for c, w in zip(line, widths)) + "  " + line[4])
