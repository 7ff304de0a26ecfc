"""Slow, obviously-correct twins of the fast code, used only by the tests to check it.

* :mod:`.walk`: the vocabulary walk, token by token and byte by byte (twin of
  :mod:`toolc.walk`).
* :mod:`.nfa` and :mod:`.thompson`: a Thompson NFA with epsilon closures and its subset
  construction (twin of :mod:`toolc.fsm.positions` and :func:`toolc.fsm.dfa.compile_expr`).
* :mod:`.minimize`: trimming, Moore minimization and canonical numbering as separate passes
  (twin of :func:`toolc.fsm.minimize.reduce_table`).

Nothing outside ``tests/`` imports this package.
"""
