"""toolc/integrations/torch.py: apply_token_bitmask_inplace against a numpy reference."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from toolc.integrations.torch import apply_token_bitmask_inplace, unpack_bitmask  # noqa: E402


def reference(logits: np.ndarray, bitmask: np.ndarray) -> np.ndarray:
    out = logits.copy()
    width = logits.shape[-1]
    bits = np.unpackbits(bitmask.view(np.uint8), axis=-1, bitorder="little").astype(bool)
    allowed = np.zeros(logits.shape, dtype=bool)
    n = min(width, bits.shape[-1])
    allowed[..., :n] = bits[..., :n]
    out[~allowed] = -np.inf
    return out


def random_mask(rng, rows, words):
    return rng.integers(-2**31, 2**31, size=(rows, words), dtype=np.int64).astype(np.int32)


@pytest.mark.parametrize("width,words", [(64, 2), (100, 4), (70, 2), (151936, 4748)])
def test_matches_the_reference_for_batches(width, words):
    rng = np.random.default_rng(width)
    logits = rng.standard_normal((3, width)).astype(np.float32)
    mask = random_mask(rng, 3, words)
    t = torch.from_numpy(logits.copy())
    apply_token_bitmask_inplace(t, mask)
    np.testing.assert_array_equal(t.numpy(), reference(logits, mask))


def test_one_row_and_torch_bitmask():
    rng = np.random.default_rng(1)
    logits = rng.standard_normal(96).astype(np.float32)
    mask = random_mask(rng, 1, 3)[0]
    t = torch.from_numpy(logits.copy())
    assert apply_token_bitmask_inplace(t, torch.from_numpy(mask)) is t
    np.testing.assert_array_equal(t.numpy(), reference(logits, mask))


def test_logits_wider_than_the_mask_are_masked():
    logits = torch.zeros(2, 40)
    mask = np.full((2, 1), -1, dtype=np.int32)          # all 32 bits allowed
    apply_token_bitmask_inplace(logits, mask)
    assert torch.isfinite(logits[:, :32]).all()
    assert torch.isneginf(logits[:, 32:]).all()


def test_indices_mask_only_those_rows():
    rng = np.random.default_rng(2)
    logits = rng.standard_normal((4, 64)).astype(np.float32)
    mask = random_mask(rng, 2, 2)
    t = torch.from_numpy(logits.copy())
    apply_token_bitmask_inplace(t, mask, indices=[3, 1])
    want = logits.copy()
    want[3] = reference(logits[3], mask[0])
    want[1] = reference(logits[1], mask[1])
    np.testing.assert_array_equal(t.numpy(), want)


def test_bit_31_and_sign():
    mask = np.array([np.int32(-2**31)], dtype=np.int32)   # only bit 31
    assert unpack_bitmask(mask, 32).nonzero().flatten().tolist() == [31]


def test_bad_shapes_and_dtypes_raise():
    with pytest.raises(TypeError):
        apply_token_bitmask_inplace(torch.zeros(32), torch.zeros(1, dtype=torch.int64))
    with pytest.raises(ValueError):
        apply_token_bitmask_inplace(torch.zeros(2, 32), np.zeros((3, 1), dtype=np.int32))


def test_an_artifact_mask(weather_artifact):
    m = weather_artifact.matcher()
    logits = torch.zeros(weather_artifact.logits_size)
    apply_token_bitmask_inplace(logits, m.mask())
    allowed = torch.isfinite(logits).nonzero().flatten().numpy()
    np.testing.assert_array_equal(allowed, m.allowed_token_ids())


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device here")
def test_cuda_matches_cpu():
    rng = np.random.default_rng(3)
    logits = rng.standard_normal((2, 151936)).astype(np.float32)
    mask = random_mask(rng, 2, 4748)
    cpu = torch.from_numpy(logits.copy())
    gpu = torch.from_numpy(logits.copy()).cuda()
    apply_token_bitmask_inplace(cpu, mask)
    apply_token_bitmask_inplace(gpu, torch.from_numpy(mask).cuda())
    assert torch.equal(cpu, gpu.cpu())
