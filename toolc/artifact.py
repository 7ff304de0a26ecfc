"""The artifact file: a deterministic msgpack document, verified before it is trusted.

Runtime side: imports numpy and msgpack only.

Layout (one msgpack map)::

    {"magic": "toolc-artifact", "version": 2, "compression": "zlib",
     "body": <bin: zlib(msgpack [header, sections])>, "sha256": <bin: sha256 of body>}

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
import zlib

import msgpack
import numpy as np

from .errors import ArtifactError

MAGIC = "toolc-artifact"
FORMAT_VERSION = 2
ZLIB_LEVEL = 6
# the inflated body is never allowed to grow past this (a forged stream cannot exhaust memory)
MAX_BODY_BYTES = 1 << 30
LIST, COMPLEMENT, BITMAP = 0, 1, 2
# a forged length must not make the loader allocate more than this
MAX_FILE_BYTES = 1 << 31
MAX_LOGITS = 1 << 24          # sixteen million logits: far beyond any tokenizer
MAX_MASK_BYTES = 1 << 30      # the expanded mask matrix (distinct rows x logits / 8)
_HEADER_TYPES = {"num_states": int, "vocab_size": int, "logits_size": int, "fingerprint": str,
                 "tokenizer": str, "format": str, "tools": list, "eos_token_ids": list}
_SECTION_DTYPES = {"state_row": "<i4", "default_next": "<i4", "exc_ptr": "<i4",
                   "exc_tokens": "<i4", "exc_next": "<i4", "final": "u1"}


def num_words(logits_size: int) -> int:
    return (logits_size + 31) // 32


def _arr(a, dtype: str) -> bytes:
    return np.ascontiguousarray(a, dtype=np.dtype(dtype)).tobytes()


def _expand_runs(lo: np.ndarray, hi: np.ndarray):
    """(run index, position) of every position covered by the runs ``lo:hi``."""
    cnt = hi - lo
    rep = np.repeat(np.arange(len(lo)), cnt)
    pos = lo[rep] + (np.arange(int(cnt.sum())) - np.repeat(np.cumsum(cnt) - cnt, cnt))
    return rep, pos


def encode_index(index, wide: int = 4096) -> dict:
    """Sections from a TokenIndex (duck-typed: the runtime never imports the compiler).

    The default next state of each state (the target of most of its tokens) and the exceptions
    are computed for all states at once; mask rows are built once per distinct run list, a
    state allowing few tokens token by token, a wide one filled run by run into a dense row.
    """
    n = index.num_states
    vocab_size, words = index.vocab_size, num_words(index.logits_size)
    order = index.order
    run_state = np.repeat(np.arange(n), np.diff(index.run_ptr))
    sp_state = np.repeat(np.arange(n), np.diff(index.sp_ptr))
    run_cnt = index.run_hi - index.run_lo

    # default next state: the target with the most tokens (ties: the smallest state)
    st_all = np.concatenate([run_state, sp_state]).astype(np.int64)
    tg_all = np.concatenate([index.run_target, index.sp_targets]).astype(np.int64)
    w_all = np.concatenate([run_cnt, np.ones(len(sp_state), np.int64)])
    keys, inv = np.unique(st_all * (n + 1) + tg_all, return_inverse=True)
    weight = np.bincount(inv.reshape(-1), weights=w_all)
    k_state, k_target = keys // (n + 1), keys % (n + 1)
    best = np.lexsort((k_target, -weight, k_state))
    first = np.ones(len(best), dtype=bool)
    first[1:] = k_state[best][1:] != k_state[best][:-1]
    default = np.full(n, -1, dtype=np.int64)
    default[k_state[best][first]] = k_target[best][first]

    # exceptions: allowed tokens whose target is not the default, sorted by (state, token)
    off = index.run_target != default[run_state]
    rep, pos = _expand_runs(index.run_lo[off], index.run_hi[off])
    sp_off = index.sp_targets != default[sp_state]
    e_state = np.concatenate([run_state[off][rep], sp_state[sp_off]])
    e_tok = np.concatenate([order[pos], index.sp_tokens[sp_off]])
    e_next = np.concatenate([index.run_target[off][rep], index.sp_targets[sp_off]])
    k = np.lexsort((e_tok, e_state))
    e_state, e_tok, e_next = e_state[k], e_tok[k], e_next[k]
    exc_ptr = np.searchsorted(e_state, np.arange(n + 1))

    # mask rows, deduplicated by run list first (cheap) and then by content
    row_of: dict[bytes, int] = {}
    by_runs: dict[bytes, int] = {}
    rows: list = []
    state_row = np.zeros(n, dtype=np.int32)
    rp, sp = index.run_ptr, index.sp_ptr
    for q in range(n):
        lo, hi = index.run_lo[rp[q]:rp[q + 1]], index.run_hi[rp[q]:rp[q + 1]]
        st = index.sp_tokens[sp[q]:sp[q + 1]]
        sig = lo.tobytes() + b"|" + hi.tobytes() + b"|" + st.tobytes()
        r = by_runs.get(sig)
        if r is None:
            total = int((hi - lo).sum())
            if total <= wide:
                toks = np.sort(np.concatenate([order[_expand_runs(lo, hi)[1]], st]))
            else:
                diff = np.zeros(len(order) + 1, dtype=np.int64)
                np.add.at(diff, lo, 1)
                np.add.at(diff, hi, -1)
                dense = np.zeros(words * 32, dtype=bool)
                dense[order[np.cumsum(diff[:-1]) > 0]] = True
                dense[st] = True
                toks = np.flatnonzero(dense)
            r = by_runs[sig] = _intern(row_of, rows, toks, vocab_size, words)
        state_row[q] = r
    return {
        "state_row": _arr(state_row, "<i4"),
        "rows": rows,
        "default_next": _arr(default, "<i4"),
        "exc_ptr": _arr(exc_ptr, "<i4"),
        "exc_tokens": _arr(e_tok, "<i4"),
        "exc_next": _arr(e_next, "<i4"),
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
    body = zlib.compress(msgpack.packb([header, sections], use_bin_type=True), ZLIB_LEVEL)
    return msgpack.packb({"magic": MAGIC, "version": FORMAT_VERSION, "compression": "zlib",
                          "body": body, "sha256": hashlib.sha256(body).digest()},
                         use_bin_type=True)


def unpack(data: bytes, source: str = "artifact") -> tuple[dict, dict]:
    """Verify and decode an artifact file's bytes; raise ArtifactError on any damage."""
    if len(data) > MAX_FILE_BYTES:
        raise ArtifactError(f"{source}: {len(data):,} bytes is larger than any artifact")
    try:
        outer = msgpack.unpackb(data, raw=False, max_bin_len=len(data), max_str_len=1 << 16,
                                max_array_len=16, max_map_len=16, strict_map_key=True)
    except Exception as e:  # msgpack raises several kinds for damaged input
        what = "truncated or damaged" if "incomplete" in str(e).lower() else "damaged"
        raise ArtifactError(f"{source}: {what} artifact, or not a toolc artifact "
                            f"(unreadable msgpack: {e})") from None
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
    if outer.get("compression") != "zlib":
        raise ArtifactError(f"{source}: unknown compression {outer.get('compression')!r}")
    try:
        inflater = zlib.decompressobj()
        body = inflater.decompress(body, MAX_BODY_BYTES)
        if inflater.unconsumed_tail or not inflater.eof:
            raise ValueError("the body does not inflate within the size limit")
    except (zlib.error, ValueError) as e:
        raise ArtifactError(f"{source}: damaged artifact body ({e})") from None
    try:
        # every length is bounded by the body's size, and extension types are refused, so a
        # forged length cannot make msgpack allocate more than the file holds
        header, sections = msgpack.unpackb(
            body, raw=False, strict_map_key=True, max_bin_len=len(body), max_str_len=len(body),
            max_array_len=len(body), max_map_len=len(body), max_ext_len=0)
    except Exception as e:
        raise ArtifactError(f"{source}: damaged artifact body ({type(e).__name__})") from None
    return header, sections


def decode_sections(header: dict, sections: dict, source: str = "artifact") -> dict:
    """The arrays the runtime uses, with every size checked against the header."""
    _check_header(header, source)
    try:
        n = int(header["num_states"])
        logits_size = int(header["logits_size"])
        vocab_size = int(header["vocab_size"])
        out = {k: np.frombuffer(sections[k], dtype=np.dtype(dt)) for k, dt in
               _SECTION_DTYPES.items()}
        raw_rows = sections["rows"]
        if not isinstance(raw_rows, list):
            raise TypeError("rows")
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
    if R > max(n, 1) or R * words * 4 > MAX_MASK_BYTES:
        raise ArtifactError(f"{source}: damaged artifact ({R:,} mask rows for {n:,} states "
                            f"would take {R * words * 4:,} bytes)")
    sr, ep = out["state_row"], out["exc_ptr"]
    if n and (sr.min() < 0 or sr.max() >= R) or (ep[0] != 0 if n + 1 else False) \
            or np.any(np.diff(ep) < 0) or ep[-1] != len(out["exc_tokens"]):
        raise ArtifactError(f"{source}: damaged artifact (inconsistent tables)")
    for k in ("default_next", "exc_next"):
        a = out[k]
        if len(a) and (a.min() < -1 or a.max() >= n):
            raise ArtifactError(f"{source}: damaged artifact (state out of range in {k})")
    et = out["exc_tokens"]
    if len(et):
        # each state's exceptions are distinct tokens in increasing order (advance bisects)
        step_ok = np.diff(et.astype(np.int64)) > 0
        step_ok[ep[1:-1][(ep[1:-1] > 0) & (ep[1:-1] < len(et))] - 1] = True
        if et.min() < 0 or et.max() >= logits_size or not step_ok.all():
            raise ArtifactError(f"{source}: damaged artifact (exception tokens out of order "
                                "or out of range)")
    masks = np.zeros((R, words), dtype=np.uint32)
    blobs = {LIST: [], COMPLEMENT: []}     # per kind: (row, bytes)
    row_ids: dict[int, tuple] = {}
    for r, item in enumerate(raw_rows):
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[1], bytes)
                and len(item[1]) % 4 == 0):
            raise ArtifactError(f"{source}: damaged artifact (mask row {r})")
        kind, blob = item
        if kind == BITMAP:
            if len(blob) != words * 4:
                raise ArtifactError(f"{source}: damaged artifact (mask row {r} size)")
            masks[r] = np.frombuffer(blob, dtype="<u4")
        elif kind in blobs:
            blobs[kind].append((r, blob))
        else:
            raise ArtifactError(f"{source}: damaged artifact (mask row {r} kind {kind!r})")
    for kind, limit in ((LIST, logits_size), (COMPLEMENT, vocab_size)):
        if not blobs[kind]:
            continue
        rows_of = np.repeat(np.array([r for r, _ in blobs[kind]], dtype=np.int64),
                            np.array([len(b) // 4 for _, b in blobs[kind]], dtype=np.int64))
        ids = np.frombuffer(b"".join(b for _, b in blobs[kind]), dtype="<i4").astype(np.int64)
        bad = (ids < 0) | (ids >= limit)
        if bad.any():
            r = int(rows_of[np.argmax(bad)])
            raise ArtifactError(f"{source}: damaged artifact (token out of range, row {r})")
        # per row: the ids it allows (LIST) or forbids (COMPLEMENT), for apply_mask
        ends = np.cumsum([len(b) // 4 for _, b in blobs[kind]])
        for (r, _), lo, hi in zip(blobs[kind], np.concatenate([[0], ends[:-1]]), ends):
            row_ids[r] = (kind, ids[lo:hi])
        if kind == LIST:
            _set_bits(masks, rows_of, ids)
        else:
            comp_rows = [r for r, _ in blobs[kind]]
            full = np.zeros(words * 32, dtype=bool)
            full[:vocab_size] = True
            masks[comp_rows] = np.frombuffer(np.packbits(full, bitorder="little").tobytes(),
                                             "<u4")
            np.bitwise_and.at(masks, (rows_of, ids >> 5),
                              ~(np.uint32(1) << (ids & 31).astype(np.uint32)))
    out["masks"] = masks.view(np.int32)
    out["row_ids"] = row_ids
    return out


def _check_header(header: dict, source: str) -> None:
    """Refuse a header whose fields have the wrong types or impossible sizes."""
    for key, typ in _HEADER_TYPES.items():
        v = header.get(key)
        if not isinstance(v, typ) or isinstance(v, bool):
            raise ArtifactError(f"{source}: damaged artifact (header field {key!r} is "
                                f"{type(v).__name__}, expected {typ.__name__})")
    n, vocab, logits = header["num_states"], header["vocab_size"], header["logits_size"]
    if not (0 < n and 0 <= vocab <= logits <= MAX_LOGITS):
        raise ArtifactError(f"{source}: damaged artifact (impossible sizes: {n} states, "
                            f"{vocab} tokens, {logits} logits)")
    eos = header["eos_token_ids"]
    if not all(isinstance(t, int) and not isinstance(t, bool) and 0 <= t < logits for t in eos):
        raise ArtifactError(f"{source}: damaged artifact (EOS token ids out of range)")
    if not all(isinstance(t, str) for t in header["tools"]):
        raise ArtifactError(f"{source}: damaged artifact (tool names)")


def _set_bits(masks: np.ndarray, rows: np.ndarray, toks: np.ndarray) -> None:
    np.bitwise_or.at(masks, (rows, toks >> 5), np.uint32(1) << (toks & 31).astype(np.uint32))


def write_atomic(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temp file in the same folder and a rename."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".toolc-", suffix=".tmp", dir=folder)
    umask = os.umask(0)
    os.umask(umask)
    try:
        os.fchmod(fd, 0o666 & ~umask)
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
