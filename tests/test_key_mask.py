"""The modules' ``key_mask``: a (B, Tk) padding mask, True = real key, combined with ``&``.

A (B, Tk) padding mask given as ``attn_mask`` is read as (Tq, Tk); when B == Tq nothing
can tell, and the answer is silently wrong. ``key_mask`` takes the common case off that
path. Every test here uses B == Tq, the case a square mask gets wrong.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

from attnlib import AdditiveAttention, MultiHeadAttention, causal_mask, expand_key_mask, padding_mask

B = TQ = 3  # B == Tq: a (B, Tk) mask would also pass as (Tq, Tk)
TK, E, H = 3, 8, 2
LENS = [3, 1, 2]


def inputs(tk: int = TK) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    return tuple(torch.randn(B, t, E, generator=gen) for t in (TQ, tk, tk))


def pair() -> tuple[MultiHeadAttention, nn.MultiheadAttention]:
    torch.manual_seed(0)
    ref = nn.MultiheadAttention(E, H, batch_first=True).eval()
    return MultiHeadAttention.from_torch(ref), ref


def test_multihead_key_mask_equals_torch_key_padding_mask_when_b_equals_tq():
    mha, ref = pair()
    q, k, v = inputs()
    key_mask = padding_mask(LENS, TK)  # (B, Tk), True = real key
    out, weights = mha(q, k, v, key_mask=key_mask)
    expected, expected_weights = ref(q, k, v, key_padding_mask=~key_mask, average_attn_weights=False)
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(weights, expected_weights)
    assert bool((weights[1, :, :, 1:] == 0).all()) and bool((weights[2, :, :, 2:] == 0).all())
    # The trap key_mask avoids: the same mask as a 2-D attn_mask is accepted as (Tq, Tk) and wrong.
    wrong, _ = mha(q, k, v, attn_mask=key_mask)
    assert not torch.allclose(wrong, expected)


@pytest.mark.parametrize("tk", [TK, 5])
def test_multihead_key_mask_and_attn_mask_combine_with_and(tk):
    mha, ref = pair()
    q, k, v = inputs(tk)
    key_mask = padding_mask([tk, 1, 2], tk)
    attn = causal_mask(TQ, tk, align="bottom_right")  # (Tq, Tk)
    out, weights = mha(q, k, v, attn_mask=attn, key_mask=key_mask)
    expected, _ = ref(q, k, v, attn_mask=~attn, key_padding_mask=~key_mask)
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(weights, mha(q, k, v, attn_mask=attn & expand_key_mask(key_mask))[1])
    # the same pairs as a float mask (0 / -inf): key_mask puts -inf on the padding keys
    additive = torch.zeros(TQ, tk).masked_fill(~attn, float("-inf"))
    torch.testing.assert_close(mha(q, k, v, attn_mask=additive, key_mask=key_mask)[0], expected)
    # a 4-D per-example mask combines too
    per_example = attn.expand(B, 1, TQ, tk)
    torch.testing.assert_close(mha(q, k, v, attn_mask=per_example, key_mask=key_mask)[0], expected)


def test_multihead_key_mask_with_is_causal_equals_both_masks():
    mha, ref = pair()
    q, k, v = inputs()
    key_mask = padding_mask([3, 2, 2], TK)
    out, weights = mha(q, k, v, is_causal=True, key_mask=key_mask)
    expected, _ = ref(q, k, v, attn_mask=~causal_mask(TQ), key_padding_mask=~key_mask)
    torch.testing.assert_close(out, expected)
    assert bool((weights[0, :, 0, 1:] == 0).all())  # causal: query 0 sees key 0 only
    with pytest.raises(ValueError, match="attn_mask and is_causal=True cannot be combined"):
        mha(q, k, v, attn_mask=causal_mask(TQ), is_causal=True, key_mask=key_mask)


@pytest.mark.parametrize("tk", [2, 5])
def test_multihead_is_causal_with_a_key_mask_when_tq_differs_from_tk(tk):
    mha, ref = pair()
    q, k, v = inputs(tk)
    key_mask = padding_mask([tk, 1, 2], tk)
    out, weights = mha(q, k, v, is_causal=True, key_mask=key_mask)
    expected, _ = mha(q, k, v, attn_mask=causal_mask(TQ, tk) & expand_key_mask(key_mask))
    torch.testing.assert_close(out, expected)
    assert weights.shape == (B, H, TQ, tk)
    assert bool((weights[0, :, 0, 1:] == 0).all()) and bool((weights[0, :, 1, :2] > 0).all())


def test_multihead_key_mask_all_true_changes_nothing():
    mha, _ = pair()
    q, k, v = inputs()
    torch.testing.assert_close(mha(q, k, v, key_mask=torch.ones(B, TK, dtype=torch.bool)), mha(q, k, v))


def additive() -> AdditiveAttention:
    torch.manual_seed(0)
    return AdditiveAttention(E, E, 5).eval()


@pytest.mark.parametrize("tk", [TK, 5])
def test_additive_key_mask_equals_the_expanded_mask_when_b_equals_tq(tk):
    att = additive()
    q, k, v = inputs(tk)
    key_mask = padding_mask([tk, 1, 2], tk)
    out, weights = att(q, k, v, key_mask=key_mask)
    expected, expected_weights = att(q, k, v, attn_mask=expand_key_mask(key_mask, ndim=3))
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(weights, expected_weights)
    assert bool((weights[1, :, 1:] == 0).all()) and bool((weights[2, :, 2:] == 0).all())
    if tk == TQ:  # the trap: as attn_mask, the same (B, Tk) mask is taken for (Tq, Tk)
        assert not torch.allclose(att(q, k, v, attn_mask=key_mask)[0], expected)


def test_additive_key_mask_and_attn_mask_combine_with_and():
    att = additive()
    q, k, v = inputs()
    key_mask, attn = padding_mask([3, 2, 2], TK), causal_mask(TQ)
    out, weights = att(q, k, v, attn_mask=attn, key_mask=key_mask)
    expected, _ = att(q, k, v, attn_mask=attn & expand_key_mask(key_mask, ndim=3))
    torch.testing.assert_close(out, expected)
    additive_mask = torch.zeros(TQ, TK).masked_fill(~attn, float("-inf"))
    torch.testing.assert_close(att(q, k, v, attn_mask=additive_mask, key_mask=key_mask)[0], expected)
    assert bool((weights[1, :, 2:] == 0).all()) and bool((weights[:, 0, 1:] == 0).all())


MODULES = {
    "multihead": lambda: (pair()[0], inputs()),
    "additive": lambda: (additive(), inputs()),
}


@pytest.mark.parametrize("module", MODULES)
@pytest.mark.parametrize("bad,error,fragments", [
    (torch.ones(B, TK, dtype=torch.int64), TypeError,
     ["key_mask must be a bool tensor (B, Tk), True = real key", "got dtype torch.int64", "key_mask.bool()",
      "~key_padding_mask.bool()", "from_key_padding_mask"]),
    (torch.zeros(B, TK), TypeError, ["key_mask must be a bool tensor", "got dtype torch.float32"]),
    ([[True] * TK] * B, TypeError, ["key_mask must be a torch.Tensor", "got list"]),
    (torch.ones(TK, dtype=torch.bool), ValueError, ["key_mask must have shape (B, Tk) = (3, 3)", "got shape (3,)"]),
    (torch.ones(B, 1, TK, dtype=torch.bool), ValueError, ["(B, Tk) = (3, 3)", "got shape (3, 1, 3)"]),
    (torch.ones(B, TK + 1, dtype=torch.bool), ValueError, ["(B, Tk) = (3, 3)", "got shape (3, 4)"]),
    (torch.ones(B - 1, TK, dtype=torch.bool), ValueError, ["(B, Tk) = (3, 3)", "got shape (2, 3)"]),
    (torch.ones(1, TK, dtype=torch.bool), ValueError, ["(B, Tk) = (3, 3)", "got shape (1, 3)"]),
    (torch.ones(B, TK, dtype=torch.bool, device="meta"), ValueError, ["key_mask must be on cpu", "got meta"]),
])
def test_bad_key_mask_raises_naming_it_and_the_shapes(module, bad, error, fragments):
    m, (q, k, v) = MODULES[module]()
    with pytest.raises(error) as info:
        m(q, k, v, key_mask=bad)
    assert type(info.value) is error
    for fragment in fragments:
        assert fragment in str(info.value), f"{fragment!r} not in {str(info.value)!r}"


@pytest.mark.parametrize("module", MODULES)
def test_attn_mask_errors_name_attn_mask_even_with_a_key_mask(module):
    m, (q, k, v) = MODULES[module]()
    key_mask = torch.ones(B, TK, dtype=torch.bool)
    with pytest.raises(TypeError, match="attn_mask must be a bool tensor"):
        m(q, k, v, attn_mask=torch.ones(TQ, TK, dtype=torch.int64), key_mask=key_mask)
    with pytest.raises(ValueError, match="attn_mask must broadcast to"):
        m(q, k, v, attn_mask=torch.ones(TQ + 1, TK, dtype=torch.bool), key_mask=key_mask)


def test_key_mask_is_keyword_only():
    mha, _ = pair()
    q, k, v = inputs()
    with pytest.raises(TypeError):
        mha(q, k, v, None, False, torch.ones(B, TK, dtype=torch.bool))
