"""Which part of a schema blew the state budget: found only after a compile has failed.

The whole grammar is compiled once with the budget; when it overflows, each tool's argument
automaton is compiled alone, then the parts of the guilty schema (properties, items, prefix
items, anyOf branches, additionalProperties), each under the same budget, descending into the
first part that overflows. Every trial stops as soon as it passes the budget, so the search
costs about as much as the failed compile did.
"""

from __future__ import annotations

from ..errors import BudgetExceededError, ToolcError
from ..fsm import compile_expr
from .compile import SchemaCompiler, SchemaOptions
from .refs import esc


def _children(schema, ptr: str):
    if not isinstance(schema, dict):
        return
    for name, sub in (schema.get("properties") or {}).items():
        yield sub, f"{ptr}/properties/{esc(name)}"
    if isinstance(schema.get("items"), dict):
        yield schema["items"], f"{ptr}/items"
    for i, sub in enumerate(schema.get("prefixItems") or []):
        yield sub, f"{ptr}/prefixItems/{i}"
    for key in ("anyOf", "oneOf", "allOf"):
        for i, sub in enumerate(schema.get(key) or []):
            yield sub, f"{ptr}/{key}/{i}"
    if isinstance(schema.get("additionalProperties"), dict):
        yield schema["additionalProperties"], f"{ptr}/additionalProperties"


def _overflows(root, schema, ptr: str, options: SchemaOptions, max_states: int) -> bool:
    sc = SchemaCompiler(options)
    sc.root = root
    try:
        expr = sc._schema(schema, ptr)
        compile_expr(expr, max_states=max_states)
    except BudgetExceededError as e:
        return "accepts nothing" not in e.message
    except ToolcError:
        return False
    return False


def locate(parameters: dict, options: SchemaOptions, max_states: int) -> str | None:
    """The pointer (relative to ``parameters``) of the deepest part that alone passes
    ``max_states``, "" for the whole schema, or None when the schema alone fits."""
    if not _overflows(parameters, parameters, "", options, max_states):
        return None
    schema, ptr = parameters, ""
    while True:
        for sub, sub_ptr in _children(schema, ptr):
            if _overflows(parameters, sub, sub_ptr, options, max_states):
                schema, ptr = sub, sub_ptr
                break
        else:
            return ptr
