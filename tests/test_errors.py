"""toolc/errors.py: one hierarchy under ToolcError, BudgetExceededError.stage,
EmptyLanguageError, InvalidOptionError, and no decision taken by matching a message."""

from __future__ import annotations

import ast
import re
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import toolc
import toolc.cli
import toolc.debug.graph
import toolc.errors
import toolc.formats
import toolc.tools
from toolc import budget, fsm
from toolc.errors import (BudgetExceededError, EmptyLanguageError, InvalidOptionError,
                          ToolcError)
from toolc.schema.strings import expanded_lengths

import fuzz_strategies as fz
from conftest import ROOT, WEATHER

PARAMS = "/0/function/parameters"


def fn(name, params):
    return [{"type": "function", "function": {"name": name, "parameters": params}}]


def obj(props: dict) -> dict:
    return {"type": "object", "properties": props, "required": list(props)}


def tree_names() -> list[str]:
    """The class names drawn in errors.py's docstring tree."""
    doc = toolc.errors.__doc__
    names = re.findall(r"^\s*(?:[├└]── )?(\w+Error)\b", doc, flags=re.MULTILINE)
    return names


# -- the hierarchy -------------------------------------------------------------------------

def test_docstring_tree_lists_every_public_error_class():
    names = tree_names()
    assert names[0] == "ToolcError" and len(names) == len(set(names)) == 12, names
    defined = {n for n, v in vars(toolc.errors).items()
               if isinstance(v, type) and issubclass(v, ToolcError) and not n.startswith("_")}
    assert defined == set(names)


@pytest.mark.parametrize("name", tree_names())
def test_every_error_is_a_toolc_error_and_a_value_error_exported_from_toolc(name):
    cls = getattr(toolc.errors, name)
    assert issubclass(cls, ToolcError) and issubclass(cls, ValueError)
    assert getattr(toolc, name) is cls
    assert name in toolc.__all__


def test_errors_are_the_same_class_wherever_they_are_imported_from():
    assert toolc.ParseError is toolc.errors.ParseError
    assert toolc.formats.FormatSpecError is toolc.errors.FormatSpecError
    assert toolc.debug.graph.GraphError is toolc.errors.GraphError
    from toolc.formats.custom import FormatSpecError as custom_fse
    assert custom_fse is toolc.errors.FormatSpecError


def test_real_failures_raise_the_hierarchy_classes():
    with pytest.raises(toolc.ParseError):
        toolc.parse_tool_calls('<tool_call>\n{"name": "x", "arguments": {}}')
    with pytest.raises(toolc.FormatSpecError):
        toolc.formats.Custom({"prefix": "<x>"})               # no 'call'
    g = toolc.debug.graph.Graph("g")
    with pytest.raises(toolc.GraphError):
        g.cut("missing", ["present"])


# -- BudgetExceededError.stage --------------------------------------------------------------

def test_stage_deadline_for_a_compile_that_times_out():
    with pytest.raises(BudgetExceededError) as e:
        toolc.compile_tools(str(WEATHER), timeout=1e-9)
    assert e.value.stage == "deadline"
    assert "timed out" in str(e.value) and e.value.tool is not None


def test_stage_deadline_from_budget_check():
    with budget.deadline(1e-9):
        time.sleep(0.001)
        with pytest.raises(BudgetExceededError) as e:
            budget.check("testing")
    assert e.value.stage == "deadline"


def test_stage_walk_for_the_vocabulary_walk_budget(monkeypatch):
    """A bounded string of 40 characters fits the automaton budget of 1,000 states but makes
    millions of token runs, far past 1,000 x WALK_FACTOR (strings left open: closed, its
    partial tags take it past the state budget first)."""
    from toolc.formats.hermes import Hermes
    monkeypatch.setattr(Hermes, "closed_strings", False)
    tools = fn("note", obj({"title": {"type": "string", "maxLength": 40}}))
    with pytest.raises(BudgetExceededError) as e, expanded_lengths():   # as states, not counted
        toolc.compile_tools(tools, max_states=1000)
    assert e.value.stage == "walk", str(e.value)
    assert e.value.tool == "note" and e.value.pointer == f"{PARAMS}/properties/title"
    assert "vocabulary walk" in str(e.value)


def test_stage_automaton_for_a_tiny_state_budget():
    with pytest.raises(BudgetExceededError) as e:
        toolc.compile_tools(str(ROOT / "schemas" / "tools10.json"), max_states=50)
    assert e.value.stage == "automaton", str(e.value)
    assert e.value.tool is not None and e.value.pointer.startswith("/")


def test_stage_automaton_for_the_whole_grammar_built():
    """The string's automaton is sized within 4 x max_states but the minimized DFA is over
    max_states: stopped while building, still stage automaton."""
    tools = fn("note", obj({"title": {"type": "string", "maxLength": 400}}))
    with pytest.raises(BudgetExceededError) as e, expanded_lengths():   # as states, not counted
        toolc.compile_tools(tools, max_states=7000)
    assert e.value.stage == "automaton", str(e.value)
    assert e.value.tool == "note"


def test_stage_nesting_for_a_schema_nested_past_the_bound():
    """Arrays in arrays: a subschema level per JSON level, so the schema nesting bound
    (MAX_SCHEMA_NESTING) is hit before the JSON nesting bound."""
    d: dict = {"type": "string"}
    for _ in range(budget.MAX_SCHEMA_NESTING + 2):
        d = {"type": "array", "items": d}
    with pytest.raises(BudgetExceededError) as e:
        toolc.compile_tools(fn("deep", obj({"x": d})))
    assert e.value.stage == "nesting", str(e.value)
    assert e.value.tool == "deep" and e.value.pointer.startswith(f"{PARAMS}/properties/x/items")
    assert "levels deep" in str(e.value)


def test_stage_nesting_for_a_reference_chain():
    defs = {"d0": {"type": "string"}}
    for i in range(1, budget.MAX_SCHEMA_NESTING + 10):
        defs[f"d{i}"] = {"$ref": f"#/$defs/d{i - 1}"}
    params = {"type": "object", "properties": {"x": {"$ref": f"#/$defs/d{len(defs) - 1}"}},
              "required": ["x"], "$defs": defs}
    with pytest.raises(BudgetExceededError) as e:
        toolc.compile_tools(fn("chain", params))
    assert e.value.stage == "nesting" and e.value.tool == "chain", str(e.value)


def test_nested_objects_past_the_json_bound_are_invalid_tools_not_a_budget():
    """fuzz_strategies.nested: two JSON levels per subschema, so the JSON nesting bound
    (an InvalidToolsError) comes first."""
    with pytest.raises(toolc.InvalidToolsError):
        toolc.compile_tools(fn("deep", fz.nested(budget.MAX_SCHEMA_NESTING + 2)))


@pytest.mark.parametrize("stage", BudgetExceededError.STAGES)
def test_located_and_with_message_keep_the_stage(stage):
    e = BudgetExceededError("too big", stage=stage, pointer="/a", fix="shrink it")
    assert e.stage == stage
    loc = e.located(file="tools.json", tool="t", pointer_prefix="/0/function/parameters")
    assert type(loc) is BudgetExceededError and loc.stage == stage
    assert (loc.file, loc.tool, loc.pointer) == ("tools.json", "t", "/0/function/parameters/a")
    msg = loc.with_message("still too big", pointer="/b")
    assert msg.stage == stage and msg.message == "still too big" and msg.pointer == "/b"
    assert msg.file == "tools.json" and msg.fix == "shrink it"
    assert str(msg) == "tools.json, tool 't', at /b: still too big (shrink it)"


def test_default_stage_is_automaton_and_an_unknown_stage_is_refused():
    assert BudgetExceededError("x").stage == "automaton"
    assert BudgetExceededError.STAGES == ("automaton", "walk", "deadline", "nesting")
    with pytest.raises(ValueError, match="unknown budget stage 'memory'"):
        BudgetExceededError("x", stage="memory")


def test_the_walk_stage_survives_the_compilers_blame():
    """blame_walk rewrites the message (with_message) and must keep the stage."""
    e = BudgetExceededError("the vocabulary walk needs more", stage="walk")
    tools = toolc.tools.parse_tools(fn("n", obj({"s": {"type": "string", "maxLength": 9}})))
    out = budget.blame_walk(e, tools, "f.json")
    assert out.stage == "walk" and out.tool == "n" and out.file == "f.json"
    out = budget.blame(BudgetExceededError("m", stage="deadline"), [("t", "/0", 5)], "f")
    assert out.stage == "deadline" and out.tool == "t"


# -- EmptyLanguageError -------------------------------------------------------------------

def test_compile_expr_of_an_empty_language_raises_empty_language_error():
    with pytest.raises(EmptyLanguageError) as e:
        fsm.compile_expr(fsm.seq(fsm.lit("x"), fsm.Bytes(0)))
    assert not isinstance(e.value, BudgetExceededError)
    assert isinstance(e.value, ToolcError) and isinstance(e.value, ValueError)
    assert "accepts nothing" in str(e.value)


def test_a_contradictory_schema_is_refused_before_the_automaton():
    """The schema compiler notices the contradiction itself, at the property's pointer."""
    params = obj({"a": {"type": "string", "maxLength": 2, "minLength": 3}})
    with pytest.raises(toolc.UnsupportedSchemaError) as e:
        toolc.compile_tools(fn("e", params), tool_choice="required")
    assert e.value.tool == "e" and e.value.pointer == f"{PARAMS}/properties/a"


def test_a_grammar_that_accepts_nothing_is_an_empty_language_error_naming_the_file(
        monkeypatch):
    """When every call's arguments accept nothing and calls are required, the whole
    grammar is empty: EmptyLanguageError, located at the tools file. With tool_choice auto
    free text remains, so the same tools compile."""
    from toolc.schema import SchemaCompiler

    def empty(self, schema, pointer=""):
        return fsm.seq(fsm.lit("x"), fsm.Bytes(0))

    monkeypatch.setattr(SchemaCompiler, "compile", empty)
    with pytest.raises(EmptyLanguageError) as e:
        toolc.compile_tools(str(WEATHER), tool_choice="required")
    assert not isinstance(e.value, BudgetExceededError)
    assert e.value.file == str(WEATHER)
    assert str(e.value).startswith(f"{WEATHER}: ")
    art = toolc.compile_tools(str(WEATHER), tool_choice="auto")
    assert art.num_states > 0


# -- InvalidOptionError ---------------------------------------------------------------------

def test_invalid_option_error_carries_the_option_and_says_so_first():
    e = InvalidOptionError("max_whitespace", "expected an integer of at least 1, got 0")
    assert e.option == "max_whitespace"
    assert e.message == "expected an integer of at least 1, got 0"
    assert str(e) == "invalid max_whitespace: expected an integer of at least 1, got 0"
    with pytest.raises(InvalidOptionError) as real:
        toolc.CompileOptions(max_whitespace=0)
    assert real.value.option == "max_whitespace"
    assert str(real.value).startswith("invalid max_whitespace")


def test_get_format_refuses_an_unknown_name_as_an_invalid_format_option():
    with pytest.raises(InvalidOptionError) as e:
        toolc.formats.get_format("nope")
    assert e.value.option == "format" and "hermes" in str(e.value)


# -- the parser's own refusals ---------------------------------------------------------------

def test_parse_with_a_spec_without_call_is_a_format_spec_error(tmp_path):
    spec = tmp_path / "empty.json"
    spec.write_text("{}")
    res = CliRunner().invoke(toolc.cli.main, ["parse", "--format-file", str(spec), "hi"])
    assert res.exit_code == 1 and res.output.startswith("Error: "), res.output
    with pytest.raises(toolc.FormatSpecError):
        toolc.parse_tool_calls("hi", format={})


# -- no decision by message text ------------------------------------------------------------

_TEXT_METHODS = {"startswith", "endswith", "find", "rfind", "index", "rindex", "count",
                 "__contains__"}
_REGEX_CALLS = {"search", "match", "fullmatch", "findall", "finditer"}


def _is_message_of(node: ast.AST, names: set[str]) -> bool:
    """``e.message``, ``e.args``, ``str(e)`` or ``repr(e)`` for a caught ``e``."""
    if isinstance(node, ast.Attribute) and node.attr in ("message", "args"):
        return isinstance(node.value, ast.Name) and node.value.id in names
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id in ("str", "repr") and len(node.args) == 1:
        return isinstance(node.args[0], ast.Name) and node.args[0].id in names
    return False


def _is_text_of(node: ast.AST, names: set[str]) -> bool:
    """The message itself, or text derived from it (``str(e).lower()``, ``e.message[:9]``);
    not a number computed from it (``len(e.message)``)."""
    while True:
        if _is_message_of(node, names):
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            node = node.func.value
        elif isinstance(node, ast.Subscript):
            node = node.value
        else:
            return False


def message_decisions(source: str, filename: str = "<src>") -> list[str]:
    """Places in ``source`` where a caught exception's message text is compared, searched or
    matched: ``file:line: code``."""
    tree = ast.parse(source, filename)
    found = []
    for handler in ast.walk(tree):
        if not isinstance(handler, ast.ExceptHandler) or not handler.name:
            continue
        names = {handler.name}
        for stmt in handler.body:
            for node in ast.walk(stmt):
                hit = False
                if isinstance(node, ast.Compare):
                    hit = any(_is_text_of(x, names) for x in [node.left, *node.comparators])
                elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                    if node.func.attr in _TEXT_METHODS:
                        hit = _is_text_of(node.func.value, names)
                    elif node.func.attr in _REGEX_CALLS:
                        hit = any(_is_text_of(a, names) for a in node.args)
                if hit:
                    found.append(f"{filename}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_the_message_checker_finds_what_it_looks_for():
    bad = '''
try:
    f()
except ValueError as e:
    if "timed out" in str(e):
        pass
    if e.message.startswith("the automaton"):
        pass
    x = e.message == "no"
    if re.search("deep", e.message):
        pass
    y = str(e).lower().endswith("x")
'''
    hits = message_decisions(bad)
    assert len(hits) == 5, hits
    good = '''
try:
    f()
except ValueError as e:
    raise Other(f"{e.message}; more") from None
except KeyError as err:
    if err.stage == "walk" or err.pointer.startswith("/a"):
        log(str(err))
    short = err.message if len(err.message) < 200 else err.message[:200]
msg = "x"
if "a" in msg:
    pass
'''
    assert message_decisions(good) == []


def _package_decisions() -> dict[str, list[str]]:
    pkg = Path(toolc.__file__).resolve().parent
    files = sorted(pkg.rglob("*.py"))
    assert len(files) > 30
    out = {}
    for path in files:
        rel = path.relative_to(pkg.parent).as_posix()
        out[rel] = message_decisions(path.read_text(encoding="utf-8"), rel)
    return out


def test_no_module_decides_anything_by_an_error_message():
    found = [hit for hits in _package_decisions().values() for hit in hits]
    assert found == [], "\n".join(found)
