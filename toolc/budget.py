"""Compile budgets: the limits checked during a compile, and the blame when one is hit.

A hostile or careless tools file must fail in seconds, naming the tool and the JSON pointer
that caused the blow-up, instead of hanging a deploy. Every budget error is a
:class:`~toolc.errors.BudgetExceededError` whose ``stage`` says which guard stopped it:

* **A deadline** (``timeout`` seconds, the CLI's ``--timeout``; stage ``deadline``).
  :func:`deadline` installs it for the current thread; :func:`check` is called at a few points
  of the pipeline (per subschema, every 1,024 automaton nodes, every 256 determinized states,
  per minimization round, per trie level of the vocabulary walk). ``check`` costs one
  thread-local lookup, so the hooks stay in the hot loops.
* **A recursion bound** on schema nesting (:data:`MAX_SCHEMA_NESTING` levels of subschemas,
  :func:`check_nesting`; stage ``nesting``); a deeply nested or self-referencing schema is
  refused with its pointer rather than blowing Python's stack.
* **The state budget** (``max_states``; stage ``automaton``). Each tool's argument expression
  is sized as it is compiled (:func:`toolc.fsm.size.nfa_size`, without building it), so a
  subschema that alone needs more than the NFA budget is refused at its own pointer
  (:func:`check_subschema`); the whole grammar is sized before it is built
  (:func:`check_nfa_size`); construction stops past its node and state budgets.
* **The walk's budget** (stage ``walk``, :func:`check_walk`): token runs, or triples at one
  trie level, past ``max_states`` x :data:`WALK_FACTOR`.

**Blame.** When the whole grammar outgrows a budget, :func:`blame` names the tool whose
automaton is largest, :func:`blame_walk` the schema with the longest length bound (a bounded
string costs the walk a state per character), and :func:`locate_overflow` descends into the
schema part that alone passes the budget. This module imports only :mod:`toolc.errors` and
:mod:`toolc.pointer`: the compiler hands it what it needs (sizes, a trial compile) as plain
values and functions.
"""

from __future__ import annotations

import re
import threading
import time
from contextlib import contextmanager

from .errors import BudgetExceededError
from .options import spelled
from .pointer import esc

MAX_SCHEMA_NESTING = 48      # subschema levels below a tool's parameters
MAX_JSON_NESTING = 96        # JSON levels (objects and arrays) in one tool's parameters
# the NFA budget is max_states * NFA_FACTOR (as in fsm.dfa); real tool sets need 2-3 NFA
# states per minimized DFA state (schemas/tools80: 45,873 for 17,177)
NFA_FACTOR = 4
# subset construction stops at max_states * DFA_FACTOR states before minimization; real tool
# sets build about 1.5 per minimized state (schemas/tools80: 25,888 for 17,177)
DFA_FACTOR = 2
# the vocabulary walk stops past max_states * WALK_FACTOR token runs (or triples at one trie
# level). Real tool sets make 35 to 45 runs per state (schemas/tools80: 656k for 17,177
# states; 500 generated tools: 2.0M for 45,349); a bounded string makes thousands, as each of
# its character positions is a state of its own that most tokens leave for another
# (maxLength 100: 11M runs, 2 GB at the peak; maxLength 1000 would take 110M runs and 14 GB)
WALK_FACTOR = 250

_local = threading.local()


class _Deadline:
    __slots__ = ("end", "seconds")

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.end = time.monotonic() + seconds


@contextmanager
def deadline(seconds: float | None):
    """Install a wall-clock deadline of ``seconds`` for this thread (None or 0: none)."""
    prev = getattr(_local, "deadline", None)
    if seconds is not None and seconds < 0:
        raise ValueError(f"timeout must be positive, got {seconds}")
    _local.deadline = _Deadline(float(seconds)) if seconds else None
    try:
        yield _local.deadline
    finally:
        _local.deadline = prev


def check(stage: str, pointer: str | None = None) -> None:
    """Raise BudgetExceededError if this thread's deadline has passed."""
    d = getattr(_local, "deadline", None)
    if d is not None and time.monotonic() > d.end:
        raise BudgetExceededError(
            f"compile timed out after {d.seconds:g} s while {stage}", pointer=pointer,
            fix=f"raise {spelled('timeout', None)}, or simplify the schema named here",
            stage="deadline")


def check_node(n: int, limit: int | None) -> None:
    """Called for each automaton node built (``n`` counts them): the deadline every 1,024
    nodes, and the node budget of ``limit``."""
    if not n & 0x3FF:
        check("building the automaton")
    if limit is not None and n > limit:
        raise BudgetExceededError(
            f"the automaton needs more than {limit:,} NFA states; raise max_states or "
            "simplify the schema (long bounded repetitions and large maxItems are the usual "
            "cause)")


def check_walk(count: int, limit: int | None, what: str = "token runs") -> None:
    """The vocabulary walk's budget: refuse ``count`` runs (or triples) past ``limit``."""
    if limit is not None and count > limit:
        # about 130 bytes a run at the peak (maxLength 1000: 14 GB for 110M runs)
        size = f" (over {count * 130 / 1e9:.1f} GB)" if what == "token runs" else ""
        raise BudgetExceededError(
            f"the vocabulary walk needs more than {limit:,} {what}{size}; raise max_states, "
            "or shorten the bounds of the schema named here (a long maxLength, or a counted "
            "repetition in a pattern, makes a state per character position, each walked on "
            "its own)", stage="walk")


def longest_bound(params) -> tuple[str, int] | None:
    """The JSON pointer (within ``params``) of the schema with the largest string length bound
    and that bound, or None: a ``maxLength``, or a counted repetition ``{m,n}`` / ``{n}`` in a
    ``pattern``. Each character position up to such a bound is a state the vocabulary walk
    visits on its own, so when the walk's budget runs out, that is the part to name.
    Iterative, like :func:`too_deep`."""
    best = None
    stack = [(params, "")]
    while stack:
        v, ptr = stack.pop()
        if isinstance(v, dict):
            bound = v.get("maxLength")
            if type(bound) is int:
                cand = bound
            else:
                cand = None
            pat = v.get("pattern")
            if isinstance(pat, str):
                counts = [int(x) for x in re.findall(r"\{(?:\d+,)?(\d+)\}", pat)]
                if counts and (cand is None or max(counts) > cand):
                    cand = max(counts)
            if cand is not None and (best is None or cand > best[1]):
                best = (ptr, cand)
            items = ((esc(k), x) for k, x in v.items())
        elif isinstance(v, list):
            items = ((str(i), x) for i, x in enumerate(v))
        else:
            continue
        stack.extend((x, f"{ptr}/{k}") for k, x in items)
    return best


def remaining() -> float | None:
    """Seconds left before this thread's deadline, or None without one."""
    d = getattr(_local, "deadline", None)
    return None if d is None else d.end - time.monotonic()


def too_deep(value, limit: int = MAX_JSON_NESTING) -> str | None:
    """The JSON pointer of the first container nested deeper than ``limit`` levels in
    ``value``, or None. Iterative, so hostile nesting cannot exhaust Python's stack."""
    stack = [(value, "", 1)]
    while stack:
        v, ptr, depth = stack.pop()
        if isinstance(v, dict):
            items = ((esc(k), x) for k, x in v.items())
        elif isinstance(v, list):
            items = ((str(i), x) for i, x in enumerate(v))
        else:
            continue
        if depth > limit:
            return ptr
        stack.extend((x, f"{ptr}/{k}", depth + 1) for k, x in items)
    return None


def check_nfa_size(size: int, max_states: int | None) -> None:
    """Refuse, before building anything, a grammar whose NFA (of ``size`` states, from
    :func:`toolc.fsm.size.nfa_size`) exceeds the budget."""
    if max_states is not None and size > max_states * NFA_FACTOR:
        raise BudgetExceededError(
            f"the automaton needs {size:,} NFA states, over the budget of "
            f"{max_states * NFA_FACTOR:,} ({NFA_FACTOR} x max_states)",
            fix=f"raise {spelled('max_states', None)}, or lower the bounds (maxLength, "
                "maxItems, enum size, max_calls) of the schema named here")


def check_nesting(level: int, limit: int | None, ptr: str) -> None:
    """Refuse a subschema ``level`` levels deep when that is ``limit`` or more."""
    if limit is not None and level >= limit:
        raise BudgetExceededError(
            f"schema nested more than {limit} levels deep (or a reference cycle)",
            pointer=ptr, fix="flatten the schema", stage="nesting")


def check_subschema(size: int, max_states: int | None, ptr: str) -> None:
    """Refuse, at its own pointer, a subschema whose automaton alone (``size`` NFA states)
    exceeds the NFA budget."""
    if max_states is not None and size > max_states * NFA_FACTOR:
        raise BudgetExceededError(
            f"this schema needs {size:,} automaton states, over the budget of "
            f"{max_states * NFA_FACTOR:,} ({NFA_FACTOR} x max_states)", pointer=ptr,
            fix=f"raise {spelled('max_states', None)}, or lower the bounds (maxLength, "
                "maxItems, enum size) of this schema")


def blame(error: BudgetExceededError, sizes: list[tuple[str, str, int]], file: str | None):
    """``error`` located at the tool with the largest automaton; ``sizes`` holds
    (tool name, parameters pointer, NFA size) for every tool."""
    if not sizes or error.tool is not None:
        return error.located(file=file)
    name, ptr, size = max(sizes, key=lambda s: s[2])
    share = f"the largest automaton ({size:,} NFA states"
    share += f" of {sum(s[2] for s in sizes):,})" if len(sizes) > 1 else ")"
    return error.with_message(f"{error.message}; this tool has {share}",
                              file=error.file or file, tool=name, pointer=ptr)


def blame_walk(error: BudgetExceededError, tools, file: str | None):
    """The walk's budget error, naming the schema with the longest length bound (a bounded
    string costs the walk a state per character) when a tool has one, else None. ``tools``
    are :class:`toolc.tools.Tool` values (``name``, ``pointer``, ``parameters``)."""
    found = []
    for t in tools:
        hit = longest_bound(t.parameters)
        if hit is not None:
            found.append((hit[1], t, hit[0]))
    if not found:
        return None
    bound, tool, ptr = max(found, key=lambda f: f[0])
    return error.with_message(
        f"{error.message}; it has the longest length bound of the tools, {bound:,} "
        "characters", file=error.file or file, tool=tool.name,
        pointer=tool.schema_pointer + ptr)


def _children(schema, ptr: str):
    """The parts of a schema a blow-up may hide in, with their pointers."""
    if not isinstance(schema, dict):
        return
    for name, sub in (schema.get("properties") or {}).items():
        yield sub, f"{ptr}/properties/{esc(name)}"
    if isinstance(schema.get("items"), dict):
        yield schema["items"], f"{ptr}/items"
    for i, sub in enumerate(schema.get("prefixItems") or []):
        yield sub, f"{ptr}/prefixItems/{i}"
    for key in ("anyOf", "oneOf", "allOf"):
        for i, sub in enumerate(schema.get(key) or []):
            yield sub, f"{ptr}/{key}/{i}"
    if isinstance(schema.get("additionalProperties"), dict):
        yield schema["additionalProperties"], f"{ptr}/additionalProperties"


def locate_overflow(parameters, overflows) -> str | None:
    """Which part of a schema blew the state budget, found only after a compile has failed:
    the pointer (relative to ``parameters``) of the deepest part that alone overflows, "" for
    the whole schema, or None when the schema alone fits.

    ``overflows(schema, ptr)`` compiles one part under the budget and says whether it passes
    it (the compiler supplies it). The search descends into the first part (properties,
    items, prefix items, anyOf/oneOf/allOf branches, additionalProperties) that overflows;
    every trial stops as soon as it passes the budget, so the search costs about as much as
    the failed compile did."""
    if not overflows(parameters, ""):
        return None
    schema, ptr = parameters, ""
    while True:
        for sub, sub_ptr in _children(schema, ptr):
            if overflows(sub, sub_ptr):
                schema, ptr = sub, sub_ptr
                break
        else:
            return ptr
