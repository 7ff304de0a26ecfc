"""The JSON-Schema-Test-Suite's older drafts (7, the draft-specific files of 4 and 6, and the
reference files of 2019-09) against toolc, read as a tool's schema is: with the draft's
``$schema`` at its root, through the keyword pass (:func:`toolc.schema.vocabulary.prepare`)
that rewrites the draft's spellings (tuple ``items`` with ``additionalItems``,
``dependencies``, draft-04 boolean bounds, ``$ref`` that overrides its siblings).

The rules are the 2020-12 test's (:mod:`tests.test_json_schema_suite`): a refusal is a toolc
error; every group toolc compiles is sound, and complete unless docs/json-schema.md lists it
(``draft7/dependencies.json``, or the same group of the same 2020-12 file, whose reason holds
in every draft); a group that keyword pass did not fully enforce (it records what it drops)
is skipped, as its artifact's header says.
"""

from __future__ import annotations

import json

import pytest

from test_json_schema_suite import accepts, compiled, exclusions, fetch_suite
from toolc.errors import ToolcError
from toolc.schema.vocabulary import prepare

URIS = {"draft4": "http://json-schema.org/draft-04/schema#",
        "draft6": "http://json-schema.org/draft-06/schema#",
        "draft7": "http://json-schema.org/draft-07/schema#",
        "draft2019-09": "https://json-schema.org/draft/2019-09/schema"}
# every draft-7 file but the ones whose groups need remote documents or the meta-schema
DRAFT7 = [
    "additionalItems", "additionalProperties", "allOf", "anyOf", "boolean_schema", "const",
    "contains", "default", "dependencies", "enum", "exclusiveMaximum", "exclusiveMinimum",
    "format", "if-then-else", "infinite-loop-detection", "items", "maxItems", "maxLength",
    "maxProperties", "maximum", "minItems", "minLength", "minProperties", "minimum",
    "multipleOf", "not", "oneOf", "pattern", "patternProperties", "properties",
    "propertyNames", "ref", "required", "type", "uniqueItems",
]
# drafts 4 and 6: the files whose rules differ from draft 7's
OLDER = ["additionalItems", "dependencies", "items", "maximum", "minimum", "ref", "type"]
_SLOW = pytest.mark.slow
CASES = [("draft7", f, m) for f in DRAFT7 for m in ("closed", "schema")] + \
    [pytest.param(d, f, "closed", marks=_SLOW) for d in ("draft4", "draft6") for f in OLDER] + \
    [pytest.param("draft6", f, "closed", marks=_SLOW)
     for f in ("exclusiveMaximum", "exclusiveMinimum", "boolean_schema")] + \
    [pytest.param("draft2019-09", f, "closed", marks=_SLOW)      # $anchor, no $dynamicAnchor
     for f in ("ref", "anchor", "infinite-loop-detection")]


def prepared(schema, draft: str):
    """The group's schema read in its draft, or None when the pass dropped or refused a part
    of it (not enforced: nothing to check)."""
    if isinstance(schema, dict) and "$schema" not in schema:
        schema = dict(schema, **{"$schema": URIS[draft]})
    try:
        p = prepare(schema)
    except ToolcError:
        return None
    return None if p.dropped else p.schema


@pytest.mark.parametrize("draft, name, mode", CASES)
def test_draft_suite_file(draft, name, mode):
    groups = json.loads((fetch_suite(draft) / f"{name}.json").read_text(encoding="utf-8"))
    ex = {k: why for k, why in exclusions().items()
          if mode == "closed" or "closed by default" not in why}
    problems = []
    compiled_groups = 0
    for g in groups:
        schema = prepared(g["schema"], draft)
        dfa = None if schema is None else compiled(schema, mode)
        if dfa is None or isinstance(dfa, ToolcError):
            continue        # refused, with a toolc error: exact or refused
        compiled_groups += 1
        narrow = []
        for t in g["tests"]:
            ok = accepts(dfa, t["data"])
            if ok and not t["valid"]:
                problems.append(f"UNSOUND {g['description']!r}: {t['description']!r} accepted")
            if t["valid"] and not ok:
                narrow.append(t["description"])
        key = next((k for k in ((f"{draft}/{name}", g["description"]),
                                (name, g["description"])) if k in ex), None)
        if narrow and key is None:
            problems.append(f"{g['description']!r}: valid {narrow} rejected (fix it, or list "
                            f"the group among the exclusions in docs/json-schema.md)")
        if not narrow and key is not None and key[0] == f"{draft}/{name}":
            problems.append(f"{g['description']!r} is listed as an exclusion but gets every "
                            "label right: remove it from the list")
    assert not problems, "\n".join(problems)
    assert compiled_groups or name in ("definitions",), f"no group of {name} compiled"
