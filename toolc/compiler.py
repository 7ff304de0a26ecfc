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
from .index import walk
from .runtime import Artifact
from .schema import SchemaOptions
from .schema.budgeted import BudgetedSchemaCompiler
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
    whitespace: str = "compact"
    record_time: bool = False


def compile_tools(tools, tokenizer: str | os.PathLike | Vocabulary = DEFAULT_TOKENIZER, *,
                  format: str = "hermes", tool_choice: str = "auto", parallel: bool = True,
                  max_calls: int | None = None, max_depth: int = 4, max_states: int = 200_000,
                  whitespace: str = "compact", record_time: bool = False,
                  source: str | None = None, progress=None,
                  timeout: float | None = None) -> Artifact:
    """Compile tool definitions for a tokenizer into an in-memory :class:`Artifact`.

    ``tools`` is a path to a tools file, or the tools value itself (an OpenAI tools list, a
    list of function objects, or ``{"tools": [...]}``). Every keyword argument is a CLI option;
    ``timeout`` (seconds) bounds the whole compile (see :mod:`toolc.budget`).
    """
    with budget.deadline(timeout):
        return _compile(tools, tokenizer, format, tool_choice, parallel, max_calls, max_depth,
                        max_states, whitespace, record_time, source, progress)


def _compile(tools, tokenizer, format, tool_choice, parallel, max_calls, max_depth, max_states,
             whitespace, record_time, source, progress) -> Artifact:
    t0 = time.perf_counter()
    opts = CompileOptions(format=format, tool_choice=tool_choice, parallel=parallel,
                          max_calls=max_calls, max_depth=max_depth, max_states=max_states,
                          whitespace=whitespace, record_time=record_time)
    if whitespace != "compact":
        raise ValueError(f"whitespace {whitespace!r} is not supported; use 'compact' "
                         "(the json.dumps separators the chat templates write)")
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
    exprs = _argument_exprs(tool_list, source, max_depth, max_states)
    fmt = get_format(format)
    grammar, symbols = fmt.grammar(exprs, vocab, FormatOptions(tool_choice, parallel, max_calls))
    try:
        budget.check_nfa_size(grammar, max_states)
        dfa = compile_expr(grammar, max_states=max_states)
        index = walk(dfa, vocab, symbols, progress=progress)
    except BudgetExceededError as e:
        memo: dict = {}
        sizes = [(t.name, f"{t.pointer}/parameters", budget.nfa_size(x, memo)) for t, x in exprs]
        raise budget.blame(e, sizes, source) from None
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
        "format": format,
        "options": {k: v for k, v in asdict(opts).items() if k != "record_time"},
        "num_states": dfa.num_states,
        "byte_classes": dfa.alphabet.num_byte_classes,
        "compile_seconds": round(seconds, 3) if record_time else None,
    }
    return build_artifact(header, index)


def _argument_exprs(tools: list[Tool], source: str | None, max_depth: int,
                    max_states: int | None = None):
    out = []
    for t in tools:
        sc = BudgetedSchemaCompiler(SchemaOptions(max_depth=max_depth), max_states=max_states)
        try:
            out.append((t, sc.compile(t.parameters)))
        except (UnsupportedSchemaError, BudgetExceededError) as e:
            raise e.located(file=source, tool=t.name,
                            pointer_prefix=f"{t.pointer}/parameters") from None
    return out
