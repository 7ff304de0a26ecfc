"""``toolc graph``: draw the automaton as the ToolDec paper draws it.

From a TOOLS file: the character-level (byte) DFA, whose call part is the tool-name trie
followed by each tool's argument automaton. From an ARTIFACT: the token-level automaton.
Either way each state is labelled with where in the call it is (tool and JSON pointer, from
:mod:`toolc.debug.locate`, computed from a shortest path to the state), and states are coloured by
tool. ``tool=NAME`` keeps one tool's part (plus the trie path to it).

Output: Graphviz DOT text, or an SVG drawn here with a simple layered layout (layer = BFS
depth from the start), so no Graphviz install is needed.
"""

from __future__ import annotations

import hashlib
from collections import deque
from dataclasses import dataclass, field
from xml.sax.saxutils import escape

from ..errors import GraphError  # noqa: F401  (re-exported: toolc.debug.graph.GraphError)
from .locate import locate


@dataclass
class Graph:
    """Nodes (state -> label, tool, final) and edges ((src, dst) -> label)."""

    title: str
    labels: dict[int, str] = field(default_factory=dict)
    tools: dict[int, str | None] = field(default_factory=dict)
    final: set[int] = field(default_factory=set)
    edges: dict[tuple[int, int], str] = field(default_factory=dict)

    def cut(self, tool: str, names: list[str]) -> "Graph":
        """Only ``tool``'s states, the name-trie states on the way to it, and the start."""
        if tool not in names:
            raise GraphError(f"no tool {tool!r} in this automaton; it has: {', '.join(names)}")
        keep = {q for q, t in self.tools.items() if t == tool}
        for q, label in self.labels.items():
            short = label.split("\n")[-1]
            if self.tools.get(q) is None and short.startswith("name:") \
                    and tool.startswith(short[5:]):
                keep.add(q)
            if q == 0:
                keep.add(q)
        g = Graph(f"{self.title}, tool {tool}")
        for q in keep:
            g.labels[q], g.tools[q] = self.labels[q], self.tools[q]
        g.final = self.final & keep
        g.edges = {e: lab for e, lab in self.edges.items() if e[0] in keep and e[1] in keep}
        return g


def _node_label(q: int, text: str, format: str) -> tuple[str, str | None]:
    loc = locate(text, format=format)
    tool = loc.tool if loc.kind in ("call", "call end") else None
    return f"{q}\n{loc.short()}", tool


# -- from a tools file: the byte-level DFA --------------------------------------------------

def dfa_graph(tools_path: str, tokenizer="qwen", options=None, **kwargs) -> tuple[Graph, list[str]]:
    """The minimized byte DFA of a tools file, labelled; returns (graph, tool names).

    ``options``: a :class:`~toolc.options.CompileOptions`, or its fields as keywords."""
    from ..compiler import build_dfa

    built = build_dfa(tools_path, tokenizer, options, **kwargs)
    dfa, tool_list = built.dfa, built.tools
    alpha = dfa.alphabet
    spell = {}          # alphabet index -> the bytes a path shows for it
    for c in range(alpha.num_byte_classes):
        bs = alpha.class_bytes(c)
        pick = next((b for b in bs if 32 <= b < 127), bs[0])
        spell[c] = bytes([pick])
    for k, name in enumerate(alpha.symbols):
        spell[alpha.num_byte_classes + k] = (b"<|im_end|>" if name == "EOS"
                                              else name.encode())
    n = dfa.num_states
    paths: list[bytes | None] = [None] * n
    paths[0] = b""
    dq = deque([0])
    trans = dfa.trans
    while dq:
        q = dq.popleft()
        for a in range(alpha.size):
            r = int(trans[q, a])
            if r >= 0 and paths[r] is None:
                paths[r] = paths[q] + spell[a]
                dq.append(r)
    g = Graph(f"{tools_path}: byte-level automaton, {n} states")
    for q in range(n):
        g.labels[q], g.tools[q] = _node_label(q, (paths[q] or b"").decode("utf-8", "replace"),
                                              built.format.name)
        if dfa.final[q]:
            g.final.add(q)
        groups: dict[int, list[int]] = {}
        for a in range(alpha.size):
            r = int(trans[q, a])
            if r >= 0:
                groups.setdefault(r, []).append(a)
        for r, idxs in groups.items():
            g.edges[(q, r)] = _describe_symbols(alpha, idxs)
    return g, [t.name for t in tool_list]


def _show_byte(b: int) -> str:
    if b == 0x0A:
        return "\\n"
    if 32 <= b < 127:
        return chr(b)
    return f"\\x{b:02x}"


def _describe_symbols(alpha, idxs: list[int]) -> str:
    specials = [alpha.symbols[a - alpha.num_byte_classes] for a in idxs
                if a >= alpha.num_byte_classes]
    bs = sorted(b for a in idxs if a < alpha.num_byte_classes for b in alpha.class_bytes(a))
    parts = list(specials)
    if bs:
        if len(bs) <= 6:
            parts.append(" ".join(_show_byte(b) for b in bs))
        elif 256 - len(bs) <= 6:
            missing = sorted(set(range(256)) - set(bs))
            parts.append("not " + " ".join(_show_byte(b) for b in missing))
        else:
            parts.append(f"{len(bs)} bytes")
    return ", ".join(parts)


# -- from an artifact: the token-level automaton --------------------------------------------

def artifact_graph(art, vocab) -> tuple[Graph, list[str]]:
    """The token-level automaton of an artifact, labelled; returns (graph, tool names)."""
    from .explore import _a_default_token, shortest_token_paths, token_edges

    paths = shortest_token_paths(art)
    g = Graph(f"{art.source}: token-level automaton, {art.num_states} states")
    for q in range(art.num_states):
        path = paths[q] or []
        g.labels[q], g.tools[q] = _node_label(
            q, vocab.decode_bytes(path).decode("utf-8", "replace"), art.format)
        if art.is_final_state(q):
            g.final.add(q)
        exc, default = token_edges(art, q)
        by_target: dict[int, list[int]] = {}
        for t, r in exc.items():
            by_target.setdefault(r, []).append(t)
        for r, toks in by_target.items():
            g.edges[(q, r)] = _describe_tokens(vocab, sorted(toks))
        if default >= 0 and _a_default_token(art, q, exc) is not None:
            lab = "other tokens"
            if (q, default) in g.edges:
                lab = g.edges[(q, default)] + " + " + lab
            g.edges[(q, default)] = lab
    return g, art.tool_names


def _describe_tokens(vocab, toks: list[int]) -> str:
    shown = [vocab.token_bytes[t].decode("utf-8", "replace") for t in toks[:3]]
    text = " ".join(repr(s)[1:-1] for s in shown)
    return text + (f" +{len(toks) - 3}" if len(toks) > 3 else "")


# -- output ---------------------------------------------------------------------------------

_PALETTE = ["#cfe8ff", "#ffe3c2", "#d8f5d0", "#f3d1f4", "#fff3b0", "#d4d4f7", "#c9f1ec",
            "#f7d4d4"]


def _color(tool: str | None) -> str:
    if tool is None:
        return "#eeeeee"
    h = int(hashlib.sha256(tool.encode()).hexdigest()[:8], 16)
    return _PALETTE[h % len(_PALETTE)]


def _dot_quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def to_dot(g: Graph) -> str:
    lines = ["digraph toolc {", "  rankdir=LR;", f"  label={_dot_quote(g.title)};",
             '  node [shape=ellipse, style=filled, fontname="monospace", fontsize=10];',
             '  edge [fontname="monospace", fontsize=9];']
    for q in sorted(g.labels):
        shape = ", shape=doublecircle" if q in g.final else ""
        lines.append(f"  s{q} [label={_dot_quote(g.labels[q])}, "
                     f"fillcolor=\"{_color(g.tools[q])}\"{shape}];")
    for (a, b), lab in sorted(g.edges.items()):
        lines.append(f"  s{a} -> s{b} [label={_dot_quote(_clip(lab))}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _clip(s: str, n: int = 24) -> str:
    return s if len(s) <= n else s[:n - 1] + "…"


def layout(g: Graph) -> dict[int, tuple[int, int]]:
    """Layer by BFS depth from the smallest state; order within a layer by discovery."""
    out: dict[int, list[int]] = {}
    for a, b in g.edges:
        out.setdefault(a, []).append(b)
    depth: dict[int, int] = {}
    order: list[int] = []
    for root in sorted(g.labels):
        if root in depth:
            continue
        depth[root] = 0 if not depth else max(depth.values()) + 1
        dq = deque([root])
        order.append(root)
        while dq:
            q = dq.popleft()
            for r in sorted(out.get(q, [])):
                if r not in depth:
                    depth[r] = depth[q] + 1
                    order.append(r)
                    dq.append(r)
    layers: dict[int, list[int]] = {}
    for q in order:
        layers.setdefault(depth[q], []).append(q)
    pos = {}
    for d, qs in layers.items():
        for i, q in enumerate(qs):
            pos[q] = (d, i)
    return pos


def to_svg(g: Graph) -> str:
    """A self-contained SVG: nodes in columns by BFS depth, edges as curves with labels."""
    pos = layout(g)
    dx, dy, rx, ry, margin = 190, 64, 62, 20, 40
    cols = max((c for c, _ in pos.values()), default=0) + 1
    rows = max((r for _, r in pos.values()), default=0) + 1
    width, height = margin * 2 + cols * dx, margin * 2 + 30 + rows * dy

    def xy(q):
        c, r = pos[q]
        return margin + c * dx + rx, margin + 30 + r * dy + ry

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" font-family="monospace" font-size="10">',
             '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" '
             'markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
             '<path d="M 0 0 L 10 5 L 0 10 z" fill="#555"/></marker></defs>',
             f'<text x="{margin}" y="{margin}" font-size="13">{escape(g.title)}</text>']
    for (a, b), lab in sorted(g.edges.items()):
        if a not in pos or b not in pos:
            continue
        (x1, y1), (x2, y2) = xy(a), xy(b)
        text = escape(_clip(lab))
        if a == b:
            d = (f"M {x1 - 12} {y1 - ry} C {x1 - 30} {y1 - ry - 34}, {x1 + 30} {y1 - ry - 34}, "
                 f"{x1 + 12} {y1 - ry}")
            lx, ly = x1, y1 - ry - 30
        else:
            sx, ex = (x1 + rx, x2 - rx) if x2 > x1 else (x1, x2)
            sy = y1 if x2 > x1 else y1 + (ry if y2 >= y1 else -ry)
            ey = y2 if x2 > x1 else y2 + (-ry if y2 > y1 else ry)
            bend = 0 if pos[b][0] == pos[a][0] + 1 else 40 + 8 * abs(pos[b][0] - pos[a][0])
            mx, my = (sx + ex) / 2, (sy + ey) / 2 - bend
            d = f"M {sx} {sy} Q {mx} {my}, {ex} {ey}"
            lx, ly = mx, (sy + ey) / 2 - bend / 2 - 3
        parts.append(f'<path d="{d}" fill="none" stroke="#555" marker-end="url(#arrow)"/>')
        parts.append(f'<text x="{lx:.0f}" y="{ly:.0f}" text-anchor="middle" fill="#333">'
                     f'{text}</text>')
    for q in sorted(pos):
        x, y = xy(q)
        fill = _color(g.tools.get(q))
        parts.append(f'<ellipse cx="{x}" cy="{y}" rx="{rx}" ry="{ry}" fill="{fill}" '
                     f'stroke="#333"/>')
        if q in g.final:
            parts.append(f'<ellipse cx="{x}" cy="{y}" rx="{rx - 4}" ry="{ry - 4}" '
                         f'fill="none" stroke="#333"/>')
        lines = g.labels[q].split("\n")
        for i, line in enumerate(lines):
            off = (i - (len(lines) - 1) / 2) * 11 + 3
            parts.append(f'<text x="{x}" y="{y + off:.0f}" text-anchor="middle">'
                         f'{escape(_clip(line, 20))}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
