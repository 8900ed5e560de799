"""Notebook 05 (multi-head reshaping): learner answers to its five exercises."""

import math
from fractions import Fraction

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

import attnlib

from . import right, wrong

EXERCISES = {"check_split_shape": 1, "check_head_scale": 2, "check_parameter_count": 3,
             "check_merge_heads": 4, "check_multi_head_attention": 5}

EX1 = "nb05.check_split_shape"  # split_heads of (B, T, E) = (2, 7, 12), 3 heads: (2, 3, 7, 4)
EX2 = "nb05.check_head_scale"  # E = 512, H = 8: sqrt(64) = 8
EX3 = "nb05.check_parameter_count"  # E = 8, H = 4, biases: 4 * 64 + 4 * 8 = 288
EX4 = "nb05.check_merge_heads"
EX5 = "nb05.check_multi_head_attention"


def _torch_count():
    return sum(p.numel() for p in nn.MultiheadAttention(8, 4).parameters())


# Exercise 4: my_merge_heads(x), (B, H, T, Dh) -> (B, T, E), ending with .view
def mh_permute(x):
    b, h, t, dh = x.shape
    return x.permute(0, 2, 1, 3).contiguous().view(b, t, h * dh)


def mh_minus_one(x):
    return x.transpose(1, 2).contiguous().view(x.shape[0], x.shape[2], -1)


def mh_swapaxes(x):
    b, h, t, dh = x.size()
    return x.swapaxes(1, 2).contiguous().view(b, t, h * dh)


def mh_clone(x):
    b, h, t, dh = x.shape
    return x.transpose(-3, -2).clone(memory_format=torch.contiguous_format).view(b, t, -1)


def mh_cat_heads(x):  # the heads side by side, one by one
    return torch.cat([x[:, i] for i in range(x.shape[1])], dim=-1)


def mh_reshape(x):  # .reshape instead of .view: the same values (it copies because it must)
    b, h, t, dh = x.shape
    return x.transpose(1, 2).reshape(b, t, h * dh)


def mh_view_only(x):  # the classic bug: the heads' data is read in the wrong order
    b, h, t, dh = x.shape
    return x.contiguous().view(b, t, h * dh)


def mh_transpose_no_contiguous(x):  # raises: view on a non-contiguous tensor
    b, h, t, dh = x.shape
    return x.transpose(1, 2).view(b, t, h * dh)


def mh_wrong_transpose(x):
    b, h, t, dh = x.shape
    return x.transpose(2, 3).contiguous().view(b, t, h * dh)


def mh_sum_heads(x):
    return x.sum(dim=1)


def mh_dh_major(x):  # features ordered (Dh, H) instead of (H, Dh)
    b, h, t, dh = x.shape
    return x.permute(0, 2, 3, 1).contiguous().view(b, t, h * dh)


# Exercise 5: my_multi_head_attention(q, k, v, num_heads) -> (B, Tq, E)
def mha_einsum(q, k, v, num_heads):
    b, tq, e = q.shape
    dh = e // num_heads
    qh = q.view(b, tq, num_heads, dh)
    kh = k.view(b, k.shape[1], num_heads, dh)
    vh = v.view(b, v.shape[1], num_heads, dh)
    weights = torch.einsum("bqhd,bkhd->bhqk", qh, kh).div(math.sqrt(dh)).softmax(dim=-1)
    return torch.einsum("bhqk,bkhd->bqhd", weights, vh).reshape(b, tq, e)


def mha_loop(q, k, v, num_heads):
    dh = q.shape[-1] // num_heads
    heads = []
    for i in range(num_heads):
        sl = slice(i * dh, (i + 1) * dh)
        w = F.softmax(q[..., sl] @ k[..., sl].transpose(1, 2) / math.sqrt(dh), dim=-1)
        heads.append(w @ v[..., sl])
    return torch.cat(heads, dim=-1)


def mha_unflatten(q, k, v, num_heads):
    def split(x):
        return x.unflatten(-1, (num_heads, -1)).transpose(1, 2)  # (B, H, T, Dh)
    qh, kh, vh = split(q), split(k), split(v)
    weights = torch.softmax(qh @ kh.mT * qh.shape[-1] ** -0.5, dim=-1)
    return (weights @ vh).transpose(1, 2).flatten(2)


def mha_view_contiguous(q, k, v, num_heads):
    b, tq, e = q.shape
    tk = k.shape[1]
    dh = e // num_heads
    qh = q.view(b, tq, num_heads, dh).transpose(1, 2)
    kh = k.view(b, tk, num_heads, dh).transpose(1, 2)
    vh = v.view(b, tk, num_heads, dh).transpose(1, 2)
    scores = torch.matmul(qh, kh.transpose(2, 3)) / math.sqrt(dh)
    out = torch.matmul(scores.softmax(-1), vh)
    return out.transpose(1, 2).contiguous().view(b, tq, e)


def mha_float64(q, k, v, num_heads):
    return mha_view_contiguous(q.double(), k.double(), v.double(), num_heads).to(q.dtype)


def _split(x, num_heads):
    b, t, e = x.shape
    return x.reshape(b, t, num_heads, e // num_heads).transpose(1, 2)


def mha_scale_e(q, k, v, num_heads):
    qh, kh, vh = _split(q, num_heads), _split(k, num_heads), _split(v, num_heads)
    w = (qh @ kh.transpose(-2, -1) / math.sqrt(q.shape[-1])).softmax(dim=-1)
    return (w @ vh).transpose(1, 2).reshape(q.shape)


def mha_unscaled(q, k, v, num_heads):
    qh, kh, vh = _split(q, num_heads), _split(k, num_heads), _split(v, num_heads)
    w = (qh @ kh.transpose(-2, -1)).softmax(dim=-1)
    return (w @ vh).transpose(1, 2).reshape(q.shape)


def mha_split_without_transpose(q, k, v, num_heads):  # view straight to (B, H, T, Dh)
    def split(x):
        b, t, e = x.shape
        return x.view(b, num_heads, t, e // num_heads)
    qh, kh, vh = split(q), split(k), split(v)
    w = (qh @ kh.transpose(-2, -1) / math.sqrt(qh.shape[-1])).softmax(dim=-1)
    return (w @ vh).transpose(1, 2).reshape(q.shape)


def mha_merge_without_transpose(q, k, v, num_heads):
    qh, kh, vh = _split(q, num_heads), _split(k, num_heads), _split(v, num_heads)
    w = (qh @ kh.transpose(-2, -1) / math.sqrt(qh.shape[-1])).softmax(dim=-1)
    return (w @ vh).reshape(q.shape)


def mha_softmax_queries(q, k, v, num_heads):
    qh, kh, vh = _split(q, num_heads), _split(k, num_heads), _split(v, num_heads)
    w = (qh @ kh.transpose(-2, -1) / math.sqrt(qh.shape[-1])).softmax(dim=-2)
    return (w @ vh).transpose(1, 2).reshape(q.shape)


def mha_keys_with_tq(q, k, v, num_heads):  # reshapes the keys with the queries' length
    b, tq, e = q.shape
    dh = e // num_heads
    qh = q.reshape(b, tq, num_heads, dh).transpose(1, 2)
    kh = k.reshape(b, tq, num_heads, -1).transpose(1, 2)
    vh = v.reshape(b, tq, num_heads, -1).transpose(1, 2)
    w = (qh @ kh.transpose(-2, -1) / math.sqrt(dh)).softmax(dim=-1)
    return (w @ vh).transpose(1, 2).reshape(b, tq, e)


def mha_one_head(q, k, v, num_heads):  # ignores num_heads: single-head attention
    return attnlib.scaled_dot_product_attention(q, k, v)[0]


ANSWERS = [
    # Exercise 1
    right(EX1, "tuple", lambda: (2, 3, 7, 4)),
    right(EX1, "list", lambda: [2, 3, 7, 4]),
    right(EX1, "torch-size", lambda: attnlib.split_heads(torch.zeros(2, 7, 12), num_heads=3).shape),
    right(EX1, "numpy-array", lambda: np.array([2, 3, 7, 4])),
    right(EX1, "numpy-ints", lambda: tuple(np.int64(n) for n in (2, 3, 7, 4))),
    right(EX1, "int-division", lambda: (2, 3, 7, 12 // 3)),
    wrong(EX1, "no-transpose", lambda: (2, 7, 3, 4), ("transpose", "H", "head", "order", "(B, H, T, Dh)")),
    wrong(EX1, "dh-equals-e", lambda: (2, 3, 7, 12), ("Dh", "E / H", "12 / 3", "width")),
    wrong(EX1, "batch-times-heads", lambda: (6, 7, 4), ("axes", "four", "4", "(B, H, T, Dh)", "B")),
    wrong(EX1, "t-and-dh-swapped", lambda: (2, 3, 4, 7), ("T", "Dh", "order")),
    wrong(EX1, "string", lambda: "(2, 3, 7, 4)", ("tuple", "string", "quote")),
    # Exercise 2
    right(EX2, "float", lambda: 8.0),
    right(EX2, "expression", lambda: math.sqrt(512 / 8)),
    right(EX2, "int", lambda: 8),
    right(EX2, "numpy-float", lambda: np.float64(8.0)),
    right(EX2, "0d-tensor", lambda: torch.tensor(64.0).sqrt()),
    right(EX2, "fraction", lambda: Fraction(8)),
    wrong(EX2, "sqrt-of-E", lambda: math.sqrt(512), ("Dh", "E / H", "head", "64", "22.6")),
    wrong(EX2, "Dh-without-sqrt", lambda: 64, ("sqrt", "square root", "√")),
    wrong(EX2, "factor-not-divisor", lambda: 1 / 8, ("divide", "1/8", "factor", "multipl")),
    wrong(EX2, "sqrt-of-H", lambda: math.sqrt(8), ("Dh", "E / H", "head width", "64")),
    wrong(EX2, "string", lambda: "8", ("number", "string", "quote")),
    # Exercise 3
    right(EX3, "int", lambda: 288),
    right(EX3, "expression", lambda: 4 * 8**2 + 4 * 8),
    right(EX3, "counted-in-torch", _torch_count),
    right(EX3, "numpy-int", lambda: np.int64(288)),
    right(EX3, "0d-tensor", lambda: torch.tensor(288)),
    right(EX3, "float", lambda: 288.0),
    wrong(EX3, "no-biases", lambda: 4 * 8**2, ("bias",)),
    wrong(EX3, "no-output-projection", lambda: 3 * 8**2 + 3 * 8, ("W^O", "output", "four", "4")),
    wrong(EX3, "times-heads", lambda: 4 * (4 * 8**2 + 4 * 8), ("head", "H", "whatever", "independent")),
    wrong(EX3, "one-bias", lambda: 4 * 8**2 + 8),
    wrong(EX3, "string", lambda: "288", ("number", "string", "quote")),
    # Exercise 4
    right(EX4, "permute", lambda: mh_permute),
    right(EX4, "view-minus-one", lambda: mh_minus_one),
    right(EX4, "swapaxes", lambda: mh_swapaxes),
    right(EX4, "clone-contiguous", lambda: mh_clone),
    right(EX4, "cat-heads", lambda: mh_cat_heads),
    right(EX4, "reshape", lambda: mh_reshape),
    wrong(EX4, "view-without-transpose", lambda: mh_view_only, ("transpose",)),
    wrong(EX4, "no-contiguous", lambda: mh_transpose_no_contiguous, ("contiguous",)),
    wrong(EX4, "transpose-2-3", lambda: mh_wrong_transpose, ("transpose", "axes", "1, 2", "H and T")),
    wrong(EX4, "sum-heads", lambda: mh_sum_heads, ("shape", "E", "concat", "side by side")),
    wrong(EX4, "dh-major", lambda: mh_dh_major, ("order", "head", "side by side", "permute")),
    # Exercise 5
    right(EX5, "einsum", lambda: mha_einsum),
    right(EX5, "loop-over-heads", lambda: mha_loop),
    right(EX5, "unflatten", lambda: mha_unflatten),
    right(EX5, "view-contiguous", lambda: mha_view_contiguous),
    right(EX5, "float64-inside", lambda: mha_float64),
    wrong(EX5, "scale-by-sqrt-E", lambda: mha_scale_e, ("Dh", "sqrt", "scale", "d_k")),
    wrong(EX5, "unscaled", lambda: mha_unscaled, ("scale", "sqrt", "√")),
    wrong(EX5, "split-without-transpose", lambda: mha_split_without_transpose, ("transpose", "split", "view")),
    wrong(EX5, "merge-without-transpose", lambda: mha_merge_without_transpose, ("transpose", "merge")),
    wrong(EX5, "softmax-over-queries", lambda: mha_softmax_queries, ("dim", "axis", "keys")),
    wrong(EX5, "keys-reshaped-with-tq", lambda: mha_keys_with_tq, ("Tk", "key", "cross", "-1")),
    wrong(EX5, "single-head", lambda: mha_one_head, ("head", "split", "Dh")),
]
