"""The one alphabet a DFA and the vocabulary walk agree on.

Bytes fall into equivalence classes (bytes that every label treats alike); special-token
symbols come after the byte classes, one index each, in sorted order of their names.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np


_BYTES = (1 << 256) - 1


@dataclass(frozen=True)
class Alphabet:
    byte_class: np.ndarray          # int32[256]: byte -> class index
    num_byte_classes: int
    symbols: tuple[str, ...]        # special symbols; symbol k has index num_byte_classes + k

    @classmethod
    def from_masks(cls, masks, symbols) -> "Alphabet":
        """The coarsest partition of the bytes that every mask in ``masks`` is a union of."""
        masks = sorted(set(masks))
        # bits[b, i]: does mask i hold byte b; a byte's signature is its row of bits
        packed = np.frombuffer(b"".join((m & _BYTES).to_bytes(32, "little") for m in masks),
                               dtype=np.uint8).reshape(len(masks), 32)
        bits = np.unpackbits(packed, axis=1, bitorder="little").T.tobytes()
        k = len(masks)
        sig_to_class: dict[bytes, int] = {}
        byte_class = np.array([sig_to_class.setdefault(bits[b * k:(b + 1) * k], len(sig_to_class))
                               for b in range(256)], dtype=np.int32)
        return cls(byte_class, len(sig_to_class), tuple(sorted(set(symbols))))

    @property
    def size(self) -> int:
        return self.num_byte_classes + len(self.symbols)

    def symbol_index(self, name: str) -> int:
        return self.num_byte_classes + self.symbols.index(name)

    def classes_of(self, mask: int) -> tuple[int, ...]:
        """The byte classes a byte-set mask covers (it must be a union of classes; any class
        it touches is counted), in increasing order. One test per class, not per byte: a
        string's "any byte but these" label has some 250 bytes in 90 to 160 classes."""
        return tuple(c for c, m in enumerate(self._class_masks) if mask & m)

    @cached_property
    def _class_masks(self) -> tuple[int, ...]:
        """Each byte class as a byte-set mask."""
        out = [0] * self.num_byte_classes
        for b, c in enumerate(self.byte_class.tolist()):
            out[c] |= 1 << b
        return tuple(out)

    def class_bytes(self, c: int) -> list[int]:
        return [b for b in range(256) if self.byte_class[b] == c]

    def describe(self, index: int) -> str:
        if index >= self.num_byte_classes:
            return self.symbols[index - self.num_byte_classes]
        bs = self.class_bytes(index)
        shown = "".join(chr(b) if 32 < b < 127 else f"\\x{b:02x}" for b in bs[:8])
        return shown + ("…" if len(bs) > 8 else "")
