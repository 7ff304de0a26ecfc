"""One compile in memory: options -> header -> automaton -> walk -> encode -> Artifact.

    tools ─► [Tool] ─► per-tool Expr ─► format grammar ─► ByteDFA ─► TokenIndex ─► Artifact

:func:`compile_tools` is the entry point (``toolc.compile_tools``); :func:`build_dfa` stops
before the vocabulary walk (``toolc graph`` and the tests use it); :func:`make_header` is the
one function that writes an artifact's header fields, used by the compile and by ``--check``
(:func:`toolc.batch.expected_header`), so the two cannot drift apart.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field, replace

from . import __version__, budget
from .encode import build_artifact
from .errors import BudgetExceededError, EmptyLanguageError, InvalidOptionError, ToolcError, \
    UnsupportedSchemaError
from .formats import get_format
from .formats.base import FormatOptions
from .fsm import compile_expr
from .fsm.dfa import AmbiguousCountError, collector_paused
from .fsm.size import nfa_size
from .fsm.unspelled import unspelled_within
from .options import TOOL_CHOICES, CompileOptions
from .runtime import Artifact
from .schema import SchemaCompiler, SchemaOptions
from .schema import strings as _strings
from .schema import arrays as _arrays
from .schema.arrays import expanded_items
from .schema.strings import expanded_lengths
from .schema.vocabulary import prepare
from .tokenizer import DEFAULT_TOKENIZER, Vocabulary, load_vocabulary
from .tools import Tool, load_tools_file, parse_tools, tools_hash
from .assemble import walk_parts
from .stitch import stitched_dfa
from .walk.counts import count_tables, without_pairs
from .walk.itemcounts import counted_regions
from .walk.runcounts import counted_all
from .walk.twins import within_reach


def compile_tools(tools, tokenizer: str | os.PathLike | Vocabulary = DEFAULT_TOKENIZER, *,
                  options: CompileOptions | None = None, source: str | None = None,
                  progress=None, cache=None, **kwargs) -> Artifact:
    """Compile tool definitions for a tokenizer into an in-memory :class:`Artifact`.

    ``tools`` is a path to a tools file, or the tools value itself (an OpenAI tools list, a
    list of function objects, or ``{"tools": [...]}``). The options are a
    :class:`~toolc.options.CompileOptions` (``options=``), keyword arguments naming its fields
    (``format="mistral"``, ``lenient=True``, ...), or both (the keywords win). ``source``
    names the tools in errors when they are not a file; ``progress(level, total)`` is called
    during the vocabulary walk. ``timeout`` (seconds) bounds the whole compile. ``cache``, a
    :class:`~toolc.toolcache.ToolCache`, returns the artifact of a tool set compiled before
    and reuses the argument parts of tools compiled before (the same bytes either way).
    """
    opts = CompileOptions.from_kwargs(options, **kwargs)
    key = None
    if cache is not None and not opts.record_time:
        tokenizer = load_vocabulary(tokenizer)
        counted = _counting()
        seen = cache.input_key(tools, opts, tokenizer, counted)
        key = cache.key_for_input(seen)      # a request seen before: no need to read it
        if key is None:
            tools, source = read_tools(tools, source, cache)
            key = cache.artifact_key(make_header(opts, tokenizer, tools,
                                                 get_format(opts.format)), tools, counted)
            cache.note_input(seen, key)
        art = cache.get_artifact(key)
        if art is not None:
            return art
    with budget.deadline(opts.timeout), collector_paused():
        t0 = time.perf_counter()
        art = counted_or_expanded(
            lambda: _compile(tools, tokenizer, opts, source, progress, t0, cache))
    if key is not None:
        cache.put_artifact(key, art)
    return art


def _counting() -> list:
    """Whether lengths and item counts are counted or expanded here (part of cache keys)."""
    return [_strings._COUNTED.get(), _arrays._COUNTED.get()]


class ToolList(list):
    """Tools already read and checked (:func:`read_tools`): not read again."""


def read_tools(tools, source: str | None, cache=None) -> tuple[ToolList, str | None]:
    """A tools file's path or a tools value to its checked :class:`Tool` list, and the name
    errors give it (through ``cache``'s parsed entries when there is one)."""
    if isinstance(tools, ToolList):
        return tools, source
    if isinstance(tools, (str, os.PathLike)):
        source = source or os.fspath(tools)
        return ToolList(load_tools_file(tools)), source
    return ToolList(parse_tools(tools, file=source, memo=cache)), source


def _compile(tools, tokenizer, opts: CompileOptions, source, progress, t0: float,
             cache=None) -> Artifact:
    b = build_dfa(tools, tokenizer, opts, source=source, cache=cache)
    max_runs = opts.max_states * budget.WALK_FACTOR
    try:
        index = walk_parts(b.dfa, b.vocab, b.symbols, progress=progress, max_runs=max_runs,
                           sparse_twins=True, blocks=b.blocks)
        if b.dfa.tags is not None:
            # the counters read the runs of the states one token can lead into or through
            # a counted region: their twins are filled in, the rest stay sparse
            index = index.full(max_runs, near=within_reach(
                b.dfa.trans, b.dfa.alphabet.num_byte_classes, b.dfa.tags >= 0,
                int(b.vocab.ordinary_bytes()[1].max())))
    except BudgetExceededError as e:
        raise b.blame(e) from None
    counted = None
    if b.dfa.tags is not None:
        counted, index = counted_all(b.dfa, index, b.vocab, lambda d, i: counted_regions(
            d, i, b.vocab, count_tables, without_pairs))
    header = make_header(opts, b.vocab, b.tools, b.format, built=b,
                         seconds=time.perf_counter() - t0)
    return build_artifact(header, index, counted)


def make_header(options: CompileOptions, vocab: Vocabulary, tools: list[Tool], fmt,
                built: Built | None = None, seconds: float | None = None) -> dict:
    """An artifact's header. Without ``built`` (what :func:`build_dfa` made), only the fields
    known before the automaton is built: what ``--check`` compares (see
    :data:`toolc.batch.CHECKED`). The key order is the file's: artifacts stay byte-identical."""
    head = {
        "toolc_version": __version__,
        "tokenizer": vocab.name,
        "fingerprint": vocab.fingerprint,
        "vocab_size": vocab.vocab_size,
        "logits_size": vocab.logits_size,
        "eos_token_ids": list(vocab.eos_ids),
    }
    if built is not None:
        head["special_tokens"] = {k: list(v) for k, v in sorted(built.symbols.items())}
    head.update({
        "tools": [t.name for t in tools],
        "tools_hash": tools_hash(tools),
        "format": fmt.name,
        **({"format_spec": fmt.spec} if hasattr(fmt, "spec") else {}),
        "options": options.header_options(),
    })
    if built is not None:
        head.update({
            "num_states": built.dfa.num_states,
            "byte_classes": built.dfa.alphabet.num_byte_classes,
            "compile_seconds": round(seconds, 3) if options.record_time and seconds is not None
            else None,
            "not_enforced": built.dropped,
            "notices": built.notices,
        })
    return head


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
    exprs: list = field(default_factory=list)     # (tool, argument Expr) pairs
    source: str | None = None
    blocks: list | None = None    # stitched: where each block's states went (toolc.stitch)

    def blame(self, e: BudgetExceededError) -> BudgetExceededError:
        """A budget error from a later stage, located (see :mod:`toolc.budget`): for the
        walk's budget, the schema with the longest length bound when a tool has one; else
        the tool with the largest automaton."""
        if e.tool is not None:
            return e
        if e.stage == "walk":
            found = budget.blame_walk(e, self.tools, self.source)
            if found is not None:
                return found
        memo: dict = {}
        sizes = [(t.name, t.schema_pointer, nfa_size(x, memo)) for t, x in self.exprs]
        return budget.blame(e, sizes, self.source)


def build_dfa(tools, tokenizer=DEFAULT_TOKENIZER, options: CompileOptions | None = None, *,
              source: str | None = None, cache=None, **kwargs) -> Built:
    """Tools, tokenizer and options to the minimized byte DFA (and what it was built from).
    Options as for :func:`compile_tools`. Length bounds are counted regions (tagged states)
    unless a counter would be ambiguous; then they are built as chains of states."""
    opts = CompileOptions.from_kwargs(options, **kwargs)
    return counted_or_expanded(lambda: _build_dfa(tools, tokenizer, opts, source, cache))


def counted_or_expanded(build):
    """``build()`` with its bounds counted; where a counter could not tell its region from
    other text (AmbiguousCountError), with item counts as states and lengths still counted
    (a string nested in a counted array is the likelier cause: this is how such arrays
    were built before they nested), and then with every bound as state chains."""
    try:
        return build()
    except AmbiguousCountError:
        pass
    try:
        with expanded_items():
            return build()
    except AmbiguousCountError:
        with expanded_lengths(), expanded_items():
            return build()


def _build_dfa(tools, tokenizer, opts: CompileOptions, source: str | None, cache) -> Built:
    fmt = get_format(opts.format)
    tool_list, source = read_tools(tools, source)
    names = [t.name for t in tool_list]
    if opts.tool_choice not in TOOL_CHOICES and opts.tool_choice not in names:
        raise InvalidOptionError(
            "tool_choice", f"{opts.tool_choice!r} is neither auto, required, none nor one of "
                           f"the tools ({', '.join(names)})")
    vocab = load_vocabulary(tokenizer)
    sopts = schema_options(opts)
    sizes: dict = {}     # expression sizes, shared by the schema budgets and the check below
    exprs, notices, dropped = compile_arguments(tool_list, source, sopts, opts.max_states,
                                                sizes, cache)
    fopts = FormatOptions(opts.tool_choice, opts.parallel, opts.max_calls, opts.reasoning,
                          opts.max_depth)
    stitched = stitched_dfa(fmt, exprs, vocab, fopts, opts.max_states, cache)
    if stitched is not None:    # each tool's block built once and kept (toolc.stitch)
        return Built(fmt, vocab, tool_list, stitched[0], stitched[1], notices, dropped, exprs,
                     source, stitched[2])
    grammar, symbols = fmt.grammar(exprs, vocab, fopts)
    built = Built(fmt, vocab, tool_list, None, symbols, notices, dropped, exprs, source)
    try:
        budget.check_nfa_size(nfa_size(grammar, sizes), opts.max_states)
        # a format that keeps its tags out of its calls on the DFA (hermes' closed strings)
        within = getattr(fmt, "unspelled_within", lambda: None)()
        built.dfa = compile_expr(grammar, max_states=opts.max_states, reduce=within is None)
        if within is not None:
            built.dfa = unspelled_within(built.dfa, *within, max_states=opts.max_states)
    except EmptyLanguageError as e:
        raise e.located(file=source) from None
    except BudgetExceededError as e:
        if e.tool is not None:
            raise
        located = _locate_blowup(e, tool_list, source, sopts, opts.max_states)
        if located.tool is not None:
            raise located from None
        raise built.blame(e) from None
    return built


def schema_options(options: CompileOptions) -> SchemaOptions:
    """The schema compiler's share of the compile options."""
    return SchemaOptions(max_depth=options.max_depth, whitespace=options.whitespace,
                         max_ws=options.max_whitespace, lenient=options.lenient,
                         additional_properties=options.additional_properties,
                         property_order=options.property_order,
                         ignore=options.ignore, leap_seconds=options.leap_seconds)


def _argument_exprs(tools: list[Tool], source: str | None, max_depth: int,
                    max_states: int | None = None):
    """Each tool with its argument Expr, under the default options (for tests and benches)."""
    return compile_arguments(tools, source, SchemaOptions(max_depth=max_depth), max_states)[0]


def compile_arguments(tools: list[Tool], source: str | None, options: SchemaOptions,
                      max_states: int | None = None, sizes: dict | None = None, cache=None):
    """Each tool's argument Expr, plus the notices and the dropped keywords, located.

    The schema compiler checks the deadline, bounds subschema nesting and refuses, at its own
    pointer, a subschema whose automaton alone is over the state budget. With ``cache`` (a
    :class:`~toolc.toolcache.ToolCache`), a tool whose schema was compiled before under the
    same options reuses that part, wherever it stands in the list."""
    out, notices, dropped = [], [], []
    counted = _counting()
    for t in tools:
        key = None if cache is None else cache.tool_key(t, (options, max_states), counted)
        part = None if key is None else cache.get_tool(key)
        if part is None:
            part = _argument_part(t, source, options, max_states, sizes)
            if key is not None:
                cache.put_tool(key, part)
        schema, expr, notes, drops = part
        base = t.schema_pointer
        out.append((replace(t, parameters=schema), expr))
        notices += _located_once(notes, t.name, base, "message",
                                 lambda n: {"message": n["message"]})
        dropped += _located_once(drops, t.name, base, "keyword",
                                 lambda d: {"keyword": d["keyword"], "why": d["why"]})
    return out, notices, dropped


def _argument_part(t: Tool, source: str | None, options: SchemaOptions,
                   max_states: int | None, sizes: dict | None) -> tuple:
    """One tool's prepared schema, argument Expr, notices and dropped keywords (pointers
    relative to its schema): what does not depend on the tool's place in the list."""
    sc = SchemaCompiler(options, max_states=max_states,
                        max_nesting=budget.MAX_SCHEMA_NESTING, memo=sizes)
    ready = None
    try:
        # the keyword vocabulary first: drafts, annotations, unknown keywords, --ignore
        ready = prepare(t.parameters, ignore=options.ignore, lenient=options.lenient,
                        leap_seconds=options.leap_seconds)
        expr = sc.compile(ready.schema)
    except (UnsupportedSchemaError, BudgetExceededError, EmptyLanguageError) as e:
        if ready is not None and e.pointer:     # as the schema was written
            e = e.with_message(e.message, pointer=ready.original(e.pointer))
        raise e.located(file=source, tool=t.name, pointer_prefix=t.schema_pointer) from None
    for entry in sc.notices + sc.dropped:
        entry["pointer"] = ready.original(entry["pointer"])
    return (ready.schema, expr, tuple(ready.notices + sc.notices),
            tuple(ready.dropped + sc.dropped))


def _located_once(entries: list[dict], tool: str, base: str, key: str, rest) -> list[dict]:
    """``entries`` (a $ref compiled twice reports once) with the tool and the full pointer."""
    seen, out = set(), []
    for n in entries:
        k = (n["pointer"], n[key])
        if k not in seen:
            seen.add(k)
            out.append({"tool": tool, "pointer": base + n["pointer"], **rest(n)})
    return out


def _locate_blowup(e: BudgetExceededError, tools: list[Tool], source, options: SchemaOptions,
                   max_states: int) -> BudgetExceededError:
    """The budget error, naming the tool and the schema part that blew it when one does
    alone (:func:`toolc.budget.locate_overflow`, with a trial compile of one part)."""
    for t in tools:
        try:        # the schema as compile_arguments compiled it
            params = prepare(t.parameters, ignore=options.ignore, lenient=options.lenient,
                             leap_seconds=options.leap_seconds).schema
        except ToolcError:
            continue

        def overflows(schema, ptr: str, root=params) -> bool:
            sc = SchemaCompiler(options)
            sc.root = root
            try:
                compile_expr(sc._schema(schema, ptr), max_states=max_states)
            except BudgetExceededError:
                return True
            except ToolcError:      # the grammar accepts nothing, or a refusal: not a blow-up
                return False
            return False

        ptr = budget.locate_overflow(params, overflows)
        if ptr is not None:
            return e.located(file=source, tool=t.name,
                             pointer_prefix=t.schema_pointer + ptr)
    return e.located(file=source)


def _public_signature() -> None:
    """``help(toolc.compiler.compile_tools)`` shows every option, as ``toolc.compile_tools``
    does (both take the CompileOptions fields as keywords)."""
    import inspect

    from . import compile_tools as public
    compile_tools.__signature__ = inspect.signature(public)


_public_signature()
