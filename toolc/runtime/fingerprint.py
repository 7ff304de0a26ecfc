"""A vocabulary's fingerprint, and how to take it from the tokenizer an engine serves with.

An artifact records the fingerprint of the vocabulary it was compiled for: a sha256 over every
token's exact bytes, the added tokens (id and spelling) and the end-of-sequence ids. The
definition lives here, beside the decoding of a tokenizer's pieces into bytes, so that the
compiler (:mod:`toolc.tokenizer`) and the serving side (:func:`toolc.load`, the engine adapters)
compute it the same way.

:func:`tokenizer_fingerprint` takes it from a transformers fast tokenizer, a
``tokenizers.Tokenizer``, a llama-cpp-python ``Llama``, a toolc ``Vocabulary`` or a fingerprint
string. An engine's tokenizer knows its tokens but not which ids end generation (that is the
model's ``generation_config.json``), so the caller gives the end-of-sequence ids: the adapters
give the artifact's. A match then proves that every token's bytes and every added token are the
ones the artifact was compiled for. Reading a 151k-token vocabulary takes about half a second,
so the token part of the hash is cached per tokenizer object.

Standard library and numpy only: the runtime imports this module, lazily, when it is given a
tokenizer object.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import re
import sys
import threading
import weakref

from ..errors import TokenizerError

# -- pieces to bytes ---------------------------------------------------------------------------


def _bytes_to_unicode() -> dict[int, str]:
    """The GPT-2 byte <-> printable-character table that byte-level BPE vocabularies use."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) \
        + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


BYTE_DECODER = {c: b for b, c in _bytes_to_unicode().items()}
_BYTE_TABLE = {ord(c): b for c, b in BYTE_DECODER.items()}
_BYTE_FALLBACK = re.compile(r"^<0x([0-9A-Fa-f]{2})>$")


def decode_piece(piece: str, mode: str) -> bytes:
    """The bytes a vocabulary piece stands for: through the GPT-2 table (``bytelevel``), or
    with ``▁`` as a space and ``<0xNN>`` as that byte (``sentencepiece``)."""
    if mode == "bytelevel":
        try:
            return piece.translate(_BYTE_TABLE).encode("latin-1")
        except UnicodeEncodeError:   # a character outside the byte table: take it literally
            return piece.encode("utf-8")
    m = _BYTE_FALLBACK.match(piece)
    if m:
        return bytes([int(m.group(1), 16)])
    return piece.replace("\u2581", " ").encode("utf-8")


def piece_mode(spec: dict) -> str:
    """'bytelevel' for byte-level BPE (GPT-2 table), 'sentencepiece' for ▁ and <0xNN> pieces."""
    text = json.dumps([spec.get("decoder"), spec.get("pre_tokenizer")])
    if '"ByteLevel"' in text:
        return "bytelevel"
    return "sentencepiece"


def tokens_from_spec(spec: dict, where: str) -> tuple[list[bytes], dict[str, int], set[int]]:
    """(token bytes by id, added-token spelling -> id, special ids) of a parsed
    ``tokenizer.json``. Ids no piece names are empty byte strings."""
    try:
        vocab = spec["model"]["vocab"]
    except (KeyError, TypeError) as e:
        raise TokenizerError(f"{where}: not a tokenizers 'tokenizer.json' ({e})") from None
    if isinstance(vocab, list):  # Unigram: [[piece, score], ...]
        pieces = {p[0]: i for i, p in enumerate(vocab)}
    elif isinstance(vocab, dict):
        pieces = vocab
    else:
        raise TokenizerError(f"{where}: unsupported model vocabulary of type "
                             f"{type(vocab).__name__}")
    mode = piece_mode(spec)
    added: dict[str, int] = {}
    special: set[int] = set()
    for tok in spec.get("added_tokens") or []:
        added[tok["content"]] = int(tok["id"])
        if tok.get("special"):
            special.add(int(tok["id"]))
    size = max(list(pieces.values()) + list(added.values())) + 1
    token_bytes: list[bytes] = [b""] * size
    for piece, tid in pieces.items():
        token_bytes[tid] = decode_piece(piece, mode)
    for content, tid in added.items():
        token_bytes[tid] = content.encode("utf-8")
    return token_bytes, added, special


# -- the fingerprint ---------------------------------------------------------------------------

def tokens_hash(token_bytes, added: dict[str, int]):
    """The sha256 state after the token part of the fingerprint (finish with :func:`finish`)."""
    import numpy as np
    h = hashlib.sha256(b"toolc-vocabulary-v1\0")
    h.update(len(token_bytes).to_bytes(8, "little"))
    lens = np.fromiter(map(len, token_bytes), dtype="<u4", count=len(token_bytes))
    h.update(lens.tobytes())
    h.update(b"".join(token_bytes))
    for text, tid in sorted(added.items(), key=lambda kv: kv[1]):
        h.update(tid.to_bytes(8, "little"))
        h.update(text.encode("utf-8") + b"\0")
    return h


def finish(token_part, eos_ids) -> str:
    """The fingerprint: the token part (left unchanged) followed by the end-of-sequence ids."""
    h = token_part.copy()
    h.update(b"eos\0" + b"".join(int(i).to_bytes(8, "little") for i in eos_ids))
    return h.hexdigest()


def fingerprint(token_bytes, added: dict[str, int], eos_ids) -> str:
    """sha256 over every token's bytes, the added tokens and the EOS ids."""
    return finish(tokens_hash(token_bytes, added), eos_ids)


# -- from the tokenizer an engine serves with --------------------------------------------------

_KINDS = ("a transformers fast tokenizer, a tokenizers.Tokenizer, a llama_cpp.Llama, a toolc "
          "Vocabulary or a fingerprint string")


def tokenizer_fingerprint(tokenizer, eos_ids) -> str:
    """The fingerprint of ``tokenizer``'s vocabulary, with ``eos_ids`` as its end-of-sequence ids.

    ``tokenizer`` is a fingerprint string (returned as is), anything with a ``fingerprint``
    string (a :class:`toolc.tokenizer.Vocabulary`: its own EOS ids count, not ``eos_ids``), a
    transformers fast tokenizer, a ``tokenizers.Tokenizer``, or a llama-cpp-python ``Llama``
    (or its ``LlamaTokenizer``). Raises ``TypeError`` for anything else.
    """
    if isinstance(tokenizer, str):
        return tokenizer
    fp = getattr(tokenizer, "fingerprint", None)
    if isinstance(fp, str):
        return fp
    return finish(_token_part(tokenizer), eos_ids)


def tokenizer_name(tokenizer) -> str:
    """How an error message names ``tokenizer``: its name or path where it has one."""
    if isinstance(tokenizer, str):
        return f"tokenizer {tokenizer[:12]!r}"
    for attr in ("name_or_path", "model_path", "name"):
        value = getattr(tokenizer, attr, None)
        if isinstance(value, str) and value:
            return f"tokenizer {value!r}"
    return f"the {type(tokenizer).__module__.split('.')[0]} {type(tokenizer).__name__}"


# per tokenizer object: (a weak reference to it, its size when read, the token part's hash)
_CACHE: dict[int, tuple] = {}
_LOCK = threading.Lock()


def _token_part(tok):
    reader, size = _reader(tok)
    key = id(tok)
    with _LOCK:
        hit = _CACHE.get(key)
    if hit is not None and hit[0]() is tok and hit[1] == size:
        return hit[2]
    # reading makes ~10^6 short-lived objects (the parsed tokenizer.json): without the cyclic
    # garbage collector's passes over them it takes half the time (measured: 0.48 s -> 0.23 s)
    enabled = gc.isenabled()
    gc.disable()
    try:
        part = tokens_hash(*reader(tok))
    finally:
        if enabled:
            gc.enable()
    try:
        ref = weakref.ref(tok, lambda _r, key=key: _CACHE.pop(key, None))
    except TypeError:   # not weakly referenceable: not cached
        return part
    with _LOCK:
        _CACHE[key] = (ref, size, part)
    return part


def _reader(tok):
    """(a function reading ``tok``'s token bytes and added tokens, ``tok``'s current size).
    The size guards the cache: tokens added to the object after a read change it."""
    model = getattr(tok, "_model", None)
    if model is not None and type(model).__module__.startswith("llama_cpp") \
            and not hasattr(model, "vocab"):
        raise TypeError("cannot read the vocabulary of this llama-cpp-python: it predates "
                        "llama.cpp's vocab API (llama-cpp-python 0.3); upgrade it, or give "
                        "the artifact's tokenizer another way (a fingerprint string)")
    if model is not None and hasattr(model, "vocab"):          # llama_cpp.Llama, LlamaTokenizer
        return _from_llama, int(_llama_cpp().llama_vocab_n_tokens(model.vocab))
    backend = getattr(tok, "backend_tokenizer", None)            # transformers fast tokenizers
    if backend is not None and callable(getattr(backend, "to_str", None)):
        return _from_transformers, len(tok)
    if callable(getattr(tok, "to_str", None)) and callable(getattr(tok, "get_vocab_size", None)):
        return _from_tokenizers, tok.get_vocab_size(with_added_tokens=True)
    slow = " (a slow tokenizer: load the fast one, use_fast=True)" \
        if hasattr(tok, "get_vocab") and hasattr(tok, "convert_ids_to_tokens") else ""
    raise TypeError(f"cannot take a toolc fingerprint from {type(tok).__module__}."
                    f"{type(tok).__name__}{slow}; give {_KINDS}")


def parse_spec(text: str, where: str) -> dict:
    """The parsed text of a ``tokenizer.json``, or a TokenizerError naming ``where``."""
    try:
        spec = json.loads(text)
    except ValueError as e:
        raise TokenizerError(f"{where}: not a tokenizers 'tokenizer.json' ({e})") from None
    if not isinstance(spec, dict):
        raise TokenizerError(f"{where}: not a tokenizers 'tokenizer.json' (not an object)")
    return spec


def _from_json(text: str, where: str):
    token_bytes, added, _special = tokens_from_spec(parse_spec(text, where), where)
    return token_bytes, added


def _from_transformers(tok):
    return _from_json(tok.backend_tokenizer.to_str(), tokenizer_name(tok))


def _from_tokenizers(tok):
    return _from_json(tok.to_str(), tokenizer_name(tok))


def _llama_cpp():
    """llama-cpp-python's module, as the engine already loaded it (a ``Llama`` exists): the
    runtime reads the engine's own module and never imports one itself."""
    mod = sys.modules.get("llama_cpp")
    if mod is None:
        raise TypeError("a llama.cpp model object, but llama_cpp is not loaded")
    return mod


# llama.h's llama_token_attr bits
_ATTR_UNKNOWN, _ATTR_UNUSED, _ATTR_CONTROL, _ATTR_USER_DEFINED = 1, 2, 8, 16


def _from_llama(tok):
    """Token bytes and added tokens of a GGUF vocabulary, through llama.cpp's C API.

    Each token's bytes are ``llama_token_to_piece(..., lstrip=0, special=True)``: the decoded
    bytes of a normal or byte token, the text of a control, user-defined or unknown token. Those
    three kinds are the added tokens (the GGUF converter writes a tokenizer.json's added tokens
    so). Unused tokens at the end (the converter pads the vocabulary to the model's logits size
    with them) are not tokens of the tokenizer.
    """
    import ctypes

    llama_cpp = _llama_cpp()
    vocab = tok._model.vocab
    n = int(llama_cpp.llama_vocab_n_tokens(vocab))
    get_attr = llama_cpp.llama_vocab_get_attr
    to_piece = llama_cpp.llama_token_to_piece
    buf = ctypes.create_string_buffer(256)
    token_bytes: list[bytes] = []
    attrs: list[int] = []
    for i in range(n):
        k = to_piece(vocab, i, buf, len(buf), 0, True)
        if k < 0:
            buf = ctypes.create_string_buffer(-k)
            k = to_piece(vocab, i, buf, len(buf), 0, True)
        token_bytes.append(buf.raw[:k])
        attrs.append(int(get_attr(vocab, i)))
    while attrs and attrs[-1] & _ATTR_UNUSED:
        attrs.pop()
        token_bytes.pop()
    added_kinds = _ATTR_UNKNOWN | _ATTR_CONTROL | _ATTR_USER_DEFINED
    added_ids = [i for i, a in enumerate(attrs) if a & added_kinds]
    types = gguf_token_types(getattr(tok, "model_path", None))
    if types is not None and len(types) >= len(attrs):
        # the file's own token types: llama.cpp's loader marks some ordinary tokens control
        # by their text (Qwen3's BPE token 128247, ``</s>``, becomes a control and
        # end-of-generation token), while the file, like the tokenizer the artifact was
        # compiled from, has them as text
        added_ids = [i for i in added_ids if types[i] in _GGUF_ADDED_TYPES]
    added = {token_bytes[i].decode("utf-8", "replace"): i for i in added_ids}
    return token_bytes, added


# gguf's token types (llama_token_type): unknown, control and user-defined are added tokens
_GGUF_ADDED_TYPES = (2, 3, 4)
# gguf's value types: their sizes, for skipping values (8: string, 9: array)
_GGUF_SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}


def gguf_token_types(path) -> list[int] | None:
    """The ``tokenizer.ggml.token_type`` array of a GGUF file (standard library only), or
    None when ``path`` is not a readable GGUF file (version 2 or 3) that holds it."""
    import mmap
    import struct

    if not isinstance(path, (str, os.PathLike)):
        return None
    try:
        with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            if mm[:4] != b"GGUF" or struct.unpack_from("<I", mm, 4)[0] not in (2, 3):
                return None
            n_kv = struct.unpack_from("<Q", mm, 16)[0]
            pos = 24

            def skip(kind: int, pos: int) -> int:
                if kind == 8:
                    return pos + 8 + struct.unpack_from("<Q", mm, pos)[0]
                if kind == 9:
                    sub, count = struct.unpack_from("<IQ", mm, pos)
                    pos += 12
                    if sub in _GGUF_SIZES:
                        return pos + count * _GGUF_SIZES[sub]
                    for _ in range(count):
                        pos = skip(sub, pos)
                    return pos
                return pos + _GGUF_SIZES[kind]

            for _ in range(n_kv):
                klen = struct.unpack_from("<Q", mm, pos)[0]
                key = mm[pos + 8:pos + 8 + klen]
                pos += 8 + klen
                kind = struct.unpack_from("<I", mm, pos)[0]
                pos += 4
                if key == b"tokenizer.ggml.token_type" and kind == 9:
                    sub, count = struct.unpack_from("<IQ", mm, pos)
                    if sub not in (4, 5):           # uint32 or int32
                        return None
                    return list(struct.unpack_from(f"<{count}i", mm, pos + 12))
                pos = skip(kind, pos)
    except (OSError, ValueError, KeyError, struct.error):
        return None
    return None
