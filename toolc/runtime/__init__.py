"""SERVING: load an artifact, mask and advance per generated token.

Imports numpy, msgpack, the standard library and :mod:`toolc.errors`, nothing else (a test
checks it, and another that loading an artifact leaves the compiler unloaded), so an inference
server needs ``pip install toolc`` and nothing more.

* :mod:`.fileformat`: the ``.toolc`` file: spec, write, read, verify, decode.
* :mod:`.artifact`: :class:`Artifact` (one per tool set, shared) and :func:`load`.
* :mod:`.matcher`: :class:`Matcher` (one per request); :func:`advance_batch` (a batch's step).
* :mod:`.tables`: what the matcher reads per token, built once per artifact.
* :mod:`.bitmask`: the int32 bitmask layout and the calls engines use on it.
* :mod:`.fingerprint`: a vocabulary's fingerprint, from a tokenizer an engine serves with.
* :mod:`.arrays`: numpy idioms shared with the compiler.
"""

from .artifact import Artifact, load
from .bitmask import (BitmaskFiller, allocate_token_bitmask, apply_mask,
                      apply_token_bitmask_inplace, fill_bitmask, fill_next_token_bitmask,
                      get_bitmask_shape)
from .matcher import Matcher, advance_batch

__all__ = ["Artifact", "Matcher", "load", "BitmaskFiller", "apply_mask", "allocate_token_bitmask",
           "apply_token_bitmask_inplace", "fill_bitmask", "fill_next_token_bitmask",
           "get_bitmask_shape", "advance_batch"]
