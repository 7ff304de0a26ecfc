"""bench/gen_tools.py: deterministic, realistic tool sets using only keywords toolc enforces."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import ROOT, SCHEMAS
from toolc.tools import parse_tools

sys.path.insert(0, str(ROOT / "bench"))
import gen_tools  # noqa: E402

USED = {"type", "properties", "required", "additionalProperties", "enum", "const", "items",
        "minItems", "maxItems", "anyOf", "description"}


def _schemas(node, out):
    """Every schema object under ``node`` (a tool's parameters), itself included."""
    out.append(node)
    for sub in node.get("properties", {}).values():
        _schemas(sub, out)
    if isinstance(node.get("items"), dict):
        _schemas(node["items"], out)
    for sub in node.get("anyOf", []):
        _schemas(sub, out)
    return out


def test_same_n_gives_the_same_tools_and_smaller_sets_are_prefixes():
    ten, eighty = gen_tools.generate(10), gen_tools.generate(80)
    assert gen_tools.generate(10) == ten
    assert eighty[:10] == ten
    assert len({t["function"]["name"] for t in eighty}) == 80


@pytest.mark.parametrize("n", [10, 80])
def test_checked_in_sets_are_the_generator_output(n):
    with open(SCHEMAS / f"tools{n}.json", encoding="utf-8") as fh:
        assert json.load(fh) == gen_tools.generate(n), \
            f"schemas/tools{n}.json is stale: run python bench/gen_tools.py {n} -o ..."


def test_only_supported_keywords_and_valid_tools():
    tools = gen_tools.generate(80)
    assert len(parse_tools(tools)) == 80          # toolc's own validation, metaschema included
    for t in tools:
        for node in _schemas(t["function"]["parameters"], []):
            assert set(node) <= USED, (t["function"]["name"], set(node) - USED)
            if "properties" in node:
                assert node["additionalProperties"] is False
                assert set(node["required"]) <= set(node["properties"])


def test_realistic_features_are_all_present():
    nodes = [n for t in gen_tools.generate(80) for n in _schemas(t["function"]["parameters"], [])]
    nested = [n for n in nodes if "properties" in n and any(
        "properties" in p for p in n["properties"].values())]
    optional = [n for n in nodes if "properties" in n and set(n["properties"]) - set(n["required"])]
    assert nested and optional
    assert any("enum" in n for n in nodes)
    assert any("const" in n for n in nodes)
    assert any("anyOf" in n for n in nodes)
    assert any(isinstance(n.get("type"), list) and "null" in n["type"] for n in nodes)
    assert any(n.get("type") == "array" and "minItems" in n for n in nodes)
    assert any(n.get("type") == "array" and "maxItems" in n for n in nodes)
    assert any(n.get("type") == "array" and "properties" in n["items"] for n in nodes)


def test_cli_writes_the_file_and_refuses_a_bad_count(tmp_path):
    out = tmp_path / "t.json"
    script = str(ROOT / "bench" / "gen_tools.py")
    r = subprocess.run([sys.executable, script, "3", "-o", str(out)], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text(encoding="utf-8")) == gen_tools.generate(3)
    for bad in ("0", "-3"):
        r = subprocess.run([sys.executable, script, bad], capture_output=True, text=True)
        assert r.returncode == 2 and "n must be at least 1" in r.stderr


def test_sets_past_the_84_pairs_stay_distinct():
    tools = gen_tools.generate(200)
    names = [t["function"]["name"] for t in tools]
    assert len(set(names)) == 200
    assert tools[:84] == gen_tools.generate(84)
    assert names[84].endswith("_2") and names[199].endswith("_3")
