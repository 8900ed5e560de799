"""Where torch works, attnlib works: float16 near its limit, NumPy scalars, empty and meta
tensors, forward-mode AD, broadcast batches with masks, and copies that draw no random numbers.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as fwAD
import torch.nn.functional as F
from torch import nn

from attnlib import (
    AdditiveAttention,
    MultiHeadAttention,
    expand_key_mask,
    from_torch_attn_mask,
    masked_softmax,
    padding_mask,
    scaled_dot_product_attention,
)

# --- float16: the scaled score is what must fit ---------------------------------------------


def test_float16_scores_that_overflow_only_before_scaling():
    # E = 64, entries of 32: q . k = 65536 > 65504 (float16's largest) but the scaled score,
    # 65536 / 8 = 8192, fits. torch's SDPA gets it right; so must attnlib.
    q = torch.full((1, 2, 64), 32.0, dtype=torch.float16)
    k = torch.full((1, 3, 64), 32.0, dtype=torch.float16)
    k[0, 1], k[0, 2] = 31.75, 31.5  # scaled scores 8192, 8128, 8064: key 0 wins by far
    v = torch.arange(3 * 4, dtype=torch.float16).reshape(1, 3, 4)
    out, weights = scaled_dot_product_attention(q, k, v)
    assert bool(torch.isfinite(out).all()) and bool(torch.isfinite(weights).all())
    torch.testing.assert_close(weights, torch.tensor([[1.0, 0.0, 0.0]] * 2, dtype=torch.float16)[None])
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v))


@pytest.mark.parametrize("with_mask", [False, True])
def test_float16_scaled_scores_just_below_the_limit(with_mask):
    # scale 0.99: the best key scores 0.99 * 64 * 32 * 32 = 64881, just below 65504; the
    # others score thousands less, so the weights are one-hot whatever float16 rounds
    # (its spacing is 32 up there). Unscaled, 65536 overflowed to inf and gave NaN.
    q = torch.full((2, 3, 64), 32.0, dtype=torch.float16)
    k = torch.tensor([32.0, 30.0, 16.0, 8.0], dtype=torch.float16)[None, :, None].expand(2, 4, 64)
    v = torch.arange(2 * 4 * 5, dtype=torch.float16).reshape(2, 4, 5)
    mask = expand_key_mask(torch.tensor([[True] * 4, [False, True, True, True]]), ndim=3) if with_mask else None
    out, weights = scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=0.99)
    winner = [0, 1 if with_mask else 0]  # batch 1 masks key 0: key 1 wins
    expected = torch.zeros(2, 3, 4, dtype=torch.float16)
    for b, j in enumerate(winner):
        expected[b, :, j] = 1.0
    torch.testing.assert_close(weights, expected)
    torch.testing.assert_close(out, torch.stack([v[b, j] for b, j in enumerate(winner)])[:, None].expand(2, 3, 5))
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=0.99))


def test_float16_multihead_with_large_inputs_stays_finite():
    torch.manual_seed(0)
    ref = nn.MultiheadAttention(64, 1, bias=False).eval()
    with torch.no_grad():
        for w in (ref.in_proj_weight, ref.out_proj.weight):
            w.copy_(torch.eye(64).repeat(w.shape[0] // 64, 1))  # identity projections: q = k = x
    mha = MultiHeadAttention.from_torch(ref).half()
    x = torch.full((1, 2, 64), 32.0, dtype=torch.float16)
    out, weights = mha(x, x, x)
    assert bool(torch.isfinite(out).all()) and bool(torch.isfinite(weights).all())


# --- NumPy scalars are numbers; bools are not -----------------------------------------------


def small_qkv(*batch: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(1)
    return tuple(torch.randn(*batch, t, 4, generator=gen) for t in (3, 5, 5))


@pytest.mark.parametrize("scale", [np.float32(0.5), np.float64(0.5), np.int64(2)])
def test_numpy_scale_is_a_valid_scale(scale):
    q, k, v = small_qkv(2)
    out, _ = scaled_dot_product_attention(q, k, v, scale=scale)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, scale=float(scale)))


def test_numpy_dropout_is_a_valid_probability():
    q, k, v = small_qkv(2)
    torch.manual_seed(3)
    out, _ = scaled_dot_product_attention(q, k, v, dropout_p=np.float32(0.25))
    torch.manual_seed(3)
    expected, _ = scaled_dot_product_attention(q, k, v, dropout_p=0.25)
    torch.testing.assert_close(out, expected)
    assert MultiHeadAttention(4, 2, dropout=np.float32(0.25)).dropout == 0.25
    assert type(MultiHeadAttention(4, 2, dropout=np.float32(0.25)).dropout) is float
    assert AdditiveAttention(4, 4, 3, dropout=np.float64(0.5)).dropout.p == 0.5


@pytest.mark.parametrize("bad", [False, True, np.bool_(False)])
def test_bool_dropout_p_is_refused(bad):
    q, k, v = small_qkv(2)
    with pytest.raises(ValueError, match=r"dropout_p must be a float in \[0, 1\)"):
        scaled_dot_product_attention(q, k, v, dropout_p=bad)


@pytest.mark.parametrize("bad", [True, False, np.bool_(True)])
def test_bool_scale_is_refused(bad):
    q, k, v = small_qkv(2)
    with pytest.raises(TypeError, match="scale must be a float or None, got bool"):
        scaled_dot_product_attention(q, k, v, scale=bad)


def test_scale_zero_and_negative_are_numbers_like_in_torch():
    q, k, v = small_qkv(2)
    for scale in (0.0, -0.5, 3):
        torch.testing.assert_close(scaled_dot_product_attention(q, k, v, scale=scale)[0],
                                   F.scaled_dot_product_attention(q, k, v, scale=scale))


# --- E = 0 and empty inputs ---------------------------------------------------------------------


def test_zero_width_without_a_scale_raises_a_value_error():
    q, k, v = (x[..., :0] for x in small_qkv(2))
    with pytest.raises(ValueError) as info:
        scaled_dot_product_attention(q, k, v)
    assert type(info.value) is ValueError
    message = str(info.value)
    assert "last dimension E of at least 1" in message and "query (2, 3, 0)" in message and "scale=" in message


def test_zero_width_with_a_scale_attends_uniformly():
    q, k, _ = (x[..., :0] for x in small_qkv(2))
    v = small_qkv(2)[2]
    out, weights = scaled_dot_product_attention(q, k, v, scale=1.0)
    torch.testing.assert_close(weights, torch.full((2, 3, 5), 0.2))
    torch.testing.assert_close(out, v.mean(dim=1, keepdim=True).expand(2, 3, 4))


@pytest.mark.parametrize("b,tq,tk", [(0, 3, 5), (2, 0, 5), (0, 0, 0)])
def test_empty_batch_or_queries_give_empty_results_like_torch(b, tq, tk):
    gen = torch.Generator().manual_seed(0)
    q, k, v = torch.randn(b, tq, 4, generator=gen), torch.randn(b, tk, 4, generator=gen), torch.randn(b, tk, 6)
    for mask in (None, torch.ones(b, tq, tk, dtype=torch.bool)):
        out, weights = scaled_dot_product_attention(q, k, v, attn_mask=mask)
        assert out.shape == (b, tq, 6) and weights.shape == (b, tq, tk)
        torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=mask))


def test_no_keys_gives_zero_weights_and_zero_output():
    # Tk = 0: every query has all its (zero) keys masked, so the output is 0 as for a
    # fully masked row, not NaN.
    q, k, v = torch.randn(2, 3, 4), torch.randn(2, 0, 4), torch.randn(2, 0, 6)
    out, weights = scaled_dot_product_attention(q, k, v)
    assert weights.shape == (2, 3, 0) and torch.equal(out, torch.zeros(2, 3, 6))
    assert masked_softmax(torch.randn(2, 0)).shape == (2, 0)


@pytest.mark.parametrize("b,tq,tk", [(0, 3, 5), (2, 0, 5), (2, 3, 0)])
def test_modules_accept_empty_inputs(b, tq, tk):
    torch.manual_seed(0)
    mha, att = MultiHeadAttention(4, 2).eval(), AdditiveAttention(4, 4, 3).eval()
    q, k = torch.randn(b, tq, 4), torch.randn(b, tk, 4)
    key_mask = torch.ones(b, tk, dtype=torch.bool)
    out, weights = mha(q, k, k, key_mask=key_mask)
    assert out.shape == (b, tq, 4) and weights.shape == (b, 2, tq, tk)
    assert not bool(out.isnan().any())
    out, weights = att(q, k, k, key_mask=key_mask)
    assert out.shape == (b, tq, 4) and weights.shape == (b, tq, tk)
    assert not bool(out.isnan().any())


# --- masks with batch broadcasting between query and key ---------------------------------------


@pytest.mark.parametrize("kind", ["bool", "float"])
def test_mask_with_batch_broadcast_between_query_and_key_matches_torch(kind):
    gen = torch.Generator().manual_seed(2)
    q = torch.randn(2, 3, 4, 8, generator=gen)  # (B=2, H=3, Tq, E)
    k, v = torch.randn(1, 3, 5, 8, generator=gen), torch.randn(1, 3, 5, 6, generator=gen)  # shared by the batch
    mask = expand_key_mask(padding_mask([5, 2], 5))  # (B, 1, 1, Tk)
    if kind == "float":
        mask = torch.zeros(mask.shape).masked_fill(~mask, float("-inf"))
    out, weights = scaled_dot_product_attention(q, k, v, attn_mask=mask)
    expected = F.scaled_dot_product_attention(q, k.expand(2, 3, 5, 8), v.expand(2, 3, 5, 6), attn_mask=mask)
    assert out.shape == (2, 3, 4, 6) and weights.shape == (2, 3, 4, 5)
    torch.testing.assert_close(out, expected)
    assert bool((weights[1, ..., 2:] == 0).all())


def test_mask_with_the_key_batch_larger_than_the_query_batch():
    gen = torch.Generator().manual_seed(4)
    q = torch.randn(1, 3, 4, generator=gen)  # one query set shared by both key sets
    k, v = torch.randn(2, 5, 4, generator=gen), torch.randn(2, 5, 6, generator=gen)
    mask = expand_key_mask(padding_mask([5, 3], 5), ndim=3)  # (B, 1, Tk)
    out, weights = scaled_dot_product_attention(q, k, v, attn_mask=mask)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q.expand(2, 3, 4), k, v, attn_mask=mask))
    assert weights.shape == (2, 3, 5)


# --- meta tensors and forward-mode AD -----------------------------------------------------------


@pytest.mark.parametrize("mask", [
    torch.zeros(2, 3, 5, device="meta"),  # float: no value can be read
    torch.ones(2, 1, 5, dtype=torch.bool, device="meta"),
])
def test_meta_tensors_with_a_mask_give_shapes(mask):
    q, k, v = (x.to("meta") for x in small_qkv(2))
    out, weights = scaled_dot_product_attention(q, k, v, attn_mask=mask)
    assert out.is_meta and out.shape == (2, 3, 4) and weights.shape == (2, 3, 5)


def test_meta_modules_with_masks_give_shapes():
    mha = MultiHeadAttention(4, 2).to("meta")
    x = torch.empty(2, 3, 4, device="meta")
    out, weights = mha(x, x, x, attn_mask=torch.zeros(3, 3, device="meta"),
                       key_mask=torch.ones(2, 3, dtype=torch.bool, device="meta"))
    assert out.shape == (2, 3, 4) and weights.shape == (2, 2, 3, 3)


def reference_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


@pytest.mark.parametrize("with_mask", [False, True])
def test_forward_mode_ad_gives_the_jacobian_vector_product(with_mask):
    gen = torch.Generator().manual_seed(5)
    q, k, v = (torch.randn(2, t, 4, generator=gen, dtype=torch.float64) for t in (3, 5, 5))
    tangents = [torch.randn(x.shape, generator=gen, dtype=torch.float64) for x in (q, k, v)]
    mask = expand_key_mask(padding_mask([5, 2], 5), ndim=3) if with_mask else None
    with fwAD.dual_level():
        duals = [fwAD.make_dual(x, t) for x, t in zip((q, k, v), tangents)]
        out, weights = scaled_dot_product_attention(*duals, attn_mask=mask)
        primal, tangent = fwAD.unpack_dual(out)
    expected, expected_tangent = torch.func.jvp(lambda *x: reference_attention(*x, mask), (q, k, v), tuple(tangents))
    torch.testing.assert_close(primal, expected)
    torch.testing.assert_close(tangent, expected_tangent)


def test_forward_mode_ad_through_the_modules():
    torch.manual_seed(0)
    mha = MultiHeadAttention(4, 2).double().eval()
    x, t = torch.randn(2, 3, 4, dtype=torch.float64), torch.randn(2, 3, 4, dtype=torch.float64)
    with fwAD.dual_level():
        out, _ = mha(fwAD.make_dual(x, t), x, x)
        tangent = fwAD.unpack_dual(out).tangent
    eps = 1e-6
    finite = (mha(x + eps * t, x, x)[0] - mha(x - eps * t, x, x)[0]) / (2 * eps)
    torch.testing.assert_close(tangent, finite, atol=1e-6, rtol=1e-5)


def test_weights_do_not_share_memory_with_anything_autograd_keeps():
    # The memory-saving path (weights computed in the scores' memory) is taken only
    # without autograd; with it, the backward pass still gives torch's gradients.
    q, k, v = (x.double().requires_grad_() for x in small_qkv(2))
    out, _ = scaled_dot_product_attention(q, k, v)
    out.sum().backward()
    grads = [x.grad.clone() for x in (q, k, v)]
    for x in (q, k, v):
        x.grad = None
    F.scaled_dot_product_attention(q, k, v).sum().backward()
    for got, x in zip(grads, (q, k, v)):
        torch.testing.assert_close(got, x.grad)


# --- from_torch and the global random generator ---------------------------------------------------


def test_from_torch_draws_nothing_from_the_global_generator():
    ref = nn.MultiheadAttention(8, 2, kdim=4, vdim=6, dropout=0.25, batch_first=True)
    torch.manual_seed(123)
    expected = torch.rand(5)
    torch.manual_seed(123)
    copy = MultiHeadAttention.from_torch(ref)
    assert torch.equal(torch.rand(5), expected)
    assert copy.dropout == 0.25 and copy.training  # dropout and mode are kept
    assert all(not p.is_meta for p in copy.parameters())
    x, k, v = torch.randn(2, 3, 8), torch.randn(2, 5, 4), torch.randn(2, 5, 6)
    ref.eval(), copy.eval()
    torch.testing.assert_close(copy(x, k, v)[0], ref(x, k, v, need_weights=False)[0])


def test_from_torch_keeps_dtype_and_eval_mode():
    ref = nn.MultiheadAttention(8, 2, dropout=0.5).double().eval()
    copy = MultiHeadAttention.from_torch(ref)
    assert copy.dropout == 0.5 and not copy.training
    assert {p.dtype for p in copy.parameters()} == {torch.float64}


# --- converters: num_heads ---------------------------------------------------------------------------


@pytest.mark.parametrize("num_heads", [0, -2, 2.0, True])
def test_from_torch_attn_mask_with_a_bad_num_heads(num_heads):
    with pytest.raises(ValueError) as info:
        from_torch_attn_mask(torch.zeros(4, 3, 3, dtype=torch.bool), num_heads)
    assert type(info.value) is ValueError
    assert "num_heads, a positive int" in str(info.value) and f"num_heads={num_heads!r}" in str(info.value)


def test_multihead_attn_mask_that_is_not_a_tensor():
    mha = MultiHeadAttention(4, 2)
    x = torch.randn(2, 3, 4)
    with pytest.raises(TypeError, match="attn_mask must be a torch.Tensor, got list"):
        mha(x, x, x, attn_mask=[[True] * 3] * 3)


def test_meta_modules_with_is_causal_and_a_key_mask():
    mha, att = MultiHeadAttention(4, 2).to("meta"), AdditiveAttention(4, 4, 3).to("meta")
    x, key_mask = torch.empty(2, 3, 4, device="meta"), torch.ones(2, 3, dtype=torch.bool, device="meta")
    out, weights = mha(x, x, x, is_causal=True, key_mask=key_mask)
    assert out.is_meta and weights.shape == (2, 2, 3, 3)
    out, weights = att(x, x, x, attn_mask=torch.zeros(3, 3, device="meta"), key_mask=key_mask)
    assert out.is_meta and weights.shape == (2, 3, 3)


def test_from_torch_of_a_meta_module_stays_on_meta():
    copy = MultiHeadAttention.from_torch(nn.MultiheadAttention(8, 2, device="meta"))
    assert {p.device.type for p in copy.parameters()} == {"meta"}


def test_meta_inputs_with_is_causal_build_the_mask_on_their_device():
    q, k, v = (x.to("meta") for x in small_qkv(2))
    out, weights = scaled_dot_product_attention(q, k, v, is_causal=True)
    assert out.is_meta and weights.shape == (2, 3, 5)


def test_dropout_zero_draws_no_random_numbers():
    q, k, v = small_qkv(2)
    torch.manual_seed(7)
    expected = torch.rand(3)
    torch.manual_seed(7)
    scaled_dot_product_attention(q, k, v, dropout_p=0.0)
    assert torch.equal(torch.rand(3), expected)
