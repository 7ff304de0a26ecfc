"""toolc/budget.py: the deadline, the nesting bounds and the state budget, on adversarial schemas.

Each blow-up must stop with BudgetExceededError (or a refusal) naming the tool and the JSON
pointer that caused it, with peak memory bounded (checked in a subprocess for the largest case).
No timing assertions: the deadline itself is what these tests exercise.
"""

from __future__ import annotations

import hashlib
import json
import resource
import subprocess
import sys
import time

import pytest

import toolc
from toolc import budget
from toolc.errors import BudgetExceededError, InvalidToolsError, UnsupportedSchemaError
from toolc._reference.nfa import NFA
from toolc.fsm.size import nfa_size
from toolc.schema.strings import expanded_lengths

import fuzz_strategies as fz
from helpers import SCHEMA_SETS

PARAMS = "/0/function/parameters"


def fn(name, params):
    return [{"type": "function", "function": {"name": name, "parameters": params}}]


def obj(props: dict) -> dict:
    return {"type": "object", "properties": props, "required": list(props)}


def refusal(value, vocab, **opts) -> Exception:
    with pytest.raises((BudgetExceededError, UnsupportedSchemaError, InvalidToolsError)) as e:
        toolc.compile_tools(value, vocab, **opts)
    return e.value


# -- the deadline --------------------------------------------------------------------------------

def test_deadline_stops_a_compile_and_names_the_stage(qwen):
    big = fn("big", obj({"e": {"enum": [f"value-{i}" for i in range(3000)]}}))
    e = refusal(big, qwen, timeout=1e-6)
    assert isinstance(e, BudgetExceededError) and "timed out after" in str(e)
    assert e.tool == "big" and e.pointer.startswith(PARAMS), str(e)


def test_deadline_is_per_thread_and_restored():
    assert budget.remaining() is None
    with budget.deadline(100):
        assert 0 < budget.remaining() <= 100
        with budget.deadline(None):
            assert budget.remaining() is None
            budget.check("anything")
        assert budget.remaining() is not None
    assert budget.remaining() is None
    with budget.deadline(1e-9):
        time.sleep(0.001)
        with pytest.raises(BudgetExceededError, match="timed out after .* while testing"):
            budget.check("testing")


def test_timeout_in_the_walk_names_the_largest_tool(qwen, monkeypatch):
    """A deadline that passes in the vocabulary walk blames the tool with the largest automaton."""
    calls = {"n": 0}
    real = budget.check

    def late(stage, pointer=None):
        if stage == "walking the vocabulary":
            calls["n"] += 1
            raise BudgetExceededError("compile timed out after 1 s while " + stage)
        return real(stage, pointer)

    monkeypatch.setattr(budget, "check", late)
    tools = fn("small", obj({"a": {"type": "integer"}})) + \
        fn("large", obj({"s": {"type": "string"}, "t": {"type": "array",
                                                       "items": {"type": "string"}}}))
    tools[1]["function"]["name"] = "large"
    e = refusal(tools, qwen)
    assert calls["n"] == 1
    assert e.tool == "large" and e.pointer == "/1/function/parameters", str(e)
    assert "largest automaton" in str(e)


# -- the state budget ----------------------------------------------------------------------------

def test_nfa_size_is_exact():
    """nfa_size predicts the NFA's size without building it."""
    from toolc.compiler import _argument_exprs
    from toolc.tools import load_tools_file
    for name in [getattr(p, "values", (p,))[0] for p in SCHEMA_SETS]:
        for tool, expr in _argument_exprs(load_tools_file(f"schemas/{name}.json"), None, 4):
            nfa = NFA()
            nfa.build(expr)
            assert len(nfa.eps) == nfa_size(expr) + 2, (name, tool.name)


def test_huge_max_items_over_counted_items_is_refused_at_its_pointer(qwen):
    """Counted regions nest three levels deep: items that hold more (arrays of arrays of
    bounded strings) keep the outer item count as states, priced before they are built."""
    e = refusal(fn("lists", obj({"a": {"type": "array", "items": {
        "type": "array", "items": {"type": "array", "items": {
            "type": "string", "maxLength": 5}, "maxItems": 40}, "maxItems": 50},
        "maxItems": 100_000}})), qwen)
    assert isinstance(e, BudgetExceededError)
    assert e.tool == "lists" and e.pointer == f"{PARAMS}/properties/a", str(e)


def test_max_items_1e9_is_counted_not_built(qwen):
    """An item bound alone is a counter (tests/test_itemcounts.py): as many states as an
    unbounded array with at least one item."""
    from toolc.runtime.counted import CountedMatcher
    art = toolc.compile_tools(fn("lists", obj({"a": {
        "type": "array", "items": {"type": "string"}, "minItems": 1,
        "maxItems": 1_000_000_000}})), qwen)
    free = toolc.compile_tools(fn("lists", obj({"a": {
        "type": "array", "items": {"type": "string"}, "minItems": 1}})), qwen)
    assert isinstance(art.matcher(), CountedMatcher)
    assert art.num_states == free.num_states


def test_max_length_100000_is_counted_not_built(qwen):
    """A length bound alone is a counter (tests/test_counted.py): as many states as without
    the bound."""
    from toolc.runtime.counted import CountedMatcher
    art = toolc.compile_tools(fn("text", obj({"s": {"type": "string", "maxLength": 100_000}})),
                              qwen)
    free = toolc.compile_tools(fn("text", obj({"s": {"type": "string"}})), qwen)
    assert isinstance(art.matcher(), CountedMatcher)
    assert art.num_states == free.num_states


def test_max_length_100000_with_a_pattern_is_counted_too(qwen):
    """Beside a pattern the bound is a counter as well: as many states as the pattern
    alone."""
    from toolc.runtime.counted import CountedMatcher
    pat = {"type": "string", "pattern": "^[a-z ]*$"}
    art = toolc.compile_tools(fn("text", obj({"s": dict(pat, maxLength=100_000)})), qwen)
    free = toolc.compile_tools(fn("text", obj({"s": pat})), qwen)
    assert isinstance(art.matcher(), CountedMatcher)
    assert art.num_states == free.num_states


def test_max_length_100000_as_states_is_stopped_by_the_budget(qwen):
    """Built as states (where a counter cannot be used), the state budget must stop it,
    naming the tool and a pointer inside the property."""
    with expanded_lengths():
        e = refusal(fn("text", obj({"s": {"type": "string", "maxLength": 100_000,
                                          "pattern": "^[a-z ]*$"}})), qwen, timeout=120)
    assert e.tool == "text" and e.pointer.startswith(f"{PARAMS}/properties/s"), str(e)
    assert "timed out" not in str(e)


def test_the_walk_budget_refuses_a_long_bounded_string_naming_the_tool(qwen):
    """A bounded string makes a state per character, each walked on its own: past
    max_states * WALK_FACTOR runs (or triples at one trie level) the walk stops with the
    walk's own message, before the runs take the memory, naming the tool and the schema with
    the longest length bound (not the largest automaton: here the enum's)."""
    tools = fn("small", obj({"a": {"enum": [f"value-{i}" for i in range(250)]},
                             "b": {"type": "string", "maxLength": 3}})) + \
        fn("note", obj({"title": {"type": "string", "maxLength": 40}}))
    # 40 characters: some 880 DFA states, and about 4M runs; 1,500 states allow 375k (bounds
    # built as states, as they are where a counter cannot be used)
    with expanded_lengths():
        e = refusal(tools, qwen, max_states=1500)
    assert isinstance(e, BudgetExceededError)
    assert "the vocabulary walk needs more than 375,000" in str(e), str(e)
    assert e.tool == "note", str(e)
    assert e.pointer == "/1/function/parameters/properties/title", str(e)
    assert "longest length bound of the tools, 40 characters" in str(e)


def test_longest_bound_finds_max_length_and_pattern_counts():
    params = {"type": "object", "properties": {
        "a": {"type": "string", "maxLength": 10},
        "b": {"type": "string", "pattern": "^[a-z]{2,64}$"},
        "c": {"type": "array", "items": {"type": "string", "maxLength": 30}},
        "maxLength": {"type": "string"},            # a property named maxLength is no bound
        "d/e": {"type": "string", "pattern": "^x{70}$"}}}
    assert budget.longest_bound(params) == ("/properties/d~1e", 70)
    del params["properties"]["d/e"]
    assert budget.longest_bound(params) == ("/properties/b", 64)
    assert budget.longest_bound({"type": "object", "properties": {"n": {"type": "integer"}}}) \
        is None


def test_the_walk_budget_leaves_real_tool_sets_far_inside(qwen):
    """tools80 (19,759 states: its maxItems 3 to 20 over small items stay states, cheaper
    than a count pass; 17,196 before its strings were kept from spelling </tool_call>)
    makes about 656k runs: a budget of a tenth of the default max_states still lets it
    through, and the walk counts what it emits."""
    art = toolc.compile_tools("schemas/tools80.json", qwen, max_states=20_000)
    assert art.num_states == 19_759
    with pytest.raises(BudgetExceededError, match="more than 100,000 token runs"):
        budget.check_walk(100_001, 100_000)
    budget.check_walk(100_000, 100_000)
    budget.check_walk(10 ** 12, None)


@pytest.mark.slow
def test_enum_of_100000_values_is_stopped_with_bounded_memory(tmp_path):
    """In a subprocess, so its peak RSS is its own."""
    path = tmp_path / "enum.json"
    # values that share little, so the language itself needs more states than the budget
    values = [hashlib.sha256(str(i).encode()).hexdigest()[:12] for i in range(100_000)]
    path.write_text(json.dumps(fn("pick", obj({"v": {"enum": values}}))))
    code = ("import resource, sys, toolc\n"
            "try:\n"
            f"    toolc.compile_tools({str(path)!r}, timeout=120)\n"
            "    print('COMPILED')\n"
            "except toolc.ToolcError as e:\n"
            "    print(type(e).__name__, e)\n"
            # VmHWM is this process's own peak: ru_maxrss also keeps the peak of the process
            # it was exec'd from (Linux carries it across exec), here the pytest process
            "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM')]\n"
            "print('RSS', int(hwm[0].split()[1]) if hwm else\n"
            "      resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=600).stdout
    first, rss = out.splitlines()[0], int(out.split("RSS ")[1])
    assert first.startswith("BudgetExceededError"), out
    assert "'pick'" in first and f"at {PARAMS}" in first and "timed out" not in first, first
    assert rss < 1_500_000, f"peak RSS {rss // 1024} MB"


def test_nested_any_of_twenty_levels_compiles(qwen):
    art = toolc.compile_tools(fn("tower", fz.any_of_tower(20)), qwen, timeout=120)
    assert art.num_states > 20


def test_shared_refs_with_exponentially_many_paths_are_refused_at_the_level_that_blows(qwen):
    """Each level's alternatives use the level below three times: 3**N paths from a small
    file. The subschema sizes are checked level by level, so the first level over the
    budget is named, long before the whole tower is expanded."""
    defs = {"a0": {"type": "integer"}}
    for i in range(1, 13):
        below = {"$ref": f"#/$defs/a{i - 1}"}
        defs[f"a{i}"] = {"anyOf": [below, obj({f"k{i}": below, f"m{i}": below}),
                                   {"type": "array", "items": below, "maxItems": 2}]}
    params = {"type": "object", "properties": {"x": {"$ref": "#/$defs/a12"}}, "$defs": defs}
    e = refusal(fn("tower", params), qwen, timeout=120)
    assert isinstance(e, BudgetExceededError) and e.tool == "tower", str(e)
    assert e.pointer.startswith(f"{PARAMS}/$defs/a") and e.pointer != f"{PARAMS}/$defs/a12"
    assert "automaton states" in str(e) and "timed out" not in str(e)


def test_free_form_depth_is_bounded_by_the_state_budget(qwen):
    """Free-form values nested deeper than the budget allows are refused by the state budget
    (depth 5 under a budget of 2,000 states here; at the default budget depth 6 is refused
    by the NFA-size pre-check, see docs/reliability.md)."""
    e = refusal(fn("free", obj({"x": {}})), qwen, max_depth=5, max_states=2_000)
    assert isinstance(e, BudgetExceededError) and e.tool == "free", str(e)


def test_recursive_tree_is_unrolled_to_the_depth_bound(qwen):
    """A self-referencing tree compiles, unrolled to max_depth (stated in the header), fast."""
    art = toolc.compile_tools(fn("tree", fz.SELF_REFERENCE), qwen, timeout=60, max_depth=3)
    assert art.header["options"]["max_depth"] == 3
    deeper = toolc.compile_tools(fn("tree", fz.SELF_REFERENCE), qwen, timeout=60, max_depth=5)
    assert deeper.num_states > art.num_states


# -- the nesting bounds --------------------------------------------------------------------------

def test_schema_nesting_bound(qwen):
    e = refusal(fn("deep", fz.nested(budget.MAX_SCHEMA_NESTING + 2)), qwen)
    assert e.tool == "deep" and "levels deep" in str(e)
    assert e.pointer.startswith(PARAMS + "/properties/c/properties/c"), str(e)
    toolc.compile_tools(fn("ok", fz.nested(budget.MAX_SCHEMA_NESTING - 2)), qwen)


@pytest.mark.parametrize("levels", [200, 5_000])
def test_deep_json_is_refused_not_a_recursion_error(qwen, levels):
    e = refusal(fn("deep", fz.nested(levels)), qwen)
    assert isinstance(e, InvalidToolsError) and e.tool == "deep" and "deep" in str(e)


def test_deep_json_file_is_refused(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text("[" * 200_000 + "]" * 200_000)
    with pytest.raises(InvalidToolsError, match="deep.json.*nested too deeply"):
        toolc.compile_tools(str(path))


def test_too_deep_reports_the_first_container_past_the_limit():
    assert budget.too_deep({"a": [[1]]}, limit=3) is None
    assert budget.too_deep({"a": [[{}]]}, limit=3) == "/a/0/0"
    assert budget.too_deep({"a/b": {"~": {}}}, limit=2) == "/a~1b/~0"


def _kb(field: str) -> int | None:
    """A ``/proc/self/status`` figure in kB (Linux), or None."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


_START: dict = {}


@pytest.fixture(scope="module", autouse=True)
def _memory_from_here():
    """Where this module's tests start: the peak resident size is reset to the current one
    (Linux's clear_refs), so the guard below sees these tests alone, whatever ran before
    them in this process (a worker of a parallel run holds earlier files' memory)."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        _START["rss"] = _kb("VmRSS")
    except OSError:
        _START["rss"] = None
    yield


def test_peak_memory_of_this_process_is_sane():
    """A guard for the tests above: nothing in them ballooned this process (3 GB over what it
    held when they began; without clear_refs, 3 GB in all)."""
    peak = _kb("VmHWM") if _START.get("rss") is not None else None
    if peak is None:
        assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss < 3_000_000
    else:
        assert peak - _START["rss"] < 3_000_000, (peak, _START["rss"])
