"""``unevaluatedProperties`` and ``unevaluatedItems``, rewritten before compilation into
keywords toolc enforces exactly. A mixin of :class:`~toolc.schema.compile.SchemaCompiler`.

What a schema *evaluates* at an instance is what its adjacent keywords and the in-place
subschemas that pass there look at: ``properties`` (its names), ``patternProperties`` (the
names its patterns match), ``additionalProperties`` and a nested ``unevaluatedProperties``
(every name); ``prefixItems`` (its prefix), ``items`` and a nested ``unevaluatedItems`` (every
item), ``contains`` (the items it matches). In-place subschemas are ``allOf`` branches and
``$ref`` targets (always), the passing ``anyOf``/``oneOf`` branches, ``if`` with ``then`` when
``if`` passes and ``else`` when it fails, and the ``dependentSchemas`` of present keys; ``not``
evaluates nothing.

``S`` with ``unevaluatedProperties: U`` becomes ``S`` without it, in an ``allOf`` with ``Y``:
for a value of ``S``, ``Y`` holds exactly when every name outside what ``S`` evaluates
satisfies ``U``. Where the evaluated set is static (names ``N``, patterns ``P``, or all),
``Y`` is ``{"properties": {n: {} for N}, "patternProperties": {p: {} for P},
"additionalProperties": U}`` (``True`` for "all"): an ``additionalProperties`` that sees
exactly those names. Where it depends on which subschemas pass, ``Y`` splits into cases, each
selected by the subschemas that decide it:

* ``anyOf``: one case per set ``T`` of branches that evaluate something, ``T``'s branches
  holding, the names of ``T`` evaluated. A value whose passing set is larger only evaluates
  more, so "some ``T`` holds and its case's names cover the rest" is exact without saying
  that the other branches fail;
* ``oneOf``: one case per branch, that branch holding (``S``'s own ``oneOf`` says it is the
  only one);
* ``if``/``then``/``else``: ``Y`` is itself a conditional on the same ``if``;
* ``dependentSchemas``: the key present in an object, or not.

Items are the same with ``prefixItems: [{}, ...]`` and ``items: U`` (``items: {"anyOf": [U,
C...]}`` where ``contains: C`` evaluates the items it matches: exact, since an item outside
the prefix is evaluated iff it matches some ``C``). Every rewrite keeps what the schema
evaluates (the added ``additionalProperties``/``items`` evaluate the rest), so an outer
``unevaluated*`` sees the same sets. Refused with the pointer: more than
:data:`MAX_ANYOF` evaluating ``anyOf`` branches, more than :data:`MAX_CASES` cases, in-place
``$ref`` cycles, ``$dynamicRef``. ``unevaluatedProperties: true`` is an explicit opening, like
``additionalProperties: true``: under ``--additional-properties closed`` it keeps the object
open.
"""

from __future__ import annotations

from itertools import combinations

from ..errors import UnsupportedSchemaError
from .refs import esc, resolve
from .vocabulary import _children

KEYWORD = {"properties": "unevaluatedProperties", "items": "unevaluatedItems"}
#: the most branches of one anyOf that evaluate something (2**n - 1 cases)
MAX_ANYOF = 4
#: the most cases one unevaluated keyword is split into
MAX_CASES = 32
#: the most $ref targets followed in place for one keyword (a cycle never ends)
MAX_IN_PLACE_REFS = 64
_OWN = {"properties": ("properties", "patternProperties", "additionalProperties",
                       "unevaluatedProperties"),
        "items": ("prefixItems", "items", "contains", "unevaluatedItems")}
_SPLIT = ("anyOf", "oneOf", "if", "dependentSchemas")


def mentions(schema) -> bool:
    """Whether an ``unevaluated*`` keyword appears anywhere in ``schema``."""
    stack = [schema]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            if "unevaluatedProperties" in v or "unevaluatedItems" in v:
                return True
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return False


def first_pointer(schema, key: str, ptr: str = "") -> str | None:
    """The pointer of the first ``key`` in ``schema`` (depth first), or None."""
    if isinstance(schema, dict):
        if key in schema:
            return f"{ptr}/{esc(key)}"
        items = schema.items()
    elif isinstance(schema, list):
        items = enumerate(schema)
    else:
        return None
    for k, v in items:
        got = first_pointer(v, key, f"{ptr}/{esc(k)}")
        if got is not None:
            return got
    return None


class _Seen:
    """What the subschemas known to hold evaluate (one case)."""

    def __init__(self, names=(), patterns=(), prefix=0, contains=(), every=False):
        self.names, self.patterns = dict.fromkeys(names), dict.fromkeys(patterns)
        self.prefix, self.contains, self.every = prefix, list(contains), every

    def copy(self) -> _Seen:
        return _Seen(self.names, self.patterns, self.prefix, self.contains, self.every)


class UnevaluatedSchemas:
    """``_uneval_clean`` (reached from ``_value_schema``, ``_flat`` and ``_deref``)."""

    def _uneval_clean(self, node, ptr: str):
        """``node`` with every ``unevaluated*`` in it (not across ``$ref``) rewritten."""
        if getattr(self, "_uneval_root", None) is not self.root or self.root is None:
            self._uneval_root = self.root
            self._uneval_on = mentions(self.root) or mentions(node)
            self._uneval_memo: dict = {}
        if not self._uneval_on or not isinstance(node, (dict, list)):
            return node
        if id(node) in self._uneval_memo:
            return self._uneval_memo[id(node)][1]
        if isinstance(node, list):
            out = [self._uneval_clean(v, f"{ptr}/{i}") for i, v in enumerate(node)]
        else:
            # ($defs are cleaned when a $ref reaches them: an unused one is never refused)
            out = {k: v if k in ("$defs", "definitions") else
                   _children(k, v, f"{ptr}/{esc(k)}", self._uneval_clean)
                   for k, v in node.items()}
            if "unevaluatedProperties" in out or "unevaluatedItems" in out:
                out = self._uneval_rewritten(node, out, ptr)
        if out == node:
            out = node
        self._uneval_memo[id(node)] = (node, out)
        self._uneval_memo[id(out)] = (out, out)
        return out

    def _uneval_rewritten(self, node: dict, out: dict, ptr: str) -> dict:
        """``out`` (``node`` with its subschemas rewritten) with its own unevaluated keywords
        as an ``allOf`` conjunct each (the evaluated sets read from ``node`` as written)."""
        node, out = self._uneval_branch_one_ofs(node, out)
        extra, split_one_of = [], False
        for kind, key in KEYWORD.items():
            if key not in out:
                continue
            u = out.pop(key)
            kptr = f"{ptr}/{esc(key)}"
            try:
                y, implied = self._uneval_constraint(kind, node, u, ptr, kptr)
            except UnsupportedSchemaError:
                if not self.options.lenient:
                    raise
                self.dropped.append({"pointer": kptr, "keyword": key, "why": (
                    "its evaluated set could not be split into cases exactly")})
                continue
            if y is not True:
                extra.append(y)
                split_one_of = split_one_of or "oneOf" in node and self._uneval_evaluates(
                    kind, node, {"kptr": kptr}, "oneOf")
            if implied in out and y is not True:
                del out[implied]        # the own anyOf: y's cases each name its branches
        if split_one_of and not self._uneval_apart(node["oneOf"]):
            # exactly one branch, said without 'oneOf': each case's 'oneOf' selector then
            # meets plain branches, not the exclusivity a 'oneOf' beside them would need
            extra.insert(0, _exclusive(out.pop("oneOf"), self._uneval_lead(node)))
        head = []
        if extra and isinstance(out.get("$ref"), str):
            # the $ref as the first in-place branch: the node's own names come first, as its
            # allOf writes them (a $ref beside them would write its target's first)
            head = [{"$ref": out.pop("$ref")}]
        if extra:
            out["allOf"] = head + list(out.get("allOf", [])) + extra
        return out

    def _uneval_branch_one_ofs(self, node: dict, out: dict) -> tuple[dict, dict]:
        """``node`` and ``out`` with the ``oneOf`` of each inline ``allOf`` branch that
        evaluates and whose branches may share a value said as :func:`_exclusive` (the same
        values, the same evaluated names), so the cases meet no ``oneOf``."""
        bs = node.get("allOf")
        if not isinstance(bs, list):
            return node, out
        new, clean, lead = list(bs), list(out["allOf"]), self._uneval_lead(node)
        for i, b in enumerate(bs):
            if not isinstance(b, dict) or not isinstance(b.get("oneOf"), list) or not any(
                    self._uneval_evaluates(kind, b, {"kptr": ""}, "oneOf")
                    for kind, key in KEYWORD.items() if key in node) \
                    or self._uneval_apart(b["oneOf"]):
                continue
            for parts, j in ((new, b), (clean, clean[i])):
                rest = {k: v for k, v in j.items() if k != "oneOf"}
                rest["allOf"] = list(rest.get("allOf", [])) + [_exclusive(j["oneOf"], lead)]
                parts[i] = rest
        out["allOf"] = clean
        return dict(node, allOf=new), out

    def _uneval_lead(self, node: dict) -> list:
        """A first part for each alternative of a split: the names the node always declares,
        in the order the compiler merges them (a ``$ref`` target's first, then its own, then
        its ``allOf`` branches'), so that a branch met with them keeps that key order."""
        names: dict = {}

        def walk(s, depth):
            if not isinstance(s, dict) or depth > MAX_IN_PLACE_REFS:
                return
            if isinstance(s.get("$ref"), str) and depth:    # (the node's own: moved to allOf)
                try:
                    walk(resolve(self.root, s["$ref"], "")[0], depth + 1)
                except UnsupportedSchemaError:
                    return
            names.update(dict.fromkeys(s.get("properties") or {}))
            if isinstance(s.get("$ref"), str) and not depth:
                walk({"$ref": s["$ref"]}, depth + 1)
            for b in s.get("allOf") or []:
                walk(b, depth + 1)
        walk(node, 0)
        return [{"properties": {n: True for n in names}}] if names else []

    def _uneval_apart(self, branches) -> bool:
        """Whether no two ``branches`` share a value, read as JSON Schema reads them (open
        objects, whatever ``--additional-properties`` says)."""
        from dataclasses import replace
        judge = type(self)(replace(self.options, additional_properties="schema"))
        judge.root = self.root
        return all(judge.disjoint(a, b, "", open_b=True) for i, a in enumerate(branches)
                   for b in branches[i + 1:])

    def _uneval_constraint(self, kind: str, node: dict, u, ptr: str, kptr: str):
        """``Y`` for one keyword (see the module's docstring)."""
        if kind == "properties" and (u is True or u == {}):
            return {"additionalProperties": True}, None     # an explicit opening
        if u is True or u == {}:
            return True, None
        state = {"cases": 0, "refs": 0, "kptr": kptr, "lead": self._uneval_lead(node),
                 "own": node}
        y = self._uneval_cases(kind, [(node, ptr)], [], _Seen(), u, state, own=node)
        return y, state.get("implied")

    def _uneval_cases(self, kind, todo, conds, seen, u, state, own=None):
        """``Y`` given the subschemas ``todo`` (which hold), the conditionals ``conds`` not
        split yet, and what is evaluated so far; ``own``: the schema whose keyword this is
        (its own keyword is not a nested one)."""
        todo, conds, seen = list(todo), list(conds), seen.copy()
        while todo:
            s, p = todo.pop()
            self._uneval_local(kind, s, p, seen, todo, conds, state, s is own)
        if seen.every:
            return True
        if not conds:
            state["cases"] += 1
            if state["cases"] > MAX_CASES:
                self._uneval_refuse(state, f"its evaluated set needs more than {MAX_CASES} "
                                           "cases (in-place combinators that evaluate)")
            return self._uneval_leaf(kind, seen, u)
        (key, s, p), rest = conds[0], conds[1:]
        clean = self._uneval_clean
        if key == "anyOf":
            bs = s["anyOf"]
            live = [i for i, b in enumerate(bs) if self._uneval_evaluates(kind, b, state)]
            if len(live) > MAX_ANYOF:
                self._uneval_refuse(state, f"'anyOf' at {p} has {len(live)} branches that "
                                           f"evaluate (at most {MAX_ANYOF}: 2**n - 1 cases)")
            if s is state["own"] and len(live) == len(bs):
                state["implied"] = "anyOf"      # every case names a branch that holds
            alts = []
            for k in range(0 if len(live) < len(bs) else 1, len(live) + 1):
                for chosen in combinations(live, k):
                    y = self._uneval_cases(kind, [(bs[i], f"{p}/anyOf/{i}") for i in chosen],
                                           rest, seen, u, state)
                    alts.append(_all(state["lead"] + [clean(bs[i], f"{p}/anyOf/{i}")
                                                      for i in chosen] + [y]))
            return _any(alts)
        if key == "oneOf":
            alts = []
            for i, b in enumerate(s["oneOf"]):
                y = self._uneval_cases(kind, [(b, f"{p}/oneOf/{i}")], rest, seen, u, state)
                alts.append(_all(state["lead"] + [clean(b, f"{p}/oneOf/{i}"), y]))
            return _any(alts)
        if key == "if":
            cond, then, other = s["if"], s.get("then", True), s.get("else", True)
            yes = self._uneval_cases(kind, [(cond, f"{p}/if"), (then, f"{p}/then")], rest,
                                     seen, u, state)
            no = self._uneval_cases(kind, [(other, f"{p}/else")], rest, seen, u, state)
            if yes == no:
                return yes
            return {"if": clean(cond, f"{p}/if"), "then": yes, "else": no}
        name, dep = s                               # dependentSchemas: one key
        dptr = f"{p}/dependentSchemas/{esc(name)}"
        yes = self._uneval_cases(kind, [(dep, dptr)], rest, seen, u, state)
        no = self._uneval_cases(kind, [], rest, seen, u, state)
        if yes == no:
            return yes
        return {"if": {"type": "object", "required": [name]}, "then": yes, "else": no}

    def _uneval_local(self, kind, s, p, seen, todo, conds, state, is_own) -> None:
        """What ``s`` evaluates by its own keywords; its in-place parts go to ``todo``
        (always applied) or ``conds`` (applied when they pass)."""
        if s is False:
            seen.every = True       # nothing passes here: the case is never taken
            return
        if not isinstance(s, dict):
            return
        if "$dynamicRef" in s or "$recursiveRef" in s:
            self._uneval_refuse(state, f"'$dynamicRef' at {p} decides what is evaluated "
                                       "(not built)")
        if "$ref" in s:
            state["refs"] += 1
            if state["refs"] > MAX_IN_PLACE_REFS:
                self._uneval_refuse(state, f"'$ref' at {p} recurses in place")
            target, tptr = resolve(self.root, s["$ref"], p)
            todo.append((target, tptr))
        if kind == "properties":
            seen.names.update(dict.fromkeys(s.get("properties") or {}))
            seen.patterns.update(dict.fromkeys(s.get("patternProperties") or {}))
            if "additionalProperties" in s or "unevaluatedProperties" in s and not is_own:
                seen.every = True
        else:
            pre = s.get("prefixItems")
            if isinstance(pre, list):
                seen.prefix = max(seen.prefix, len(pre))
            if "contains" in s:
                seen.contains.append(self._uneval_clean(s["contains"], f"{p}/contains"))
            if "items" in s or "unevaluatedItems" in s and not is_own:
                seen.every = True
        for i, b in enumerate(s.get("allOf") or []):
            todo.append((b, f"{p}/allOf/{i}"))
        for key in ("anyOf", "oneOf", "if"):
            if key in s and self._uneval_evaluates(kind, s, state, key):
                conds.append((key, s, p))
        for name, dep in (s.get("dependentSchemas") or {}).items():
            if self._uneval_evaluates(kind, dep, state):
                conds.append(("dependentSchemas", (name, dep), p))

    def _uneval_evaluates(self, kind, s, state, only=None, depth=0) -> bool:
        """Whether ``s`` (or its keyword ``only``) may evaluate anything in place."""
        if not isinstance(s, dict):
            return False
        if depth > MAX_IN_PLACE_REFS:
            self._uneval_refuse(state, "a '$ref' recurses in place")
        keys = [only] if only else list(s)
        for key in keys:
            if key in _OWN[kind] or key in ("$dynamicRef", "$recursiveRef"):
                return True
            if key == "$ref":
                target, _ = resolve(self.root, s["$ref"], "")
                if self._uneval_evaluates(kind, target, state, None, depth + 1):
                    return True
            elif key in ("allOf", "anyOf", "oneOf"):
                if any(self._uneval_evaluates(kind, b, state, None, depth + 1)
                       for b in s[key] or []):
                    return True
            elif key == "if":
                if any(self._uneval_evaluates(kind, s.get(k), state, None, depth + 1)
                       for k in ("if", "then", "else")):
                    return True
            elif key == "dependentSchemas":
                if any(self._uneval_evaluates(kind, d, state, None, depth + 1)
                       for d in (s[key] or {}).values()):
                    return True
        return False

    @staticmethod
    def _uneval_leaf(kind: str, seen: _Seen, u):
        if kind == "properties":
            out = {}
            if seen.names:
                out["properties"] = {n: True for n in seen.names}
            if seen.patterns:
                out["patternProperties"] = {q: True for q in seen.patterns}
            out["additionalProperties"] = u
            return out
        if seen.contains:
            u = {"anyOf": ([] if u is False else [u]) + seen.contains}
        out = {"prefixItems": [True] * seen.prefix} if seen.prefix else {}
        out["items"] = u
        return out

    @staticmethod
    def _uneval_refuse(state: dict, why: str):
        key = state["kptr"].rsplit("/", 1)[1]
        raise UnsupportedSchemaError(
            f"keyword {key!r} cannot be enforced: {why}", pointer=state["kptr"],
            fix="declare the evaluated names or items statically (properties, allOf, $ref)")


def _exclusive(branches: list, lead: list):
    """``oneOf: branches`` said as an ``anyOf``: each branch and none of the others."""
    return _any([_all(lead + [b, {"not": _any([c for j, c in enumerate(branches) if j != i]
                                              or [False])}])
                 for i, b in enumerate(branches)])


def _all(parts: list):
    parts = [p for p in parts if p is not True and p != {}]
    if not parts:
        return True
    return parts[0] if len(parts) == 1 else {"allOf": parts}


def _any(alts: list):
    if any(a is True for a in alts):
        return True
    return alts[0] if len(alts) == 1 else {"anyOf": alts}
