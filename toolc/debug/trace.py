"""``toolc trace``: walk a text through an artifact token by token and say where it fails.

The text is tokenized with the artifact's tokenizer (special tokens such as ``<tool_call>``
and ``<|im_end|>`` become their ids). At the first rejected token the trace says where in the
call it is (tool, JSON pointer, from :mod:`toolc.debug.locate`) and shows a sample of the tokens
that would have been allowed.
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
            return Trace(steps, i, locate(prefix, format=art.format), len(allowed),
                         [(a, token_text(vocab, a)) for a in pick])
        m.advance(t)
        steps.append(TraceStep(i, t, token_text(vocab, t), q, m.state))
    return Trace(steps, None, None, accepting=m.is_accepting(), terminated=m.is_terminated())


def _spread(ids: list[int], k: int) -> list[int]:
    """Up to ``k`` ids, evenly spread over the list (the first few when it is short)."""
    if len(ids) <= k:
        return ids
    step = len(ids) / k
    return [ids[int(i * step)] for i in range(k)]
