"""The runtime: load an artifact, mask and advance per generated token.

Imports numpy and msgpack only (a test checks it in a fresh interpreter), so an inference
server needs nothing else. An :class:`Artifact` is loaded once per tool set and shared; a
:class:`Matcher` is made per request (``artifact.matcher()``), and is cheap.
"""

from __future__ import annotations

import os
from array import array
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
        # hot-path tables: one read-only row view per state (mask() is a list lookup), and
        # the mask bits as one bytes object (a membership test is one index and a shift)
        views = [self._masks[r] for r in range(self._masks.shape[0])]
        self._row_view = [views[r] for r in self._state_row]
        row_bytes = self._masks.shape[1] * 4
        self._bits = memoryview(self._masks).cast("B")
        self._row_off = [r * row_bytes for r in self._state_row]
        self._logits = int(header["logits_size"])
        self._row_ids = arrays["row_ids"]     # row -> (kind, ids) where the file stored ids
        self._apply_plan: dict[int, tuple] = {}
        self._default = arrays["default_next"].tolist()
        self._exc_ptr = arrays["exc_ptr"].tolist()
        # array.array: Python ints on indexing, bisect-able, built by one copy
        self._exc_tokens = array("i", arrays["exc_tokens"].astype(np.int32).tobytes())
        self._exc_next = array("i", arrays["exc_next"].astype(np.int32).tobytes())
        self._final = arrays["final"].astype(bool).tolist()
        eos = self.eos_token_ids
        # per row: does it allow EOS; per state: the one token allowed, if only one
        rows = self._masks
        eos_ids = np.array(eos, dtype=np.int64)
        row_accepts = ((rows[:, eos_ids >> 5].view(np.uint32) >> (eos_ids & 31).astype(np.uint32))
                       & 1).any(axis=1) if len(eos_ids) else np.zeros(len(rows), bool)
        self._accepting = row_accepts[self._state_row].tolist()
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

    def check_tokenizer(self, tokenizer) -> None:
        """Raise ArtifactError unless ``tokenizer`` has the vocabulary this artifact was compiled
        for, naming both fingerprints and the tokenizer.

        ``tokenizer``: a fingerprint string, a ``toolc.tokenizer.Vocabulary`` (anything with a
        ``fingerprint`` string), a transformers fast tokenizer, a ``tokenizers.Tokenizer`` or a
        llama-cpp-python ``Llama``. The last three are read with the artifact's end-of-sequence
        ids (a tokenizer does not know the model's), so a match means the same token bytes and
        added tokens; reading one costs about half a second for 151k tokens, once per object
        (see :mod:`toolc.fingerprint`). Raises TypeError for any other object.
        """
        if isinstance(tokenizer, str):
            fp, name = tokenizer, f"tokenizer {tokenizer[:12]!r}"
        elif isinstance(getattr(tokenizer, "fingerprint", None), str):
            fp = tokenizer.fingerprint
            name = f"tokenizer {getattr(tokenizer, 'name', fp[:12])!r}"
        else:   # an engine's tokenizer object: read it (standard library and numpy only)
            from .fingerprint import tokenizer_fingerprint, tokenizer_name
            fp = tokenizer_fingerprint(tokenizer, self.eos_token_ids)
            name = tokenizer_name(tokenizer)
        self.check_fingerprint(fp, name=name)

    def apply_plan(self, row: int) -> tuple[bool, np.ndarray]:
        """(keep, ids) for applying mask row ``row`` to logits: ``keep`` True means ``ids`` are
        the allowed tokens (few), False means ``ids`` are the forbidden ones below the
        logits size (few). Built from the ids stored in the file, else once from the bits."""
        plan = self._apply_plan.get(row)
        if plan is None:
            kind, ids = self._row_ids.get(row, (None, None))
            if kind == 0:
                plan = (True, ids)
            elif kind == 1:
                extra = np.arange(self.vocab_size, self.logits_size, dtype=np.int64)
                plan = (False, np.concatenate([ids, extra]))
            else:
                bits = np.unpackbits(self._masks[row].view(np.uint8), bitorder="little")
                bits = bits[:self.logits_size]
                allowed = np.flatnonzero(bits)
                plan = ((True, allowed) if 2 * len(allowed) <= len(bits)
                        else (False, np.flatnonzero(bits == 0)))
            self._apply_plan[row] = plan
        return plan

    def matcher(self) -> "Matcher":
        """A fresh Matcher at the start state."""
        return Matcher(self)

    def __repr__(self) -> str:
        return (f"<toolc.Artifact {self.source}: {len(self.tool_names)} tools, "
                f"{self.num_states} states, format {self.format}>")


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
        return self._art._row_view[self._q]

    def allowed_token_ids(self) -> np.ndarray:
        bits = np.unpackbits(self.mask().view(np.uint8), bitorder="little")
        return np.flatnonzero(bits).astype(np.int32)

    def accepts(self, token_id: int) -> bool:
        a = self._art
        t = int(token_id)
        if t < 0 or t >= a._logits:
            return False
        return bool((a._bits[a._row_off[self._q] + (t >> 3)] >> (t & 7)) & 1)

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
        a = self._art
        t = int(token_id)
        q = self._q
        if t < 0 or t >= a._logits or not (a._bits[a._row_off[q] + (t >> 3)] >> (t & 7)) & 1:
            raise RejectedTokenError(t, q)
        lo, hi = a._exc_ptr[q], a._exc_ptr[q + 1]
        nxt = a._default[q]
        if lo != hi:
            i = bisect_left(a._exc_tokens, t, lo, hi)
            if i < hi and a._exc_tokens[i] == t:
                nxt = a._exc_next[i]
        self._hist.append(q)
        self._q = nxt

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


def apply_mask(logits: np.ndarray, matcher: Matcher, fill: float = float("-inf")) -> np.ndarray:
    """Set, in place, every logit the matcher's state forbids to ``fill``; return ``logits``.

    ``logits`` is a 1-D float array of at least ``logits_size`` entries; entries past the
    logits size are forbidden too. No bits are unpacked: a state that allows few tokens keeps
    their values and fills the rest, one that allows almost all fills only the few it forbids.
    """
    a = matcher._art
    if logits.ndim != 1 or logits.shape[0] < a.logits_size:
        raise ValueError(f"expected 1-D logits of at least {a.logits_size} entries, got shape "
                         f"{logits.shape}")
    keep, ids = a.apply_plan(a._state_row[matcher._q])
    if keep:
        vals = logits[ids]
        logits.fill(fill)
        logits[ids] = vals
    else:
        logits[ids] = fill
        if logits.shape[0] > a.logits_size:
            logits[a.logits_size:] = fill
    return logits


def fill_bitmask(bitmask: np.ndarray, row: int, matcher: Matcher) -> None:
    """Copy the matcher's mask into row ``row`` of an int32 (batch, ceil(V/32)) bitmask, the
    layout xgrammar- and llguidance-style engines use."""
    m = matcher.mask()
    if bitmask.ndim != 2 or bitmask.shape[1] != m.shape[0] or bitmask.dtype != np.int32:
        raise ValueError(f"expected an int32 bitmask of shape (batch, {m.shape[0]}), got "
                         f"{bitmask.dtype} {bitmask.shape}")
    bitmask[row] = m


def load(path: str | os.PathLike, tokenizer=None) -> Artifact:
    """Load and verify an artifact file.

    With ``tokenizer`` the artifact is refused (:class:`ArtifactError`, naming both fingerprints)
    unless it was compiled for that tokenizer: a fingerprint string, a
    ``toolc.tokenizer.Vocabulary``, a transformers fast tokenizer, a ``tokenizers.Tokenizer`` or
    a llama-cpp-python ``Llama`` (see :meth:`Artifact.check_tokenizer`).
    """
    path = os.fspath(path)
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as e:
        raise ArtifactError(f"{path}: cannot read the artifact: {e.strerror}") from None
    art = Artifact.from_bytes(data, source=path)
    if tokenizer is not None:
        art.check_tokenizer(tokenizer)
        logits = getattr(tokenizer, "logits_size", None)    # a Vocabulary knows the model's
        if logits is not None and int(logits) != art.logits_size:
            raise ArtifactError(
                f"{path}: compiled for {art.logits_size:,} logits, but tokenizer "
                f"{getattr(tokenizer, 'name', '?')!r} has {int(logits):,}; recompile the "
                "artifact with the model's logits size")
    return art
