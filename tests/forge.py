"""Forged artifacts with valid checksums, and a worker that loads them under a memory cap.

A forged file is what an adversary writes: a header and sections of its choosing, packed and
signed as toolc packs them (the checksum holds). :func:`forge` builds one from scratch (every
state in one class over one row that allows everything: a sound artifact, scaled by its
counts); :func:`cases` draws forged files of many kinds from a seed, from scratch and by
changing a genuine artifact. :func:`run_cases` loads each in a subprocess whose address space
is capped (``resource.RLIMIT_AS``) at the load bound that ``toolc.runtime.limits`` states for
that file's size, plus the interpreter's own, so a blow-up fails the case instead of the
machine; the worker reports, per case, ``refused`` (a clean ArtifactError), ``consistent`` (it
loaded, and its matchers agree with its masks) or anything else (a failure).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
import zlib

import msgpack
import numpy as np

QWEN_VOCAB, QWEN_LOGITS = 151669, 151936


def sign(header, sections, level: int = 6) -> bytes:
    """A file holding ``header`` and ``sections``, with a correct checksum."""
    body = zlib.compress(msgpack.packb([header, sections], use_bin_type=True), level)
    counted = isinstance(sections, dict) and ("cnt_tag" in sections or "itm_tag" in sections)
    version = 6 if counted else 4 if isinstance(sections, dict) and "class_base" in sections \
        else 3
    return msgpack.packb({"magic": "toolc-artifact", "version": version, "compression": "zlib",
                          "body": body, "sha256": hashlib.sha256(body).digest()},
                         use_bin_type=True)


def open_file(data: bytes) -> tuple[dict, dict]:
    """The header and sections of a file, without any check."""
    outer = msgpack.unpackb(data, raw=False)
    return msgpack.unpackb(zlib.decompress(outer["body"]), raw=False)


def i4(a) -> bytes:
    return np.asarray(a, dtype="<i4").tobytes()


def forge(n: int = 1, classes: int = 1, rows: int = 1, kind: int = 1, row_len: int = 0,
          vocab: int = QWEN_VOCAB, logits: int = QWEN_LOGITS) -> tuple[dict, dict]:
    """A sound artifact of ``n`` states spread over ``classes`` classes over ``rows`` rows,
    each row of ``kind`` (0 list, 1 complement, 2 bitmap) listing ``row_len`` ids; every
    allowed token leads to state 0."""
    words = (logits + 31) // 32
    if kind == 2:
        one = np.zeros(words, "<u4")
        one[:vocab // 32] = 0xFFFFFFFF
        data = np.tile(one.view("<i4"), rows)
        lens = [words] * rows
    else:
        ids = np.arange(row_len, dtype="<i4")
        data = np.tile(ids, rows)
        lens = [row_len] * rows
    header = {"num_states": n, "vocab_size": vocab, "logits_size": logits, "fingerprint": "f",
              "tokenizer": "forged", "format": "hermes", "tools": [], "eos_token_ids": [0]}
    sections = {
        "state_class": i4(np.arange(n) % classes), "default_next": i4(np.zeros(n)),
        "tgt_ptr": i4(np.zeros(n + 1)), "tgt": b"", "final": bytes(n),
        "class_row": i4(np.arange(classes) % rows), "exc_ptr": i4(np.zeros(classes + 1)),
        "exc_tokens": b"", "exc_code": b"", "row_kind": bytes([kind]) * rows,
        "row_ptr": i4(np.concatenate([[0], np.cumsum(lens)])), "row_data": i4(data)}
    return header, sections


JUNK = [None, True, -1, 2**63 - 1, -2**63, 1.5, float("nan"), "", "x" * 300, b"\x00", [], [1, "a"],
        {"k": b"v"}, {b"k": 1}, [[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]], {"tool": 1}]


def _header_junk(rng: random.Random, header: dict, sections: dict) -> None:
    key = rng.choice(sorted(header) + ["special_tokens", "not_enforced", "options"])
    header[key] = rng.choice(JUNK)


def _bytes_key(rng, header, sections):
    header[b"num_states"] = header.pop("num_states")


def _section_resize(rng, header, sections):
    k = rng.choice(sorted(sections))
    raw = sections[k]
    n = rng.choice([0, 1, 3, 4, len(raw) - 4, len(raw) + 4, len(raw) * 2 + 8])
    sections[k] = (raw * (n // max(len(raw), 1) + 1) + bytes(n))[:max(n, 0)]


def _section_garbage(rng, header, sections):
    k = rng.choice(sorted(sections))
    raw = bytearray(sections[k])
    for _ in range(rng.randint(1, 8)):
        if raw:
            raw[rng.randrange(len(raw))] = rng.randrange(256)
    sections[k] = bytes(raw)


def _section_values(rng, header, sections):
    k = rng.choice([k for k in sorted(sections) if k not in ("final", "row_kind")])
    a = np.frombuffer(sections[k], "<i4").copy()
    if len(a):
        a[rng.randrange(len(a))] = rng.choice([-2, -1, 0, 1, 2**31 - 1, -2**31,
                                               int(a.max()) + 1, header["logits_size"]])
    sections[k] = a.tobytes()


def _counts(rng, header, sections):
    header[rng.choice(["num_states", "vocab_size", "logits_size"])] = rng.choice(
        [0, 1, header["num_states"] + 1, 2**24, 2**24 + 1, 2**31, header["vocab_size"] - 1])


def _extra_section(rng, header, sections):
    sections[rng.choice(["extra", "class_base", "masks"])] = bytes(rng.randrange(64))


def _wrong_type_section(rng, header, sections):
    sections[rng.choice(sorted(sections))] = rng.choice([[1, 2], "abc", 7, None, {"a": 1}])


MUTATIONS = [_header_junk, _bytes_key, _section_resize, _section_garbage, _section_values,
             _counts, _extra_section, _wrong_type_section]


def _scaled(rng: random.Random) -> tuple[dict, dict]:
    """From scratch: the counts an adversary would inflate (classes, rows, logits, bitmaps)."""
    shape = rng.choice(["classes", "rows", "bitmaps", "logits", "narrow", "states"])
    if shape == "classes":      # many classes over one empty complement row
        c = rng.choice([1000, 20000, 50000])
        return forge(n=c, classes=c, rows=1, kind=1)
    if shape == "rows":         # many complement rows
        r = rng.choice([300, 3000, 20000])
        return forge(n=r, classes=r, rows=r, kind=1)
    if shape == "bitmaps":      # many bitmap rows (their apply plans)
        r = rng.choice([10, 200, 2000])
        return forge(n=r, classes=r, rows=r, kind=2)
    if shape == "logits":       # a huge vocabulary
        big = rng.choice([1 << 20, 1 << 24])
        return forge(n=rng.choice([1, 64, 4096]), classes=1, rows=1, kind=1, vocab=big,
                     logits=big)
    if shape == "narrow":       # many narrow classes over one listed row (the dict)
        c = rng.choice([1000, 50000])
        return forge(n=c, classes=c, rows=1, kind=0, row_len=64)
    return forge(n=rng.choice([10_000, 1_000_000]), classes=1, rows=1, kind=1)


def cases(seed: int, count: int, genuine: bytes) -> list[tuple[str, bytes]]:
    """``count`` forged files drawn from ``seed``: scaled from scratch, or a genuine artifact
    with one to three changes; every one has a valid checksum."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        if rng.random() < 0.3:
            header, sections = _scaled(rng)
            name = f"{seed}-{i}-scaled"
        else:
            header, sections = open_file(genuine)
            muts = [rng.choice(MUTATIONS) for _ in range(rng.randint(1, 3))]
            for m in muts:
                try:
                    m(rng, header, sections)
                except (KeyError, TypeError, ValueError, AttributeError):
                    pass        # an earlier change left nothing for this one to change
            name = f"{seed}-{i}-" + "+".join(m.__name__.strip("_") for m in muts)
        if rng.random() < 0.1:
            sections = rng.choice([[], "x", None, [header]])
        out.append((name, sign(header, sections)))
    return out


WORKER = r"""
import json, os, resource, sys
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np
import toolc
from toolc.runtime import limits
from toolc.runtime.bitmask import apply_mask

def vm_bytes():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024

def consistent(art):
    import random
    rng = random.Random(0)
    for q in sorted({0, art.num_states - 1, *rng.sample(range(art.num_states),
                                                       min(20, art.num_states))}):
        m = art.matcher(q)
        ids = m.allowed_token_ids()
        bits = np.unpackbits(m.mask().view(np.uint8), bitorder="little")[:art.logits_size]
        assert np.array_equal(np.flatnonzero(bits), ids), "allowed ids and mask differ"
        logits = np.zeros(art.logits_size, dtype=np.float32)
        apply_mask(logits, m)
        assert np.array_equal(np.flatnonzero(logits == 0), ids), "apply_mask and mask differ"
        for t in ids[:3].tolist() + ids[-2:].tolist():
            assert m.accepts(t), f"state {q} refuses allowed token {t}"
            m.advance(t)
            m.rollback(1)
        for t in rng.sample(range(art.logits_size), 5):
            assert m.accepts(t) == bool(bits[t]), f"state {q}: accepts({t}) disagrees"

base = vm_bytes()
for path in sys.argv[1:]:
    size = os.path.getsize(path)
    # the stated bound for a file of this size, whatever vocabulary it claims
    cap = (limits.BYTES_PER_BODY_BYTE * limits.max_body_bytes(size) + limits.FREE_ROWS_CAP
           + limits.FIXED_BYTES)
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]     # the soft limit only: raised again
    resource.setrlimit(resource.RLIMIT_AS, (base + cap + (64 << 20), hard))
    try:
        art = toolc.load(path)
        consistent(art)
        out = "consistent"
    except toolc.ArtifactError as e:
        out = "refused: " + str(e)
    except MemoryError:
        out = "FAIL memory"
    except BaseException as e:
        out = f"FAIL {type(e).__name__}: {e}"
    art = None
    resource.setrlimit(resource.RLIMIT_AS, (hard, hard))
    print(json.dumps({"case": os.path.basename(path), "outcome": out[:300]}), flush=True)
"""


def run_cases(files: list[str], timeout: float = 600) -> dict[str, str]:
    """Load every file in one worker subprocess, each under its memory cap; the outcome of
    each (a case the worker never reported is ``FAIL worker died``)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root, OPENBLAS_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-c", WORKER, *files], capture_output=True,
                          text=True, env=env, timeout=timeout)
    got = {}
    for line in proc.stdout.splitlines():
        d = json.loads(line)
        got[d["case"]] = d["outcome"]
    for f in files:
        got.setdefault(os.path.basename(f), f"FAIL worker died: {proc.stderr[-500:]}")
    return got


def load_changed(art, header: dict, sections: dict, name: str, arr: np.ndarray,
                 text_ids: list, each=None) -> bool:
    """``art``'s file with section ``name`` replaced by ``arr``: refused with a clean
    ArtifactError (False), or loaded (True) and then walked along ``text_ids`` as far as it
    accepts them, every mask the shape of ``art``'s (``each(matcher)`` after each token)."""
    import toolc
    from toolc.runtime.fileformat import pack
    try:
        got = toolc.Artifact.from_bytes(pack(header, dict(sections, **{name: arr.tobytes()})))
    except toolc.ArtifactError:
        return False
    m, shape = got.matcher(), art.matcher().mask().shape
    for t in text_ids:
        assert m.mask().shape == shape
        if not m.accepts(t):
            break
        m.advance(t)
        if each is not None:
            each(m)
    return True
