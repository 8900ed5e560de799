"""Notebook 03 (why divide by sqrt(d_k)): learner answers to its four exercises.

Exercise 2 is the variance of the scaled scores at d_k = 64 when the queries' entries have variance 4
and the keys' variance 1: 4 * 1 * 64 / 64 = 4 (the scale removes the growth, not the level).
"""

import math
from fractions import Fraction

import numpy as np
import torch

from . import right, wrong

EXERCISES = {"check_variance_prediction": 1, "check_scaled_variance": 2, "check_top_weight_prediction": 3,
             "check_scaled_scores": 4}

EX1 = "nb03.check_variance_prediction"  # Var(q . k) at d_k = 8 with +-1 entries: 8
EX2 = "nb03.check_scaled_variance"  # Var(q . k / sqrt(64)) with Var(q_i) = 4, Var(k_i) = 1: 4
EX3 = "nb03.check_top_weight_prediction"  # ("above", "b"): the notebook measures about 0.96
EX4 = "nb03.check_scaled_scores"


def _variance_by_enumeration():
    """All 2**8 patterns of q . k with q fixed at all ones (by symmetry the same as all pairs)."""
    bits = torch.tensor([[1.0 if (n >> i) & 1 else -1.0 for i in range(8)] for n in range(256)])
    return bits.sum(dim=1).var(unbiased=False)  # a 0-d tensor holding 8.


# Exercise 4: scaled_scores(q, k)
def ss_einsum(q, k):
    return torch.einsum("...qd,...kd->...qk", q, k) / math.sqrt(q.shape[-1])


def ss_mT(q, k):
    return torch.matmul(q, k.mT) * q.size(-1) ** -0.5


def ss_scale_q(q, k):
    return (q / q.shape[-1] ** 0.5) @ k.transpose(-1, -2)


def ss_quarter_each(q, k):
    c = k.shape[-1] ** 0.25
    return (q / c) @ (k / c).transpose(-2, -1)


def ss_tensor_sqrt(q, k):
    return q @ k.transpose(-2, -1) / torch.tensor(q.shape[-1], dtype=q.dtype).sqrt()


def ss_unscaled(q, k):
    return q @ k.transpose(-2, -1)


def ss_no_sqrt(q, k):
    return q @ k.transpose(-2, -1) / q.shape[-1]


def ss_shape1(q, k):  # the width for 2-D inputs, the number of heads for (B, H, Tq, Dh)
    return q @ k.transpose(-2, -1) / math.sqrt(q.shape[1])


def ss_model_width(q, k):  # sqrt(E) = sqrt(H * Dh) for a head's scores
    width = q.shape[-1] * (q.shape[1] if q.dim() == 4 else 1)
    return q @ k.transpose(-2, -1) / math.sqrt(width)


def ss_tk(q, k):
    return q @ k.transpose(-2, -1) / math.sqrt(k.shape[-2])


def ss_k_q(q, k):
    return k @ q.transpose(-2, -1) / math.sqrt(q.shape[-1])


def ss_multiplied(q, k):
    return q @ k.transpose(-2, -1) * math.sqrt(q.shape[-1])


def ss_broadcast(q, k):  # every query against every key by broadcasting, then the sum over the width
    return (q.unsqueeze(-2) * k.unsqueeze(-3)).sum(dim=-1) / math.sqrt(k.size(-1))


def ss_swapaxes(q, k):
    return torch.matmul(q, k.swapaxes(-1, -2)) / q.shape[-1] ** 0.5


def ss_dot_T(q, k):  # the 2-D habit: k.T
    return q @ k.T / math.sqrt(q.shape[-1])


def ss_dot_t(q, k):
    return q @ k.t() / math.sqrt(q.shape[-1])


def ss_fixed_width(q, k):  # the width of the notebook's running example, d_k = 1024, hard-coded
    return q @ k.transpose(-2, -1) / math.sqrt(1024)


def ss_transpose_0_1(q, k):  # L1 #309: axes counted from the front, right for 2-D inputs only
    return q @ k.transpose(0, 1) / math.sqrt(q.shape[-1])


def ss_softmax(q, k):  # one step too far: the weights
    return torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)


def ss_softmax_unscaled(q, k):
    return (q @ k.transpose(-2, -1)).softmax(-1)


def ss_isqrt(q, k):  # L6: an integer square root, exact only at perfect-square widths
    return q @ k.transpose(-2, -1) / math.isqrt(q.shape[-1])


def ss_int_sqrt(q, k):  # L6
    return q @ k.transpose(-2, -1) / int(math.sqrt(q.shape[-1]))


def ss_float32(q, k):  # L6: float64 inputs computed (and returned) in float32
    return q.float() @ k.float().transpose(-2, -1) / math.sqrt(q.shape[-1])


def ss_transpose_1_2(q, k):  # L6: axes counted from the front, right for 3-D inputs only
    return q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])


def ss_bmm(q, k):  # L6: torch.bmm takes 3-D tensors only
    return torch.bmm(q, k.transpose(-2, -1)) / math.sqrt(q.shape[-1])


ANSWERS = [
    # Exercise 1
    right(EX1, "int", lambda: 8),
    right(EX1, "float", lambda: 8.0),
    right(EX1, "numpy-int", lambda: np.int64(8)),
    right(EX1, "0d-tensor-enumerated", _variance_by_enumeration),
    right(EX1, "fraction", lambda: Fraction(8)),
    right(EX1, "sum-of-ones", lambda: sum(1 for _ in range(8))),
    wrong(EX1, "squared", lambda: 64, ("d_k", "add", "sum", "8")),
    wrong(EX1, "square-root", lambda: math.sqrt(8), ("variance", "standard deviation", "sqrt", "add")),
    wrong(EX1, "one", lambda: 1),
    wrong(EX1, "patterns", lambda: 256),
    wrong(EX1, "string", lambda: "8", ("number", "string", "quote")),
    right(EX1, "std-squared", lambda: torch.tensor(8.0).sqrt() ** 2),
    wrong(EX1, "agreements-only", lambda: 8 * 0.5 * 0.5,
          note="the binomial variance of the number of agreements, not of agreements minus disagreements"),
    wrong(EX1, "square-law-from-d_k-2", lambda: 8**2 / 2, ("independent", "square", "add"),
          note="d_k**2 / 2 also gives 2 at d_k = 2"),
    wrong(EX1, "score-range", lambda: 16, ("higher", "variance 1"), note="from -8 to +8: the range, not the variance"),
    # Exercise 2
    right(EX2, "int", lambda: 4),
    right(EX2, "one-decimal", lambda: 4.0),
    right(EX2, "numpy-float32", lambda: np.float32(4.0)),
    right(EX2, "0d-tensor-from-std", lambda: torch.tensor(2.0) ** 2 * 64 / torch.tensor(64.0).sqrt() ** 2,
          note="the queries' standard deviation squared, times 64 products, divided by sqrt(64) squared"),
    right(EX2, "fraction", lambda: Fraction(4 * 64, 64)),
    right(EX2, "loop-over-products", lambda: sum(4.0 * 1.0 for _ in range(64)) / math.sqrt(64) ** 2),
    right(EX2, "numpy-0d-array", lambda: np.array(4.0)),
    right(EX2, "measured-rounds-to-4.0", lambda: 4.02,
          note="the value the next cell measures; 1 decimal is enough, and 4.02 is 4.0 at 1 decimal"),
    wrong(EX2, "scale-restores-one", lambda: 1, ("query", "queries", "4", "level"),
          note="the classic belief that dividing by sqrt(d_k) always brings the variance back to 1"),
    wrong(EX2, "unscaled", lambda: 4 * 64, ("sqrt", "scale", "divide", "64"),
          note="Var(q . k) before the scale: 256"),
    wrong(EX2, "divided-by-sqrt-not-squared", lambda: 4 * 64 / math.sqrt(64), ("square", "variance", "64", "c**2"),
          note="divides the variance by sqrt(64) = 8 instead of 64: 32"),
    wrong(EX2, "standard-deviation-of-q", lambda: 2.0, ("variance", "standard deviation", "square", "std"),
          note="used the queries' standard deviation 2 where their variance 4 enters: 2 * 1 * 64 / 64"),
    wrong(EX2, "variances-added", lambda: 4 + 1, note="Var(q_i) + Var(k_i) instead of their product"),
    wrong(EX2, "squared-variance", lambda: 16.0, note="Var(2 q_i) taken as 4**2"),
    wrong(EX2, "string", lambda: "4", ("number", "string", "quote")),
    right(EX2, "numpy-from-std", lambda: np.float64(2.0) ** 2 * 1.0),
    wrong(EX2, "std-times-width-over-8", lambda: 2 * 64 / 8,
          note="the queries' standard deviation times d_k divided by sqrt(d_k)"),
    wrong(EX2, "sixteenth", lambda: 0.25, ("too low", "64")),
    # Exercise 3: above or below 0.9, and the letter of the reason (b: the spread of tens of units)
    right(EX3, "lowercase", lambda: ("above", "b"), star=True),
    right(EX3, "capitals", lambda: ("Above", "B"), star=True),
    right(EX3, "letter-in-brackets", lambda: ("above", "(b)"), star=True),
    right(EX3, "spaces-and-dot", lambda: (" above ", "b."), star=True),
    right(EX3, "numpy-string", lambda: (np.str_("above"), np.str_("b")), star=True),
    wrong(EX3, "differences-do-not-grow", lambda: ("below", "a"), ("differences", "2 d_k", "grow"), star=True,
          note="notebook 02's 'softmax sees only differences', without seeing that the differences grow too"),
    wrong(EX3, "keys-average-out", lambda: ("below", "c"), ("winner", "1/16"), star=True,
          note="the mean weight of a key taken for the mean of the largest weight"),
    wrong(EX3, "overflow", lambda: ("above", "d"), ("overflow", "subtracts"), star=True,
          note="right side, wrong reason"),
    wrong(EX3, "right-reason-wrong-side", lambda: ("below", "b"), star=True),
    wrong(EX3, "a-number", lambda: (0.96, "b"), ('"above" or "below"',), star=True,
          note="the measured number where a side is asked"),
    wrong(EX3, "two-letters", lambda: ("above", "b and d"), ("one letter",), star=True),
    wrong(EX3, "percent-side", lambda: ("96%", "b"), ('"above" or "below"',), star=True),
    wrong(EX3, "reason-missing", lambda: ("above", None), ("my_reason",), star=True),
    # Exercise 4
    right(EX4, "einsum", lambda: ss_einsum),
    right(EX4, "matmul-mT", lambda: ss_mT),
    right(EX4, "scale-queries", lambda: ss_scale_q),
    right(EX4, "fourth-root-each", lambda: ss_quarter_each),
    right(EX4, "tensor-sqrt", lambda: ss_tensor_sqrt),
    wrong(EX4, "unscaled", lambda: ss_unscaled, ("sqrt", "scale", "divide", "√")),
    wrong(EX4, "divided-by-dk", lambda: ss_no_sqrt, ("sqrt", "square root", "√")),
    wrong(EX4, "shape-1", lambda: ss_shape1),
    wrong(EX4, "model-width", lambda: ss_model_width, ("Dh", "head", "E")),
    wrong(EX4, "divided-by-sqrt-tk", lambda: ss_tk, ("sqrt(Tk)", "number of keys")),  # r39: was "a notebook variable"
    wrong(EX4, "keys-times-queries", lambda: ss_k_q, ("transpos", "shape", "(Tq, Tk)", "order")),
    wrong(EX4, "multiplied", lambda: ss_multiplied),
    right(EX4, "broadcast-sum", lambda: ss_broadcast),
    right(EX4, "swapaxes", lambda: ss_swapaxes),
    wrong(EX4, "k-dot-T", lambda: ss_dot_T, ("k.T", "transpose(-2, -1)", "batched")),
    wrong(EX4, "k-dot-t", lambda: ss_dot_t, ("k.t()", "transpose(-2, -1)", "batched")),
    wrong(EX4, "softmax-applied", lambda: ss_softmax, ("softmax", "sum to 1", "before"),
          note="the weights returned where the scores are asked"),
    wrong(EX4, "softmax-of-unscaled", lambda: ss_softmax_unscaled, ("softmax", "sum to 1")),
    wrong(EX4, "fixed-width", lambda: ss_fixed_width, ("notebook variable",)),
    wrong(EX4, "transpose-0-1", lambda: ss_transpose_0_1, ("transpose(0, 1)",), note="L1 #309"),
    # population L6
    wrong(EX1, "worked-case-copied", lambda: 2),
    wrong(EX2, "divided-by-sqrt-64-once", lambda: 4 / 8, ("too low", "Var(q_i k_i)")),
    wrong(EX4, "isqrt", lambda: ss_isqrt),
    wrong(EX4, "int-of-sqrt", lambda: ss_int_sqrt),
    wrong(EX4, "float32-for-float64", lambda: ss_float32, ("float32", "dtype")),
    wrong(EX4, "transpose-1-2", lambda: ss_transpose_1_2),
    wrong(EX4, "bmm", lambda: ss_bmm),
]
