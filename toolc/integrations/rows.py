"""Row bookkeeping shared by the engine adapters: numpy only, no engine imports.

An engine shows a logits processor, per batch row, the tokens generated so far (with or
without the prompt). :class:`RowTracker` keeps one :class:`~toolc.runtime.Matcher` per row and
brings it up to date with those tokens: it advances by the new ones when the row only grew,
and replays from the start when the row changed under it (beam search reorders rows). Tokens
the engine appended without a model call (jump-forward) are consumed the same way.
"""

from __future__ import annotations

import numpy as np

from ..errors import ArtifactError
from ..runtime import Artifact, Matcher


def allowed_bool(mask: np.ndarray, width: int) -> np.ndarray:
    """Unpack an int32 bitmask row into ``width`` booleans (bits past the mask are False)."""
    bits = np.unpackbits(np.ascontiguousarray(mask).view(np.uint8), bitorder="little")
    out = np.zeros(width, dtype=bool)
    n = min(width, len(bits))
    out[:n] = bits[:n].astype(bool)
    return out


def check_logits_width(artifact: Artifact, width: int) -> None:
    """Refuse logits narrower than the artifact's vocabulary (a different model)."""
    if width < artifact.vocab_size:
        raise ArtifactError(
            f"{artifact.source}: the model gives {width:,} logits, fewer than the "
            f"{artifact.vocab_size:,} tokens of the artifact's tokenizer "
            f"{artifact.header.get('tokenizer')!r}; the artifact was compiled for another model")


def check_artifacts(artifacts, tokenizer, check: bool = True) -> None:
    """Refuse (ArtifactError, naming both fingerprints and the tokenizer) any artifact compiled
    for another vocabulary than ``tokenizer``'s; nothing to do without a tokenizer or with
    ``check`` False. See :meth:`toolc.Artifact.check_tokenizer` for the kinds of tokenizer."""
    if tokenizer is None or not check:
        return
    if isinstance(artifacts, Artifact):
        artifacts = [artifacts]
    for a in artifacts:
        a.check_tokenizer(tokenizer)


class RowState:
    """One row's matcher and the generated tokens it has consumed."""

    __slots__ = ("artifact", "matcher", "tokens")

    def __init__(self, artifact: Artifact):
        self.artifact = artifact
        self.matcher: Matcher = artifact.matcher()
        self.tokens: list[int] = []

    def sync(self, generated: list[int]) -> Matcher:
        """Bring the matcher to ``generated`` (all tokens generated so far); return it.

        Raises :class:`RejectedTokenError` if the engine produced a token the mask forbade.
        Tokens after EOS (padding of a finished row) are ignored.
        """
        n = len(self.tokens)
        if generated[:n] != self.tokens:
            self.matcher.reset()
            self.tokens = []
            n = 0
        m = self.matcher
        for t in generated[n:]:
            if m.is_terminated():
                break
            m.advance(t)
            self.tokens.append(t)
        return m


class RowTracker:
    """Matchers for the rows of a batch; each row may use its own artifact.

    ``artifacts`` is one artifact for every row, or a list with one per batch entry; when the
    batch has ``k`` times as many rows (``num_beams`` or ``num_return_sequences``), entry ``i``
    serves rows ``i*k .. i*k+k-1``, the order transformers uses.
    """

    def __init__(self, artifacts: Artifact | list[Artifact]):
        if isinstance(artifacts, Artifact):
            artifacts = [artifacts]
        artifacts = list(artifacts)
        if not artifacts:
            raise ValueError("give at least one artifact")
        sizes = {a.logits_size for a in artifacts}
        if len(sizes) != 1:
            raise ArtifactError(f"the artifacts were compiled for different logits sizes "
                                f"({', '.join(map(str, sorted(sizes)))}); one model has one")
        self.artifacts = artifacts
        self.logits_size = sizes.pop()
        self.rows: list[RowState] = []

    def artifact_for(self, row: int, num_rows: int) -> Artifact:
        k = len(self.artifacts)
        if k == 1:
            return self.artifacts[0]
        if num_rows % k:
            raise ValueError(f"{k} artifacts cannot be spread over a batch of {num_rows} rows")
        return self.artifacts[row // (num_rows // k)]

    def sync(self, generated: list[list[int]]) -> list[Matcher]:
        """One matcher per row, each brought up to that row's generated tokens."""
        num = len(generated)
        if len(self.rows) != num:
            self.rows = [RowState(self.artifact_for(i, num)) for i in range(num)]
        return [row.sync(gen) for row, gen in zip(self.rows, generated)]


def batch_masks(matchers: list[Matcher], words: int) -> tuple[np.ndarray, np.ndarray]:
    """Stack the rows' masks into int32[rows, words]; also say which rows to mask at all.

    A terminated row (EOS consumed; the engine pads it) is left unmasked, so sampling never
    sees a row with every logit at -inf.
    """
    out = np.zeros((len(matchers), words), dtype=np.int32)
    active = np.ones(len(matchers), dtype=bool)
    for i, m in enumerate(matchers):
        if m.is_terminated():
            active[i] = False
            out[i] = -1
        else:
            row = m.mask()
            out[i, :min(words, len(row))] = row[:words]
    return out, active
