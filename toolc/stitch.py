"""The DFA by stitching: each tool's block built once and kept, the framing built per set.

A tool's *block* is its arguments through the closing framing, up to the special token that
ends a call (hermes: ``ARGS}\n</tool_call>``). Where a format's framing reaches a block only
through that tool's name and leaves it only by that special token, the whole language is the
framing's with a placeholder symbol per block, each placeholder replaced by its block's
language. With a :class:`~toolc.toolcache.ToolCache`, :func:`stitched_dfa` builds:

- each block determinized (its strings closed in the grammar where the format keeps its tags
  out of them) and minimized once, kept in the cache by content (the format, its options
  that shape a block, the argument Expr's value), free of any set's alphabet (its own byte
  classes over the 256 bytes, its symbols by name);
- the framing (free text, trigger, name trie, separators, EOS) with placeholders, per set;
- their union: each framing state whose only edge is a placeholder takes its block's start
  row, the block's closing edge leads where the placeholder led. The alphabet is the
  coarsest refinement of the parts' byte classes (the classes the whole grammar's masks
  give: a partition by masks is the common refinement of the partitions by each part's
  masks); the union is then trimmed, minimized and numbered canonically as any DFA.

The minimal DFA of a language is unique and :func:`toolc.fsm.minimize.reduce_table` numbers
it canonically over a given alphabet, so the result is the whole grammar's DFA array for
array: the same language over the same alphabet (``tests/test_stitch.py`` compares both on
random tool sets and option sets). A block built alone costs more than its share of the
whole grammar's construction (some 10 ms against 4 on tools80), so a compile without a
cache, which would keep nothing, builds the whole grammar; so do formats without blocks
(a trigger in plain text, calls that end without a special token), tools with counted
regions, and anything refused or over a budget (the whole path words those errors):
:func:`stitched_dfa` returns None for them.
"""

from __future__ import annotations

import contextlib
import contextvars
import zlib
from dataclasses import dataclass

import numpy as np

from .errors import BudgetExceededError, EmptyLanguageError
from .formats.base import PLACEHOLDER, chosen_tools
from .fsm import Alphabet, ByteDFA, Sym, compile_expr
from .fsm.minimize import reduce_table
from .fsm.trim import trimmed
from .fsm.dfa import AmbiguousCountError

_ON: contextvars.ContextVar[bool] = contextvars.ContextVar("toolc_stitch", default=True)
#: DFAs stitched in this process (the tests check that the path was taken)
_stats = {"stitched": 0}


@dataclass(frozen=True)
class Block:
    """A tool's block, minimized, free of any set's alphabet."""

    byte_class: np.ndarray      # int32[256]: the block's own byte classes
    trans: np.ndarray           # int32[states, classes + symbols]; -1: none
    symbols: tuple[str, ...]    # the symbol columns' names, in column order
    start: int                  # the state after the opening symbol
    exit: np.ndarray            # bool[states]: the state after the closing symbol
    sig: np.ndarray             # int64[states]: each state's last round (_signatures)
    start_sig: np.ndarray       # int64[rounds + 1]: the start's every round


def stitched_dfa(fmt, exprs, vocab, fopts, max_states: int | None, cache):
    """The DFA of ``fmt``'s grammar over ``exprs`` ((tool, argument Expr) pairs), stitched
    from blocks (see the module docstring), the grammar's special symbols, and where each
    block's states went (a list of (Block, int64[block states]: the DFA's state, -1: none));
    None where this format or set takes the whole path."""
    if cache is None or not hasattr(fmt, "stitch_block") or not _ON.get():
        return None
    exprs = chosen_tools(exprs, fopts)
    if not exprs:
        return None
    names: dict = {}        # argument Expr -> placeholder
    blocks: dict = {}       # placeholder -> Block
    parts = []
    for t, args in exprs:
        block = _block(fmt, t, args, max_states, cache)
        if block is None:
            return None
        sym = names.setdefault(args, PLACEHOLDER + str(len(names)))
        parts.append((t, Sym(sym)))
        blocks[sym] = block
    # the framing, kept by what shapes it: the names, which tools share a block, the options
    # and the vocabulary (its special tokens, its spellings of tags in plain text)
    key = ("framing", type(fmt), getattr(fmt, "closed_strings", None),
           tuple((t.name, p.name) for t, p in parts), fopts, vocab.name, vocab.fingerprint,
           max_states)
    got = cache.get_block(key)
    if got is None:
        grammar, symbols = fmt.grammar(parts, vocab, fopts)
        try:
            # as the subset construction made it: the union is minimized anyway (the
            # framing's own minimization cost about half its compile)
            frame = compile_expr(grammar, max_states=max_states, reduce=False)
            # its dead ends cut: equivalent states must hash alike (_framing_signatures)
            got = (ByteDFA(frame.alphabet, *trimmed(frame.trans, frame.final)), symbols)
        except (BudgetExceededError, EmptyLanguageError):
            return None
        cache.put_block(key, got, got[0].trans.nbytes + 1024)
    frame, symbols = got
    try:
        got = _union(frame, blocks, getattr(fmt, "unspelled_within", lambda: None)(),
                     max_states)
    except EmptyLanguageError:
        return None         # the whole path words it
    if got is None:
        return None
    _stats["stitched"] += 1
    return got[0], dict(symbols), got[1]


def stats() -> dict:
    """How many DFAs were stitched in this process."""
    return dict(_stats)


@contextlib.contextmanager
def whole_path():
    """Build every DFA from the whole grammar, as before stitching (for the tests that
    compare the two paths)."""
    token = _ON.set(False)
    try:
        yield
    finally:
        _ON.reset(token)


def _block(fmt, tool, args, max_states, cache) -> Block | None:
    """``args``'s block, from ``cache`` or built and kept there (a block built once passed
    the refusals its arguments could meet: they depend on the arguments alone)."""
    key = ("block", type(fmt), getattr(fmt, "closed_strings", None), args)
    got = cache.get_block(key)
    if got is not None:
        return got
    expr = fmt.stitch_block(tool, args)
    try:
        dfa = compile_expr(expr, max_states=max_states)
    except (BudgetExceededError, EmptyLanguageError, AmbiguousCountError):
        return None
    if dfa.tags is not None:
        return None
    a = dfa.alphabet
    opener = [s for s in a.symbols if int(dfa.trans[0, a.symbol_index(s)]) >= 0]
    if dfa.final[0] or len(opener) != 1 or (dfa.trans[0] >= 0).sum() != 1 or \
            (dfa.trans[dfa.final] >= 0).any():
        return None
    start = int(dfa.trans[0, a.symbol_index(opener[0])])
    sig = _signatures(a, dfa.trans, dfa.final)
    block = Block(a.byte_class, dfa.trans, a.symbols, start, dfa.final, sig[-1].copy(),
                  sig[:, start].copy())
    for arr in (block.byte_class, block.trans, block.exit, block.sig, block.start_sig):
        arr.flags.writeable = False
    cache.put_block(key, block, block.trans.nbytes + block.sig.nbytes + 1024)
    return block


#: odd 64-bit multipliers per byte and per round (a fixed sequence: signatures are compared
#: across blocks and compiles)
_W = (np.arange(1, 2 * 256 + 2, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)) | \
    np.uint64(1)
#: rounds of the signatures: the union's states of different blocks that 16 rounds left
#: together split at depths of 17 to 43 (a request's set: 66 refinement rounds), and a round
#: costs a block some 20 us, once
_ROUNDS = 48
_EXIT, _STATE = 3, 5


def _edge_weights(a: Alphabet, trans: np.ndarray, rows: np.ndarray | None = None):
    """The edges of ``trans`` (of its ``rows`` only, if given) as a signature reads them:
    (where each state's edges start, whether it has any, targets, weights). An edge weighs
    what it reads: the sum of its class's bytes' weights, a symbol's by its name."""
    nc = a.num_byte_classes
    w = np.zeros(a.size, dtype=np.uint64)
    with np.errstate(over="ignore"):
        np.add.at(w, a.byte_class.astype(np.int64), _W[:256])
        for i, name in enumerate(a.symbols):
            w[nc + i] = np.uint64(zlib.crc32(name.encode("utf-8"))) * _W[256] | np.uint64(1)
    live = trans >= 0
    if rows is not None:
        live[~rows] = False
    src, col = np.nonzero(live)              # row-major: src sorted
    starts = np.searchsorted(src, np.arange(len(trans)))
    has = np.zeros(len(trans), dtype=bool)
    has[src] = True
    return starts[has], has, trans[src, col].astype(np.int64), w[col]


def _round(sig: np.ndarray, edges, r: int) -> np.ndarray:
    """One round: a state's hash times the round's multiplier, plus its edges' weights
    times their targets' hashes (the same sums, mod 2**64, in any order)."""
    starts, has, to, weight = edges
    with np.errstate(over="ignore"):
        out = sig * _W[257 + r]
        if len(to):
            out[has] += np.add.reduceat(sig[to] * weight, starts)
    return out


def _signatures(a: Alphabet, trans: np.ndarray, exit: np.ndarray) -> np.ndarray:
    """int64[_ROUNDS + 1, states]: each state's hash of what ``r`` steps from it read, round
    by round, over the 256 bytes and the symbols by name (not the block's classes or
    numbering), the closing edge's target (the exit) standing for whatever follows the
    block. Equal on states of equal languages, in any block and in the union (the framing's
    states are hashed alike there, :func:`_union`): a valid starting partition for the
    union's minimization (a collision only starts two states together, which the refinement
    then splits)."""
    edges = _edge_weights(a, trans)
    sig = np.where(exit, np.uint64(_EXIT), np.uint64(_STATE)).astype(np.uint64)
    out = [sig]
    for r in range(_ROUNDS):
        sig = _round(sig, edges, r)
        out.append(sig)
    return np.stack(out).view(np.int64)


def refined_classes(*byte_classes: np.ndarray) -> tuple[np.ndarray, int]:
    """The coarsest partition of the bytes that refines each of ``byte_classes``, numbered
    by first byte (as :meth:`toolc.fsm.Alphabet.from_masks` numbers the classes of the
    union of the parts' masks)."""
    sig = np.zeros(256, dtype=np.int64)
    for bc in byte_classes:
        _, inv = np.unique(sig * 257 + bc, return_inverse=True)
        sig = inv.reshape(-1).astype(np.int64)
    _, first, inv = np.unique(sig, return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    return rank[inv.reshape(-1)].astype(np.int32), len(first)


def _columns(byte_class: np.ndarray, nc_own: int, symbols: tuple,
             alphabet: Alphabet) -> np.ndarray:
    """For each column of ``alphabet``, the part's column that reads the same (-1: none)."""
    rep = np.zeros(alphabet.num_byte_classes, dtype=np.int64)
    rep[alphabet.byte_class[::-1]] = np.arange(256)[::-1]
    sym = [nc_own + symbols.index(s) if s in symbols else -1 for s in alphabet.symbols]
    return np.concatenate([byte_class[rep].astype(np.int64), np.array(sym, dtype=np.int64)])


def _take(trans: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """``trans`` read through ``cols`` (-1: no edge)."""
    out = trans[:, np.maximum(cols, 0)]
    out[:, cols < 0] = -1
    return out


def _framing_signatures(alphabet: Alphabet, table: np.ndarray, holders: np.ndarray,
                        fixed: np.ndarray) -> np.ndarray:
    """The framing states' last round of :func:`_signatures` in the union: their edges lead
    to framing states and holders, whose rounds ``fixed`` holds (int64[rounds + 1, holders]:
    a holder reads on as its block's start). The framing has no closing edge of its own."""
    rows = np.ones(len(table), dtype=bool)
    rows[holders] = False                   # holders' rows (their blocks' starts) not read
    edges = _edge_weights(alphabet, table, rows)
    fixed = fixed.view(np.uint64)
    cur = np.full(len(table), _STATE, dtype=np.uint64)
    cur[holders] = fixed[0]
    for r in range(_ROUNDS):
        cur = _round(cur, edges, r)
        cur[holders] = fixed[r + 1]
    return cur.view(np.int64)


def _union(frame: ByteDFA, blocks: dict, within, max_states) -> ByteDFA | None:
    """The framing with each placeholder replaced by its block (see the module docstring),
    trimmed, minimized and numbered canonically; None where the framing reaches a
    placeholder otherwise than as a state's only edge."""
    fa = frame.alphabet
    nc_f = fa.num_byte_classes
    ph = [s for s in fa.symbols if s.startswith(PLACEHOLDER)]
    # the blocks the grammar holds (tool_choice none holds none: their bytes make no class)
    blocks = {s: b for s, b in blocks.items() if s in ph}
    parts = [fa.byte_class] + [b.byte_class for b in blocks.values()]
    if within is not None:      # the tags' bytes have classes of their own (unspelled_within)
        tag_bytes = np.zeros(256, dtype=np.int32)
        tag_bytes[[c for t in within[0] for c in t]] = 1
        parts.append(np.where(tag_bytes > 0, np.arange(256), -1).astype(np.int32))
    byte_class, nc = refined_classes(*parts)
    symbols = {s for s in fa.symbols if not s.startswith(PLACEHOLDER)}
    for b in blocks.values():
        symbols.update(b.symbols)
    alphabet = Alphabet(byte_class, nc, tuple(sorted(symbols)))
    # the framing's states with a placeholder edge: each must have that edge alone
    pcols = np.array([fa.symbol_index(s) for s in ph], dtype=np.int64)
    ptab = frame.trans[:, pcols]
    holders = np.flatnonzero((ptab >= 0).any(axis=1))
    if ((frame.trans[holders] >= 0).sum(axis=1) != 1).any() or frame.final[holders].any():
        return None
    rows = [_take(frame.trans, _columns(fa.byte_class, nc_f, fa.symbols, alphabet))]
    n = frame.num_states
    # the minimization starts from the states' signatures: the blocks' kept, the holders'
    # their block's start's, the framing's computed here the same way
    hints = [np.zeros(n, dtype=np.int64)]
    fixed = np.zeros((_ROUNDS + 1, len(holders)), dtype=np.int64)     # holders' rounds
    starts: dict[tuple, tuple] = {}     # (placeholder, where it led) -> (rows, start)
    placed: list = []                   # (block, its first row in the table)
    closing = np.zeros(alphabet.size, dtype=bool)     # the columns closing edges read
    for i, q in enumerate(holders.tolist()):
        k = int(np.flatnonzero(ptab[q] >= 0)[0])
        inst = (ph[k], int(ptab[q, k]))
        if inst not in starts:
            b = blocks[ph[k]]
            own = b.trans.shape[1] - len(b.symbols)
            t = _take(b.trans, _columns(b.byte_class, own, b.symbols, alphabet))
            t = t.astype(np.int64)
            into_exit = (t >= 0) & b.exit[np.maximum(t, 0)]
            closing |= into_exit.any(axis=0)
            t = np.where(t >= 0, t + n, -1)
            t[into_exit] = inst[1]
            rows.append(t.astype(np.int32))
            hints.append(b.sig)
            starts[inst] = (len(rows) - 1, b.start)
            placed.append((b, n))
            n += len(t)
        j, s0 = starts[inst]
        rows[0][q] = rows[j][s0]          # the state reads on as its block's start
        fixed[:, i] = blocks[ph[k]].start_sig
    final = np.zeros(n, dtype=bool)
    final[:frame.num_states] = frame.final
    # a signature reads a block's closing edge as leading to its exit: sound only where
    # nothing else leads where the blocks' closing edges do (true of hermes' framing). The
    # framing is not minimized (a state equivalent to a closing edge's target could stand
    # beside it), so no framing edge may read what a closing edge reads either: then no
    # framing state is equivalent to a block's (every word of a block's state reads it)
    others = np.delete(rows[0], holders, axis=0)
    if np.isin(others, [z for _, z in starts]).any() or \
            (others[:, np.flatnonzero(closing)] >= 0).any():
        return None
    table = np.concatenate(rows)
    hints[0] = _framing_signatures(alphabet, table[:frame.num_states], holders, fixed)
    trans, final, at = reduce_table(table, final, hint=np.concatenate(hints), where=True)
    if max_states is not None and trans.shape[0] > max_states:
        return None
    return ByteDFA(alphabet, trans, final), \
        [(b, at[k:k + len(b.trans)]) for b, k in placed]
