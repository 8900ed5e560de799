"""float16 and bfloat16 attention against float64: attnlib's error stays within twice torch's.

torch's CPU kernels compute half-precision attention in float32 (scores, softmax, weighted sum) and
round the output once; attnlib's scaled_dot_product_attention and flash_attention do the same. On a
seeded fuzz set of shapes, input scales and masks, each result is compared with float64 attention on
the same (rounded) inputs, and its error must stay within twice torch's own error on that case (or
twice the error of rounding the exact answer, where torch's is smaller). Where torch is finite,
attnlib must be finite too.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import attnlib as A

DTYPES = [torch.float16, torch.bfloat16]
CASES = 120  # per dtype


def fuzz_case(seed, dtype):
    """Seeded random attention inputs (rounded to ``dtype``) and keyword arguments."""
    g = torch.Generator().manual_seed(seed)
    b, h = (int(torch.randint(1, 4, (1,), generator=g)) for _ in range(2))
    tq, tk = (int(torch.randint(1, 40, (1,), generator=g)) for _ in range(2))
    e = [4, 8, 16, 32, 64][int(torch.randint(0, 5, (1,), generator=g))]
    std = float([0.3, 1.0, 3.0, 8.0][int(torch.randint(0, 4, (1,), generator=g))])  # up to scores of hundreds
    q, k, v = (torch.randn(b, h, t, e, generator=g, dtype=torch.float64) * std for t in (tq, tk, tk))
    q, k, v = (x.to(dtype) for x in (q, k, v))
    kind = int(torch.randint(0, 4, (1,), generator=g))
    if kind == 1:
        kwargs = {"is_causal": True}
    elif kind == 2:  # padding: each sequence keeps at least one key
        lengths = torch.randint(1, tk + 1, (b,), generator=g)
        kwargs = {"attn_mask": (torch.arange(tk) < lengths[:, None])[:, None, None, :]}
    elif kind == 3:  # a float bias with some keys blocked
        bias = torch.randn(tq, tk, generator=g, dtype=torch.float64) * 2
        bias[:, 1:][torch.rand(tq, tk - 1, generator=g) < 0.3] = float("-inf")
        kwargs = {"attn_mask": bias.to(dtype)}
    else:
        kwargs = {}
    return q, k, v, kwargs


def errors(q, k, v, kwargs):
    """Max |error| against float64 of: torch, exact-then-rounded, attnlib's SDPA, flash_attention."""
    wide = {key: (val.double() if isinstance(val, torch.Tensor) and val.is_floating_point() else val)
            for key, val in kwargs.items()}
    exact = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), **wide)

    def err(x):
        return (x.double() - exact).abs().max().item()

    ours, _ = A.scaled_dot_product_attention(q, k, v, **kwargs)
    flash = A.flash_attention(q, k, v, **kwargs, block_size_q=8, block_size_k=16)
    assert ours.dtype == flash.dtype == q.dtype
    return err(F.scaled_dot_product_attention(q, k, v, **kwargs)), err(exact.to(q.dtype)), err(ours), err(flash)


@pytest.mark.parametrize("dtype", DTYPES)
def test_half_precision_error_is_within_twice_torchs(dtype):
    worst = []
    for seed in range(CASES):
        q, k, v, kwargs = fuzz_case(seed, dtype)
        torch_err, rounding_err, ours, flash = errors(q, k, v, kwargs)
        bound = 2 * max(torch_err, rounding_err)
        assert ours <= bound, f"seed {seed}: attnlib's error {ours:.3g}, torch's {torch_err:.3g}"
        assert flash <= bound, f"seed {seed}: flash_attention's error {flash:.3g}, torch's {torch_err:.3g}"
        worst.append((ours, flash, torch_err))
    assert max(w[2] for w in worst) > 0  # the fuzz set is not trivial: torch itself errs somewhere


@pytest.mark.parametrize("dtype", DTYPES)
def test_large_half_precision_scores_stay_finite_where_torch_is_finite(dtype):
    q = torch.full((1, 1, 4, 64), 100.0, dtype=dtype)  # scaled scores of 80000: beyond float16's 65504
    k, v = q.clone(), torch.randn(1, 1, 4, 64).to(dtype)
    expected = F.scaled_dot_product_attention(q, k, v)
    assert torch.isfinite(expected).all()
    ours, weights = A.scaled_dot_product_attention(q, k, v)
    assert torch.isfinite(ours).all() and torch.isfinite(weights).all()
    torch.testing.assert_close(ours, expected)
    torch.testing.assert_close(A.flash_attention(q, k, v), expected)
    mha = A.MultiHeadAttention(64, 1, bias=False).to(dtype)
    with torch.no_grad():
        for proj in (mha.q_proj, mha.k_proj, mha.v_proj, mha.out_proj):
            proj.weight.copy_(torch.eye(64))
        out, _ = mha(q[0], q[0], v[0])
    assert torch.isfinite(out).all()
