"""The :class:`Artifact`: a compiled tool set loaded for serving (numpy and msgpack only).

An :class:`Artifact` is loaded once per tool set and shared (it is immutable and safe to share
between threads); a :class:`~toolc.runtime.matcher.Matcher` is made per request
(``artifact.matcher()``), and is cheap.
"""

from __future__ import annotations

import os
import weakref
from array import array

import numpy as np

from ..errors import ArtifactError
from .arrays import expand_runs
from . import limits
from .files import read_bounded, shown
from .derived import expand_derived
from .fileformat import (MAX_FILE_BYTES, _ITEMSIZE, decode_sections, pack,
                         unpack, write_atomic)
from .matcher import Matcher
from .tables import DICT_MAX, build_tables, listed_plan
from .warm import warm


class Artifact:
    """A compiled tool set for one tokenizer: masks and transitions for every state.

    Immutable and safe to share between threads; each request gets its own :meth:`matcher`.
    Besides the serving calls it answers questions about its automaton for tools and tests
    (:meth:`state_mask`, :meth:`transitions`, :meth:`default_next`, :meth:`is_final_state`,
    :attr:`mask_rows`, :meth:`state_row`), all read-only.
    """

    def __init__(self, header: dict, sections: dict, arrays: dict, source: str):
        self.header = header
        self._sections = sections
        self.source = source
        self._arrays = arrays
        self._masks = arrays["masks"]
        self._masks.setflags(write=False)
        self._lazy: dict = {}
        self._t = build_tables(header, arrays, self._masks, int(header["vocab_size"]))
        self._counting = None
        if "cnt_tag" in arrays or "itm_tag" in arrays or "run_tag" in arrays:
            from .counters import make_counting
            # the counting tables reach the artifact through a weak reference: a cycle would
            # keep every loaded artifact's tables (tens of MB) alive until the collector runs
            ref = weakref.ref(self)
            self._counting = make_counting(arrays, self._t.row_view, self._t.logits,
                                           lambda q, size: ref()._dense_targets(q, size))
        warm(self)      # the first request as fast as the next (toolc/runtime/warm.py)

    # -- construction ---------------------------------------------------------------------
    @classmethod
    def from_parts(cls, header: dict, sections: dict, source: str = "artifact",
                   checked: bool = True) -> "Artifact":
        """An artifact from a header and its encoded sections, checked as a file is: sizes,
        ranges and order, and what loading would cost (:mod:`toolc.runtime.limits`) before
        each stage allocates. ``checked=False``: sections the encoder has just made in this
        process, whose sizes, ranges and order are not checked again (the limits are)."""
        if not isinstance(header, dict) or not isinstance(sections, dict):
            raise ArtifactError(f"{source}: damaged artifact (header or sections)")
        arrays = decode_sections(header, sections, source, checked)
        logits = int(header["logits_size"])
        sizes = limits.table_sizes(limits.section_sizes(header, sections, _ITEMSIZE), arrays,
                                   logits, DICT_MAX)
        body_bytes = sum(len(v) for v in sections.values())
        limits.check("tables", sizes, body_bytes, logits, source)
        return cls(header, sections, arrays, source)

    @classmethod
    def from_bytes(cls, data: bytes, source: str = "artifact") -> "Artifact":
        """An artifact from a file's bytes, verified (checksum, sizes, ranges) before use."""
        header, sections = unpack(data, source)
        return cls.from_parts(header, sections, source)

    def to_bytes(self) -> bytes:
        """The artifact file's bytes (deterministic: the same artifact, the same bytes)."""
        return pack(self.header, self._sections)

    def save(self, path: str | os.PathLike) -> int:
        """Write the artifact atomically (temp file, then rename); return its size in bytes."""
        data = self.to_bytes()
        write_atomic(path, data)
        return len(data)

    # -- description ------------------------------------------------------------------------
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
    def num_classes(self) -> int:
        """Transition classes: a mask row plus coded exceptions, shared by states."""
        return len(self._arrays["class_row"])

    @property
    def num_derived_classes(self) -> int:
        """Classes stored as derived from another: thinned (format 4 on) or patched (format 7);
        0 in format 3."""
        raw = self._sections.get("class_base")
        return 0 if raw is None else int((np.frombuffer(raw, "<i4") >= 0).sum())

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
        (see :mod:`toolc.runtime.fingerprint`). Raises TypeError for any other object.
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


    @property
    def sections(self) -> dict[str, bytes]:
        """The file's sections as stored (name -> little-endian bytes; a copy of the dict)."""
        return dict(self._sections)

    # -- the automaton, read-only, for tools and tests (the per-token calls do not use these)
    @property
    def mask_rows(self) -> np.ndarray:
        """The distinct mask rows, int32[rows, words], read-only."""
        return self._masks

    def state_row(self, q: int) -> int:
        """The index in :attr:`mask_rows` of state ``q``'s mask."""
        return self._t.state_row[q]

    def state_rows(self) -> list[int]:
        """:meth:`state_row` of every state."""
        return list(self._t.state_row)

    def state_mask(self, q: int) -> np.ndarray:
        """State ``q``'s mask (a read-only view, as :meth:`Matcher.mask` gives)."""
        return self._t.row_view[q]

    def is_final_state(self, q: int) -> bool:
        """EOS has been consumed in state ``q``: the output is complete."""
        return self._t.final[q]

    def default_next(self, q: int) -> int:
        """Where state ``q``'s allowed tokens lead unless listed in :meth:`transitions`'s
        exceptions (-1: nowhere, every allowed token is an exception)."""
        if "default" not in self._lazy:
            self._lazy["default"] = self._arrays["default_next"].tolist()
        return self._lazy["default"][q]

    def transitions(self, q: int) -> tuple[dict[int, int], int]:
        """State ``q``'s exceptions ``{token: next state}`` and its default next state
        (:meth:`default_next`); every allowed token that is not an exception goes there."""
        ptr, tok, nxt = self._flat_exceptions()
        lo, hi = ptr[q], ptr[q + 1]
        return dict(zip(tok[lo:hi], nxt[lo:hi])), self.default_next(q)

    def _flat_exceptions(self) -> tuple[list, array, array]:
        """Every state's exceptions as flat tables: state q's are ``tok[ptr[q]:ptr[q+1]]``
        leading to ``nxt[...]``; derived classes expanded. Built on first use."""
        if "exc" not in self._lazy:
            a = self._arrays
            sc = a["state_class"].astype(np.int64)
            ep, exc_tokens, exc_code = expand_derived(a)
            ep = ep.astype(np.int64)
            which, at = expand_runs(ep[sc], ep[sc + 1])
            tok = exc_tokens[at]
            nxt = a["tgt"][a["tgt_ptr"][which].astype(np.int64) + exc_code[at] - 1]
            ptr = np.concatenate([[0], np.cumsum(ep[sc + 1] - ep[sc])])
            self._lazy["exc"] = (ptr.tolist(), array("i", tok.astype("=i4").tobytes()),
                                 array("i", nxt.astype("=i4").tobytes()))
        return self._lazy["exc"]

    def apply_plan(self, row: int) -> tuple[int, np.ndarray]:
        """How :func:`~toolc.runtime.bitmask.apply_mask` applies mask row ``row``:
        ``(KEEP, ids)``, the allowed tokens, when they are at most half (keep their logits,
        fill the rest), else ``(DROP, ids)``, the forbidden ones below the logits size (fill
        them).

        Measured on tools80 (Qwen3, a float32 row): filling the whole row costs about as
        much as writing 4,000 scattered logits, so a row allowing 4,400 tokens costs about
        twice one allowing 4; ``np.fmin`` with a stored row of NaN and -inf, ``np.where``
        and boolean indexing were all slower still."""
        return listed_plan(self._t, row)

    def _dense_targets(self, q: int, size: int) -> np.ndarray:
        """int64[size]: where each token leads from state ``q`` (the default where the state
        does not list it; meaningful for the tokens its row allows)."""
        exc, default = self.transitions(q)
        out = np.full(size, default, dtype=np.int64)
        if exc:
            out[np.fromiter(exc.keys(), dtype=np.int64, count=len(exc))] = \
                np.fromiter(exc.values(), dtype=np.int64, count=len(exc))
        return out

    def matcher(self, state: int = 0) -> Matcher:
        """A fresh Matcher, at the start state or, for tools and tests, at ``state``."""
        if self._counting is not None:
            from .counted import CountedMatcher
            m = CountedMatcher(self)
        else:
            m = Matcher(self)
        if type(state) is int and state == 0:       # the start: every request's case
            return m
        if isinstance(state, bool) or not isinstance(state, (int, np.integer)) \
                or not 0 <= state < self.num_states:
            raise ValueError(f"state {state!r} is not one of the {self.num_states} states")
        m._q = int(state)
        return m

    def __repr__(self) -> str:
        return (f"<toolc.Artifact {self.source}: {len(self.tool_names)} tools, "
                f"{self.num_states} states, format {self.format}>")


def load(path: str | os.PathLike, tokenizer=None) -> Artifact:
    """Load and verify an artifact file.

    With ``tokenizer`` the artifact is refused (:class:`ArtifactError`, naming both fingerprints)
    unless it was compiled for that tokenizer: a fingerprint string, a
    ``toolc.tokenizer.Vocabulary``, a transformers fast tokenizer, a ``tokenizers.Tokenizer`` or
    a llama-cpp-python ``Llama`` (see :meth:`Artifact.check_tokenizer`).
    """
    path = os.fspath(path)
    data = read_bounded(path, MAX_FILE_BYTES, "artifact")
    art = Artifact.from_bytes(data, source=shown(path))
    if tokenizer is not None:
        art.check_tokenizer(tokenizer)
        logits = getattr(tokenizer, "logits_size", None)    # a Vocabulary knows the model's
        if logits is not None and int(logits) != art.logits_size:
            raise ArtifactError(
                f"{shown(path)}: compiled for {art.logits_size:,} logits, but tokenizer "
                f"{getattr(tokenizer, 'name', '?')!r} has {int(logits):,}; recompile the "
                "artifact with the model's logits size")
    return art
