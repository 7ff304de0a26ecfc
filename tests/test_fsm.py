"""toolc/fsm/: the Expr AST, Thompson NFA, subset construction, trim, minimization, alphabet."""

from __future__ import annotations

import itertools
import random
from collections import deque

import numpy as np
import pytest

from toolc.errors import BudgetExceededError, EmptyLanguageError
from toolc.fsm import (ALL_BYTES, EMPTY, NOTHING, Alphabet, Avoid, Bytes, Graph, Repeat, Subseq,
                       Sym, alt, alt_factored, byte_range, byte_set, compile_expr, lit, opt, plus,
                       seq, star)
from toolc.fsm import minimize as dfa_module
from toolc.fsm import trim as trim_module
from toolc._reference import minimize as ref_min
from toolc.fsm.size import nfa_size

EOS = Sym("EOS")


def dfa_of(expr, **kw):
    return compile_expr(seq(expr, EOS), **kw)


def accepts(d, data: bytes | str) -> bool:
    if isinstance(data, str):
        data = data.encode("utf-8")
    q = d.step_symbol(d.step_bytes(0, data), "EOS")
    return q >= 0 and bool(d.final[q])


def strings(alphabet: bytes, max_len: int):
    for n in range(max_len + 1):
        for t in itertools.product(alphabet, repeat=n):
            yield bytes(t)


# -- the AST helpers --------------------------------------------------------------------------

def test_byte_set_and_range():
    assert byte_set(b"ab") == (1 << 97) | (1 << 98)
    assert byte_set("ab") == byte_set(b"ab") == byte_set([97, 98])
    assert byte_range(0x30, 0x39) == byte_set(b"0123456789")
    assert byte_range(0, 255) == ALL_BYTES


def test_constructors_flatten_and_absorb():
    a, b = lit("a"), lit("b")
    assert seq(a, EMPTY, b) == lit("ab")
    assert seq(a, NOTHING) == NOTHING
    assert alt(a, alt(b, a)) == alt(a, b)
    assert alt(a, NOTHING) == a
    assert lit("é") == seq(Bytes(1 << 0xC3), Bytes(1 << 0xA9))


def test_literals_alternatives_and_options():
    d = dfa_of(seq(lit("ab"), opt(lit("c")), alt(lit("x"), lit("yz"))))
    for s, ok in [("abx", True), ("abcx", True), ("abyz", True), ("abcyz", True),
                  ("ab", False), ("abcc", False), ("abxyz", False), ("", False)]:
        assert accepts(d, s) == ok, s


def test_byte_sets_cover_non_ascii_bytes():
    d = dfa_of(plus(Bytes(byte_range(0x80, 0xFF))))
    assert accepts(d, b"\x80\xff\xc3")
    assert not accepts(d, b"\x7f")
    assert not accepts(d, b"")


# -- Subseq -----------------------------------------------------------------------------------

@pytest.mark.parametrize("required", list(itertools.product([False, True], repeat=3)))
def test_subseq_every_subset_in_order(required):
    d = dfa_of(seq(lit("{"), Subseq((lit("a"), lit("b"), lit("c")), required, lit(",")),
                   lit("}")))
    must = {x for x, r in zip("abc", required) if r}
    for n in range(4):
        for items in itertools.permutations("abc", n):
            text = "{" + ",".join(items) + "}"
            in_order = list(items) == sorted(items)
            assert accepts(d, text) == (in_order and must <= set(items)), text
    assert not accepts(d, "{a,,b}")
    assert not accepts(d, "{,a}")
    assert not accepts(d, "{a,}")
    assert not accepts(d, "{ab}")


def test_subseq_has_linear_size():
    # 12 optional items in order: a subset automaton, not 2**12 states
    items = tuple(lit(chr(ord("a") + i) * 2) for i in range(12))
    d = dfa_of(Subseq(items, (False,) * 12, lit(",")))
    assert d.num_states < 100
    assert accepts(d, "aa,cc,ll") and accepts(d, "") and not accepts(d, "cc,aa")


def test_subseq_of_nothing_is_empty():
    d = dfa_of(seq(lit("{"), Subseq((), (), lit(",")), lit("}")))
    assert accepts(d, "{}") and not accepts(d, "{,}")


# -- Avoid ------------------------------------------------------------------------------------

TAGS = (b"<tool_call>", b"</tool_call>")


@pytest.mark.parametrize("text, ok", [
    (b"", True), (b"hello world", True), (b"<tool_call>", False), (b"</tool_call>", False),
    (b"say <tool_call> now", False), (b"<<tool_call>", False), (b"<</tool_call>", False),
    (b"<tool_call<tool_call>", False), (b"<tool_cal<tool_call>", False),
    (b"</tool_call</tool_call>", False), (b"<tool_call></tool_call>", False),
    (b"<tool_call", True), (b"</tool_call", True), (b"<", True), (b"<<", True),
    (b"tool_call>", True), (b"<tool-call>", True), (b"<tool_call >", True),
    (b"< tool_call>", True), (b"<tool_call\n>", True), (b"<TOOL_CALL>", True),
    (b"\xff\x00\xe6\x97<\xc3", True), (b"\x00<tool_call>\x00", False),
])
def test_avoid_tool_call_tags(text, ok):
    d = dfa_of(Avoid(TAGS))
    assert accepts(d, text) == ok


@pytest.mark.parametrize("patterns", [(b"<a>", b"</a>"), (b"abab", b"bc"), (b"aa",),
                                      (b"a", b"ba"), (b"ab", b"b"), (b"aba", b"bab", b"<")])
def test_avoid_exhaustively(patterns):
    d = dfa_of(Avoid(patterns))
    alphabet = bytes(sorted(set(b"".join(patterns)) | {ord("z")}))
    max_len = max(n for n in range(12) if len(alphabet) ** n <= 4096)
    n = 0
    for s in strings(alphabet, max_len):
        assert accepts(d, s) == (not any(p in s for p in patterns)), s
        n += 1
    assert n > 1000


def test_avoid_random_patterns_agree_with_brute_force():
    rng = random.Random(20240611)
    for _ in range(30):
        patterns = tuple(bytes(rng.choice(b"xy<") for _ in range(rng.randint(1, 4)))
                         for _ in range(rng.randint(1, 3)))
        d = dfa_of(Avoid(patterns))
        for _ in range(200):
            s = bytes(rng.choice(b"xy<z") for _ in range(rng.randint(0, 10)))
            assert accepts(d, s) == (not any(p in s for p in patterns)), (patterns, s)


def test_avoid_then_a_symbol():
    # free text, then the trigger as a symbol: its spelling in the text is still refused
    d = compile_expr(seq(Avoid(TAGS), Sym("<tool_call>"), lit("x"), EOS))
    q = d.step_bytes(0, b"hello <tool_call")
    q = d.step_symbol(q, "<tool_call>")
    assert d.step_symbol(d.step_bytes(q, b"x"), "EOS") >= 0
    assert d.step_bytes(0, b"hi <tool_call>") == -1


def test_avoid_the_empty_pattern_admits_nothing():
    d = dfa_of(alt(lit("x"), Avoid((b"",))))
    assert accepts(d, "x")
    assert not accepts(d, "")
    assert not accepts(d, "y")


# -- Repeat -----------------------------------------------------------------------------------

@pytest.mark.parametrize("lo, hi", [(0, None), (1, None), (3, None), (0, 0), (0, 1), (1, 1),
                                    (2, 4), (4, 4), (2, 1)])
def test_repeat_bounds(lo, hi):
    d = dfa_of(alt(lit("#"), Repeat(lit("ab"), lo, hi)))
    for n in range(8):
        ok = lo <= n and (hi is None or n <= hi)
        assert accepts(d, "ab" * n) == ok, n
    assert accepts(d, "#")
    assert not accepts(d, "aba")


@pytest.mark.parametrize("lo, hi", [(0, None), (1, None), (3, None), (0, 0), (0, 1), (1, 1),
                                    (1, 3), (2, 4), (4, 4), (2, 1)])
def test_separated_repeat_bounds_and_size(lo, hi):
    """``Repeat(item, lo, hi, sep)`` is ``item (sep item)*`` within the count bounds, and
    nfa_size predicts its NFA exactly."""
    from toolc._reference.nfa import NFA
    e = Repeat(alt(lit("ab"), lit("c")), lo, hi, lit(", "))
    d = dfa_of(alt(lit("#"), e))
    for n in range(7):
        ok = lo <= n and (hi is None or n <= hi)
        assert accepts(d, ", ".join((["ab", "c"] * 4)[:n])) == ok, n
    assert not accepts(d, "ab, ") and not accepts(d, ", ab") and not accepts(d, "abc")
    nfa = NFA()
    nfa.build(e)
    assert len(nfa.eps) == nfa_size(e) + 2


def test_alt_factored_is_alt_with_shared_tails():
    """Alternatives that differ only in their leading bytes share one copy of the rest; the
    language is unchanged."""
    tail = seq(star(alt(lit("x"), lit("yz"))), lit("!"))
    items = [seq(lit("a"), tail), seq(lit("ab"), tail), seq(lit("b"), star(lit("x"))),
             lit("ab"), seq(lit("c"), tail, lit("?"))]
    plain, factored = dfa_of(alt(*items)), dfa_of(alt_factored(*items))
    for w in strings(b"abcxyz!?", 5):
        assert accepts(plain, w) == accepts(factored, w), w
    assert np.array_equal(plain.trans, factored.trans)
    assert nfa_size(alt_factored(*items)) < nfa_size(alt(*items))


def test_repeat_of_something_that_may_be_empty():
    d = dfa_of(star(opt(lit("a"))))
    assert all(accepts(d, "a" * n) for n in range(5))
    d = dfa_of(Repeat(opt(lit("a")), 2, 3))
    assert [accepts(d, "a" * n) for n in range(5)] == [True, True, True, True, False]


def test_star_and_plus():
    assert [accepts(dfa_of(star(lit("ab"))), "ab" * n) for n in range(3)] == [True] * 3
    assert [accepts(dfa_of(plus(lit("ab"))), "ab" * n) for n in range(3)] == [False, True, True]


# -- special symbols --------------------------------------------------------------------------

def test_a_symbol_is_never_matched_by_its_spelling():
    d = compile_expr(seq(Sym("<tool_call>"), lit("x"), EOS))
    assert d.step_bytes(0, b"<tool_call>") == -1
    q = d.step_symbol(0, "<tool_call>")
    assert q > 0 and accepts_from(d, q, b"x")
    assert d.step_symbol(0, "</tool_call>") == -1      # not in the alphabet at all
    assert d.step_symbol(-1, "<tool_call>") == -1


def accepts_from(d, q, data):
    q = d.step_symbol(d.step_bytes(q, data), "EOS")
    return q >= 0 and bool(d.final[q])


# -- minimization and canonical numbering -----------------------------------------------------

EQUIVALENT = [
    (alt(lit("ab"), lit("ac")), seq(lit("a"), alt(lit("b"), lit("c")))),
    (star(lit("a")), alt(EMPTY, plus(lit("a")))),
    (Repeat(lit("a"), 2, None), seq(lit("aa"), star(lit("a")))),
    (Repeat(lit("a"), 0, 3), seq(opt(lit("a")), opt(lit("a")), opt(lit("a")))),
    # (a|b)*abb and (a*b)*a*abb
    (seq(star(alt(lit("a"), lit("b"))), lit("abb")),
     seq(star(seq(star(lit("a")), lit("b"))), star(lit("a")), lit("abb"))),
    (Subseq((lit("x"), lit("y")), (False, False), lit(",")),
     alt(EMPTY, lit("x"), lit("y"), lit("x,y"))),
]


@pytest.mark.parametrize("a, b", EQUIVALENT)
def test_equivalent_exprs_give_identical_dfas(a, b):
    da, db = dfa_of(a), dfa_of(b)
    assert np.array_equal(da.alphabet.byte_class, db.alphabet.byte_class)
    assert da.alphabet.symbols == db.alphabet.symbols
    assert np.array_equal(da.trans, db.trans)
    assert np.array_equal(da.final, db.final)


def test_minimal_size_of_a_known_language():
    # (a|b)*abb: the textbook minimal DFA has 4 states; plus one after EOS
    d = dfa_of(seq(star(alt(lit("a"), lit("b"))), lit("abb")))
    assert d.num_states == 5


def test_compiling_twice_is_deterministic():
    e = seq(Avoid(TAGS), opt(seq(Sym("<tool_call>"), Subseq(
        (lit('"a": 1'), lit('"b": [1, 2]')), (True, False), lit(", ")), Sym("</tool_call>"))))
    d1, d2 = dfa_of(e), dfa_of(e)
    assert d1.trans.tobytes() == d2.trans.tobytes()
    assert d1.final.tobytes() == d2.final.tobytes()
    assert d1.alphabet.byte_class.tobytes() == d2.alphabet.byte_class.tobytes()


def test_numbering_is_breadth_first_from_the_start():
    d = dfa_of(seq(alt(lit("ab"), lit("cd"), lit("e")), star(lit("f")), Sym("X")))
    seen, order, dq = {0}, [0], deque([0])
    while dq:
        q = dq.popleft()
        for r in d.trans[q]:
            if r >= 0 and int(r) not in seen:
                seen.add(int(r))
                order.append(int(r))
                dq.append(int(r))
    assert order == list(range(d.num_states))


def test_minimize_merges_equivalent_states():
    # states 1 and 2 have the same future: merged
    trans = np.array([[1, 2], [3, -1], [3, -1], [-1, -1]], dtype=np.int32)
    final = np.array([False, False, False, True])
    t, f, start = ref_min.minimize(trans, final)
    assert len(t) == 3
    assert t[start, 0] == t[start, 1]


# -- trim -------------------------------------------------------------------------------------

def co_reachable(d) -> np.ndarray:
    alive = d.final.copy()
    changed = True
    while changed:
        changed = False
        for q in range(d.num_states):
            if not alive[q] and any(r >= 0 and alive[r] for r in d.trans[q]):
                alive[q] = changed = True
    return alive


def test_trim_removes_dead_branches():
    dead = Bytes(0)   # an empty byte set: a branch that can never complete
    e = alt(lit("ab"), seq(lit("c"), dead), seq(lit("a"), Sym("S"), dead), lit("ad"))
    d = dfa_of(e)
    assert d.step_bytes(0, b"c") == -1
    assert d.step_symbol(d.step_bytes(0, b"a"), "S") == -1
    assert accepts(d, "ab") and accepts(d, "ad")
    assert co_reachable(d).all()
    assert d.num_states == 4


@pytest.mark.parametrize("expr", [seq(Avoid(TAGS), opt(seq(Sym("<tool_call>"), lit("x")))),
                                  alt(seq(lit("x"), Bytes(0)), plus(lit("y")),
                                      seq(lit("z"), star(lit("q")), Bytes(0)))])
def test_every_state_can_reach_a_final_state(expr):
    d = dfa_of(expr)
    assert co_reachable(d).all()


def test_a_grammar_that_accepts_nothing_is_refused():
    with pytest.raises(EmptyLanguageError, match="accepts nothing"):
        dfa_of(seq(lit("x"), Bytes(0)))


def test_state_budget():
    e = Repeat(alt(lit("a"), lit("b")), 0, 40)
    assert dfa_of(e).num_states > 40
    with pytest.raises(BudgetExceededError, match="max_states"):
        dfa_of(e, max_states=10)


# -- the alphabet -----------------------------------------------------------------------------

def test_alphabet_from_masks():
    masks = [byte_set(b"a"), byte_set(b"ab"), byte_range(0x30, 0x39), byte_set(b"5z")]
    al = Alphabet.from_masks(masks, ["EOS", "<tool_call>", "EOS"])
    # classes: {a}, {b}, {0-4,6-9}, {5}, {z}, and everything else
    assert al.num_byte_classes == 6
    assert al.symbols == ("<tool_call>", "EOS")
    assert al.size == 8
    assert al.symbol_index("<tool_call>") == 6 and al.symbol_index("EOS") == 7
    # each mask is exactly a union of classes
    for m in masks:
        cover = set()
        for c in al.classes_of(m):
            cover |= set(al.class_bytes(c))
        assert cover == {b for b in range(256) if m >> b & 1}
    # bytes share a class iff every mask treats them alike
    for x, y in [(ord("0"), ord("9")), (ord("a"), ord("b")), (ord("5"), ord("6")),
                 (0, 255), (ord("c"), ord("!"))]:
        same = all((m >> x & 1) == (m >> y & 1) for m in masks)
        assert (al.byte_class[x] == al.byte_class[y]) == same
    assert sorted(b for c in range(al.num_byte_classes) for b in al.class_bytes(c)) == \
        list(range(256))
    assert al.describe(al.symbol_index("EOS")) == "EOS"
    assert al.describe(int(al.byte_class[ord("a")])) == "a"


def test_alphabet_numbering_is_canonical():
    a = Alphabet.from_masks([byte_set(b"xy"), byte_set(b"q")], ["B", "A"])
    b = Alphabet.from_masks([byte_set(b"q"), byte_set(b"xy"), byte_set(b"q")], ["A", "B"])
    assert np.array_equal(a.byte_class, b.byte_class)
    assert a.symbols == b.symbols == ("A", "B")
    assert a.byte_class[0] == 0     # classes numbered by their smallest byte


def test_dfa_alphabet_matches_its_labels():
    d = dfa_of(seq(Bytes(byte_range(0x61, 0x7A)), lit("1")))
    al = d.alphabet
    assert len({int(al.byte_class[b]) for b in range(0x61, 0x7B)}) == 1
    assert al.byte_class[ord("1")] != al.byte_class[ord("a")]
    assert al.byte_class[ord("2")] == al.byte_class[0xFF]
    assert d.trans.shape == (d.num_states, al.size)
    assert al.symbols == ("EOS",)


def test_incremental_refinement_matches_full_moore_on_random_dfas():
    import numpy as np
    from toolc._reference import minimize as D
    rng = np.random.default_rng(7)
    for trial in range(40):
        n, a = int(rng.integers(2, 60)), int(rng.integers(1, 5))
        trans = rng.integers(-1, n, size=(n, a)).astype(np.int32)
        final = rng.random(n) < 0.3
        p1, c1 = D._refine_sparse(trans, final)
        p2, c2 = D._refine_incremental(trans, final)
        assert c1 == c2 and np.array_equal(p1, p2), trial
        assert D._stable(trans, final, p2)


# -- the position automaton against the Thompson NFA -------------------------------------------

def _random_expr(rng, depth: int):
    """A random expression over a small alphabet, every node kind included."""
    kind = rng.choice(["lit", "lit", "set", "sym", "seq", "alt", "rep", "sep", "subseq", "avoid",
                       "graph"] if depth > 0 else ["lit", "set", "sym", "empty"])
    sub = lambda: _random_expr(rng, depth - 1)   # noqa: E731
    if kind == "lit":
        return lit(bytes(rng.choice(b"abc") for _ in range(rng.randint(1, 3))))
    if kind == "set":
        return Bytes(byte_set(bytes(rng.sample(b"abcd", rng.randint(1, 3)))))
    if kind == "sym":
        return Sym(rng.choice(["S", "T"]))
    if kind == "empty":
        return EMPTY
    if kind == "seq":
        return seq(*(sub() for _ in range(rng.randint(2, 3))))
    if kind == "alt":
        return alt(*(sub() for _ in range(rng.randint(2, 3))))
    if kind in ("rep", "sep"):
        lo = rng.randint(0, 2)
        hi = rng.choice([None, lo, lo + 1, lo + 2, max(lo - 1, 0)])
        return Repeat(sub(), lo, hi, sub() if kind == "sep" else None)
    if kind == "subseq":
        k = rng.randint(0, 3)
        return Subseq(tuple(sub() for _ in range(k)), tuple(rng.random() < 0.4 for _ in range(k)),
                      rng.choice([lit(","), EMPTY, sub()]))
    if kind == "avoid":
        return Avoid(tuple(bytes(rng.choice(b"abc") for _ in range(rng.randint(1, 2)))
                           for _ in range(rng.randint(1, 2))))
    n = rng.randint(1, 4)   # a graph, its edges labelled by bytes or sub-expressions
    edges = tuple((rng.randrange(n), rng.choice([Bytes(byte_set(rng.choice(["a", "b", "cd"]))),
                                                  sub()]), rng.randrange(n))
                  for _ in range(rng.randint(1, 5)))
    return Graph(n, 0, tuple(sorted(rng.sample(range(n), rng.randint(1, n)))), edges)


def test_position_automaton_matches_thompson_on_random_exprs():
    """compile_expr (shared position automaton) and the Thompson-NFA twin build the same
    minimized, canonically numbered DFA: the language and the numbering depend only on the
    expression."""
    from toolc._reference.thompson import compile_expr_thompson
    rng = random.Random(20261122)
    checked = 0
    for _ in range(400):
        e = seq(_random_expr(rng, 3), EOS)
        try:
            a = compile_expr_thompson(e)
        except (BudgetExceededError, EmptyLanguageError) as refused:
            with pytest.raises(type(refused)):
                compile_expr(e)
            continue
        b = compile_expr(e)
        assert np.array_equal(a.alphabet.byte_class, b.alphabet.byte_class), e
        assert a.alphabet.symbols == b.alphabet.symbols, e
        assert np.array_equal(a.trans, b.trans) and np.array_equal(a.final, b.final), e
        checked += 1
    assert checked > 300


# -- trim + minimize + canonical numbering against plain references ----------------------------

def _plain_reduce(trans, final):
    """Trim, Moore refinement on whole rows and queue-based BFS numbering, in plain Python."""
    n, a = trans.shape
    rows = [[int(x) for x in r] for r in trans]
    alive = [bool(f) for f in final]
    changed = True
    while changed:
        changed = False
        for q in range(n):
            if not alive[q] and any(r >= 0 and alive[r] for r in rows[q]):
                alive[q] = changed = True
    if not n or not alive[0]:
        return None
    rows = [[r if r >= 0 and alive[r] else -1 for r in row] if alive[q] else [-1] * a
            for q, row in enumerate(rows)]
    block = [int(bool(f)) for f in final]
    while True:
        sigs = {}
        new = [sigs.setdefault((block[q], tuple(block[r] if r >= 0 else -1 for r in rows[q])),
                               len(sigs)) for q in range(n)]
        if len(sigs) == len(set(block)):
            break
        block = new
    rep = {}
    for q in range(n):
        rep.setdefault(block[q], q)
    ids, queue = {block[0]: 0}, [block[0]]
    for b in queue:
        for r in rows[rep[b]]:
            if r >= 0 and block[r] not in ids:
                ids[block[r]] = len(queue)
                queue.append(block[r])
    t = np.array([[ids[block[r]] if r >= 0 else -1 for r in rows[rep[b]]] for b in queue],
                 dtype=np.int32).reshape(len(queue), a)
    return t, np.array([bool(final[rep[b]]) for b in queue])


def _random_tables(seed, count):
    """Random partial DFAs: plain random tables, and ones with copied rows and literal-like
    chains sharing suffixes (many equivalent states, distinguished late)."""
    rng = np.random.default_rng(seed)
    for trial in range(count):
        n, a = int(rng.integers(1, 70)), int(rng.integers(1, 6))
        if trial % 3 == 0:
            trans = rng.integers(-1, n, size=(n, a)).astype(np.int32)
            final = rng.random(n) < 0.3
        else:
            # chains of single-symbol steps into a few shared tails, some rows copied
            trans = np.full((n, a), -1, dtype=np.int32)
            final = np.zeros(n, dtype=bool)
            final[n - 1] = True
            for q in range(n - 1):
                for _ in range(int(rng.integers(1, 3))):
                    trans[q, int(rng.integers(a))] = int(rng.integers(q + 1, n))
            for _ in range(int(rng.integers(0, n // 2 + 1))):
                q, r = int(rng.integers(n)), int(rng.integers(n))
                trans[q] = trans[r]
                final[q] = final[r]
            if trial % 3 == 2:
                loops = rng.random((n, a)) < 0.05
                trans[loops] = rng.integers(0, n, size=int(loops.sum()))
        yield trial, trans, final


# the refinement's rounds in numpy (_FEW = 0) or grouped in Python from the first (10 ** 9)
ROUNDS = pytest.mark.parametrize("few", [0, 10 ** 9])


@ROUNDS
def test_reduce_table_matches_plain_moore_and_the_step_by_step_pipeline(few, monkeypatch):
    monkeypatch.setattr(dfa_module, "_FEW", few)
    # the incremental refinement is right by itself: its dense fallback is never needed
    monkeypatch.setattr(dfa_module, "_refine", lambda *a: pytest.fail("dense fallback"))
    merged = 0
    for trial, trans, final in _random_tables(11, 300):
        want = _plain_reduce(trans, final)
        if want is None:
            with pytest.raises(EmptyLanguageError, match="accepts nothing"):
                dfa_module.reduce_table(trans, final)
            continue
        t, f = dfa_module.reduce_table(trans, final)
        assert np.array_equal(t, want[0]) and np.array_equal(f, want[1]), trial
        t2, f2 = ref_min.trim(trans, final)
        t2, f2, s2 = ref_min.minimize(t2, f2)
        t2, f2 = ref_min.canonical(t2, f2, s2)
        assert np.array_equal(t, t2) and np.array_equal(f, f2), trial
        merged += len(t) < int(ref_min._co_reachable(dfa_module._edges(trans), final).sum())
    assert merged > 50     # the tables do exercise merging


@ROUNDS
def test_incremental_refinement_matches_moore_on_chain_tables(few, monkeypatch):
    monkeypatch.setattr(dfa_module, "_FEW", few)
    for trial, trans, final in _random_tables(12, 200):
        p1, c1 = ref_min._refine_sparse(trans, final)
        p2, c2 = dfa_module._refine_incremental(trans, final)
        assert c1 == c2 and np.array_equal(p1, p2), trial


def test_chain_hashes_are_equal_on_equivalent_states_and_split_chains():
    # the refinement's starting partition may merge inequivalent states (a collision), never
    # separate equivalent ones: the chain hashes must be a function of a state's language
    split = 0
    for trial, trans, final in _random_tables(15, 200):
        edges = dfa_module._edges(trans)
        rev = dfa_module._by_dst(edges[2], len(final))
        dist = dfa_module._distances(edges, final, rev)
        if (dist < 0).any():
            trans, edges, rev = dfa_module._cut_edges(trans, dist >= 0, edges, rev)
        h = dfa_module._chain_hashes(final, edges, dist.astype(np.uint64))
        part, _ = ref_min._refine_sparse(trans, final)
        live = np.flatnonzero(dist >= 0)
        for b in np.unique(part[live]):
            members = live[part[live] == b]
            assert len(set(h[members].tolist())) == 1, trial
        # and it tells apart states the distances alone do not
        pairs = {(int(d), int(x)) for d, x in zip(dist[live], h[live])}
        split += len(pairs) > len(set(dist[live].tolist()))
    assert split > 30


def test_stability_check_matches_the_dense_definition():
    rng = np.random.default_rng(13)
    for trial, trans, final in _random_tables(13, 150):
        n = len(final)
        good, _ = ref_min._refine_sparse(trans, final)
        assert dfa_module._stable(trans, final, good)
        # merge two blocks, or split one: usually no longer a congruence
        for part in (np.where(good == good[rng.integers(n)], good[rng.integers(n)], good),
                     np.where(np.arange(n) == rng.integers(n), good.max() + 1, good)):
            _, part = np.unique(part, return_inverse=True)
            part = part.reshape(-1)
            succ = np.where(trans >= 0, part[np.maximum(trans, 0)], -1)
            reps = np.zeros(part.max() + 1, dtype=np.int64)
            reps[part] = np.arange(n)
            dense = bool(np.array_equal(succ, succ[reps[part]])
                         and np.array_equal(final, final[reps[part]]))
            assert dfa_module._stable(trans, final, part) == dense, trial


def test_reduce_table_survives_a_wrong_refinement(monkeypatch):
    # a refinement that merged too much (as a hash collision would): the stability check
    # must notice, and the exact refinement must give the right table
    def too_coarse(trans, final, *args):
        return final.astype(np.int64), int(final.any()) + int((~final).any())

    cases = [(t, f) for _, t, f in _random_tables(14, 60) if _plain_reduce(t, f) is not None]
    monkeypatch.setattr(dfa_module, "_refine_incremental", too_coarse)
    wrong = 0
    for trans, final in cases:
        want = _plain_reduce(trans, final)
        wrong += len(want[0]) > 2
        t, f = dfa_module.reduce_table(trans, final)
        assert np.array_equal(t, want[0]) and np.array_equal(f, want[1])
    assert wrong > 10


def test_compiling_leaves_the_garbage_collector_as_it_found_it():
    import gc
    was = gc.isenabled()
    try:
        for state in (True, False):
            (gc.enable if state else gc.disable)()
            dfa_of(lit("ab"))
            assert gc.isenabled() is state
            with pytest.raises(EmptyLanguageError):
                dfa_of(seq(lit("x"), Bytes(0)))
            assert gc.isenabled() is state
    finally:
        (gc.enable if was else gc.disable)()


def test_alphabet_matches_a_plain_definition_on_random_masks():
    rng = random.Random(31)
    for trial in range(300):
        masks = [rng.getrandbits(256) & rng.getrandbits(256) if rng.random() < 0.5 else
                 ((1 << rng.randint(1, 40)) - 1) << rng.randint(0, 216)
                 for _ in range(rng.randint(0, 12))]
        al = Alphabet.from_masks(masks, [])
        # classes numbered by first appearance of each byte's membership signature
        want: dict[tuple, int] = {}
        for b in range(256):
            sig = tuple(m >> b & 1 for m in sorted(set(masks)))
            assert al.byte_class[b] == want.setdefault(sig, len(want)), trial
        assert al.num_byte_classes == len(want)
        for m in masks + [0, (1 << 256) - 1]:
            assert al.classes_of(m) == tuple(sorted({int(al.byte_class[b]) for b in range(256)
                                                     if m >> b & 1})), trial


@pytest.mark.parametrize("which", ["positions", "thompson"])
def test_both_automata_refuse_past_their_node_budget(which):
    from toolc._reference.nfa import NFA
    from toolc.fsm.positions import FINAL, Positions
    expr = lit("x" * 50)
    with pytest.raises(BudgetExceededError, match="more than 20 NFA states"):
        if which == "positions":
            Positions(max_nodes=20).build(expr, frozenset((FINAL,)))
        else:
            NFA(max_states=20).build(expr)
    # with room, the same expression builds
    if which == "positions":
        Positions(max_nodes=200).build(expr, frozenset((FINAL,)))
    else:
        NFA(max_states=200).build(expr)


@pytest.mark.parametrize("narrow", [0, 10 ** 9])
def test_distances_match_a_plain_search_and_trimmed_drops_only_dead_ends(narrow, monkeypatch):
    # every level read in numpy (0) or in Python (10 ** 9): the same distances
    monkeypatch.setattr(trim_module, "_NARROW", narrow)
    dead_seen = 0
    for trial, trans, final in _random_tables(13, 150):
        n = len(final)
        want = [0 if f else -1 for f in final.tolist()]
        queue = deque(q for q in range(n) if final[q])
        while queue:
            q = queue.popleft()
            for p in range(n):
                if want[p] < 0 and (trans[p] == q).any():
                    want[p] = want[q] + 1
                    queue.append(p)
        got = dfa_module._distances(dfa_module._edges(trans), final)
        assert got.tolist() == want, trial
        t, f = trim_module.trimmed(trans, final)
        alive = got >= 0
        if not alive[0]:
            continue
        dead_seen += int((~alive).sum())
        # the live states' rows, in order, their edges into dead states gone
        keep = np.flatnonzero(alive)
        assert np.array_equal(f, final[keep]), trial
        for i, q in enumerate(keep.tolist()):
            row = [int(np.flatnonzero(keep == x)[0]) if x >= 0 and alive[x] else -1
                   for x in trans[q].tolist()]
            assert t[i].tolist() == row, trial
    assert dead_seen > 20        # the tables do have dead ends
