"""``allOf`` as the intersection of its branches. A mixin of
:class:`~toolc.schema.compile.SchemaCompiler`.

Two constructions, each exact:

* **The merge** (:func:`toolc.schema.refs.merge`): one schema of the same keywords that means
  every branch at once (types intersect, bounds tighten, ``required`` lists unite,
  ``properties`` merge name by name, ...). It is tried first: it is cheaper, and an object keeps
  one key order, so a value the branches share is still written in one order.
* **The product**: where two branches hold keywords no single schema of the same keywords
  means (two ``format``s, two ``multipleOf``s, two ``contains``, two ``oneOf``s, two different
  ``$ref``s ...), each JSON type the branches share is built on its own: every branch restricted
  to that type is compiled alone and the automata are intersected (the product construction of
  :mod:`toolc.schema.automata`, under its state budget). The languages are text languages, and
  a text both accept is a value both admit (sound); each branch holds the model's spelling of
  every value it admits, so the value both admit is kept (complete). Objects are the exception:
  each branch would write its keys in its own order, so objects are always merged, and a
  property whose schemas conflict becomes an ``allOf`` of its own, built the same way one level
  down. Where the objects' own keywords conflict, they are intersected keyword by keyword
  (:meth:`AllOfSchemas._object_pair`): two ``oneOf`` lists become one, each branch of the
  first meeting the whole second ``oneOf`` (exactly one ``a`` and exactly one ``b`` is exactly
  one ``a`` among the ``a`` that meet "exactly one ``b``"); two ``dependentSchemas`` meet key by
  key (``k`` implies both); ``patternProperties`` beside the other branch's
  ``additionalProperties`` are declared on both sides with that schema, where no property of
  that side matches the pattern and no pattern of it overlaps it (so the side means what it
  meant); where one does, the pair is built with key regions per side (:func:`_guarded_pair`).
  What is left is refused with the pointer.
"""

from __future__ import annotations

from ..errors import ToolcError, UnsupportedSchemaError
from ..fsm import Expr, alt
from .algebra import kinds, type_set
from .automata import intersect
from .keywords import EXTRA_UNLESS, pattern_search
from .refs import MergeConflict, esc, meet, merge

_KINDS = ("null", "boolean", "string", "number", "array", "object")


class AllOfSchemas:
    """``allOf`` (reached from ``_resolved`` of :class:`~toolc.schema.compile.SchemaCompiler`)."""

    def _all_of(self, schema: dict, ptr: str) -> Expr:
        rest = {k: v for k, v in schema.items() if k != "allOf"}
        parts = [rest] + [self._flat(b, f"{ptr}/allOf/{i}")
                          for i, b in enumerate(schema["allOf"])]
        try:
            merged = self._merged(parts, ptr)
        except MergeConflict:
            return self._product(parts, ptr)
        return self._schema(merged, ptr)

    @staticmethod
    def _merged(parts: list, ptr: str):
        out = parts[0]
        for p in parts[1:]:
            out = merge(out, p, ptr)
        return out

    def _product(self, parts: list, ptr: str) -> Expr:
        """The values every part admits, one JSON type at a time."""
        shared = set(_KINDS)
        for p in parts:
            shared &= kinds(type_set(p))
        out = []
        for kind in _KINDS:
            if kind not in shared:
                continue
            only = [self._restricted(p, kind) for p in parts]
            if any(x is False for x in only):
                continue
            if kind == "object":
                try:
                    merged = only[0]
                    for p in only[1:]:
                        merged = self._object_pair(merged, p, ptr)
                except MergeConflict as e:
                    raise UnsupportedSchemaError(
                        f"'allOf' over objects needs one key order, and its branches cannot be "
                        f"merged into one object: {e.message}", pointer=e.pointer or ptr,
                        fix=e.fix or "keep the conflicting keyword in one branch") from None
                out.append(self._or_nothing(merged, ptr))
                continue
            exprs = [self._or_nothing(x, ptr) for x in only]
            out.append(intersect(*exprs))
        return alt(*out)

    def _object_pair(self, a, b, ptr: str):
        """``merge(a, b)`` of two object schemas, with the keywords that the plain merge
        cannot combine intersected first (see the module's docstring)."""
        if not isinstance(a, dict) or not isinstance(b, dict):
            return merge(a, b, ptr)
        a, b = dict(a), dict(b)
        if "oneOf" in a and "oneOf" in b and a["oneOf"] != b["oneOf"]:
            other = b.pop("oneOf")
            a["oneOf"] = [meet(x, {"oneOf": other}, f"{ptr}/oneOf/{i}")
                          for i, x in enumerate(a["oneOf"])]
        if "dependentSchemas" in a and "dependentSchemas" in b:
            da, db = a["dependentSchemas"], b.pop("dependentSchemas")
            a["dependentSchemas"] = {
                k: meet(da[k], db[k], f"{ptr}/dependentSchemas/{k}") if k in da and k in db
                else da.get(k, db.get(k)) for k in {**da, **db}}
        for x, y in ((a, b), (b, a)):
            extra = x.get("additionalProperties", True)
            new = set(y.get("patternProperties") or {}) - set(x.get("patternProperties") or {})
            if extra is True or extra == {} or not new:
                continue
            if all(self._pattern_apart(p, x) for p in new):
                x["patternProperties"] = dict(x.get("patternProperties") or {},
                                              **{p: extra for p in sorted(new)})
        if any(EXTRA_UNLESS in x or _explicit_extra(x) is not None and set(
                y.get("patternProperties") or {}) - set(x.get("patternProperties") or {})
               for x, y in ((a, b), (b, a))):
            return _guarded_pair(a, b, ptr)
        return merge(a, b, ptr)

    def _pattern_apart(self, pattern: str, x: dict) -> bool:
        """Whether no property ``x`` declares matches ``pattern`` and no pattern of ``x``
        overlaps it (then ``x``'s ``additionalProperties`` alone governs its names)."""
        import json

        from ..fsm import compile_expr
        from .automata import intersect, is_empty
        from .strings import pattern_expr
        try:
            mine = pattern_expr(pattern, "")
            dfa = compile_expr(mine)
            for name in x.get("properties") or {}:
                q = dfa.step_bytes(0, json.dumps(name, ensure_ascii=False)[1:-1].encode())
                if q >= 0 and dfa.final[q]:
                    return False
            return all(is_empty(intersect(mine, pattern_expr(q, "")))
                       for q in x.get("patternProperties") or {})
        except ToolcError:      # a pattern toolc cannot read: no proof
            return False


def _explicit_extra(x: dict):
    """``x``'s ``additionalProperties`` where it restricts anything (None: it does not)."""
    extra = x.get("additionalProperties", True)
    return None if extra is True or extra == {} else extra


def _guarded_pair(a: dict, b: dict, ptr: str) -> dict:
    """The object both ``a`` and ``b`` admit, where one side's ``additionalProperties`` meets
    patterns of the other that it does not share. Per name, each side asks its own property
    schema, else every pattern of its own that the name matches, else its
    ``additionalProperties``. The merged object declares every name either side declares or
    requires, each meeting what both sides ask of it; an undeclared name's value meets the
    schemas of every pattern it matches (objects.py splits overlapping patterns into regions)
    and, through ``EXTRA_UNLESS``, each side's ``additionalProperties`` where the name
    matches none of that side's patterns; a name matching no pattern at all meets both
    ``additionalProperties``."""
    sides = []
    for x in (a, b):        # [patterns, X] pairs: x's own, then what x carried in
        pats = list(x.get("patternProperties") or {})
        unless = [list(u) for u in x.get(EXTRA_UNLESS) or ()]
        extra = _explicit_extra(x)
        sides.append((x, unless + ([[pats, extra]] if extra is not None else [])))
    bare = [{k: v for k, v in x.items() if k not in ("additionalProperties", EXTRA_UNLESS)}
            for x in (a, b)]
    out = merge(bare[0], bare[1], ptr)
    names = dict.fromkeys(list(out.get("properties") or {}) + list(out.get("required") or []))
    for trigger, needed in (out.get("dependentRequired") or {}).items():
        names.update(dict.fromkeys([trigger, *needed]))
    props = {n: (out.get("properties") or {}).get(n, True) for n in names}
    for x, unless in sides:
        own = x.get("properties") or {}
        for name in names:
            if name in own:
                continue
            for pats, extra in unless:
                if not any(pattern_search(p, name) for p in pats):
                    props[name] = meet(props[name], extra, f"{ptr}/properties/{esc(name)}")
    if props:
        out["properties"] = props
    extras = [u[1] for _, unless in sides for u in unless]
    rest = True
    for extra in extras:
        rest = meet(rest, extra, f"{ptr}/additionalProperties")
    out["additionalProperties"] = rest
    out[EXTRA_UNLESS] = [u for _, unless in sides for u in unless]
    return out
