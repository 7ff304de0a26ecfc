"""The artifact file: a deterministic msgpack document, verified before it is trusted.

Runtime side: imports numpy and msgpack only.

Layout (one msgpack map)::

    {"magic": "toolc-artifact", "version": 1,
     "body": <bin: msgpack [header, sections]>, "sha256": <bin: sha256 of body>}

``sections`` holds, for ``n`` states and ``R`` distinct mask rows:

    state_row     int32[n]      the mask row of each state
    rows          [[kind, bin]] each distinct allowed-token set, stored the smallest way:
                                0 = sorted int32 ids, 1 = sorted int32 ids of the tokenizer's
                                range that are *not* allowed, 2 = int32 bit words
    default_next  int32[n]      the most frequent next state of each state (-1: none)
    exc_ptr       int32[n + 1]  state q's exceptions are exc_ptr[q]:exc_ptr[q+1]
    exc_tokens    int32[...]    allowed tokens whose next state is not the default, sorted
    exc_next      int32[...]    their next states
    final         uint8[n]      1 where EOS has been consumed

Every array is little-endian. The bit layout of a mask row is xgrammar's: token ``t`` is
allowed iff bit ``t % 32`` of word ``t // 32`` is set.
"""

from __future__ import annotations

import hashlib
import os
import tempfile

import msgpack
import numpy as np

from .errors import ArtifactError

MAGIC = "toolc-artifact"
FORMAT_VERSION = 1
LIST, COMPLEMENT, BITMAP = 0, 1, 2
# a forged length must not make the loader allocate more than this
MAX_FILE_BYTES = 1 << 31
_SECTION_DTYPES = {"state_row": "<i4", "default_next": "<i4", "exc_ptr": "<i4",
                   "exc_tokens": "<i4", "exc_next": "<i4", "final": "u1"}


def num_words(logits_size: int) -> int:
    return (logits_size + 31) // 32


def _arr(a, dtype: str) -> bytes:
    return np.ascontiguousarray(a, dtype=np.dtype(dtype)).tobytes()


def encode_index(index, wide: int = 4096) -> dict:
    """Sections from a TokenIndex (duck-typed: the runtime never imports the compiler).

    A state allowing few tokens is expanded token by token; a wide one is filled run by run
    into a dense row, so no step costs more than O(vocabulary) per wide state.
    """
    n = index.num_states
    vocab_size, words = index.vocab_size, num_words(index.logits_size)
    order = index.order
    row_of: dict[bytes, int] = {}
    rows = []
    state_row = np.zeros(n, dtype=np.int32)
    default = np.full(n, -1, dtype=np.int32)
    exc_ptr = np.zeros(n + 1, dtype=np.int64)
    exc_tok, exc_nxt = [], []
    for q in range(n):
        r0, r1 = index.run_ptr[q], index.run_ptr[q + 1]
        lo, hi, rt = index.run_lo[r0:r1], index.run_hi[r0:r1], index.run_target[r0:r1]
        s0, s1 = index.sp_ptr[q], index.sp_ptr[q + 1]
        st, sg = index.sp_tokens[s0:s1], index.sp_targets[s0:s1]
        cnt = hi - lo
        total = int(cnt.sum())
        if total + len(st) == 0:
            toks = np.zeros(0, np.int64)
            state_row[q] = _intern(row_of, rows, toks, vocab_size, words)
            exc_ptr[q + 1] = exc_ptr[q]
            continue
        # the default next state: the target of most tokens (ties: the smallest state)
        tg_all = np.concatenate([rt, sg])
        w_all = np.concatenate([cnt, np.ones(len(sg), np.int64)])
        vals, inv = np.unique(tg_all, return_inverse=True)
        weights = np.bincount(inv.reshape(-1), weights=w_all)
        d = int(vals[int(np.argmax(weights))])
        default[q] = d
        if total <= wide:
            rep = np.repeat(np.arange(len(lo)), cnt)
            pos = lo[rep] + (np.arange(total) - np.repeat(np.cumsum(cnt) - cnt, cnt))
            toks = np.concatenate([order[pos], st])
            tg = np.concatenate([rt[rep], sg])
            k = np.argsort(toks, kind="stable")
            toks, tg = toks[k], tg[k]
            state_row[q] = _intern(row_of, rows, toks, vocab_size, words)
            keep = tg != d
            et, en = toks[keep], tg[keep]
        else:
            diff = np.zeros(len(order) + 1, dtype=np.int64)
            np.add.at(diff, lo, 1)
            np.add.at(diff, hi, -1)
            by_pos = np.cumsum(diff[:-1]) > 0
            dense = np.zeros(words * 32, dtype=bool)
            dense[order[by_pos]] = True
            dense[st] = True
            state_row[q] = _intern(row_of, rows, np.flatnonzero(dense), vocab_size, words)
            off = rt != d
            lo2, hi2, rt2 = lo[off], hi[off], rt[off]
            c2 = hi2 - lo2
            rep = np.repeat(np.arange(len(lo2)), c2)
            pos = lo2[rep] + (np.arange(int(c2.sum())) - np.repeat(np.cumsum(c2) - c2, c2))
            keep = sg != d
            et = np.concatenate([order[pos], st[keep]])
            en = np.concatenate([rt2[rep], sg[keep]])
            k = np.argsort(et, kind="stable")
            et, en = et[k], en[k]
        exc_tok.append(et)
        exc_nxt.append(en)
        exc_ptr[q + 1] = exc_ptr[q] + len(et)
    cat = (lambda xs: np.concatenate(xs) if xs else np.zeros(0, np.int32))
    return {
        "state_row": _arr(state_row, "<i4"),
        "rows": rows,
        "default_next": _arr(default, "<i4"),
        "exc_ptr": _arr(exc_ptr, "<i4"),
        "exc_tokens": _arr(cat(exc_tok), "<i4"),
        "exc_next": _arr(cat(exc_nxt), "<i4"),
        "final": _arr(index.final, "u1"),
    }


def _intern(row_of: dict, rows: list, toks: np.ndarray, vocab_size: int, words: int) -> int:
    key = b"L" + np.ascontiguousarray(toks, dtype="<i4").tobytes()
    r = row_of.get(key)
    if r is None:
        r = row_of[key] = len(rows)
        rows.append(_encode_row(toks, vocab_size, words))
    return r


def _encode_row(toks: np.ndarray, vocab_size: int, words: int) -> list:
    in_vocab = int((toks < vocab_size).sum())
    n_list = len(toks) * 4
    n_comp = (vocab_size - in_vocab + (len(toks) - in_vocab)) * 4
    n_bits = words * 4
    best = min(n_list, n_comp, n_bits)
    if best == n_list:
        return [LIST, _arr(toks, "<i4")]
    if best == n_comp and in_vocab == len(toks):
        allowed = np.zeros(vocab_size, dtype=bool)
        allowed[toks] = True
        return [COMPLEMENT, _arr(np.flatnonzero(~allowed), "<i4")]
    bits = np.zeros(words * 32, dtype=bool)
    bits[toks] = True
    return [BITMAP, np.packbits(bits, bitorder="little").tobytes()]


def pack(header: dict, sections: dict) -> bytes:
    body = msgpack.packb([header, sections], use_bin_type=True)
    return msgpack.packb({"magic": MAGIC, "version": FORMAT_VERSION, "body": body,
                          "sha256": hashlib.sha256(body).digest()}, use_bin_type=True)


def unpack(data: bytes, source: str = "artifact") -> tuple[dict, dict]:
    """Verify and decode an artifact file's bytes; raise ArtifactError on any damage."""
    if len(data) > MAX_FILE_BYTES:
        raise ArtifactError(f"{source}: {len(data):,} bytes is larger than any artifact")
    try:
        outer = msgpack.unpackb(data, raw=False, max_bin_len=len(data), max_str_len=1 << 16,
                                max_array_len=16, max_map_len=16, strict_map_key=True)
    except Exception as e:  # msgpack raises several kinds for damaged input
        raise ArtifactError(f"{source}: not a toolc artifact (unreadable msgpack: "
                            f"{type(e).__name__})") from None
    if not isinstance(outer, dict) or outer.get("magic") != MAGIC:
        raise ArtifactError(f"{source}: not a toolc artifact (bad magic)")
    if outer.get("version") != FORMAT_VERSION:
        raise ArtifactError(f"{source}: artifact format version {outer.get('version')!r}, but "
                            f"this toolc reads version {FORMAT_VERSION}; recompile it")
    body, digest = outer.get("body"), outer.get("sha256")
    if not isinstance(body, bytes) or not isinstance(digest, bytes):
        raise ArtifactError(f"{source}: damaged artifact (missing body or checksum)")
    if hashlib.sha256(body).digest() != digest:
        raise ArtifactError(f"{source}: damaged artifact (checksum mismatch)")
    try:
        header, sections = msgpack.unpackb(body, raw=False, max_bin_len=len(body),
                                           strict_map_key=True)
    except Exception as e:
        raise ArtifactError(f"{source}: damaged artifact body ({type(e).__name__})") from None
    return header, sections


def decode_sections(header: dict, sections: dict, source: str = "artifact") -> dict:
    """The arrays the runtime uses, with every size checked against the header."""
    try:
        n = int(header["num_states"])
        logits_size = int(header["logits_size"])
        vocab_size = int(header["vocab_size"])
        out = {k: np.frombuffer(sections[k], dtype=np.dtype(dt)) for k, dt in
               _SECTION_DTYPES.items()}
        raw_rows = sections["rows"]
    except (KeyError, TypeError, ValueError) as e:
        raise ArtifactError(f"{source}: damaged artifact (section {e})") from None
    words = num_words(logits_size)
    expect = {"state_row": n, "default_next": n, "exc_ptr": n + 1, "final": n,
              "exc_next": len(out["exc_tokens"])}
    for k, size in expect.items():
        if len(out[k]) != size:
            raise ArtifactError(f"{source}: damaged artifact (section {k} has {len(out[k])} "
                                f"entries, expected {size})")
    R = len(raw_rows)
    sr, ep = out["state_row"], out["exc_ptr"]
    if n and (sr.min() < 0 or sr.max() >= R) or (ep[0] != 0 if n + 1 else False) \
            or np.any(np.diff(ep) < 0) or ep[-1] != len(out["exc_tokens"]):
        raise ArtifactError(f"{source}: damaged artifact (inconsistent tables)")
    for k in ("default_next", "exc_next"):
        a = out[k]
        if len(a) and (a.min() < -1 or a.max() >= n):
            raise ArtifactError(f"{source}: damaged artifact (state out of range in {k})")
    masks = np.zeros((R, words), dtype=np.uint32)
    list_r, list_t, comp_r, comp_t, comp_rows = [], [], [], [], []
    for r, item in enumerate(raw_rows):
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[1], bytes)):
            raise ArtifactError(f"{source}: damaged artifact (mask row {r})")
        kind, blob = item
        if kind == BITMAP:
            if len(blob) != words * 4:
                raise ArtifactError(f"{source}: damaged artifact (mask row {r} size)")
            masks[r] = np.frombuffer(blob, dtype="<u4")
        elif kind in (LIST, COMPLEMENT):
            ids = np.frombuffer(blob, dtype="<i4")
            limit = logits_size if kind == LIST else vocab_size
            if len(ids) and (ids.min() < 0 or ids.max() >= limit):
                raise ArtifactError(f"{source}: damaged artifact (token out of range, row {r})")
            if kind == COMPLEMENT:
                comp_rows.append(r)
            (list_r if kind == LIST else comp_r).append(np.full(len(ids), r))
            (list_t if kind == LIST else comp_t).append(ids)
        else:
            raise ArtifactError(f"{source}: damaged artifact (mask row {r} kind {kind!r})")
    if list_r:
        _set_bits(masks, np.concatenate(list_r), np.concatenate(list_t))
    if comp_rows:
        full = np.zeros(words * 32, dtype=bool)
        full[:vocab_size] = True
        masks[comp_rows] = np.frombuffer(np.packbits(full, bitorder="little").tobytes(), "<u4")
        rr, tt = np.concatenate(comp_r), np.concatenate(comp_t)
        np.bitwise_and.at(masks, (rr, tt >> 5), ~(np.uint32(1) << (tt & 31).astype(np.uint32)))
    out["masks"] = masks.view(np.int32)
    return out


def _set_bits(masks: np.ndarray, rows: np.ndarray, toks: np.ndarray) -> None:
    np.bitwise_or.at(masks, (rows, toks >> 5), np.uint32(1) << (toks & 31).astype(np.uint32))


def write_atomic(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temp file in the same folder and a rename."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".toolc-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def build_artifact(header: dict, index):
    """An in-memory Artifact from a header and a TokenIndex (compiler side entry point)."""
    from .runtime import Artifact
    sections = encode_index(index)
    return Artifact.from_parts(header, sections, source="<compiled>")
