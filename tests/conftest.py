"""Shared fixtures: the real Qwen3 vocabulary (built in, offline), a compiled weather artifact,
and a helper to build small tools lists.

The tokenizer is never mocked: loading it takes about half a second, once per session.
"""

from __future__ import annotations

import copy
import gzip
import json
from importlib import resources
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
def weather_file(tmp_path_factory, weather_artifact) -> Path:
    """:func:`weather_artifact` saved to a file."""
    path = tmp_path_factory.mktemp("art") / "weather.toolc"
    weather_artifact.save(path)
    return path


@pytest.fixture(scope="session")
def weather_path() -> Path:
    return WEATHER


@pytest.fixture
def make_tools():
    """``make_tools(("name", object_schema({...})), shape="openai")``; see tools_list."""
    return tools_list


# -- the tokenizer files an engine loads, and one that differs by a single token -------------

def altered_tokenizer_json(text: str) -> str:
    """Qwen3's tokenizer.json with one ordinary token changed: the last merge's result (id
    151642, a token no other merge uses) is renamed, and that merge dropped."""
    spec = json.loads(text)
    model = spec["model"]
    a, b = model["merges"].pop()
    tid = model["vocab"].pop(a + b)
    model["vocab"]["toolc\u0120altered"] = tid            # the bytes b"toolc altered"
    return json.dumps(spec, ensure_ascii=False)


def _tokenizer_dir(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "tokenizer.json").write_text(text, encoding="utf-8")
    (folder / "tokenizer_config.json").write_bytes(
        resources.files("toolc.data").joinpath("qwen3/tokenizer_config.json").read_bytes())
    return folder


@pytest.fixture(scope="session")
def qwen_json() -> str:
    """The built-in Qwen3 tokenizer.json, as text."""
    return gzip.decompress(resources.files("toolc.data").joinpath(
        "qwen3/tokenizer.json.gz").read_bytes()).decode("utf-8")


@pytest.fixture(scope="session")
def qwen_dir(tmp_path_factory, qwen_json) -> Path:
    """A model directory holding Qwen3's tokenizer.json and tokenizer_config.json."""
    return _tokenizer_dir(tmp_path_factory.mktemp("tok") / "Qwen3", qwen_json)


@pytest.fixture(scope="session")
def altered_dir(tmp_path_factory, qwen_json) -> Path:
    """The same directory with one token of tokenizer.json changed."""
    return _tokenizer_dir(tmp_path_factory.mktemp("tok") / "Qwen3-altered",
                          altered_tokenizer_json(qwen_json))


@pytest.fixture(scope="session")
def hf_qwen(qwen_dir):
    """Qwen3's tokenizer as transformers loads it (AutoTokenizer on the directory)."""
    transformers = pytest.importorskip("transformers")
    return transformers.AutoTokenizer.from_pretrained(qwen_dir)


@pytest.fixture(scope="session")
def hf_altered(altered_dir):
    transformers = pytest.importorskip("transformers")
    return transformers.AutoTokenizer.from_pretrained(altered_dir)


@pytest.fixture
def fake_llama_cpp(monkeypatch, qwen):
    """A stand-in ``llama_cpp`` module over Qwen3's vocabulary as a GGUF file holds it."""
    import sys

    from helpers import FakeLlamaCpp, gguf_layout
    module = FakeLlamaCpp(*gguf_layout(qwen, qwen.logits_size))
    monkeypatch.setitem(sys.modules, "llama_cpp", module)
    return module


def pytest_collection_finish(session):
    """Freeze the pool of source constants Hypothesis draws from.

    Hypothesis (6.13x on) mixes string and number literals of the project's own modules into
    what it generates, and it gathers them from whatever modules ``sys.modules`` holds at each
    draw. Under ``pytest -n`` a worker's imports depend on which files it ran before, so a
    ``derandomize=True`` test drew different inputs in different runs (a CI run met the
    literal ``"<tool_call>"`` as a string argument where the runs before it had not). Every
    process collects every test file, so the pool read here is the same in each of them;
    later imports no longer change it. Should Hypothesis move the private function, its own
    behaviour stays.
    """
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:     # pragma: no cover - hypothesis moved it
        return
    read = getattr(providers, "_get_local_constants", None)
    if callable(read):
        pool = read()
        providers._get_local_constants = lambda: pool
