"""``oneOf`` over object branches that may share a value: every branch written over one shared
key order, so that text-level exclusivity is value-level exclusivity.

A branch ``b`` keeps its objects that no other branch ``c`` admits by subtracting ``c``'s
automaton from ``b``'s (both narrowed to one spelling per scalar, :data:`~toolc.schema.canon.
CANON`). That is exact when ``c``'s language holds the very spelling ``b`` writes of each object
``c`` admits: the same keys in the same order, each value in its canonical spelling. So every
branch lists its properties in the shared order (the order in which the branches name them,
first branch first), and the subtracted branch must be *closed* (no key outside its
``properties``: ``additionalProperties`` false, or closed by default) with property schemas
that are themselves complete (scalars, enums, arrays of such), and nothing that builds its
objects from parts (``anyOf``, ``oneOf``, ``allOf``, ``not``, conditionals, ``$ref``,
``patternProperties``). Anything else goes to the negation rewrite of
:mod:`toolc.schema.negation`, or is refused by the caller, with its pointer.
"""

from __future__ import annotations

from .keywords import ANNOTATIONS, OBJECT_KEYS

_PLAIN = frozenset(OBJECT_KEYS) - {"patternProperties", "additionalProperties"} | {"type"}


def shared_order(branches: list) -> list[str]:
    """Every property name the branches declare, in the order they first name them."""
    out: dict[str, None] = {}
    for b in branches:
        if isinstance(b, dict) and isinstance(b.get("properties"), dict):
            out.update(dict.fromkeys(b["properties"]))
    return list(out)


def reordered(schema, order: list[str]):
    """The schema with its ``properties`` listed in ``order`` (the same language otherwise)."""
    if not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict):
        return schema
    props = schema["properties"]
    rank = {k: i for i, k in enumerate(order)}
    names = sorted(props, key=lambda k: rank.get(k, len(order)))
    return dict(schema, properties={k: props[k] for k in names})


def why_not_subtractable(c: dict, closed_by_default: bool, complete) -> str | None:
    """Why the object part ``c`` cannot be subtracted exactly over a shared key order (None:
    it can). ``complete(schema)`` says whether a property schema is complete."""
    keys = [k for k in c if k not in ANNOTATIONS]
    other = [k for k in keys if k not in _PLAIN and k != "additionalProperties"]
    if other:
        return f"it holds {other[0]!r}"
    props = c.get("properties") or {}
    extra = c.get("additionalProperties", False if closed_by_default and props else True)
    if extra is not False:
        return "it admits keys outside its 'properties'"
    for name in c.get("required", []):
        if name not in props:
            return f"its required key {name!r} is not declared"
    for name, sub in props.items():
        if not complete(sub):
            return f"its property {name!r} holds objects, free-form or recursive values"
    return None
