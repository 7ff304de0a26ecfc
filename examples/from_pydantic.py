"""From pydantic (or an MCP server) to an artifact, and back to validated pydantic objects.

    python examples/from_pydantic.py            # compiles two tools for Qwen3, a few seconds

1. ``toolc.tool_from`` turns a pydantic model and a typed function into OpenAI tools;
2. ``toolc.compile_tools`` compiles them (strict: every keyword enforced or refused) together
   with the tools of an MCP server's ``tools/list`` result, which compile as they come (one
   list may mix shapes);
3. random outputs of the artifact (what a model could write under its masks) are parsed with
   ``toolc.parse_tool_calls`` and validated by pydantic itself.
"""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import BaseModel, Field, validate_call

import toolc
from toolc.debug.sample import sample_outputs
from toolc.tokenizer import load_vocabulary


class GetWeather(BaseModel):
    """Current weather for a city."""
    city: str
    unit: Literal["celsius", "fahrenheit"] = "celsius"


def search(query: str, limit: int = Field(10, ge=1, le=50), site: Optional[str] = None):
    """Search the web."""
    return [query, limit, site]


# what an MCP server answers to tools/list (here written out; usually saved from a session)
MCP_RESULT = {"tools": [{
    "name": "read_file", "title": "Read a file", "description": "Read a text file.",
    "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}},
                    "required": ["path"], "additionalProperties": False},
    "annotations": {"readOnlyHint": True}}]}


def main() -> None:
    tools = [toolc.tool_from(GetWeather), toolc.tool_from(search)]
    tools += MCP_RESULT["tools"]        # each entry is read in its own shape
    art = toolc.compile_tools(tools, "qwen", tool_choice="required")
    print(f"{len(art.tool_names)} tools, {art.num_states} states; not enforced: "
          f"{art.header['not_enforced'] or 'nothing'}")
    vocab = load_vocabulary("qwen")
    checks = {"GetWeather": GetWeather.model_validate,
              "search": lambda a: validate_call(search)(**a), "read_file": lambda a: a}
    for ids in sample_outputs(art, n=4, seed=1):
        text = vocab.decode_bytes(ids[:-1]).decode("utf-8")
        for call in toolc.parse_tool_calls(text)["parsed"]:
            value = checks[call["name"]](call["arguments"])
            print(f"{call['name']}: {call['arguments']} -> {value!r}")


if __name__ == "__main__":
    main()
