"""What the undeclared members of an object beside a negation hold, region by region, and the
objects where one of them fails a negated ``additionalProperties``/``patternProperties``
schema. A mixin of :class:`~toolc.schema.negation.NegatedObjects`.

An undeclared member's name matches some set ``S`` of the object's patterns (and none of the
others); its value then satisfies every pattern schema of ``S`` (``additionalProperties`` where
``S`` is empty) and, for an object that ``allOf`` built (:mod:`toolc.schema.allof`), each side's
``additionalProperties`` whose patterns the name misses (``EXTRA_UNLESS``). Each region's value
is kept as that list of conjuncts, so a proof may use any one of them: the region *never fails*
``X`` when one conjunct implies ``X``, and *always fails* it when one is disjoint from ``X``.
For the keys a negated rule governs (those matching its pattern, or matching none of the
negated schema's patterns), "some undeclared member fails ``X``" is then exact:

* every region that holds such a key never fails: nothing to add;
* the others always fail: "holds an undeclared key in those regions", a set of keys, which
  repeated keys do not change (the object less the same object with its keys narrowed to the
  complement: :meth:`~toolc.schema.negation.NegatedObjects._names_outside`);
* a region may pass or fail: refused, since a text may repeat a key (the first member failing,
  the last passing) and no regular language tells such texts from those whose keys differ
  (docs/json-schema.md, *What stays refused*).
"""

from __future__ import annotations

from ..errors import ToolcError, UnsupportedSchemaError
from ..fsm import alt, star
from .automata import difference, intersect, is_empty
from .canon import CANON
from .keywords import ANNOTATIONS, EXTRA_UNLESS, pattern_search
from .refs import MergeConflict, esc
from .strings import ANY_CHAR, pattern_expr

#: an object with more patterns than this has too many regions (2^n) to tell apart
MAX_REGION_PATTERNS = 4
# keywords beside an object that may declare more keys once merged (closed mode reads the
# object's own closing differently then): no region is known
_PARTS = ("anyOf", "oneOf", "allOf", "if", "dependentSchemas", "not", "$ref")


class UndeclaredMembers:
    """``_negated_extras`` and the regions it reads (reached from ``_negated_object``)."""

    def _negated_extras(self, neg: dict, ptr: str, universe, reading: bool, base) -> list:
        """The objects holding an undeclared key (of ``neg``) whose value fails ``neg``'s
        ``additionalProperties`` or ``patternProperties`` schema. Over a known universe, one
        alternative per key. Beside an open object, the keys it declares get one each, and
        its undeclared members are read region by region (see the module's docstring)."""
        props = neg.get("properties") or {}
        patterns = neg.get("patternProperties") or {}
        rest = neg.get("additionalProperties", not (reading and self.closed_objects and props))
        rules = [(p, s) for p, s in patterns.items() if s is not True and s != {}]
        if rest not in (True, {}):
            rules.append((None, rest))
        if not rules:
            return []
        flat = base if universe is not None else self._flat_object(base)
        mine = self._declared_keys(base if flat is None else flat) if universe is None \
            else universe
        out = []
        for k in sorted(mine - set(props)):
            for pat, sub in rules:
                hit = [p for p in patterns if pattern_search(p, k)]
                if (pat is None and not hit) or (pat is not None and pat in hit):
                    sub = self._closed_copy(sub) if reading else sub
                    out.append({"type": "object", "required": [k],
                                "properties": {k: {"not": sub}}})
        if universe is not None:
            return out
        regions = self._undeclared_regions(flat)
        for pat, sub in rules:
            where = f"{ptr}/additionalProperties" if pat is None else \
                f"{ptr}/patternProperties/{esc(pat)}"
            keep = self._failing_regions(regions, pat, list(patterns), sub, reading, where)
            if keep is None:
                continue        # no undeclared member of base fails it
            # "holds an undeclared key of the rule outside the regions that never fail"
            names = [{"enum": sorted(set(props) | mine)}]
            names += [{"pattern": p} for p in patterns] if pat is None else \
                [{"not": {"pattern": pat}}]
            names += keep
            out.append({"type": "object", "not": {"propertyNames": {"anyOf": names}}
                        if len(names) > 1 else {"propertyNames": names[0]}})
        return out

    def _failing_regions(self, regions, pat, neg_patterns: list, sub, reading: bool,
                         where: str) -> list | None:
        """None where no undeclared member in the rule's keys can fail ``sub``; otherwise the
        name schemas of the regions that never fail it (every other one always fails it).
        Refused where a region may do both, or where the regions are not known."""
        why = None
        if regions == []:
            return None
        if regions is None:
            if sub is False:
                return []
            why = ("whose undeclared members are not read here (a 'oneOf', 'if', "
                   "'dependentSchemas', 'not' or '$ref' beside it, or more than "
                   f"{MAX_REGION_PATTERNS} patterns): not built")
        else:
            never, fail = [], 0
            for names, conj in regions:
                if not self._region_meets(names, regions, pat, neg_patterns):
                    continue
                if any(self._never_fails(c, sub) for c in conj):
                    never.append(names)
                elif sub is False or any(self.disjoint(c, sub, open_b=not reading)
                                         for c in conj):
                    fail += 1
                else:
                    why = "whose undeclared members may pass or fail it"
                    break
            if why is None:
                if not fail:
                    return None
                every = sorted({p for names, _ in regions for p in names})
                return [_region_names(names, every) for names in never]
        raise UnsupportedSchemaError(
            f"'not' over objects cannot say \"some undeclared member fails this schema\" "
            f"beside an object {why}" + ("" if regions is None else ": a text may repeat a "
                                         "key (first member failing, last passing), and no "
                                         "regular language tells such texts from the ones "
                                         "whose keys differ"), pointer=where,
            fix="close the object beside it, give its undeclared members a schema "
                "disjoint from this one, or use 'anyOf'")

    def _region_meets(self, names: list, regions, pat, neg_patterns: list) -> bool:
        """Whether a name may match the patterns ``names`` (and no other of the object's)
        and lie in the rule's keys (matching ``pat``; None: matching none of
        ``neg_patterns``). True where a pattern cannot be read (no proof)."""
        every = {p for n, _ in regions for p in n}
        if not every:
            return True     # one region, all names (whatever the rule governs, it may meet)
        try:
            key = intersect(star(ANY_CHAR), *(pattern_expr(p, "") for p in names))
            others = [pattern_expr(p, "") for p in sorted(every - set(names))]
            if pat is not None:
                key = intersect(key, pattern_expr(pat, ""))
            elif neg_patterns:
                others += [pattern_expr(p, "") for p in neg_patterns]
            if others:
                key = difference(key, alt(*others))
            return not is_empty(key)
        except ToolcError:
            return True

    def _flat_object(self, base):
        """``base`` with an ``allOf`` of objects merged as ``allOf`` builds it (None where it
        cannot be)."""
        if not isinstance(base, dict) or "allOf" not in base:
            return base
        out = {k: v for k, v in base.items() if k != "allOf"}
        try:
            for i, b in enumerate(base["allOf"]):
                b = self._restricted(self._flat(b, f"/allOf/{i}"), "object")
                if b is False:
                    return False
                out = self._object_pair(out, b, "")
        except (MergeConflict, ToolcError):
            return None
        return None if isinstance(out, dict) and "allOf" in out else out

    def _undeclared_regions(self, base) -> list | None:
        """``(patterns, conjuncts)`` for each set of ``base``'s patterns a name may match:
        the schemas every undeclared member whose name matches exactly those satisfies (a
        region whose members are forbidden is left out: [] means no undeclared member at
        all). None where that is not known here (parts that may declare more keys, too many
        patterns)."""
        if base is False:
            return []
        if not isinstance(base, dict) or any(k in base for k in _PARTS):
            return None
        if base.get("propertyNames") is False:
            return []
        props = base.get("properties") or {}
        extra = base.get("additionalProperties", not (self.closed_objects and props))
        patterns = base.get("patternProperties") or {}
        if len(patterns) > MAX_REGION_PATTERNS:
            return None
        unless = base.get(EXTRA_UNLESS) or ()
        out = []
        for bits in range(1 << len(patterns)):
            names = [p for i, p in enumerate(patterns) if bits >> i & 1]
            conj = [patterns[p] for p in names] if names else [extra]
            conj += [x for pats, x in unless if not set(names) & set(pats)]
            conj = [c for c in _conjuncts(conj) if c is not True and c != {}]
            if not any(c is False for c in conj):
                out.append((names, conj or [True]))
        return out

    def _declared_keys(self, base) -> frozenset:
        if not isinstance(base, dict):
            return frozenset()
        return frozenset(k for k, v in (base.get("properties") or {}).items() if v is not False)

    def _never_fails(self, theirs, sub) -> bool:
        """Whether every value of ``theirs`` passes ``sub`` (a proof, so False: maybe not):
        trivially, or where both hold every spelling of their values (scalars, enums,
        arrays of such) and ``theirs`` less ``sub`` is empty."""
        if sub is True or sub == {} or theirs is False or theirs == sub:
            return True
        from .algebra import type_set       # (algebra imports this module)
        if isinstance(sub, dict) and [k for k in sub if k not in ANNOTATIONS] == ["type"] \
                and theirs is not True and type_set(theirs) <= type_set(sub):
            return True     # a type every value of theirs has
        if theirs is True or not (self.complete(theirs) and self.complete(sub)):
            return False
        try:
            mine = intersect(self._or_nothing(theirs, ""), CANON)
            return is_empty(difference(mine, self._or_nothing(sub, "")))
        except ToolcError:
            return False


def _region_names(names: list, every: list) -> dict:
    """The names matching every pattern of ``names`` and no other pattern of ``every``, as a
    ``propertyNames`` schema of ``anyOf``/``not``/``pattern`` (what ``_names_expr`` reads)."""
    outside = [{"not": {"pattern": p}} for p in names] + \
        [{"pattern": p} for p in every if p not in names]
    return {"not": {"anyOf": outside}} if outside else {}


def _conjuncts(schemas: list) -> list:
    """``schemas`` with each plain ``allOf`` spread into its branches."""
    out = []
    for s in schemas:
        if isinstance(s, dict) and list(s) == ["allOf"]:
            out += _conjuncts(list(s["allOf"]))
        else:
            out.append(s)
    return out
