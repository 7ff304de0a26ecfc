"""Schemas per keyword for the schema tests, and helpers to check a compiled language against
jsonschema: byte-level random walks (soundness) and instance rendering (completeness)."""

from __future__ import annotations

import copy
import json
import random
from collections import deque

import jsonschema

from toolc.fsm import compile_expr
from toolc.schema import SchemaCompiler, SchemaOptions
from toolc.schema.strings import expanded_lengths
from toolc.schema.refs import standardized


def obj(props: dict, required=None, **extra) -> dict:
    s = {"type": "object", "properties": props,
         "required": list(props) if required is None else list(required)}
    s.update(extra)
    return s


TREE = {"$defs": {"node": obj({"v": {"type": "integer"},
                               "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
                              ["v"])},
        **obj({"root": {"$ref": "#/$defs/node"}})}

# name -> the parameters schema of one tool
CASES = {
    "length": obj({"s": {"type": "string", "minLength": 2, "maxLength": 5}}),
    "pattern": obj({"s": {"type": "string", "pattern": "ab+c"}}),
    "pattern_anchored": obj({"code": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{2,4}$"}}),
    "pattern_branches": obj({"s": {"type": "string", "pattern": "^x|y$"}}),
    "pattern_length": obj({"s": {"type": "string", "pattern": "^[a-z]+$", "minLength": 2,
                                 "maxLength": 8}}),
    "pattern_escapes": obj({"s": {"type": "string", "pattern": '^[a"\\\\\\n]*$',
                                  "maxLength": 4}}),
    **{f"format_{f}": obj({"v": {"type": "string", "format": f}})
       for f in ("date", "time", "date-time", "duration", "email", "uuid", "ipv4", "ipv6",
                 "uri", "hostname")},
    "int_range": obj({"month": {"type": "integer", "minimum": 1, "maximum": 12},
                      "t": {"type": "integer", "minimum": -40, "maximum": 40},
                      "big": {"type": "integer", "minimum": 0, "maximum": 10 ** 9}}),
    "int_exclusive_multiple": obj({"n": {"type": "integer", "exclusiveMinimum": 0,
                                         "exclusiveMaximum": 100, "multipleOf": 5}}),
    "number_range": obj({"x": {"type": "number", "minimum": -1.5, "maximum": 2.25},
                         "p": {"type": "number", "exclusiveMinimum": 0,
                               "exclusiveMaximum": 1}}),
    "prefix_items": obj({"pt": {"type": "array", "items": False,
                                "prefixItems": [{"type": "integer"}, {"type": "string"}]}}),
    "prefix_rest": obj({"pt": {"type": "array", "prefixItems": [{"type": "boolean"}],
                               "items": {"type": "integer"}, "minItems": 2, "maxItems": 4}}),
    "contains": obj({"xs": {"type": "array", "items": {"type": "integer"}, "maxItems": 5,
                            "contains": {"type": "integer", "minimum": 10},
                            "minContains": 2}}),
    "additional_schema": obj({"a": {"type": "integer"}}, [],
                             additionalProperties={"type": "string", "maxLength": 3}),
    "additional_true": obj({"a": {"type": "integer"}}, ["a"], additionalProperties=True),
    "min_max_properties": obj({"a": {"type": "integer"}, "b": {"type": "boolean"},
                               "c": {"type": "null"}}, [], minProperties=1, maxProperties=2),
    "pattern_properties": {"type": "object", "additionalProperties": False,
                           "patternProperties": {"^x_": {"type": "integer"}}},
    "property_names": {"type": "object", "propertyNames": {"pattern": "^[a-z]{1,5}$"},
                       "additionalProperties": {"type": "boolean"}, "maxProperties": 3},
    "dependent_required": obj({"a": {"type": "integer"}, "b": {"type": "string"},
                               "c": {"type": "boolean"}}, [],
                              dependentRequired={"a": ["b"], "c": ["a"]}),
    "free_values": obj({"meta": {"type": "object"}, "v": {}, "xs": {"type": "array"}}, []),
    "refs": {"$defs": {"pos": {"type": "integer", "minimum": 0}},
             **obj({"a": {"$ref": "#/$defs/pos"}, "b": {"$ref": "#/$defs/pos"}}, ["a"])},
    "tree": TREE,
    "all_of": obj({"x": {"allOf": [{"type": "integer", "minimum": 0}, {"maximum": 10}]},
                   "o": {"allOf": [obj({"p": {"type": "string"}}),
                                   {"properties": {"p": {"maxLength": 3}}, "required": ["p"]}]}}),
    "one_of": obj({"x": {"oneOf": [{"type": "string", "maxLength": 3}, {"type": "integer"}]}}),
    "any_of_siblings": obj({"x": {"type": "string", "maxLength": 4,
                                  "anyOf": [{"pattern": "^a"}, {"pattern": "z$"}]}}),
    "nullable": obj({"x": {"type": "string", "nullable": True},
                     "e": {"type": "string", "enum": ["a", "b"], "nullable": True}}),
    "type_list": obj({"x": {"type": ["integer", "null"], "minimum": 3}}),
    "type_aliases": obj({"d": {"type": "dict"}, "f": {"type": "float"},
                         "l": {"type": "list", "items": {"type": "int"}}, "s": {"type": "str"},
                         "b": {"type": "bool"}, "t": {"type": "tuple"}, "a": {"type": "any"}},
                        []),
}

# recursive schemas: hypothesis-jsonschema cannot generate them, so instances are listed
EXPLICIT = {
    "tree": [{"root": {"v": 1}}, {"root": {"v": 1, "kids": []}},
             {"root": {"v": 1, "kids": [{"v": 2, "kids": [{"v": 3}]}, {"v": 4}]}}],
}


def validator(schema):
    return jsonschema.Draft202012Validator(
        standardized(schema), format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)


class ByteLang:
    """One schema compiled alone to a byte DFA (no framing, no tokenizer).

    Length bounds are built expanded (a chain of states per character): a byte DFA alone has
    no counter. tests/test_counted.py checks that counted artifacts behave as these do."""

    def __init__(self, schema, **options):
        self.compiler = SchemaCompiler(SchemaOptions(**options))
        with expanded_lengths():
            self.dfa = compile_expr(self.compiler.compile(schema))
        n = self.dfa.num_states
        nb = self.dfa.alphabet.num_byte_classes
        self.moves = [[(c, int(self.dfa.trans[q, c])) for c in range(nb)
                       if self.dfa.trans[q, c] >= 0] for q in range(n)]
        self.class_bytes = [self.dfa.alphabet.class_bytes(c) for c in range(nb)]
        preds = [[] for _ in range(n)]
        for q in range(n):
            for _, r in self.moves[q]:
                preds[r].append(q)
        self.dist = [-1] * n
        dq = deque(q for q in range(n) if self.dfa.final[q])
        for q in dq:
            self.dist[q] = 0
        while dq:
            r = dq.popleft()
            for q in preds[r]:
                if self.dist[q] < 0:
                    self.dist[q] = self.dist[r] + 1
                    dq.append(q)

    def accepts(self, data: bytes | str) -> bool:
        if isinstance(data, str):
            data = data.encode("utf-8")
        q = self.dfa.step_bytes(0, data)
        return q >= 0 and bool(self.dfa.final[q])

    def dies_at(self, data: bytes | str) -> int:
        """The byte offset where the DFA rejects ``data`` (len(data) if it never does)."""
        if isinstance(data, str):
            data = data.encode("utf-8")
        q = 0
        for i, b in enumerate(data):
            q = int(self.dfa.trans[q, self.dfa.alphabet.byte_class[b]])
            if q < 0:
                return i
        return len(data)

    def walk(self, rng: random.Random, budget: int = 40) -> bytes:
        """A random accepted byte string: uniform moves, then toward the end."""
        q, out = 0, bytearray()
        for step in range(budget + 10_000):
            if self.dfa.final[q] and (step >= budget or rng.random() < 0.1 or not self.moves[q]):
                return bytes(out)
            moves = self.moves[q]
            if step >= budget:
                best = min(self.dist[r] for _, r in moves)
                moves = [m for m in moves if self.dist[m[1]] == best]
            c, r = rng.choice(moves)
            out.append(rng.choice(self.class_bytes[c]))
            q = r
        raise AssertionError("the walk did not end")


def closed(schema):
    """additionalProperties false where properties are declared and nothing else is said
    (toolc's documented reading), so generated instances stay in toolc's language."""
    s = copy.deepcopy(schema)

    def fix(node):
        if isinstance(node, dict):
            if ("properties" in node and "additionalProperties" not in node
                    and "patternProperties" not in node):
                node["additionalProperties"] = False
            for v in node.values():
                fix(v)
        elif isinstance(node, list):
            for v in node:
                fix(v)
    fix(s)
    return s


def toolc_order(value, schema, root=None):
    """Object keys as toolc writes them: declared properties in schema order, then the rest."""
    root = root if root is not None else schema
    if isinstance(schema, dict) and "$ref" in schema:
        target = root
        for tok in schema["$ref"][2:].split("/"):
            target = target[tok]
        schema = target
    if not isinstance(schema, dict):
        return value
    for key in ("anyOf", "oneOf", "allOf"):
        for branch in schema.get(key, []):
            if isinstance(branch, dict) and validator(dict(branch, **({"$defs": root["$defs"]}
                                                                  if "$defs" in root else {}))
                                                      ).is_valid(value):
                value = toolc_order(value, branch, root)
                if key != "allOf":
                    break
    if isinstance(value, dict):
        props = schema.get("properties", {})
        out = {k: toolc_order(value[k], props[k], root) for k in props if k in value}
        extra = schema.get("additionalProperties", True)
        for k, v in value.items():
            if k not in out:
                out[k] = toolc_order(v, extra, root)
        return out
    if isinstance(value, list):
        prefix = schema.get("prefixItems", [])
        items = schema.get("items", True)
        return [toolc_order(v, prefix[i] if i < len(prefix) else items, root)
                for i, v in enumerate(value)]
    return value


def dumps(value, whitespace: str = "model") -> str:
    if whitespace == "compact":
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return json.dumps(value, ensure_ascii=False)


def encodable(value) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def nesting(value) -> int:
    """Container levels: 0 for a scalar, 1 for ``[]`` or ``{}``, 2 for ``[[]]``..."""
    if isinstance(value, dict):
        return 1 + max((nesting(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((nesting(v) for v in value), default=0)
    return 0
