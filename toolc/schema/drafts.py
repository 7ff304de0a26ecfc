"""Older JSON Schema drafts read by their ``$schema``, rewritten into 2020-12 spellings.

A tool's root ``$schema`` names its dialect; without one the schema is 2020-12. Drafts 4, 6,
7 and 2019-09 differ from 2020-12 in spelling, not in what can be said, so each schema object
is rewritten before compilation (:func:`to_2020_12`):

* draft 4: boolean ``exclusiveMinimum``/``exclusiveMaximum`` modify ``minimum``/``maximum``
  (``{"minimum": 5, "exclusiveMinimum": true}`` is ``{"exclusiveMinimum": 5}``); ``id`` is
  ``$id`` (removed here: :mod:`toolc.schema.uris` has resolved every ``$ref`` through it);
* drafts 4-7 and 2019-09: ``items`` as a list is the tuple form (``prefixItems``), and
  ``additionalItems`` then governs the rest (2020-12's ``items``; without a tuple it is
  meaningless and dropped);
* drafts 4-7: ``dependencies`` holds ``dependentRequired`` (list values) and
  ``dependentSchemas`` (schema values);
* drafts 4-7: a schema object holding ``$ref`` means only its ``$ref`` (its other keywords
  are ignored, as those drafts say, an ``$id`` too; ``definitions`` beside it stays, for
  resolution);
* ``definitions`` needs no rewrite: ``$ref`` resolves it by its JSON pointer (a pointer
  through a renamed keyword, ``#/items/0`` into a tuple, is renamed with it:
  :func:`toolc.schema.uris.renamed_pointer`).

Draft 3 (``required`` as a boolean, ``disallow``, ``extends``) means other things with the
same words and is refused. An unknown ``$schema`` is read as 2020-12, with a notice.
"""

from __future__ import annotations

from ..errors import UnsupportedSchemaError
from ..pointer import esc

DRAFT4, DRAFT6, DRAFT7, DRAFT2019, DRAFT2020 = "draft-04", "draft-06", "draft-07", \
    "2019-09", "2020-12"
_DIALECTS = {"json-schema.org/draft-04/schema": DRAFT4,
             "json-schema.org/draft-06/schema": DRAFT6,
             "json-schema.org/draft-07/schema": DRAFT7,
             "json-schema.org/draft/2019-09/schema": DRAFT2019,
             "json-schema.org/draft/2020-12/schema": DRAFT2020}
_TUPLE_DRAFTS = (DRAFT4, DRAFT6, DRAFT7, DRAFT2019)
_DEPENDENCIES_DRAFTS = (DRAFT4, DRAFT6, DRAFT7)
_REF_ALONE_DRAFTS = (DRAFT4, DRAFT6, DRAFT7)


def dialect(schema) -> tuple[str, str | None]:
    """The draft a root schema is written in, and a notice when its ``$schema`` is unknown."""
    uri = schema.get("$schema") if isinstance(schema, dict) else None
    if not isinstance(uri, str):
        return DRAFT2020, None
    key = uri.split("://", 1)[-1].rstrip("#")
    if key in _DIALECTS:
        return _DIALECTS[key], None
    if key == "json-schema.org/draft-03/schema":
        raise UnsupportedSchemaError(
            "draft 3 is not supported: its keywords mean other things than 2020-12's",
            pointer="/$schema", fix="rewrite the schema in draft 7 or 2020-12")
    return DRAFT2020, f"unknown $schema {uri!r} read as JSON Schema 2020-12"


def to_2020_12(node: dict, draft: str, renames: dict | None = None) -> dict:
    """One schema object with the older draft's spellings rewritten (a copy if any).

    ``renames`` receives, for each rewritten keyword, its new pointer (relative to the node)
    and the one it had: ``{"/prefixItems": "/items"}``."""
    if draft == DRAFT2020:
        return node
    renames = {} if renames is None else renames
    out = dict(node)
    if draft == DRAFT4:
        if isinstance(out.get("id"), str):
            del out["id"]
        for ex, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
            flag = out.get(ex)
            if isinstance(flag, bool):
                del out[ex]
                if flag and bound in out:
                    out[ex] = out.pop(bound)
                    renames[f"/{ex}"] = f"/{bound}"
    if draft in _REF_ALONE_DRAFTS and "$ref" in out:
        # drafts 4-7: "All other properties in a "$ref" object MUST be ignored"
        out = {k: v for k, v in out.items() if k in ("$ref", "definitions", "$defs")}
    if draft in _TUPLE_DRAFTS:
        if isinstance(out.get("items"), list):
            out["prefixItems"] = out.pop("items")
            renames["/prefixItems"] = "/items"
            if "additionalItems" in out:
                out["items"] = out.pop("additionalItems")
                renames["/items"] = "/additionalItems"
        else:
            out.pop("additionalItems", None)     # without a tuple it applies to nothing
    if draft in _DEPENDENCIES_DRAFTS and isinstance(out.get("dependencies"), dict):
        for name, dep in out.pop("dependencies").items():
            key = "dependentRequired" if isinstance(dep, list) else "dependentSchemas"
            out[key] = dict(out.get(key, {}), **{name: dep})
            renames[f"/{key}/{esc(name)}"] = f"/dependencies/{esc(name)}"
    return out
