"""JSON Schema to Expr: the argument automata of each tool."""

from .compile import ANNOTATIONS, ENFORCED, SchemaCompiler, SchemaOptions

__all__ = ["ANNOTATIONS", "ENFORCED", "SchemaCompiler", "SchemaOptions"]
