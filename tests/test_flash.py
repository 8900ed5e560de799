# ruff: noqa: E501  (the messages are pinned whole, one line each)
"""flash_attention against torch's own attention: outputs, log-sum-exp, gradients, errors.

Every comparison is with ``F.scaled_dot_product_attention`` (or the full softmax), never with
flash_attention itself. Lengths are chosen not to be multiples of the small block sizes used
here, so that the last, shorter block of queries and of keys is always exercised.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import attnlib
from attnlib import causal_mask, flash_attention

TOL = {torch.float64: 1e-10, torch.float32: 1e-5}
LOW_TOL = {torch.float16: 1e-2, torch.bfloat16: 5e-2}  # torch's own tolerances for these dtypes (as test_properties)
BLOCKS = {"block_size_q": 8, "block_size_k": 16}  # small blocks: many tiles, ragged last ones


def qkv(*batch, tq=37, tk=53, e=8, ev=5, dtype=torch.float64, seed=0, requires_grad=False):
    gen = torch.Generator().manual_seed(seed)
    shapes = ((*batch, tq, e), (*batch, tk, e), (*batch, tk, ev))
    return tuple(torch.randn(s, generator=gen, dtype=dtype).requires_grad_(requires_grad) for s in shapes)


def masks(tq=37, tk=53, dtype=torch.float64):
    """Named attn_mask / is_causal keyword sets, for (B=2, H=3, Tq, Tk) scores."""
    gen = torch.Generator().manual_seed(1)
    padding = torch.arange(tk) < torch.tensor([tk, 20])[:, None]  # (B, Tk), lengths Tk and 20
    float_mask = torch.randn(tq, tk, generator=gen, dtype=dtype)
    float_mask[torch.rand(tq, tk, generator=gen) < 0.3] = float("-inf")  # (Tq, Tk), some keys blocked
    return {
        "none": {},
        "causal top_left": {"is_causal": True},
        "causal top_left as mask": {"attn_mask": causal_mask(tq, tk)},
        "causal bottom_right": {"attn_mask": causal_mask(tq, tk, align="bottom_right")},
        "padding": {"attn_mask": padding[:, None, None, :]},
        "padding & causal": {"attn_mask": padding[:, None, None, :] & causal_mask(tq, tk, align="bottom_right")},
        "float": {"attn_mask": float_mask},
    }


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("tq, tk", [(37, 53), (53, 37), (16, 16), (1, 53), (37, 1)])
@pytest.mark.parametrize("case", list(masks()))
def test_equals_torch(dtype, tq, tk, case):
    query, key, value = qkv(2, 3, tq=tq, tk=tk, dtype=dtype)
    kwargs = masks(tq, tk, dtype)[case]
    out = flash_attention(query, key, value, **kwargs, **BLOCKS)
    expected = F.scaled_dot_product_attention(query, key, value, **kwargs)
    assert out.shape == expected.shape and out.dtype == dtype
    torch.testing.assert_close(out, expected, atol=TOL[dtype], rtol=TOL[dtype])


@pytest.mark.parametrize("block_size_q, block_size_k", [(1, 1), (5, 7), (64, 64), (11, 13)])
def test_any_block_sizes(block_size_q, block_size_k):
    query, key, value = qkv(2, 3, tq=11, tk=13)
    for kwargs in ({}, {"is_causal": True}):
        out = flash_attention(query, key, value, **kwargs, block_size_q=block_size_q, block_size_k=block_size_k)
        torch.testing.assert_close(out, F.scaled_dot_product_attention(query, key, value, **kwargs), atol=1e-10, rtol=1e-10)


def test_default_blocks_3d_inputs_scale_and_broadcast_batch():
    query, key, value = qkv(2, tq=300, tk=1100, dtype=torch.float32)  # (B, T, E): longer than one default block
    torch.testing.assert_close(flash_attention(query, key, value, scale=0.3),
                               F.scaled_dot_product_attention(query, key, value, scale=0.3), atol=1e-5, rtol=1e-5)
    q4, k4, v4 = qkv(2, 3, dtype=torch.float64)
    k1, v1 = k4[:1], v4[:1]  # (1, H, Tk, E): broadcast over the batch
    torch.testing.assert_close(flash_attention(q4, k1, v1, **BLOCKS),
                               F.scaled_dot_product_attention(q4, k1.expand(2, -1, -1, -1), v1.expand(2, -1, -1, -1)),
                               atol=1e-10, rtol=1e-10)


def test_fully_masked_rows_are_zero_with_zero_gradients():
    query, key, value = qkv(2, 3, requires_grad=True)
    mask = torch.ones(37, 53, dtype=torch.bool)
    mask[[0, 9, 36]] = False  # three queries with no key at all (one in the first, one in the last block)
    out, lse = flash_attention(query, key, value, attn_mask=mask, return_lse=True, **BLOCKS)
    expected = F.scaled_dot_product_attention(query, key, value, attn_mask=mask)
    torch.testing.assert_close(out, expected, atol=1e-10, rtol=1e-10)
    assert out[..., [0, 9, 36], :].abs().max() == 0 and not out.isnan().any()
    assert bool((lse[..., [0, 9, 36]] == float("-inf")).all())
    out.sum().backward()
    assert torch.isfinite(query.grad).all() and query.grad[..., [0, 9, 36], :].abs().max() == 0
    empty = flash_attention(*qkv(2, tk=0), scale=1.0)  # no keys at all: (B, Tq, Ev) zeros
    assert empty.shape == (2, 37, 5) and empty.abs().max() == 0


def test_lse_reproduces_the_softmax_weights():
    query, key, value = qkv(2, 3)
    for kwargs in masks().values():
        _, lse = flash_attention(query, key, value, return_lse=True, **kwargs, **BLOCKS)
        assert lse.shape == (2, 3, 37) and lse.dtype == torch.float64
        _, weights = attnlib.scaled_dot_product_attention(query, key, value, **kwargs)
        scores = query @ key.mT / 8**0.5  # (B, H, Tq, Tk), the full matrix, for this test only
        if "attn_mask" in kwargs and kwargs["attn_mask"].is_floating_point():
            scores = scores + kwargs["attn_mask"]
        elif "attn_mask" in kwargs:
            scores = scores.masked_fill(~kwargs["attn_mask"], float("-inf"))
        elif kwargs.get("is_causal"):
            scores = scores.masked_fill(~causal_mask(37, 53), float("-inf"))
        torch.testing.assert_close((scores - lse[..., None]).exp(), weights, atol=1e-12, rtol=1e-10)
        torch.testing.assert_close(lse, scores.logsumexp(dim=-1), atol=1e-10, rtol=1e-10)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_low_precision_within_torch_tolerances(dtype):
    query, key, value = qkv(2, 3, dtype=torch.float32)
    low = tuple(x.to(dtype) for x in (query, key, value))
    for kwargs in ({}, {"is_causal": True}, {"attn_mask": causal_mask(37, 53, align="bottom_right")}):
        out = flash_attention(*low, **kwargs, **BLOCKS)
        assert out.dtype == dtype
        reference = F.scaled_dot_product_attention(*low, **kwargs).float()
        torch.testing.assert_close(out.float(), reference, atol=LOW_TOL[dtype], rtol=LOW_TOL[dtype])
        torch.testing.assert_close(out.float(), F.scaled_dot_product_attention(query, key, value, **kwargs),
                                   atol=LOW_TOL[dtype], rtol=LOW_TOL[dtype])


@pytest.mark.parametrize("case", ["none", "causal top_left", "causal bottom_right", "padding & causal", "float"])
@pytest.mark.parametrize("tq, tk", [(37, 53), (53, 37)])
def test_gradients_equal_torch(case, tq, tk):
    query, key, value = qkv(2, 3, tq=tq, tk=tk, requires_grad=True)
    kwargs = masks(tq, tk)[case]
    d_out = torch.randn(2, 3, tq, 5, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    ours = torch.autograd.grad(flash_attention(query, key, value, **kwargs, **BLOCKS), (query, key, value), d_out)
    theirs = torch.autograd.grad(F.scaled_dot_product_attention(query, key, value, **kwargs), (query, key, value), d_out)
    for name, a, b in zip(("query", "key", "value"), ours, theirs):
        torch.testing.assert_close(a, b, atol=1e-10, rtol=1e-10, msg=lambda m, n=name: f"d{n}: {m}")


def test_gradients_broadcast_batch_and_float32():
    query, key, value = qkv(2, 3, dtype=torch.float32, requires_grad=True)
    k1, v1 = (x.detach()[:1].requires_grad_() for x in (key, value))  # (1, H, Tk, .) shared by the batch
    ours = torch.autograd.grad(flash_attention(query, k1, v1, is_causal=True, **BLOCKS).sum(), (query, k1, v1))
    theirs = torch.autograd.grad(F.scaled_dot_product_attention(query, k1, v1, is_causal=True).sum(), (query, k1, v1))
    for a, b in zip(ours, theirs):
        assert a.shape == b.shape
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("kwargs", [{}, {"is_causal": True}, {"attn_mask": causal_mask(5, 7, align="bottom_right")}])
def test_gradcheck(kwargs):
    query, key, value = qkv(1, tq=5, tk=7, e=2, ev=2, requires_grad=True)
    assert torch.autograd.gradcheck(
        lambda q, k, v: flash_attention(q, k, v, **kwargs, block_size_q=2, block_size_k=3), (query, key, value)
    )


def test_inputs_not_modified():
    query, key, value = qkv(2, 3, requires_grad=True)
    mask = torch.randn(37, 53, dtype=torch.float64)
    before = [x.detach().clone() for x in (query, key, value, mask)]
    flash_attention(query, key, value, attn_mask=mask, **BLOCKS).sum().backward()
    for x, b in zip((query, key, value, mask), before):
        assert torch.equal(x.detach(), b)


def test_no_weights_saved_for_backward():
    """Memory O(T): nothing of size Tq x Tk is kept for the backward pass."""
    query, key, value = qkv(1, 2, tq=64, tk=64, e=4, ev=4, dtype=torch.float32, requires_grad=True)
    saved = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t.numel()) or t, lambda t: t):
        flash_attention(query, key, value, block_size_q=16, block_size_k=16)
    assert saved and max(saved) <= 1 * 2 * 64 * 4  # q, k, v, output (2 * 64 * 4 each) and lse, never 64 x 64


ERRORS = [
    (lambda q, k, v: flash_attention(q, k, v, block_size_q=0), ValueError, "block_size_q must be a positive int, got 0"),
    (lambda q, k, v: flash_attention(q, k, v, block_size_k=8.0), ValueError, "block_size_k must be a positive int, got 8.0"),
    (lambda q, k, v: flash_attention(q, k, v, block_size_k=True), ValueError, "block_size_k must be a positive int, got True"),
    (
        lambda q, k, v: flash_attention(q, k[..., :3], v),
        ValueError,
        "query and key must have the same last dimension E (the dot product runs over it), got query (2, 3, 4) and key (2, 5, 3)",
    ),
    (
        lambda q, k, v: flash_attention(q, k, v[:, :4]),
        ValueError,
        "key and value must have the same length Tk (one value per key), got key (2, 5, 4) and value (2, 4, 6)",
    ),
    (
        lambda q, k, v: flash_attention(q, k, v, attn_mask=torch.ones(3, 5, dtype=torch.bool), is_causal=True),
        ValueError,
        "attn_mask and is_causal=True cannot be combined; put the causal mask in attn_mask with &",
    ),
    (
        lambda q, k, v: flash_attention(q, k, v, attn_mask=torch.ones(2, 5, dtype=torch.bool)),
        ValueError,
        "attn_mask must broadcast to (..., Tq, Tk) = (2, 3, 5) without enlarging it, got shape (2, 5). A (B, Tk) "
        "padding mask needs its query (and head) axes: mask[:, None, :] for 3-D inputs, mask[:, None, None, :] for 4-D inputs",
    ),
    (
        lambda q, k, v: flash_attention(q.long(), k, v),
        TypeError,
        "query must be a floating-point tensor (float16, bfloat16, float32 or float64), got dtype torch.int64; "
        "convert it with query.float()",
    ),
    (lambda q, k, v: flash_attention(q, k.double(), v), TypeError,
     "query and key must have the same dtype, got query torch.float32 and key torch.float64"),
    (lambda q, k, v: flash_attention(q, k, v, scale="1"), TypeError, "scale must be a float or None, got str"),
    (
        lambda q, k, v: flash_attention(q[..., :0], k[..., :0], v),
        ValueError,
        "query and key must have a last dimension E of at least 1 for the default scale 1 / sqrt(E), got query (2, 3, 0) "
        "and key (2, 5, 0); pass scale= to attend with E = 0",
    ),
]


@pytest.mark.parametrize("call, error, message", ERRORS, ids=[m[:40] for _, _, m in ERRORS])
def test_error_messages(call, error, message):
    gen = torch.Generator().manual_seed(0)
    q, k, v = torch.randn(2, 3, 4, generator=gen), torch.randn(2, 5, 4, generator=gen), torch.randn(2, 5, 6, generator=gen)
    with pytest.raises(error) as info:
        call(q, k, v)
    assert str(info.value) == message


def test_same_messages_as_scaled_dot_product_attention():
    """flash_attention rejects what attnlib's scaled_dot_product_attention rejects, in the same words."""
    gen = torch.Generator().manual_seed(0)
    q, k, v = torch.randn(2, 3, 4, generator=gen), torch.randn(2, 5, 4, generator=gen), torch.randn(2, 5, 6, generator=gen)
    bad = [
        {"attn_mask": torch.ones(3, 5, dtype=torch.int64)},
        {"attn_mask": torch.ones(3, 5)},
        {"attn_mask": torch.zeros(3, 5, dtype=torch.float64)},
        {"attn_mask": torch.full((3, 5), float("nan"))},
        {"scale": float("nan")},
    ]
    for kwargs in bad:
        with pytest.raises((TypeError, ValueError)) as ours:
            flash_attention(q, k, v, **kwargs)
        with pytest.raises((TypeError, ValueError)) as theirs:
            attnlib.scaled_dot_product_attention(q, k, v, **kwargs)
        assert type(ours.value) is type(theirs.value) and str(ours.value) == str(theirs.value)
