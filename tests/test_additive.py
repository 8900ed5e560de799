"""attnlib.AdditiveAttention: d2l's golden example, a by-hand loop, masking and errors."""

from __future__ import annotations

import pytest
import torch

from attnlib import AdditiveAttention, from_valid_lens, masked_softmax


def inputs(b=2, tq=3, tk=5, dq=4, dk=6, dv=3, dtype=torch.float64, seed=0):
    g = torch.Generator().manual_seed(seed)
    queries = torch.randn(b, tq, dq, generator=g, dtype=dtype)
    keys = torch.randn(b, tk, dk, generator=g, dtype=dtype)
    values = torch.randn(b, tk, dv, generator=g, dtype=dtype)
    return queries, keys, values


def module(dq=4, dk=6, h=8, dropout=0.0, dtype=torch.float64, seed=0):
    torch.manual_seed(seed)
    return AdditiveAttention(dq, dk, h, dropout=dropout).to(dtype).eval()


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 42])
def test_d2l_golden_example_equal_keys_average_the_valid_values(seed):
    # d2l sec. 11.3.2: all keys equal, so every valid key gets the same score and weight.
    torch.manual_seed(seed)
    queries = torch.normal(0, 1, (2, 1, 20))
    keys = torch.ones((2, 10, 2))
    values = torch.arange(40, dtype=torch.float32).reshape(1, 10, 4).repeat(2, 1, 1)
    mask = from_valid_lens(torch.tensor([2, 6]), 10, ndim=3)  # (B, 1, Tk)
    attention = AdditiveAttention(query_size=20, key_size=2, num_hiddens=8, dropout=0.1).eval()
    output, weights = attention(queries, keys, values, attn_mask=mask)
    assert output.shape == (2, 1, 4) and weights.shape == (2, 1, 10)
    torch.testing.assert_close(output, torch.tensor([[[2.0, 3.0, 4.0, 5.0]], [[10.0, 11.0, 12.0, 13.0]]]))
    torch.testing.assert_close(weights[0, 0, :2], torch.full((2,), 1 / 2))
    torch.testing.assert_close(weights[1, 0, :6], torch.full((6,), 1 / 6))


def test_equals_a_loop_over_query_key_pairs():
    queries, keys, values = inputs()
    attention = module()
    b, tq, tk = queries.shape[0], queries.shape[1], keys.shape[1]
    scores = torch.empty(b, tq, tk, dtype=queries.dtype)
    with torch.no_grad():
        for n in range(b):
            for i in range(tq):
                for j in range(tk):
                    hidden = torch.tanh(attention.W_q.weight @ queries[n, i] + attention.W_k.weight @ keys[n, j])
                    scores[n, i, j] = attention.w_v.weight[0] @ hidden
        output, weights = attention(queries, keys, values)
        torch.testing.assert_close(attention.scores(queries, keys), scores)
    expected = torch.softmax(scores, dim=-1)
    torch.testing.assert_close(weights, expected)
    torch.testing.assert_close(output, expected @ values)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_masked_keys_get_exactly_zero_and_rows_sum_to_one(dtype):
    queries, keys, values = inputs(b=3, tq=4, tk=7, dtype=dtype, seed=1)
    attention = module(dtype=dtype)
    valid_lens = torch.tensor([1, 4, 7])
    with torch.no_grad():
        output, weights = attention(queries, keys, values, attn_mask=from_valid_lens(valid_lens, 7, ndim=3))
        for n, length in enumerate(valid_lens.tolist()):
            assert (weights[n, :, length:] == 0.0).all()
            assert (weights[n, :, :length] > 0.0).all()
            # the padded keys' values never reach the output
            shorter, _ = attention(queries[n : n + 1], keys[n : n + 1, :length], values[n : n + 1, :length])
            torch.testing.assert_close(output[n : n + 1], shorter)
    torch.testing.assert_close(weights.sum(-1), torch.ones(3, 4, dtype=dtype))


def test_mask_goes_through_masked_softmax_like_dot_product_attention():
    queries, keys, values = inputs(seed=2)
    attention = module()
    mask = torch.rand(2, 3, 5, generator=torch.Generator().manual_seed(3)) > 0.4  # (B, Tq, Tk)
    with torch.no_grad():
        _, weights = attention(queries, keys, values, attn_mask=mask)
        torch.testing.assert_close(weights, masked_softmax(attention.scores(queries, keys), mask))
        float_mask = torch.zeros(2, 3, 5, dtype=torch.float64).masked_fill(~mask, float("-inf"))
        _, float_weights = attention(queries, keys, values, attn_mask=float_mask)
    torch.testing.assert_close(float_weights, weights)


def test_fully_masked_rows_give_zeros_and_finite_gradients():
    queries, keys, values = inputs(seed=4)
    queries.requires_grad_(True)
    keys.requires_grad_(True)
    values.requires_grad_(True)
    attention = module()
    mask = from_valid_lens(torch.tensor([0, 3]), 5, ndim=3)  # example 0 has no valid key
    output, weights = attention(queries, keys, values, attn_mask=mask)
    assert (weights[0] == 0.0).all() and (output[0] == 0.0).all()
    assert torch.isfinite(output).all() and torch.isfinite(weights).all()
    output.sum().backward()
    for t in (queries, keys, values, attention.W_q.weight, attention.W_k.weight, attention.w_v.weight):
        assert torch.isfinite(t.grad).all()
    assert (queries.grad[0] == 0.0).all()


def test_dropout_only_in_training_and_output_is_weights_times_values():
    queries, keys, values = inputs(b=4, tq=6, tk=9, seed=5)
    attention = module(dropout=0.5)
    with torch.no_grad():
        eval_output, eval_weights = attention(queries, keys, values)
        attention.train()
        torch.manual_seed(0)
        output, weights = attention(queries, keys, values)
    assert (weights == 0.0).any() and not (eval_weights == 0.0).any()
    torch.testing.assert_close(output, weights @ values)
    kept = weights != 0.0
    torch.testing.assert_close(weights[kept], 2.0 * eval_weights[kept])


def test_queries_and_keys_of_different_sizes_and_values_of_any_width():
    attention = module(dq=3, dk=11, h=5)
    queries, keys, values = inputs(tq=2, tk=4, dq=3, dk=11, dv=7)
    output, weights = attention(queries, keys, values)
    assert output.shape == (2, 2, 7) and weights.shape == (2, 2, 4)


def test_inputs_are_not_modified():
    queries, keys, values = inputs(seed=6)
    mask = from_valid_lens(torch.tensor([2, 5]), 5, ndim=3)
    copies = [t.clone() for t in (queries, keys, values, mask)]
    module()(queries, keys, values, attn_mask=mask)
    for before, after in zip(copies, (queries, keys, values, mask)):
        assert torch.equal(before, after)


@pytest.mark.parametrize(
    "change, error, message",
    [
        (lambda q, k, v: (q[0], k, v), ValueError, r"queries must have shape \(B, Tq, Dq\), got shape \(3, 4\)"),
        (lambda q, k, v: (q, k[None], v), ValueError, r"keys must have shape \(B, Tk, Dk\), got shape \(1, 2, 5, 6\)"),
        (lambda q, k, v: (q[..., :3], k, v), ValueError, r"queries must have shape \(B, Tq, 4\), got \S+ \(2, 3, 3\)"),
        (lambda q, k, v: (q, k[..., :5], v), ValueError, r"keys must have shape \(B, Tk, 6\), got shape \(2, 5, 5\)"),
        (lambda q, k, v: (q[:1], k, v), ValueError, r"same batch size B.*queries \(1, 3, 4\)"),
        (lambda q, k, v: (q, k, v[:, :4]), ValueError, r"same length Tk.*keys \(2, 5, 6\) and values \(2, 4, 3\)"),
        (lambda q, k, v: (q, k, v.long()), TypeError, r"values must be a floating-point tensor"),
        (lambda q, k, v: (q, k, v.float()), TypeError, r"queries and values must have the same dtype"),
        (lambda q, k, v: (q.tolist(), k, v), TypeError, r"queries must be a torch.Tensor"),
    ],
    ids=["queries-2d", "keys-4d", "query-size", "key-size", "batch", "lengths", "int-values", "dtype", "list"],
)
def test_bad_inputs_raise_naming_the_argument_and_shapes(change, error, message):
    queries, keys, values = change(*inputs())
    with pytest.raises(error, match=message):
        module()(queries, keys, values)


@pytest.mark.parametrize(
    "mask, error, message",
    [
        (torch.ones(2, 5, dtype=torch.bool), ValueError, r"attn_mask must broadcast to \(B, Tq, Tk\) = \(2, 3, 5\)"),
        (torch.ones(2, 1, 1, 5, dtype=torch.bool), ValueError, r"without enlarging it, got shape \(2, 1, 1, 5\)"),
        (torch.ones(2, 1, 5, dtype=torch.long), TypeError, r"attn_mask must be a bool tensor"),
    ],
    ids=["(B, Tk) without query axis", "4-D", "integer"],
)
def test_bad_masks_raise(mask, error, message):
    with pytest.raises(error, match=message):
        module()(*inputs(), attn_mask=mask)


@pytest.mark.parametrize(
    "args, message",
    [((0, 4, 8), "query_size must be a positive int"), ((4, 4, 2.5), "num_hiddens must be a positive int")],
)
def test_bad_constructor_arguments_raise(args, message):
    with pytest.raises(ValueError, match=message):
        AdditiveAttention(*args)
    with pytest.raises(ValueError, match=r"dropout must be a float in \[0, 1\)"):
        AdditiveAttention(4, 4, 8, dropout=1.0)
