"""toolc.toolset.ToolsetCompiler and the adapters' per-request tool lists: the artifact a
request's tools get is the one compile_tools makes, fetched from the cache when seen before."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest

import toolc
from toolc.errors import InvalidOptionError
from toolc.toolcache import ToolCache
from toolc.toolset import ToolsetCompiler

with open("schemas/tools10.json", encoding="utf-8") as fh:
    CATALOGUE = json.load(fh)


@pytest.fixture(scope="module")
def toolset(qwen):
    return ToolsetCompiler(qwen, cache=ToolCache())


def test_artifact_for_is_compile_tools_and_repeats_are_fetched(toolset, qwen):
    tools = CATALOGUE[:2]
    art = toolset.artifact_for(tools)
    assert art.to_bytes() == toolc.compile_tools(tools, qwen).to_bytes()
    assert toolset.artifact_for(json.loads(json.dumps(tools))) is art
    assert toolset.fingerprint == art.fingerprint == qwen.fingerprint
    m = toolset.matcher_for(tools)
    np.testing.assert_array_equal(m.mask(), art.matcher().mask())


def test_a_request_may_override_options(toolset, qwen):
    tools = CATALOGUE[:1]
    art = toolset.artifact_for(tools, tool_choice="required")
    assert art.header["options"]["tool_choice"] == "required"
    assert art.to_bytes() == toolc.compile_tools(tools, qwen, tool_choice="required").to_bytes()
    with pytest.raises(InvalidOptionError, match="not a compile option"):
        toolset.artifact_for(tools, colour="red")


def test_llama_cpp_processor_from_tools(toolset):
    from toolc.integrations.llama_cpp import ToolcLlamaLogitsProcessor
    proc = ToolcLlamaLogitsProcessor.from_tools(toolset, CATALOGUE[:2])
    assert proc.artifact is toolset.artifact_for(CATALOGUE[:2])


def test_transformers_processor_from_tools_one_list_or_one_per_row(toolset):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from toolc.integrations.transformers import ToolcLogitsProcessor
    one = ToolcLogitsProcessor.from_tools(toolset, CATALOGUE[:2])
    assert one.tracker.artifacts == [toolset.artifact_for(CATALOGUE[:2])]
    rows = ToolcLogitsProcessor.from_tools(toolset, [CATALOGUE[:1], CATALOGUE[1:3]])
    assert rows.tracker.artifacts == [toolset.artifact_for(CATALOGUE[:1]),
                                      toolset.artifact_for(CATALOGUE[1:3])]


def test_vllm_requests_carry_their_own_tools(toolset, monkeypatch):
    torch = pytest.importorskip("torch")
    from toolc.integrations.vllm import TOOLS_ARG, ToolcVllmLogitsProcessor as Proc
    params = SimpleNamespace(extra_args={TOOLS_ARG: CATALOGUE[:2]})
    monkeypatch.setattr(Proc, "toolset", None)
    with pytest.raises(ValueError, match="no toolset is set"):
        Proc.validate_params(params)
    monkeypatch.setattr(Proc, "toolset", toolset)
    Proc.validate_params(params)
    proc = Proc(None, torch.device("cpu"), False)
    out = []
    batch = SimpleNamespace(batch_size=2, removed=[], moved=[],
                            added=[(0, params, [1], out),
                                   (1, SimpleNamespace(extra_args=None), [1], [])])
    proc.update_state(batch)
    art = toolset.artifact_for(CATALOGUE[:2])
    logits = torch.zeros(2, art.logits_size)
    proc.apply(logits)
    allowed = torch.isfinite(logits[0]).nonzero().flatten().numpy()
    np.testing.assert_array_equal(allowed, art.matcher().allowed_token_ids())
    assert torch.isfinite(logits[1]).all()
