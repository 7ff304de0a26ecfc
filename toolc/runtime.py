"""The runtime: load an artifact, mask and advance per generated token.

Imports numpy and msgpack only (a test checks it in a fresh interpreter), so an inference
server needs nothing else. An :class:`Artifact` is loaded once per tool set and shared; a
:class:`Matcher` is made per request (``artifact.matcher()``), and is cheap.
"""

from __future__ import annotations

import os
from bisect import bisect_left

import numpy as np

from .artifact import decode_sections, pack, unpack, write_atomic
from .errors import ArtifactError, RejectedTokenError


class Artifact:
    """A compiled tool set for one tokenizer: masks and transitions for every state.

    Immutable and safe to share between threads; each request gets its own :meth:`matcher`.
    """

    def __init__(self, header: dict, sections: dict, arrays: dict, source: str):
        self.header = header
        self._sections = sections
        self.source = source
        self._masks = arrays["masks"]
        self._masks.setflags(write=False)
        self._state_row = arrays["state_row"].tolist()
        self._default = arrays["default_next"].tolist()
        self._exc_ptr = arrays["exc_ptr"].tolist()
        self._exc_tokens = arrays["exc_tokens"].tolist()
        self._exc_next = arrays["exc_next"].tolist()
        self._final = arrays["final"].astype(bool).tolist()
        eos = self.eos_token_ids
        # per row: does it allow EOS; per state: the one token allowed, if only one
        rows = self._masks
        self._accepting = [any(_bit(rows[r], t) for t in eos) for r in self._state_row]
        words = rows.view(np.uint32)
        counts = np.bitwise_count(words).sum(axis=1)
        only_row = np.full(len(rows), -1, dtype=np.int64)
        single = np.flatnonzero(counts == 1)
        if len(single):
            w = np.argmax(words[single] != 0, axis=1)
            bit = np.log2(words[single, w].astype(np.float64)).astype(np.int64)
            only_row[single] = w * 32 + bit
        only = only_row[self._state_row].tolist()
        self._only = only

    # -- construction ---------------------------------------------------------------------
    @classmethod
    def from_parts(cls, header: dict, sections: dict, source: str = "artifact") -> "Artifact":
        return cls(header, sections, decode_sections(header, sections, source), source)

    @classmethod
    def from_bytes(cls, data: bytes, source: str = "artifact") -> "Artifact":
        header, sections = unpack(data, source)
        if not isinstance(header, dict) or not isinstance(sections, dict):
            raise ArtifactError(f"{source}: damaged artifact (header or sections)")
        return cls.from_parts(header, sections, source)

    def to_bytes(self) -> bytes:
        return pack(self.header, self._sections)

    def save(self, path: str | os.PathLike) -> int:
        """Write the artifact atomically (temp file, then rename); return its size in bytes."""
        data = self.to_bytes()
        write_atomic(path, data)
        return len(data)

    # -- description ------------------------------------------------------------------------
    @property
    def vocab_size(self) -> int:
        return int(self.header["vocab_size"])

    @property
    def logits_size(self) -> int:
        return int(self.header["logits_size"])

    @property
    def eos_token_ids(self) -> tuple[int, ...]:
        return tuple(self.header["eos_token_ids"])

    @property
    def num_states(self) -> int:
        return int(self.header["num_states"])

    @property
    def tool_names(self) -> list[str]:
        return list(self.header["tools"])

    @property
    def format(self) -> str:
        return self.header["format"]

    @property
    def fingerprint(self) -> str:
        return self.header["fingerprint"]

    @property
    def num_mask_rows(self) -> int:
        return int(self._masks.shape[0])

    def check_fingerprint(self, fingerprint: str, name: str = "the tokenizer in use") -> None:
        """Raise ArtifactError unless the artifact was compiled for this vocabulary."""
        if fingerprint != self.fingerprint:
            raise ArtifactError(
                f"{self.source}: compiled for tokenizer {self.header.get('tokenizer')!r} "
                f"(fingerprint {self.fingerprint[:12]}), but {name} has fingerprint "
                f"{fingerprint[:12]}; recompile the artifact for this tokenizer")

    def matcher(self) -> "Matcher":
        """A fresh Matcher at the start state."""
        return Matcher(self)

    def __repr__(self) -> str:
        return (f"<toolc.Artifact {self.source}: {len(self.tool_names)} tools, "
                f"{self.num_states} states, format {self.format}>")


def _bit(row: np.ndarray, t: int) -> bool:
    return bool((int(row[t >> 5]) >> (t & 31)) & 1)


class Matcher:
    """Walks one generation through an artifact's automaton, one token at a time.

    The rule for rejected tokens, once: :meth:`advance` raises :class:`RejectedTokenError`
    (a ``ValueError``) for a token the mask does not allow and leaves the state unchanged;
    :meth:`accepts` asks the same question without raising.
    """

    __slots__ = ("_art", "_q", "_hist")

    def __init__(self, artifact: Artifact):
        self._art = artifact
        self._q = 0
        self._hist: list[int] = []

    @property
    def state(self) -> int:
        return self._q

    def mask(self) -> np.ndarray:
        """int32[ceil(logits_size / 32)], read-only: token t allowed iff bit t%32 of word t//32.

        A view of the stored row, not a copy: O(1).
        """
        a = self._art
        return a._masks[a._state_row[self._q]]

    def allowed_token_ids(self) -> np.ndarray:
        bits = np.unpackbits(self.mask().view(np.uint8), bitorder="little")
        return np.flatnonzero(bits).astype(np.int32)

    def accepts(self, token_id: int) -> bool:
        a = self._art
        t = int(token_id)
        if t < 0 or t >= a.logits_size:
            return False
        row = a._masks[a._state_row[self._q]]
        return bool((int(row[t >> 5]) >> (t & 31)) & 1)

    def _next(self, t: int) -> int:
        a = self._art
        q = self._q
        lo, hi = a._exc_ptr[q], a._exc_ptr[q + 1]
        if lo != hi:
            i = bisect_left(a._exc_tokens, t, lo, hi)
            if i < hi and a._exc_tokens[i] == t:
                return a._exc_next[i]
        return a._default[q]

    def advance(self, token_id: int) -> None:
        """Consume one token; raise RejectedTokenError (state unchanged) if it is not allowed."""
        if not self.accepts(token_id):
            raise RejectedTokenError(int(token_id), self._q)
        t = int(token_id)
        self._hist.append(self._q)
        self._q = self._next(t)

    def is_accepting(self) -> bool:
        """Generation may end here: EOS is in the mask."""
        return self._art._accepting[self._q]

    def is_terminated(self) -> bool:
        """EOS has been consumed."""
        return self._art._final[self._q]

    def forced_tokens(self) -> list[int]:
        """The tokens that are the only choice from here, in order (for jump-forward)."""
        a = self._art
        out = []
        q = self._q
        for _ in range(a.num_states + 1):
            t = a._only[q]
            if t < 0:
                break
            out.append(t)
            saved = self._q
            self._q = q
            q = self._next(t)
            self._q = saved
            if a._final[q]:
                break
        return out

    def rollback(self, n: int = 1) -> None:
        """Undo the last ``n`` advances."""
        if n < 0 or n > len(self._hist):
            raise ValueError(f"cannot roll back {n} tokens; {len(self._hist)} were consumed")
        if n:
            self._q = self._hist[-n]
            del self._hist[-n:]

    def reset(self) -> None:
        self._q = 0
        self._hist.clear()

    def copy(self) -> "Matcher":
        m = Matcher(self._art)
        m._q = self._q
        m._hist = list(self._hist)
        return m

    @property
    def num_consumed(self) -> int:
        return len(self._hist)


def load(path: str | os.PathLike, tokenizer=None) -> Artifact:
    """Load and verify an artifact file.

    With ``tokenizer`` (a fingerprint string, or anything with a ``fingerprint`` attribute, such
    as a ``toolc.tokenizer.Vocabulary``) the artifact is refused unless it was compiled for it.
    """
    path = os.fspath(path)
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as e:
        raise ArtifactError(f"{path}: cannot read the artifact: {e.strerror}") from None
    art = Artifact.from_bytes(data, source=path)
    if tokenizer is not None:
        fp = tokenizer if isinstance(tokenizer, str) else getattr(tokenizer, "fingerprint", None)
        if not isinstance(fp, str):
            raise TypeError("tokenizer must be a fingerprint string or have a .fingerprint")
        name = f"tokenizer {getattr(tokenizer, 'name', fp[:12])!r}"
        art.check_fingerprint(fp, name=name)
        logits = getattr(tokenizer, "logits_size", None)
        if logits is not None and int(logits) != art.logits_size:
            raise ArtifactError(
                f"{path}: compiled for {art.logits_size:,} logits, but {name} has "
                f"{int(logits):,}; recompile the artifact with the model's logits size")
    return art
