"""split_heads, merge_heads and MultiHeadAttention against a per-head loop and torch's own module."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from attnlib import (
    MultiHeadAttention,
    causal_mask,
    from_key_padding_mask,
    from_torch_attn_mask,
    merge_heads,
    padding_mask,
    split_heads,
)

TOL = {torch.float32: {"atol": 1e-6, "rtol": 1e-6}, torch.float64: {"atol": 1e-12, "rtol": 1e-12}}
SHAPES = [(2, 3, 6, 2), (2, 3, 6, 3), (1, 5, 8, 4), (3, 4, 12, 6), (2, 7, 4, 1), (2, 2, 9, 3)]  # (B, T, E, H)


def buggy_merge(x: torch.Tensor) -> torch.Tensor:
    """The classic mistake: reshape (B, H, T, Dh) to (B, T, E) without moving H back first."""
    b, h, t, dh = x.shape
    return x.reshape(b, t, h * dh)


# ---------------------------------------------------------------- split_heads / merge_heads


@pytest.mark.parametrize("b, t, e, h", SHAPES)
def test_split_then_merge_is_the_identity(b, t, e, h):
    x = torch.randn(b, t, e, generator=torch.Generator().manual_seed(0))
    heads = split_heads(x, h)
    assert heads.shape == (b, h, t, e // h)
    torch.testing.assert_close(merge_heads(heads), x, atol=0, rtol=0)


@pytest.mark.parametrize("b, t, e, h", SHAPES)
def test_head_h_holds_features_h_dh_to_h_plus_1_dh(b, t, e, h):
    x = torch.randn(b, t, e, generator=torch.Generator().manual_seed(1))
    dh = e // h
    heads = split_heads(x, h)
    for i in range(h):
        torch.testing.assert_close(heads[:, i], x[..., i * dh : (i + 1) * dh], atol=0, rtol=0)


@pytest.mark.parametrize("b, t, e, h", [s for s in SHAPES if s[1] > 1 and s[3] > 1])
def test_merge_without_transpose_keeps_the_shape_but_breaks_the_round_trip(b, t, e, h):
    x = torch.randn(b, t, e, generator=torch.Generator().manual_seed(2))
    wrong = buggy_merge(split_heads(x, h))
    assert wrong.shape == x.shape  # the shape check cannot see the bug ...
    assert not torch.equal(wrong, x)  # ... the round trip can
    torch.testing.assert_close(merge_heads(split_heads(x, h)), x, atol=0, rtol=0)


def test_merge_without_transpose_sends_token_features_to_other_tokens():
    x = torch.arange(3)[None, :, None] * 10 + torch.arange(4)  # x[0, t, e] = 10 t + e, (1, 3, 4)
    token_of = buggy_merge(split_heads(x, 2)) // 10  # which token each output feature came from
    assert token_of.tolist() == [[[0, 0, 1, 1], [2, 2, 0, 0], [1, 1, 2, 2]]]
    assert (merge_heads(split_heads(x, 2)) // 10).tolist() == [[[0] * 4, [1] * 4, [2] * 4]]


def test_split_and_merge_accept_non_contiguous_input():
    x = torch.randn(6, 3, 2).transpose(0, 2)  # (2, 3, 6), not contiguous: a .view() would raise here
    assert not x.is_contiguous()
    torch.testing.assert_close(merge_heads(split_heads(x, 3)), x, atol=0, rtol=0)
    torch.testing.assert_close(split_heads(x, 3), split_heads(x.contiguous(), 3), atol=0, rtol=0)


def test_split_heads_errors_name_the_argument_and_shapes():
    with pytest.raises(ValueError, match=r"E \(x.shape\[-1\]\)=10 must be divisible by num_heads=3"):
        split_heads(torch.zeros(2, 3, 10), 3)
    with pytest.raises(ValueError, match=r"x must have shape \(B, T, E\), got shape \(3, 10\)"):
        split_heads(torch.zeros(3, 10), 2)
    with pytest.raises(ValueError, match="num_heads must be a positive int"):
        split_heads(torch.zeros(2, 3, 4), 0)
    with pytest.raises(ValueError, match=r"x must have shape \(B, H, T, Dh\), got shape \(2, 3, 4\)"):
        merge_heads(torch.zeros(2, 3, 4))
    with pytest.raises(TypeError, match="x must be a torch.Tensor"):
        merge_heads([[1.0]])


# ---------------------------------------------------------------- MultiHeadAttention


def loop_over_heads(mha: MultiHeadAttention, query, key, value, mask=None):
    """H single-head attentions on slices of the projection weights, concatenated, projected."""
    dh = mha.head_dim
    outputs, weights = [], []
    for h in range(mha.num_heads):
        rows = slice(h * dh, (h + 1) * dh)
        q = query @ mha.q_proj.weight[rows].T + mha.q_proj.bias[rows]  # (B, Tq, Dh)
        k = key @ mha.k_proj.weight[rows].T + mha.k_proj.bias[rows]  # (B, Tk, Dh)
        v = value @ mha.v_proj.weight[rows].T + mha.v_proj.bias[rows]  # (B, Tk, Dh)
        scores = q @ k.transpose(1, 2) / math.sqrt(dh)  # (B, Tq, Tk)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        w = torch.softmax(scores, dim=-1)
        outputs.append(w @ v)
        weights.append(w)
    concat = torch.cat(outputs, dim=-1)  # H x (B, Tq, Dh) -> (B, Tq, E)
    return concat @ mha.out_proj.weight.T + mha.out_proj.bias, torch.stack(weights, dim=1)


SIZES = [(8, 2, None, None, 4, 4), (12, 3, 5, 7, 3, 6), (6, 6, 4, 4, 5, 2)]  # (E, H, kdim, vdim, Tq, Tk)


@pytest.mark.parametrize("e, h, kdim, vdim, tq, tk", SIZES)
def test_module_equals_a_loop_over_single_heads(e, h, kdim, vdim, tq, tk):
    torch.manual_seed(0)
    mha = MultiHeadAttention(e, h, kdim=kdim, vdim=vdim).double()
    with torch.no_grad():
        for p in mha.parameters():
            p.normal_()  # nonzero biases, weights large enough that heads differ visibly
    q = torch.randn(2, tq, e, dtype=torch.float64)
    k = torch.randn(2, tk, kdim or e, dtype=torch.float64)
    v = torch.randn(2, tk, vdim or e, dtype=torch.float64)
    mask = torch.rand(2, 1, tq, tk) > 0.3
    mask[..., 0] = True  # every query keeps a key
    for m in (None, mask):
        with torch.no_grad():
            out, weights = mha(q, k, v, attn_mask=m)
            ref_out, ref_weights = loop_over_heads(mha, q, k, v, None if m is None else m[:, 0])
        assert out.shape == (2, tq, e) and weights.shape == (2, h, tq, tk)
        torch.testing.assert_close(out, ref_out, **TOL[torch.float64])
        torch.testing.assert_close(weights, ref_weights, **TOL[torch.float64])


def test_parameter_count_is_4e2_plus_4e():
    for e, h in ((8, 2), (12, 4), (512, 8)):
        assert sum(p.numel() for p in MultiHeadAttention(e, h).parameters()) == 4 * e * e + 4 * e
        assert sum(p.numel() for p in MultiHeadAttention(e, h, bias=False).parameters()) == 4 * e * e
    assert sum(p.numel() for p in MultiHeadAttention(8, 2, kdim=3, vdim=5).parameters()) == 8 * (8 + 3 + 5 + 8) + 4 * 8


def test_dropout_only_in_training_mode():
    torch.manual_seed(0)
    mha = MultiHeadAttention(8, 2, dropout=0.5)
    x = torch.randn(2, 5, 8)
    with torch.no_grad():
        _, w_train = mha(x, x, x)
        mha.eval()
        _, w_eval = mha(x, x, x)
    assert (w_train == 0).any()
    torch.testing.assert_close(w_eval.sum(-1), torch.ones(2, 2, 5))


# ---------------------------------------------------------------- against torch.nn.MultiheadAttention


def torch_mha(e, h, dtype, **kwargs):
    torch.manual_seed(0)
    m = nn.MultiheadAttention(e, h, batch_first=True, dtype=dtype, **kwargs).eval()
    with torch.no_grad():
        m.in_proj_bias.normal_()  # torch initialises the biases to zero, which would hide a bias mix-up
        m.out_proj.bias.normal_()
    return m


def assert_same(m, ours, q, k, v, torch_kwargs, our_kwargs):
    with torch.no_grad():
        ref_out, ref_w = m(q, k, v, need_weights=True, average_attn_weights=False, **torch_kwargs)
        out, w = ours(q, k, v, **our_kwargs)
    tol = TOL[q.dtype]
    torch.testing.assert_close(out, ref_out, **tol)
    torch.testing.assert_close(w, ref_w, **tol)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_self_attention_equals_torch(dtype):
    m = torch_mha(8, 2, dtype)
    ours = MultiHeadAttention.from_torch(m)
    assert ours.q_proj.weight.dtype == dtype and not ours.training
    x = torch.randn(3, 5, 8, dtype=dtype)
    assert_same(m, ours, x, x, x, {}, {})


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_cross_attention_with_other_key_and_value_widths_equals_torch(dtype):
    m = torch_mha(12, 3, dtype, kdim=5, vdim=7)
    assert not m._qkv_same_embed_dim
    ours = MultiHeadAttention.from_torch(m)
    q = torch.randn(2, 4, 12, dtype=dtype)
    k = torch.randn(2, 6, 5, dtype=dtype)
    v = torch.randn(2, 6, 7, dtype=dtype)
    assert_same(m, ours, q, k, v, {}, {})


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_key_padding_mask_equals_torch(dtype):
    m = torch_mha(8, 4, dtype)
    ours = MultiHeadAttention.from_torch(m)
    q, kv = torch.randn(3, 4, 8, dtype=dtype), torch.randn(3, 6, 8, dtype=dtype)
    kpm = torch.tensor([[False] * 6, [False] * 4 + [True] * 2, [False] + [True] * 5])  # torch: True = padding
    assert_same(m, ours, q, kv, kv, {"key_padding_mask": kpm}, {"attn_mask": from_key_padding_mask(kpm)})


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_bool_attn_mask_equals_torch(dtype):
    m = torch_mha(8, 2, dtype)
    ours = MultiHeadAttention.from_torch(m)
    q, kv = torch.randn(2, 4, 8, dtype=dtype), torch.randn(2, 5, 8, dtype=dtype)
    blocked = torch.rand(4, 5, generator=torch.Generator().manual_seed(3)) > 0.6  # torch: True = blocked
    blocked[:, 0] = False
    assert blocked.any()
    assert_same(m, ours, q, kv, kv, {"attn_mask": blocked}, {"attn_mask": from_torch_attn_mask(blocked)})
    per_head = torch.rand(2 * 2, 4, 5, generator=torch.Generator().manual_seed(4)) > 0.6  # (B * H, Tq, Tk)
    per_head[..., 0] = False
    assert_same(m, ours, q, kv, kv, {"attn_mask": per_head}, {"attn_mask": from_torch_attn_mask(per_head, 2)})


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_is_causal_equals_torch(dtype):
    m = torch_mha(8, 2, dtype)
    ours = MultiHeadAttention.from_torch(m)
    x = torch.randn(2, 5, 8, dtype=dtype)
    blocked = ~causal_mask(5)  # torch needs the mask itself next to is_causal=True
    assert_same(m, ours, x, x, x, {"attn_mask": blocked, "is_causal": True}, {"is_causal": True})


def test_from_torch_without_bias_and_with_sequence_first_module():
    torch.manual_seed(0)
    m = nn.MultiheadAttention(8, 2, bias=False).eval()  # batch_first=False: (T, B, E)
    ours = MultiHeadAttention.from_torch(m)
    assert ours.q_proj.bias is None and ours.out_proj.bias is None
    x = torch.randn(5, 3, 8)  # (T, B, E)
    with torch.no_grad():
        ref, _ = m(x, x, x)
        out, _ = ours(x.transpose(0, 1), x.transpose(0, 1), x.transpose(0, 1))  # (T, B, E) -> (B, T, E)
    torch.testing.assert_close(out.transpose(0, 1), ref, **TOL[torch.float32])


def test_from_torch_copies_instead_of_sharing():
    m = torch_mha(8, 2, torch.float32)
    ours = MultiHeadAttention.from_torch(m)
    with torch.no_grad():
        ours.q_proj.weight.zero_()
        ours.out_proj.bias.zero_()
    assert m.in_proj_weight[:8].abs().sum() > 0 and m.out_proj.bias.abs().sum() > 0


# ---------------------------------------------------------------- errors


def test_num_heads_must_divide_embed_dim():
    with pytest.raises(ValueError, match="embed_dim=10 must be divisible by num_heads=3"):
        MultiHeadAttention(10, 3)
    with pytest.raises(ValueError, match="num_heads must be a positive int"):
        MultiHeadAttention(8, 0)
    with pytest.raises(ValueError, match="dropout"):
        MultiHeadAttention(8, 2, dropout=1.0)


def test_wrong_input_shapes_are_named():
    mha = MultiHeadAttention(8, 2, kdim=4)
    q, k, v = torch.randn(2, 3, 8), torch.randn(2, 5, 4), torch.randn(2, 5, 8)
    with pytest.raises(ValueError, match=r"query must have shape \(B, Tq, E=8\), got shape \(2, 3, 6\)"):
        mha(torch.randn(2, 3, 6), k, v)
    with pytest.raises(ValueError, match=r"key must have shape \(B, Tk, kdim=4\), got shape \(2, 5, 8\)"):
        mha(q, v, v)
    with pytest.raises(ValueError, match=r"query must have shape \(B, Tq, E=8\), got shape \(3, 8\)"):
        mha(q[0], k, v)
    with pytest.raises(ValueError, match="same batch size"):
        mha(q, k[:1], v[:1])
    with pytest.raises(ValueError, match="same length Tk"):
        mha(q, k, v[:, :4])
    with pytest.raises(TypeError, match="module's dtype torch.float32, got torch.float64"):
        mha(q.double(), k.double(), v.double())
    with pytest.raises(ValueError, match=r"attn_mask must broadcast to \(B, H, Tq, Tk\) = \(2, 2, 3, 5\)"):
        mha(q, k, v, attn_mask=torch.ones(2, 5, dtype=torch.bool))  # a (B, Tk) mask not expanded


def test_from_torch_rejects_extra_keys():
    with pytest.raises(ValueError, match="add_bias_kv"):
        MultiHeadAttention.from_torch(nn.MultiheadAttention(8, 2, add_bias_kv=True))
    with pytest.raises(ValueError, match="add_zero_attn"):
        MultiHeadAttention.from_torch(nn.MultiheadAttention(8, 2, add_zero_attn=True))
    with pytest.raises(TypeError, match="torch.nn.MultiheadAttention"):
        MultiHeadAttention.from_torch(nn.Linear(8, 8))


def test_a_3d_mask_raises_instead_of_being_read_as_per_head():
    # With B == H a (B, 1, Tk) padding mask broadcasts to (B, H, Tq, Tk) as if it were (H, 1, Tk):
    # example 0 would get example 1's padding. attnlib refuses 3-D masks and names the fix.
    mha = MultiHeadAttention(8, 2).eval()
    x = torch.randn(2, 4, 8, generator=torch.Generator().manual_seed(0))
    key_mask = padding_mask([4, 2], 4)  # (B, Tk)
    with pytest.raises(ValueError, match=r"attn_mask must be 2-D \(Tq, Tk\) or 4-D .* got shape \(2, 1, 4\)"):
        mha(x, x, x, attn_mask=key_mask[:, None, :])
    _, weights = mha(x, x, x, attn_mask=key_mask[:, None, None, :])  # the 4-D form is right
    assert torch.all(weights[0, :, :, 2:] > 0) and torch.all(weights[1, :, :, 2:] == 0)
