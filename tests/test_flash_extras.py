"""flash_attention as a drop-in for torch's SDPA: grouped-query attention, NumPy block sizes, half
precision masks kept at their size, the meta device, and a clear refusal of second derivatives."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from attnlib import flash, flash_attention

BLOCKS = {"block_size_q": 8, "block_size_k": 16}


def qkv(hq=6, hkv=2, tq=21, tk=37, e=8, dtype=torch.float64, requires_grad=False):
    gen = torch.Generator().manual_seed(0)
    shapes = ((2, hq, tq, e), (2, hkv, tk, e), (2, hkv, tk, e))
    return tuple(torch.randn(s, generator=gen, dtype=dtype).requires_grad_(requires_grad) for s in shapes)


@pytest.mark.parametrize("hkv", [1, 2, 3])  # multi-query, grouped, grouped
@pytest.mark.parametrize("is_causal", [False, True])
def test_enable_gqa_equals_torch_with_gradients(hkv, is_causal):
    query, key, value = qkv(hkv=hkv, requires_grad=True)
    out = flash_attention(query, key, value, is_causal=is_causal, enable_gqa=True, **BLOCKS)
    expected = F.scaled_dot_product_attention(query, key, value, is_causal=is_causal, enable_gqa=True)
    torch.testing.assert_close(out, expected, atol=1e-10, rtol=1e-10)
    grads = torch.autograd.grad(out.square().sum(), (query, key, value))
    expected_grads = torch.autograd.grad(expected.square().sum(), (query, key, value))
    for got, want in zip(grads, expected_grads):
        assert got.shape == want.shape  # key and value gradients in their own (B, Hkv, Tk, E)
        torch.testing.assert_close(got, want, atol=1e-9, rtol=1e-9)


def test_numpy_integers_are_block_sizes():
    query, key, value = qkv(hq=2)
    out = flash_attention(query, key, value, enable_gqa=True, block_size_q=np.int64(4), block_size_k=np.int32(5))
    torch.testing.assert_close(out, F.scaled_dot_product_attention(query, key, value, enable_gqa=True))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_a_half_precision_bias_is_not_copied_to_its_full_size(dtype, monkeypatch):
    query, key, value = (x.to(dtype) for x in qkv(hq=2, hkv=2, tq=64, tk=64))
    bias = torch.randn(64, dtype=torch.float64).to(dtype)  # (Tk,): one bias per key
    seen = {}
    apply = flash._FlashAttention.apply

    def spy(q, k, v, mask, *args):
        seen["mask_bytes"] = mask.untyped_storage().nbytes()
        seen["mask_dtype"] = mask.dtype
        return apply(q, k, v, mask, *args)

    monkeypatch.setattr(flash._FlashAttention, "apply", spy)
    out = flash_attention(query, key, value, attn_mask=bias, **BLOCKS)
    assert seen == {"mask_bytes": 64 * bias.element_size(), "mask_dtype": dtype}  # (Tk,), never (B, H, Tq, Tk)
    row = bias[None]  # (1, Tk): torch's SDPA wants at least 2-D
    expected = F.scaled_dot_product_attention(query.double(), key.double(), value.double(), attn_mask=row.double())
    torch_error = (F.scaled_dot_product_attention(query, key, value, attn_mask=row).double() - expected).abs().max()
    assert (out.double() - expected).abs().max() <= max(2 * torch_error, torch.finfo(dtype).eps)


@pytest.mark.parametrize("kwargs", [{"is_causal": True}, {"attn_mask": "bool"}, {"attn_mask": "float"}])
def test_runs_on_the_meta_device(kwargs):
    query, key, value = (x.to("meta") for x in qkv())
    if kwargs.get("attn_mask") == "bool":
        kwargs = {"attn_mask": torch.ones(21, 37, dtype=torch.bool, device="meta")}
    elif kwargs.get("attn_mask") == "float":
        kwargs = {"attn_mask": torch.zeros(37, dtype=torch.float64, device="meta")}
    out, lse = flash_attention(query, key, value, enable_gqa=True, return_lse=True, **kwargs, **BLOCKS)
    assert out.is_meta and out.shape == (2, 6, 21, 8) and lse.shape == (2, 6, 21)


def test_first_derivatives_work_and_second_derivatives_are_refused_clearly():
    query, key, value = qkv(hq=2, requires_grad=True)
    out = flash_attention(query, key, value, enable_gqa=True, **BLOCKS)
    (grad,) = torch.autograd.grad(out.sum(), query)  # first order: fine
    assert torch.isfinite(grad).all()
    out = flash_attention(query, key, value, enable_gqa=True, **BLOCKS)
    with pytest.raises(RuntimeError, match="^flash_attention has no double backward"):
        torch.autograd.grad(out.sum(), query, create_graph=True)
