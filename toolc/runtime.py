"""The runtime: load an artifact, mask and advance per generated token.

Imports numpy and msgpack only (a test checks it in a fresh interpreter), so an inference
server needs nothing else. An :class:`Artifact` is loaded once per tool set and shared; a
:class:`Matcher` is made per request (``artifact.matcher()``), and is cheap.
"""

from __future__ import annotations

import os
from array import array
from bisect import bisect_left
from operator import itemgetter

import numpy as np

from .artifact import (COMPLEMENT, DELTA, LIST, _expand_runs, _or_words, decode_sections,
                       expand_derived, pack, unpack, write_atomic)
from .errors import ArtifactError, RejectedTokenError

# a class whose mask row lists at most this many tokens has all of them in the code dict; a
# wider one is two bit tests (allowed? an exception?) and, for an exception, a bisection
DICT_MAX = 64
# a wide class's exceptions are bisected within buckets of 2**EXC_BUCKET_BITS token ids
EXC_BUCKET_BITS = 8
# class keys are multiples of this odd number, larger than any token id: an int hashes to
# itself, so keys (class << k) | token would all share their low bits with the token and
# collide in the dict's table (measured on tools80: 236 ns a lookup, 71 with this stride)
KEY_STRIDE = 2654435761
KEEP, DROP = 0, 1        # apply_mask plans (see Artifact.apply_plan)


def _pick(items: list, idx: np.ndarray) -> list:
    """``[items[i] for i in idx]`` at C speed."""
    if len(idx) == 0:
        return []
    if len(idx) == 1:
        return [items[int(idx[0])]]
    return list(itemgetter(*idx.tolist())(items))


class _Tables:
    """What the per-token calls read, in slots (one fixed offset per attribute, however the
    Artifact's own attributes change). Built once per artifact, shared by its matchers."""

    __slots__ = ("logits", "row_view", "st", "codes", "wbits", "rb", "etok", "ecode", "ebkt",
                 "next", "accepting", "final", "only", "state_row", "plans", "num_states")


class Artifact:
    """A compiled tool set for one tokenizer: masks and transitions for every state.

    Immutable and safe to share between threads; each request gets its own :meth:`matcher`.
    """

    def __init__(self, header: dict, sections: dict, arrays: dict, source: str):
        self.header = header
        self._sections = sections
        self.source = source
        self._arrays = arrays
        self._masks = arrays["masks"]
        self._masks.setflags(write=False)
        self._lazy: dict = {}
        t = self._t = _Tables()
        t.logits = int(header["logits_size"])
        t.num_states = int(header["num_states"])
        state_class = arrays["state_class"].astype(np.int64)
        class_row = arrays["class_row"].astype(np.int64)
        state_row = class_row[state_class]
        t.state_row = self._state_row = state_row.tolist()
        t.row_view = _pick(list(self._masks), state_row)     # mask(): a stored row view
        # apply_mask's plans, per mask row (None: a listed row, made on first use)
        t.plans = self._row_plans = self._make_plans()
        t.final = self._final = arrays["final"].astype(bool).tolist()
        t.accepting = arrays["row_eos"][state_row].tolist()
        t.only = arrays["row_only"][state_row].tolist()
        self._build_transitions(arrays, state_class, class_row)

    def _build_transitions(self, arrays: dict, state_class: np.ndarray,
                           class_row: np.ndarray) -> None:
        """The tables ``advance`` reads: three arrays, one dict and one bytes object.

        A token ``t`` gets a code ``c`` in state ``q``: 0 if ``t`` is not allowed, 1 if it
        leads to the default next state, ``k + 1`` for exception code ``k``; the next state
        is then ``next[base + c]``. Per state, ``st[4q:4q+4]`` holds ``off, lo, 0, base`` (32
        bytes: one cache line).

        A narrow class (a mask row listing at most DICT_MAX tokens) has every allowed token in
        one dict, keyed by ``t`` plus the class's key, ``(class + 1) * KEY_STRIDE``; ``off``
        is minus that key. A wide class has two bit rows in ``wbits`` at byte offset ``off``
        (>= 0): its mask row, then the flags of its exception tokens (``rb`` bytes later). A
        flagged token's code is found by bisecting the class's sorted exceptions ``etok``
        within the bucket of ids ``t >> EXC_BUCKET_BITS``: the bucket's bounds are
        ``ebkt[j]`` and ``ebkt[j + 1]`` for ``j = lo + (t >> EXC_BUCKET_BITS)``. Any other
        allowed token leads to the default. A derived class (format 4) has its base's flags
        masked by its own row, and its base's ``lo``: it reads the base's buckets and
        exceptions, never a copy of them. A JSON string's 1,500 exits make buckets of two or
        three, so the bisection reads one or two cache lines where a bisection of all of them
        read a dozen: after ``apply_mask`` has written a row of logits the caches are cold,
        and that was advance's slowest path (tools80: p50 2.6 µs, p99 7.7 µs, against 1.5 /
        4.7 for a narrow class). A dict of the exceptions was as fast but doubled the time to
        build the tables, and a bounded string's 100k+ exceptions per class made it huge.
        Arrays rather than lists: an array entry is one memory read where a list entry is two
        (the slot, then the int object).
        """
        t = self._t
        C = len(class_row)
        kind, row_ptr = arrays["row_kind"], arrays["row_ptr"].astype(np.int64)
        count = arrays["row_count"]
        et = arrays["exc_tokens"].astype(np.int64)
        ep = arrays["exc_ptr"].astype(np.int64)
        code = arrays["exc_code"].astype(np.int64) + 1
        e_class = np.repeat(np.arange(C), np.diff(ep))
        # a derived class (format 4) reads its base's exceptions: both are wide
        base = arrays.get("class_base")
        if base is None:
            base = np.full(C, -1, dtype=np.int64)
        derived = base >= 0
        dc = np.flatnonzero(derived)
        shared = np.zeros(C, dtype=bool)
        shared[base[dc]] = True
        narrow = (kind[class_row] == LIST) & (count[class_row] <= DICT_MAX) & ~derived & ~shared
        # narrow classes: {(class + 1) * KEY_STRIDE + token: code} for every allowed token
        ckey = (np.arange(C, dtype=np.int64) + 1) * KEY_STRIDE
        nc = np.flatnonzero(narrow)
        which, at = _expand_runs(row_ptr[class_row[nc]], row_ptr[class_row[nc] + 1])
        keys = ckey[nc][which] + arrays["row_data"][at].astype(np.int64)
        vals = np.ones(len(keys), dtype=np.int64)
        sel = narrow[e_class]
        vals[np.searchsorted(keys, ckey[e_class[sel]] + et[sel])] = code[sel]
        t.codes = dict(zip(keys.tolist(), vals.tolist()))
        # wide classes: their exceptions (sorted by class, then token) and bucket bounds
        wc = np.flatnonzero(~narrow)
        wsel = ~sel
        t.etok = array("i", et[wsel].astype("=i4").tobytes())
        t.ecode = array("i", code[wsel].astype("=i4").tobytes())
        nb = ((t.logits - 1) >> EXC_BUCKET_BITS) + 2          # buckets + 1 bounds per class
        rank = np.cumsum(~narrow) - 1                        # a wide class's rank
        # bound p (class rank * nb + bucket) = how many exceptions lie in earlier buckets
        cnt = np.bincount(rank[e_class[wsel]] * nb + (et[wsel] >> EXC_BUCKET_BITS),
                          minlength=len(wc) * nb)
        ebkt = np.zeros(len(wc) * nb, dtype="=i4")
        np.cumsum(cnt[:-1], out=ebkt[1:])
        t.ebkt = array("i", ebkt.tobytes())
        # wide classes: mask row bits and exception flags, side by side
        words = self._masks.shape[1]
        wpos = np.full(C, -1, dtype=np.int64)
        wpos[wc] = np.arange(len(wc))
        flags = np.zeros((len(wc), words), dtype=np.uint32)
        sel = ~sel
        word, bits = _or_words(wpos[e_class[sel]] * words + (et[sel] >> 5), et[sel] & 31)
        flags.reshape(-1)[word] = bits
        if len(dc):     # the base's exception flags where the derived class's row allows
            flags[wpos[dc]] = flags[wpos[base[dc]]] & self._masks[class_row[dc]].view(np.uint32)
        t.wbits = np.concatenate([self._masks[class_row[wc]].view(np.uint32), flags],
                                 axis=1).tobytes()
        t.rb = words * 4
        n = len(state_class)
        tgt_ptr = arrays["tgt_ptr"].astype(np.int64)
        per_class = np.zeros((C, 3), dtype=np.int64)
        per_class[:, 0] = -ckey
        per_class[wc, 0] = wpos[wc] * 2 * t.rb
        per_class[wc, 1] = np.arange(len(wc)) * nb
        per_class[dc, 1] = per_class[base[dc], 1]          # the base's buckets
        per_state = np.empty((n, 4), dtype="=i8")
        per_state[:, :3] = np.take(per_class, state_class, axis=0)
        first = tgt_ptr[:-1] + np.arange(n)         # where each state's default goes
        per_state[:, 3] = first - 1
        t.st = array("q", per_state.tobytes())
        # per state: its default next state, then its exception targets
        nxt = np.empty(n + len(arrays["tgt"]), dtype="=i8")
        is_default = np.zeros(len(nxt), dtype=bool)
        is_default[first] = True
        nxt[first] = arrays["default_next"]
        nxt[~is_default] = arrays["tgt"]
        t.next = array("q", nxt.tobytes())

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
    def num_classes(self) -> int:
        """Transition classes: a mask row plus coded exceptions, shared by states."""
        return len(self._arrays["class_row"])

    @property
    def num_derived_classes(self) -> int:
        """Classes stored as derived from another (artifact format 4; 0 in format 3)."""
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

    def apply_plan(self, row: int) -> tuple[int, np.ndarray]:
        """How :func:`apply_mask` applies mask row ``row``: ``(KEEP, ids)``, the allowed
        tokens, when they are at most half (keep their logits, fill the rest), else
        ``(DROP, ids)``, the forbidden ones below the logits size (fill them).

        Measured on tools80 (Qwen3, a float32 row): filling the whole row costs about as
        much as writing 4,000 scattered logits, so a row allowing 4,400 tokens costs about
        twice one allowing 4; ``np.fmin`` with a stored row of NaN and -inf, ``np.where``
        and boolean indexing were all slower still."""
        plan = self._row_plans[row]
        if plan is None:     # a listed row: its stored ids, a view
            lo, hi = self._row_bounds[row], self._row_bounds[row + 1]
            plan = self._row_plans[row] = (KEEP, self._row_ids[lo:hi])
        return plan

    def _make_plans(self) -> list:
        """Every row's apply plan but the listed rows' (a view of their stored ids, made on
        first use in about a microsecond), so that no first use of a row costs more: a
        complement row, or one differing from a complement by a few ids, lists its forbidden
        ids; any other row comes from its bits (50 to 100 µs each, now at load). tools80:
        its 20 such rows in about 0.3 ms."""
        a, L, V = self._arrays, self.logits_size, self.vocab_size
        kind, data = a["row_kind"], a["row_data"]
        ptr = self._row_bounds = a["row_ptr"].astype(np.int64).tolist()
        ids = self._row_ids = data.astype(np.intp)
        past = np.arange(V, L, dtype=np.intp)
        plans = [None] * len(kind)
        for r in np.flatnonzero(kind != LIST).tolist():
            lo, hi = ptr[r], ptr[r + 1]
            base = int(data[lo]) if kind[r] == DELTA else -1
            if kind[r] == COMPLEMENT:
                plans[r] = (DROP, np.concatenate([ids[lo:hi], past]))
            elif base >= 0 and kind[base] == COMPLEMENT and (hi == lo + 1 or
                                                             int(data[hi - 1]) < V):
                # a complement row with a few ids flipped: still a complement. Its forbidden
                # ids are the base's but the flipped ones, plus the flipped ones the base
                # allowed (both lists are sorted: no sort needed)
                b, d = ids[ptr[base]:ptr[base + 1]], ids[lo + 1:hi]
                at = np.searchsorted(b, d)
                hit = at < len(b)
                hit[hit] = b[at[hit]] == d[hit]
                keep = np.ones(len(b), dtype=bool)
                keep[at[hit]] = False
                plans[r] = (DROP, np.concatenate([b[keep], d[~hit], past]))
            else:
                bits = np.unpackbits(self._masks[r].view(np.uint8), count=L,
                                     bitorder="little").view(bool)
                plans[r] = ((KEEP, np.flatnonzero(bits)) if 2 * int(a["row_count"][r]) <= L
                            else (DROP, np.flatnonzero(~bits)))
        return plans

    # -- the transitions as flat per-state tables, for tools and tests (advance does not use
    #    them): state q's exceptions are _exc_tokens[_exc_ptr[q]:_exc_ptr[q+1]] -> _exc_next,
    #    every other allowed token leads to _default[q]
    @property
    def _default(self) -> list[int]:
        if "default" not in self._lazy:
            self._lazy["default"] = self._arrays["default_next"].tolist()
        return self._lazy["default"]

    def _flat_exceptions(self) -> tuple[list, array, array]:
        if "exc" not in self._lazy:
            a = self._arrays
            sc = a["state_class"].astype(np.int64)
            ep, exc_tokens, exc_code = expand_derived(a)
            ep = ep.astype(np.int64)
            which, at = _expand_runs(ep[sc], ep[sc + 1])
            tok = exc_tokens[at]
            nxt = a["tgt"][a["tgt_ptr"][which].astype(np.int64) + exc_code[at] - 1]
            ptr = np.concatenate([[0], np.cumsum(ep[sc + 1] - ep[sc])])
            self._lazy["exc"] = (ptr.tolist(), array("i", tok.astype("=i4").tobytes()),
                                 array("i", nxt.astype("=i4").tobytes()))
        return self._lazy["exc"]

    @property
    def _exc_ptr(self) -> list[int]:
        return self._flat_exceptions()[0]

    @property
    def _exc_tokens(self) -> array:
        return self._flat_exceptions()[1]

    @property
    def _exc_next(self) -> array:
        return self._flat_exceptions()[2]

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

    __slots__ = ("_art", "_t", "_q", "_hist")

    def __init__(self, artifact: Artifact):
        self._art = artifact
        self._t = artifact._t
        self._q = 0
        self._hist: list[int] = []

    @property
    def state(self) -> int:
        return self._q

    def mask(self) -> np.ndarray:
        """int32[ceil(logits_size / 32)], read-only: token t allowed iff bit t%32 of word t//32.

        A view of the stored row, not a copy: O(1).
        """
        return self._t.row_view[self._q]

    def allowed_token_ids(self) -> np.ndarray:
        bits = np.unpackbits(self.mask().view(np.uint8), bitorder="little")
        return np.flatnonzero(bits).astype(np.int32)

    def _code(self, t: int) -> int:
        """0 if token ``t`` is not allowed here, else its code (see _build_transitions)."""
        h = self._t
        if 0 <= t < h.logits:
            st = h.st
            i = 4 * self._q
            o = st[i]
            if o < 0:
                return h.codes.get(t - o, 0)
            k, b = o + (t >> 3), t & 7
            if (h.wbits[k] >> b) & 1:
                if (h.wbits[k + h.rb] >> b) & 1:
                    j = st[i + 1] + (t >> EXC_BUCKET_BITS)
                    return h.ecode[bisect_left(h.etok, t, h.ebkt[j], h.ebkt[j + 1])]
                return 1
        return 0

    def accepts(self, token_id: int) -> bool:
        return self._code(int(token_id)) != 0

    def advance(self, token_id: int) -> None:
        """Consume one token; raise RejectedTokenError (state unchanged) if it is not allowed."""
        t = token_id if type(token_id) is int else int(token_id)
        h = self._t
        q = self._q
        if 0 <= t < h.logits:
            st = h.st
            i = 4 * q
            o = st[i]
            if o < 0:
                c = h.codes.get(t - o, 0)
            else:
                k, b = o + (t >> 3), t & 7
                wb = h.wbits
                if not (wb[k] >> b) & 1:
                    c = 0
                elif (wb[k + h.rb] >> b) & 1:
                    j = st[i + 1] + (t >> EXC_BUCKET_BITS)
                    bk = h.ebkt
                    c = h.ecode[bisect_left(h.etok, t, bk[j], bk[j + 1])]
                else:
                    c = 1
            if c:
                self._hist.append(q)
                self._q = h.next[st[i + 3] + c]
                return
        raise RejectedTokenError(t, q)

    def is_accepting(self) -> bool:
        """Generation may end here: EOS is in the mask."""
        return self._t.accepting[self._q]

    def is_terminated(self) -> bool:
        """EOS has been consumed."""
        return self._t.final[self._q]

    def forced_tokens(self) -> list[int]:
        """The tokens that are the only choice from here, in order (for jump-forward)."""
        h = self._t
        out = []
        probe = Matcher(self._art)
        probe._q = self._q
        for _ in range(h.num_states + 1):
            t = h.only[probe._q]
            if t < 0:
                break
            out.append(t)
            probe.advance(t)
            if h.final[probe._q]:
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
    logits size are forbidden too. No bits are unpacked per call: a state that allows few
    tokens keeps their values and fills the rest, one that allows almost all fills only the
    few it forbids (:meth:`Artifact.apply_plan`).
    """
    h = matcher._t
    L = h.logits
    if logits.ndim != 1 or logits.shape[0] < L:
        raise ValueError(f"expected 1-D logits of at least {L} entries, got shape "
                         f"{logits.shape}")
    r = h.state_row[matcher._q]
    plan = h.plans[r]
    if plan is None:
        plan = matcher._art.apply_plan(r)
    how, ids = plan
    if how == KEEP:
        vals = logits[ids]
        logits.fill(fill)
        logits[ids] = vals
    else:
        logits[ids] = fill
        if logits.shape[0] > L:
            logits[L:] = fill
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
