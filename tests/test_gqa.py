"""Grouped-query and multi-query attention: attnlib's enable_gqa against torch's."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import attnlib as A


def make(hq, hkv, tq=5, tk=7, e=4, ev=3, b=2, dtype=torch.float64, seed=0):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(b, hq, tq, e, generator=g, dtype=dtype)
    k = torch.randn(b, hkv, tk, e, generator=g, dtype=dtype)
    v = torch.randn(b, hkv, tk, ev, generator=g, dtype=dtype)
    return q, k, v


@pytest.mark.parametrize("hq,hkv", [(6, 6), (6, 3), (6, 2), (6, 1), (9, 3), (4, 2)])
@pytest.mark.parametrize("dtype,tol", [(torch.float64, 1e-12), (torch.float32, 1e-5)])
def test_equals_torch_enable_gqa(hq, hkv, dtype, tol):
    q, k, v = make(hq, hkv, dtype=dtype)
    out, weights = A.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    expected = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    torch.testing.assert_close(out, expected, rtol=tol, atol=tol)
    assert weights.shape == (2, hq, 5, 7)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, hq, 5, dtype=dtype))


@pytest.mark.parametrize("kind", ["causal", "bool", "float", "bottom_right"])
def test_equals_torch_with_masks(kind):
    q, k, v = make(6, 2, tq=4, tk=6)
    torch.manual_seed(1)
    kwargs = {}
    if kind == "causal":
        kwargs = {"is_causal": True}
    elif kind == "bool":
        mask = torch.rand(2, 1, 4, 6) > 0.3
        mask[..., 0] = True
        kwargs = {"attn_mask": mask}
    elif kind == "float":
        kwargs = {"attn_mask": torch.randn(2, 6, 4, 6, dtype=torch.float64)}
    else:
        kwargs = {"attn_mask": A.causal_mask(4, 6, align="bottom_right")}
    out, _ = A.scaled_dot_product_attention(q, k, v, enable_gqa=True, **kwargs)
    expected = F.scaled_dot_product_attention(q, k, v, enable_gqa=True, **kwargs)
    torch.testing.assert_close(out, expected, rtol=1e-12, atol=1e-12)


def test_query_head_h_uses_key_value_head_h_div_group():
    # Each key/value head holds a constant value: query head h must read head h // (Hq / Hkv).
    # Tiling the heads (repeat) instead of interleaving them (repeat_interleave) reads h % Hkv.
    q, k, _ = make(6, 3)
    v = torch.arange(3, dtype=torch.float64).reshape(1, 3, 1, 1).expand(2, 3, 7, 3)
    out, _ = A.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    heads_read = out[..., 0, 0]  # (B, Hq): the value each query head got
    expected = torch.tensor([0, 0, 1, 1, 2, 2], dtype=torch.float64).expand(2, 6)
    torch.testing.assert_close(heads_read, expected)


def test_gradients_equal_torch_and_key_value_gradients_keep_their_heads():
    q, k, v = make(6, 2)
    for x in (q, k, v):
        x.requires_grad_(True)
    out, _ = A.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    grads = torch.autograd.grad(out.square().sum(), (q, k, v))
    expected_out = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    expected = torch.autograd.grad(expected_out.square().sum(), (q, k, v))
    assert grads[1].shape == k.shape and grads[2].shape == v.shape
    for got, want in zip(grads, expected, strict=True):
        torch.testing.assert_close(got, want, rtol=1e-10, atol=1e-10)


def test_multi_query_broadcasts_without_the_flag_too():
    q, k, v = make(6, 1)
    out, _ = A.scaled_dot_product_attention(q, k, v)  # one key/value head broadcasts
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, enable_gqa=True))


def test_inputs_not_modified():
    q, k, v = make(6, 3)
    copies = [x.clone() for x in (q, k, v)]
    A.scaled_dot_product_attention(q, k, v, enable_gqa=True, is_causal=True)
    for x, c in zip((q, k, v), copies, strict=True):
        assert torch.equal(x, c)
