"""The schema compiler under the compile budgets of :mod:`toolc.budget`.

A subclass, so the budgets need no hooks inside the keyword code: every subschema goes through
``_schema``, where the deadline is checked, nesting is bounded and the subschema's automaton is
sized against the NFA budget.
"""

from __future__ import annotations

from .. import budget
from ..errors import BudgetExceededError
from ..fsm import Expr
from .compile import SchemaCompiler


class BudgetedSchemaCompiler(SchemaCompiler):
    """A :class:`SchemaCompiler` that checks the deadline, bounds the nesting of subschemas and
    refuses, at its own pointer, any subschema whose automaton alone exceeds the NFA budget."""

    def __init__(self, options, *, max_states: int | None = None,
                 max_nesting: int = budget.MAX_SCHEMA_NESTING, memo: dict | None = None):
        super().__init__(options)
        self.nfa_budget = None if max_states is None else max_states * budget.NFA_FACTOR
        self.max_nesting = max_nesting
        self._level = 0
        self._memo: dict = {} if memo is None else memo    # expression sizes (budget.nfa_size)

    def _schema(self, schema, ptr: str) -> Expr:
        budget.check("compiling this schema", pointer=ptr)
        if self._level >= self.max_nesting:
            raise BudgetExceededError(
                f"schema nested more than {self.max_nesting} levels deep (or a reference "
                "cycle)", pointer=ptr, fix="flatten the schema")
        self._level += 1
        try:
            expr = super()._schema(schema, ptr)
        finally:
            self._level -= 1
        if self.nfa_budget is not None:
            size = budget.nfa_size(expr, self._memo)
            if size > self.nfa_budget:
                raise BudgetExceededError(
                    f"this schema needs {size:,} automaton states, over the budget of "
                    f"{self.nfa_budget:,} ({budget.NFA_FACTOR} x max_states)", pointer=ptr,
                    fix="raise --max-states, or lower the bounds (maxLength, maxItems, enum "
                        "size) of this schema")
        return expr
