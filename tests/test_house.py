"""The house's rules, checked on the source: a runtime that stands alone, no import cycles,
small modules, no block copied between modules, help on every command.

Each rule is checked by a function that is also run on a small made-up case it must catch, so
a rule that silently stopped looking would fail here too.
"""

from __future__ import annotations

import ast
import re
import sys
from collections import defaultdict
from pathlib import Path

import pytest

import toolc
from helpers import heavy_modules_after

PKG = Path(toolc.__file__).resolve().parent
STDLIB = set(sys.stdlib_module_names)


def modules() -> dict[str, Path]:
    """Every module of the package: dotted name -> file."""
    out = {}
    for path in sorted(PKG.rglob("*.py")):
        parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def imports_of(name: str, path: Path, top_level_only: bool = False) -> list[str]:
    """The absolute names ``name`` imports: every import statement, or with ``top_level_only``
    those that run when the module is imported (not inside a function)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    if top_level_only:     # an import under `if`/`try` at module level still runs
        nodes = [n for top in tree.body for n in ast.walk(top)
                 if not isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    out = []
    for node in nodes:
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module
            for a in node.names:        # `from . import x` may name a submodule
                sub = f"{mod}.{a.name}"
                out.append(sub if sub in ALL or (PKG.parent / sub.replace(".", "/")).exists()
                           else mod)
    return out


ALL = modules()


# -- the runtime stands alone ---------------------------------------------------------------

RUNTIME_MAY_IMPORT = ("toolc.runtime", "toolc.errors", "numpy", "msgpack")


def runtime_violations(mods: dict[str, Path]) -> list[str]:
    out = []
    for name, path in mods.items():
        if not (name == "toolc.runtime" or name.startswith("toolc.runtime.")):
            continue
        for imp in imports_of(name, path):
            top = imp.split(".")[0]
            if top in STDLIB or top == "__future__":
                continue
            if not any(imp == ok or imp.startswith(ok + ".") for ok in RUNTIME_MAY_IMPORT):
                out.append(f"{name} imports {imp}")
    return out


def test_the_runtime_imports_only_itself_errors_numpy_msgpack_and_the_standard_library():
    """Every import statement under toolc/runtime/, at any depth (a lazy one counts too)."""
    assert runtime_violations(ALL) == []


def test_the_runtime_rule_catches_an_import_of_the_compiler(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from ..compiler import compile_tools\n    import torch\n")
    assert runtime_violations({"toolc.runtime.bad": bad}) == [
        "toolc.runtime.bad imports toolc.compiler", "toolc.runtime.bad imports torch"]


def test_loading_and_walking_an_artifact_leaves_the_compiler_unloaded(tmp_path):
    art = toolc.compile_tools("schemas/weather.json")
    path = tmp_path / "w.toolc"
    art.save(path)
    code = (f"import numpy as np, toolc\n"
            f"a = toolc.load({str(path)!r})\n"
            "m = a.matcher(); m.advance(int(m.allowed_token_ids()[0]))\n"
            "b = toolc.allocate_token_bitmask(1, a.logits_size)\n"
            "toolc.fill_next_token_bitmask(m, b)\n"
            "toolc.apply_mask(np.zeros(a.logits_size, np.float32), m)\n"
            "toolc.parse_tool_calls('hi')\n")
    assert heavy_modules_after(code) == []


# -- no import cycles -------------------------------------------------------------------------

def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The cycles of a directed graph, one per strongly connected component of 2+ nodes (or
    a node importing itself), by Tarjan's algorithm (iterative)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1 or v in graph.get(v, ()):
                        out.append(sorted(comp))
    return out


def package_graph() -> dict[str, set[str]]:
    """toolc module -> the toolc modules it imports when it is imported."""
    graph = defaultdict(set)
    for name, path in ALL.items():
        for imp in imports_of(name, path, top_level_only=True):
            if imp in ALL and imp != name:
                graph[name].add(imp)
    return graph


def test_no_import_cycles():
    """What a module imports when it is imported never leads back to it. (Imports inside
    functions are lazy on purpose, e.g. ``toolc.compile_tools`` importing the compiler.)"""
    assert import_cycles(package_graph()) == []


def test_the_cycle_finder_finds_cycles():
    assert import_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert import_cycles({"a": {"a"}}) == [["a"]]
    assert import_cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_sees_relative_imports():
    g = package_graph()
    assert "toolc.errors" in g["toolc.runtime.fileformat"]
    assert "toolc.runtime.arrays" in g["toolc.encode"]
    assert "toolc.budget" in g["toolc.fsm.dfa"]


# -- small modules ------------------------------------------------------------------------------

MAX_LINES = 500
#: modules allowed past MAX_LINES, each with why splitting would scatter one idea
LONG_MODULES: dict[str, str] = {}


def test_no_module_is_over_500_lines():
    long = {name: n for name, path in ALL.items()
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert set(long) == set(LONG_MODULES), long


# -- no block copied between modules ----------------------------------------------------------

WINDOW = 6


def _code_lines(path: Path) -> list[tuple[int, str]]:
    """(line number, text) of a module's lines of code: no blank lines, comments or
    docstrings, whitespace stripped."""
    src = path.read_text(encoding="utf-8")
    tree = ast.parse(src)
    doc = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                doc.update(range(body[0].lineno, body[0].end_lineno + 1))
    out = []
    for i, line in enumerate(src.splitlines(), 1):
        s = line.strip()
        if s and not s.startswith("#") and i not in doc:
            out.append((i, s))
    return out


def copied_blocks(files: dict[str, Path]) -> list[str]:
    """Runs of WINDOW identical lines of code found in two different modules (imports, and
    lines made only of brackets, do not start a run)."""
    seen: dict[tuple, tuple[str, int]] = {}
    out = []
    for name, path in files.items():
        lines = _code_lines(path)
        for k in range(len(lines) - WINDOW + 1):
            block = tuple(s for _, s in lines[k:k + WINDOW])
            if block[0].startswith(("import ", "from ")) or re.fullmatch(r"[\])}]+,?", block[0]):
                continue
            where = seen.setdefault(block, (name, lines[k][0]))
            if where[0] != name:
                out.append(f"{name}:{lines[k][0]} repeats {where[0]}:{where[1]}")
    return out


def test_no_block_is_copied_between_modules():
    """toolc._reference is left out: a slow twin restates its fast code on purpose, so that a
    mistake in a shared helper cannot hide in both."""
    prod = {n: p for n, p in ALL.items() if not n.startswith("toolc._reference")}
    assert copied_blocks(prod) == []


def test_the_copy_finder_finds_a_copied_block(tmp_path):
    body = "".join(f"    x{i} = y{i} + {i}\n" for i in range(WINDOW))
    (tmp_path / "a.py").write_text(f"def f():\n{body}")
    (tmp_path / "b.py").write_text(f'def g():\n    """doc"""\n{body}')
    assert copied_blocks({"a": tmp_path / "a.py", "b": tmp_path / "b.py"}) == ["b:3 repeats a:2"]


def test_the_concatenated_ranges_idiom_is_written_once():
    """``np.repeat(... np.cumsum ...)``: the positions of many slices at once. It lives in
    toolc/runtime/arrays.py (``ranges``, ``expand_runs``); everyone else calls it."""
    hits = []
    for name, path in ALL.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "repeat" \
                    and "cumsum" in ast.unparse(node):
                hits.append(name)
    assert hits == ["toolc.runtime.arrays"]


# -- help on every command ----------------------------------------------------------------------

@pytest.mark.parametrize("command", sorted(__import__("toolc.cli").cli.main.commands))
def test_every_command_has_help_with_an_example(command):
    from click.testing import CliRunner
    res = CliRunner().invoke(toolc.cli.main, [command, "--help"])
    assert res.exit_code == 0, res.output
    assert "Example:" in res.output, f"toolc {command} --help shows no Example: block"
