"""``$ref`` through base URIs: RFC 3986 reference resolution, the resources and anchors of one
schema document, and every ``$ref`` turned into the local JSON pointer that
:func:`toolc.schema.refs.resolve` follows.

The document is one tool's arguments schema, and its root's retrieval URI is empty. Walking its
schema objects (the values of the keywords that hold subschemas; never ``const``, ``enum`` or
an unknown keyword's value), with the base URI each one has:

* ``$id`` (draft 4: ``id``) is resolved against the base; the result (without its fragment) is
  the base of that object and of everything below it, and names that object as an embedded
  resource. In drafts 4 to 7 an object holding ``$ref`` ignores its siblings, so its ``$id``
  changes nothing there;
* an anchor names one object inside its resource: ``$anchor`` (2019-09, 2020-12),
  ``$dynamicAnchor`` (2020-12, read by ``$ref`` as a plain anchor), and in drafts 4 to 7 an
  ``$id``/``id`` of the form ``#name`` (even beside ``$ref``, as those drafts' validators read
  it). A URI or an anchor defined twice at different places names nothing;
* each ``$ref`` is resolved against the base. When the result is a resource of the document,
  with no fragment, a JSON pointer (relative to that resource, percent-decoded) or one of its
  anchors, the ``$ref`` becomes ``#`` and the pointer from the document's root, older drafts'
  spellings mapped as :func:`toolc.schema.drafts.to_2020_12` rewrites them (``#/items/0`` into
  a draft-7 tuple is ``#/prefixItems/0``). A ``$ref`` that leads to a place the walk did not
  reach (a container that is not a keyword) makes that place a schema too.

Any other ``$ref`` (a remote document, the meta-schema, a relative URI that no resource of the
document has, an anchor defined nowhere) is left as written (one that starts with ``#`` is
written as the absolute URI it names, so that it is not read as a pointer from the root), and
:func:`toolc.schema.refs.resolve` refuses it with its pointer where it is compiled: toolc
resolves references inside the tool's own schema only, and fetches nothing.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

from ..pointer import esc, unesc
from .drafts import DRAFT2019, DRAFT2020, DRAFT4, DRAFT6, DRAFT7, dialect, to_2020_12

# RFC 3986, appendix B: scheme, authority, path, query, fragment (None where absent)
_URI = re.compile(r"(?:([^:/?#]+):)?(?://([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?", re.S)
_LEGACY = (DRAFT4, DRAFT6, DRAFT7)
# the keywords whose value is a schema, a list of schemas, or a map of names to schemas
_IN_VALUE = ("additionalItems", "additionalProperties", "contains", "contentSchema", "else",
             "if", "items", "not", "propertyNames", "then", "unevaluatedItems",
             "unevaluatedProperties")
_IN_LIST = ("allOf", "anyOf", "oneOf", "prefixItems", "items")
_IN_MAP = ("$defs", "definitions", "dependentSchemas", "patternProperties", "properties",
           "dependencies")
_HOLDERS = frozenset(_IN_VALUE + _IN_LIST + _IN_MAP)
_VALUES = frozenset({"const", "enum", "default", "examples", "example"})
_TWICE = object()       # a URI or anchor that two places claim


def _parts(uri: str) -> list:
    return list(_URI.fullmatch(uri).groups())


def _unparts(scheme, authority, path, query, fragment) -> str:
    out = "" if scheme is None else scheme + ":"
    out += "" if authority is None else "//" + authority
    out += path
    out += "" if query is None else "?" + query
    return out + ("" if fragment is None else "#" + fragment)


def _remove_dots(path: str) -> str:
    """RFC 3986, section 5.2.4."""
    out: list[str] = []
    while path:
        if path.startswith("../") or path.startswith("./"):
            path = path[path.index("/") + 1:]
        elif path.startswith("/./") or path == "/.":
            path = "/" + path[3:]
        elif path.startswith("/../") or path == "/..":
            path = "/" + path[4:]
            if out:
                out.pop()
        elif path in (".", ".."):
            path = ""
        else:
            cut = path.find("/", 1)
            cut = len(path) if cut < 0 else cut
            out.append(path[:cut])
            path = path[cut:]
    return "".join(out)


def join(base: str, ref: str) -> str:
    """``ref`` resolved against ``base`` (RFC 3986, section 5.2.2, strict; it holds for URNs,
    whose path has no ``/``, and for an empty base: the document's retrieval URI)."""
    scheme, authority, path, query, fragment = _parts(ref)
    if scheme is None:
        scheme, b_auth, b_path, b_query, _ = _parts(base)
        if authority is None:
            authority = b_auth
            if path == "":
                path, query = b_path, (b_query if query is None else query)
            elif not path.startswith("/"):
                merged = "/" + path if b_auth is not None and b_path == "" else \
                    b_path[:b_path.rfind("/") + 1] + path
                path = _remove_dots(merged)
            else:
                path = _remove_dots(path)
        else:
            path = _remove_dots(path)
    else:
        path = _remove_dots(path)
    return _unparts(scheme, authority, path, query, fragment)


def split_fragment(uri: str) -> tuple[str, str | None]:
    """The URI without its fragment (scheme and authority in lower case, as RFC 3986 compares
    them), and the fragment (None when there is none)."""
    scheme, authority, path, query, fragment = _parts(uri)
    scheme, authority = (None if s is None else s.lower() for s in (scheme, authority))
    return _unparts(scheme, authority, path, query, None), fragment


class _Document:
    """One schema document's resources, anchors and ``$ref``s, with each schema object's base
    URI (see the module's docstring)."""

    def __init__(self, draft: str):
        self.draft = draft
        self.resources: dict = {"": ""}     # URI without fragment -> pointer (or _TWICE)
        self.anchors: dict = {}             # (resource URI, name) -> pointer (or _TWICE)
        self.bases: dict[str, str] = {}     # pointer of each object walked -> its base URI
        self.refs: list[tuple[str, str, str]] = []      # (object's pointer, base, $ref)

    def walk(self, node, ptr: str, base: str, names: bool = True) -> None:
        """Every schema object at and below ``node``; ``names``: its ``$id``s and anchors
        name resources (not where a ``$ref`` led into a container that is not a keyword)."""
        stack = [(node, ptr, base)]
        while stack:
            node, ptr, base = stack.pop()
            if not isinstance(node, dict) or ptr in self.bases:
                continue
            base = self._identify(node, ptr, base, names)
            self.bases[ptr] = base
            if isinstance(node.get("$ref"), str):
                self.refs.append((ptr, base, node["$ref"]))
            stack.extend((v, p, base) for v, p in _subschemas(node, ptr))

    def _identify(self, node: dict, ptr: str, base: str, names: bool) -> str:
        """The base URI of ``node``'s contents; its resource and anchors recorded."""
        legacy = self.draft in _LEGACY
        ident = node.get("id" if self.draft == DRAFT4 else "$id")
        if isinstance(ident, str):
            if ident.startswith("#"):       # drafts 4-7: an anchor (later: not an $id)
                if legacy:
                    self._name(self.anchors, (base, unquote(ident[1:])), ptr, names)
            elif not (legacy and "$ref" in node):
                new, frag = split_fragment(join(base, ident))
                if new != base:     # an $id naming its parent's URI again names nothing new
                    base = new
                    self._name(self.resources, base, ptr, names)
                if legacy and frag:
                    self._name(self.anchors, (base, unquote(frag)), ptr, names)
        keys = () if legacy else ("$anchor",) if self.draft == DRAFT2019 else \
            ("$anchor", "$dynamicAnchor")
        for key in keys:
            if isinstance(node.get(key), str):
                self._name(self.anchors, (base, node[key]), ptr, names)
        return base

    @staticmethod
    def _name(table: dict, key, ptr: str, names: bool) -> None:
        if names:
            table[key] = ptr if table.get(key, ptr) == ptr else _TWICE

    def target(self, base: str, ref: str) -> str | None:
        """The pointer from the root (percent-decoded, ``~``-escaped) of what ``ref`` names
        against ``base``, or None when it names nothing in this document."""
        uri, frag = split_fragment(join(base, ref))
        at = self.resources.get(uri)
        if at is None or at is _TWICE:
            return None
        frag = unquote(frag or "")
        if frag == "" or frag.startswith("/"):
            return at + frag
        at = self.anchors.get((uri, frag))
        return None if at is _TWICE else at


def _subschemas(node: dict, ptr: str):
    for key, value in node.items():
        if key in _HOLDERS:
            if isinstance(value, list) and key in _IN_LIST:
                yield from ((v, f"{ptr}/{esc(key)}/{i}") for i, v in enumerate(value))
            elif isinstance(value, dict):
                if key in _IN_MAP:
                    yield from ((v, f"{ptr}/{esc(key)}/{esc(name)}")
                                for name, v in value.items())
                elif key in _IN_VALUE:
                    yield value, f"{ptr}/{esc(key)}"


def _step(node, token: str):
    """The child a pointer token names, or None."""
    if isinstance(node, dict):
        return node.get(unesc(token))
    if isinstance(node, list) and token.isdigit() and int(token) < len(node):
        return node[int(token)]
    return None


def _nearest_base(doc: _Document, pointer: str) -> str | None:
    """The base URI at ``pointer``: that of the nearest schema object above it (the root is
    always one); None when the way from there passes through a value (``const``, ``enum``,
    ``default``, ``examples``), which is data, not a schema."""
    below = ""
    while pointer not in doc.bases:
        cut = pointer.rfind("/")
        pointer, below = pointer[:cut], pointer[cut:]
    return None if unesc(below[1:]) in _VALUES else doc.bases[pointer]


def renamed_pointer(root, pointer: str, draft: str) -> str:
    """Where ``pointer`` (into the schema as written) points once
    :func:`~toolc.schema.drafts.to_2020_12` has rewritten each schema object on its way."""
    if draft == DRAFT2020 or not pointer:
        return pointer
    tokens = pointer.split("/")[1:]
    node, out, i, kind = root, "", 0, "schema"
    while i < len(tokens):
        n, nxt = 1, "other"
        if kind == "schema" and isinstance(node, dict):
            renames: dict = {}
            to_2020_12(node, draft, renames)
            back = {old: new for new, old in renames.items()}
            n = next((n for n in (2, 1) if i + n <= len(tokens)
                      and "".join("/" + t for t in tokens[i:i + n]) in back), 0)
            out += back["".join("/" + t for t in tokens[i:i + n])] if n else "/" + tokens[i]
            key, n = unesc(tokens[i]), n or 1
            value = node.get(key)
            nxt = "schema" if n == 2 else \
                "container" if key in _IN_MAP or key in _IN_LIST and isinstance(value, list) \
                else "schema" if key in _IN_VALUE else "other"
        else:
            out += "/" + tokens[i]
            nxt = "schema" if kind == "container" else "other"
        for t in tokens[i:i + n]:
            node = _step(node, t)
        i, kind = i + n, nxt
    return out


def localized(schema, draft: str | None = None):
    """``schema`` with every ``$ref`` that resolves inside it written as ``#`` and a JSON
    pointer from its root (a copy where any changes; the schema itself where none does).
    ``draft``: the dialect (default: what the root's ``$schema`` names)."""
    if not isinstance(schema, dict):
        return schema
    draft = dialect(schema)[0] if draft is None else draft
    doc = _Document(draft)
    doc.walk(schema, "", "")
    edits: dict[str, str] = {}
    i = 0
    while i < len(doc.refs):        # grows where a $ref leads off the walked keywords
        ptr, base, ref = doc.refs[i]
        i += 1
        at = doc.target(base, ref)
        if at is None:      # refused where it is compiled; a "#..." one must not be read there
            if ref.startswith("#") and join(base, ref) != ref:      # as if from the root
                edits[ptr] = join(base, ref)
            continue
        node = schema
        for t in at.split("/")[1:] if at else []:
            node = _step(node, t)
        if isinstance(node, dict) and at not in doc.bases:
            base = _nearest_base(doc, at)
            if base is not None:
                doc.walk(node, at, base, names=False)
        new = "#" + renamed_pointer(schema, at, draft).replace("%", "%25")
        if new != ref:
            edits[ptr] = new
    return _with_refs(schema, edits)


def _with_refs(root, edits: dict[str, str]):
    """``root`` with the ``$ref`` of each object at a pointer of ``edits`` replaced; only the
    objects on the way to them are copied."""
    if not edits:
        return root
    on_way = set()
    for p in edits:
        tokens = p.split("/")
        on_way.update("/".join(tokens[:n]) for n in range(1, len(tokens) + 1))

    def copy(node, ptr: str):
        if ptr not in on_way:
            return node
        if isinstance(node, dict):
            out = {k: copy(v, f"{ptr}/{esc(k)}") for k, v in node.items()}
            if ptr in edits:
                out["$ref"] = edits[ptr]
            return out
        if isinstance(node, list):
            return [copy(v, f"{ptr}/{i}") for i, v in enumerate(node)]
        return node
    return copy(root, "")
