"""Regular expressions over bytes and special symbols, and the byte-level DFA they compile to."""

from .alphabet import Alphabet
from .dfa import ByteDFA, compile_expr
from .expr import (ALL_BYTES, EMPTY, NOTHING, Alt, Avoid, Bytes, Expr, Graph, Repeat, Seq,
                   Subseq, Sym, Tagged,
                   alt, alt_factored, byte_range, byte_set, lit, opt, plus, seq, star)

__all__ = ["Alphabet", "ByteDFA", "compile_expr", "ALL_BYTES", "EMPTY", "NOTHING", "Alt", "Avoid",
           "Bytes", "Expr", "Graph", "Repeat", "Seq", "Subseq", "Sym", "Tagged", "alt",
           "alt_factored", "byte_range", "byte_set",
           "lit", "opt", "plus", "seq", "star"]
