"""``allOf`` as the intersection of its branches. A mixin of
:class:`~toolc.schema.compile.SchemaCompiler`.

Two constructions, each exact:

* **The merge** (:func:`toolc.schema.refs.merge`): one schema of the same keywords that means
  every branch at once (types intersect, bounds tighten, ``required`` lists unite,
  ``properties`` merge name by name, ...). It is tried first: it is cheaper, and an object keeps
  one key order, so a value the branches share is still written in one order.
* **The product**: where two branches hold keywords no single schema of the same keywords
  means (two ``format``s, two ``multipleOf``s, two ``contains``, two ``oneOf``s, two different
  ``$ref``s ...), each JSON type the branches share is built on its own: every branch restricted
  to that type is compiled alone and the automata are intersected (the product construction of
  :mod:`toolc.schema.automata`, under its state budget). The languages are text languages, and
  a text both accept is a value both admit (sound); each branch holds the model's spelling of
  every value it admits, so the value both admit is kept (complete). Objects are the exception:
  each branch would write its keys in its own order, so objects are always merged, and a
  property whose schemas conflict becomes an ``allOf`` of its own, built the same way one level
  down. Objects whose own keywords conflict are refused with the pointer.
"""

from __future__ import annotations

from ..errors import UnsupportedSchemaError
from ..fsm import Expr, alt
from .algebra import kinds, type_set
from .automata import intersect
from .refs import MergeConflict, merge

_KINDS = ("null", "boolean", "string", "number", "array", "object")


class AllOfSchemas:
    """``allOf`` (reached from ``_resolved`` of :class:`~toolc.schema.compile.SchemaCompiler`)."""

    def _all_of(self, schema: dict, ptr: str) -> Expr:
        rest = {k: v for k, v in schema.items() if k != "allOf"}
        parts = [rest] + [self._flat(b, f"{ptr}/allOf/{i}")
                          for i, b in enumerate(schema["allOf"])]
        try:
            merged = self._merged(parts, ptr)
        except MergeConflict:
            return self._product(parts, ptr)
        return self._schema(merged, ptr)

    @staticmethod
    def _merged(parts: list, ptr: str):
        out = parts[0]
        for p in parts[1:]:
            out = merge(out, p, ptr)
        return out

    def _product(self, parts: list, ptr: str) -> Expr:
        """The values every part admits, one JSON type at a time."""
        shared = set(_KINDS)
        for p in parts:
            shared &= kinds(type_set(p))
        out = []
        for kind in _KINDS:
            if kind not in shared:
                continue
            only = [self._restricted(p, kind) for p in parts]
            if any(x is False for x in only):
                continue
            if kind == "object":
                try:
                    merged = self._merged(only, ptr)
                except MergeConflict as e:
                    raise UnsupportedSchemaError(
                        f"'allOf' over objects needs one key order, and its branches cannot be "
                        f"merged into one object: {e.message}", pointer=e.pointer or ptr,
                        fix=e.fix or "keep the conflicting keyword in one branch") from None
                out.append(self._or_nothing(merged, ptr))
                continue
            exprs = [self._or_nothing(x, ptr) for x in only]
            out.append(intersect(*exprs))
        return alt(*out)
