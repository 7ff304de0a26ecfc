"""Python values to tool definitions: :func:`tool_from` (``toolc.tool_from``).

A pydantic model class, a dataclass, or a plain function with type hints becomes an OpenAI
tool dict whose ``parameters`` is what pydantic's JSON Schema generator writes
(``model_json_schema()``; for a function, the model of its parameters). pydantic is imported
only here, on first use (``pip install 'toolc[pydantic]'``).
"""

from __future__ import annotations

import dataclasses
import inspect

from .errors import InvalidToolsError


def _pydantic():
    try:
        import pydantic
    except ImportError:
        raise ImportError("toolc.tool_from needs pydantic 2: pip install 'toolc[pydantic]'") \
            from None
    return pydantic


def tool_from(obj, *, name: str | None = None, description: str | None = None) -> dict:
    """An OpenAI tool dict (``{"type": "function", "function": {...}}``) for ``obj``.

    ``obj`` is a pydantic model class, a dataclass, or a function whose parameters all have
    type hints (``*args``/``**kwargs`` cannot be described and are refused). The name is the
    class's or function's own unless ``name`` is given; the description is its docstring
    unless ``description`` is given. The call's arguments validate with
    ``Model.model_validate`` (or ``pydantic.validate_call(fn)``).
    """
    pydantic = _pydantic()
    if isinstance(obj, type) and issubclass(obj, pydantic.BaseModel):
        schema = obj.model_json_schema()
        doc = obj.__dict__.get("__doc__")
    elif isinstance(obj, type) and dataclasses.is_dataclass(obj):
        schema = pydantic.TypeAdapter(obj).json_schema()
        doc = obj.__dict__.get("__doc__")
        if doc and doc.startswith(obj.__name__ + "("):      # the generated signature
            doc = None
    elif inspect.isfunction(obj) or inspect.ismethod(obj):
        schema = _function_schema(obj, pydantic)
        doc = obj.__doc__
    else:
        raise InvalidToolsError("tool_from expects a pydantic model class, a dataclass or a "
                                f"function, got {type(obj).__name__}")
    schema = {k: v for k, v in schema.items() if k not in ("title", "description")}
    fn = {"name": name or obj.__name__,
          "description": inspect.cleandoc(doc) if description is None and doc
          else description or "",
          "parameters": schema}
    return {"type": "function", "function": fn}


def _function_schema(fn, pydantic) -> dict:
    import typing
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception as e:      # a hint that does not resolve (a name defined later)
        raise InvalidToolsError(f"cannot read the type hints of {fn.__name__}: {e}") from None
    fields = {}
    for p in inspect.signature(fn).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise InvalidToolsError(f"{fn.__name__}: *{p.name} cannot be described as a tool "
                                    "argument", fix="name every argument")
        if p.name not in hints:
            raise InvalidToolsError(f"{fn.__name__}: argument {p.name!r} has no type hint",
                                    fix="annotate every argument")
        fields[p.name] = (hints[p.name], ... if p.default is p.empty else p.default)
    model = pydantic.create_model(fn.__name__, **fields)
    return model.model_json_schema()
