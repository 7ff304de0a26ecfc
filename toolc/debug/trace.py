"""``toolc trace``: walk a text through an artifact token by token and say where it fails.

The text is tokenized with the artifact's tokenizer (special tokens such as ``<tool_call>``
and ``<|im_end|>`` become their ids). At the first rejected token the trace says where in the
call it is (tool, JSON pointer, from :mod:`toolc.debug.locate`) and shows a sample of the tokens
that would have been allowed; at an object key, it names the order rule and the keys expected
there.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import ArtifactError
from .locate import Location, locate
from ..runtime import Artifact


def artifact_vocabulary(art: Artifact, tokenizer=None):
    """The Vocabulary an artifact was compiled for: ``tokenizer`` (a spec) or the header's name.

    Refuses a tokenizer whose fingerprint differs, naming both.
    """
    from ..tokenizer import load_vocabulary
    spec = tokenizer or art.header.get("tokenizer")
    try:
        vocab = load_vocabulary(spec, logits_size=art.logits_size)
    except Exception as e:
        raise ArtifactError(f"{art.source}: cannot load its tokenizer {spec!r} ({e}); "
                            "name it with --tokenizer") from None
    art.check_fingerprint(vocab.fingerprint, name=f"tokenizer {vocab.name!r}")
    return vocab


def token_text(vocab, t: int) -> str:
    """A token's text for display: its exact bytes, shown as Python shows a string."""
    if t >= vocab.vocab_size:
        return f"<logit {t}>"
    return repr(vocab.token_bytes[t].decode("utf-8", errors="backslashreplace"))


@dataclass
class TraceStep:
    index: int
    token: int
    text: str
    state: int          # the state before the token
    next_state: int | None   # None: rejected


@dataclass
class Trace:
    steps: list[TraceStep]
    rejected: int | None                 # index of the first rejected token
    location: Location | None            # where the rejection happened
    allowed_count: int = 0
    allowed_sample: list[tuple[int, str]] = field(default_factory=list)
    accepting: bool = False
    terminated: bool = False
    expected_keys: list[str] = field(default_factory=list)   # at a rejected object key
    order: str = "schema"                # the artifact's --property-order

    @property
    def ok(self) -> bool:
        return self.rejected is None

    def render(self) -> str:
        lines = [f"{'#':>4}  {'token':>7}  {'state':>6} -> {'next':<6}  text"]
        for s in self.steps:
            nxt = "REJECT" if s.next_state is None else str(s.next_state)
            lines.append(f"{s.index:>4}  {s.token:>7}  {s.state:>6} -> {nxt:<6}  {s.text}")
        if self.rejected is not None:
            s = self.steps[self.rejected]
            lines.append(f"rejected token {self.rejected} ({s.token} {s.text}) in state "
                         f"{s.state}: {self.location.describe()}")
            shown = ", ".join(f"{t} {txt}" for t, txt in self.allowed_sample)
            more = self.allowed_count - len(self.allowed_sample)
            if self.expected_keys:
                rule = ("properties come in schema order (--property-order schema)"
                        if self.order == "schema" else "each declared property once")
                lines.append(f"at an object key: {rule}; expected here: "
                             + ", ".join(self.expected_keys))
            lines.append(f"allowed there ({self.allowed_count:,} tokens): {shown}"
                         + (f", … {more:,} more" if more > 0 else ""))
        elif self.terminated:
            lines.append("accepted: the text ends with EOS in an accepting state")
        elif self.accepting:
            lines.append("accepted so far: EOS may come next")
        else:
            lines.append("accepted so far, but incomplete: EOS is not allowed yet")
        return "\n".join(lines)


def trace(art: Artifact, vocab, text: str, sample: int = 12) -> Trace:
    """Tokenize ``text`` with ``vocab`` and walk it through ``art``."""
    ids = vocab.encode(text)
    m = art.matcher()
    steps: list[TraceStep] = []
    for i, t in enumerate(ids):
        q = m.state
        if not m.accepts(t):
            steps.append(TraceStep(i, t, token_text(vocab, t), q, None))
            prefix = vocab.decode_bytes(ids[:i]).decode("utf-8", errors="replace")
            allowed = m.allowed_token_ids().tolist()
            pick = _spread(allowed, sample)
            keys = []
            before = prefix.rstrip(" \t\n\r")
            if vocab.token_bytes[t].lstrip(b" ").startswith(b'"') and before.endswith(("{", ",")):
                keys = expected_keys(m, vocab)
            elif before.endswith('"') and before[:-1].rstrip(" \t\n\r").endswith(("{", ",")):
                keys = expected_keys(m, vocab, seed=b'"')
            order = art.header.get("options", {}).get("property_order", "schema")
            return Trace(steps, i, locate(prefix, format=art.format), len(allowed),
                         [(a, token_text(vocab, a)) for a in pick], expected_keys=keys,
                         order=order)
        m.advance(t)
        steps.append(TraceStep(i, t, token_text(vocab, t), q, m.state))
    return Trace(steps, None, None, accepting=m.is_accepting(), terminated=m.is_terminated())


def expected_keys(m, vocab, seed: bytes = b"", limit: int = 400,
                  budget: int = 3000) -> list[str]:
    """The object keys the matcher allows from here (JSON strings), found by a bounded
    search over allowed tokens; empty when the choice is wide (a free-form key)."""
    found: list[str] = []
    stack = [(m.copy(), seed)]
    while stack and len(found) < 40:
        budget -= 1
        if budget < 0:
            return []
        cur, text = stack.pop()
        allowed = cur.allowed_token_ids().tolist()
        if len(allowed) > limit:
            return []
        for t in allowed:
            if t >= vocab.vocab_size:
                continue
            data = text + vocab.token_bytes[t]
            key = _closed_key(data)
            if key is not None:
                if key not in found:
                    found.append(key)
                continue
            if len(data) < 200:
                nxt = cur.copy()
                nxt.advance(t)
                stack.append((nxt, data))
    return sorted(found)


def _closed_key(data: bytes) -> str | None:
    """The key written by ``data`` once its closing quote is there (``"name"`` then more)."""
    body = data.lstrip(b" \t\n\r")
    if not body.startswith(b'"'):
        return None
    i = 1
    while i < len(body):
        if body[i:i + 1] == b"\\":
            i += 2
            continue
        if body[i:i + 1] == b'"':
            return body[:i + 1].decode("utf-8", errors="replace")
        i += 1
    return None


def _spread(ids: list[int], k: int) -> list[int]:
    """Up to ``k`` ids, evenly spread over the list (the first few when it is short)."""
    if len(ids) <= k:
        return ids
    step = len(ids) / k
    return [ids[int(i * step)] for i in range(k)]
