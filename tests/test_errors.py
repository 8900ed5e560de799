"""Bad input gets a clear error, never a wrong answer.

Each test passes one kind of bad input and asserts the exception type and that the
message names the argument, what was expected and what was received. Where a nearby
input is valid, a control checks that it still works, so a check that rejects too
much fails too.
"""

from __future__ import annotations

import pytest
import torch

from attnlib import (
    AdditiveAttention,
    MultiHeadAttention,
    causal_mask,
    expand_key_mask,
    from_valid_lens,
    masked_softmax,
    padding_mask,
    scaled_dot_product_attention,
    split_heads,
)

B, TQ, TK, E, EV = 2, 3, 5, 4, 6


def expect_error(exc_type: type[Exception], call, *fragments: str) -> str:
    """Run ``call``, assert it raises exactly ``exc_type`` with every fragment in its message."""
    with pytest.raises(exc_type) as info:
        call()
    assert type(info.value) is exc_type, f"raised {type(info.value).__name__}, not {exc_type.__name__}"
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} is not in the message {message!r}"
    return message


def qkv(*batch: int, dtype: torch.dtype = torch.float32) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    return (
        torch.randn(*batch, TQ, E, generator=gen, dtype=dtype),  # query (..., Tq, E)
        torch.randn(*batch, TK, E, generator=gen, dtype=dtype),  # key (..., Tk, E)
        torch.randn(*batch, TK, EV, generator=gen, dtype=dtype),  # value (..., Tk, Ev)
    )


# --- shapes of query, key and value -------------------------------------------------------


def test_query_and_key_of_different_widths():
    q, k, v = qkv(B)
    expect_error(
        ValueError, lambda: scaled_dot_product_attention(q, k[..., :3], v),
        "query and key", "same last dimension E", "query (2, 3, 4)", "key (2, 5, 3)",
    )


def test_key_and_value_of_different_lengths():
    q, k, v = qkv(B)
    expect_error(
        ValueError, lambda: scaled_dot_product_attention(q, k, v[..., :4, :]),
        "key and value", "same length Tk", "key (2, 5, 4)", "value (2, 4, 6)",
    )


def test_batch_dimensions_that_do_not_broadcast():
    q, k, v = qkv(B)
    expect_error(
        ValueError, lambda: scaled_dot_product_attention(q[:1].expand(3, TQ, E), k, v),
        "batch dimensions", "broadcastable", "query (3, 3, 4)", "key (2, 5, 4)", "value (2, 5, 6)",
    )


def test_head_dimensions_that_do_not_broadcast():
    q, k, v = qkv(B, 4)  # (B, H=4, T, .)
    expect_error(
        ValueError, lambda: scaled_dot_product_attention(q, k[:, :3], v[:, :3]),
        "batch dimensions", "query (2, 4, 3, 4)", "key (2, 3, 5, 4)", "value (2, 3, 5, 6)",
    )
    # 4 query heads over 2 key/value heads is grouped-query attention's layout: the error says so
    expect_error(
        ValueError, lambda: scaled_dot_product_attention(q, k[:, :2], v[:, :2]),
        "enable_gqa=True", "query (2, 4, 3, 4)", "key (2, 2, 5, 4)",
    )


def test_broadcastable_batch_dimensions_are_accepted():
    q, k, v = qkv(B, 4)
    out, weights = scaled_dot_product_attention(q, k[:1], v[:1])  # one key set shared by the batch
    expected, _ = scaled_dot_product_attention(q, k[:1].expand(B, 4, TK, E), v[:1].expand(B, 4, TK, EV))
    assert out.shape == (B, 4, TQ, EV) and weights.shape == (B, 4, TQ, TK)
    torch.testing.assert_close(out, expected)


def test_inputs_with_too_few_dimensions():
    q, k, v = qkv(B)
    expect_error(ValueError, lambda: scaled_dot_product_attention(q[0, 0], k, v),
                 "query must have at least 2 dimensions", "got shape (4,)")


# --- masks: shape ---------------------------------------------------------------------------


def test_mask_that_does_not_broadcast_to_the_scores():
    q, k, v = qkv(B)
    mask = torch.ones(TQ + 1, TK, dtype=torch.bool)
    expect_error(
        ValueError, lambda: scaled_dot_product_attention(q, k, v, attn_mask=mask),
        "attn_mask must broadcast to (..., Tq, Tk) = (2, 3, 5)", "got shape (4, 5)",
    )


def test_4d_key_mask_with_3d_inputs_raises_instead_of_growing_the_output():
    # (B, 1, 1, Tk) with (B, Tq, E) inputs broadcasts to (B, B, Tq, Tk): a (B, B, Tq, Ev)
    # output that looks plausible. It must raise.
    q, k, v = qkv(B)
    mask = torch.tensor([[True] * TK, [True] * 2 + [False] * 3])  # (B, Tk)
    message = expect_error(
        ValueError, lambda: scaled_dot_product_attention(q, k, v, attn_mask=expand_key_mask(mask, ndim=4)),
        "attn_mask", "(2, 3, 5) without enlarging it", "got shape (2, 1, 1, 5)",
    )
    assert "mask[:, None, :]" in message  # the fix for 3-D inputs
    out, weights = scaled_dot_product_attention(q, k, v, attn_mask=expand_key_mask(mask, ndim=3))  # the fix works
    assert out.shape == (B, TQ, EV)
    assert bool((weights[1, :, 2:] == 0).all())


def test_mask_whose_batch_would_enlarge_the_batch_of_query_and_key():
    q, k, v = qkv(1)  # batch 1 ...
    mask = torch.ones(B, TQ, TK, dtype=torch.bool)  # ... but a mask for batch 2
    expect_error(
        ValueError, lambda: scaled_dot_product_attention(q, k, v, attn_mask=mask),
        "attn_mask must broadcast to (..., Tq, Tk) = (1, 3, 5) without enlarging it", "got shape (2, 3, 5)",
    )
    expect_error(  # the same when only value has the larger batch: the mask is checked against the scores
        ValueError, lambda: scaled_dot_product_attention(q, k, v.expand(B, TK, EV), attn_mask=mask),
        "(1, 3, 5) without enlarging it", "got shape (2, 3, 5)",
    )


def test_mask_with_more_dimensions_than_the_scores():
    q, k, v = qkv()
    expect_error(
        ValueError,
        lambda: scaled_dot_product_attention(q, k, v, attn_mask=torch.ones(1, TQ, TK, dtype=torch.bool)),
        "(..., Tq, Tk) = (3, 5)", "got shape (1, 3, 5)",
    )


# --- masks: dtype and values ------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8, torch.int8])
def test_integer_mask(dtype):
    q, k, v = qkv(B)
    mask = torch.ones(TQ, TK, dtype=dtype)
    expect_error(
        TypeError, lambda: scaled_dot_product_attention(q, k, v, attn_mask=mask),
        "attn_mask must be a bool tensor (True = may attend) or a float tensor", f"got dtype {dtype}",
        "attn_mask.bool()",
    )


def test_float_mask_of_only_zeros_and_ones_raises():
    # Documented choice: raise (not warn). Added to the scores, 1.0 would shift them, not mask.
    q, k, v = qkv(B)
    mask = torch.tensor([[1.0, 1.0, 0.0, 0.0, 1.0]]).expand(TQ, TK)
    expect_error(
        ValueError, lambda: scaled_dot_product_attention(q, k, v, attn_mask=mask),
        "attn_mask is a float tensor of only 0s and 1s", "pass attn_mask.bool()", "~attn_mask.bool()",
    )


def test_float_masks_that_are_not_zero_one_are_added():
    q, k, v = qkv(B)
    zeros = torch.zeros(TQ, TK)  # all 0: adds nothing, accepted
    torch.testing.assert_close(scaled_dot_product_attention(q, k, v, attn_mask=zeros),
                               scaled_dot_product_attention(q, k, v))
    blocked = torch.zeros(TQ, TK).masked_fill(torch.arange(TK) >= 3, float("-inf"))  # 0 / -inf: the float form
    as_bool = torch.arange(TK).expand(TQ, TK) < 3
    torch.testing.assert_close(scaled_dot_product_attention(q, k, v, attn_mask=blocked),
                               scaled_dot_product_attention(q, k, v, attn_mask=as_bool))


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_float_mask_holding_nan_or_plus_inf(bad):
    q, k, v = qkv(B)
    mask = torch.zeros(TQ, TK)
    mask[1, 2] = bad
    expect_error(
        ValueError, lambda: scaled_dot_product_attention(q, k, v, attn_mask=mask),
        "float attn_mask must hold finite values or -inf", "got NaN or +inf",
    )


def test_float_mask_of_another_dtype():
    q, k, v = qkv(B)
    expect_error(
        TypeError, lambda: scaled_dot_product_attention(q, k, v, attn_mask=torch.zeros(TQ, TK, dtype=torch.float64)),
        "attn_mask", "must have their dtype torch.float32", "got torch.float64",
    )


def test_mask_that_is_not_a_tensor():
    q, k, v = qkv(B)
    expect_error(TypeError, lambda: scaled_dot_product_attention(q, k, v, attn_mask=[[True] * TK] * TQ),
                 "attn_mask must be a torch.Tensor", "got list")


# --- other arguments ------------------------------------------------------------------------


def test_attn_mask_together_with_is_causal():
    q, k, v = qkv(B)
    expect_error(
        ValueError, lambda: scaled_dot_product_attention(q, k, v, attn_mask=causal_mask(TQ, TK), is_causal=True),
        "attn_mask and is_causal=True cannot be combined", "with &",
    )


@pytest.mark.parametrize("p", [-0.1, 1.0, 1.5, float("nan"), float("inf"), "0.1", True, None])
def test_dropout_p_outside_0_1(p):
    q, k, v = qkv(B)
    expect_error(ValueError, lambda: scaled_dot_product_attention(q, k, v, dropout_p=p),
                 "dropout_p must be a float in [0, 1)", f"got {p!r}")


@pytest.mark.parametrize("scale", [float("nan"), float("inf"), -float("inf")])
def test_scale_that_is_not_finite(scale):
    q, k, v = qkv(B)
    expect_error(ValueError, lambda: scaled_dot_product_attention(q, k, v, scale=scale),
                 "scale must be a finite float", f"got {scale!r}")


def test_scale_that_is_not_a_number():
    q, k, v = qkv(B)
    expect_error(TypeError, lambda: scaled_dot_product_attention(q, k, v, scale="0.5"),
                 "scale must be a float or None", "got str")


# --- dtypes and devices ---------------------------------------------------------------------


@pytest.mark.parametrize("name", ["query", "key", "value"])
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.bool, torch.complex64])
def test_non_floating_inputs(name, dtype):
    inputs = dict(zip(("query", "key", "value"), qkv(B)))
    inputs[name] = inputs[name].to(dtype)
    expect_error(
        TypeError, lambda: scaled_dot_product_attention(**inputs),
        f"{name} must be a floating-point tensor", f"got dtype {dtype}", f"{name}.float()",
    )


def test_input_that_is_not_a_tensor():
    q, k, v = qkv(B)
    expect_error(TypeError, lambda: scaled_dot_product_attention(q.tolist(), k, v),
                 "query must be a torch.Tensor", "got list")


@pytest.mark.parametrize("name", ["key", "value"])
def test_inputs_of_different_dtypes(name):
    inputs = dict(zip(("query", "key", "value"), qkv(B)))
    inputs[name] = inputs[name].double()
    expect_error(
        TypeError, lambda: scaled_dot_product_attention(**inputs),
        f"query and {name} must have the same dtype", "got query torch.float32", f"{name} torch.float64",
    )


@pytest.mark.parametrize("name", ["key", "value"])
def test_inputs_on_different_devices(name):
    # Only the CPU is available here; "meta" is a second device. Without the check, the
    # matmul would fail with torch's RuntimeError; the check raises first, naming both.
    inputs = dict(zip(("query", "key", "value"), qkv(B)))
    inputs[name] = inputs[name].to("meta")
    expect_error(
        ValueError, lambda: scaled_dot_product_attention(**inputs),
        f"query and {name} must be on the same device", "got query on cpu", f"{name} on meta",
    )


@pytest.mark.parametrize("mask", [
    torch.ones(TQ, TK, dtype=torch.bool, device="meta"),
    torch.zeros(TQ, TK, device="meta"),  # a float mask: no value is read before the device check
])
def test_mask_on_another_device(mask):
    q, k, v = qkv(B)
    expect_error(ValueError, lambda: scaled_dot_product_attention(q, k, v, attn_mask=mask),
                 "attn_mask must be on cpu", "got meta")


def test_all_inputs_on_one_other_device_are_fine():
    # The device checks compare devices; they do not reject a device. On "meta" torch
    # computes shapes only, which shows that every check runs before any computation.
    q, k, v = (x.to("meta") for x in qkv(B))
    out, weights = scaled_dot_product_attention(q, k, v, attn_mask=torch.ones(TQ, TK, dtype=torch.bool, device="meta"))
    assert out.device.type == "meta" and out.shape == (B, TQ, EV) and weights.shape == (B, TQ, TK)


# --- masked_softmax ----------------------------------------------------------------------------


def test_masked_softmax_errors():
    scores = torch.randn(B, TQ, TK)
    expect_error(TypeError, lambda: masked_softmax(scores.long()),
                 "scores must be a floating-point tensor", "got dtype torch.int64")
    expect_error(TypeError, lambda: masked_softmax(scores, torch.ones(TQ, TK)),
                 "mask must be a bool tensor (True = may attend)", "got dtype torch.float32")
    expect_error(TypeError, lambda: masked_softmax(scores, torch.ones(TQ, TK, dtype=torch.int64)),
                 "mask must be a bool tensor", "got dtype torch.int64", "mask.bool()")
    expect_error(ValueError, lambda: masked_softmax(scores, torch.ones(TK, TQ, dtype=torch.bool)),
                 "mask must broadcast to scores' shape = (2, 3, 5)", "got shape (5, 3)")
    expect_error(ValueError, lambda: masked_softmax(scores, torch.ones(B, 1, 1, TK, dtype=torch.bool)),
                 "(2, 3, 5) without enlarging it", "got shape (2, 1, 1, 5)")
    expect_error(ValueError, lambda: masked_softmax(scores, torch.ones(TQ, TK, dtype=torch.bool, device="meta")),
                 "mask must be on cpu", "got meta")


# --- masks built by attnlib ---------------------------------------------------------------------


@pytest.mark.parametrize("lens", [[2, -1], [2, 6], [-3, 9]])
def test_padding_mask_with_a_length_outside_0_max_len(lens):
    expect_error(
        ValueError, lambda: padding_mask(torch.tensor(lens), 5),
        "valid_lens must lie in [0, max_len=5]", f"got values from {min(lens)} to {max(lens)}", "shape (2,)",
    )
    expect_error(ValueError, lambda: from_valid_lens(lens, 5), "valid_lens must lie in [0, max_len=5]")


def test_padding_mask_at_the_limits_is_fine():
    assert padding_mask([0, 5], 5).tolist() == [[False] * 5, [True] * 5]


def test_padding_mask_other_errors():
    expect_error(TypeError, lambda: padding_mask(torch.tensor([1.0, 2.0]), 5),
                 "valid_lens must be an integer tensor", "got dtype torch.float32")
    expect_error(ValueError, lambda: padding_mask([1, 2], -1), "max_len must be a non-negative int", "got -1")


def test_causal_mask_errors():
    expect_error(ValueError, lambda: causal_mask(-1), "q_len must be a non-negative int", "got -1")
    expect_error(ValueError, lambda: causal_mask(3, 2.5), "kv_len must be a non-negative int", "got 2.5")
    expect_error(ValueError, lambda: causal_mask(3, align="bottom"), "align must be one of", "got 'bottom'")


def test_expand_key_mask_errors():
    expect_error(ValueError, lambda: expand_key_mask(torch.ones(B, TQ, TK, dtype=torch.bool)),
                 "mask must have shape (B, Tk)", "got shape (2, 3, 5)")


# --- MultiHeadAttention and split_heads ---------------------------------------------------------


def test_num_heads_that_does_not_divide_embed_dim():
    expect_error(ValueError, lambda: MultiHeadAttention(10, 3), "embed_dim=10 must be divisible by num_heads=3")
    expect_error(ValueError, lambda: split_heads(torch.randn(B, TQ, 10), 4),
                 "must be divisible by num_heads=4", "E (x.shape[-1])=10")
    expect_error(ValueError, lambda: MultiHeadAttention(8, 0), "num_heads must be a positive int", "got 0")


def mha_and_input() -> tuple[MultiHeadAttention, torch.Tensor]:
    torch.manual_seed(0)
    return MultiHeadAttention(8, 2).eval(), torch.randn(B, TQ, 8)


def test_multihead_bad_inputs():
    mha, x = mha_and_input()
    expect_error(TypeError, lambda: mha(x.long(), x, x), "query must be a floating-point tensor", "torch.int64")
    expect_error(ValueError, lambda: mha(x[..., :6], x, x), "query must have shape (B, Tq, E=8)", "got shape (2, 3, 6)")
    expect_error(ValueError, lambda: mha(x[0], x, x), "query must have shape (B, Tq, E=8)", "got shape (3, 8)")
    expect_error(ValueError, lambda: mha(x, x[:1].expand(3, TQ, 8), x[:1].expand(3, TQ, 8)),
                 "same batch size B", "query (2, 3, 8)", "key (3, 3, 8)")
    expect_error(ValueError, lambda: mha(x, x, x[:, :2]), "key and value must have the same length Tk",
                 "key (2, 3, 8)", "value (2, 2, 8)")
    expect_error(ValueError, lambda: MultiHeadAttention(8, 2, dropout=1.0), "dropout must be a float in [0, 1)")


def test_multihead_dtype_and_device():
    mha, x = mha_and_input()
    expect_error(TypeError, lambda: mha(x.double(), x.double(), x.double()),
                 "must have the module's dtype torch.float32", "got torch.float64")
    expect_error(TypeError, lambda: mha(x, x.double(), x), "query and key must have the same dtype")
    meta = x.to("meta")
    expect_error(ValueError, lambda: mha(x, meta, meta), "query and key must be on the same device",
                 "got query on cpu", "key on meta")
    expect_error(ValueError, lambda: mha(meta, meta, meta), "module's device cpu", "got meta")


def test_multihead_masks():
    mha, x = mha_and_input()
    key_mask = torch.tensor([[True] * TQ, [True, False, False]])  # (B, Tk)
    expect_error(TypeError, lambda: mha(x, x, x, attn_mask=key_mask.long()), "attn_mask must be a bool tensor",
                 "torch.int64")
    expect_error(ValueError, lambda: mha(x, x, x, attn_mask=key_mask.float()), "only 0s and 1s")
    expect_error(ValueError, lambda: mha(x, x, x, attn_mask=torch.ones(B, 1, 1, 1, TQ, dtype=torch.bool)),
                 "attn_mask must broadcast to (B, H, Tq, Tk) = (2, 2, 3, 3)", "got shape (2, 1, 1, 1, 3)")
    expect_error(ValueError, lambda: mha(x, x, x, attn_mask=causal_mask(TQ), is_causal=True),
                 "attn_mask and is_causal=True cannot be combined")
    _, weights = mha(x, x, x, attn_mask=expand_key_mask(key_mask))  # the documented (B, 1, 1, Tk) form works
    assert bool((weights[1, :, :, 1:] == 0).all())


# --- AdditiveAttention ------------------------------------------------------------------------------


def additive_and_inputs() -> tuple[AdditiveAttention, torch.Tensor, torch.Tensor, torch.Tensor]:
    torch.manual_seed(0)
    return AdditiveAttention(3, 4, 5).eval(), torch.randn(B, TQ, 3), torch.randn(B, TK, 4), torch.randn(B, TK, EV)


def test_additive_bad_inputs():
    att, q, k, v = additive_and_inputs()
    expect_error(ValueError, lambda: att(q[..., :2], k, v), "queries must have shape (B, Tq, 3)", "got shape (2, 3, 2)")
    expect_error(ValueError, lambda: att(q, k[..., :2], v), "keys must have shape (B, Tk, 4)", "got shape (2, 5, 2)")
    expect_error(ValueError, lambda: att(q, k, v[:, :4]), "keys and values must have the same length Tk",
                 "keys (2, 5, 4)", "values (2, 4, 6)")
    expect_error(ValueError, lambda: att(q, k[:1], v[:1]), "same batch size B", "queries (2, 3, 3)", "keys (1, 5, 4)")
    expect_error(TypeError, lambda: att(q.long(), k, v), "queries must be a floating-point tensor", "torch.int64")
    expect_error(TypeError, lambda: att(q, k.double(), v), "queries and keys must have the same dtype")
    expect_error(ValueError, lambda: AdditiveAttention(3, 4, 0), "num_hiddens must be a positive int", "got 0")
    expect_error(ValueError, lambda: AdditiveAttention(3, 4, 5, dropout=-0.5), "dropout must be a float in [0, 1)")


def test_additive_masks():
    att, q, k, v = additive_and_inputs()
    key_mask = torch.tensor([[True] * TK, [True, True, False, False, False]])  # (B, Tk)
    expect_error(TypeError, lambda: att(q, k, v, attn_mask=key_mask.long()), "attn_mask must be a bool tensor",
                 "torch.int64")
    expect_error(ValueError, lambda: att(q, k, v, attn_mask=key_mask.float()[:, None, :]), "only 0s and 1s")
    expect_error(ValueError, lambda: att(q, k, v, attn_mask=expand_key_mask(key_mask, ndim=4)),
                 "attn_mask must broadcast to (B, Tq, Tk) = (2, 3, 5) without enlarging it", "got shape (2, 1, 1, 5)")
    _, weights = att(q, k, v, attn_mask=expand_key_mask(key_mask, ndim=3))  # the documented (B, 1, Tk) form works
    assert bool((weights[1, :, 2:] == 0).all())


def test_additive_inputs_of_another_dtype_than_the_module():
    att, q, k, v = additive_and_inputs()  # float32 parameters
    expect_error(TypeError, lambda: att(q.double(), k.double(), v.double()),
                 "torch.float32", "torch.float64")


def test_additive_inputs_on_another_device_than_the_module():
    att, q, k, v = additive_and_inputs()  # parameters on cpu
    expect_error(ValueError, lambda: att(q.to("meta"), k.to("meta"), v.to("meta")), "cpu", "meta")

