"""toolc/integrations/torch.py: apply_token_bitmask_inplace against a numpy reference.

Every test that masks runs on each device torch has here: the CPU always, CUDA where a GPU is
(skipped, with that reason, elsewhere). On CUDA the logits live on the GPU, and the bitmask is
given both as a numpy array (as ``Matcher.mask()`` returns it) and as a CUDA tensor.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from toolc.integrations.torch import apply_token_bitmask_inplace, unpack_bitmask  # noqa: E402

CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device here")
DEVICES = ["cpu", pytest.param("cuda", marks=CUDA)]


def on(device, logits: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(logits.copy()).to(device)


def back(t: torch.Tensor) -> np.ndarray:
    return t.float().cpu().numpy()


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


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("width,words", [(64, 2), (100, 4), (70, 2), (151936, 4748)])
def test_matches_the_reference_for_batches(device, width, words):
    rng = np.random.default_rng(width)
    logits = rng.standard_normal((3, width)).astype(np.float32)
    mask = random_mask(rng, 3, words)
    t = on(device, logits)
    apply_token_bitmask_inplace(t, mask)
    np.testing.assert_array_equal(back(t), reference(logits, mask))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("rows", [1, 256])
def test_a_serving_batch_with_the_mask_already_on_the_device(device, rows):
    """256 rows of Qwen3's 151,936 logits, the bitmask a tensor on the logits' device."""
    rng = np.random.default_rng(rows)
    logits = rng.standard_normal((rows, 151936)).astype(np.float32)
    mask = random_mask(rng, rows, 4748)
    t = on(device, logits)
    assert apply_token_bitmask_inplace(t, torch.from_numpy(mask).to(device)) is t
    np.testing.assert_array_equal(back(t), reference(logits, mask))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_logits(device, dtype):
    rng = np.random.default_rng(5)
    logits = rng.standard_normal((2, 4000)).astype(np.float32)
    mask = random_mask(rng, 2, 125)
    t = torch.from_numpy(logits.copy()).to(device=device, dtype=dtype)
    want = reference(t.float().cpu().numpy(), mask)
    apply_token_bitmask_inplace(t, mask)
    assert t.dtype == dtype
    np.testing.assert_array_equal(back(t), want)


@pytest.mark.parametrize("device", DEVICES)
def test_one_row_and_torch_bitmask(device):
    rng = np.random.default_rng(1)
    logits = rng.standard_normal(96).astype(np.float32)
    mask = random_mask(rng, 1, 3)[0]
    t = on(device, logits)
    assert apply_token_bitmask_inplace(t, torch.from_numpy(mask)) is t
    np.testing.assert_array_equal(back(t), reference(logits, mask))


@pytest.mark.parametrize("device", DEVICES)
def test_logits_wider_than_the_mask_are_masked(device):
    logits = torch.zeros(2, 40, device=device)
    mask = np.full((2, 1), -1, dtype=np.int32)          # all 32 bits allowed
    apply_token_bitmask_inplace(logits, mask)
    assert torch.isfinite(logits[:, :32]).all()
    assert torch.isneginf(logits[:, 32:]).all()


@pytest.mark.parametrize("device", DEVICES)
def test_indices_mask_only_those_rows(device):
    rng = np.random.default_rng(2)
    logits = rng.standard_normal((4, 64)).astype(np.float32)
    mask = random_mask(rng, 2, 2)
    t = on(device, logits)
    apply_token_bitmask_inplace(t, mask, indices=[3, 1])
    want = logits.copy()
    want[3] = reference(logits[3], mask[0])
    want[1] = reference(logits[1], mask[1])
    np.testing.assert_array_equal(back(t), want)


def test_bit_31_and_sign():
    mask = np.array([np.int32(-2**31)], dtype=np.int32)   # only bit 31
    assert unpack_bitmask(mask, 32).nonzero().flatten().tolist() == [31]


@pytest.mark.parametrize("device", DEVICES)
def test_bad_shapes_and_dtypes_raise(device):
    with pytest.raises(TypeError):
        apply_token_bitmask_inplace(torch.zeros(32, device=device),
                                    torch.zeros(1, dtype=torch.int64))
    with pytest.raises(ValueError):
        apply_token_bitmask_inplace(torch.zeros(2, 32, device=device),
                                    np.zeros((3, 1), dtype=np.int32))
    with pytest.raises(ValueError):
        apply_token_bitmask_inplace(torch.zeros(32, device=device),
                                    np.zeros((2, 1), dtype=np.int32))
    with pytest.raises(ValueError):
        apply_token_bitmask_inplace(torch.zeros(32, device=device),
                                    np.zeros(1, dtype=np.int32), indices=[0])


@pytest.mark.parametrize("device", DEVICES)
def test_an_artifact_mask(weather_artifact, device):
    m = weather_artifact.matcher()
    logits = torch.zeros(weather_artifact.logits_size, device=device)
    apply_token_bitmask_inplace(logits, m.mask())
    allowed = torch.isfinite(logits).nonzero().flatten().cpu().numpy()
    np.testing.assert_array_equal(allowed, m.allowed_token_ids())


@pytest.mark.parametrize("device", DEVICES)
def test_an_artifact_batch_filled_by_the_runtime(weather_artifact, device):
    """Matchers at different states, their masks filled into one bitmask by the runtime's
    batch path, applied to a batch of logits on the device: each row allows exactly its
    matcher's tokens."""
    from toolc.runtime import fill_next_token_bitmask
    rng = np.random.default_rng(7)
    matchers = []
    for i in range(8):
        m = weather_artifact.matcher()
        for _ in range(i * 3):
            ids = m.allowed_token_ids()
            if m.is_terminated() or not len(ids):
                break
            m.advance(int(rng.choice(ids)))
        matchers.append(m)
    words = -(-weather_artifact.logits_size // 32)
    bitmask = np.zeros((len(matchers), words), dtype=np.int32)
    fill_next_token_bitmask(matchers, bitmask)
    logits = torch.zeros(len(matchers), weather_artifact.logits_size, device=device)
    apply_token_bitmask_inplace(logits, torch.from_numpy(bitmask).to(device))
    for row, m in zip(logits, matchers):
        allowed = torch.isfinite(row).nonzero().flatten().cpu().numpy()
        np.testing.assert_array_equal(allowed, m.allowed_token_ids())


@CUDA
def test_cuda_matches_cpu():
    rng = np.random.default_rng(3)
    logits = rng.standard_normal((2, 151936)).astype(np.float32)
    mask = random_mask(rng, 2, 4748)
    cpu = torch.from_numpy(logits.copy())
    gpu = torch.from_numpy(logits.copy()).cuda()
    apply_token_bitmask_inplace(cpu, mask)
    apply_token_bitmask_inplace(gpu, torch.from_numpy(mask).cuda())
    assert torch.equal(cpu, gpu.cpu())


def _cases(rng):
    """(logits, bitmask, indices) triples that cover every shape the helper takes."""
    yield rng.standard_normal(151936).astype(np.float32), random_mask(rng, 1, 4748)[0], None
    yield rng.standard_normal((5, 1000)).astype(np.float32), random_mask(rng, 1, 32)[0], None
    yield rng.standard_normal((5, 1000)).astype(np.float32), random_mask(rng, 5, 30), None
    yield rng.standard_normal((6, 4100)).astype(np.float32), random_mask(rng, 3, 129), [5, 0, 2]
    yield rng.standard_normal((6, 4100)).astype(np.float32), random_mask(rng, 1, 129)[0], [1, 4]
    yield rng.standard_normal((256, 151936)).astype(np.float32), random_mask(rng, 256, 4748), None


@CUDA
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_the_cuda_kernel_and_the_torch_path_agree(monkeypatch, dtype):
    """On a GPU the Triton kernel (where Triton imports) and the torch path give the same
    logits for every shape; a strided (non-contiguous) logits tensor takes the torch path."""
    import toolc.integrations.torch as helper
    if helper._kernel() is None:
        pytest.skip("Triton does not import here")
    rng = np.random.default_rng(11)
    for logits, mask, indices in _cases(rng):
        a = torch.from_numpy(logits).to("cuda", dtype)
        b = a.clone()
        monkeypatch.setattr(helper, "USE_TRITON", True)
        apply_token_bitmask_inplace(a, mask, indices=indices)
        monkeypatch.setattr(helper, "USE_TRITON", False)
        apply_token_bitmask_inplace(b, mask, indices=indices)
        assert torch.equal(a, b)
        want = logits.copy()
        rows = want if want.ndim == 2 else want[None]
        for r, row in enumerate(indices if indices is not None else range(len(rows))):
            m = mask if mask.ndim == 1 else mask[r]
            rows[row] = reference(rows[row], m)
        np.testing.assert_array_equal(back(a), reference_cast(want, dtype))
    monkeypatch.setattr(helper, "USE_TRITON", True)
    wide = torch.zeros(4, 64, device="cuda", dtype=dtype)[:, ::2]      # stride 2
    apply_token_bitmask_inplace(wide, np.full((4, 1), 1, dtype=np.int32))
    assert torch.isfinite(wide[:, 0]).all() and torch.isneginf(wide[:, 1:]).all()


def reference_cast(want: np.ndarray, dtype) -> np.ndarray:
    return torch.from_numpy(want).to(dtype).float().numpy()
