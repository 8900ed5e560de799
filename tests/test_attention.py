"""attnlib.scaled_dot_product_attention and masked_softmax against PyTorch's own attention."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from attnlib import causal_mask, masked_softmax, scaled_dot_product_attention

TOL = {torch.float64: {"atol": 1e-12, "rtol": 1e-12}, torch.float32: {"atol": 1e-5, "rtol": 1e-5}}

# (query batch shape, key/value batch shape, Tq, Tk, E, Ev)
SHAPES = [
    ((), (), 1, 1, 1, 1),
    ((), (), 2, 3, 4, 4),  # seed 000's example without its (1, 1) batch
    ((2,), (2,), 5, 5, 8, 3),
    ((2, 3), (2, 3), 4, 7, 16, 5),  # (B, H, Tq, Tk), Tq != Tk
    ((3, 2), (1, 2), 6, 2, 4, 4),  # key/value broadcast over the first batch axis
]


def qkv(batch_q, batch_kv, tq, tk, e, ev, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    query = torch.randn(*batch_q, tq, e, generator=g, dtype=dtype)
    key = torch.randn(*batch_kv, tk, e, generator=g, dtype=dtype)
    value = torch.randn(*batch_kv, tk, ev, generator=g, dtype=dtype)
    return query, key, value


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("shape", SHAPES)
def test_equals_torch_without_mask(shape, dtype):
    query, key, value = qkv(*shape, dtype)
    output, weights = scaled_dot_product_attention(query, key, value)
    torch.testing.assert_close(output, F.scaled_dot_product_attention(query, key, value), **TOL[dtype])
    torch.testing.assert_close(weights.sum(-1), torch.ones_like(weights.sum(-1)), **TOL[dtype])
    torch.testing.assert_close(output, weights @ value, **TOL[dtype])


def bool_mask(shape, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(shape, generator=g) > 0.4


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize(
    "mask_shape",
    [(4, 7), (2, 3, 4, 7), (2, 1, 4, 7), (2, 1, 1, 7), (1, 7), (4, 1)],
    ids=["2-D", "4-D", "per-example", "key-padding", "row", "per-query"],
)
@pytest.mark.parametrize("kind", ["bool", "float"])
def test_equals_torch_with_masks(mask_shape, kind, dtype):
    query, key, value = qkv((2, 3), (2, 3), 4, 7, 16, 5, dtype, seed=1)
    mask = bool_mask(mask_shape, seed=2)
    if kind == "float":  # 0 where allowed, -inf where blocked: the additive form
        mask = torch.zeros(mask_shape, dtype=dtype).masked_fill(~mask, float("-inf"))
    output, weights = scaled_dot_product_attention(query, key, value, attn_mask=mask)
    expected = F.scaled_dot_product_attention(query, key, value, attn_mask=mask)
    torch.testing.assert_close(output, expected, **TOL[dtype])
    blocked = ~mask if kind == "bool" else torch.isneginf(mask)
    assert torch.all(weights.masked_select(blocked.expand_as(weights)) == 0)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_float_mask_with_finite_values_shifts_scores_like_torch(dtype):
    query, key, value = qkv((2,), (2,), 3, 5, 4, 4, dtype, seed=3)
    bias = torch.randn(3, 5, generator=torch.Generator().manual_seed(4), dtype=dtype)  # e.g. ALiBi-style
    output, _ = scaled_dot_product_attention(query, key, value, attn_mask=bias)
    torch.testing.assert_close(output, F.scaled_dot_product_attention(query, key, value, attn_mask=bias), **TOL[dtype])


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("tq,tk", [(5, 5), (3, 6), (6, 3)])
def test_is_causal_matches_torch_top_left(tq, tk, dtype):
    query, key, value = qkv((2, 2), (2, 2), tq, tk, 8, 4, dtype, seed=5)
    output, weights = scaled_dot_product_attention(query, key, value, is_causal=True)
    torch.testing.assert_close(
        output, F.scaled_dot_product_attention(query, key, value, is_causal=True), **TOL[dtype]
    )
    future = ~causal_mask(tq, tk)
    assert torch.all(weights[..., future] == 0)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("scale", [0.1, 1.0, 2.5])
def test_scale_matches_torch(scale, dtype):
    query, key, value = qkv((2,), (2,), 4, 6, 8, 3, dtype, seed=6)
    output, _ = scaled_dot_product_attention(query, key, value, scale=scale)
    expected = F.scaled_dot_product_attention(query, key, value, scale=scale)
    torch.testing.assert_close(output, expected, **TOL[dtype])


def test_default_scale_is_one_over_sqrt_e():
    query, key, value = qkv((), (), 3, 4, 9, 2, torch.float64, seed=7)
    default = scaled_dot_product_attention(query, key, value)
    explicit = scaled_dot_product_attention(query, key, value, scale=1 / math.sqrt(9))
    unscaled = scaled_dot_product_attention(query, key, value, scale=1.0)
    assert torch.equal(default[1], explicit[1])
    assert not torch.allclose(default[1], unscaled[1])


def test_reproduces_seed_000_numbers():
    # The source prints these tensors for torch.manual_seed(42) and q (1,1,2,4), k and v (1,1,3,4).
    torch.manual_seed(42)
    q, k, v = torch.randn(1, 1, 2, 4), torch.randn(1, 1, 3, 4), torch.randn(1, 1, 3, 4)
    output, weights = scaled_dot_product_attention(q, k, v)
    expected_weights = torch.tensor([[0.3710, 0.3104, 0.3187], [0.7262, 0.1073, 0.1665]])
    expected_output = torch.tensor([[0.5732, 0.4398, 0.0379, 0.4533], [1.0041, 0.5920, -0.1833, 0.6731]])
    torch.testing.assert_close(weights[0, 0], expected_weights, atol=5e-5, rtol=0)
    torch.testing.assert_close(output[0, 0], expected_output, atol=5e-5, rtol=0)


@pytest.mark.parametrize("kind", ["bool", "float"])
def test_fully_masked_query_gets_zero_weights_output_and_finite_gradients(kind):
    query, key, value = qkv((2,), (2,), 3, 4, 5, 6, torch.float64, seed=8)
    for x in (query, key, value):
        x.requires_grad_(True)
    allowed = torch.ones(2, 3, 4, dtype=torch.bool)
    allowed[0, 1] = False  # query 1 of example 0 may attend to nothing
    mask = allowed if kind == "bool" else torch.zeros(2, 3, 4, dtype=torch.float64).masked_fill(~allowed, float("-inf"))
    output, weights = scaled_dot_product_attention(query, key, value, attn_mask=mask)
    assert torch.equal(weights[0, 1], torch.zeros(4, dtype=torch.float64))
    assert torch.equal(output[0, 1], torch.zeros(6, dtype=torch.float64))
    expected = F.scaled_dot_product_attention(query, key, value, attn_mask=mask)
    torch.testing.assert_close(output, expected, **TOL[torch.float64])
    (output.square().sum() + weights.sum()).backward()
    for name, x in (("query", query), ("key", key), ("value", value)):
        assert torch.isfinite(x.grad).all(), name
    assert torch.equal(query.grad[0, 1], torch.zeros(5, dtype=torch.float64))


def test_masked_softmax_rows_sum_to_one_and_masked_entries_are_exactly_zero():
    scores = torch.tensor([[1.0, 2.0, 3.0], [5.0, -1.0, 0.5], [0.0, 0.0, 0.0]])
    mask = torch.tensor([[True, True, False], [False, False, False], [True, True, True]])
    weights = masked_softmax(scores, mask)
    torch.testing.assert_close(weights[0, :2], torch.softmax(scores[0, :2], -1))
    assert weights[0, 2] == 0
    assert torch.equal(weights[1], torch.zeros(3))
    torch.testing.assert_close(weights[2], torch.full((3,), 1 / 3))


def test_masked_softmax_treats_minus_inf_scores_as_masked():
    scores = torch.tensor([[float("-inf"), float("-inf")], [float("-inf"), 0.0]])
    weights = masked_softmax(scores)
    assert torch.equal(weights, torch.tensor([[0.0, 0.0], [0.0, 1.0]]))
    assert torch.isnan(torch.softmax(scores, -1)[0]).all(), "plain softmax gives NaN on this row"


def test_masked_softmax_other_dim_and_no_mask_equals_torch_softmax():
    scores = torch.randn(2, 3, 4, generator=torch.Generator().manual_seed(9))
    torch.testing.assert_close(masked_softmax(scores), torch.softmax(scores, -1))
    torch.testing.assert_close(masked_softmax(scores, dim=1), torch.softmax(scores, 1))


def test_inputs_are_not_modified():
    query, key, value = qkv((2,), (2,), 3, 4, 5, 6, torch.float32, seed=10)
    mask = bool_mask((2, 3, 4), seed=11)
    before = [t.clone() for t in (query, key, value, mask)]
    scaled_dot_product_attention(query, key, value, attn_mask=mask)
    for b, t in zip(before, (query, key, value, mask)):
        assert torch.equal(b, t)


def test_attn_mask_with_is_causal_raises_like_torch():
    query, key, value = qkv((), (), 2, 2, 2, 2, torch.float32)
    with pytest.raises(ValueError, match="attn_mask and is_causal"):
        scaled_dot_product_attention(query, key, value, attn_mask=torch.ones(2, 2, dtype=torch.bool), is_causal=True)
    with pytest.raises(RuntimeError):  # torch refuses it too
        F.scaled_dot_product_attention(query, key, value, attn_mask=torch.ones(2, 2, dtype=torch.bool), is_causal=True)


def test_dropout_zeroes_weights_and_output_is_weights_times_value():
    query, key, value = qkv((4,), (4,), 6, 6, 8, 3, torch.float64, seed=12)
    torch.manual_seed(0)
    output, weights = scaled_dot_product_attention(query, key, value, dropout_p=0.5)
    assert (weights == 0).any()
    torch.testing.assert_close(output, weights @ value)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_is_computed_in_float32_and_rounded_once(dtype):
    query, key, value = (x.to(dtype) for x in qkv((2,), (2,), 5, 7, 16, 8, torch.float64, seed=13))
    mask = bool_mask((2, 5, 7), seed=14)
    output, weights = scaled_dot_product_attention(query, key, value, attn_mask=mask)
    assert output.dtype == weights.dtype == dtype
    wide_output, wide_weights = scaled_dot_product_attention(query.float(), key.float(), value.float(), attn_mask=mask)
    assert torch.equal(output, wide_output.to(dtype)) and torch.equal(weights, wide_weights.to(dtype))


def test_a_string_is_causal_is_refused_not_read_as_true():
    query, key, value = qkv((), (), 3, 3, 2, 2, torch.float32)
    for flag in ("False", 0, None):
        with pytest.raises(TypeError, match="^is_causal must be True or False"):
            scaled_dot_product_attention(query, key, value, is_causal=flag)
        with pytest.raises(TypeError):  # torch refuses them too
            F.scaled_dot_product_attention(query, key, value, is_causal=flag)
