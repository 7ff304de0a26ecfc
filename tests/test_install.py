"""The runtime-only install: ``pip install toolc`` (numpy and msgpack) loads and walks an
artifact in a fresh virtualenv, and the ``toolc`` command there says in one line to install
``toolc[compile]``.

The project's wheel is built here without build isolation (setuptools from this environment);
numpy and msgpack come from pip's wheel cache, or the package registry on a first run (the test
is skipped, saying so, when neither has them).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest

import toolc
from toolc.console import COMPILE_MODULES
from toolc.tokenizer import load_vocabulary

from helpers import render_answer

ROOT = Path(__file__).resolve().parent.parent

WALK = textwrap.dedent("""
    import json, sys
    import toolc
    ids, path = json.loads(sys.argv[1]), sys.argv[2]
    art = toolc.load(path)
    m = art.matcher()
    words = []
    for t in ids:
        words.append(int(m.mask().sum()))
        m.advance(t)
    bm = toolc.allocate_token_bitmask(2, art.logits_size)
    toolc.fill_next_token_bitmask(art.matcher(), bm, 1)
    heavy = [n for n in sys.argv[3].split(",") if n in sys.modules]
    print(json.dumps({"file": toolc.__file__, "terminated": m.is_terminated(),
                      "steps": len(words), "row_equal": bool((bm[1] == art.matcher().mask()).all()),
                      "heavy": heavy}))
""")


def test_the_default_dependencies_are_the_runtime_s_and_compile_holds_the_rest():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = [d.split(">")[0].split("=")[0].split("[")[0] for d in meta["dependencies"]]
    assert names == ["numpy", "msgpack"]
    compile_names = [d.split(">")[0] for d in meta["optional-dependencies"]["compile"]]
    assert sorted(compile_names) == sorted(COMPILE_MODULES)
    assert meta["scripts"]["toolc"] == "toolc.console:main"


def test_the_console_script_without_the_compiler_says_one_line(monkeypatch, capsys):
    import importlib.util

    import toolc.console as console
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "interegular" else real(name, *a))
    with pytest.raises(SystemExit) as e:
        console.main()
    assert e.value.code == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install 'toolc[compile]'" in err
    assert "interegular" in err


def _run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kw)


@pytest.mark.slow
def test_runtime_alone_in_a_fresh_virtualenv_loads_and_walks_an_artifact(tmp_path):
    # an artifact and a valid answer's tokens, made here with the compiler
    art = toolc.compile_tools(str(ROOT / "schemas/weather.json"))
    path = tmp_path / "weather.toolc"
    art.save(path)
    text = render_answer([("get_current_weather", {"city": "Paris"})])
    ids = load_vocabulary("qwen").encode(text)
    # the project's wheel, and a virtualenv with nothing in it
    wheels = tmp_path / "wheels"
    res = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                "-q", "-w", str(wheels), str(ROOT)])
    assert res.returncode == 0, res.stderr
    venv = tmp_path / "venv"
    res = _run([sys.executable, "-m", "venv", str(venv)])
    assert res.returncode == 0, res.stderr
    py = venv / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    res = _run([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                f"numpy=={version('numpy')}", f"msgpack=={version('msgpack')}"], env=env)
    if res.returncode != 0:
        pytest.skip(f"numpy and msgpack are neither in pip's cache nor reachable: "
                    f"{res.stderr.strip().splitlines()[-1:]}")
    wheel = next(wheels.glob("toolc-*.whl"))
    res = _run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                "--disable-pip-version-check", str(wheel)], env=env)
    assert res.returncode == 0, res.stderr
    # nothing but the runtime is installed there
    res = _run([str(py), "-m", "pip", "list", "--format=json"], env=env)
    installed = sorted(p["name"].lower() for p in json.loads(res.stdout))
    assert [n for n in installed if n not in ("pip", "setuptools")] == \
        ["msgpack", "numpy", "toolc"]
    heavy = ",".join(COMPILE_MODULES + ("toolc.compiler", "toolc.tokenizer", "toolc.fsm"))
    res = _run([str(py), "-c", WALK, json.dumps(ids), str(path), heavy], env=env,
               cwd=str(tmp_path))
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["file"].startswith(str(venv))
    assert out["terminated"] and out["steps"] == len(ids)
    assert out["row_equal"] and out["heavy"] == []
    # the command: one line naming the extra, exit code 1, no traceback
    res = _run([str(venv / "bin" / "toolc"), "compile", "x.json"], env=env, cwd=str(tmp_path))
    assert res.returncode == 1
    assert res.stdout == "" and res.stderr.count("\n") == 1
    assert "pip install 'toolc[compile]'" in res.stderr and "Traceback" not in res.stderr
