"""toolc/parse_result.py: the per-call records are ordinary dicts of the public shape, and
smaller than dict literals on CPython."""

from __future__ import annotations

import copy
import json
import pickle
import platform
import tracemalloc

import pytest

from toolc.parse import parse_tool_calls
from toolc.parse_result import call_records


def test_records_are_plain_dicts_of_the_public_shape():
    p, t = call_records("call_7", "get", {"a": [1]}, '{"a": [1]}')
    assert type(p) is dict and type(t) is dict and type(t["function"]) is dict
    assert p == {"name": "get", "arguments": {"a": [1]}}
    assert list(t) == ["id", "type", "function"]
    assert t == {"id": "call_7", "type": "function",
                 "function": {"name": "get", "arguments": '{"a": [1]}'}}
    assert json.loads(json.dumps(t)) == t and pickle.loads(pickle.dumps(p)) == p
    assert copy.deepcopy(t) == t
    # changed like any dict, without touching another call's record
    q, u = call_records("call_8", "get", None, "null")
    p["extra"] = 1
    del t["type"]
    t["function"]["name"] = "renamed"
    assert list(p) == ["name", "arguments", "extra"] and "type" not in t
    assert q == {"name": "get", "arguments": None} and u["type"] == "function"
    assert u["function"]["name"] == "get"


def test_a_parse_result_is_made_of_them():
    out = parse_tool_calls("[f(x=1), g()]", format="pythonic")
    assert out["parsed"] == [{"name": "f", "arguments": {"x": 1}}, {"name": "g", "arguments": {}}]
    assert [c["function"] for c in out["tool_calls"]] == [
        {"name": "f", "arguments": '{"x": 1}'}, {"name": "g", "arguments": "{}"}]
    assert all(type(c) is dict and type(c["function"]) is dict for c in out["tool_calls"])


def _bytes_per_call(make) -> float:
    tracemalloc.start()
    try:
        held = [make(i) for i in range(2000)]
        size = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert len(held) == 2000
    return size / 2000


@pytest.mark.skipif(platform.python_implementation() != "CPython",
                    reason="key-sharing dicts are CPython's")
def test_records_take_less_memory_than_dict_literals():
    def literals(i):
        return ({"name": "n", "arguments": None},
                {"id": "c", "type": "function", "function": {"name": "n", "arguments": "x"}})
    shared = _bytes_per_call(lambda i: call_records("c", "n", None, "x"))
    plain = _bytes_per_call(literals)
    assert shared < 0.75 * plain, (shared, plain)


@pytest.mark.parametrize("value", [
    {"a": [1, 2.5, -0.0, 1e300, None, True, False, "é\n\"\\\u2028"], "b": {}, "": []},
    "a string", 12345678901234567890, 1.0, [], {"k": float("nan")}, [[[[]]]],
    {"x": {"y": {"z": "\x00\x1f"}}}])
def test_dumps_is_json_dumps(value):
    from toolc.parse_result import dumps
    assert dumps(value) == json.dumps(value, ensure_ascii=False)


def test_dumps_refuses_what_json_refuses():
    from toolc.parse_result import dumps
    with pytest.raises(TypeError, match="not JSON serializable"):
        dumps({"a": {1, 2}})
