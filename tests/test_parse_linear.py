"""Parsing is linear in every format, checked without a clock: the text is a ``str`` subclass
that counts the characters its Python-level methods examine (``find`` up to where it stops,
``startswith``, slices, ``strip``, ``in``, ``split``, ``replace``...), and the slices it hands
out count too. A parser that re-searches or re-slices the rest of the text per call examines
about n²/2 characters and fails; a linear one examines a small multiple of n.

What is not counted: anchored regex matches and ``json`` decoding at a position, which
examine only what they consume (an unanchored ``re.search`` over the rest would escape this
test; the parsers use none). The documents are bench/parse_bench.py's, rendered for every
registered format.
"""

from __future__ import annotations

from importlib.util import module_from_spec, spec_from_file_location
from pathlib import Path

import pytest

from toolc import literals
from toolc import parse as parse_module
from toolc.parse import parse_tool_calls

# bench/parse_bench.py, loaded by path: bench/ on sys.path would shadow packages (its
# modules are not packages)
_spec = spec_from_file_location("parse_bench", Path(__file__).resolve().parents[1] / "bench"
                                / "parse_bench.py")
parse_bench = module_from_spec(_spec)
_spec.loader.exec_module(parse_bench)
ARGS, CUSTOM, TOOLS = parse_bench.ARGS, parse_bench.CUSTOM, parse_bench.TOOLS
all_formats, document = parse_bench.all_formats, parse_bench.document

SEEN = [0]      # characters examined since the last reset


def _span(n: int, start, end) -> tuple[int, int]:
    start, end, _ = slice(start, end).indices(n)
    return start, end


class Counted(str):
    """A str whose methods add the characters they examine to SEEN; what they return that
    is text is Counted too."""

    def find(self, sub, start=None, end=None):
        i = str.find(self, sub, start, end)
        lo, hi = _span(len(self), start, end)
        SEEN[0] += (i + len(sub) - lo) if i >= 0 else max(hi - lo, 0)
        return i

    def index(self, sub, start=None, end=None):
        i = self.find(sub, start, end)
        if i < 0:
            raise ValueError("substring not found")
        return i

    def rfind(self, sub, start=None, end=None):
        i = str.rfind(self, sub, start, end)
        lo, hi = _span(len(self), start, end)
        SEEN[0] += (hi - i) if i >= 0 else max(hi - lo, 0)
        return i

    def startswith(self, prefix, start=None, end=None):
        SEEN[0] += max(map(len, prefix)) if isinstance(prefix, tuple) else len(prefix)
        return str.startswith(self, prefix, start, end)

    def endswith(self, suffix, start=None, end=None):
        SEEN[0] += max(map(len, suffix)) if isinstance(suffix, tuple) else len(suffix)
        return str.endswith(self, suffix, start, end)

    def __contains__(self, sub):
        i = str.find(self, sub)
        SEEN[0] += i + len(sub) if i >= 0 else len(self)
        return i >= 0

    def __getitem__(self, key):
        out = str.__getitem__(self, key)
        SEEN[0] += len(out)
        return Counted(out)

    def _whole(self, out):
        SEEN[0] += len(self)
        return Counted(out) if isinstance(out, str) else out

    def strip(self, chars=None):
        out = str.strip(self, chars)
        SEEN[0] += len(self) - len(out) + 1
        return Counted(out)

    def lstrip(self, chars=None):
        out = str.lstrip(self, chars)
        SEEN[0] += len(self) - len(out) + 1
        return Counted(out)

    def rstrip(self, chars=None):
        out = str.rstrip(self, chars)
        SEEN[0] += len(self) - len(out) + 1
        return Counted(out)

    def split(self, *a, **k):
        return self._whole(str.split(self, *a, **k))

    def replace(self, *a):
        return self._whole(str.replace(self, *a))

    def count(self, sub, start=None, end=None):
        lo, hi = _span(len(self), start, end)       # the range it is given, no more
        SEEN[0] += max(hi - lo, 0)
        return str.count(self, sub, start, end)

    def __add__(self, other):
        out = str.__add__(self, other)
        SEEN[0] += len(out)
        return Counted(out)


def examined(fmt: str, size: int, shape: str) -> tuple[int, int]:
    """(characters examined, characters in the text) to parse ``size`` characters of calls."""
    text = Counted(document(fmt, size, shape))
    SEEN[0] = 0
    out = parse_tool_calls(text, format=CUSTOM if fmt == "custom" else fmt, tools=TOOLS)
    args = out["parsed"][-1]["arguments"]
    values = list(args.values())
    assert ARGS in (args, dict(zip(ARGS, values)), values[0][-1]), args   # all was read
    return SEEN[0], len(text)


def linear(fmt: str, shape: str = "many") -> tuple[bool, str]:
    """Quadrupling the text at most quadruples the work, with a little slack, and the work is
    a bounded multiple of the text."""
    (small, n1), (big, n2) = examined(fmt, 20_000, shape), examined(fmt, 80_000, shape)
    ok = big <= 1.1 * small * n2 / n1 + 1_000 and big <= 12 * n2
    return ok, f"{fmt} ({shape}): {small} characters examined for {n1}, {big} for {n2}"


@pytest.mark.parametrize("fmt", all_formats())
@pytest.mark.parametrize("shape", ["many", "one"])
def test_parsing_examines_a_linear_number_of_characters(monkeypatch, fmt, shape):
    # long Python argument lists are translated in pieces of literals.CHUNK characters:
    # small pieces here, so that both sizes are cut (not one piece against many)
    monkeypatch.setattr(literals, "CHUNK", 4096)
    ok, why = linear(fmt, shape)
    assert ok, why


def test_the_counter_catches_a_quadratic_parser(monkeypatch):
    """The checker fails on the quadratic custom-format parser of before: with the name
    after the arguments, the suffix (found only at the end) searched for again per call."""
    spec = dict(CUSTOM, call="{arguments}@{name}")
    call = '{"city": "Paris", "days": 3}@get_weather'

    def work(n: int) -> int:
        text = Counted("<calls>" + "|".join([call] * n) + "</calls>")
        SEEN[0] = 0
        assert len(parse_tool_calls(text, format=spec)["tool_calls"]) == n
        return SEEN[0]

    assert work(400) <= 1.1 * 4 * work(100) + 1_000
    monkeypatch.setattr(parse_module, "_next_finder", lambda text: text.find)
    small, big = work(100), work(400)
    assert big > 1.1 * 4 * small + 1_000, (small, big)


def test_the_counter_catches_re_slicing_the_rest(monkeypatch):
    """... and a parser that slices off the rest of the text per call (mistral's old way)."""
    real = parse_module._expect

    def expect(text, pos, lit, what):
        text[pos:].startswith(lit)        # the rest, copied per call
        return real(text, pos, lit, what)

    monkeypatch.setattr(parse_module, "_expect", expect)
    ok, why = linear("mistral")
    assert not ok, why
