"""toolc/literals.py: the JSON fast way for a call's arguments agrees with the token reader
(its slow twin) on every input: the same arguments and end, or both a ParseError. The
inputs are tricky bodies written out, and Python values rendered by ``repr``."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolc import literals
from toolc.errors import ParseError


def _both(text: str, positional: bool):
    """(the reader's answer with the fast way, without it); an answer is a value or the
    string 'ParseError'."""
    out = []
    for fast in (True, False):
        saved = literals._fast_call
        if not fast:
            literals._fast_call = lambda *a: None
        try:
            out.append(literals.python_call_at(text, 0, positional))
        except ParseError:
            out.append("ParseError")
        finally:
            literals._fast_call = saved
    return out


BODIES = [
    "a=1", "a=1, b='x'", "", " ", "a=1,", "a=1, a=2", "True=1", "a=true", "a=null",
    "a=NaN", "a=Infinity", "a=-Infinity", "a=1e999", "a=-1e999", "a=1e5", "a=1E+2", "a=-0.0",
    "a=00", "a=1_000", "a=.5", "a=1.", "a=+1", "a=0x10", "a=1j", "a=...", "a=b", "a==1",
    "a= 1", "a =1", "a\n=\n1", "'a'", "'a', 1", "'b', [b=1]", "b=[b=1]", "a={b=1}",
    "a={'b': 1, 'b': 2}", "a={1: 2}", "a={'k'}", "a=[1 2]", "a='x' 'y'", "a='x\\'y'",
    "a=\"it's\"", "a='say \"hi\"'", "a='\\u00e9'", "a='\\ud800'", "a='\t'", "a='\x00'",
    "a=(1,)", "a=()", "a=(1, 2)", "a=[[[]]]", "a={'k': [None, True, False]}", "a='é🙂'",
    "a=[" * 3 + "]" * 3, "a=" + "[" * 600 + "]" * 600, "a=1" + "0" * 5000, "a='a)b'",
    "a=')'", "é=1", "a1=1, _b=2", "a=r'x'", "a=b'x'", "a=u'x'", "a=f'x'", "x", "1",
    "a=1, 'b'", "a=1 b=2", "a=1,, b=2", "a=- 1", "a=-1", "a=[1, -2.5e-3]", "a={\"k\": 1}",
    "a=None, b=False", "isTrue=1", "None_=1", "a=Trueish", "a=1true", "a=1None",
    "a=" + "[" * 512 + "]" * 512, "a=" + "[" * 513 + "]" * 513, "a=[" + "[], " * 600 + "]",
    "a=[" + "{}, " * 600 + "], b=" + "[" * 513 + "]" * 513,
]


@pytest.mark.parametrize("body", BODIES)
@pytest.mark.parametrize("positional", [False, True])
def test_the_fast_way_agrees_with_the_reader(body, positional):
    fast, slow = _both(f"f({body})", positional)
    assert fast == slow


def test_the_fast_way_is_taken_for_plain_calls():
    """Not a fallback in disguise: the common call is read by the JSON way."""
    text = "f(city='Paris', days=3, units=['c', 'f'], opts={'wind': True, 'x': None})"
    assert literals._fast_call(text, 2, False) == (
        {"city": "Paris", "days": 3, "units": ["c", "f"], "opts": {"wind": True, "x": None}},
        len(text))
    assert literals._fast_call("f('a', 1, None)", 2, True) == (["a", 1, None], 15)
    wide = "f(a=[" + ", ".join(["{'k': []}"] * 600) + "])"   # many brackets, shallow
    assert literals._fast_call(wide, 2, False) == ({"a": [{"k": []}] * 600}, len(wide))
    huge = "f(a='" + "x" * (literals.CHUNK * 20) + "')"      # one piece, however long
    assert literals._fast_call(huge, 2, False) == ({"a": "x" * (literals.CHUNK * 20)},
                                                   len(huge))
    many = "f(a=[" + ", ".join(["{'k': 'v, w', 'n': None}"] * (literals.CHUNK // 10)) + "])"
    assert list(literals._pieces(many, 2, len(many) - 1))[1:], "cut in pieces"
    assert literals._fast_call(many, 2, False)[0] == {
        "a": [{"k": "v, w", "n": None}] * (literals.CHUNK // 10)}


#: strings full of commas, quotes' parity, names and words inside strings, at every cut
PIECES = ["a='x, y', b=[', ', 'True, None=1', 1], c={'k,': None, 'b=': [True, 'a=1']}",
          "a=[" + "'a,b', " * 40 + "], b='" + "," * 50 + "', c=None",
          "'p, q', ['r=1, s', None], {'t': 'u,'}, False", "a=1, b=NaN, c='x,y'"]


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 16])
@pytest.mark.parametrize("positional", [False, True])
def test_the_fast_way_in_small_pieces_agrees_with_the_reader(monkeypatch, chunk, positional):
    monkeypatch.setattr(literals, "CHUNK", chunk)
    for body in PIECES + BODIES:
        fast, slow = _both(f"f({body})", positional)
        assert fast == slow, body
    text = f"f({PIECES[0]})"
    assert literals._fast_call(text, 2, False) is not None, "the JSON way, in pieces"
    cuts = list(literals._pieces(text, 2, len(text) - 1))
    assert len(cuts) > 3 and cuts[0][0] == 2 and cuts[-1][1] == len(text) - 1
    assert all(b == c for (_, b), (c, _) in zip(cuts, cuts[1:]))
    assert all(text.count("'", 2, b) % 2 == 0 and text[b - 1] == "," for _, b in cuts[:-1])


_scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20),
                     st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=6),
                     st.sampled_from(["", "'", '"', "\\", ")", "(", "=", "x=1", "True", "\n"]))
_values = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.tuples(inner, inner),
    st.dictionaries(st.one_of(st.text(max_size=3), st.integers(0, 3)), inner, max_size=3)),
    max_leaves=8)
_names = st.from_regex(r"[a-zA-Z_][a-zA-Z0-9_]{0,4}", fullmatch=True)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_names, _values), max_size=4), st.booleans(),
       st.sampled_from([literals.CHUNK, 1, 5, 12]))
def test_rendered_values_read_the_same_both_ways(args, positional, chunk):
    if positional:
        body = ", ".join(repr(v) for _, v in args)
    else:
        body = ", ".join(f"{k}={v!r}" for k, v in args)
    saved, literals.CHUNK = literals.CHUNK, chunk      # the JSON way in pieces of `chunk`
    try:
        fast, slow = _both(f"f({body})", positional)
    finally:
        literals.CHUNK = saved
    assert fast == slow
