"""Tool definitions: load any accepted shape, validate, reject duplicates.

Accepted shapes of a tools file (or of the Python value given to ``compile_tools``), all
giving the same tools (and so byte-identical artifacts):

* OpenAI chat tools: ``[{"type": "function", "function": {"name", "description",
  "parameters"}}]``
* OpenAI Responses-API tools: ``[{"type": "function", "name", "description", "parameters"}]``
* bare function objects: ``[{"name", "description", "parameters"}]``
* MCP ``tools/list`` entries: ``[{"name", "description", "inputSchema"}]``, and a whole
  ``tools/list`` result ``{"tools": [...], "nextCursor": ...}`` (or its JSON-RPC response)
* Anthropic tools: ``[{"name", "description", "input_schema"}]`` (``"type": "custom"`` too)
* any list above under a ``"tools"`` key: ``{"tools": [...]}`` (other keys of that wrapper,
  such as a request's ``model`` or ``tool_choice``, are not read)

A function object's keys that real tools carry but toolc has no use for
(:data:`IGNORED_FUNCTION_KEYS`: ``strict``, ``returns``, MCP's ``title``, ``outputSchema``,
``annotations``, ...) are ignored by name; any other key is an error that names it, with a
did-you-mean, so that a misspelt schema key never compiles into a tool without arguments.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import dataclass

from .budget import MAX_JSON_NESTING, too_deep
from .errors import InvalidToolsError, ToolcError
from .inputs import MAX_TOOLS_BYTES, check_value, read_json_file
from .pointer import esc
from .suggest import did_you_mean
from .schema.metacheck import TYPE_NAMES, certainly_valid

MAX_NAME_LENGTH = 128   # OpenAI allows 64; far longer names only slow the automaton down

#: the keys that hold a tool's argument schema, by shape: OpenAI, MCP, Anthropic
SCHEMA_KEYS = ("parameters", "inputSchema", "input_schema")
#: function-level keys real tools carry that toolc has no use for (OpenAI ``strict``, a
#: ``returns`` schema, MCP's ``title``, ``outputSchema``, ``annotations``, ``icons`` and
#: ``_meta``, Anthropic's ``cache_control``, ``input_examples`` and ``defer_loading``)
IGNORED_FUNCTION_KEYS = frozenset({"strict", "returns", "title", "outputSchema", "annotations",
                                   "icons", "_meta", "cache_control", "input_examples",
                                   "defer_loading"})
_FUNCTION_KEYS = frozenset({"name", "description", *SCHEMA_KEYS})
_CHAT_KEYS = frozenset({"type", "function"})
#: tool types that are function tools: OpenAI's and Anthropic's client tools
_FUNCTION_TYPES = ("function", "custom")


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    parameters: dict
    pointer: str            # where the function object sits in the input, e.g. "/0/function"
    schema_key: str = "parameters"      # the key that held the schema (one of SCHEMA_KEYS)

    @property
    def schema_pointer(self) -> str:
        """Where the argument schema sits in the input, e.g. ``/0/function/parameters``."""
        return f"{self.pointer}/{self.schema_key}"

    def to_json(self) -> dict:
        return {"name": self.name, "description": self.description,
                "parameters": self.parameters}


def load_tools_file(path: str | os.PathLike) -> list[Tool]:
    """Read and validate a tools file; errors name the file."""
    path = os.fspath(path)
    data = read_json_file(path, "tools file", MAX_TOOLS_BYTES,
                          lambda reason: InvalidToolsError(reason, file=path))
    return parse_tools(data, file=path)


def parse_tools(data, *, file: str | None = None, memo=None) -> list[Tool]:
    """Validate a tools value in any accepted shape and return its tools in order.

    ``memo`` (a :class:`~toolc.toolcache.ToolCache`) keeps each entry that parsed, by its
    JSON text, so that a tool seen before in any request, at any place, is not checked again
    (its schema's meta-validation is most of the cost): see :func:`_parse_memo`."""
    bad = check_value(data)
    if bad is not None:
        raise InvalidToolsError(bad[1], file=file, pointer=bad[0])
    data, prefix = _unwrap(data)
    if not isinstance(data, list):
        hint = did_you_mean(next(iter(data), ""), ["tools"]) if isinstance(data, dict) else ""
        raise InvalidToolsError(
            f"expected a list of tools, got {_kind(data)}{hint}", file=file, pointer=prefix,
            fix='write [{"type": "function", "function": {...}}, ...] or {"tools": [...]}')
    if not data:
        raise InvalidToolsError("the tools list is empty", file=file, pointer=prefix)
    tools: list[Tool] = []
    seen: dict[str, str] = {}
    for i, entry in enumerate(data):
        ptr = f"{prefix}/{i}"
        tool = _parse_one(entry, ptr, file) if memo is None else \
            _parse_memo(entry, ptr, file, memo)
        if tool.name in seen:
            raise InvalidToolsError(
                f"duplicate tool name {tool.name!r}: defined at {seen[tool.name]} and at "
                f"{tool.pointer}", file=file, tool=tool.name, pointer=tool.pointer,
                fix="give every tool a unique name")
        seen[tool.name] = tool.pointer
        tools.append(tool)
    return tools


def _parse_memo(entry, ptr: str, file: str | None, memo) -> Tool:
    """:func:`_parse_one` through ``memo``. An entry is kept only when it is plain JSON (its
    JSON text read back equals it: no tuples, no non-string keys, no NaN), so that equal text
    means an equal value and the same outcome; a hit is checked the same way. The tool is
    parsed from its own copy of the value (so a caller that changes its tools in place
    changes nothing kept here) and kept with its pointer relative to the entry's. Refusals are never
    kept: they are located afresh."""
    try:
        text = json.dumps(entry, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return _parse_one(entry, ptr, file)
    hit = memo.get_parsed(text)
    if hit is not None and hit[1] == entry:
        tool = hit[0]
        return Tool(tool.name, tool.description, tool.parameters, ptr + tool.pointer,
                    tool.schema_key)
    value = json.loads(text)
    if value != entry:
        return _parse_one(entry, ptr, file)
    tool = _parse_one(value, ptr, file)
    memo.put_parsed(text, (Tool(tool.name, tool.description, tool.parameters,
                                tool.pointer[len(ptr):], tool.schema_key), value))
    return tool


def _unwrap(data):
    """The tools list inside a JSON-RPC response and/or a ``{"tools": ...}`` wrapper, and
    its pointer."""
    prefix = ""
    if isinstance(data, dict) and "jsonrpc" in data and isinstance(data.get("result"), dict):
        data, prefix = data["result"], "/result"
    if isinstance(data, dict) and "tools" in data:
        data, prefix = data["tools"], prefix + "/tools"
    return data, prefix


def _kind(v) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
            type(None): "null"}.get(type(v), "a number")


def _function_object(entry: dict, ptr: str, file: str | None) -> tuple[dict, str]:
    """The function object of one tools-list entry, and its pointer."""
    kind = entry.get("type")
    if "function" in entry:                                     # OpenAI chat
        if kind is not None and kind != "function":
            _bad_type(kind, ptr, file)
        _no_unknown_keys(entry, _CHAT_KEYS, ptr, file, None)
        fn, fptr = entry["function"], f"{ptr}/function"
        if not isinstance(fn, dict):
            raise InvalidToolsError(f"expected a function object, got {_kind(fn)}", file=file,
                                    pointer=fptr)
        return fn, fptr
    if kind is not None and kind not in _FUNCTION_TYPES:
        _bad_type(kind, ptr, file)
    return entry, ptr               # Responses API, bare, MCP, Anthropic


def _bad_type(kind, ptr: str, file: str | None):
    raise InvalidToolsError(f"tool type {kind!r} is not supported", file=file,
                            pointer=f"{ptr}/type",
                            fix='use "function" (server-side tools have no arguments to '
                                'constrain)')


def _no_unknown_keys(obj: dict, known, ptr: str, file: str | None, tool: str | None) -> None:
    for key in obj:
        if key not in known and key not in IGNORED_FUNCTION_KEYS:
            raise InvalidToolsError(
                f"unknown key {key!r}{did_you_mean(key, known, 0.7)}", file=file, tool=tool,
                pointer=f"{ptr}/{esc(key)}",
                fix=f"known keys: {', '.join(sorted(known))}")


def _schema_key(fn: dict, fptr: str, file: str | None, name: str) -> str:
    present = [k for k in SCHEMA_KEYS if k in fn]
    if len(present) > 1:
        raise InvalidToolsError(f"two argument schemas, {present[0]!r} and {present[1]!r}",
                                file=file, tool=name, pointer=f"{fptr}/{present[1]}",
                                fix="keep one")
    return present[0] if present else "parameters"


def _parse_one(entry, ptr: str, file: str | None) -> Tool:
    if not isinstance(entry, dict):
        raise InvalidToolsError(f"expected a tool object, got {_kind(entry)}", file=file,
                                pointer=ptr)
    fn, fptr = _function_object(entry, ptr, file)
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
    _no_unknown_keys(fn, _FUNCTION_KEYS | ({"type"} if fn is entry else set()), fptr, file,
                     name)
    desc = fn.get("description", "")
    if not isinstance(desc, str):
        raise InvalidToolsError("'description' must be a string", file=file, tool=name,
                                pointer=f"{fptr}/description")
    key = _schema_key(fn, fptr, file, name)
    params = fn.get(key, {"type": "object", "properties": {},
                            "additionalProperties": False})
    pptr = f"{fptr}/{key}"
    if not isinstance(params, dict):
        raise InvalidToolsError(f"{key!r} must be a JSON Schema object, got {_kind(params)}",
                                file=file, tool=name, pointer=pptr)
    deep = too_deep(params)
    if deep is not None:
        raise InvalidToolsError(f"schema nested more than {MAX_JSON_NESTING} levels deep",
                                file=file, tool=name, pointer=pptr + deep,
                                fix="flatten the schema")
    bad_number = _non_finite(params)
    if bad_number is not None:
        raise InvalidToolsError("a number that is not finite (NaN, Infinity, or out of range "
                                "as 1e400 is) is not JSON", file=file, tool=name,
                                pointer=pptr + bad_number, fix="write a finite number")
    _check_meta(params, file, name, pptr)
    root_type = params.get("type", "object" if "properties" in params or not params else None)
    if root_type is None and isinstance(params.get("$ref"), str):
        root_type = _ref_type(params)       # pydantic's recursive models: {"$ref", "$defs"}
    if root_type in ("object", "dict") or root_type in (["object"], ["dict"]):
        root_type = "object"
    if root_type != "object":
        raise InvalidToolsError(
            f"the arguments must be an object, but the schema's type is {root_type!r}",
            file=file, tool=name, pointer=f"{pptr}/type", fix='use "type": "object"')
    return Tool(name=name, description=desc, parameters=params, pointer=fptr, schema_key=key)


def _ref_type(params: dict):
    """The ``type`` of the local schema a root ``$ref`` points to (through more refs), or
    None."""
    from .schema.refs import resolve
    seen, node = set(), params
    while isinstance(node, dict) and "type" not in node and isinstance(node.get("$ref"), str) \
            and node["$ref"] not in seen:
        seen.add(node["$ref"])
        try:
            node, _ = resolve(params, node["$ref"], "")
        except ToolcError:
            return None
    if isinstance(node, dict):
        return node.get("type", "object" if "properties" in node else None)
    return None


def _non_finite(node) -> str | None:
    """The pointer of the first non-finite float in ``node`` (iterative), or None."""
    stack = [(node, "")]
    while stack:
        v, ptr = stack.pop()
        if isinstance(v, float) and not math.isfinite(v):
            return ptr
        if isinstance(v, dict):
            stack.extend((x, f"{ptr}/{esc(k)}") for k, x in reversed(v.items()))
        elif isinstance(v, list):
            stack.extend((x, f"{ptr}/{i}") for i, x in reversed(list(enumerate(v))))
    return None


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
        fix = None
        if e.path and e.path[-1] == "type" or len(e.path) > 1 and e.path[-2] == "type":
            msg += did_you_mean(e.instance, TYPE_NAMES, 0.6)
        elif e.path and e.path[-1] == "items" and isinstance(e.instance, list):
            fix = ('a list under "items" is the tuple form of drafts 4 to 2019-09: use '
                   '"prefixItems", or declare "$schema": '
                   '"http://json-schema.org/draft-07/schema#"')
        raise InvalidToolsError(f"invalid JSON Schema: {msg}", file=file, tool=tool,
                                pointer=ptr + where, fix=fix) from None


def tools_hash(tools: list[Tool]) -> str:
    """sha256 of the tools' canonical JSON: what the artifact was compiled from.

    Key order is kept, not sorted: the order of ``properties`` is the order the arguments must
    be written in, so two files that differ only there compile to different artifacts.
    """
    canon = json.dumps([t.to_json() for t in tools], ensure_ascii=False,
                       separators=(",", ":"))
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()
