"""Tool definitions: load any accepted shape, validate, reject duplicates.

Accepted shapes of a tools file (or of the Python value given to ``compile_tools``):

* an OpenAI tools list:
  ``[{"type": "function", "function": {"name", "description", "parameters"}}]``
* a list of bare function objects: ``[{"name", "description", "parameters"}]``
* either of those under a ``"tools"`` key: ``{"tools": [...]}``
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass


from .budget import MAX_JSON_NESTING, too_deep
from .errors import InvalidToolsError
from .schema.metacheck import certainly_valid

MAX_NAME_LENGTH = 128   # OpenAI allows 64; far longer names only slow the automaton down


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    parameters: dict
    pointer: str            # where the function object sits in the input, e.g. "/0/function"

    def to_json(self) -> dict:
        return {"name": self.name, "description": self.description,
                "parameters": self.parameters}


def load_tools_file(path: str | os.PathLike) -> list[Tool]:
    """Read and validate a tools file; errors name the file."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as e:
        raise InvalidToolsError(f"cannot read the tools file: {e.strerror}",
                                file=path or repr(path)) from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise InvalidToolsError(f"not UTF-8 text ({e.reason} at byte {e.start})",
                                file=path) from None
    except json.JSONDecodeError as e:
        raise InvalidToolsError(f"invalid JSON: {e.msg} at line {e.lineno} column {e.colno}",
                                file=path) from None
    except RecursionError:
        raise InvalidToolsError("JSON nested too deeply to read", file=path) from None
    return parse_tools(data, file=path)


def parse_tools(data, *, file: str | None = None) -> list[Tool]:
    """Validate a tools value in any accepted shape and return its tools in order."""
    prefix = ""
    if isinstance(data, dict) and "tools" in data:
        data, prefix = data["tools"], "/tools"
    if not isinstance(data, list):
        raise InvalidToolsError(
            f"expected a list of tools, got {_kind(data)}", file=file, pointer=prefix,
            fix='write [{"type": "function", "function": {...}}, ...] or {"tools": [...]}')
    if not data:
        raise InvalidToolsError("the tools list is empty", file=file, pointer=prefix)
    tools: list[Tool] = []
    seen: dict[str, str] = {}
    for i, entry in enumerate(data):
        tool = _parse_one(entry, f"{prefix}/{i}", file)
        if tool.name in seen:
            raise InvalidToolsError(
                f"duplicate tool name {tool.name!r}: defined at {seen[tool.name]} and at "
                f"{tool.pointer}", file=file, tool=tool.name, pointer=tool.pointer,
                fix="give every tool a unique name")
        seen[tool.name] = tool.pointer
        tools.append(tool)
    return tools


def _kind(v) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
            type(None): "null"}.get(type(v), "a number")


def _parse_one(entry, ptr: str, file: str | None) -> Tool:
    if not isinstance(entry, dict):
        raise InvalidToolsError(f"expected a tool object, got {_kind(entry)}", file=file,
                                pointer=ptr)
    fn, fptr = entry, ptr
    if "function" in entry or entry.get("type") == "function":
        if entry.get("type", "function") != "function":
            raise InvalidToolsError(f"tool type {entry.get('type')!r} is not supported",
                                    file=file, pointer=f"{ptr}/type", fix='use "function"')
        fn, fptr = entry.get("function"), f"{ptr}/function"
        if not isinstance(fn, dict):
            raise InvalidToolsError(f"expected a function object, got {_kind(fn)}", file=file,
                                    pointer=fptr)
    name = fn.get("name")
    if not isinstance(name, str) or not name:
        raise InvalidToolsError("a tool needs a non-empty string 'name'", file=file,
                                pointer=f"{fptr}/name")
    if len(name) > MAX_NAME_LENGTH:
        raise InvalidToolsError(
            f"tool name of {len(name):,} characters is longer than {MAX_NAME_LENGTH}",
            file=file, tool=name[:40] + "…", pointer=f"{fptr}/name",
            fix="use a short name of letters, digits, '_' and '-'")
    bad = [c for c in name if c in '"\\' or ord(c) < 0x20 or ord(c) == 0x7F]
    if bad:
        raise InvalidToolsError(
            f"tool name contains {bad[0]!r}, which the call format writes unescaped and no "
            "parser could read back", file=file, tool=name, pointer=f"{fptr}/name",
            fix="use letters, digits, '_' and '-'")
    desc = fn.get("description", "")
    if not isinstance(desc, str):
        raise InvalidToolsError("'description' must be a string", file=file, tool=name,
                                pointer=f"{fptr}/description")
    params = fn.get("parameters", {"type": "object", "properties": {},
                                   "additionalProperties": False})
    pptr = f"{fptr}/parameters"
    if not isinstance(params, dict):
        raise InvalidToolsError(f"'parameters' must be a JSON Schema object, got {_kind(params)}",
                                file=file, tool=name, pointer=pptr)
    deep = too_deep(params)
    if deep is not None:
        raise InvalidToolsError(f"schema nested more than {MAX_JSON_NESTING} levels deep",
                                file=file, tool=name, pointer=pptr + deep,
                                fix="flatten the schema")
    _check_meta(params, file, name, pptr)
    root_type = params.get("type", "object" if "properties" in params or not params else None)
    if root_type in ("object", "dict") or root_type in (["object"], ["dict"]):
        root_type = "object"
    if root_type != "object":
        raise InvalidToolsError(
            f"the arguments must be an object, but the schema's type is {root_type!r}",
            file=file, tool=name, pointer=f"{pptr}/type", fix='use "type": "object"')
    return Tool(name=name, description=desc, parameters=params, pointer=fptr)


def _check_meta(schema: dict, file, tool, ptr) -> None:
    from .schema.refs import standardized   # non-standard type names ("dict", "int") mapped
    schema = standardized(schema)
    if certainly_valid(schema):    # the fast path; jsonschema decides every doubtful case
        return
    import jsonschema   # imported only here: it costs a tenth of a second
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except RecursionError:
        raise InvalidToolsError("schema nested too deeply to validate", file=file, tool=tool,
                                pointer=ptr, fix="flatten the schema") from None
    except jsonschema.SchemaError as e:
        where = "".join(f"/{str(p).replace('~', '~0').replace('/', '~1')}" for p in e.path)
        msg = e.message if len(e.message) < 200 else e.message[:200] + "…"
        raise InvalidToolsError(f"invalid JSON Schema: {msg}", file=file, tool=tool,
                                pointer=ptr + where) from None


def tools_hash(tools: list[Tool]) -> str:
    """sha256 of the tools' canonical JSON: what the artifact was compiled from.

    Key order is kept, not sorted: the order of ``properties`` is the order the arguments must
    be written in, so two files that differ only there compile to different artifacts.
    """
    canon = json.dumps([t.to_json() for t in tools], ensure_ascii=False,
                       separators=(",", ":"))
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()
