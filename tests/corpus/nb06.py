"""Notebook 06 (additive attention): learner answers to its four exercises."""

from fractions import Fraction

import numpy as np
import torch
import torch.nn.functional as F

from attnlib import masked_softmax

from . import right, wrong

EXERCISES = {"check_features_shape": 1, "check_largest_weight": 2, "check_pair_scores": 3,
             "check_masked_weights": 4}

EX1 = "nb06.check_features_shape"  # tanh(W_q q + W_k k) for B = 2, Tq = 3, Tk = 4, h = 6: (2, 3, 4, 6)
EX2 = "nb06.check_largest_weight"  # queries x 1000: tanh saturates, uniform over 7 keys: 1/7
EX3 = "nb06.check_pair_scores"
EX4 = "nb06.check_masked_weights"


# Exercise 3: pair_scores(queries, keys, W_q, W_k, w_v) -> (B, Tq, Tk)
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


# Exercise 4: masked_weights(scores, valid_lens) -> (B, Tq, Tk)
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


ANSWERS = [
    # Exercise 1
    right(EX1, "tuple", lambda: (2, 3, 4, 6)),
    right(EX1, "list", lambda: [2, 3, 4, 6]),
    right(EX1, "torch-size", lambda: torch.Size([2, 3, 4, 6])),
    right(EX1, "numpy-array", lambda: np.array([2, 3, 4, 6])),
    right(EX1, "computed", lambda: (torch.zeros(2, 3, 1, 6) + torch.zeros(2, 1, 4, 6)).shape),
    wrong(EX1, "after-w_v", lambda: (2, 3, 4), ("h", "hidden", "w_v", "before")),
    wrong(EX1, "no-pairs", lambda: (2, 3, 6), ("Tk", "key", "pair")),
    wrong(EX1, "keys-first", lambda: (2, 4, 3, 6), ("Tq", "order", "quer")),
    wrong(EX1, "query-width", lambda: (2, 3, 4, 5), ("h", "hidden", "d_q", "6")),
    wrong(EX1, "string", lambda: "(2, 3, 4, 6)", ("tuple", "string", "quote")),
    # Exercise 2
    right(EX2, "fraction-expression", lambda: 1 / 7),
    right(EX2, "three-decimals", lambda: 0.143),
    right(EX2, "numpy-float32", lambda: np.float32(1 / 7)),
    right(EX2, "0d-tensor", lambda: torch.tensor(1.0) / 7),
    right(EX2, "fraction", lambda: Fraction(1, 7)),
    right(EX2, "four-decimals", lambda: 0.1429),
    wrong(EX2, "one-hot", lambda: 1.0, ("tanh", "saturat", "uniform", "bound")),
    wrong(EX2, "over-queries", lambda: 1 / 5, ("7", "keys", "seven")),
    wrong(EX2, "zero", lambda: 0.0, ("uniform", "7", "sum")),
    wrong(EX2, "half", lambda: 0.5),
    wrong(EX2, "string", lambda: "0.143", ("number", "string", "quote")),
    # Exercise 3
    right(EX3, "einsum", lambda: ps_einsum),
    right(EX3, "F-linear", lambda: ps_linear),
    right(EX3, "python-loop", lambda: ps_loop),
    right(EX3, "matmul-unsqueeze", lambda: ps_matmul),
    right(EX3, "float64-inside", lambda: ps_float64),
    wrong(EX3, "no-tanh", lambda: ps_no_tanh, ("tanh",)),
    wrong(EX3, "unsqueeze-swapped", lambda: ps_unsqueeze_swapped, ("unsqueeze", "(B, Tq, 1, h)", "transpos", "order")),
    wrong(EX3, "tanh-each-side", lambda: ps_tanh_each, ("tanh", "sum", "inside")),
    wrong(EX3, "no-w_v", lambda: ps_no_w_v, ("w_v",)),
    wrong(EX3, "w_v-inside-tanh", lambda: ps_w_v_inside, ("tanh", "w_v", "after")),
    wrong(EX3, "weights-swapped", lambda: ps_weights_swapped),
    wrong(EX3, "softmaxed", lambda: ps_softmaxed, ("softmax", "before", "score")),
    # Exercise 4
    right(EX4, "masked-fill", lambda: mw_masked_fill),
    right(EX4, "torch-where", lambda: mw_where),
    right(EX4, "masked-softmax-unsqueeze", lambda: mw_masked_softmax_unsqueeze),
    right(EX4, "python-loop", lambda: mw_loop),
    right(EX4, "exp-zero-renormalise", lambda: mw_renormalised),
    wrong(EX4, "not-renormalised", lambda: mw_not_renormalised, ("renormal", "normalis", "normaliz", "divide")),
    wrong(EX4, "polarity-flipped", lambda: mw_flipped, ("True", "may attend", "flip", "invert", "<")),
    wrong(EX4, "off-by-one", lambda: mw_off_by_one, ("<=", "<", "one", "off")),
    wrong(EX4, "lengths-on-queries", lambda: mw_queries_axis, ("key", "quer", "axis", "Tk")),
    wrong(EX4, "broadcast-trap", lambda: mw_broadcast_trap, ("(B, 1, Tk)", "broadcast", "axis", "[:, None")),
    wrong(EX4, "softmax-over-queries", lambda: mw_wrong_axis, ("dim", "axis", "keys")),
    wrong(EX4, "zero-fill", lambda: mw_zero_fill, ("-inf", "inf", "fill", "exactly 0", "zero")),
]
