"""The ``toolc`` command: a thin click layer over the library.

Library errors become one line on stderr with exit code 1; usage errors exit with 2.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import time

import click

from . import __version__
from .crash import bug_line, one_line
from .outputs import output_paths, write_parse_result
from .errors import InvalidOptionError, ToolcError
from .cli_formats import formats as formats_command
from .formats import NAMES as FORMAT_NAMES
from .options import OBJECT_OPTS, WHITESPACE_MODES, CompileOptions, object_flags, use_cli_spelling


def _fail(e: Exception) -> click.ClickException:
    return click.ClickException(one_line(str(e)))


class _Main(click.Group):
    """The command group, with the catch-all at its boundary: a ToolcError that a command
    did not catch becomes its one line; any other exception (a bug) one line that says so,
    naming the file, tool and pointer being worked on (:mod:`toolc.crash`); exit code 1."""

    def parse_args(self, ctx, args):
        ctx.meta["toolc.argv"] = list(args)
        return super().parse_args(ctx, args)

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit,
                click.exceptions.Abort, KeyboardInterrupt, SystemExit):
            raise
        except ToolcError as e:
            raise _fail(e) from None
        except Exception as e:
            raise click.ClickException(bug_line(e, _input_of(ctx))) from None


def _input_of(ctx) -> str | None:
    """The first file the command was given (for the catch-all's line)."""
    args = [a for a in ctx.meta.get("toolc.argv", []) if not a.startswith("-")]
    return args[1] if len(args) > 1 else None


def _options(options: CompileOptions | None = None, **kwargs) -> CompileOptions:
    """The one CompileOptions value of a command (``options`` with ``kwargs`` replacing
    fields); a bad value is a usage error naming the flag (the library's InvalidOptionError
    names the keyword argument)."""
    try:
        return CompileOptions.from_kwargs(options, **kwargs)
    except InvalidOptionError as e:
        raise click.BadParameter(e.message, param_hint="--" + e.option.replace("_", "-")) \
            from None


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="toolc")
def main() -> None:
    """Compile tool definitions into token masks for constrained decoding.

    \b
    Example:
      toolc compile schemas/weather.json --tokenizer qwen -o artifacts/weather.toolc
      toolc inspect artifacts/weather.toolc
    """
    click.get_current_context().call_on_close(use_cli_spelling())   # --lenient, not lenient=True


_TOKENIZER_HELP = ("A built-in alias (qwen, qwen3, qwen3.6, deepseek, gpt-oss, llama3, llama4, "
                   "mistral, mistral-v3), a tokenizer.json, a tekken file, a tiktoken rank file "
                   "(*.tiktoken, Llama's tokenizer.model), a SentencePiece *.model, a "
                   "directory holding a tokenizer.json (write ./qwen for a folder named like "
                   "an alias), or a hub id (needs network access). For Kimi, GLM, MiniMax, "
                   "Gemma 4, Granite, Cohere and EXAONE no registry ships the tokenizer: name "
                   "your local file. [default: the format's tokenizer, see toolc formats]")


def tokenizer_option(f):
    return click.option("--tokenizer", "-t", default=None, metavar="TOKENIZER",
                        help=_TOKENIZER_HELP)(f)


#: the flags grammar_options adds, each a CompileOptions field of the same name
_GRAMMAR_FLAGS = ("tool_choice", "parallel", "max_calls", "max_depth", "max_states", "whitespace",
                  "max_whitespace", "lenient", "reasoning", "ignore") + OBJECT_OPTS


def grammar_options(f):
    """The flags that shape the automaton, handed to the command as one ``options``
    (a CompileOptions; ``--format-file`` read into its format)."""
    @functools.wraps(f)
    def with_options(*args, format_, format_file, **kwargs):
        grammar = {k: kwargs.pop(k) for k in _GRAMMAR_FLAGS}
        grammar["reasoning"] = {"off": False, "on": True}.get(grammar["reasoning"], "open")
        if format_file is not None:
            from .formats import load_format_file
            try:
                format_ = load_format_file(format_file)
            except ToolcError as e:
                raise _fail(e) from None
        return command(*args, options=_options(format=format_, **grammar), **kwargs)

    command = f
    f = with_options
    f = click.option("--max-calls", type=click.IntRange(min=1), default=None,
                     help="With --parallel: at most this many calls.")(f)
    f = click.option("--parallel/--no-parallel", default=True, show_default=True,
                     help="Allow several calls in one answer.")(f)
    f = click.option("--tool-choice", default="auto", show_default=True, metavar="MODE",
                     help="auto (free text or calls), required (calls only), none (free text "
                          "only), or a tool's name (only that tool).")(f)
    f = click.option("--reasoning", is_flag=False, flag_value="on", default="off", help=(
        "Reasoning first (open: prompt-opened)."), type=click.Choice(["off", "on", "open"]))(f)
    f = click.option("--format-file", type=click.Path(dir_okay=False), default=None,
                     help="A custom call format from a JSON spec (prefix, call template with "
                          "{name} and {arguments}, separator, suffix, trigger); overrides "
                          "--format.")(f)
    f = click.option("--format", "format_", default="hermes", show_default=True,
                     type=click.Choice(list(FORMAT_NAMES)),
                     help="The model family's native call format.")(f)
    f = click.option("--max-depth", type=click.IntRange(min=0), default=4, show_default=True,
                     help="Nesting bound for free-form JSON values.")(f)
    f = click.option("--max-states", type=click.IntRange(min=1), default=200_000,
                     show_default=True, help="Refuse automata larger than this.")(f)
    f = click.option("--whitespace", default="model", show_default=True,
                     type=click.Choice(list(WHITESPACE_MODES)),
                     help="Separators in arguments: model (json.dumps, as chat templates "
                          "write), compact (none), flexible (any JSON whitespace, bounded).")(f)
    f = click.option("--max-whitespace", type=click.IntRange(min=1), default=4,
                     show_default=True,
                     help="With --whitespace flexible: whitespace characters in a row.")(f)
    f = click.option("--ignore", multiple=True, metavar="KEYWORD",
                     help="Drop this keyword everywhere, with a warning each (listed in the "
                          "artifact header); repeatable: --ignore discriminator "
                          "--ignore uniqueItems.")(f)
    f = click.option("--lenient", is_flag=True,
                     help="Drop keywords that cannot be enforced, with a warning each "
                          "(listed in the artifact header), instead of failing.")(f)
    return object_flags(f)


@main.command()
@click.argument("tools", type=click.Path(dir_okay=False), nargs=-1, required=True)
@tokenizer_option
@grammar_options
@click.option("-o", "--output", type=click.Path(), default=None,
              help="Where to write the artifact [default: artifacts/<stem>.toolc]; with "
                   "several tools files, a directory.")
@click.option("--record-time", is_flag=True,
              help="Record the compile seconds in the header (the file is then no longer "
                   "byte-identical between runs).")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar and no summary.")
@click.option("--check", is_flag=True,
              help="Do not compile: exit 1 if an artifact is missing or stale for its tools "
                   "file, tokenizer and options (compared by the hashes in its header).")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
              help="Parallel processes for several tools files [default: one per core].")
@click.option("--no-cache", is_flag=True,
              help="Always compile; do not read or fill the content-addressed artifact cache.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=300,
              show_default=True, metavar="SECONDS",
              help="Give up on a tools file (exit 1, nothing written) after this many seconds.")
def compile(tools, tokenizer, options, output, record_time, quiet, check, jobs, no_cache,
            timeout):
    """Compile tools files (OpenAI tools JSON) into artifacts.

    Several files are compiled in parallel processes. A content-addressed cache
    ($TOOLC_CACHE_DIR, default ~/.cache/toolc) skips work done before for the same tools,
    tokenizer, options and toolc source.

    \b
    Example:
      toolc compile schemas/weather.json --tokenizer qwen -o artifacts/weather.toolc
      toolc compile tools.json --tool-choice required --no-parallel
      toolc compile tools.json --lenient --whitespace flexible
      toolc compile schemas/*.json -o artifacts/
      toolc compile schemas/*.json -o artifacts/ --check
    """
    from .batch import build_many, expected_header, stale_reasons

    outputs = output_paths(tools, output)
    options = _options(options, record_time=record_time, timeout=timeout)
    tokenizer = _paired_tokenizer(options.format, tokenizer)
    if check:
        stale = 0
        for t, out in zip(tools, outputs):
            try:
                reasons = stale_reasons(out, expected_header(t, tokenizer, options))
            except (ToolcError, ValueError) as e:
                raise _fail(e) from None
            if reasons:
                stale += 1
                click.echo(f"{out}: stale for {t}: {'; '.join(reasons)}", err=True)
            elif not quiet:
                click.echo(f"{out}: up to date", err=True)
        if stale:
            raise click.ClickException(f"{stale} of {len(tools)} artifacts are stale; "
                                       "regenerate them (make artifacts)")
        return
    t0 = time.perf_counter()
    if len(tools) > 1:
        results = build_many(list(zip(tools, outputs)), tokenizer, processes=jobs,
                             use_cache=not no_cache, options=options)
    else:
        results = [_compile_one(tools[0], outputs[0], tokenizer, quiet, not no_cache, options)]
    failed = [r for r in results if r.error]
    for r in results:
        for line in r.messages:
            click.echo(line, err=True)
        if not r.error and not quiet:
            how = " (from the cache)" if r.status == "cached" else ""
            click.echo(f"{r.output}: {r.summary}, {time.perf_counter() - t0:.2f} s{how}",
                       err=True)
    if len(failed) == 1 and len(results) == 1:
        raise click.ClickException(failed[0].error)
    for r in failed:
        click.echo(f"Error: {r.error}", err=True)
    if failed:
        raise click.ClickException(f"{len(failed)} of {len(results)} tools files failed")


def _paired_tokenizer(format_, tokenizer):
    """The format's own tokenizer when none is named; refused if it lacks the format's
    atomic markers (toolc/pairing.py). A custom format takes the tokenizer as given."""
    from .pairing import FALLBACK_TOKENIZER, check_pairing, default_tokenizer
    from .tokenizer import load_vocabulary
    if not isinstance(format_, str):
        return tokenizer or FALLBACK_TOKENIZER
    try:
        tokenizer = tokenizer or default_tokenizer(format_)
        check_pairing(format_, load_vocabulary(tokenizer))
    except ToolcError as e:
        raise _fail(e) from None
    return tokenizer


def _compile_one(tools, output, tokenizer, quiet, use_cache, options):
    """One file in this process, with a progress bar on a terminal."""
    from .batch import build_one
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
        return build_one(tools, output, tokenizer, use_cache, progress=progress,
                         options=options)
    finally:
        if bar is not None:
            bar.__exit__(None, None, None)


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
    info["classes"] = art.num_classes
    info["derived_classes"] = art.num_derived_classes      # thinned or patched (formats 4, 7)
    if as_json:
        click.echo(json.dumps(info, indent=2, ensure_ascii=False))
        return
    width = max(len(k) for k in info)
    for k, v in info.items():
        if k == "not_enforced" and v:       # what is not guaranteed, one line each
            click.echo(f"{k:<{width}}  {len(v)} keyword(s) not enforced:")
            for d in v:
                click.echo(f"  tool {d['tool']!r}, {d['pointer']}: {d['keyword']} ({d['why']})")
            continue
        if isinstance(v, (dict, list)):
            v = json.dumps(v, ensure_ascii=False)
        click.echo(f"{k:<{width}}  {v}")


@main.command()
@click.argument("artifact", type=click.Path(dir_okay=False))
@click.argument("text")
@click.option("--tokenizer", "-t", default=None, metavar="TOKENIZER",
              help="The artifact's tokenizer [default: the one named in its header].")
@click.option("--allowed", "sample_size", type=click.IntRange(min=1), default=12,
              show_default=True, help="How many allowed tokens to show at a rejection.")
@click.option("-e", "--escapes", is_flag=True,
              help="Read backslash escapes in TEXT (\\n, \\t, \\uXXXX, \\\\).")
def trace(artifact, text, tokenizer, sample_size, escapes):
    """Walk TEXT through an artifact token by token; explain the first rejection.

    TEXT is tokenized with the artifact's tokenizer (special tokens such as <tool_call> and
    <|im_end|> become their ids). Each token is shown with the state it leaves and enters. At
    the first rejected token: where in the call it is (tool, JSON pointer) and a sample of the
    tokens that were allowed. Exits 1 when a token is rejected.

    \b
    Example:
      toolc trace artifacts/weather.toolc -e '<tool_call>\\n{"name": "get_weather"'
    """
    from .runtime import load
    from .debug.trace import artifact_vocabulary, trace as run_trace

    try:
        art = load(artifact)
        vocab = artifact_vocabulary(art, tokenizer)
    except ToolcError as e:
        raise _fail(e) from None
    if escapes:
        text = text.encode("latin-1", "backslashreplace").decode("unicode_escape")
    result = run_trace(art, vocab, text, sample=sample_size)
    click.echo(result.render())
    if not result.ok:
        s = result.steps[result.rejected]
        raise click.ClickException(f"token {result.rejected} ({s.token} {s.text}) rejected: "
                                   f"{result.location.describe()}")


@main.command()
@click.argument("artifact", type=click.Path(dir_okay=False))
@click.option("-n", "count", type=click.IntRange(min=1), default=3, show_default=True,
              help="How many outputs.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--max-tokens", type=click.IntRange(min=1), default=60, show_default=True,
              help="After this many tokens, head for the end by the shortest way.")
@click.option("--tokenizer", "-t", default=None, metavar="TOKENIZER",
              help="The artifact's tokenizer [default: the one named in its header].")
@click.option("--json", "as_json", is_flag=True,
              help="One JSON object per line: the text, its token ids and its parsed calls.")
def sample(artifact, count, seed, max_tokens, tokenizer, as_json):
    """Print random outputs the artifact accepts: the exact format it enforces.

    \b
    Example:
      toolc sample artifacts/weather.toolc -n 5 --seed 1
    """
    from .parse import parse_tool_calls
    from .runtime import load
    from .debug.sample import sample_outputs
    from .debug.trace import artifact_vocabulary

    try:
        art = load(artifact)
        vocab = artifact_vocabulary(art, tokenizer)
    except ToolcError as e:
        raise _fail(e) from None
    for i, ids in enumerate(sample_outputs(art, count, seed=seed, budget=max_tokens)):
        text = vocab.decode_bytes(ids).decode("utf-8", errors="replace")
        if as_json:
            # a custom format is parsed by its spec, which the header keeps
            parsed = parse_tool_calls(text, format=art.header.get("format_spec") or art.format)
            click.echo(json.dumps({"text": text, "token_ids": ids,
                                   "tool_calls": parsed["tool_calls"]}, ensure_ascii=False))
        else:
            click.echo(f"--- sample {i + 1} ({len(ids)} tokens)")
            click.echo(text)


@main.command()
@click.argument("source", type=click.Path(dir_okay=False, exists=True))
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True,
              help="fsm.svg (drawn here, no Graphviz needed) or fsm.dot (Graphviz DOT).")
@click.option("--tool", default=None, help="Only this tool's part of the automaton.")
@click.option("--max-nodes", type=click.IntRange(min=1), default=1500, show_default=True,
              help="Refuse to draw more states than this (cut with --tool).")
@click.option("--tokenizer", "-t", default=None, metavar="TOKENIZER",
              help=_TOKENIZER_HELP + " [default: qwen for a tools file, the one named in its "
                   "header for an artifact]")
@grammar_options
def graph(source, output, tool, max_nodes, tokenizer, options):
    """Draw the automaton of a TOOLS file (byte level) or an ARTIFACT (token level).

    As the ToolDec paper draws it: the tool-name trie, then each tool's argument automaton;
    states are labelled with their tool and JSON pointer and coloured by tool.

    \b
    Example:
      toolc graph schemas/weather.json -o fsm.svg
      toolc graph artifacts/assistant.toolc -o fsm.dot --tool send_email
    """
    from .debug.graph import artifact_graph, dfa_graph, to_dot, to_svg
    from .errors import GraphError
    from .runtime.fileformat import write_atomic

    ext = os.path.splitext(output)[1].lower()
    if ext not in (".svg", ".dot", ".gv"):
        raise click.UsageError(f"output {output!r}: use a .svg or a .dot file name")
    try:
        if _is_artifact(source):
            from .debug.trace import artifact_vocabulary
            from .runtime import load
            art = load(source)
            vocab = artifact_vocabulary(art, tokenizer)
            g, names = artifact_graph(art, vocab)
        else:
            g, names = dfa_graph(source, _paired_tokenizer(options.format, tokenizer), options)
        if tool is not None:
            g = g.cut(tool, names)
        if len(g.labels) > max_nodes:
            raise GraphError(f"{source}: {len(g.labels):,} states is more than --max-nodes "
                             f"{max_nodes:,}; draw one tool with --tool NAME")
    except (ToolcError, ValueError) as e:
        raise _fail(e) from None
    text = to_svg(g) if ext == ".svg" else to_dot(g)
    try:
        write_atomic(output, text.encode("utf-8"))
    except OSError as e:
        raise click.ClickException(f"{output}: cannot write: {e.strerror or e}") from None
    click.echo(f"{output}: {len(g.labels):,} states, {len(g.edges):,} edges", err=True)


def _is_artifact(path: str) -> bool:
    """Tools files are JSON text; artifacts are msgpack."""
    with open(path, "rb") as fh:
        head = fh.read(64).lstrip(b" \t\r\n\xef\xbb\xbf")
    return not head.startswith((b"[", b"{"))


@main.command()
@click.argument("text", required=False, default="-")
@click.option("--format", "format_", default="hermes", show_default=True, metavar="FORMAT",
              help="The call format the text is written in (a name, as for compile).")
@click.option("--format-file", type=click.Path(dir_okay=False), default=None,
              help="A custom format's JSON spec; overrides --format.")
@click.option("--tools", "tools_path", type=click.Path(dir_okay=False), default=None,
              help="The tools file (tooldec needs it to name positional arguments; "
                   "qwen3-coder uses it to tell raw strings from JSON).")
def parse(text, format_, format_file, tools_path):
    """Parse generated text back into OpenAI-shaped tool calls (JSON on stdout).

    TEXT is the model's output, or - (the default) to read it from standard input. Output:
    one JSON object (content, tool_calls, reasoning), one tool call per line.

    \b
    Example:
      toolc parse --format hermes '<tool_call>
      {"name": "get_weather", "arguments": {"city": "Paris"}}
      </tool_call>'
      echo '[get_weather(city="Paris")]' | toolc parse --format pythonic -
    """
    from .errors import FormatSpecError, InvalidToolsError
    from .inputs import MAX_SPEC_BYTES, MAX_TOOLS_BYTES, read_json_file
    from .parse import PARSERS, parse_tool_calls

    text = sys.stdin.read() if text == "-" else text
    fmt = format_
    tools = None
    try:
        if format_file is not None:
            fmt = read_json_file(format_file, "format spec", MAX_SPEC_BYTES,
                                 lambda why: FormatSpecError(f"{one_line(format_file)}: {why}"))
        elif format_ not in PARSERS:
            raise click.UsageError(f"unknown format {format_!r}; known: "
                                   f"{', '.join(sorted(PARSERS))}")
        if tools_path is not None:
            tools = read_json_file(tools_path, "tools file", MAX_TOOLS_BYTES,
                                   lambda why: InvalidToolsError(why, file=tools_path))
            tools = tools.get("tools", tools) if isinstance(tools, dict) else tools
        out = parse_tool_calls(text, format=fmt, tools=tools)
    except (OSError, ValueError) as e:
        if isinstance(e, click.UsageError):
            raise
        raise click.ClickException(str(e)) from None
    out.pop("parsed", None)
    write_parse_result(out, sys.stdout)


main.add_command(formats_command)


if __name__ == "__main__":  # pragma: no cover
    main()
