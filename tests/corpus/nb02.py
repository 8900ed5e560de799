"""Notebook 02 (softmax axes): learner answers to its five exercises."""

from fractions import Fraction

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from . import right, wrong

EXERCISES = {"check_key1_column": 1, "check_tau_limits": 2, "check_attention_weights": 3,
             "check_stable_softmax": 4, "check_temperature_softmax": 5}

EX1 = "nb02.check_key1_column"  # key 1's column of softmax(scores_hand, dim=-2): (0.5, 0.5)
EX2 = "nb02.check_tau_limits"  # largest weight of the row at tau = 0.01 (1.00) and tau = 100 (0.17)
EX3 = "nb02.check_attention_weights"
EX4 = "nb02.check_stable_softmax"
EX5 = "nb02.check_temperature_softmax"


def _scores_hand():
    keys_hand = torch.eye(3)
    queries_hand = torch.tensor([[2.0, 0.0, 0.0], [0.0, 0.0, 2.0]])
    return queries_hand @ keys_hand.T


ROW = torch.tensor([2.0, 1.0, 0.1, -0.5, 1.5, -1.0])  # section 7's row of six scores


# Exercise 3: attention_weights(scores), any leading axes
def aw_functional(scores):
    return F.softmax(scores, dim=-1)


def aw_method(scores):
    return scores.softmax(scores.dim() - 1)


def aw_module(scores):
    return nn.Softmax(dim=-1)(scores)


def aw_logsumexp(scores):
    return torch.exp(scores - scores.logsumexp(dim=-1, keepdim=True))


def aw_exp_sum(scores):
    e = torch.exp(scores - scores.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


def aw_float32(scores):  # at least float32: float16 scores give float32 weights
    return torch.softmax(scores, dim=-1, dtype=torch.promote_types(scores.dtype, torch.float32))


def aw_dim_minus2(scores):
    return torch.softmax(scores, dim=-2)


def aw_dim1(scores):  # right for (Tq, Tk), wrong once a batch axis comes in front
    return torch.softmax(scores, dim=1)


def aw_dim0(scores):
    return torch.softmax(scores, dim=0)


def aw_transposed(scores):
    return torch.softmax(scores.transpose(-2, -1), dim=-1)


def aw_no_exp(scores):
    return scores / scores.sum(dim=-1, keepdim=True)


def aw_all_entries(scores):  # one softmax over every score of a matrix
    flat = scores.reshape(*scores.shape[:-2], -1)
    return torch.softmax(flat, dim=-1).reshape(scores.shape)


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


# Exercise 5: softmax_with_temperature(scores, tau)
def tau_reference_like(scores, tau):
    return torch.softmax(scores * (1 / tau), dim=-1)


def tau_method(scores, tau):
    return scores.div(tau).softmax(dim=-1)


def tau_exp(scores, tau):
    z = scores / tau
    e = torch.exp(z - z.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


def tau_tensor(scores, tau):
    return F.softmax(scores / torch.tensor(tau, dtype=scores.dtype), dim=-1)


def tau_pow(scores, tau):  # p_j^(1/tau), renormalised: the same distribution
    p = torch.softmax(scores, dim=-1) ** (1 / tau)
    return p / p.sum(dim=-1, keepdim=True)


def tau_times(scores, tau):
    return torch.softmax(scores * tau, dim=-1)


def tau_after(scores, tau):
    return torch.softmax(scores, dim=-1) / tau


def tau_pow_not_renormalised(scores, tau):
    return torch.softmax(scores, dim=-1) ** (1 / tau)


def tau_flattened_rows(scores, tau):  # every leading axis flattened into one list of query rows, then back
    rows = scores.flatten(end_dim=-2) / tau  # (..., Tq, Tk) -> (N, Tk)
    return torch.softmax(rows, dim=-1).reshape(scores.shape)


def tau_dim0(scores, tau):
    return torch.softmax(scores / tau, dim=0)


def tau_no_dim(scores, tau):  # section 5: PyTorch guesses the axis (and warns)
    return F.softmax(scores / tau)


def tau_wrong_axis(scores, tau):
    return torch.softmax(scores / tau, dim=-2)


def tau_subtract(scores, tau):
    return torch.softmax(scores - tau, dim=-1)


def tau_squared(scores, tau):
    return torch.softmax(scores / tau**2, dim=-1)


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
    wrong(EX1, "third-each", lambda: (1 / 3, 1 / 3), ("column", "quer", "2", "two")),
    wrong(EX1, "zeros", lambda: (0.0, 0.0), ("sum", "column", "1")),
    wrong(EX1, "ones", lambda: (1.0, 1.0), ("sum", "column")),
    wrong(EX1, "strings", lambda: ("0.5", "0.5"), ("number", "string", "quote")),
    wrong(EX1, "one-number", lambda: 0.5),
    # Exercise 2 (two values)
    right(EX2, "reference-fractions", lambda: (1.0, 1 / 6), star=True),
    right(EX2, "two-decimals", lambda: (1.00, 0.17), star=True),
    right(EX2, "just-below-one", lambda: (0.99, 0.17), star=True,
          note="the prompt says two decimals are enough (issue 21 names 0.99)"),
    right(EX2, "numpy-scalars", lambda: (np.float64(1.0), np.float32(0.169)), star=True),
    right(EX2, "computed-0d-tensors", lambda: (torch.softmax(ROW / 0.01, dim=-1).max(),
                                               torch.softmax(ROW / 100, dim=-1).max()), star=True),
    right(EX2, "fraction-objects", lambda: (Fraction(1), Fraction(1, 6)), star=True),
    right(EX2, "ints-and-float", lambda: (1, 0.1691), star=True),
    wrong(EX2, "swapped", lambda: (1 / 6, 1.0), ("small", "one-hot", "uniform", "sharp", "flat"), star=True),
    wrong(EX2, "table-ends", lambda: (0.87, 0.23), ("one-hot", "1", "uniform", "extreme"), star=True),
    wrong(EX2, "large-tau-zero", lambda: (1.0, 0.0), ("uniform", "1/6", "six", "equal"), star=True),
    wrong(EX2, "small-tau-uniform", lambda: (1 / 6, 1 / 6), ("one-hot", "sharp", "wins", "goes to 1"), star=True),
    wrong(EX2, "strings", lambda: ("1.0", "0.17"), ("number", "string", "quote"), star=True),
    # Exercise 3
    right(EX3, "F-softmax", lambda: aw_functional),
    right(EX3, "method-last-dim", lambda: aw_method),
    right(EX3, "nn-Softmax", lambda: aw_module),
    right(EX3, "logsumexp", lambda: aw_logsumexp),
    right(EX3, "exp-over-sum", lambda: aw_exp_sum),
    right(EX3, "softmax-dtype-float32", lambda: aw_float32),
    wrong(EX3, "dim-minus-2", lambda: aw_dim_minus2, ("dim=-1", "axis", "keys", "quer")),
    wrong(EX3, "dim-1", lambda: aw_dim1, ("dim=-1", "axis", "leading", "batch", "last")),
    wrong(EX3, "dim-0", lambda: aw_dim0, ("dim=-1", "axis", "batch", "last")),
    wrong(EX3, "transposed", lambda: aw_transposed, ("transpos", "shape", "(Tq, Tk)", "axis")),
    wrong(EX3, "no-exp", lambda: aw_no_exp, ("exp", "softmax")),
    wrong(EX3, "whole-matrix", lambda: aw_all_entries),
    # Exercise 4
    right(EX4, "max-values", lambda: sm_max_values),
    right(EX4, "log-sum-exp", lambda: sm_logsumexp),
    right(EX4, "python-loop", lambda: sm_loop),
    right(EX4, "float64-inside", lambda: sm_float64),
    right(EX4, "unsqueeze-div", lambda: sm_div_unsqueeze),
    right(EX4, "float32-result", lambda: sm_float32_result),
    wrong(EX4, "no-shift", lambda: sm_naive, ("max", "overflow", "inf", "nan")),
    wrong(EX4, "subtract-min", lambda: sm_subtract_min, ("max", "maximum", "largest")),
    wrong(EX4, "subtract-mean", lambda: sm_subtract_mean, ("max", "maximum", "largest")),
    wrong(EX4, "subtract-first", lambda: sm_subtract_first, ("max", "maximum", "largest")),
    wrong(EX4, "global-max", lambda: sm_global_max, ("row", "each", "dim", "keepdim", "per")),
    wrong(EX4, "sum-over-dim0", lambda: sm_sum_dim0, ("sum", "axis", "dim", "last")),
    wrong(EX4, "max-without-keepdim", lambda: sm_no_keepdim, ("keepdim", "broadcast", "shape")),
    # Exercise 5
    right(EX5, "times-inverse", lambda: tau_reference_like),
    right(EX5, "div-method", lambda: tau_method),
    right(EX5, "exp-over-sum", lambda: tau_exp),
    right(EX5, "tau-as-tensor", lambda: tau_tensor),
    right(EX5, "power-renormalised", lambda: tau_pow),
    right(EX5, "flattened-rows", lambda: tau_flattened_rows,
          note="flatten(end_dim=-2) needs the promised (..., Tq, Tk); a 1-D probe rejected it (issue 25)"),
    wrong(EX5, "dim-0", lambda: tau_dim0, ("quer", "axis", "dim=-1")),
    wrong(EX5, "no-dim", lambda: tau_no_dim, ("batch", "axis", "dim=-1")),
    wrong(EX5, "multiplied", lambda: tau_times, ("divide", "sharper", "flatter", "/")),
    wrong(EX5, "after-softmax", lambda: tau_after, ("before", "sum", "divide the scores")),
    wrong(EX5, "power-not-renormalised", lambda: tau_pow_not_renormalised, ("sum", "normal")),
    wrong(EX5, "wrong-axis", lambda: tau_wrong_axis, ("axis", "dim", "keys")),
    wrong(EX5, "subtracted", lambda: tau_subtract, ("divide", "/")),
    wrong(EX5, "tau-squared", lambda: tau_squared),
]
