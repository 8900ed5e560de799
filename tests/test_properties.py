"""Properties of attnlib's attention, checked with Hypothesis over random shapes, masks and dtypes.

Hypothesis draws the structure of each example (batch shape, lengths, widths, dtype, mask
kind and shape, how much is masked) and a seed; the tensors are then drawn with a
``torch.Generator`` seeded from it, so every example is reproducible. tests/conftest.py
makes the run derandomized (the same examples on every machine).

Shape legend: B batch, H heads, Tq query length, Tk key/value length, E query/key width,
Ev value width.
"""

from __future__ import annotations

from dataclasses import dataclass

import matplotlib.pyplot as plt
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.nn.attention import SDPBackend, sdpa_kernel

import attnlib
from attnlib import (
    AdditiveAttention,
    MultiHeadAttention,
    causal_mask,
    expand_key_mask,
    from_hf_attention_mask,
    from_key_padding_mask,
    from_torch_attn_mask,
    from_valid_lens,
    masked_softmax,
    merge_heads,
    padding_mask,
    scaled_dot_product_attention,
    split_heads,
)

NEG_INF = float("-inf")
HIGH = (torch.float32, torch.float64)
LOW_TOL = {torch.float16: 1e-2, torch.bfloat16: 5e-2}  # torch's own tolerances for these dtypes
LOW = tuple(LOW_TOL)
MASK_KINDS = ("none", "bool", "key", "float", "causal")
seeds = st.integers(0, 2**32 - 1)


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """Tiny tensors gain nothing from a second thread, and when another process holds a
    core each parallel region can stall for milliseconds (gradcheck went from 3 s to 50 s
    on 2 busy cores). ``make test`` sets OMP_NUM_THREADS=1 for the same reason."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@dataclass
class Case:
    """One call of scaled_dot_product_attention and what its weights must look like."""

    query: torch.Tensor  # (..., Tq, E)
    key: torch.Tensor  # (..., Tk, E)
    value: torch.Tensor  # (..., Tk, Ev)
    attn_mask: torch.Tensor | None
    is_causal: bool
    allowed: torch.Tensor  # bool (..., Tq, Tk): True where the weight may be non-zero
    gen: torch.Generator

    def kwargs(self) -> dict:
        return {"attn_mask": self.attn_mask, "is_causal": self.is_causal}

    def tensors(self) -> list[torch.Tensor]:
        return [x for x in (self.query, self.key, self.value, self.attn_mask) if x is not None]


def randn(gen: torch.Generator, *shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.randn(*shape, generator=gen).to(dtype)


def bool_mask(gen: torch.Generator, shape: tuple[int, ...], keep: float) -> torch.Tensor:
    """A random bool mask, True = may attend, with about ``keep`` of the entries True."""
    return torch.rand(*shape, generator=gen) < keep


def as_float_mask(mask: torch.Tensor, dtype: torch.dtype, gen: torch.Generator) -> torch.Tensor:
    """The additive form of a bool mask: a finite random bias where allowed, -inf where blocked."""
    bias = (torch.rand(mask.shape, generator=gen) - 0.5).to(dtype)  # finite values, never only 0s and 1s
    return bias.masked_fill(~mask, NEG_INF)


@st.composite
def cases(draw, dtypes=HIGH, kinds=MASK_KINDS, max_len: int = 6, max_width: int = 8) -> Case:
    batch = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))  # (), (B,) or (B, H)
    tq, tk = draw(st.integers(1, max_len)), draw(st.integers(1, max_len))
    e, ev = draw(st.integers(1, max_width)), draw(st.integers(1, max_width))
    dtype, kind = draw(st.sampled_from(dtypes)), draw(st.sampled_from(kinds))
    keep = draw(st.sampled_from([0.0, 0.3, 0.7, 1.0]))  # 0.0: every row fully masked
    gen = torch.Generator().manual_seed(draw(seeds))
    query = randn(gen, *batch, tq, e, dtype=dtype)  # (..., Tq, E)
    key = randn(gen, *batch, tk, e, dtype=dtype)  # (..., Tk, E)
    value = randn(gen, *batch, tk, ev, dtype=dtype)  # (..., Tk, Ev)
    full = (*batch, tq, tk)
    attn_mask, is_causal, allowed = None, False, torch.ones(full, dtype=torch.bool)
    if kind == "causal":
        is_causal, allowed = True, causal_mask(tq, tk).expand(full)
    elif kind == "key":  # a padding mask over keys, (..., 1, Tk)
        attn_mask = bool_mask(gen, (*batch, 1, tk), keep)
        allowed = attn_mask.expand(full)
    elif kind in ("bool", "float"):
        # any shape that broadcasts to (..., Tq, Tk) without enlarging it: leading dims
        # dropped or kept, each kept batch dim either full or 1, the query dim full or 1
        lead = draw(st.integers(0, len(batch)))
        mask_shape = (*(draw(st.sampled_from([d, 1])) for d in batch[lead:]), draw(st.sampled_from([tq, 1])), tk)
        mask = bool_mask(gen, mask_shape, keep)
        attn_mask = mask if kind == "bool" else as_float_mask(mask, dtype, gen)
        allowed = mask.expand(full)
    return Case(query, key, value, attn_mask, is_causal, allowed, gen)


def sdpa(case: Case, **kwargs) -> tuple[torch.Tensor, torch.Tensor]:
    return scaled_dot_product_attention(case.query, case.key, case.value, **case.kwargs(), **kwargs)


def torch_sdpa(case: Case) -> torch.Tensor:
    with sdpa_kernel(SDPBackend.MATH):
        return F.scaled_dot_product_attention(case.query, case.key, case.value, **case.kwargs())


def assert_weights_are_a_masked_distribution(weights: torch.Tensor, allowed: torch.Tensor) -> None:
    """Weights >= 0; masked entries exactly 0; rows sum to 1, or are exactly 0 when all masked."""
    assert weights.shape == allowed.shape
    assert bool((weights >= 0).all())
    assert bool((weights[~allowed] == 0).all()), "a masked key got a non-zero weight"
    has_key = allowed.any(dim=-1)  # (..., Tq)
    assert bool((weights[~has_key] == 0).all()), "a fully masked row is not exactly zero"
    sums = weights.sum(dim=-1, dtype=torch.float64)[has_key]
    tol = LOW_TOL.get(weights.dtype, 1e-6)
    torch.testing.assert_close(sums, torch.ones_like(sums), atol=tol, rtol=0)


def replace_where(x: torch.Tensor, where: torch.Tensor, gen: torch.Generator, big: float) -> torch.Tensor:
    """A copy of x (..., T, D) whose rows at ``where`` (..., T) hold random values in [-big, big]."""
    x = x.clone()
    noise = (torch.rand(x.shape, generator=gen, dtype=torch.float64) * 2 - 1) * big
    x[where] = noise[where].to(x.dtype)
    return x


def biggest(dtype: torch.dtype) -> float:
    return min(1e6, torch.finfo(dtype).max)  # 1e6 does not fit in float16


# --- weights are a masked probability distribution ----------------------------------------------


@settings(max_examples=150)
@given(cases())
def test_rows_sum_to_one_or_are_zero_and_masked_keys_get_exactly_zero(case):
    out, weights = sdpa(case)
    assert_weights_are_a_masked_distribution(weights, case.allowed)
    has_key = case.allowed.any(dim=-1)
    assert bool((out[~has_key] == 0).all()), "a fully masked query must give a zero output"
    torch.testing.assert_close(out, weights @ case.value)
    torch.testing.assert_close(out, torch_sdpa(case))  # PyTorch's own attention, math backend


@settings(max_examples=100)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.sampled_from(HIGH), st.booleans(), seeds)
def test_masked_softmax_is_a_masked_distribution_on_any_dim(shape, dtype, with_mask, seed):
    gen = torch.Generator().manual_seed(seed)
    scores = randn(gen, *shape, dtype=dtype) * 5
    scores[torch.rand(shape, generator=gen) < 0.3] = NEG_INF  # a -inf score is masked too
    mask = bool_mask(gen, tuple(shape), 0.6) if with_mask else None
    allowed = (scores != NEG_INF) & (True if mask is None else mask)
    for dim in range(-len(shape), 0):
        weights = masked_softmax(scores, mask, dim=dim)
        assert_weights_are_a_masked_distribution(weights.movedim(dim, -1), allowed.movedim(dim, -1))


# --- what must not change the output -----------------------------------------------------------


@settings(max_examples=150)
@given(cases(dtypes=HIGH + LOW, kinds=("key",)), st.sampled_from(["bool", "float"]), st.booleans())
def test_keys_and_values_at_masked_positions_do_not_change_anything(case, form, and_causal):
    # A key masked for every query of its example: replace it (and its value) by values up to
    # +-1e6 (float16: up to its largest value); output and weights must stay bit-identical.
    key_mask = case.attn_mask  # bool (..., 1, Tk)
    tq, tk = case.query.shape[-2], case.key.shape[-2]
    mask = key_mask & causal_mask(tq, tk) if and_causal else key_mask
    if form == "float":
        mask = as_float_mask(mask, case.query.dtype, case.gen)
    out, weights = scaled_dot_product_attention(case.query, case.key, case.value, attn_mask=mask)
    masked_keys = ~key_mask[..., 0, :]  # (..., Tk)
    big = biggest(case.query.dtype)
    key2 = replace_where(case.key, masked_keys, case.gen, big)
    value2 = replace_where(case.value, masked_keys, case.gen, big)
    out2, weights2 = scaled_dot_product_attention(case.query, key2, value2, attn_mask=mask)
    assert torch.equal(weights, weights2)
    assert torch.equal(out, out2)
    assert bool(torch.isfinite(out2).all())


@settings(max_examples=120)
@given(cases(dtypes=HIGH + LOW, kinds=("none",)), st.sampled_from(["is_causal", "top_left", "bottom_right"]),
       st.booleans(), st.data())
def test_causal_a_future_token_does_not_change_earlier_outputs(case, form, use_module, data):
    # Query i sees keys 0..i + offset (offset = Tk - Tq for bottom-right, else 0). Replacing
    # queries t.. and keys and values t + offset.. by values up to +-1e6 must leave the
    # outputs and weights of queries 0..t-1 bit-identical, for any Tq and Tk.
    query, key, value = case.query, case.key, case.value
    (tq, e), tk = query.shape[-2:], key.shape[-2]
    offset = tk - tq if form == "bottom_right" else 0
    kwargs = {"is_causal": True} if form == "is_causal" else {"attn_mask": causal_mask(tq, tk, align=form)}
    if use_module and query.dtype in HIGH:  # (float16 projections of +-65504 overflow to inf: SDPA only)
        query, key, value = query.reshape(-1, tq, e), key.reshape(-1, tk, e), value.reshape(-1, tk, value.shape[-1])
        torch.manual_seed(0)
        attend = MultiHeadAttention(e, 1, vdim=value.shape[-1]).to(query.dtype)  # (B, T, .) -> (B, Tq, E)
    else:
        attend = scaled_dot_product_attention
    t = data.draw(st.integers(1, tq), label="first changed query")
    out, weights = attend(query, key, value, **kwargs)
    big = biggest(query.dtype)
    query2 = replace_where(query, (torch.arange(tq) >= t).expand(query.shape[:-1]), case.gen, big)
    future_k = (torch.arange(tk) >= t + offset).expand(key.shape[:-1])  # (..., Tk)
    key2 = replace_where(key, future_k, case.gen, big)
    value2 = replace_where(value, future_k, case.gen, big)
    out2, weights2 = attend(query2, key2, value2, **kwargs)
    assert torch.equal(out[..., :t, :], out2[..., :t, :])
    assert torch.equal(weights[..., :t, :], weights2[..., :t, :])


@settings(max_examples=80)
@given(cases(kinds=("none", "key")), st.sampled_from(["sdpa", "multihead", "additive"]))
def test_self_attention_without_positions_is_permutation_equivariant(case, which):
    x = case.query  # self-attention: query = key = value = x, (..., T, E)
    t, e = x.shape[-2:]
    perm = torch.randperm(t, generator=case.gen)
    key_mask = None if case.attn_mask is None else bool_mask(case.gen, (*x.shape[:-2], 1, t), 0.7)  # (..., 1, T)
    torch.manual_seed(0)
    if which == "sdpa":
        module = scaled_dot_product_attention
    else:  # the modules take (B, T, E) only
        x = x.reshape(-1, t, e)  # (..., T, E) -> (B, T, E)
        if which == "multihead":
            module = MultiHeadAttention(e, 1).to(x.dtype).eval()
            key_mask = None if key_mask is None else key_mask.reshape(-1, 1, 1, t)  # -> (B, 1, 1, T)
        else:
            module = AdditiveAttention(e, e, 4).to(x.dtype).eval()
            key_mask = None if key_mask is None else key_mask.reshape(-1, 1, t)  # -> (B, 1, T)
    out, weights = module(x, x, x, attn_mask=key_mask)
    out_p, weights_p = module(x[..., perm, :], x[..., perm, :], x[..., perm, :],
                              attn_mask=None if key_mask is None else key_mask[..., perm])
    torch.testing.assert_close(out_p, out[..., perm, :])
    torch.testing.assert_close(weights_p, weights[..., perm, :][..., perm])


@settings(max_examples=100)
@given(cases(kinds=("none", "bool", "key")), st.floats(-100, 100))
def test_softmax_is_unchanged_by_adding_a_constant_to_a_row(case, size_of_shift):
    scores = case.query @ case.key.transpose(-2, -1)  # (..., Tq, Tk)
    mask = case.attn_mask  # None or bool
    shift = torch.rand(*scores.shape[:-1], 1, generator=case.gen, dtype=scores.dtype) * size_of_shift  # (..., Tq, 1)
    weights, shifted = masked_softmax(scores, mask), masked_softmax(scores + shift, mask)
    tol = 1e-4 if scores.dtype == torch.float32 else 1e-10
    torch.testing.assert_close(shifted, weights, atol=tol, rtol=tol)
    assert bool((shifted[~case.allowed] == 0).all())
    # the same through scaled_dot_product_attention: a float mask that is constant along each
    # row (and -inf where the bool mask blocks) gives the weights of the bool mask
    row_constant = torch.rand(*scores.shape[:-1], 1, generator=case.gen, dtype=scores.dtype) * size_of_shift
    float_mask = row_constant if mask is None else torch.where(mask, row_constant, NEG_INF)
    out, w = sdpa(case)
    out2, w2 = scaled_dot_product_attention(case.query, case.key, case.value, attn_mask=float_mask)
    torch.testing.assert_close(w2, w, atol=tol, rtol=tol)
    torch.testing.assert_close(out2, out, atol=tol, rtol=tol)


# --- gradients ------------------------------------------------------------------------------


@settings(max_examples=60)
@given(cases(dtypes=(torch.float64,), max_len=4, max_width=3))
def test_gradcheck_scaled_dot_product_attention(case):
    inputs = [case.query, case.key, case.value]
    float_mask = case.attn_mask is not None and case.attn_mask.is_floating_point()
    if float_mask:
        inputs.append(case.attn_mask)  # an additive mask (a bias) is differentiable too
    inputs = [x.detach().requires_grad_() for x in inputs]

    def f(q, k, v, m=None):
        return scaled_dot_product_attention(q, k, v, attn_mask=m if float_mask else case.attn_mask,
                                            is_causal=case.is_causal)

    assert torch.autograd.gradcheck(f, inputs)


@settings(max_examples=25)
@given(st.integers(1, 2), st.integers(1, 3), st.integers(1, 3), st.sampled_from(["none", "key", "causal"]), seeds)
def test_gradcheck_multihead_attention(b, tq, tk, kind, seed):
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    mha = MultiHeadAttention(4, 2, kdim=3, vdim=5).double()
    query, key, value = (randn(gen, b, t, d, dtype=torch.float64).requires_grad_()
                         for t, d in ((tq, 4), (tk, 3), (tk, 5)))
    mask = expand_key_mask(bool_mask(gen, (b, tk), 0.6)) if kind == "key" else None  # (B, 1, 1, Tk)
    is_causal = kind == "causal"
    assert torch.autograd.gradcheck(lambda q, k, v: mha(q, k, v, attn_mask=mask, is_causal=is_causal),
                                    (query, key, value))


@settings(max_examples=25)
@given(st.integers(1, 2), st.integers(1, 3), st.integers(1, 3), st.sampled_from(["none", "bool", "float"]), seeds)
def test_gradcheck_additive_attention(b, tq, tk, kind, seed):
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    att = AdditiveAttention(2, 3, 4).double()
    queries, keys, values = (randn(gen, b, t, d, dtype=torch.float64).requires_grad_()
                             for t, d in ((tq, 2), (tk, 3), (tk, 2)))
    mask = None
    if kind != "none":
        mask = bool_mask(gen, (b, 1, tk), 0.6)  # (B, 1, Tk)
        mask = mask if kind == "bool" else as_float_mask(mask, torch.float64, gen)
    assert torch.autograd.gradcheck(lambda q, k, v: att(q, k, v, attn_mask=mask), (queries, keys, values))


def fully_masked_examples():
    """Masks in which query row 1 of example 0 has no key: bool, float and causal forms."""
    mask = torch.ones(2, 3, 4, dtype=torch.bool)
    mask[0, 1] = False
    yield "bool", {"attn_mask": mask}
    yield "float", {"attn_mask": torch.zeros(2, 3, 4, dtype=torch.float64).masked_fill(~mask, NEG_INF)}
    yield "causal", {"attn_mask": causal_mask(3, 4) & mask}  # a causal mask with the same row blocked


@pytest.mark.parametrize("name, kwargs", list(fully_masked_examples()), ids=lambda v: v if isinstance(v, str) else "")
def test_gradients_stay_finite_with_fully_masked_rows(name, kwargs):
    gen = torch.Generator().manual_seed(0)
    q, k, v = (randn(gen, 2, t, d, dtype=torch.float64).requires_grad_() for t, d in ((3, 5), (4, 5), (4, 2)))
    out, weights = scaled_dot_product_attention(q, k, v, **kwargs)
    (out.sum() + (weights * torch.rand(weights.shape, generator=gen, dtype=weights.dtype)).sum()).backward()
    for x in (q, k, v):
        assert bool(torch.isfinite(x.grad).all())
    assert bool((q.grad[0, 1] == 0).all())  # the fully masked query cannot influence anything
    assert bool((out[0, 1] == 0).all()) and bool((weights[0, 1] == 0).all())
    # the modules on the same masks
    mha = MultiHeadAttention(5, 1, kdim=5, vdim=2).double()
    mask = kwargs["attn_mask"][:, None]  # (B, Tq, Tk) -> (B, 1, Tq, Tk)
    q.grad = None
    out, _ = mha(q, k, v, attn_mask=mask)
    out.sum().backward()
    assert bool(torch.isfinite(q.grad).all()) and bool((q.grad[0, 1] == 0).all())
    att = AdditiveAttention(5, 5, 3).double()
    q.grad = None
    out, _ = att(q, k, v, attn_mask=kwargs["attn_mask"])
    out.sum().backward()
    assert bool(torch.isfinite(q.grad).all()) and bool((q.grad[0, 1] == 0).all())


def test_masked_softmax_gradient_of_an_all_minus_inf_row_is_zero():
    scores = torch.tensor([[0.5, NEG_INF, 1.0], [NEG_INF, NEG_INF, NEG_INF]], requires_grad=True)
    weights = masked_softmax(scores)
    (weights * torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])).sum().backward()
    assert weights[1].tolist() == [0.0, 0.0, 0.0]
    assert bool(torch.isfinite(scores.grad).all()) and scores.grad[1].tolist() == [0.0, 0.0, 0.0]
    assert scores.grad[0, 1].item() == 0.0


# --- no function modifies its inputs ---------------------------------------------------------


def assert_unchanged(before: list[torch.Tensor], after: list[torch.Tensor]) -> None:
    for x, y in zip(before, after):
        assert torch.equal(x, y), "an input was modified"


@settings(max_examples=80)
@given(cases(dtypes=HIGH + LOW), st.booleans(), st.sampled_from([0.0, 0.5]))
def test_scaled_dot_product_attention_and_masked_softmax_do_not_modify_inputs(case, grad, dropout_p):
    # with and without autograd: without it, the weights are computed in the scores' memory
    inputs = case.tensors()
    copies = [x.clone() for x in inputs]
    with torch.set_grad_enabled(grad):
        case.query.requires_grad_(grad)
        sdpa(case, dropout_p=dropout_p)
        scores = case.query.detach() @ case.key.transpose(-2, -1)
        scores_copy = scores.clone()
        mask = case.attn_mask if case.attn_mask is not None and case.attn_mask.dtype == torch.bool else None
        masked_softmax(scores, mask)
    assert_unchanged(copies, [x.detach() for x in inputs])
    assert torch.equal(scores, scores_copy)


@settings(max_examples=30)
@given(st.integers(1, 3), st.integers(1, 5), st.sampled_from(HIGH + LOW), st.booleans(), st.booleans(), seeds)
def test_modules_do_not_modify_inputs_or_parameters(b, t, dtype, training, with_mask, seed):
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    x = randn(gen, b, t, 4, dtype=dtype)
    key_mask = bool_mask(gen, (b, t), 0.7)
    for module, mask in (
        (MultiHeadAttention(4, 2, dropout=0.3).to(dtype), expand_key_mask(key_mask) if with_mask else None),
        (AdditiveAttention(4, 4, 3, dropout=0.3).to(dtype), expand_key_mask(key_mask, 3) if with_mask else None),
    ):
        module.train(training)
        state = {k: v.clone() for k, v in module.state_dict().items()}
        inputs = [x, key_mask] + ([mask] if mask is not None else [])
        copies = [y.clone() for y in inputs]
        module(x, x, x, attn_mask=mask)
        assert_unchanged(copies, inputs)
        assert_unchanged(list(state.values()), list(module.state_dict().values()))


def test_mask_helpers_and_plots_do_not_modify_inputs():
    gen = torch.Generator().manual_seed(0)
    valid_lens = torch.tensor([3, 0, 5])
    kpm = bool_mask(gen, (3, 5), 0.5)
    float_kpm = as_float_mask(kpm, torch.float32, gen)
    torch_mask = bool_mask(gen, (6, 4, 5), 0.5)
    hf = (torch.rand(3, 5, generator=gen) < 0.5).long()
    x = torch.randn(2, 5, 6, generator=gen)
    weights = torch.rand(2, 4, 5, generator=gen)
    inputs = [valid_lens, kpm, float_kpm, torch_mask, hf, x, weights]
    copies = [y.clone() for y in inputs]
    padding_mask(valid_lens, 5)
    from_valid_lens(valid_lens, 5)
    expand_key_mask(kpm)
    from_key_padding_mask(kpm)
    from_key_padding_mask(float_kpm)
    from_torch_attn_mask(torch_mask, num_heads=2)
    from_hf_attention_mask(hf)
    merge_heads(split_heads(x, 2))
    plt.close(attnlib.show_heatmaps(weights))
    plt.close(attnlib.show_matmul(x[0], x[1].T))
    assert_unchanged(copies, inputs)


# --- float16 and bfloat16 ------------------------------------------------------------------------


def upcast(case: Case) -> Case:
    up = [None if x is None else x.float() if x.is_floating_point() else x
          for x in (case.query, case.key, case.value, case.attn_mask)]
    return Case(*up, case.is_causal, case.allowed, case.gen)


@settings(max_examples=150)
@given(cases(dtypes=LOW))
def test_low_precision_is_finite_masked_exactly_and_close_to_float32(case):
    tol = LOW_TOL[case.query.dtype]
    out, weights = sdpa(case)
    assert out.dtype == weights.dtype == case.query.dtype
    assert bool(torch.isfinite(out).all()) and bool(torch.isfinite(weights).all())
    assert_weights_are_a_masked_distribution(weights, case.allowed)
    ref_out, ref_weights = sdpa(upcast(case))  # the same (rounded) inputs, computed in float32
    torch.testing.assert_close(weights.float(), ref_weights, atol=tol, rtol=tol)
    torch.testing.assert_close(out.float(), ref_out, atol=tol, rtol=tol)


@settings(max_examples=60)
@given(st.sampled_from(LOW), st.integers(1, 6), st.integers(1, 6), seeds)
def test_low_precision_masking_never_overflows_even_at_the_largest_scores(dtype, tq, tk, seed):
    # Scores up to half the dtype's largest value: masking with -inf (not a finite constant
    # such as -1e9, which is -inf in float16 anyway) keeps everything finite.
    gen = torch.Generator().manual_seed(seed)
    big = torch.finfo(dtype).max / 2
    scores = ((torch.rand(tq, tk, generator=gen) * 2 - 1) * big).to(dtype)
    mask = bool_mask(gen, (tq, tk), 0.6)
    weights = masked_softmax(scores, mask)
    assert bool(torch.isfinite(weights).all())
    assert_weights_are_a_masked_distribution(weights, mask)
    reference = masked_softmax(scores.float(), mask)
    torch.testing.assert_close(weights.float(), reference, atol=LOW_TOL[dtype], rtol=LOW_TOL[dtype])


@settings(max_examples=40)
@given(st.sampled_from(LOW), st.integers(1, 3), st.integers(1, 5), st.booleans(), seeds)
def test_low_precision_modules_match_float32(dtype, b, t, with_mask, seed):
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    tol = LOW_TOL[dtype]
    x = randn(gen, b, t, 8, dtype=dtype)
    key_mask = bool_mask(gen, (b, t), 0.6) if with_mask else torch.ones(b, t, dtype=torch.bool)
    mha, att = MultiHeadAttention(8, 2).eval(), AdditiveAttention(8, 8, 6).eval()
    for module, mask in ((mha, expand_key_mask(key_mask)), (att, expand_key_mask(key_mask, 3))):
        out, weights = module.to(dtype)(x, x, x, attn_mask=mask)
        ref_out, ref_weights = module.float()(x.float(), x.float(), x.float(), attn_mask=mask)
        assert bool(torch.isfinite(out).all()) and bool((weights.float()[~mask.expand_as(weights)] == 0).all())
        torch.testing.assert_close(weights.float(), ref_weights, atol=tol, rtol=tol)
        torch.testing.assert_close(out.float(), ref_out, atol=tol, rtol=tol)


# --- dropout ---------------------------------------------------------------------------------------


@settings(max_examples=40)
@given(cases(kinds=("none", "bool", "causal")), seeds)
def test_dropout_zero_is_deterministic_and_a_seed_makes_dropout_reproducible(case, seed):
    out1, w1 = sdpa(case, dropout_p=0.0)
    out2, w2 = sdpa(case, dropout_p=0.0)
    assert torch.equal(out1, out2) and torch.equal(w1, w2)
    torch.manual_seed(seed)
    out3, w3 = sdpa(case, dropout_p=0.4)
    torch.manual_seed(seed)
    out4, w4 = sdpa(case, dropout_p=0.4)
    assert torch.equal(out3, out4) and torch.equal(w3, w4)


@settings(max_examples=40)
@given(cases(kinds=("none", "bool", "key")), st.sampled_from([0.2, 0.5, 0.9]), seeds)
def test_returned_weights_are_after_dropout_and_multiplied_the_values(case, p, seed):
    # Documented: the weights are returned AFTER dropout, so output == weights @ value.
    out0, w0 = sdpa(case)
    torch.manual_seed(seed)
    out, w = sdpa(case, dropout_p=p)
    torch.testing.assert_close(out, w @ case.value)
    kept = w != 0
    torch.testing.assert_close(w[kept], w0[kept] / (1 - p))  # survivors are rescaled by 1 / (1 - p)


def test_dropout_actually_drops_so_the_weights_test_can_tell_before_from_after():
    gen = torch.Generator().manual_seed(0)
    q, k, v = randn(gen, 4, 8, 8), randn(gen, 4, 8, 8), randn(gen, 4, 8, 3)
    _, w0 = scaled_dot_product_attention(q, k, v)
    torch.manual_seed(0)
    out, w = scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    assert bool((w == 0).any()) and not torch.allclose(w.sum(-1), torch.ones(4, 8))  # not the pre-dropout weights
    assert not torch.allclose(out, w0 @ v)
    torch.testing.assert_close(out, w @ v)
    torch.manual_seed(1)
    _, w_other_seed = scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    assert not torch.equal(w, w_other_seed)


@settings(max_examples=25)
@given(st.integers(1, 3), st.integers(2, 6), seeds)
def test_modules_dropout_eval_is_deterministic_train_is_seeded_and_weights_are_after_dropout(b, t, seed):
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    x = randn(gen, b, t, 8)
    mha, att = MultiHeadAttention(8, 2, dropout=0.5), AdditiveAttention(8, 8, 4, dropout=0.5)
    for module in (mha, att):
        module.eval()
        first, second = module(x, x, x), module(x, x, x)
        assert torch.equal(first[0], second[0]) and torch.equal(first[1], second[1])
        assert torch.allclose(first[1].sum(-1), torch.ones(()))  # eval: no dropout, rows sum to 1
        module.train()
        torch.manual_seed(seed)
        third = module(x, x, x)
        torch.manual_seed(seed)
        fourth = module(x, x, x)
        assert torch.equal(third[0], fourth[0]) and torch.equal(third[1], fourth[1])
    # the weights returned in training mode are the ones that multiplied the values
    torch.manual_seed(seed)
    out, w = mha(x, x, x)
    heads = w @ split_heads(mha.v_proj(x), 2)  # (B, H, T, T) @ (B, H, T, Dh) -> (B, H, T, Dh)
    torch.testing.assert_close(out, mha.out_proj(merge_heads(heads)))
    torch.manual_seed(seed)
    out, w = att(x, x, x)
    torch.testing.assert_close(out, w @ x)
