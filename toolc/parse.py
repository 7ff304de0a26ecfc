"""Generated text back to OpenAI-shaped tool calls. Runtime side: standard library only.

One parser per registered format (:data:`toolc.formats.FORMATS` names each one's function), and
:func:`parse_custom` for a custom format's spec.
"""

from __future__ import annotations

import gc
import json
import re

from .errors import InvalidOptionError, ParseError
from .formats import FORMATS
from .formats.rules import string_only
from .formats.spec import check_spec, split_template
from .literals import SURROGATE, json_at, python_call_at, share, unicode_problem
from .parse_result import call_records, dumps as _dumps, result as _result

_OPEN, _CLOSE = "<tool_call>", "</tool_call>"


_THINK = (("<think>", "</think>"), ("[THINK]", "[/THINK]"))
_EOS = ("<|im_end|>", "<|endoftext|>", "</s>", "<|eot_id|>", "<|eom_id|>", "<|end|>")


def split_reasoning(text: str, own: tuple[str, str] | None = None) -> tuple[str | None, str]:
    """(reasoning, rest): the text of a leading ``<think>...</think>`` or ``[THINK]...[/THINK]``
    section (or ``own``, a format's (open, close) pair), stripped of newlines at its edges,
    and what follows it, leading whitespace removed. ``(None, text)`` when there is no such
    section."""
    head = text.lstrip()
    for open_, close in ((own,) if own else ()) + _THINK:
        if head.startswith(open_):
            end = head.find(close)
            if end < 0:
                raise ParseError(f"at offset {len(text) - len(head)}: {open_} is never closed "
                                 f"by {close}")
            return head[len(open_):end].strip("\n"), head[end + len(close):].lstrip()
    return None, text


def _strip_eos(text: str) -> str:
    text = text.rstrip()
    for end in _EOS:
        if text.endswith(end):
            return text[: -len(end)]
    return text


def parse_tool_calls(text: str, format="hermes", *, tools=None, reasoning=None) -> dict:
    """Split ``text`` into its free content and its calls.

    Returns ``{"content": str | None, "tool_calls": [{"id", "type", "function": {"name",
    "arguments"}}], "parsed": [...], "reasoning": str | None}`` where ``arguments`` is a JSON
    string, as in OpenAI's chat API, ``"parsed"`` holds the arguments as Python values, one per
    call, and ``"reasoning"`` the text of a leading ``<think>``/``[THINK]`` section.

    ``format`` is a format's name (``toolc.formats.NAMES``) or a custom format's spec (a dict,
    as in ``--format-file``). ``tools`` (an OpenAI tools list) is needed by ``tooldec``, whose
    arguments are positional, and used by ``qwen3-coder`` to tell raw strings from JSON values.
    ``reasoning="open"``: the prompt opened the reasoning section, so the text starts inside
    it (as an artifact compiled with ``reasoning="open"`` writes it).
    Failures raise :class:`ParseError` saying where (a character offset) and why.
    """
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as e:
            raise ParseError(f"the text is not UTF-8 ({e.reason} at byte {e.start})") from None
    if not isinstance(text, str):
        raise ParseError(f"expected the text as str or UTF-8 bytes, got {type(text).__name__}")
    if not isinstance(format, (str, dict)):
        raise InvalidOptionError("format", "expected a format's name or a custom format's "
                                           f"spec (a dict), got {type(format).__name__}")
    own = FORMATS[format].think if isinstance(format, str) and format in FORMATS else None
    if reasoning == "open":
        text = (own or _THINK[0])[0] + text
    reasoning, text = split_reasoning(text, own)
    enabled = gc.isenabled()
    gc.disable()    # what a parse builds has no cycles: the collector's passes cost a fifth
    try:
        if isinstance(format, dict):
            out = parse_custom(_strip_eos(text), format)
        elif format in PARSERS:
            # hermes strips its own end-of-turn tokens and keeps the content's trailing space
            out = PARSERS[format](text if format == "hermes" else _strip_eos(text), tools)
        else:
            raise InvalidOptionError("format", f"no parser for format {format!r}; known: "
                                               f"{', '.join(sorted(PARSERS))}")
    finally:
        if enabled:
            gc.enable()
    out.setdefault("reasoning", reasoning)     # a format may split its own reasoning tags
    return out


def parse_hermes(text: str, tools=None) -> dict:
    for end in ("<|im_end|>", "<|endoftext|>"):
        if text.endswith(end):
            text = text[: -len(end)]
    calls, parsed = [], []
    first = None
    for i, (start, body) in enumerate(_hermes_calls(text)):
        if first is None:
            first = start
        try:
            obj = json.loads(body)
        except json.JSONDecodeError as e:
            raise ParseError(f"call {i}: invalid JSON: {e.msg} at column {e.colno}") from None
        except RecursionError:
            raise ParseError(f"call {i}: JSON nested too deeply") from None
        if not isinstance(obj, dict) or not isinstance(obj.get("name"), str) \
                or "arguments" not in obj:
            raise ParseError(f"call {i}: expected {{\"name\": ..., \"arguments\": ...}}")
        bad = unicode_problem(obj) if "\\u" in body or SURROGATE.search(body) else None
        if bad:
            raise ParseError(f"at offset {start}: call {i}: {bad}")
        args = obj["arguments"]
        p, t = call_records(f"call_{i}", share(obj["name"]), args, _dumps(args))
        parsed.append(p)
        calls.append(t)
    content = text if first is None else text[:first]
    content = content.strip() or None
    return {"content": content, "tool_calls": calls, "parsed": parsed}


def _hermes_calls(text: str):
    """(start offset, stripped body) of each ``<tool_call>...</tool_call>``, in one left-to-right
    pass with ``str.find`` (linear time however many tags are left open). A tag opened inside a
    call, a call never closed, or a closing tag outside a call is a :class:`ParseError`."""
    pos, i = 0, 0
    while True:
        start = text.find(_OPEN, pos)
        stray = text.find(_CLOSE, pos, len(text) if start < 0 else start)
        if stray >= 0:
            raise ParseError(f"'{_CLOSE}' at offset {stray} closes no call")
        if start < 0:
            return
        end = text.find(_CLOSE, start + len(_OPEN))
        if end < 0:
            raise ParseError(f"call {i}: '{_OPEN}' at offset {start} is never closed")
        body = text[start + len(_OPEN):end]
        nested = body.find(_OPEN)
        if nested >= 0:
            raise ParseError(f"call {i}: '{_OPEN}' at offset {start + len(_OPEN) + nested} "
                             "opens a call inside another")
        yield start, body.strip()
        pos, i = end + len(_CLOSE), i + 1


# -- the other formats: one function each, (text, tools) -> result ------------------------------
# Every parser reads the text from the start: free content, then the call block, then nothing.


def _json_at(text: str, pos: int, what: str):
    """Decode one JSON value at ``pos``; return (value, end)."""
    return json_at(text, pos, what)


_NEWLINES = re.compile(r"\n*")


def _expect(text: str, pos: int, lit: str, what: str) -> int:
    if not text.startswith(lit, pos):
        got = text[pos:pos + max(len(lit), 12)]
        raise ParseError(f"at offset {pos}: {what}: expected {lit!r}, got {got!r}")
    return pos + len(lit)


def _call_objects(value, pos: int, args_key: str = "arguments", with_id: bool = False):
    items = value if isinstance(value, list) else [value]
    out = []
    for i, obj in enumerate(items):
        if not isinstance(obj, dict) or not isinstance(obj.get("name"), str) \
                or args_key not in obj:
            raise ParseError(f"at offset {pos}: call {i}: expected {{\"name\": ..., "
                             f"\"{args_key}\": ...}}")
        out.append((obj["name"], obj[args_key], obj.get("id") if with_id else None))
        items[i] = None         # the decoded list lets go of each call object once read
    return out


def _json_list_after(text: str, trigger: str, close: str = "", args_key: str = "arguments",
                     with_id: bool = False, space: bool = False, reread: int = 0) -> dict:
    """Free content, ``trigger``, a JSON list of call objects, then ``close`` and the end.
    The list starts ``reread`` characters before the end of the trigger."""
    start = text.find(trigger)
    if start < 0:
        return _result(text, [])
    pos = start + len(trigger) - reread
    if space and text.startswith(" ", pos):
        pos += 1
    value, end = _json_at(text, pos, "the list of calls")
    if not isinstance(value, list):
        raise ParseError(f"at offset {pos}: expected a JSON list of calls after {trigger!r}")
    end = _expect(text, end, close, "the end of the calls") if close else end
    if text[end:].strip():
        raise ParseError(f"at offset {end}: unexpected text after the calls")
    return _result(text[:start], _call_objects(value, pos, args_key, with_id))


def parse_mistral(text: str, tools=None) -> dict:
    """``[TOOL_CALLS] [{...}]`` / ``[TOOL_CALLS][{...}]``, or ``[TOOL_CALLS]NAME[ARGS]{...}``."""
    start = text.find("[TOOL_CALLS]")
    if start < 0:
        return _result(text, [])
    rest = text[start + len("[TOOL_CALLS]"):]
    if rest.lstrip(" ").startswith("["):
        return _json_list_after(text, "[TOOL_CALLS]", with_id=True, space=True)
    calls, pos = [], start
    last = len(text.rstrip())       # the rest is blank from here: no re-slicing per call
    while pos < len(text):
        pos = _expect(text, pos, "[TOOL_CALLS]", "a call")
        sep = text.find("[ARGS]", pos)
        if sep < 0:
            raise ParseError(f"at offset {pos}: expected NAME[ARGS]{{...}} after [TOOL_CALLS]")
        name, cid = text[pos:sep], None
        if "[TOOL_CALLS]" in name:
            raise ParseError(f"at offset {pos}: expected NAME[ARGS]{{...}} after [TOOL_CALLS]")
        if "[CALL_ID]" in name:
            name, cid = name.split("[CALL_ID]", 1)
        args, pos = _json_at(text, sep + len("[ARGS]"), f"the arguments of {name!r}")
        calls.append((name, args, cid))
        if pos >= last:
            break
        if not text.startswith("[TOOL_CALLS]", pos):
            raise ParseError(f"at offset {pos}: unexpected text after the calls")
    return _result(text[:start], calls)


def parse_phi4_mini(text: str, tools=None) -> dict:
    return _json_list_after(text, "<|tool_call|>", close="<|/tool_call|>")


def parse_functools(text: str, tools=None) -> dict:
    return _json_list_after(text, "functools[", reread=1)


def _bare_json_calls(text: str, sep: str, args_key: str) -> list:
    pos, calls = 0, []
    last = len(text.rstrip())
    while True:
        value, pos = _json_at(text, pos, f"call {len(calls)}")
        calls += _call_objects(value, pos, args_key)
        if pos >= last:
            return calls
        pos = _expect(text, pos, sep, "the separator between calls")


def parse_llama3_json(text: str, tools=None) -> dict:
    """``[<|python_tag|>]{"name": ..., "parameters": {...}}; {...}``, or free text."""
    body = text[len("<|python_tag|>"):] if text.startswith("<|python_tag|>") else text
    if not body.startswith("{"):
        if body is not text:
            raise ParseError(f"at offset {len(text) - len(body)}: expected a call after "
                             "<|python_tag|>")
        return _result(text, [])
    return _result("", _bare_json_calls(body, "; ", "parameters"))


def parse_json(text: str, tools=None) -> dict:
    """The bare call object, or a JSON array of them; anything else is free text."""
    if not text.startswith(("{", "[")):
        return _result(text, [])
    value, end = _json_at(text, 0, "the calls")
    if text[end:].strip():
        raise ParseError(f"at offset {end}: unexpected text after the calls")
    return _result("", _call_objects(value, 0))


def _schemas(tools) -> dict:
    """name -> parameters schema of each well-formed tool (anything else is skipped: the
    parser reads text, it does not validate tools)."""
    out = {}
    for t in tools if isinstance(tools, list) else []:
        fn = t.get("function", t) if isinstance(t, dict) else {}
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            params = fn.get("parameters")
            out[fn["name"]] = params if isinstance(params, dict) else {}
    return out


def _properties(schemas: dict, name: str) -> dict:
    props = schemas.get(name, {}).get("properties")
    return props if isinstance(props, dict) else {}


def parse_qwen3_coder(text: str, tools=None) -> dict:
    """``<tool_call>\n<function=NAME>\n<parameter=K>\nV\n</parameter>\n...</function>\n
    </tool_call>``; values are raw strings where the tool's schema admits only strings, JSON
    otherwise (without ``tools``: JSON when the value parses as JSON, else a raw string)."""
    schemas = _schemas(tools)
    start = text.find("<tool_call>")
    if start < 0:
        return _result(text, [])
    calls, pos = [], start
    while True:
        pos = _expect(text, pos, "<tool_call>\n<function=", "a call")
        end = text.find(">\n", pos)
        if end < 0:
            raise ParseError(f"at offset {pos}: the function tag is never closed")
        name, pos = text[pos:end], end + 2
        props = _properties(schemas, name)
        args = {}
        while text.startswith("<parameter=", pos):
            end = text.find(">\n", pos)
            if end < 0:
                raise ParseError(f"at offset {pos}: the parameter tag is never closed")
            key = share(text[pos + len("<parameter="):end])
            vend = text.find("\n</parameter>\n", end + 2)
            if vend < 0:
                raise ParseError(f"at offset {end + 2}: parameter {key!r} is never closed by "
                                 "\\n</parameter>")
            raw = text[end + 2:vend]
            if key in props and isinstance(props[key], dict) and string_only(props[key]):
                args[key] = raw
            else:
                try:
                    args[key] = json.loads(raw)
                except RecursionError:
                    raise ParseError(f"at offset {end + 2}: parameter {key!r}: JSON nested too "
                                     "deeply") from None
                except json.JSONDecodeError as e:
                    if key in props:
                        raise ParseError(f"at offset {end + 2 + e.pos}: parameter {key!r}: "
                                         f"invalid JSON ({e.msg})") from None
                    args[key] = raw
            pos = vend + len("\n</parameter>\n")
        pos = _expect(text, pos, "</function>\n</tool_call>", f"the end of call {name!r}")
        calls.append((name, args, None))
        pos = _NEWLINES.match(text, pos).end()
        if pos == len(text):
            return _result(text[:start], calls)


def parse_pythonic(text: str, tools=None) -> dict:
    """``[name(key=value, ...), ...]`` with Python literals; anything else is free text. Read
    by :mod:`toolc.literals` in one pass (no Python syntax tree)."""
    if not text.startswith("["):
        return _result(text, [])
    calls, pos = [], _skip_ws(text, 1)
    while not text.startswith("]", pos):
        name, args, pos = python_call_at(text, pos, positional=False)
        calls.append((name, args, None))
        pos = _skip_ws(text, pos)
        if text.startswith(",", pos):
            pos = _skip_ws(text, pos + 1)
        elif not text.startswith("]", pos):
            raise ParseError(f"at offset {pos}: expected ',' or ']' between calls")
    if text[pos + 1:].strip():
        raise ParseError(f"at offset {pos + 1}: unexpected text after the calls")
    return _result("", calls, keys_shared=True)


def _skip_ws(text: str, pos: int) -> int:
    return _WS.match(text, pos).end()


_WS = re.compile(r"[ \t\r\n]*")


def parse_tooldec(text: str, tools=None) -> dict:
    """``<tool>name(value, ...)`` per call (joined by newlines); positional values are named
    by the tool's schema order (``arg0``, ... without ``tools``)."""
    schemas = _schemas(tools)
    start = text.find("<tool>")
    if start < 0:
        return _result(text, [])
    calls, pos = [], start
    while True:
        pos = _expect(text, pos, "<tool>", f"call {len(calls)}")
        at = pos
        name, values, pos = python_call_at(text, pos, positional=True)
        keys = list(_properties(schemas, name))
        if keys and len(values) > len(keys):
            raise ParseError(f"at offset {at}: {name}: {len(values)} arguments, but the tool "
                             f"has {len(keys)}")
        keys = keys or [share(f"arg{i}") for i in range(len(values))]
        calls.append((name, dict(zip(keys, values)), None))
        end = _skip_ws(text, pos)
        if end == len(text):    # the keys are the tools' own strings, one copy each
            return _result(text[:start], calls, keys_shared=True)
        if not text.startswith("\n<tool>", pos):
            raise ParseError(f"at offset {pos}: call {len(calls) - 1}: unexpected text after "
                             "the call")
        pos += 1


def parse_custom(text: str, spec: dict) -> dict:
    """Calls written by a custom format spec (see toolc.formats.custom); a malformed spec is
    a :class:`~toolc.errors.FormatSpecError`, as it is for the compiler."""
    spec = check_spec(spec)
    prefix, sep, suffix = (spec[k] for k in ("prefix", "separator", "suffix"))
    trigger = spec["trigger"]
    before, between, after, order = split_template(spec["call"])
    start = text.find(trigger)
    if start < 0:
        return _result(text, [])
    pos = _expect(text, start, prefix, "the calls' prefix")
    calls = []
    template = (before, between, after)
    find = _next_finder(text)
    while True:
        before, between, after = (s.replace("{index}", str(len(calls))) for s in template)
        pos = _expect(text, pos, before, f"call {len(calls)}")
        if order == "na":
            end = text.find(between, pos)
            if end < 0 or not between:
                raise ParseError(f"at offset {pos}: call {len(calls)}: cannot find the end of "
                                 "the name")
            name = text[pos:end]
            args, pos = _json_at(text, end + len(between), f"the arguments of {name!r}")
            pos = _expect(text, pos, after, f"the end of call {name!r}")
        else:
            args, pos = _json_at(text, pos, f"the arguments of call {len(calls)}")
            pos = _expect(text, pos, between, f"call {len(calls)}")
            # the name runs to what follows the call: its own tail, else a separator or suffix
            ends = [i for i in (find(x, pos) for x in ((after,) if after else
                                                      (sep, suffix)) if x) if i >= 0]
            end = min(ends, default=len(text))
            name, pos = text[pos:end], end + len(after)
        calls.append((name, args, None))
        # another call follows: the separator and the next call's head (which, with no
        # separator, is what tells concatenated calls apart)
        nxt = sep + template[0].replace("{index}", str(len(calls)))
        if nxt and text.startswith(nxt, pos) and (
                template[0] or not (suffix and text.startswith(suffix, pos))):
            pos += len(sep)
            continue
        pos = _expect(text, pos, suffix, "the calls' suffix") if suffix else pos
        if text[pos:].strip():
            raise ParseError(f"at offset {pos}: unexpected text after the calls")
        return _result(text[:start], calls)


def _next_finder(text: str):
    """``find(needle, pos)``: ``text.find(needle, pos)`` for positions that only grow, each
    occurrence searched for once (a suffix found only at the end is not searched for again
    per call: linear, where re-searching was quadratic)."""
    found: dict[str, int] = {}

    def find(needle: str, pos: int) -> int:
        at = found.get(needle)
        if at is None or (0 <= at < pos):
            at = found[needle] = text.find(needle, pos)
        return at
    return find


def _parser(name: str, info):
    if info.parser in ("parse_harmony", "parse_gemma4", "parse_kimi_k3", "parse_cohere"):
        # a module of its own, read lazily
        def own(text: str, tools=None) -> dict:
            import importlib
            module = importlib.import_module(f"{__package__}.{info.parser}")
            return getattr(module, info.parser)(text, tools)
        return own
    if info.parser in ("parse_tagged", "parse_framed"):   # one parser per family of styles
        def parse(text: str, tools=None) -> dict:
            from . import parse_tags
            return getattr(parse_tags, info.parser)(text, tools, style=name)
        return parse
    return globals()[info.parser]


#: format name -> its parser, from the one registry of formats
PARSERS = {name: _parser(name, info) for name, info in FORMATS.items()}
