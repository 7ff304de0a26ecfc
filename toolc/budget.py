"""Compile budgets: a wall-clock deadline, a recursion bound, and blame for the state budget.

A hostile or careless tools file must fail in seconds, naming the tool and the JSON pointer
that caused the blow-up, instead of hanging a deploy. Three guards:

* **A deadline** (``timeout`` seconds, the CLI's ``--timeout``). :func:`deadline` installs it
  for the current thread; :func:`check` is called at a few points of the pipeline (per
  subschema, every 1,024 NFA states, every 256 determinized states, per trie level of the
  vocabulary walk) and raises :class:`~toolc.errors.BudgetExceededError` once it has passed.
  ``check`` costs one thread-local lookup, so the hooks stay in the hot loops.
* **A recursion bound** on schema nesting (:data:`MAX_SCHEMA_NESTING` levels of subschemas),
  enforced by :class:`toolc.schema.budgeted.BudgetedSchemaCompiler`; a deeply nested or self-referencing schema is
  refused with its pointer rather than blowing Python's stack.
* **Blame for the state budget.** Each tool's argument expression is sized (its Thompson NFA
  state count, computed without building it) as it is compiled, so a subschema that alone needs
  more than the NFA budget is refused at its own pointer. When the whole grammar outgrows the
  budget or the deadline later on, :func:`blame` names the tool whose automaton is largest.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager

from .errors import BudgetExceededError
from .fsm.expr import Alt, Avoid, Bytes, Expr, Graph, Repeat, Seq, Subseq, Sym

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
            fix="raise --timeout, or simplify the schema named here")


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
            "its own)")


def longest_bound(params) -> tuple[str, int] | None:
    """The JSON pointer (within ``params``) of the schema with the largest string length bound
    and that bound, or None: a ``maxLength``, or a counted repetition ``{m,n}`` / ``{n}`` in a
    ``pattern``. Each character position up to such a bound is a state the vocabulary walk
    visits on its own, so when the walk's budget runs out, that is the part to name.
    Iterative, like :func:`too_deep`."""
    import re

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
            items = ((str(k).replace("~", "~0").replace("/", "~1"), x) for k, x in v.items())
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
            items = ((str(k).replace("~", "~0").replace("/", "~1"), x) for k, x in v.items())
        elif isinstance(v, list):
            items = ((str(i), x) for i, x in enumerate(v))
        else:
            continue
        if depth > limit:
            return ptr
        stack.extend((x, f"{ptr}/{k}", depth + 1) for k, x in items)
    return None


def nfa_size(expr: Expr, memo: dict | None = None) -> int:
    """The number of states :class:`toolc.fsm.nfa.NFA` adds for ``expr`` (without its own
    entry and exit), computed in time linear in the expression's distinct nodes."""
    memo = {} if memo is None else memo
    return _size(expr, memo)


def _size(e: Expr, memo: dict) -> int:
    if type(e) is Bytes or type(e) is Sym:
        return 0
    key = id(e)
    hit = memo.get(key)
    if hit is not None:
        return hit[0]
    if isinstance(e, Seq):
        n = len(e.items) - 1 if e.items else 0
        for it in e.items:
            if type(it) is not Bytes:
                n += _size(it, memo)
    elif isinstance(e, Alt):
        n = 2 * len(e.items) + sum(_size(it, memo) for it in e.items)
    elif isinstance(e, Repeat) and e.sep is not None:
        item, sep = _size(e.item, memo), _size(e.sep, memo)
        if (e.max is not None and e.max < e.min) or e.max == 0:
            n = 0
        elif e.max is None:
            k = max(e.min, 1) - 1
            n = k * (2 + item + sep) + 4 + item + sep
        else:
            k = max(e.min, 1) - 1
            n = k * (2 + item + sep) + 1 + item + (e.max - max(e.min, 1)) * (2 + item + sep)
    elif isinstance(e, Repeat):
        item = _size(e.item, memo)
        if e.max is not None and e.max < e.min:
            n = 0
        else:
            copies = e.min + (1 if e.max is None else e.max - e.min)
            n = e.min + (2 if e.max is None else e.max - e.min) + copies * item
    elif isinstance(e, Subseq):
        k = len(e.items)
        # each item's fragment, an "after" state per item, and one separator after every item
        # but the last (see NFA._subseq)
        n = sum(_size(it, memo) + 2 for it in e.items) + k \
            + max(k - 1, 0) * (_size(e.sep, memo) + 2)
    elif isinstance(e, Avoid):   # one state per proper prefix of the patterns
        n = len({p[:i] for p in e.patterns for i in range(len(p))})
    elif isinstance(e, Graph):   # its states, and a fragment (entry, exit) per non-byte label
        n = e.num_states + sum(2 + _size(label, memo) for _, label, _ in e.edges
                               if type(label) is not Bytes)
    else:  # pragma: no cover - a programming error
        raise TypeError(f"not an Expr: {e!r}")
    memo[key] = (n, e)   # keep e alive so its id is not reused
    return n


def check_nfa_size(expr: Expr, max_states: int | None, memo: dict | None = None) -> None:
    """Refuse, before building anything, an expression whose NFA exceeds the budget."""
    if max_states is None:
        return
    size = nfa_size(expr, memo)
    if size > max_states * NFA_FACTOR:
        raise BudgetExceededError(
            f"the automaton needs {size:,} NFA states, over the budget of "
            f"{max_states * NFA_FACTOR:,} ({NFA_FACTOR} x max_states)",
            fix="raise --max-states, or lower the bounds (maxLength, maxItems, enum size, "
                "max_calls) of the schema named here")


def blame(error: BudgetExceededError, sizes: list[tuple[str, str, int]], file: str | None):
    """``error`` located at the tool with the largest automaton; ``sizes`` holds
    (tool name, parameters pointer, NFA size) for every tool."""
    if not sizes or error.tool is not None:
        return error.located(file=file)
    name, ptr, size = max(sizes, key=lambda s: s[2])
    share = f"the largest automaton ({size:,} NFA states"
    share += f" of {sum(s[2] for s in sizes):,})" if len(sizes) > 1 else ")"
    out = type(error)(f"{error.message}; this tool has {share}", file=error.file or file,
                      tool=name, pointer=ptr, fix=error.fix)
    return out
