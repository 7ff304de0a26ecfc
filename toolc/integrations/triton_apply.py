"""A Triton kernel for ``apply_token_bitmask_inplace`` on CUDA logits (one pass, no temporaries).

The torch path in :mod:`toolc.integrations.torch` unpacks the bitmask into a boolean tensor
the size of the logits (through an int32 tensor 32 times the bitmask's size) and then fills;
on a batch of 256 rows of Qwen3's 151,936 logits that is several kernels and some 150 MB of
temporaries. This kernel reads each logit's word, tests its bit and writes -inf in place:
one launch, a grid of (rows, blocks of the vocabulary). Logits past the bitmask's last word
are masked, as the torch path does.

Imported only when a CUDA tensor is masked and Triton imports (it ships with CUDA builds of
torch); :func:`available` says whether it can be used.
"""

from __future__ import annotations

import torch

try:                                    # pragma: no cover - only where Triton is installed
    import triton
    import triton.language as tl
except ImportError:                     # pragma: no cover
    triton = None

BLOCK = 4096


def available() -> bool:
    return triton is not None


if triton is not None:                  # pragma: no cover - compiled on a GPU machine only
    @triton.jit
    def _apply(logits_ptr, mask_ptr, rows_ptr, vocab, words, logits_stride, mask_stride,
               HAS_ROWS: tl.constexpr, BLOCK: tl.constexpr):
        r = tl.program_id(0)
        if HAS_ROWS:
            row = tl.load(rows_ptr + r).to(tl.int64)
        else:
            row = r.to(tl.int64)
        offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
        inside = offs < vocab
        word_at = offs // 32
        word = tl.load(mask_ptr + r.to(tl.int64) * mask_stride + word_at,
                       mask=inside & (word_at < words), other=0)
        clear = ((word >> (offs % 32)) & 1) == 0
        neg = tl.full([BLOCK], float("-inf"), logits_ptr.dtype.element_ty)
        tl.store(logits_ptr + row * logits_stride + offs, neg, mask=inside & clear)


def apply(logits: torch.Tensor, bitmask: torch.Tensor, indices=None) -> None:
    """Mask ``logits`` (2-D, CUDA, last dimension contiguous) in place with ``bitmask`` (2-D
    int32, on the same device): row ``i`` of the bitmask masks logits row ``indices[i]``, or
    row ``i`` when ``indices`` is None. The caller has checked the shapes."""
    bitmask = bitmask.contiguous()
    rows = bitmask.shape[0]
    vocab = logits.shape[-1]
    if indices is not None:
        idx = torch.as_tensor(list(indices), dtype=torch.int64, device=logits.device)
    else:
        idx = bitmask                   # any pointer: unread when HAS_ROWS is False
    grid = (rows, triton.cdiv(vocab, BLOCK))
    _apply[grid](logits, bitmask, idx, vocab, bitmask.shape[1], logits.stride(0),
                 bitmask.stride(0), HAS_ROWS=indices is not None, BLOCK=BLOCK)
