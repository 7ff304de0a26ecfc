"""Shared fixtures: the real Qwen3 vocabulary (built in, offline), a compiled weather artifact,
and a helper to build small tools lists.

The tokenizer is never mocked: loading it takes about half a second, once per session.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

import toolc
from toolc.tokenizer import load_vocabulary

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = ROOT / "schemas"
WEATHER = SCHEMAS / "weather.json"


def object_schema(properties: dict | None = None, required=None, **extra) -> dict:
    """``{"type": "object", "properties": ..., "required": ...}``; required defaults to all."""
    properties = properties or {}
    schema = {"type": "object", "properties": copy.deepcopy(properties),
              "required": list(properties) if required is None else list(required)}
    schema.update(extra)
    return schema


def tools_list(*tools, shape: str = "openai") -> list | dict:
    """A tools value from ``(name, parameters)`` pairs, or bare names (no parameters).

    ``shape`` is ``"openai"`` (``[{"type": "function", "function": {...}}]``), ``"bare"``
    (``[{"name", "description", "parameters"}]``) or ``"wrapped"`` (``{"tools": [openai...]}``).
    """
    functions = []
    for t in tools:
        name, params = (t, None) if isinstance(t, str) else t
        fn = {"name": name, "description": f"The {name} tool."}
        if params is not None:
            fn["parameters"] = copy.deepcopy(params)
        functions.append(fn)
    if shape == "bare":
        return functions
    openai = [{"type": "function", "function": fn} for fn in functions]
    if shape == "openai":
        return openai
    if shape == "wrapped":
        return {"tools": openai}
    raise ValueError(f"unknown shape {shape!r}")


@pytest.fixture(scope="session")
def qwen():
    """The built-in Qwen3 vocabulary (alias "qwen")."""
    return load_vocabulary("qwen")


@pytest.fixture(scope="session")
def weather_artifact(qwen):
    """schemas/weather.json compiled for Qwen3, in memory."""
    return toolc.compile_tools(str(WEATHER))


@pytest.fixture(scope="session")
def weather_path() -> Path:
    return WEATHER


@pytest.fixture
def make_tools():
    """``make_tools(("name", object_schema({...})), shape="openai")``; see tools_list."""
    return tools_list
