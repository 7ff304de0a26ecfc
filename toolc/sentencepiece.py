"""SentencePiece ``.model`` files (Mistral's v1-v7 ones in mistral-common, Llama 2, ...) read
into a :class:`~toolc.tokenizer.Vocabulary`, with no protobuf dependency.

The file is a protobuf ``ModelProto``; toolc reads the three fields it needs: the pieces
(field 1: each a ``SentencePiece`` with its text (1), score (2) and type (3)) and the
trainer spec's ``eos_id`` (field 2, sub-field 42; SentencePiece's default is 2). A normal
piece spells its text with ``▁`` as a space; a byte piece ``<0xNN>`` is that byte; control
and unknown pieces (``<s>``, ``</s>``, ``[INST]``, ``[TOOL_CALLS]``, ...) are added tokens,
atomic and never matched by their spelling; unused pieces are never allowed.

Encoding text (``Vocabulary.encode``) needs the ``sentencepiece`` package.
"""

from __future__ import annotations

import struct

from .errors import TokenizerError
from .runtime.fingerprint import decode_piece

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    out = shift = 0
    while True:
        if i >= len(buf) or shift > 63:
            raise ValueError("truncated varint")
        b = buf[i]
        i += 1
        out |= (b & 0x7F) << shift
        if b < 0x80:
            return out, i
        shift += 7


def fields(buf: bytes):
    """(field number, wire type, value) of each field of one protobuf message, in order;
    a length-delimited value is its bytes, a fixed32/fixed64 one its raw bytes."""
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        num, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(buf, i)
        elif wire == 2:
            n, i = _varint(buf, i)
            if i + n > len(buf):
                raise ValueError("a field runs past the end")
            value, i = buf[i:i + n], i + n
        elif wire in (1, 5):
            n = 8 if wire == 1 else 4
            if i + n > len(buf):
                raise ValueError("a field runs past the end")
            value, i = buf[i:i + n], i + n
        else:
            raise ValueError(f"wire type {wire}")
        yield num, wire, value


def read_model(data: bytes, where: str) -> tuple[list[tuple[str, int]], int]:
    """([(piece, type)] by id, eos id) of a serialized SentencePiece model."""
    pieces, eos = [], 2
    try:
        for num, wire, value in fields(data):
            if num == 1 and wire == 2:
                piece, kind = None, NORMAL
                for n, w, v in fields(value):
                    if n == 1 and w == 2:
                        piece = v.decode("utf-8")
                    elif n == 3 and w == 0:
                        kind = v
                if piece is None:
                    raise ValueError("a piece without text")
                pieces.append((piece, kind))
            elif num == 2 and wire == 2:
                for n, w, v in fields(value):
                    if n == 42 and w == 0:
                        eos = struct.unpack("<i", struct.pack("<I", v & 0xFFFFFFFF))[0]
    except (ValueError, UnicodeDecodeError) as e:
        raise TokenizerError(f"{where}: not a SentencePiece model ({e})") from None
    if not pieces:
        raise TokenizerError(f"{where}: not a SentencePiece model (no pieces)")
    if not 0 <= eos < len(pieces):
        raise TokenizerError(f"{where}: the model's end-of-sequence id {eos} is not a piece")
    return pieces, eos


def vocabulary_from_sentencepiece(data: bytes, *, name: str, logits_size: int | None = None,
                                  source: str = ""):
    """A :class:`~toolc.tokenizer.Vocabulary` from the bytes of a SentencePiece model."""
    from .tokenizer import Vocabulary
    where = source or name
    pieces, eos = read_model(data, where)
    token_bytes: list[bytes] = []
    added: dict[str, int] = {}
    for i, (piece, kind) in enumerate(pieces):
        if kind in (CONTROL, UNKNOWN):
            added.setdefault(piece, i)
            token_bytes.append(piece.encode("utf-8"))
        elif kind == UNUSED:
            token_bytes.append(b"")
        elif kind == BYTE:
            token_bytes.append(decode_piece(piece, "sentencepiece"))
        else:
            token_bytes.append(piece.replace("\u2581", " ").encode("utf-8"))
    if pieces[eos][1] not in (CONTROL, UNKNOWN):
        raise TokenizerError(f"{where}: the end-of-sequence piece {pieces[eos][0]!r} is not a "
                             "control piece")
    size = len(token_bytes)
    logits = size if logits_size is None else logits_size
    if logits < size:
        raise TokenizerError(f"{where}: logits size {logits} is smaller than the vocabulary "
                             f"({size} entries)")
    return Vocabulary(name=name, token_bytes=tuple(token_bytes), added=added,
                      special_ids=frozenset(added.values()), eos_ids=(eos,),
                      logits_size=int(logits), source="", kind="sentencepiece",
                      encoder=_SentencePieceEncoder(data, added))


class _SentencePieceEncoder:
    """``text -> ids`` through the ``sentencepiece`` package, control pieces spelled in the
    text encoded as themselves; built on first use."""

    def __init__(self, data: bytes, added: dict[str, int]):
        self.data, self.added = data, added

    def __call__(self):
        try:
            import sentencepiece
        except ImportError:
            raise TokenizerError("encoding text with a SentencePiece model needs the "
                                 "'sentencepiece' package (pip install sentencepiece)") from None
        sp = sentencepiece.SentencePieceProcessor(model_proto=self.data)
        marks = sorted((k for k in self.added if len(k) > 1), key=len, reverse=True)

        def encode(text: str) -> list[int]:
            out, i, start = [], 0, 0
            while i < len(text):
                hit = next((k for k in marks if text.startswith(k, i)), None)
                if hit is None:
                    i += 1
                    continue
                if start < i:
                    out += sp.encode(text[start:i])
                out.append(self.added[hit])
                i = start = i + len(hit)
            if start < len(text):
                out += sp.encode(text[start:])
            return out

        return encode
