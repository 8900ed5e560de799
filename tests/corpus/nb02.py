"""Notebook 02 (softmax axes): learner answers to its five exercises."""

import math
from fractions import Fraction

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

import attnlib

from . import right, wrong

EXERCISES = {"check_key1_column": 1, "check_key_major_weights": 2, "check_tau_limits": 3,
             "check_stable_softmax": 4, "check_temperature_softmax": 5}

EX1 = "nb02.check_key1_column"  # key 1's column of softmax(scores_hand, dim=-2): (0.5, 0.5)
EX2 = "nb02.check_key_major_weights"  # scores (..., Tk, Tq) -> weights (..., Tq, Tk)
EX3 = "nb02.check_tau_limits"  # largest weight of the row [2, 2, 0] at tau = 0.01 (0.50) and 100 (0.34)
EX4 = "nb02.check_stable_softmax"
EX5 = "nb02.check_temperature_softmax"  # scores (B, H, Tq, Tk), tau (H,): one temperature per head


def _scores_hand():
    keys_hand = torch.eye(3)
    queries_hand = torch.tensor([[2.0, 0.0, 0.0], [0.0, 0.0, 2.0]])
    return queries_hand @ keys_hand.T


TIED = torch.tensor([2.0, 2.0, 0.0])  # Exercise 3's row: two keys tied at the top


# Exercise 2: key_major_weights(scores), scores (..., Tk, Tq) from key @ query.mT
def km_transpose_first(scores):
    return torch.softmax(scores.transpose(-2, -1), dim=-1)


def km_softmax_then_transpose(scores):  # normalise over the keys where they are, then move them last
    return F.softmax(scores, dim=-2).transpose(-1, -2)


def km_mT_method(scores):
    return scores.mT.softmax(-1)


def km_swapaxes_module(scores):
    return nn.Softmax(dim=-1)(torch.swapaxes(scores, -2, -1))


def km_exp_sum(scores):
    s = scores.mT
    e = torch.exp(s - s.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


def km_softmax_then_T(scores):  # softmax over the last axis, the queries here, then transposed
    return torch.softmax(scores, dim=-1).mT


def km_as_if_query_major(scores):  # the course's usual call, on scores that are key-major
    return torch.softmax(scores, dim=-1)


def km_no_transpose(scores):  # normalised over the keys, but left as (..., Tk, Tq)
    return torch.softmax(scores, dim=-2)


def km_dot_T(scores):  # right on a matrix; .T reverses every axis of a batch
    return torch.softmax(scores.T, dim=-1)


def km_transpose01(scores):
    return torch.softmax(scores.transpose(0, 1), dim=-1)


def km_dim1(scores):  # after the transpose, dim=1 is the queries once a batch axis is in front
    return torch.softmax(scores.transpose(-2, -1), dim=1)


# Exercise 4: my_softmax(x) over the last axis, finite for any finite x
def sm_max_values(x):
    e = torch.exp(x - x.max(dim=-1, keepdim=True).values)
    return e / e.sum(dim=-1, keepdim=True)


def sm_logsumexp(x):
    m = x.amax(dim=-1, keepdim=True)
    return torch.exp(x - m - torch.log(torch.exp(x - m).sum(dim=-1, keepdim=True)))


def sm_loop(x):
    flat = x.reshape(-1, x.shape[-1])
    rows = []
    for row in flat:
        e = torch.exp(row - row.amax())
        rows.append(e / e.sum())
    return torch.stack(rows).reshape(x.shape)


def sm_float64(x):
    x64 = x.double()
    e = torch.exp(x64 - x64.amax(dim=-1, keepdim=True))
    return (e / e.sum(dim=-1, keepdim=True)).to(x.dtype)


def sm_div_unsqueeze(x):
    e = (x - x.amax(-1).unsqueeze(-1)).exp()
    return torch.div(e, e.sum(-1).unsqueeze(-1))


def sm_float32_result(x):  # computed and returned in float32 at least (float16 input: a float32 result)
    x32 = x.to(torch.promote_types(x.dtype, torch.float32))
    e = torch.exp(x32 - x32.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


def sm_naive(x):
    e = torch.exp(x)
    return e / e.sum(dim=-1, keepdim=True)


def sm_subtract_min(x):
    e = torch.exp(x - x.amin(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


def sm_subtract_mean(x):
    e = torch.exp(x - x.mean(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


def sm_subtract_first(x):
    e = torch.exp(x - x[..., :1])
    return e / e.sum(dim=-1, keepdim=True)


def sm_global_max(x):  # one maximum for the whole tensor: a row far below it underflows to 0 / 0
    e = torch.exp(x - x.max())
    return e / e.sum(dim=-1, keepdim=True)


def sm_sum_dim0(x):
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=0, keepdim=True)


def sm_no_keepdim(x):  # (..., Tk) - (...,) lines the row maxima up with the keys
    e = torch.exp(x - x.amax(dim=-1))
    return e / e.sum(dim=-1, keepdim=True)


# Exercise 5: softmax_with_temperature(scores, tau), scores (B, H, Tq, Tk), tau (H,)
def tau_view(scores, tau):
    return torch.softmax(scores / tau.view(1, -1, 1, 1), dim=-1)


def tau_none_index(scores, tau):
    return F.softmax(scores / tau[:, None, None], dim=-1)


def tau_loop(scores, tau):
    return torch.stack([torch.softmax(scores[:, h] / tau[h], dim=-1) for h in range(len(tau))], dim=1)


def tau_einsum(scores, tau):
    return torch.einsum("bhqk,h->bhqk", scores, 1 / tau).softmax(dim=-1)


def tau_unsqueeze_exp(scores, tau):
    z = scores / tau.unsqueeze(-1).unsqueeze(-1)
    e = torch.exp(z - z.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


def tau_pow_renormalised(scores, tau):  # p_j^(1/tau), renormalised: the same distribution
    p = torch.softmax(scores, dim=-1) ** (1 / tau[:, None, None])
    return p / p.sum(dim=-1, keepdim=True)


def tau_plain(scores, tau):  # (H,) lines up with the keys
    return torch.softmax(scores / tau, dim=-1)


def tau_queries(scores, tau):
    return torch.softmax(scores / tau[:, None], dim=-1)


def tau_batch(scores, tau):
    return torch.softmax(scores / tau[:, None, None, None], dim=-1)


def tau_times(scores, tau):
    return torch.softmax(scores * tau[:, None, None], dim=-1)


def tau_after(scores, tau):
    return torch.softmax(scores, dim=-1) / tau[:, None, None]


def tau_subtract_per_head(scores, tau):  # a constant per row: it cancels
    return torch.softmax(scores - tau[:, None, None], dim=-1)


def tau_subtract(scores, tau):
    return torch.softmax(scores - tau, dim=-1)


def tau_ignored(scores, tau):
    return torch.softmax(scores, dim=-1)


def tau_wrong_axis(scores, tau):
    return torch.softmax(scores / tau[:, None, None], dim=-2)


def tau_one_for_all(scores, tau):  # one mean temperature for every head
    return torch.softmax(scores / tau.mean(), dim=-1)


# Learner population L1 (notes/learners/L1): answers that found a gap in the checkers
SCORES_HAND = _scores_hand()  # stands for the notebook's scores_hand, query-major (Tq, Tk) = (2, 3)


def km_reshape(scores):  # reshape keeps the stored order: not a transpose
    return scores.reshape(*scores.shape[:-2], scores.shape[-1], scores.shape[-2]).softmax(-1)


def km_no_exp(scores):
    s = scores.mT
    return s / s.sum(dim=-1, keepdim=True)


def km_global_scores_hand(scores):  # ignores its argument
    return SCORES_HAND.softmax(-1)


def km_dim1_transpose12(scores):  # axes counted from the front: (B, Tk, Tq) only
    return torch.softmax(scores, dim=1).transpose(1, 2)


def km_permute_3d(scores):
    return scores.permute(0, 2, 1).softmax(-1)


def sm_torch_softmax(x):  # the prompt says torch.exp and .sum, not torch.softmax
    return torch.softmax(x, dim=-1)


def sm_F_softmax(x):
    return F.softmax(x, dim=-1)


def sm_log_softmax_exp(x):
    return torch.log_softmax(x, dim=-1).exp()


def sm_attnlib(x):
    return attnlib.masked_softmax(x)


def sm_adds_max(x):
    e = torch.exp(x + x.amax(-1, keepdim=True))
    return e / e.sum(-1, keepdim=True)


def tau_softmax_over_heads(scores, tau):
    return torch.softmax(scores / tau.view(1, -1, 1, 1), dim=1)


def tau_first_only(scores, tau):
    return torch.softmax(scores / tau[0], dim=-1)


# Learner population L5 (notes/learners/L5): answers that found a gap in the checkers
NOTEBOOK_TAU = torch.tensor([0.5, 1.0, 4.0])  # stands for the notebook's tau, (H,) = (3,)


def km_squeeze(scores):  # drops every axis of size 1: a batch of one, one head, one query
    return torch.softmax(scores.mT, dim=-1).squeeze()


def km_dim1_then_transpose(scores):  # dim=1 is the keys only for 3-D scores
    return torch.softmax(scores, dim=1).transpose(-2, -1)


def km_transpose_0_last(scores):  # transpose(0, -1) is .T on a matrix only
    return torch.softmax(scores, dim=-2).transpose(0, -1)


def km_scaled(scores):  # a 1/sqrt temperature the exercise does not ask for
    return torch.softmax(scores.mT / math.sqrt(scores.shape[-1]), dim=-1)


def sm_global_sum(x):
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
    return e / e.sum()


def sm_divide_by_max(x):
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
    return e / e.amax(dim=-1, keepdim=True)


def sm_max_namedtuple(x):  # x.max(dim=...) is (values, indices)
    e = torch.exp(x - x.max(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


def sm_clamp(x):
    e = torch.exp(x.clamp(-80, 80))
    return e / e.sum(dim=-1, keepdim=True)


def tau_global(scores, t):  # the notebook's tau, not the argument
    return torch.softmax(scores / NOTEBOOK_TAU[:, None, None], dim=-1)


def tau_written_in(scores, tau):
    return torch.softmax(scores / torch.tensor([0.5, 1.0, 4.0])[:, None, None], dim=-1)


ANSWERS = [
    # Exercise 1
    right(EX1, "tuple", lambda: (0.5, 0.5)),
    right(EX1, "list", lambda: [0.5, 0.5]),
    right(EX1, "computed-tensor", lambda: torch.softmax(_scores_hand(), dim=-2)[:, 1]),
    right(EX1, "numpy-array", lambda: np.array([0.5, 0.5])),
    right(EX1, "fractions", lambda: (Fraction(1, 2), Fraction(1, 2))),
    right(EX1, "four-decimals", lambda: (0.5000, 0.5000)),
    right(EX1, "tuple-of-0d-tensors", lambda: tuple(torch.softmax(_scores_hand(), dim=-2)[:, 1])),
    wrong(EX1, "row-softmax", lambda: (0.1065, 0.1065), ("dim=-2", "column", "quer", "axis")),
    wrong(EX1, "third-each", lambda: (1 / 3, 1 / 3)),
    wrong(EX1, "zeros", lambda: (0.0, 0.0), ("sum", "column", "1")),
    wrong(EX1, "ones", lambda: (1.0, 1.0), ("sum", "column")),
    wrong(EX1, "strings", lambda: ("0.5", "0.5"), ("number", "string", "quote")),
    wrong(EX1, "one-number", lambda: 0.5),
    # Exercise 2
    right(EX2, "transpose-first", lambda: km_transpose_first),
    right(EX2, "softmax-then-transpose", lambda: km_softmax_then_transpose),
    right(EX2, "mT-method", lambda: km_mT_method),
    right(EX2, "swapaxes-module", lambda: km_swapaxes_module),
    right(EX2, "exp-over-sum", lambda: km_exp_sum),
    wrong(EX2, "softmax-last-then-T", lambda: km_softmax_then_T, ("quer", "keys")),
    wrong(EX2, "as-if-query-major", lambda: km_as_if_query_major),
    wrong(EX2, "no-transpose", lambda: km_no_transpose, ("(..., Tq, Tk)", "row per query", "laid out")),
    wrong(EX2, "dot-T", lambda: km_dot_T, (".T", "batch", "last two")),
    wrong(EX2, "transpose-0-1", lambda: km_transpose01, ("transpose(0, 1)", "batch", "last two")),
    wrong(EX2, "dim-1", lambda: km_dim1, ("quer", "axis")),
    # Exercise 3 (two values): the row [2, 2, 0], two keys tied at the top
    right(EX3, "reference-fractions", lambda: (1 / 2, 1 / 3), star=True),
    right(EX3, "two-decimals", lambda: (0.50, 0.34), star=True),
    right(EX3, "just-below", lambda: (0.49, 0.33), star=True, note="the prompt says two decimals are enough"),
    right(EX3, "numpy-scalars", lambda: (np.float64(0.5), np.float32(0.336)), star=True),
    right(EX3, "computed-0d-tensors", lambda: (torch.softmax(TIED / 0.01, dim=-1).max(),
                                               torch.softmax(TIED / 100, dim=-1).max()), star=True),
    right(EX3, "fraction-objects", lambda: (Fraction(1, 2), Fraction(1, 3)), star=True),
    wrong(EX3, "tie-ignored", lambda: (1.0, 0.34), ("tie", "equal"), star=True,
          note="the row [2, 0, 0] of the table's answer, one-hot at a tiny tau"),
    wrong(EX3, "swapped", lambda: (1 / 3, 0.5), ("swapped", "small", "equal"), star=True),
    wrong(EX3, "table-ends", lambda: (0.49, 0.36), ("extremes", "gaps"), star=True),
    wrong(EX3, "large-tau-zero", lambda: (0.5, 0.0), star=True),
    wrong(EX3, "large-tau-keeps-the-tie", lambda: (0.5, 0.5), ("third", "nearly equal", "close"), star=True),
    wrong(EX3, "small-tau-uniform", lambda: (1 / 3, 1 / 3), star=True),
    wrong(EX3, "strings", lambda: ("0.5", "0.34"), ("number", "string", "quote"), star=True),
    # Exercise 4
    right(EX4, "max-values", lambda: sm_max_values),
    right(EX4, "log-sum-exp", lambda: sm_logsumexp),
    right(EX4, "python-loop", lambda: sm_loop),
    right(EX4, "float64-inside", lambda: sm_float64),
    right(EX4, "unsqueeze-div", lambda: sm_div_unsqueeze),
    right(EX4, "float32-result", lambda: sm_float32_result),
    wrong(EX4, "no-shift", lambda: sm_naive, ("max", "overflow", "inf", "nan")),
    wrong(EX4, "subtract-min", lambda: sm_subtract_min, ("constant", "exponent")),
    wrong(EX4, "subtract-mean", lambda: sm_subtract_mean, ("constant", "exponent")),
    wrong(EX4, "subtract-first", lambda: sm_subtract_first, ("constant", "exponent")),
    wrong(EX4, "global-max", lambda: sm_global_max, ("row", "each", "dim", "keepdim", "per")),
    wrong(EX4, "sum-over-dim0", lambda: sm_sum_dim0, ("sum", "axis", "dim", "last")),
    wrong(EX4, "max-without-keepdim", lambda: sm_no_keepdim),
    # Exercise 5
    right(EX5, "view", lambda: tau_view),
    right(EX5, "none-index", lambda: tau_none_index),
    right(EX5, "loop-over-heads", lambda: tau_loop),
    right(EX5, "einsum", lambda: tau_einsum),
    right(EX5, "unsqueeze-exp", lambda: tau_unsqueeze_exp),
    right(EX5, "power-renormalised", lambda: tau_pow_renormalised),
    wrong(EX5, "lined-up-with-keys", lambda: tau_plain, ("keys", "heads")),
    wrong(EX5, "lined-up-with-queries", lambda: tau_queries),
    wrong(EX5, "lined-up-with-batch", lambda: tau_batch),
    wrong(EX5, "multiplied", lambda: tau_times),
    wrong(EX5, "after-softmax", lambda: tau_after),
    wrong(EX5, "subtracted-per-head", lambda: tau_subtract_per_head, ("constant", "subtracted", "divides")),
    wrong(EX5, "subtracted", lambda: tau_subtract, ("subtract", "divides")),
    wrong(EX5, "ignored", lambda: tau_ignored, ("not used", "without any temperature")),
    wrong(EX5, "wrong-axis", lambda: tau_wrong_axis, ("axis", "keys")),
    wrong(EX5, "one-for-all-heads", lambda: tau_one_for_all),
    # Learner population L1
    wrong(EX2, "reshape-for-transpose", lambda: km_reshape),
    wrong(EX2, "normalised-without-exp", lambda: km_no_exp),
    wrong(EX2, "global-scores-hand", lambda: km_global_scores_hand),
    wrong(EX2, "dim-1-transpose-1-2", lambda: km_dim1_transpose12, ("from the front", "back")),
    wrong(EX2, "permute-3-axes", lambda: km_permute_3d, ("from the front", "back")),
    wrong(EX3, "smallest-weight", lambda: (0.0, 0.33), star=True),
    wrong(EX3, "small-tau-0.48", lambda: (0.48, 0.34), star=True),
    wrong(EX3, "large-tau-below-a-third", lambda: (0.5, 0.32), star=True),
    wrong(EX4, "torch-softmax", lambda: sm_torch_softmax, ("torch.exp", "softmax")),
    wrong(EX4, "F-softmax", lambda: sm_F_softmax, ("torch.exp", "softmax")),
    wrong(EX4, "log-softmax-exp", lambda: sm_log_softmax_exp, ("log_softmax",)),
    wrong(EX4, "attnlib-masked-softmax", lambda: sm_attnlib, ("attnlib",)),
    wrong(EX4, "adds-the-max", lambda: sm_adds_max, ("constant",)),
    wrong(EX5, "softmax-over-heads", lambda: tau_softmax_over_heads, ("heads",)),
    wrong(EX5, "first-temperature-only", lambda: tau_first_only),
    # Learner population L5
    wrong(EX1, "a-query-row", lambda: (0.88, 0.5, 0.12)),
    wrong(EX2, "squeeze", lambda: km_squeeze),
    wrong(EX2, "dim-1-then-transpose", lambda: km_dim1_then_transpose, ("dim=1",)),
    wrong(EX2, "transpose-0-last", lambda: km_transpose_0_last, ("transpose(0, -1)",)),
    wrong(EX2, "scaled-by-sqrt", lambda: km_scaled),
    wrong(EX4, "global-sum", lambda: sm_global_sum, ("own sum",)),
    wrong(EX4, "divide-by-max", lambda: sm_divide_by_max, ("own sum",)),
    wrong(EX4, "max-namedtuple", lambda: sm_max_namedtuple),
    wrong(EX4, "clamp", lambda: sm_clamp),
    wrong(EX5, "notebook-tau-global", lambda: tau_global),
    wrong(EX5, "notebook-tau-written-in", lambda: tau_written_in),
]
