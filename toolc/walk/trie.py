"""The vocabulary as a trie of byte-class sequences, built once per vocabulary and class map.

Tokens are sorted by the sequence of classes they spell; a trie node at depth ``d`` is then a
contiguous run of sorted tokens sharing their first ``d`` classes. Per node the trie keeps:

* ``submask``: the classes used anywhere below the node (for self-loop factoring);
* ``charlo``/``charhi`` (into ``charids``) / ``chargood``: whether every token below the node
  continues from this depth with complete, well-formed UTF-8 characters, and which characters
  (as class sequences) it uses, as a sorted list of character ids (a dense bit row per node
  took 45 MB on Qwen3 with the standard classes' 1,462 characters; the lists take 2.4 MB).
  A state that loops on each of those characters (a JSON string interior, free text) maps
  every token below the node to itself, whatever bytes the characters span.

The trie over :data:`STANDARD_CLASSES` refines the classes of nearly every grammar, so it is
cached per vocabulary in memory and on disk (:mod:`toolc.cache`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..runtime.arrays import expand_runs
from ..tokenizer import Vocabulary

@dataclass
class Trie:
    order: np.ndarray           # sorted position -> token id
    # per level d (1-based: index d-1): the nodes at depth d
    lo: list                    # first sorted position of the node's run
    hi: list                    # one past the last
    end_hi: list                # tokens ending exactly here are lo:end_hi
    cls: list                   # class of the edge into the node
    child_start: list           # per node at depth d: its children's index range at depth d+1
    child_end: list
    submask: list               # uint64[nodes, words]: classes used strictly below the node
    root_child_end: int
    charlo: list = field(default_factory=list)     # per node: its characters below are
    charhi: list = field(default_factory=list)     # charids[charlo:charhi]
    chargood: list = field(default_factory=list)   # bool[nodes]: all below are whole characters
    chars: np.ndarray = field(default_factory=lambda: np.zeros((0, 4), np.int64))
    # chars[i]: the class sequence of character id i, padded with -1
    charids: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))

    def chars_loop(self, d: int, nodes: np.ndarray, charloops: np.ndarray,
                   cur: np.ndarray) -> np.ndarray:
        """For each depth-``d`` node and state: does the state loop on every character used
        below the node? ``charloops`` is uint64[states, words], bit ``i`` for character ``i``."""
        lo, hi = self.charlo[d - 1][nodes], self.charhi[d - 1][nodes]
        cnt = hi - lo
        total = int(cnt.sum())
        if total == 0:
            return np.ones(len(nodes), dtype=bool)
        seg = np.repeat(np.arange(len(nodes)), cnt)
        first = np.cumsum(cnt) - cnt
        cid = self.charids[np.repeat(lo - first, cnt) + np.arange(total)].astype(np.int64)
        word = charloops[cur[seg], cid >> 6]
        bit = (word >> (cid & 63).astype(np.uint64)) & np.uint64(1)
        return np.bincount(seg[bit == 0], minlength=len(nodes)) == 0


def build_trie(vocab: Vocabulary, byte_class: np.ndarray, num_classes: int) -> Trie:
    ids, lens, flat = vocab.ordinary_bytes()
    maxlen = int(lens.max()) if len(lens) else 0
    if num_classes > 255:  # pragma: no cover - at most 256 byte classes, and 0 is padding
        raise ValueError("too many byte classes")
    # class + 1 per byte, 0 as padding: rows compare as byte strings in trie order
    mat = np.zeros((len(ids), max(maxlen, 1)), dtype=np.uint8)
    rows, cols = expand_runs(np.zeros_like(lens), lens)
    mat[rows, cols] = byte_class[flat] + 1
    order = np.argsort(mat.view(f"S{mat.shape[1]}").ravel(), kind="stable")
    del mat
    cls_flat = byte_class[flat].astype(np.int64)
    good_p, chars_p, chars = _char_suffixes(flat, lens, cls_flat, num_classes)
    start = (np.cumsum(lens) - lens)[order]
    pstart = start + order          # the token's first slot in the padded suffix layout
    lens = lens[order]
    words = (num_classes + 63) // 64
    t = Trie(order=ids[order], lo=[], hi=[], end_hi=[], cls=[], child_start=[], child_end=[],
             submask=[], root_child_end=0, chars=chars)
    charids, nchar = [], 0
    # the sorted tokens still long enough at this depth, and their parent nodes
    act = np.arange(len(ids))
    p_act = np.zeros(len(ids), dtype=np.int64)
    for d in range(1, maxlen + 1):
        keep = lens[act] >= d
        act, p = act[keep], p_act[keep]
        c = cls_flat[start[act] + (d - 1)]
        new = np.ones(len(act), dtype=bool)
        new[1:] = (p[1:] != p[:-1]) | (c[1:] != c[:-1])
        starts = np.flatnonzero(new)
        node_of = np.cumsum(new) - 1
        lo = act[starts]
        hi = np.append(act[starts[1:] - 1] + 1, act[-1] + 1) if len(act) else lo
        ends_here = (lens[act] == d)
        end_count = np.add.reduceat(ends_here.astype(np.int64), starts) if len(starts) else lo
        t.lo.append(lo)
        t.hi.append(hi)
        t.end_hi.append(lo + end_count)
        t.cls.append(c[starts])
        # whole characters from depth d on, for every token below each node
        slot = pstart[act] + d
        if len(starts):
            node, cid = _bit_lists(np.bitwise_or.reduceat(chars_p[slot], starts, axis=0))
            t.chargood.append(np.logical_and.reduceat(good_p[slot], starts))
        else:
            node, cid = np.zeros(0, np.int64), np.zeros(0, np.int64)
            t.chargood.append(np.zeros(0, bool))
        n_here = len(starts)
        counts = np.bincount(node, minlength=n_here)
        t.charhi.append(nchar + np.cumsum(counts))
        t.charlo.append(t.charhi[-1] - counts)
        charids.append(cid.astype(np.int32))
        nchar += len(cid)
        # children ranges for the previous depth's nodes
        pp = p[starts]
        n_prev = 1 if d == 1 else len(t.lo[d - 2])
        cs = np.searchsorted(pp, np.arange(n_prev), side="left")
        ce = np.searchsorted(pp, np.arange(n_prev), side="right")
        if d == 1:
            t.root_child_end = int(ce[0])
        else:
            t.child_start.append(cs)
            t.child_end.append(ce)
        p_act = node_of
    t.charids = np.concatenate(charids) if charids else np.zeros(0, np.int32)
    if maxlen:
        n_last = len(t.lo[-1])
        t.child_start.append(np.zeros(n_last, dtype=np.int64))
        t.child_end.append(np.zeros(n_last, dtype=np.int64))
    # classes used strictly below each node, bottom-up
    below = None
    for d in range(maxlen, 0, -1):
        n = len(t.lo[d - 1])
        m = np.zeros((n, words), dtype=np.uint64)
        if below is not None:
            cls_child = t.cls[d]
            edge = np.zeros((len(cls_child), words), dtype=np.uint64)
            edge[np.arange(len(cls_child)), cls_child // 64] = \
                np.left_shift(np.uint64(1), (cls_child % 64).astype(np.uint64))
            own = edge | below
            has = t.child_end[d - 1] > t.child_start[d - 1]
            if has.any():
                m[has] = np.bitwise_or.reduceat(own, t.child_start[d - 1][has], axis=0)
        t.submask.insert(0, m)
        below = m
    return t


def _bit_lists(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """uint64[n, words] bit rows as (row, bit) pairs, sorted by row then bit."""
    bits = np.unpackbits(rows.astype("<u8", copy=False).view(np.uint8), axis=1, bitorder="little")
    return np.nonzero(bits)


def _char_suffixes(flat: np.ndarray, lens: np.ndarray, cls_flat: np.ndarray, num_classes: int):
    """For every token and position p: does the suffix from p consist of whole, well-formed
    UTF-8 characters, and which characters (ids of class sequences) does it use?

    Results live in a padded layout where token t's position p is slot ``start_t + t + p``
    and slot ``start_t + t + len_t`` is an empty suffix. Returns (good, charbits, chars).
    """
    n_tok = len(lens)
    total = len(flat)
    starts = np.cumsum(lens) - lens
    tok_of = np.repeat(np.arange(n_tok), lens)
    end_of = (starts + lens)[tok_of]
    pos = np.arange(total)
    b = flat.astype(np.int64)
    L = np.zeros(total, dtype=np.int64)
    L[b < 0x80] = 1
    L[(b >= 0xC2) & (b <= 0xDF)] = 2
    L[(b >= 0xE0) & (b <= 0xEF)] = 3
    L[(b >= 0xF0) & (b <= 0xF4)] = 4
    valid = (L > 0) & (pos + L <= end_of)
    K = num_classes + 1
    key = cls_flat + 1
    for k in (1, 2, 3):
        need = valid & (L > k)
        nb = b[np.minimum(pos + k, total - 1)]
        valid &= ~need | ((nb & 0xC0) == 0x80)
        key = key + np.where(need, (cls_flat[np.minimum(pos + k, total - 1)] + 1) * K ** k, 0)
    b1 = b[np.minimum(pos + 1, total - 1)]
    valid &= ~((b == 0xE0) & (b1 < 0xA0)) & ~((b == 0xED) & (b1 > 0x9F))
    valid &= ~((b == 0xF0) & (b1 < 0x90)) & ~((b == 0xF4) & (b1 > 0x8F))
    keys, inv = np.unique(key[valid], return_inverse=True)
    char_id = np.full(total, -1, dtype=np.int64)
    char_id[valid] = inv.reshape(-1)
    chars = np.full((len(keys), 4), -1, dtype=np.int64)
    rest = keys.copy()
    for k in range(4):
        chars[:, k] = rest % K - 1
        rest //= K
    cwords = max((len(keys) + 63) // 64, 1)
    slots = total + n_tok
    good = np.ones(slots, dtype=bool)
    bits = np.zeros((slots, cwords), dtype=np.uint64)
    slot_of = pos + tok_of
    maxlen = int(lens.max()) if n_tok else 0
    in_tok = pos - starts[tok_of]
    by_p = np.argsort(in_tok, kind="stable")
    bounds = np.searchsorted(in_tok[by_p], np.arange(maxlen + 1))
    for p in range(maxlen - 1, -1, -1):
        at = by_p[bounds[p]:bounds[p + 1]]
        s = slot_of[at]
        ok = valid[at]
        nxt = s + np.where(ok, L[at], 0)
        good[s] = ok & good[nxt]
        cid = char_id[at]
        own = np.zeros((len(at), cwords), dtype=np.uint64)
        okc = np.flatnonzero(ok)
        own[okc, cid[okc] // 64] = np.left_shift(np.uint64(1), (cid[okc] % 64).astype(np.uint64))
        bits[s] = np.where(ok[:, None], own | bits[nxt], 0)
    return good, bits, chars


#: the characters above ASCII that Python counts as whitespace (str.isspace; a test checks
#: this against all of Unicode)
UNICODE_SPACES = "\x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + \
    "\u2028\u2029\u202f\u205f\u3000"


def _standard_classes() -> np.ndarray:
    """A fixed byte partition that refines the classes of almost every grammar toolc builds:
    each ASCII byte alone, and the high bytes by their role in UTF-8."""
    cls = np.zeros(256, dtype=np.int64)
    cls[:128] = np.arange(128)
    bounds = [(0x80, 0x8F), (0x90, 0x9F), (0xA0, 0xBF), (0xC0, 0xC1), (0xC2, 0xDF), (0xE0, 0xE0),
              (0xE1, 0xEC), (0xED, 0xED), (0xEE, 0xEF), (0xF0, 0xF0), (0xF1, 0xF3), (0xF4, 0xF4),
              (0xF5, 0xFF)]
    for k, (lo, hi) in enumerate(bounds):
        cls[lo:hi + 1] = 128 + k
    # every grammar's free text spells Unicode's whitespace (the formats' leading-space rule):
    # each byte of those characters alone, so that their grammars stay on this trie
    for k, b in enumerate(sorted({b for c in UNICODE_SPACES for b in c.encode()})):
        cls[b] = 128 + len(bounds) + k
    return cls


STANDARD_CLASSES = _standard_classes()
NUM_STANDARD_CLASSES = int(STANDARD_CLASSES.max()) + 1
_TRIES: dict[str, Trie] = {}
# tries of grammars' own byte partitions kept: in memory per process, and on disk (the
# least recently used beyond this many are deleted; each is some 10 MB for Qwen3)
PARTITION_TRIES_KEPT = 8


def standard_trie(vocab: Vocabulary) -> Trie:
    """The trie over STANDARD_CLASSES: the same for every grammar, so it is cached per
    vocabulary, in memory and in the on-disk cache."""
    key = f"{vocab.fingerprint}-std{NUM_STANDARD_CLASSES}-v5"
    return _cached_trie(key, lambda: build_trie(vocab, STANDARD_CLASSES, NUM_STANDARD_CLASSES))


def partition_trie(vocab: Vocabulary, byte_class: np.ndarray, num_classes: int) -> Trie:
    """The trie over a grammar's own byte classes, for a grammar that splits bytes finer than
    STANDARD_CLASSES (any non-ASCII literal in an enum, const or pattern does): cached like
    the standard one, keyed by the vocabulary and the class of every byte. Building one takes
    0.5 to 1.2 s on Qwen3; reading it back, some 20 ms. The PARTITION_TRIES_KEPT most
    recently used are kept."""
    import hashlib

    bc = np.ascontiguousarray(byte_class, dtype=np.int64)
    digest = hashlib.sha256(bc.tobytes() + num_classes.to_bytes(2, "little")).hexdigest()
    key = f"{vocab.fingerprint}-part{digest[:32]}-v4"
    return _cached_trie(key, lambda: build_trie(vocab, bc, num_classes), partition=True)


def _cached_trie(key: str, build, partition: bool = False) -> Trie:
    from .. import cache

    t = _TRIES.get(key)
    if t is not None:
        return t
    data = cache.read_arrays(key, kind="trie", touch=partition)
    if data is not None:
        try:
            t = _trie_from_arrays(data)
        except (KeyError, ValueError, TypeError, IndexError):
            t = None
    if t is None:
        t = build()
        cache.write_arrays(key, _trie_to_arrays(t), kind="trie")
        if partition:
            cache.prune("trie", "-part", PARTITION_TRIES_KEPT)
    if partition:       # (a snapshot of the keys: other threads may compile at once)
        parts = [k for k in list(_TRIES) if "-part" in k]
        for k in parts[:max(len(parts) - PARTITION_TRIES_KEPT + 1, 0)]:
            _TRIES.pop(k, None)
    _TRIES[key] = t
    return t


_LEVEL_FIELDS = ("lo", "hi", "end_hi", "cls", "child_start", "child_end", "submask",
                 "charlo", "charhi", "chargood")


def _trie_to_arrays(t: Trie) -> dict:
    sizes = np.array([len(a) for a in t.lo], dtype=np.int64)
    out = {"order": t.order, "chars": t.chars, "charids": t.charids,
           "level_ptr": np.concatenate([[0], np.cumsum(sizes)]),
           "root_child_end": np.array([t.root_child_end])}
    for f in _LEVEL_FIELDS:
        a = np.concatenate(getattr(t, f)) if sizes.size else np.zeros(0)
        out[f] = a.astype(np.int32) if a.dtype == np.int64 else a
    out["order"] = t.order.astype(np.int32)
    return out


def _trie_from_arrays(d: dict) -> Trie:
    ptr = d["level_ptr"]
    t = Trie(order=d["order"], lo=[], hi=[], end_hi=[], cls=[], child_start=[], child_end=[],
             submask=[], root_child_end=int(d["root_child_end"][0]), chars=d["chars"],
             charids=d["charids"])
    for f in _LEVEL_FIELDS:
        a = d[f]
        if len(a) != ptr[-1]:
            raise ValueError("inconsistent cached trie")
        setattr(t, f, [a[ptr[i]:ptr[i + 1]] for i in range(len(ptr) - 1)])
    return t


def refines(fine: np.ndarray, coarse: np.ndarray) -> bool:
    """Does every class of ``fine`` lie inside one class of ``coarse``?"""
    k = int(fine.max()) + 1
    first = np.full(k, -1, dtype=np.int64)
    first[fine[::-1]] = coarse[::-1]
    return bool(np.all(first[fine] == coarse))


