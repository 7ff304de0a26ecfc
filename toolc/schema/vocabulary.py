"""The keyword vocabulary: a pass over a tool's schema before compilation.

For every schema object (found by the keywords that hold subschemas, never inside ``const``,
``enum`` or a property map's names), in the dialect its root ``$schema`` names:

* every ``$ref`` that resolves inside the schema (through ``$id`` bases, anchors, URNs) is
  first written as a JSON pointer from the root (:mod:`toolc.schema.uris`);
* older drafts' spellings are rewritten into 2020-12 (:mod:`toolc.schema.drafts`);
* annotation keywords (:data:`ANNOTATION_KEYWORDS`, and every ``x-`` vendor key) are removed:
  they say nothing about which values are valid;
* a keyword named in ``ignore`` is removed and recorded as not enforced;
* ``format`` is read by :func:`toolc.schema.formats.read_format`: an enforced format stays, a
  plain-string one (``password``, ``path``, ...) is removed with a notice, an unknown one is
  removed and recorded as not enforced (2020-12 makes unknown formats annotations);
* a keyword JSON Schema does not define is, as 2020-12 says, an annotation: removed and
  recorded as not enforced, so the header (and ``toolc inspect``) shows it, EXCEPT a near-miss
  of a keyword toolc enforces (``minlength``, ``maxitems``, ``requried``), which is refused
  with "did you mean ...?" (dropped and recorded instead under ``lenient``).

Keywords JSON Schema defines are left for the schema compiler, which enforces or refuses each.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import UnsupportedSchemaError
from ..options import spelled
from ..pointer import esc
from ..suggest import near_miss
from .drafts import DRAFT2019, dialect, to_2020_12
from .uris import localized
from .content import is_json_content
from .formats import LEAP_SECOND_FORMATS, NO_LEAP_SECOND_WHY, read_format
from .keywords import ENFORCED

#: keywords that only annotate: removed before compilation
ANNOTATION_KEYWORDS = frozenset({
    "title", "description", "examples", "default", "deprecated", "readOnly", "writeOnly",
    "$comment", "$id", "$anchor", "$dynamicAnchor", "$vocabulary", "$schema", "contentMediaType",
    "contentEncoding", "contentSchema",
    # OpenAPI's: a pydantic discriminated union's tag map sits beside a oneOf it does not change
    "example", "discriminator", "xml", "externalDocs",
})
# the keywords of JSON Schema 2020-12 (and 2019-09's recursion) that are not annotations, and
# OpenAPI's nullable: each left to the schema compiler
STANDARD_KEYWORDS = frozenset({
    "$ref", "$defs", "definitions", "$dynamicRef", "$recursiveRef",
    "$recursiveAnchor", "allOf", "anyOf", "oneOf", "not", "if", "then", "else",
    "dependentSchemas", "prefixItems", "items", "contains", "properties", "patternProperties",
    "additionalProperties", "propertyNames", "unevaluatedItems", "unevaluatedProperties",
    "type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum",
    "exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems", "minItems",
    "uniqueItems", "maxContains", "minContains", "maxProperties", "minProperties", "required",
    "dependentRequired", "format", "nullable",
})
_ONE = ("items", "additionalProperties", "propertyNames", "contains", "not", "if", "then",
        "else", "unevaluatedItems", "unevaluatedProperties")
_LIST = ("allOf", "anyOf", "oneOf", "prefixItems")
_MAP = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_UNKNOWN = "unknown keyword: an annotation in JSON Schema 2020-12, so not enforced"
# keywords of older drafts, unknown to 2020-12: the record says how to have them enforced
_OLDER = frozenset({"dependencies", "additionalItems"})
_OLDER_WHY = ("a keyword of drafts 4 to 7, an annotation in JSON Schema 2020-12, so not "
              "enforced; declare \"$schema\": \"http://json-schema.org/draft-07/schema#\" "
              "to have it enforced")


@dataclass
class Prepared:
    """A schema ready for the schema compiler, and what the pass did not enforce."""

    schema: object
    dropped: list = field(default_factory=list)     # {"pointer", "keyword", "why"}
    notices: list = field(default_factory=list)     # {"pointer", "keyword", "message"}
    # a rewritten keyword's pointer in .schema -> (its parent's pointer in .schema, its tokens
    # as written, which replace the ones after the parent)
    renames: dict = field(default_factory=dict)

    def original(self, pointer: str | None) -> str | None:
        """Where a pointer into :attr:`schema` points in the schema as written (older
        drafts' spellings, containers moved under ``$defs``), token by token from the root."""
        if not pointer or not self.renames:
            return pointer
        tokens = pointer.split("/")[1:]
        new, old, i = "", "", 0
        while i < len(tokens):
            for n in (2, 1):        # a rename covers one token (items) or two (dependencies/a)
                cand = new + "".join("/" + t for t in tokens[i:i + n])
                parent, written = self.renames.get(cand, (None, None))
                if i + n <= len(tokens) and parent == new:
                    new, old, i = cand, old + written, i + n
                    break
            else:
                new, old, i = new + "/" + tokens[i], old + "/" + tokens[i], i + 1
        return old


def prepare(schema, *, ignore=(), lenient: bool = False, leap_seconds: bool = False) -> Prepared:
    """``schema`` read in its dialect, with what is not enforced removed and recorded;
    ``ignore`` names keywords to drop everywhere; without ``leap_seconds``, each
    ``date-time``/``time`` field gets a notice that it is written without them."""
    out = Prepared(None)
    draft, notice = dialect(schema)
    if notice:
        out.notices.append({"pointer": "/$schema", "keyword": "$schema", "message": notice})
    if draft == DRAFT2019:
        _contains_in_2019(schema, ignore, lenient, out)
    ignore = frozenset(ignore)
    memo: set = set()
    schema = localized(schema, draft)       # every $ref as a pointer from the root
    targets = _ref_targets(schema)
    moved: dict = {}        # pointer of a container -> its prepared value, moved to $defs

    def node(s, ptr: str):
        if not isinstance(s, dict):
            return s
        renames: dict = {}
        s = to_2020_12(s, draft, renames)
        out.renames.update({ptr + new: (ptr, old) for new, old in renames.items()})
        kept = {}
        for key, value in s.items():
            kptr = f"{ptr}/{esc(key)}"
            inside = [t for t in targets if t == kptr or t.startswith(kptr + "/")]
            if inside and key not in STANDARD_KEYWORDS and key != "format":
                # a container $ref points into (OpenAPI's components, a vendor's x-defs):
                # its referenced schemas are read like any other and moved under $defs
                moved[kptr] = _rebuild(value, kptr, inside, node)
            elif key in ignore:
                _record(out.dropped, memo, kptr, key, f"ignored ({spelled('ignore', key)})")
            elif key in ("contentSchema", "contentMediaType") and is_json_content(s):
                kept[key] = node(value, kptr) if key == "contentSchema" else value
            elif key in ANNOTATION_KEYWORDS or key.startswith("x-"):
                continue
            elif key == "format":
                if _keep_format(value, kptr, out, memo, leap_seconds):
                    kept[key] = value
            elif key in STANDARD_KEYWORDS:
                kept[key] = _children(key, value, kptr, node)
            else:
                if key in _OLDER:
                    _record(out.dropped, memo, kptr, key, _OLDER_WHY)
                    continue
                hit = near_miss(key, ENFORCED)
                if hit is not None and not lenient:
                    raise UnsupportedSchemaError(
                        f"unknown keyword {key!r} (did you mean {hit!r}?)", pointer=kptr,
                        fix=f"spell it {hit!r}, or drop it with {spelled('ignore', key)}")
                why = f"unknown keyword, probably a misspelt {hit!r}" if hit else _UNKNOWN
                _record(out.dropped, memo, kptr, key, why)
        return kept

    try:
        out.schema = node(schema, "")
    except UnsupportedSchemaError as e:
        raise e.with_message(e.message, pointer=out.original(e.pointer)) from None
    if moved and isinstance(out.schema, dict):
        out.schema = _relocated(out.schema, moved)
        out.renames.update({_moved_to(old): ("", old) for old in moved})
    for entry in out.dropped + out.notices:
        entry["pointer"] = out.original(entry["pointer"])
    dropped_keys = {d["keyword"] for d in out.dropped}
    for name in sorted(ignore - dropped_keys):
        hit = near_miss(name, STANDARD_KEYWORDS)
        if hit is not None and name not in STANDARD_KEYWORDS:   # a typo: nothing was ignored
            out.notices.append({"pointer": "", "keyword": name,
                                "message": f"{spelled('ignore', name)} matched no keyword "
                                           f"(did you mean {hit!r}?)"})
    return out


def _moved_to(old: str) -> str:
    return f"/$defs/{esc('toolc:' + old)}"


def _relocated(schema: dict, moved: dict) -> dict:
    """``schema`` with each moved container under ``$defs`` (named by its old pointer) and
    every ``$ref`` into it rewritten."""
    new = {old: _moved_to(old) for old in moved}

    def fix(v):
        if isinstance(v, dict):
            v = {k: fix(x) for k, x in v.items()}
            ref = v.get("$ref")
            if isinstance(ref, str):
                for old, to in new.items():
                    if ref[1:] == old or ref[1:].startswith(old + "/"):
                        v["$ref"] = "#" + to + ref[1 + len(old):]
            return v
        if isinstance(v, list):
            return [fix(x) for x in v]
        return v

    out = fix(schema)
    defs = dict(out.get("$defs", {}))
    defs.update({f"toolc:{old}": fix(value) for old, value in moved.items()})
    out["$defs"] = defs
    return out


def _ref_targets(schema) -> frozenset:
    """The JSON pointers (``/a/b``) of every local ``$ref`` in ``schema``."""
    out, stack = set(), [schema]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            ref = v.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/"):
                out.add(ref[1:])
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return frozenset(out)


def _rebuild(value, ptr: str, targets: list, node):
    """``value`` with the schemas at ``targets`` (pointers at or below ``ptr``) prepared."""
    if ptr in targets:
        return node(value, ptr)
    below = [t for t in targets if t.startswith(ptr + "/")]
    if isinstance(value, dict):
        return {k: _rebuild(v, f"{ptr}/{esc(k)}", below, node) for k, v in value.items()}
    if isinstance(value, list):
        return [_rebuild(v, f"{ptr}/{i}", below, node) for i, v in enumerate(value)]
    return value


def _children(key: str, value, ptr: str, node):
    if key in _ONE:
        return node(value, ptr)
    if key in _LIST and isinstance(value, list):
        return [node(v, f"{ptr}/{i}") for i, v in enumerate(value)]
    if key in _MAP and isinstance(value, dict):
        return {k: node(v, f"{ptr}/{esc(k)}") for k, v in value.items()}
    return value


def _keep_format(value, ptr: str, out: Prepared, memo: set, leap_seconds: bool) -> bool:
    how = read_format(value)
    if how == "plain":
        out.notices.append({"pointer": ptr, "keyword": "format",
                            "message": f"format {value!r} read as any string"})
    elif value in LEAP_SECOND_FORMATS and not leap_seconds:
        out.notices.append({"pointer": ptr, "keyword": "format", "message": NO_LEAP_SECOND_WHY})
    elif how == "unknown":
        _record(out.dropped, memo, ptr, "format",
                f"unknown format {value!r}: an annotation in JSON Schema 2020-12, so not "
                "enforced")
    return how == "enforced"


def _record(dropped: list, memo: set, ptr: str, key: str, why: str) -> None:
    if ptr not in memo:
        memo.add(ptr)
        dropped.append({"pointer": ptr, "keyword": key, "why": why})


def _contains_in_2019(schema, ignore, lenient: bool, out: Prepared) -> None:
    """2019-09's ``contains`` evaluates no item (2020-12's evaluates those it matches, and the
    compiler reads 2020-12): ``unevaluatedItems`` beside a ``contains`` anywhere is refused
    (under ``lenient``, read as 2020-12 and recorded)."""
    from .unevaluated import first_pointer
    where = first_pointer(schema, "unevaluatedItems")
    if where is None or "unevaluatedItems" in ignore or first_pointer(schema, "contains") is None:
        return
    why = ("draft 2019-09's 'contains' evaluates no item, and toolc reads 'unevaluatedItems' "
           "as 2020-12 does (the items 'contains' matches are evaluated)")
    if not lenient:
        raise UnsupportedSchemaError(
            f"keyword 'unevaluatedItems' cannot be enforced: {why}", pointer=where,
            fix=f"declare 2020-12's $schema, or drop it: {spelled('ignore', 'unevaluatedItems')}")
    out.dropped.append({"pointer": where, "keyword": "unevaluatedItems",
                        "why": f"read as 2020-12: {why}"})
