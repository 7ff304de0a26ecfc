"""``apply_token_bitmask_inplace``: mask a logits tensor with toolc's int32 bitmask (torch).

The bitmask layout is xgrammar's: token ``t`` is allowed iff bit ``t % 32`` of word ``t // 32``
is set. The bitmask (a numpy array or a torch tensor) is moved to the logits' device. CPU
logits take vectorized torch code; CUDA logits take one Triton kernel
(:mod:`toolc.integrations.triton_apply`) where Triton imports, the torch code elsewhere or when
``USE_TRITON`` is False. Both give the same logits (the tests compare them on a GPU).
"""

from __future__ import annotations

import numpy as np
import torch

_SHIFTS: dict[torch.device, torch.Tensor] = {}


def _shifts(device: torch.device) -> torch.Tensor:
    s = _SHIFTS.get(device)
    if s is None:
        s = _SHIFTS[device] = torch.arange(32, dtype=torch.int32, device=device)
    return s


#: CUDA logits are masked by one Triton kernel where Triton imports (it ships with CUDA builds
#: of torch); False makes them take the torch path, as CPU logits do
USE_TRITON = True
_KERNEL: list = []


def _kernel():
    """The Triton kernel's module, or None where Triton does not import (tried once)."""
    if not _KERNEL:
        from . import triton_apply
        _KERNEL.append(triton_apply if triton_apply.available() else None)
    return _KERNEL[0]


def _as_int32(bitmask, device) -> torch.Tensor:
    if isinstance(bitmask, np.ndarray):
        bitmask = np.ascontiguousarray(bitmask, dtype=np.int32)
        if not bitmask.flags.writeable:     # a read-only view of an artifact row
            bitmask = bitmask.copy()
        bitmask = torch.from_numpy(bitmask)
    if bitmask.dtype != torch.int32:
        raise TypeError(f"the bitmask must be int32, got {bitmask.dtype}")
    return bitmask if device is None else bitmask.to(device, non_blocking=True)


def _apply_kernel(logits: torch.Tensor, bitmask, indices) -> None:
    """The CUDA path: the same shapes and errors as the torch path, then one kernel launch."""
    mask = _as_int32(bitmask, logits.device)
    if mask.dim() not in (1, 2):
        raise ValueError(f"the bitmask must be 1-D or 2-D, got shape {tuple(mask.shape)}")
    if indices is not None and logits.dim() != 2:
        raise ValueError("indices need 2-D logits")
    if mask.dim() == 2 and logits.dim() == 1:
        raise ValueError("a batch of bitmasks needs 2-D logits")
    rows = logits.unsqueeze(0) if logits.dim() == 1 else logits
    want = rows.shape[0] if indices is None else len(indices)
    if mask.dim() == 1:
        mask = mask.unsqueeze(0).expand(want, -1)       # one mask for every row: stride 0
    elif mask.shape[0] != want:
        raise ValueError(f"bitmask has {mask.shape[0]} rows, logits have {want}")
    if mask.stride(-1) != 1:
        mask = mask.contiguous()
    if want:
        _kernel().apply(rows, mask, indices)


def unpack_bitmask(bitmask, width: int, device=None) -> torch.Tensor:
    """bool[..., width] from an int32 bitmask[..., words]; bits past the mask are False."""
    bitmask = _as_int32(bitmask, device)
    bits = (bitmask.unsqueeze(-1) >> _shifts(bitmask.device)) & 1
    bits = bits.reshape(*bitmask.shape[:-1], bitmask.shape[-1] * 32).bool()
    have = bits.shape[-1]
    if have >= width:
        return bits[..., :width]
    pad = torch.zeros(*bits.shape[:-1], width - have, dtype=torch.bool, device=bits.device)
    return torch.cat([bits, pad], dim=-1)


def apply_token_bitmask_inplace(logits: torch.Tensor, bitmask, indices=None) -> torch.Tensor:
    """Set ``logits`` to -inf wherever ``bitmask`` does not allow the token; in place.

    ``logits``: float[vocab] or float[batch, vocab], on CPU or CUDA. ``bitmask``: int32
    [words] or [batch, words] (a torch tensor or a numpy array, as ``Matcher.mask()`` gives),
    or [len(indices), words] with ``indices`` naming the logits rows to mask. Logits past the
    mask's last bit (a model whose output layer is wider than its tokenizer) are masked; bits
    past the logits' width are ignored. Returns ``logits``.
    """
    if logits.dim() not in (1, 2):
        raise ValueError(f"logits must be 1-D or 2-D, got shape {tuple(logits.shape)}")
    if logits.is_cuda and USE_TRITON and logits.stride(-1) == 1 and _kernel() is not None:
        _apply_kernel(logits, bitmask, indices)
        return logits
    allowed = unpack_bitmask(bitmask, logits.shape[-1], device=logits.device)
    if indices is not None:
        if logits.dim() != 2:
            raise ValueError("indices need 2-D logits")
        idx = torch.as_tensor(list(indices), dtype=torch.long, device=logits.device)
        if allowed.dim() == 1:
            allowed = allowed.unsqueeze(0).expand(len(idx), -1)
        rows = logits.index_select(0, idx)
        rows.masked_fill_(~allowed, float("-inf"))
        logits.index_copy_(0, idx, rows)
        return logits
    if allowed.dim() == 2 and logits.dim() == 2 and allowed.shape[0] != logits.shape[0]:
        raise ValueError(f"bitmask has {allowed.shape[0]} rows, logits have {logits.shape[0]}")
    if allowed.dim() == 2 and logits.dim() == 1:
        raise ValueError("a batch of bitmasks needs 2-D logits")
    logits.masked_fill_(~allowed, float("-inf"))
    return logits
