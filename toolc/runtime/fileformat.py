"""The ``.toolc`` file format, serving side: write, read, verify and decode an artifact.

Standard library, numpy and msgpack only (the runtime imports this; the compiler's encoder,
:mod:`toolc.encode`, writes the sections).


Layout (one msgpack map)::

    {"magic": "toolc-artifact", "version": 3, 4 or 6, "compression": "zlib",
     "body": <bin: zlib(msgpack [header, sections])>, "sha256": <bin: sha256 of body>}

``sections`` maps names to little-endian arrays. For ``n`` states, ``C`` transition classes
and ``R`` distinct mask rows:

    state_class   int32[n]      the transition class of each state
    default_next  int32[n]      where an allowed token that is not an exception leads (-1: none)
    tgt_ptr       int32[n + 1]  state q's exception targets are tgt[tgt_ptr[q]:tgt_ptr[q+1]]
    tgt           int32[...]    exception code k of state q leads to tgt[tgt_ptr[q] + k - 1]
    final         uint8[n]      1 where EOS has been consumed
    class_row     int32[C]      the mask row of each class
    exc_ptr       int32[C + 1]  class c's exceptions are exc_ptr[c]:exc_ptr[c+1]
    exc_tokens    int32[...]    allowed tokens that do not lead to the default, sorted per class
    exc_code      int32[...]    their codes, 1-based (0 in a patch: see class_base)
    row_kind      uint8[R]      how each row is stored: 0 = sorted ids of the allowed tokens,
                                1 = sorted ids of the tokenizer's range that are *not* allowed,
                                2 = int32 bit words, 3 = an earlier row of another kind (its
                                index first) and the sorted ids where this row differs
    row_ptr       int32[R + 1]  row r is row_data[row_ptr[r]:row_ptr[r+1]]
    row_data      int32[...]
    class_base    int32[C]      versions 4, 6 and 7: the earlier class each class derives
                                from, or -1. A derived class's exceptions are its base's
                                entries whose tokens its own row allows, with the base's codes
                                (the base is never derived itself), and its states' target
                                lists cover every code of the base. In version 7 it may store
                                entries, a patch: those with a code join its exceptions, and
                                their tokens leave the base's (code 0: leads to the default)

A class is a mask row plus a pattern of exceptions whose targets are named by code, not by
state. All string interiors of a tool set, for instance, allow the same tokens and leave the
string on the same tokens; they differ only in where a closing quote leads. So the exception
tokens are stored once per class (tools80: 1,704 classes for 17,177 states, 36k exception
entries instead of 608k) and each state keeps only its short list of targets.

A bounded string (``maxLength``) is a chain of states, one per character position, whose
tokens lead by length to the positions after it: 100k+ exceptions per class. The positions
near the bound allow fewer lengths, so each has a class of its own, which repeats most of a
longer one's exceptions. Such a class is stored as derived from the longer one (version 4):
maxLength 100 goes from 11M exception entries and 22.5 MB to 379k entries and 1.2 MB. The
runtime reads a derived class's exceptions from its base (the base's exception flags masked
by the derived row), so loading takes 0.05 s and 150 MB where the expanded 11M entries took
1.15 s and 1.1 GB. A file without derived classes is written as version 3, byte for byte as
before.

Version 5 added counted regions (``cnt_*`` sections: a bounded string built once, unbounded,
plus a counter); version 6 stores their per-token character counts more tightly (64 KB over
an unbounded string for Qwen3, was 91 KB), specified and decoded in
:mod:`toolc.runtime.countfile`. Version 5 files are no longer read: recompile them.

Version 7 (with or without counted regions) patches classes: with hermes' closed strings,
each state inside a partly written ``</tool_call>`` has its string's class plus a few
changes, and stored its 1,700 exceptions again (87% of a request's entries). It is written
only when a class is patched (:mod:`toolc.encode_patch`, :mod:`toolc.runtime.derived`).

The bit layout of a mask row is xgrammar's: token ``t`` is allowed iff bit ``t % 32`` of word
``t // 32`` is set.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import zlib

import msgpack
import numpy as np

from ..errors import ArtifactError
from . import limits
from .arrays import expand_runs, or_words, typed_sections
from .derived import check_derived, patched_classes
from .countfile import COUNTED_SECTIONS, decode_counted
from .itemfile import INNER_ITEM_SECTIONS, ITEM_SECTIONS, decode_items
from .runfile import RUN_SECTIONS, decode_runs
from .limits import BITMAP, COMPLEMENT, DELTA, LIST

MAGIC = "toolc-artifact"
FORMAT_VERSION = 3
# version 4 is version 3 plus a ``class_base`` section (classes derived from earlier ones);
# a file is written as version 4 only when it has derived classes
DERIVED_VERSION = 4
# version 6 has counted regions (``cnt_*``/``itm_*`` sections, see
# :mod:`toolc.runtime.countfile`); a file is written as version 6 only when it has them.
# Version 5 (the same, with the character counts stored byte per token) is not read.
COUNTED_VERSION = 6
# version 7: derived classes may store a patch (counted regions or not); written only then
PATCHED_VERSION = 7
READ_VERSIONS = (FORMAT_VERSION, DERIVED_VERSION, COUNTED_VERSION, PATCHED_VERSION)
ZLIB_LEVEL = 6
# a body larger than this is compressed at level 1: a bounded string's 92 MB body (maxLength
# 100) took 6.4 s at level 6 and takes 0.9 s at level 1, for a file 7.5% larger (24.2 MB
# against 22.5); every tool set of schemas/ is far below it (tools80: 0.9 MB)
ZLIB_FAST_ABOVE = 8 << 20
# the inflated body is never allowed to grow past this (a forged stream cannot exhaust memory)
MAX_BODY_BYTES = 1 << 30
# a forged length must not make the loader allocate more than this
MAX_FILE_BYTES = 1 << 31
MAX_LOGITS = 1 << 24          # sixteen million logits: far beyond any tokenizer
MAX_MASK_BYTES = 1 << 30      # the expanded mask matrix (distinct rows x logits / 8)
_HEADER_TYPES = {"num_states": int, "vocab_size": int, "logits_size": int, "fingerprint": str,
                 "tokenizer": str, "format": str, "tools": list, "eos_token_ids": list}
# header fields that may be absent, with the types they must have when present
_OPTIONAL_TYPES = {"toolc_version": str, "tools_hash": str, "options": dict, "byte_classes": int,
                   "special_tokens": dict, "compile_seconds": (int, float, type(None)),
                   "not_enforced": list, "notices": list, "format_spec": dict}
# a header is JSON-like: str keys, no bytes, nested at most this deep
_HEADER_DEPTH = 16
_SECTION_DTYPES = {"state_class": "<i4", "default_next": "<i4", "tgt_ptr": "<i4", "tgt": "<i4",
                   "final": "u1", "class_row": "<i4", "exc_ptr": "<i4", "exc_tokens": "<i4",
                   "exc_code": "<i4", "row_kind": "u1", "row_ptr": "<i4", "row_data": "<i4"}
# sections a file may have besides those (a new section is named here and priced in limits)
_OPTIONAL_SECTIONS = {"class_base": "<i4", **COUNTED_SECTIONS, **ITEM_SECTIONS,
                      **INNER_ITEM_SECTIONS, **RUN_SECTIONS}
_ITEMSIZE = {k: np.dtype(v).itemsize for k, v in {**_SECTION_DTYPES, **_OPTIONAL_SECTIONS}.items()}


def _counted(sections: dict) -> bool:
    """Whether a file has counted regions (strings' ``cnt_*`` or arrays' ``itm_*``)."""
    return "cnt_tag" in sections or "itm_tag" in sections or "run_tag" in sections


def num_words(logits_size: int) -> int:
    return (logits_size + 31) // 32


def pack(header: dict, sections: dict) -> bytes:
    raw = msgpack.packb([header, sections], use_bin_type=True)
    body = zlib.compress(raw, ZLIB_LEVEL if len(raw) <= ZLIB_FAST_ABOVE else 1)
    version = PATCHED_VERSION if patched_classes(sections) else COUNTED_VERSION \
        if _counted(sections) else DERIVED_VERSION if "class_base" in sections else \
        FORMAT_VERSION
    return msgpack.packb({"magic": MAGIC, "version": version, "compression": "zlib",
                          "body": body, "sha256": hashlib.sha256(body).digest()},
                         use_bin_type=True)


def unpack(data: bytes, source: str = "artifact") -> tuple[dict, dict]:
    """Verify and decode an artifact file's bytes; raise ArtifactError on any damage."""
    if len(data) > MAX_FILE_BYTES:
        raise ArtifactError(f"{source}: {len(data):,} bytes is larger than any artifact")
    reader = msgpack.Unpacker(raw=False, max_buffer_size=max(len(data), 1),
                              max_bin_len=len(data), max_str_len=1 << 16, max_array_len=16,
                              max_map_len=16, strict_map_key=True)
    reader.feed(data)
    try:
        outer = reader.unpack()
        if reader.tell() != len(data):
            raise ValueError(f"{len(data) - reader.tell():,} bytes after the artifact")
    except msgpack.OutOfData:       # the data ends inside the document
        raise ArtifactError(f"{source}: truncated or damaged artifact, or not a toolc artifact "
                            "(unreadable msgpack: the data ends early)") from None
    except Exception as e:  # msgpack raises several kinds for damaged input
        raise ArtifactError(f"{source}: damaged artifact, or not a toolc artifact "
                            f"(unreadable msgpack: {e})") from None
    if not isinstance(outer, dict) or outer.get("magic") != MAGIC:
        raise ArtifactError(f"{source}: not a toolc artifact (bad magic)")
    version = outer.get("version")
    if type(version) is not int or version not in READ_VERSIONS:
        raise ArtifactError(f"{source}: artifact format version {version!r}, but this toolc "
                            f"reads versions {', '.join(map(str, READ_VERSIONS))}; "
                            "recompile it")
    body, digest = outer.get("body"), outer.get("sha256")
    if not isinstance(body, bytes) or not isinstance(digest, bytes):
        raise ArtifactError(f"{source}: damaged artifact (missing body or checksum)")
    if hashlib.sha256(body).digest() != digest:
        raise ArtifactError(f"{source}: damaged artifact (checksum mismatch)")
    if outer.get("compression") != "zlib":
        raise ArtifactError(f"{source}: unknown compression {outer.get('compression')!r}")
    try:
        inflater = zlib.decompressobj()
        body = inflater.decompress(body, min(MAX_BODY_BYTES, limits.max_body_bytes(len(data))))
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
    if isinstance(sections, dict) and patched_classes(sections) != (version == PATCHED_VERSION):
        raise ArtifactError(f"{source}: damaged artifact (format version {version} "
                            f"{'without' if version == PATCHED_VERSION else 'with'} patched "
                            "classes)")
    if version == PATCHED_VERSION:
        return header, sections
    if isinstance(sections, dict) and _counted(sections) != (version == COUNTED_VERSION):
        raise ArtifactError(f"{source}: damaged artifact (format version {version} "
                            f"{'without' if version == COUNTED_VERSION else 'with'} counted "
                            "regions)")
    if isinstance(sections, dict) and version != COUNTED_VERSION and \
            ("class_base" in sections) != (version == DERIVED_VERSION):
        raise ArtifactError(f"{source}: damaged artifact (format version {version} "
                            f"{'without' if version == DERIVED_VERSION else 'with'} derived "
                            "classes)")
    return header, sections


def decode_sections(header: dict, sections: dict, source: str = "artifact",
                    checked: bool = True) -> dict:
    """The arrays the runtime uses, with every size, range and order checked, and the
    distinct mask rows expanded into one matrix (``masks``, int32[R, words]).

    ``checked=False`` is for sections the encoder has just made in this process (never a
    file's): the same arrays, without the checks of sizes, ranges, order and consistency,
    which cost 2 to 3 ms of a request's compile (tests decode every compiled set both ways
    and compare). The size limits are still applied."""
    if checked:
        _check_header(header, source)

    def damaged(what: str):
        return ArtifactError(f"{source}: damaged artifact ({what})")

    unknown = [k for k in sections if k not in _ITEMSIZE]
    if unknown:
        raise damaged(f"unknown section {unknown[0]!r}")
    body_bytes = sum(len(v) for v in sections.values() if isinstance(v, bytes))
    limits.check("decode", limits.section_sizes(header, sections, _ITEMSIZE), body_bytes,
                 int(header["logits_size"]), source)

    n = int(header["num_states"])
    logits_size = int(header["logits_size"])
    vocab_size = int(header["vocab_size"])
    out = typed_sections(sections, _SECTION_DTYPES, damaged)
    words = num_words(logits_size)
    C, R = len(out["class_row"]), len(out["row_kind"])
    expect = {"state_class": n, "default_next": n, "tgt_ptr": n + 1, "final": n,
              "exc_ptr": C + 1, "exc_code": len(out["exc_tokens"]), "row_ptr": R + 1}
    for k, size in expect.items():
        if checked and len(out[k]) != size:
            raise damaged(f"section {k} has {len(out[k])} entries, expected {size}")
    if R > max(n, 1) or C > max(n, 1) or R * words * 4 > MAX_MASK_BYTES:
        raise damaged(f"{R:,} mask rows for {n:,} states would take {R * words * 4:,} bytes")
    for p, data in (("tgt_ptr", "tgt"), ("exc_ptr", "exc_tokens"), ("row_ptr", "row_data")):
        if not checked:
            break
        ptr = out[p]
        if ptr[0] != 0 or ptr[-1] != len(out[data]) or np.any(ptr[1:] < ptr[:-1]):
            raise damaged(f"inconsistent {p}")
    for k, lo, hi in (("state_class", 0, C), ("class_row", 0, R), ("default_next", -1, n),
                      ("tgt", 0, n), ("exc_tokens", 0, logits_size), ("exc_code", 0, n + 1)):
        a = out[k]
        if checked and len(a) and (a.min() < lo or a.max() >= hi):
            raise damaged(f"value out of range in {k}")

    # mask rows
    kind, row_ptr, row_data = out["row_kind"], out["row_ptr"].astype(np.int64), out["row_data"]
    lens = np.diff(row_ptr)
    if checked and len(kind) and kind.max() > DELTA:
        raise damaged(f"mask row {int(np.argmax(kind > DELTA))} kind {int(kind.max())}")
    if checked and np.any(lens[kind == BITMAP] != words):
        raise damaged(f"mask row {int(np.flatnonzero((kind == BITMAP) & (lens != words))[0])} "
                      "size")
    masks = np.zeros((R, words), dtype=np.uint32)
    flat = masks.reshape(-1)
    count = np.zeros(R, dtype=np.int64)
    eos = np.unique(np.array(header["eos_token_ids"], dtype=np.int64))
    row_eos = np.zeros(R, dtype=bool)       # the row allows an EOS token
    row_only = np.full(R, -1, dtype=np.int64)       # the one token a row allows, if one
    for kd, limit in ((LIST, logits_size), (COMPLEMENT, vocab_size)):
        rows = np.flatnonzero(kind == kd)
        which, at = expand_runs(row_ptr[rows], row_ptr[rows + 1])
        ids = row_data[at].astype(np.int64)
        r_of = rows[which]
        if checked and len(ids):
            if ids.min() < 0 or ids.max() >= limit:
                r = int(r_of[np.argmax((ids < 0) | (ids >= limit))])
                raise damaged(f"token out of range, row {r}")
            if np.any((ids[1:] <= ids[:-1]) & (r_of[1:] == r_of[:-1])):
                raise damaged("mask row ids out of order")
        word, bits = or_words(r_of * words + (ids >> 5), ids & 31)
        if kd == LIST:
            flat[word] = bits
            count[rows] = lens[rows]
            row_eos[r_of[np.isin(ids, eos)]] = True
            one = rows[lens[rows] == 1]
            row_only[one] = row_data[row_ptr[one]]
        else:
            full = np.zeros(words * 32, dtype=bool)
            full[:vocab_size] = True
            masks[rows] = np.packbits(full, bitorder="little").view("<u4")
            flat[word] &= ~bits
            count[rows] = vocab_size - lens[rows]
    bm = np.flatnonzero(kind == BITMAP)
    if len(bm):
        masks[bm] = row_data[row_ptr[bm][:, None] + np.arange(words)].view(np.uint32)
        if checked and logits_size % 32 and np.any(masks[bm, -1] >> np.uint32(logits_size % 32)):
            raise damaged("mask row bits past the logits size")
        count[bm] = np.bitwise_count(masks[bm]).sum(axis=1)
    dl = np.flatnonzero(kind == DELTA)
    if len(dl):
        if checked and np.any(lens[dl] < 1):
            raise damaged("delta row without a base")
        base = row_data[row_ptr[dl]].astype(np.int64)
        if checked and np.any((base < 0) | (base >= dl)) or np.any(kind[base] == DELTA):
            raise damaged("delta row base")
        which, at = expand_runs(row_ptr[dl] + 1, row_ptr[dl + 1])
        ids = row_data[at].astype(np.int64)
        if checked and len(ids) and (ids.min() < 0 or ids.max() >= logits_size
                         or np.any((ids[1:] <= ids[:-1]) & (which[1:] == which[:-1]))):
            raise damaged("delta row ids out of range or order")
        masks[dl] = masks[base]
        word, bits = or_words(dl[which] * words + (ids >> 5), ids & 31)
        flat[word] ^= bits
        count[dl] = np.bitwise_count(masks[dl]).sum(axis=1)
    dense = np.flatnonzero(kind != LIST)          # rows written whole: read EOS from the bits
    if len(eos) and len(dense):
        row_eos[dense] = ((masks[dense][:, eos >> 5] >> (eos & 31).astype(np.uint32)) & 1).any(1)
    # a row stored as a complement or bitmap that allows one token: find it in the bits
    for r in np.flatnonzero((count == 1) & (kind != LIST)).tolist():
        w = int(np.flatnonzero(masks[r])[0])
        row_only[r] = w * 32 + int(masks[r, w]).bit_length() - 1

    if checked:
        _check_exceptions(sections, out, masks, count, damaged)
    elif "class_base" in sections:
        out["class_base"] = np.frombuffer(sections["class_base"], dtype="<i4").astype(np.int64)
    if "cnt_tag" in sections:
        out.update(decode_counted(sections, n, logits_size, damaged))
    if "itm_tag" in sections:
        out.update(decode_items(sections, n, logits_size, damaged))
    if "itn_tag" in sections:
        out.update(decode_items(sections, n, logits_size, damaged, "itn_"))
    if "run_tag" in sections:
        out.update(decode_runs(sections, n, logits_size, damaged))
    out["masks"] = masks.view(np.int32)
    out["row_count"] = count
    out["row_eos"] = row_eos
    out["row_only"] = row_only
    return out


def _check_exceptions(sections: dict, out: dict, masks: np.ndarray, count: np.ndarray,
                      damaged) -> None:
    """Exceptions sorted per class and allowed by the class's row, codes within every
    state's targets, and a default for every state whose row allows more than its
    exceptions (derived classes' checked by :func:`_check_derived`)."""
    C, n, words = len(out["class_row"]), len(out["state_class"]), masks.shape[1]
    flat = masks.reshape(-1)
    et, ep = out["exc_tokens"].astype(np.int64), out["exc_ptr"].astype(np.int64)
    e_class = np.repeat(np.arange(C), np.diff(ep))
    if np.any((et[1:] <= et[:-1]) & (e_class[1:] == e_class[:-1])):
        raise damaged("exception tokens out of order")
    e_row = out["class_row"][e_class].astype(np.int64)
    if len(et) and not np.all((flat[e_row * words + (et >> 5)] >> (et & 31).astype(np.uint32))
                              & 1):
        raise damaged("an exception token that its mask row does not allow")
    max_code = np.zeros(C, dtype=np.int64)
    filled = np.flatnonzero(ep[1:] > ep[:-1])
    if len(filled):
        max_code[filled] = np.maximum.reduceat(out["exc_code"], ep[filled])
    n_exc = np.diff(ep)
    if "class_base" in sections:
        out["class_base"] = check_derived(sections["class_base"], ep, out, masks, max_code,
                                           n_exc, damaged)
    zero = e_class[out["exc_code"] == 0]       # code 0 only in a derived class's patch
    if len(zero) and ("class_base" not in out or np.any(out["class_base"][zero] < 0)):
        raise damaged("value out of range in exc_code")
    sc = out["state_class"]
    if n and np.any(max_code[sc] > np.diff(out["tgt_ptr"])):
        raise damaged("exception code beyond the state's targets")
    if n and np.any((count[out["class_row"][sc]] > n_exc[sc]) & (out["default_next"] < 0)):
        raise damaged("a state without default allows tokens that lead nowhere")



def _check_header(header: dict, source: str) -> None:
    """Refuse a header whose fields have the wrong types or impossible sizes: every field a
    command reads is type-checked, and the whole header is JSON-like (str keys, no bytes)."""
    def bad(what: str):
        return ArtifactError(f"{source}: damaged artifact ({what})")

    _check_json_like(header, bad)
    for key, typ in (*_HEADER_TYPES.items(), *_OPTIONAL_TYPES.items()):
        if key not in header and key not in _HEADER_TYPES:
            continue
        v = header.get(key)
        if not isinstance(v, typ) or (isinstance(v, bool) and typ is not bool):
            name = typ.__name__ if isinstance(typ, type) else "number"
            raise bad(f"header field {key!r} is {type(v).__name__}, expected {name}")
    n, vocab, logits = header["num_states"], header["vocab_size"], header["logits_size"]
    if not (0 < n and 0 <= vocab <= logits <= MAX_LOGITS):
        raise bad(f"impossible sizes: {n} states, {vocab} tokens, {logits} logits")
    eos = header["eos_token_ids"]
    if not all(_is_int(t) and 0 <= t < logits for t in eos):
        raise bad("EOS token ids out of range")
    if not all(isinstance(t, str) for t in header["tools"]):
        raise bad("tool names")
    specials = header.get("special_tokens", {})
    if not all(isinstance(v, list) and all(_is_int(t) and 0 <= t < logits for t in v)
               for v in specials.values()):
        raise bad("special token ids")
    for d in header.get("not_enforced", []):
        if not isinstance(d, dict) or not all(isinstance(d.get(k), str)
                                              for k in ("tool", "pointer", "keyword", "why")):
            raise bad("not_enforced entries")


def _is_int(v) -> bool:
    return type(v) is int


def _check_json_like(header: dict, bad) -> None:
    """str keys, and values that JSON can write (no bytes), at most _HEADER_DEPTH deep."""
    todo = [(header, 0)]
    while todo:
        v, depth = todo.pop()
        if depth > _HEADER_DEPTH:
            raise bad("header nested too deep")
        if isinstance(v, dict):
            if not all(isinstance(k, str) for k in v):
                raise bad("a header key that is not a string")
            todo.extend((x, depth + 1) for x in v.values())
        elif isinstance(v, list):
            todo.extend((x, depth + 1) for x in v)
        elif not isinstance(v, (str, int, float, bool, type(None))):
            raise bad(f"a header value of type {type(v).__name__}")


def write_atomic(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temp file in the same folder and a rename.

    The temp file is created with mode 0o666 and the kernel applies the process umask, as for
    any new file: the umask is never read (``os.umask`` sets it while reading it, a race when
    two threads save at once)."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        tmp = os.path.join(folder, f".toolc-{secrets.token_hex(8)}.tmp")
        try:
            fd = os.open(tmp, flags, 0o666)
            break
        except FileExistsError:
            continue
    else:   # pragma: no cover - 100 collisions of 64 random bits
        raise FileExistsError(f"{folder}: cannot create a temporary file")
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
