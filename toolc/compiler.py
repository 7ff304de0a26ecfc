"""The compile pipeline: tools + tokenizer + options -> Artifact.

    tools ─► Tool list ─► per-tool Expr ─► format grammar ─► ByteDFA ─► TokenIndex ─► Artifact
"""

from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass

from . import __version__, budget
from .artifact import build_artifact
from .errors import BudgetExceededError, UnsupportedSchemaError
from .formats import FormatOptions, get_format
from .fsm import compile_expr
from .fsm.dfa import collector_paused
from .index import walk
from .runtime import Artifact
from .schema import SchemaOptions
from .schema.budgeted import BudgetedSchemaCompiler
from .schema.json_grammar import WHITESPACE_MODES
from .tokenizer import DEFAULT_TOKENIZER, Vocabulary, load_vocabulary
from .tools import Tool, load_tools_file, parse_tools, tools_hash


@dataclass(frozen=True)
class CompileOptions:
    format: str = "hermes"
    tool_choice: str = "auto"
    parallel: bool = True
    max_calls: int | None = None
    max_depth: int = 4
    max_states: int = 200_000
    whitespace: str = "model"
    max_whitespace: int = 4
    lenient: bool = False
    record_time: bool = False
    reasoning: bool = False


def compile_tools(tools, tokenizer: str | os.PathLike | Vocabulary = DEFAULT_TOKENIZER, *,
                  format="hermes", tool_choice: str = "auto", parallel: bool = True,
                  reasoning: bool = False, max_calls: int | None = None, max_depth: int = 4,
                  max_states: int = 200_000, whitespace: str = "model",
                  max_whitespace: int = 4, lenient: bool = False, record_time: bool = False,
                  source: str | None = None, progress=None,
                  timeout: float | None = None) -> Artifact:
    """Compile tool definitions for a tokenizer into an in-memory :class:`Artifact`.

    ``tools`` is a path to a tools file, or the tools value itself (an OpenAI tools list, a
    list of function objects, or ``{"tools": [...]}``). Every keyword argument is a CLI option;
    ``format`` is a format's name or a :class:`toolc.formats.CallFormat` (a custom format from
    ``toolc.formats.load_format_file``). ``whitespace`` is ``model`` (json.dumps separators,
    as chat templates write them), ``compact`` (none) or ``flexible`` (any JSON whitespace, at
    most ``max_whitespace`` characters in a row). With ``lenient``, what cannot be enforced is
    dropped and listed in the header's ``not_enforced``; non-standard readings are listed in
    ``notices``. ``timeout`` (seconds) bounds the whole compile (see :mod:`toolc.budget`).
    """
    with budget.deadline(timeout), collector_paused():
        return _compile(tools, tokenizer, format=format, tool_choice=tool_choice,
                        parallel=parallel, reasoning=reasoning, max_calls=max_calls,
                        max_depth=max_depth, max_states=max_states, whitespace=whitespace,
                        max_whitespace=max_whitespace, lenient=lenient,
                        record_time=record_time, source=source, progress=progress)


def _compile(tools, tokenizer, *, format, tool_choice, parallel, reasoning, max_calls,
             max_depth, max_states, whitespace, max_whitespace, lenient, record_time, source,
             progress) -> Artifact:
    t0 = time.perf_counter()
    b = build_dfa(tools, tokenizer, format=format, tool_choice=tool_choice, parallel=parallel,
                  reasoning=reasoning, max_calls=max_calls, max_depth=max_depth,
                  max_states=max_states, whitespace=whitespace, max_whitespace=max_whitespace,
                  lenient=lenient, source=source)
    fmt, vocab, dfa, symbols, tool_list = b.format, b.vocab, b.dfa, b.symbols, b.tools
    names = [t.name for t in tool_list]
    notices, dropped = b.notices, b.dropped
    opts = CompileOptions(format=fmt.name, tool_choice=tool_choice, parallel=parallel,
                          max_calls=max_calls, max_depth=max_depth, max_states=max_states,
                          whitespace=whitespace, max_whitespace=max_whitespace,
                          lenient=lenient, record_time=record_time, reasoning=reasoning)
    try:
        index = walk(dfa, vocab, symbols, progress=progress,
                     max_runs=None if max_states is None else max_states * budget.WALK_FACTOR)
    except BudgetExceededError as e:
        raise b.blame(e, source or (os.fspath(tools) if isinstance(tools, (str, os.PathLike))
                                    else None)) from None
    seconds = time.perf_counter() - t0
    header = {
        "toolc_version": __version__,
        "tokenizer": vocab.name,
        "fingerprint": vocab.fingerprint,
        "vocab_size": vocab.vocab_size,
        "logits_size": vocab.logits_size,
        "eos_token_ids": list(vocab.eos_ids),
        "special_tokens": {k: list(v) for k, v in sorted(symbols.items())},
        "tools": names,
        "tools_hash": tools_hash(tool_list),
        "format": fmt.name,
        **({"format_spec": fmt.spec} if hasattr(fmt, "spec") else {}),
        "options": {k: v for k, v in asdict(opts).items() if k != "record_time"},
        "num_states": dfa.num_states,
        "byte_classes": dfa.alphabet.num_byte_classes,
        "compile_seconds": round(seconds, 3) if record_time else None,
        "not_enforced": dropped,
        "notices": notices,
    }
    return build_artifact(header, index)


@dataclass
class Built:
    """What the compile pipeline has built before the vocabulary walk."""

    format: object
    vocab: Vocabulary
    tools: list
    dfa: object
    symbols: dict
    notices: list
    dropped: list
    exprs: list = None      # (tool, argument Expr) pairs

    def blame(self, e: BudgetExceededError, source) -> BudgetExceededError:
        """A budget error from a later stage, naming the tool with the largest automaton; for
        the vocabulary walk's budget, the schema with the longest length bound instead (a
        bounded string costs the walk a state per character), when a tool has one."""
        if e.tool is not None:
            return e
        if e.message.startswith("the vocabulary walk"):
            found = []
            for t in self.tools:
                hit = budget.longest_bound(t.parameters)
                if hit is not None:
                    found.append((hit[1], t, hit[0]))
            if found:
                bound, tool, ptr = max(found, key=lambda f: f[0])
                return BudgetExceededError(
                    f"{e.message}; it has the longest length bound of the tools, {bound:,} "
                    "characters", file=e.file or source, tool=tool.name,
                    pointer=f"{tool.pointer}/parameters{ptr}", fix=e.fix)
        memo: dict = {}
        sizes = [(t.name, f"{t.pointer}/parameters", budget.nfa_size(x, memo))
                 for t, x in self.exprs or []]
        return budget.blame(e, sizes, source)


def build_dfa(tools, tokenizer=DEFAULT_TOKENIZER, *, format="hermes", tool_choice="auto",
              parallel=True, reasoning=False, max_calls=None, max_depth=4, max_states=200_000,
              whitespace="model", max_whitespace=4, lenient=False, source=None) -> Built:
    """Tools, tokenizer and options to the minimized byte DFA (and what it was built from)."""
    fmt = get_format(format)
    if whitespace not in WHITESPACE_MODES:
        raise ValueError(f"whitespace {whitespace!r} is not supported; use one of "
                         f"{', '.join(WHITESPACE_MODES)}")
    if max_whitespace < 1:
        raise ValueError(f"max_whitespace must be at least 1, got {max_whitespace}")
    if isinstance(tools, (str, os.PathLike)):
        source = source or os.fspath(tools)
        tool_list = load_tools_file(tools)
    else:
        tool_list = parse_tools(tools, file=source)
    names = [t.name for t in tool_list]
    if tool_choice not in ("auto", "required", "none") and tool_choice not in names:
        raise ValueError(f"tool choice {tool_choice!r} is neither auto, required, none nor one "
                         f"of the tools ({', '.join(names)})")
    vocab = load_vocabulary(tokenizer)
    sopts = SchemaOptions(max_depth=max_depth, whitespace=whitespace,
                          max_ws=max_whitespace, lenient=lenient)
    sizes: dict = {}     # expression sizes, shared by the schema budgets and the check below
    exprs, notices, dropped = _compile_arguments(tool_list, source, sopts, max_states, sizes)
    grammar, symbols = fmt.grammar(exprs, vocab, FormatOptions(tool_choice, parallel, max_calls,
                                                               reasoning, max_depth))
    try:
        budget.check_nfa_size(grammar, max_states, sizes)
        dfa = compile_expr(grammar, max_states=max_states)
    except BudgetExceededError as e:
        if e.tool is not None:
            raise
        located = _locate_blowup(e, tool_list, source, sopts, max_states)
        if located.tool is not None:
            raise located from None
        raise Built(fmt, vocab, tool_list, None, symbols, notices, dropped, exprs).blame(
            e, source) from None
    return Built(fmt, vocab, tool_list, dfa, symbols, notices, dropped, exprs)


def _argument_exprs(tools: list[Tool], source: str | None, max_depth: int,
                    max_states: int | None = None):
    """Each tool with its argument Expr, under the default options."""
    return _compile_arguments(tools, source, SchemaOptions(max_depth=max_depth), max_states)[0]


def _compile_arguments(tools: list[Tool], source: str | None, options: SchemaOptions,
                       max_states: int | None = None, sizes: dict | None = None):
    """Each tool's argument Expr, plus the notices and the dropped keywords, located.

    The compiler checks the deadline, bounds subschema nesting and refuses, at its own
    pointer, a subschema whose automaton alone is over the state budget."""
    out, notices, dropped = [], [], []
    for t in tools:
        sc = BudgetedSchemaCompiler(options, max_states=max_states, memo=sizes)
        base = f"{t.pointer}/parameters"
        try:
            out.append((t, sc.compile(t.parameters)))
        except (UnsupportedSchemaError, BudgetExceededError) as e:
            raise e.located(file=source, tool=t.name, pointer_prefix=base) from None
        seen = set()
        for n in sc.notices:
            key = (n["pointer"], n["message"])
            if key not in seen:        # a $ref compiled twice reports once
                seen.add(key)
                notices.append({"tool": t.name, "pointer": base + n["pointer"],
                                "message": n["message"]})
        seen = set()
        for d in sc.dropped:
            key = (d["pointer"], d["keyword"])
            if key not in seen:
                seen.add(key)
                dropped.append({"tool": t.name, "pointer": base + d["pointer"],
                                "keyword": d["keyword"], "why": d["why"]})
    return out, notices, dropped


def _locate_blowup(e: BudgetExceededError, tools: list[Tool], source, options: SchemaOptions,
                   max_states: int) -> BudgetExceededError:
    """The budget error, naming the tool and the schema part that blew it when one does alone."""
    from .schema.budget import locate

    for t in tools:
        ptr = locate(t.parameters, options, max_states)
        if ptr is not None:
            return e.located(file=source, tool=t.name,
                             pointer_prefix=f"{t.pointer}/parameters{ptr}")
    return e.located(file=source)
