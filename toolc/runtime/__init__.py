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
* :mod:`.files`: bounded file reads (standard library only).

The names below are imported from their modules on first use, so that ``toolc.runtime.files``
and the parser's CLI need no numpy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .artifact import Artifact, load
    from .bitmask import (BitmaskFiller, allocate_token_bitmask, apply_mask,
                          apply_token_bitmask_inplace, fill_bitmask, fill_next_token_bitmask,
                          get_bitmask_shape)
    from .matcher import Matcher, advance_batch

#: each public name -> its module, imported on first use: ``import toolc.runtime.files`` (the
#: CLI reading a tools file) or ``toolc.runtime.fingerprint`` loads no numpy until an artifact
#: is loaded or a mask is made
_HOME = {"Artifact": "artifact", "load": "artifact", "Matcher": "matcher",
         "advance_batch": "matcher", "BitmaskFiller": "bitmask", "apply_mask": "bitmask",
         "allocate_token_bitmask": "bitmask", "apply_token_bitmask_inplace": "bitmask",
         "fill_bitmask": "bitmask", "fill_next_token_bitmask": "bitmask",
         "get_bitmask_shape": "bitmask"}


def __getattr__(name: str):
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value      # later look-ups are plain attribute reads
    return value


def __dir__():
    return sorted(set(globals()) | set(_HOME))


__all__ = ["Artifact", "Matcher", "load", "BitmaskFiller", "apply_mask", "allocate_token_bitmask",
           "apply_token_bitmask_inplace", "fill_bitmask", "fill_next_token_bitmask",
           "get_bitmask_shape", "advance_batch"]
