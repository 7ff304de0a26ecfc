"""Schema normalization before compilation: non-standard type names, ``nullable``, local
``$ref`` resolution, and ``allOf`` merged into one schema (``oneOf``, ``not`` and the
conditionals are :mod:`toolc.schema.algebra`'s).

``allOf`` is merged keyword by keyword into a schema that means the same: types intersect,
lower bounds take the larger value and upper bounds the smaller, ``required`` lists unite,
``properties`` with the same name merge recursively, patterns accumulate (all must match),
``enum`` lists intersect, ``anyOf`` lists multiply out, two ``not`` become one ``not`` of
their ``anyOf``, one side's ``items`` govern the other side's ``prefixItems``, and each side's
``if``/``then``/``else`` becomes the ``anyOf`` it means first. A keyword that cannot be merged
exactly (two different formats, say) raises :class:`MergeConflict`; :func:`meet` then keeps
the two schemas side by side as an ``allOf``, which the compiler builds as the intersection of
their automata (:mod:`toolc.schema.allof`).
"""

from __future__ import annotations

from urllib.parse import unquote

from ..errors import UnsupportedSchemaError
from .keywords import pattern_search
from ..pointer import esc, unesc  # noqa: F401  (re-exported for the schema modules)

# names that published tool definitions use for JSON Schema types (Python's, mostly)
TYPE_ALIASES = {"dict": "object", "float": "number", "tuple": "array", "str": "string",
                "int": "integer", "bool": "boolean", "list": "array", "any": None}
TYPES = ("object", "array", "string", "integer", "number", "boolean", "null")
_LOWER = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties",
          "minContains")
_UPPER = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties",
          "maxContains")
_IGNORED_IN_MERGE = frozenset({"description", "title", "examples", "example", "default",
                               "$comment", "$schema", "$id", "deprecated", "readOnly",
                               "writeOnly", "$defs", "definitions"})


class MergeConflict(UnsupportedSchemaError):
    """Two schemas that no single schema of the same keywords means exactly."""


def meet(a, b, ptr: str):
    """``merge(a, b)``, or ``{"allOf": [a, b]}`` where no merge is exact."""
    try:
        return merge(a, b, ptr)
    except MergeConflict:
        return {"allOf": [a, b]}


def map_type_names(schema: dict, ptr: str, notices: list | None = None) -> dict:
    """The schema with non-standard type names mapped and ``nullable`` folded into ``type``.

    Each mapping is reported as ``{"pointer", "keyword", "message"}`` in ``notices``.
    """
    out = schema
    t = schema.get("type")
    names = [t] if isinstance(t, str) else (list(t) if isinstance(t, list) else None)
    if names is not None and any(isinstance(n, str) and n in TYPE_ALIASES for n in names):
        mapped = []
        for n in names:
            if isinstance(n, str) and n in TYPE_ALIASES:
                to = TYPE_ALIASES[n]
                if notices is not None:
                    what = f"{to!r}" if to else "any type"
                    notices.append({"pointer": f"{ptr}/type", "keyword": "type",
                                    "message": f"non-standard type {n!r} read as {what}"})
                if to is None:
                    mapped = None
                    break
                mapped.append(to)
            else:
                mapped.append(n)
        out = dict(schema)
        if mapped is None:
            del out["type"]
        else:
            uniq = list(dict.fromkeys(mapped))
            out["type"] = uniq[0] if len(uniq) == 1 else uniq
    if "nullable" in out:
        out = dict(out)
        if out.pop("nullable") is True and "type" in out:
            ts = [out["type"]] if isinstance(out["type"], str) else list(out["type"])
            if "null" not in ts:
                ts.append("null")
            out["type"] = ts
            if "enum" in out and None not in out["enum"]:
                out["enum"] = list(out["enum"]) + [None]
    return out


def standardized(schema):
    """A deep copy with every non-standard type name mapped (for meta-schema checks and for
    validating instances in tests); no notices. Every dict and list is rebuilt (and
    map_type_names copies before it changes anything), so the input is never shared or
    changed."""
    def walk(node):
        if isinstance(node, dict):
            node = map_type_names(node, "") if isinstance(node.get("type"), (str, list)) \
                or "nullable" in node else node
            return {k: walk(v) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node
    return walk(schema)


def resolve(root, ref: str, ptr: str):
    """The schema a local ``$ref`` (``#`` and a JSON pointer from the root, as
    :func:`toolc.schema.uris.localized` writes every reference that resolves inside the
    schema) points to, and its pointer."""
    # a URI's fragment is percent-decoded first (RFC 6901, section 6)
    path = unquote(ref[1:]) if isinstance(ref, str) and ref.startswith("#") else None
    if path is None or path and not path.startswith("/"):
        raise UnsupportedSchemaError(
            f"keyword '$ref' cannot be enforced: {ref!r} does not resolve inside the tool's "
            "schema (toolc follows JSON pointers, '$id' and '$anchor' within the tool's own "
            "schema and fetches nothing)",
            pointer=f"{ptr}/$ref", fix="copy the schema it names under '$defs' and refer to it "
                                       "as '#/$defs/NAME'")
    target = root
    for tok in path.split("/")[1:] if path else []:
        tok = unesc(tok)
        if isinstance(target, dict) and tok in target:
            target = target[tok]
        elif isinstance(target, list) and tok.isdigit() and int(tok) < len(target):
            target = target[int(tok)]
        else:
            raise UnsupportedSchemaError(f"'$ref' {ref!r} points to nothing",
                                         pointer=f"{ptr}/$ref", fix="fix the reference")
    return target, path


def _types_of(s: dict) -> set | None:
    t = s.get("type")
    if t is None:
        return None
    return {t} if isinstance(t, str) else set(t)


def _intersect_types(a: set | None, b: set | None) -> set | None:
    if a is None:
        return b
    if b is None:
        return a
    out = a & b
    if "integer" in (a - b) and "number" in b:
        out.add("integer")
    if "integer" in (b - a) and "number" in a:
        out.add("integer")
    return out


def _equal(x, y) -> bool:
    import jsonschema
    return jsonschema.Draft202012Validator({"const": x}).is_valid(y)


def _unconditional(schema: dict, ptr: str) -> dict:
    """``if``/``then``/``else`` as the ``anyOf`` it means, so that merging keeps each
    condition with its own branches."""
    if not any(k in schema for k in ("if", "then", "else")):
        return schema
    out = {k: v for k, v in schema.items() if k not in ("if", "then", "else")}
    if "if" not in schema:
        return out
    cond = schema["if"]
    yes = merge(cond, schema.get("then", True), f"{ptr}/then")
    no = merge({"not": cond}, schema.get("else", True), f"{ptr}/else")
    return merge(out, {"anyOf": [yes, no]}, ptr)


def merge(a, b, ptr: str):
    """One schema meaning ``a`` and ``b`` at once (both already normalized, no ``$ref``)."""
    if a is False or b is False:
        return False
    if a is True or a == {}:
        return b
    if b is True or b == {}:
        return a
    a, b = _unconditional(a, ptr), _unconditional(b, ptr)
    if isinstance(a, dict) and isinstance(b, dict):
        a, b = _merge_guard(a, b, ptr)
    out = {k: v for k, v in a.items() if k not in _IGNORED_IN_MERGE}
    for key, bv in b.items():
        if key in _IGNORED_IN_MERGE:
            continue
        if key not in out:
            out[key] = bv
            continue
        av = out[key]
        if key == "type":
            ts = _intersect_types(_types_of(a), _types_of(b))
            ts = [t for t in TYPES if t in ts]
            out["type"] = ts[0] if len(ts) == 1 else ts
        elif key in _LOWER:
            out[key] = max(av, bv)
        elif key in _UPPER:
            out[key] = min(av, bv)
        elif key == "required":
            out[key] = list(dict.fromkeys(list(av) + list(bv)))
        elif key in ("properties", "patternProperties", "$defs", "dependentRequired"):
            merged = dict(av)
            for name, sub in bv.items():
                if key == "dependentRequired":
                    merged[name] = list(dict.fromkeys(list(merged.get(name, [])) + list(sub)))
                else:
                    merged[name] = meet(merged[name], sub, f"{ptr}/{key}/{esc(name)}") \
                        if name in merged else sub
            out[key] = merged
        elif key in ("items", "additionalProperties", "propertyNames"):
            out[key] = meet(av, bv, f"{ptr}/{key}")
        elif key == "pattern":
            pa = av if isinstance(av, list) else [av]
            pb = bv if isinstance(bv, list) else [bv]
            out[key] = list(dict.fromkeys(pa + pb))
        elif key == "enum":
            out[key] = [x for x in av if any(_equal(x, y) for y in bv)]
        elif key == "anyOf":
            out[key] = [meet(x, y, f"{ptr}/anyOf") for x in av for y in bv]
        elif key == "not" and not _equal(av, bv):
            out[key] = {"anyOf": [av, bv]}      # neither one nor the other
        elif key == "prefixItems":
            n = max(len(av), len(bv))
            ai, bi = a.get("items", True), b.get("items", True)
            out[key] = [meet(av[i] if i < len(av) else ai, bv[i] if i < len(bv) else bi,
                             f"{ptr}/prefixItems/{i}") for i in range(n)]
        elif _equal(av, bv):
            continue
        else:
            raise MergeConflict(
                f"'allOf' cannot be merged exactly: two different values of {key!r}",
                pointer=f"{ptr}/allOf", fix=f"keep one {key!r}")
    # one side's items also govern the other side's prefix (the prefix must not escape them)
    for x, y in ((a, b), (b, a)):
        if isinstance(x, dict) and isinstance(y, dict) and "prefixItems" in x \
                and "prefixItems" not in y and "items" in y:
            out["prefixItems"] = [meet(p, y["items"], f"{ptr}/prefixItems/{i}")
                                  for i, p in enumerate(x["prefixItems"])]
    # an explicit additionalProperties on one side also governs the other side's extra names
    # (those that match none of its own patterns: a pattern's schema governs those)
    for x, y in ((a, b), (b, a)):
        if isinstance(x, dict) and isinstance(y, dict) and "additionalProperties" in x:
            xp = x.get("properties", {})
            if y.get("properties"):     # (a copy: out's may still be y's own dict)
                out["properties"] = dict(out["properties"])
            for name in y.get("properties", {}):
                if name not in xp and not any(pattern_search(p, name)
                                              for p in x.get("patternProperties") or {}):
                    out["properties"][name] = meet(out["properties"][name],
                                                   x["additionalProperties"],
                                                   f"{ptr}/properties/{esc(name)}")
    return out


def _merge_guard(a: dict, b: dict, ptr: str) -> tuple[dict, dict]:
    """``a`` and ``b`` ready for a keyword-wise merge; a conflict where the merge would admit
    more than both:

    * one side's explicit ``additionalProperties`` governs every name its own properties and
      patterns do not cover, so the other side's ``patternProperties`` must not lift it;
    * ``minContains``/``maxContains`` govern their own side's ``contains`` only: without one
      they mean nothing (dropped), and ``contains`` alone means at least one match."""
    for x, y in ((a, b), (b, a)):
        extra = x.get("additionalProperties", True)
        if extra is not True and extra != {} and \
                set(y.get("patternProperties", {})) - set(x.get("patternProperties", {})):
            raise MergeConflict("'allOf' cannot be merged exactly: 'patternProperties' beside "
                                "the other branch's 'additionalProperties'",
                                pointer=f"{ptr}/allOf", fix="declare the patterns in both")
    out = []
    for x, y in ((a, b), (b, a)):
        if "contains" not in x and ("minContains" in x or "maxContains" in x):
            x = {k: v for k, v in x.items() if k not in ("minContains", "maxContains")}
        elif "contains" in x and "minContains" not in x and "minContains" in y:
            x = dict(x, minContains=1)
        out.append(x)
    return out[0], out[1]
