"""Notebook 06 (additive attention): learner answers to its four exercises."""

from fractions import Fraction

import numpy as np
import torch
import torch.nn.functional as F

from attnlib import AdditiveAttention, from_valid_lens, masked_softmax

from . import right, wrong

EXERCISES = {"check_features_shape": 1, "check_pair_scores": 2, "check_masked_weights": 3,
             "check_largest_weight": 4}

EX1 = "nb06.check_features_shape"  # tanh(W_q q + W_k k) for B = 3 texts, Tq = 10, Tk = 15, h = 2: (3, 10, 15, 2)
EX2 = "nb06.check_pair_scores"
EX3 = "nb06.check_masked_weights"
EX4 = "nb06.check_largest_weight"  # queries x 1000: tanh saturates, uniform over the 15 keys of the first text


# Exercise 2: pair_scores(queries, keys, W_q, W_k, w_v) -> (B, Tq, Tk)
def ps_einsum(queries, keys, W_q, W_k, w_v):
    q = torch.einsum("bqd,hd->bqh", queries, W_q)
    k = torch.einsum("bkd,hd->bkh", keys, W_k)
    return torch.einsum("bqkh,h->bqk", torch.tanh(q[:, :, None, :] + k[:, None, :, :]), w_v)


def ps_linear(queries, keys, W_q, W_k, w_v):
    features = torch.tanh(F.linear(queries, W_q).unsqueeze(2) + F.linear(keys, W_k).unsqueeze(1))
    return (features * w_v).sum(dim=-1)


def ps_loop(queries, keys, W_q, W_k, w_v):
    B, Tq, Tk = queries.shape[0], queries.shape[1], keys.shape[1]
    out = torch.zeros(B, Tq, Tk)
    for b in range(B):
        for i in range(Tq):
            for j in range(Tk):
                out[b, i, j] = w_v @ torch.tanh(W_q @ queries[b, i] + W_k @ keys[b, j])
    return out


def ps_matmul(queries, keys, W_q, W_k, w_v):
    q = torch.matmul(queries, W_q.t())
    k = torch.matmul(keys, W_k.t())
    return torch.matmul(torch.tanh(q.unsqueeze(-2) + k.unsqueeze(-3)), w_v.unsqueeze(-1)).squeeze(-1)


def ps_float64(queries, keys, W_q, W_k, w_v):
    d = [t.double() for t in (queries, keys, W_q, W_k, w_v)]
    q, k = d[0] @ d[2].T, d[1] @ d[3].T
    return (torch.tanh(q.unsqueeze(2) + k.unsqueeze(1)) @ d[4]).float()


def ps_no_tanh(queries, keys, W_q, W_k, w_v):
    q, k = queries @ W_q.T, keys @ W_k.T
    return (q.unsqueeze(2) + k.unsqueeze(1)) @ w_v


def ps_unsqueeze_swapped(queries, keys, W_q, W_k, w_v):  # (B, 1, Tq, h) + (B, Tk, 1, h) -> (B, Tk, Tq, h)
    q, k = queries @ W_q.T, keys @ W_k.T
    return torch.tanh(q.unsqueeze(1) + k.unsqueeze(2)) @ w_v


def ps_tanh_each(queries, keys, W_q, W_k, w_v):  # tanh(W_q q) + tanh(W_k k): the sum outside the tanh
    q, k = torch.tanh(queries @ W_q.T), torch.tanh(keys @ W_k.T)
    return (q.unsqueeze(2) + k.unsqueeze(1)) @ w_v


def ps_no_w_v(queries, keys, W_q, W_k, w_v):
    q, k = queries @ W_q.T, keys @ W_k.T
    return torch.tanh(q.unsqueeze(2) + k.unsqueeze(1)).sum(dim=-1)


def ps_w_v_inside(queries, keys, W_q, W_k, w_v):  # w_v before the tanh
    q, k = queries @ W_q.T, keys @ W_k.T
    return torch.tanh((q.unsqueeze(2) + k.unsqueeze(1)) @ w_v)


def ps_weights_swapped(queries, keys, W_q, W_k, w_v):
    q, k = queries @ W_k.T, keys @ W_q.T
    return torch.tanh(q.unsqueeze(2) + k.unsqueeze(1)) @ w_v


def ps_softmaxed(queries, keys, W_q, W_k, w_v):  # weights, not scores
    q, k = queries @ W_q.T, keys @ W_k.T
    return torch.softmax(torch.tanh(q.unsqueeze(2) + k.unsqueeze(1)) @ w_v, dim=-1)


NOTEBOOK_W_q, NOTEBOOK_W_k = torch.tensor([[-1.0, -4.0], [-4.0, -1.0]]), torch.tensor([[3.0, 0, 0], [0, 3.0, 0]])


def ps_notebook_weights(queries, keys, W_q_, W_k_, w_v_):  # the notebook's W_q, W_k and w_v, not the arguments
    return torch.tanh((queries @ NOTEBOOK_W_q.T).unsqueeze(2) + (keys @ NOTEBOOK_W_k.T).unsqueeze(1)) @ torch.ones(2)


def ps_section_1(queries, keys, W_q, W_k, w_v):  # section 1's cell: the first query of text 0 against every key
    return torch.tanh(W_q @ queries[0, 0] + keys @ W_k.T) @ w_v


def ps_dot_product(queries, keys, W_q, W_k, w_v):  # the dot product of the projections
    return (queries @ W_q.T) @ (keys @ W_k.T).transpose(1, 2)


def ps_attnlib_module(queries, keys, W_q, W_k, w_v):  # attnlib's AdditiveAttention loaded with the arguments
    module = AdditiveAttention(W_q.shape[1], W_k.shape[1], W_q.shape[0])
    module.load_state_dict({"W_q.weight": W_q, "W_k.weight": W_k, "w_v.weight": w_v[None]})
    with torch.no_grad():
        return module.scores(queries, keys)


# Exercise 3: masked_weights(scores, valid_lens) -> (B, Tq, Tk)
def mw_fill(value):  # reader r39: a finite fill; -30 leaves about 1e-13 to the padded keys, -1e4 leaves exactly 0
    def masked_weights(scores, valid_lens):
        mask = torch.arange(scores.shape[-1]) < valid_lens[:, None, None]
        return torch.softmax(scores.masked_fill(~mask, value), dim=-1)
    return masked_weights


def mw_masked_fill(scores, valid_lens):
    mask = torch.arange(scores.shape[-1])[None, None, :] < valid_lens[:, None, None]
    return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)


def mw_where(scores, valid_lens):
    mask = torch.arange(scores.size(2)).view(1, 1, -1) < valid_lens.view(-1, 1, 1)
    return F.softmax(torch.where(mask, scores, torch.tensor(float("-inf"))), dim=-1)


def mw_masked_softmax_unsqueeze(scores, valid_lens):
    mask = (torch.arange(scores.shape[-1]) < valid_lens.unsqueeze(-1)).unsqueeze(1)  # (B, 1, Tk)
    return masked_softmax(scores, mask)


def mw_loop(scores, valid_lens):
    out = torch.zeros_like(scores)
    for b, n in enumerate(valid_lens.tolist()):
        out[b, :, :n] = torch.softmax(scores[b, :, :n], dim=-1)
    return out


def mw_renormalised(scores, valid_lens):  # exp, zero the padding, divide by the row sum
    mask = (torch.arange(scores.shape[-1]) < valid_lens[:, None, None]).to(scores.dtype)
    e = torch.exp(scores - scores.amax(dim=-1, keepdim=True)) * mask
    return e / e.sum(dim=-1, keepdim=True)


def mw_not_renormalised(scores, valid_lens):
    mask = torch.arange(scores.shape[-1]) < valid_lens[:, None, None]
    return torch.softmax(scores, dim=-1) * mask


def mw_flipped(scores, valid_lens):
    mask = torch.arange(scores.shape[-1]) >= valid_lens[:, None, None]
    return masked_softmax(scores, mask)


def mw_off_by_one(scores, valid_lens):
    mask = torch.arange(scores.shape[-1]) <= valid_lens[:, None, None]
    return masked_softmax(scores, mask)


def mw_queries_axis(scores, valid_lens):  # the lengths compared with the queries' positions
    mask = torch.arange(scores.shape[1])[None, :, None] < valid_lens[:, None, None]
    return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1).nan_to_num(0.0)


def mw_broadcast_trap(scores, valid_lens):  # a (B, Tk) mask read as (Tq, Tk): P1's broadcast trap
    mask = torch.arange(scores.shape[-1]) < valid_lens[:, None]
    return masked_softmax(scores, mask)


def mw_wrong_axis(scores, valid_lens):
    mask = torch.arange(scores.shape[-1]) < valid_lens[:, None, None]
    return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=1).nan_to_num(0.0)


def mw_zero_fill(scores, valid_lens):  # fills the padded scores with 0, not -inf
    mask = torch.arange(scores.shape[-1]) < valid_lens[:, None, None]
    return torch.softmax(scores.masked_fill(~mask, 0.0), dim=-1)


def mw_float64(scores, valid_lens):  # computes in float64, returns it: wider than the input is fine
    keep = torch.arange(scores.shape[-1], dtype=torch.float64)[None, None, :] < valid_lens[:, None, None].double()
    return torch.where(keep, scores.double(), -torch.inf).softmax(dim=-1)


def mw_lengths_as_rows(scores, valid_lens):  # the (B, Tq, 1) mask of masked_softmax: the lengths cut the queries
    return masked_softmax(scores, (torch.arange(scores.shape[1]) < valid_lens[:, None])[:, :, None])


def mw_keys_down_the_rows(scores, valid_lens):  # a (B, Tk, 1) mask: keys on the queries' axis, does not fit
    keep = torch.arange(scores.shape[-1])[None, :, None] < valid_lens[:, None, None]
    return masked_softmax(scores, keep)


def mw_one_too_few(scores, valid_lens):  # hides the last real key
    return masked_softmax(scores, torch.arange(scores.shape[-1]) < (valid_lens - 1)[:, None, None])


def mw_fill_where_true(scores, valid_lens):  # True = may attend, but masked_fill fills where True
    mask = torch.arange(scores.shape[-1]) < valid_lens[:, None, None]
    return torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)


def mw_longest_length(scores, valid_lens):  # one length for every text
    return masked_softmax(scores, (torch.arange(scores.shape[-1]) < valid_lens.max()).expand_as(scores))


def mw_masked_scores(scores, valid_lens):  # no softmax
    return scores.masked_fill(~(torch.arange(scores.shape[-1]) < valid_lens[:, None, None]), float("-inf"))


def mw_log_softmax(scores, valid_lens):
    mask = torch.arange(scores.shape[-1]) < valid_lens[:, None, None]
    return torch.log_softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)


def mw_tk_15(scores, valid_lens):  # the running example's Tk written in
    return masked_softmax(scores, torch.arange(15) < valid_lens[:, None, None])


NOTEBOOK_MASK = torch.arange(15) < torch.tensor([15, 8, 10])[:, None, None]  # section 3's mask, (3, 1, 15)


def mw_notebook_mask(scores, valid_lens):
    return masked_softmax(scores, NOTEBOOK_MASK)


def mw_from_valid_lens(scores, valid_lens):  # the prompt asks for a mask built with torch.arange
    return masked_softmax(scores, from_valid_lens(valid_lens, scores.shape[-1], ndim=3))


# Learner population L5 (notes/learners/L5): answers that found a gap in the checkers
NOTEBOOK_LENS = torch.tensor([15, 8, 10])  # stands for the notebook's valid_lens


def ps_w_v_column(queries, keys, W_q, W_k, w_v):  # (B, Tq, Tk, 1)
    return torch.tanh((queries @ W_q.T).unsqueeze(2) + (keys @ W_k.T).unsqueeze(1)) @ w_v[:, None]


def ps_first_text_keys(queries, keys, W_q, W_k, w_v):  # text 0's keys for every text
    return torch.tanh((queries @ W_q.T).unsqueeze(2) + (keys[0] @ W_k.T)) @ w_v


def ps_relu(queries, keys, W_q, W_k, w_v):
    return torch.relu((queries @ W_q.T).unsqueeze(2) + (keys @ W_k.T).unsqueeze(1)) @ w_v


def ps_mean_over_h(queries, keys, W_q, W_k, w_v):
    return (torch.tanh((queries @ W_q.T).unsqueeze(2) + (keys @ W_k.T).unsqueeze(1)) * w_v).mean(-1)


def ps_abs_w_v(queries, keys, W_q, W_k, w_v):
    return torch.tanh((queries @ W_q.T).unsqueeze(2) + (keys @ W_k.T).unsqueeze(1)) @ w_v.abs()


def mw_notebook_lens(scores, lens):  # reads the notebook's valid_lens, not its argument
    return masked_softmax(scores, torch.arange(scores.shape[-1]) < NOTEBOOK_LENS[:, None, None])


ANSWERS = [
    # Exercise 1
    right(EX1, "tuple", lambda: (3, 10, 15, 2)),
    right(EX1, "list", lambda: [3, 10, 15, 2]),
    right(EX1, "torch-size", lambda: torch.Size([3, 10, 15, 2])),
    right(EX1, "numpy-array", lambda: np.array([3, 10, 15, 2])),
    right(EX1, "computed", lambda: (torch.zeros(3, 10, 1, 2) + torch.zeros(3, 1, 15, 2)).shape),
    wrong(EX1, "after-w_v", lambda: (3, 10, 15), ("h", "hidden", "w_v")),
    wrong(EX1, "no-pairs", lambda: (3, 10, 2), ("pair", "key")),
    wrong(EX1, "keys-first", lambda: (3, 15, 10, 2)),
    wrong(EX1, "key-width", lambda: (3, 10, 15, 3), ("width", "h")),
    wrong(EX1, "shortest-text", lambda: (3, 10, 8, 2)),
    wrong(EX1, "no-batch", lambda: (10, 15, 2)),
    wrong(EX1, "string", lambda: "(3, 10, 15, 2)", ("tuple", "string", "quote")),
    wrong(EX1, "queries-as-many-as-keys", lambda: (3, 15, 15, 2), ("queries' axis",)),
    wrong(EX1, "one-text", lambda: (1, 10, 15, 2), ("texts' axis",)),
    wrong(EX1, "h-second", lambda: (3, 2, 10, 15), ("innermost", "last axis")),
    wrong(EX1, "h-first", lambda: (2, 3, 10, 15), ("innermost", "last axis")),
    # Exercise 2
    right(EX2, "einsum", lambda: ps_einsum),
    right(EX2, "F-linear", lambda: ps_linear),
    right(EX2, "python-loop", lambda: ps_loop),
    right(EX2, "matmul-unsqueeze", lambda: ps_matmul),
    right(EX2, "float64-inside", lambda: ps_float64),
    wrong(EX2, "no-tanh", lambda: ps_no_tanh, ("tanh",)),
    wrong(EX2, "unsqueeze-swapped", lambda: ps_unsqueeze_swapped, ("unsqueeze", "transpos", "order")),
    wrong(EX2, "tanh-each-side", lambda: ps_tanh_each),
    wrong(EX2, "no-w_v", lambda: ps_no_w_v),
    wrong(EX2, "w_v-inside-tanh", lambda: ps_w_v_inside),
    wrong(EX2, "weights-swapped", lambda: ps_weights_swapped),
    wrong(EX2, "notebook-weights", lambda: ps_notebook_weights),
    wrong(EX2, "section-1-copy", lambda: ps_section_1, ("section 1", "one query")),
    wrong(EX2, "dot-product", lambda: ps_dot_product, ("dot product",)),
    wrong(EX2, "attnlib-module", lambda: ps_attnlib_module, ("attnlib",)),
    wrong(EX2, "softmaxed", lambda: ps_softmaxed, ("softmax", "score")),
    wrong(EX2, "W_q-not-transposed", lambda: lambda q, k, W_q, W_k, w_v: torch.tanh(
        (q @ W_q).unsqueeze(2) + (k @ W_k).unsqueeze(1)) @ w_v),
    # Exercise 3
    right(EX3, "masked-fill", lambda: mw_masked_fill),
    right(EX3, "torch-where", lambda: mw_where),
    right(EX3, "masked-softmax-unsqueeze", lambda: mw_masked_softmax_unsqueeze),
    right(EX3, "python-loop", lambda: mw_loop),
    right(EX3, "exp-zero-renormalise", lambda: mw_renormalised),
    right(EX3, "float64", lambda: mw_float64),
    wrong(EX3, "not-renormalised", lambda: mw_not_renormalised, ("renormal", "normalis", "normaliz", "divide")),
    wrong(EX3, "polarity-flipped", lambda: mw_flipped, ("True", "may attend", "wrong way round")),
    wrong(EX3, "off-by-one", lambda: mw_off_by_one, ("<=", "one key too many")),
    wrong(EX3, "lengths-on-queries", lambda: mw_queries_axis, ("queries' axis",)),
    wrong(EX3, "lengths-on-queries-masked-softmax", lambda: mw_lengths_as_rows, ("queries' axis",)),
    wrong(EX3, "keys-down-the-rows", lambda: mw_keys_down_the_rows, ("(B, 1, Tk)", "line up")),
    wrong(EX3, "broadcast-trap", lambda: mw_broadcast_trap, ("(B, 1, Tk)", "query axis")),
    wrong(EX3, "softmax-over-queries", lambda: mw_wrong_axis, ("dim", "axis", "keys")),
    wrong(EX3, "zero-fill", lambda: mw_zero_fill, ("-inf", "exp(0)")),
    wrong(EX3, "no-mask", lambda: lambda scores, valid_lens: scores.softmax(-1), ("missing", "padded keys")),
    wrong(EX3, "one-key-too-few", lambda: mw_one_too_few, ("too few",)),
    wrong(EX3, "fill-where-true", lambda: mw_fill_where_true, ("masked_fill fills",)),
    wrong(EX3, "longest-length", lambda: mw_longest_length),
    wrong(EX3, "masked-scores", lambda: mw_masked_scores, ("negative",)),
    wrong(EX3, "log-softmax", lambda: mw_log_softmax, ("log_softmax",)),
    wrong(EX3, "Tk-15", lambda: mw_tk_15),
    wrong(EX3, "notebook-mask", lambda: mw_notebook_mask),
    wrong(EX3, "from_valid_lens", lambda: mw_from_valid_lens, ("from_valid_lens",)),
    # Exercise 4
    right(EX4, "fraction-expression", lambda: 1 / 15),
    right(EX4, "three-decimals", lambda: 0.067),
    right(EX4, "numpy-float32", lambda: np.float32(1 / 15)),
    right(EX4, "0d-tensor", lambda: torch.tensor(1.0) / 15),
    right(EX4, "fraction", lambda: Fraction(1, 15)),
    right(EX4, "four-decimals", lambda: 0.0667),
    wrong(EX4, "one-hot", lambda: 1.0, ("tanh", "dot", "one-hot")),
    wrong(EX4, "digits-share", lambda: 0.2, ("digits", "W_k k")),
    wrong(EX4, "before-scaling", lambda: 0.185, ("digits", "before")),
    wrong(EX4, "over-queries", lambda: 1 / 10, ("queries", "keys")),
    wrong(EX4, "other-text", lambda: 1 / 8),
    wrong(EX4, "zero", lambda: 0.0),
    wrong(EX4, "two-decimals", lambda: 0.07),
    wrong(EX4, "half", lambda: 0.5, ("tanh", "W_k k")),
    wrong(EX4, "string", lambda: "0.067", ("number", "string", "quote")),
    wrong(EX4, "fourteen-keys", lambda: 1 / 14),
    wrong(EX4, "fourteen-keys-rounded", lambda: 0.071),
    wrong(EX4, "at-scale-5", lambda: 0.0699),
    wrong(EX4, "third-decimal-off", lambda: 0.068, ("near",)),
    # Learner population L5
    wrong(EX1, "as-many-keys-as-queries", lambda: (3, 10, 10, 2)),
    wrong(EX2, "w_v-column", lambda: ps_w_v_column),
    wrong(EX2, "first-text-keys", lambda: ps_first_text_keys),
    wrong(EX2, "relu", lambda: ps_relu),
    wrong(EX2, "mean-over-h", lambda: ps_mean_over_h),
    wrong(EX2, "abs-w_v", lambda: ps_abs_w_v),
    wrong(EX3, "notebook-valid-lens", lambda: mw_notebook_lens),
    wrong(EX3, "fill-minus-30", lambda: mw_fill(-30.0), ("not 0", "exp is 0")),
    right(EX3, "fill-minus-1e4", lambda: mw_fill(-1e4)),
]
