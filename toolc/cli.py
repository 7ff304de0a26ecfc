"""The ``toolc`` command: a thin click layer over the library.

Library errors become one line on stderr with exit code 1; usage errors exit with 2.
"""

from __future__ import annotations

import json
import os
import sys
import time

import click

from . import __version__
from .errors import ToolcError


def _fail(e: Exception) -> click.ClickException:
    return click.ClickException(str(e))


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="toolc")
def main() -> None:
    """Compile tool definitions into token masks for constrained decoding.

    \b
    Example:
      toolc compile schemas/weather.json --tokenizer qwen -o artifacts/weather.toolc
      toolc inspect artifacts/weather.toolc
    """


def tokenizer_option(f):
    return click.option(
        "--tokenizer", "-t", default="qwen", show_default=True, metavar="TOKENIZER",
        help="A built-in alias (qwen, qwen3), a tokenizer.json, a directory holding one, "
             "or a hub id (needs network access).")(f)


def grammar_options(f):
    f = click.option("--max-calls", type=click.IntRange(min=1), default=None,
                     help="With --parallel: at most this many calls.")(f)
    f = click.option("--parallel/--no-parallel", default=True, show_default=True,
                     help="Allow several calls in one answer.")(f)
    f = click.option("--tool-choice", default="auto", show_default=True, metavar="MODE",
                     help="auto (free text or calls), required (calls only), none (free text "
                          "only), or a tool's name (only that tool).")(f)
    f = click.option("--format", "format_", default="hermes", show_default=True,
                     type=click.Choice(["hermes"]),
                     help="The model family's native call format.")(f)
    f = click.option("--max-depth", type=click.IntRange(min=0), default=4, show_default=True,
                     help="Nesting bound for free-form JSON values.")(f)
    f = click.option("--max-states", type=click.IntRange(min=1), default=200_000,
                     show_default=True, help="Refuse automata larger than this.")(f)
    return f


@main.command()
@click.argument("tools", type=click.Path(dir_okay=False))
@tokenizer_option
@grammar_options
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help="Where to write the artifact [default: artifacts/<stem>.toolc].")
@click.option("--record-time", is_flag=True,
              help="Record the compile seconds in the header (the file is then no longer "
                   "byte-identical between runs).")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar and no summary.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=300,
              show_default=True, metavar="SECONDS",
              help="Give up (exit 1, nothing written) after this many seconds.")
def compile(tools, tokenizer, format_, tool_choice, parallel, max_calls, max_depth, max_states,
            output, record_time, quiet, timeout):
    """Compile a tools file (OpenAI tools JSON) into an artifact.

    \b
    Example:
      toolc compile schemas/weather.json --tokenizer qwen -o artifacts/weather.toolc
      toolc compile tools.json --tool-choice required --no-parallel
    """
    from .compiler import compile_tools

    if output is None:
        stem = os.path.splitext(os.path.basename(tools))[0]
        output = os.path.join("artifacts", f"{stem}.toolc")
    t0 = time.perf_counter()
    bar = None

    def progress(level, total):
        nonlocal bar
        if quiet or not sys.stderr.isatty():
            return
        if bar is None:
            bar = click.progressbar(length=total, label="walking the vocabulary",
                                    file=sys.stderr)
            bar.__enter__()
        bar.update(level - bar.pos)

    try:
        art = compile_tools(tools, tokenizer, format=format_, tool_choice=tool_choice,
                            parallel=parallel, max_calls=max_calls, max_depth=max_depth,
                            max_states=max_states, record_time=record_time, progress=progress,
                            timeout=timeout)
    except (ToolcError, ValueError) as e:
        raise _fail(e) from None
    finally:
        if bar is not None:
            bar.__exit__(None, None, None)
    try:
        size = art.save(output)
    except OSError as e:
        raise click.ClickException(f"{output}: cannot write the artifact: "
                                   f"{e.strerror or e}") from None
    if not quiet:
        click.echo(f"{output}: {len(art.tool_names)} tools, {art.num_states:,} states, "
                   f"{art.num_mask_rows:,} mask rows, {size:,} bytes, "
                   f"{time.perf_counter() - t0:.2f} s", err=True)


@main.command()
@click.argument("artifact", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the header as JSON.")
def inspect(artifact, as_json):
    """Show an artifact's header and sizes.

    \b
    Example:
      toolc inspect artifacts/weather.toolc
      toolc inspect artifacts/weather.toolc --json
    """
    from .runtime import load

    try:
        art = load(artifact)
    except ToolcError as e:
        raise _fail(e) from None
    info = dict(art.header)
    info["file_bytes"] = os.path.getsize(artifact)
    info["mask_rows"] = art.num_mask_rows
    if as_json:
        click.echo(json.dumps(info, indent=2, ensure_ascii=False))
        return
    width = max(len(k) for k in info)
    for k, v in info.items():
        if isinstance(v, (dict, list)):
            v = json.dumps(v, ensure_ascii=False)
        click.echo(f"{k:<{width}}  {v}")


if __name__ == "__main__":  # pragma: no cover
    main()
