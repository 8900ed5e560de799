"""Notebook 05 (multi-head reshaping): learner answers to its five exercises."""

import math
from fractions import Fraction

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

import attnlib

from . import right, wrong

EXERCISES = {"check_parameter_count": 1, "check_split_index": 2, "check_head_scale": 3,
             "check_merge_heads": 4, "check_multi_head_attention": 5}

EX1 = "nb05.check_parameter_count"  # E = 8, H = 4, biases: 4 * 64 + 4 * 8 = 288
EX2 = "nb05.check_split_index"  # x[1, 5, 7] of (B, T, E) = (2, 7, 12) after split_heads(x, 3): (1, 1, 5, 3)
EX3 = "nb05.check_head_scale"  # E = 512, H = 8: sqrt(64) = 8
EX4 = "nb05.check_merge_heads"  # (B*H, T, Dh) -> (B, T, E)
EX5 = "nb05.check_multi_head_attention"


def _torch_count():
    return sum(p.numel() for p in nn.MultiheadAttention(8, 4).parameters())


# Exercise 4: my_merge_heads(x, num_heads), (B*H, T, Dh) with row b*H + h = head h of sequence b -> (B, T, E)
def mh_reshape_transpose(x, num_heads):
    bh, t, dh = x.shape
    b = bh // num_heads
    return x.reshape(b, num_heads, t, dh).transpose(1, 2).reshape(b, t, num_heads * dh)


def mh_view_contiguous(x, num_heads):  # the blog's way: view, transpose, contiguous, view
    bh, t, dh = x.size()
    return x.view(-1, num_heads, t, dh).transpose(1, 2).contiguous().view(bh // num_heads, t, -1)


def mh_unflatten_permute(x, num_heads):
    return x.unflatten(0, (-1, num_heads)).permute(0, 2, 1, 3).flatten(2)


def mh_cat_strided(x, num_heads):  # head h of every sequence: rows h, h + H, h + 2H, ...
    return torch.cat([x[h::num_heads] for h in range(num_heads)], dim=-1)


def mh_loop(x, num_heads):  # one sequence at a time, its heads side by side
    rows = [torch.cat(list(x[b * num_heads:(b + 1) * num_heads]), dim=-1) for b in range(x.shape[0] // num_heads)]
    return torch.stack(rows)


def mh_attnlib_merge(x, num_heads):  # via attnlib's merge after unflattening B*H
    return attnlib.merge_heads(x.reshape(x.shape[0] // num_heads, num_heads, *x.shape[1:]))


def mh_head_major(x, num_heads):  # reads the B*H axis as (H, B)
    bh, t, dh = x.shape
    return x.reshape(num_heads, bh // num_heads, t, dh).permute(1, 2, 0, 3).reshape(bh // num_heads, t, -1)


def mh_no_transpose(x, num_heads):  # (B*H, T, Dh) read straight as (B, T, E)
    bh, t, dh = x.shape
    return x.reshape(bh // num_heads, t, num_heads * dh)


def mh_view_no_contiguous(x, num_heads):  # raises: view on a transposed tensor
    bh, t, dh = x.shape
    return x.view(bh // num_heads, num_heads, t, dh).transpose(1, 2).view(bh // num_heads, t, num_heads * dh)


def mh_batch_not_divided(x, num_heads):  # takes x.shape[0] for B
    bh, t, dh = x.shape
    return x.reshape(bh, num_heads, t, dh).transpose(1, 2).reshape(bh, t, num_heads * dh)


def mh_two_heads(x, num_heads):  # written for the notebook's running example, H = 2
    bh, t, dh = x.shape
    return x.reshape(bh // 2, 2, t, dh).transpose(1, 2).reshape(bh // 2, t, 2 * dh)


def mh_dh_major(x, num_heads):  # features ordered (Dh, H) instead of (H, Dh)
    bh, t, dh = x.shape
    return x.reshape(bh // num_heads, num_heads, t, dh).permute(0, 2, 3, 1).reshape(bh // num_heads, t, -1)


def mh_one_argument(x):  # the section-4 merge, which takes (B, H, T, Dh)
    b, h, t, dh = x.shape
    return x.transpose(1, 2).reshape(b, t, h * dh)


def mh_sum_heads(x, num_heads):
    bh, t, dh = x.shape
    return x.reshape(bh // num_heads, num_heads, t, dh).sum(dim=1)


def split_heads(x, num_heads):  # the notebook's cell of section 4, copied as it is
    b, t, e = x.shape
    x = x.reshape(b, t, num_heads, e // num_heads)
    return x.transpose(1, 2)


def mh_split_instead(x, num_heads):  # the visible split_heads: the wrong direction
    return split_heads(x, num_heads)


def mh_heads_reversed(x, num_heads):
    bh, t, dh = x.shape
    y = x.reshape(bh // num_heads, num_heads, t, dh).flip(1)
    return y.transpose(1, 2).reshape(bh // num_heads, t, num_heads * dh)


def mh_transpose_t_dh(x, num_heads):  # transposes T and Dh instead of H and T
    bh, t, dh = x.shape
    return x.reshape(bh // num_heads, num_heads, t, dh).transpose(2, 3).reshape(bh // num_heads, t, num_heads * dh)


def mh_stops_at_4d(x, num_heads):  # (B, T, H, Dh): the last two axes never merged
    bh, t, dh = x.shape
    return x.reshape(bh // num_heads, num_heads, t, dh).transpose(1, 2)


def mh_one_fake_sequence(x, num_heads):  # the section-4 merge on a batch of one: (T, B*H*Dh)
    return attnlib.merge_heads(x.unsqueeze(0))[0]


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


def mha_straight_both_ways(q, k, v, num_heads):  # reader r39: split and merge both without the transpose
    b, t, e = q.shape
    qh, kh, vh = (x.reshape(b, num_heads, x.shape[1], e // num_heads) for x in (q, k, v))
    w = (qh @ kh.transpose(-2, -1) / math.sqrt(qh.shape[-1])).softmax(dim=-1)
    return (w @ vh).reshape(b, t, e)


def mha_view_after_transpose(q, k, v, num_heads):  # reader r39: raises, view on a transposed tensor
    qh, kh, vh = _split(q, num_heads), _split(k, num_heads), _split(v, num_heads)
    w = (qh @ kh.transpose(-2, -1) / math.sqrt(qh.shape[-1])).softmax(dim=-1)
    return (w @ vh).transpose(1, 2).view(q.shape)


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


def mha_one_head(q, k, v, num_heads):  # ignores num_heads: single-head attention (no ready-made call, now refused)
    return (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).softmax(dim=-1) @ v


def mha_one_head_dh_scale(q, k, v, num_heads):  # one wide head, scaled by sqrt(Dh): never split
    return (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1] // num_heads)).softmax(dim=-1) @ v


def mha_attnlib_helpers(q, k, v, num_heads):  # the prompt forbids split_heads, merge_heads and the attention
    qh, kh, vh = (attnlib.split_heads(x, num_heads) for x in (q, k, v))
    return attnlib.merge_heads(attnlib.scaled_dot_product_attention(qh, kh, vh)[0])


def mha_torch_sdpa(q, k, v, num_heads):
    qh, kh, vh = _split(q, num_heads), _split(k, num_heads), _split(v, num_heads)
    return F.scaled_dot_product_attention(qh, kh, vh).transpose(1, 2).reshape(q.shape)


def mha_scales_q_in_place(q, k, v, num_heads):  # right output, but the caller's q is divided too
    q /= math.sqrt(q.shape[-1] // num_heads)
    qh, kh, vh = _split(q, num_heads), _split(k, num_heads), _split(v, num_heads)
    return ((qh @ kh.transpose(-2, -1)).softmax(dim=-1) @ vh).transpose(1, 2).reshape(q.shape)


def _scaled(divisor):  # right but for the divisor of the scores, divisor(E, H)
    def attention(q, k, v, num_heads):
        qh, kh, vh = _split(q, num_heads), _split(k, num_heads), _split(v, num_heads)
        w = (qh @ kh.transpose(-2, -1) / divisor(q.shape[-1], num_heads)).softmax(dim=-1)
        return (w @ vh).transpose(1, 2).reshape(q.shape)
    return attention


def mha_two_heads(q, k, v, num_heads):  # written for the running example, H = 2
    return mha_view_contiguous(q, k, v, 2)


def mha_keys_not_transposed(q, k, v, num_heads):  # runs only when Dh == Tk
    qh, kh, vh = _split(q, num_heads), _split(k, num_heads), _split(v, num_heads)
    w = (qh @ kh / math.sqrt(qh.shape[-1])).softmax(dim=-1)
    return (w @ vh).transpose(1, 2).reshape(q.shape)


def mha_dealt_heads(q, k, v, num_heads):  # head h takes features h, H + h, 2H + h, ...; the merge puts them back
    b, tq, e = q.shape
    d = e // num_heads

    def split(x):
        return x.reshape(b, x.shape[1], d, num_heads).permute(0, 3, 1, 2)
    w = (split(q) @ split(k).transpose(-2, -1) / math.sqrt(d)).softmax(-1)
    return (w @ split(v)).permute(0, 2, 3, 1).reshape(b, tq, e)


# Learner population L4 (notes/learners/L4)
def mh_heads_then_batch(x, num_heads):  # B*H split as (H, B), H kept in front
    bh, t, dh = x.shape
    return x.reshape(num_heads, bh // num_heads, t, dh).transpose(1, 2).reshape(num_heads, t, -1)


def mh_batch_of_one(x, num_heads):  # every row read as a head of one sequence, (1, T, B*H*Dh)
    bh, t, dh = x.shape
    return x.transpose(0, 1).reshape(1, t, bh * dh)


def mh_merged_width_dh(x, num_heads):  # the sequence count right, the last size Dh
    bh, t, dh = x.shape
    b = bh // num_heads
    return x.reshape(b, num_heads, t, dh).transpose(1, 2).reshape(b, t, dh)


def _heads(x, num_heads):
    b, t, e = x.shape
    return x.reshape(b, t, num_heads, e // num_heads).transpose(1, 2)


def mha_keys_as_values(q, k, v, num_heads):
    Q, K = _heads(q, num_heads), _heads(k, num_heads)
    w = (Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])).softmax(dim=-1)
    return (w @ K).transpose(1, 2).flatten(2)


def mha_k_and_v_swapped(q, k, v, num_heads):
    Q, K, V = _heads(q, num_heads), _heads(v, num_heads), _heads(k, num_heads)
    w = (Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])).softmax(dim=-1)
    return (w @ V).transpose(1, 2).flatten(2)


def mha_queries_as_values(q, k, v, num_heads):  # w @ Q wherever the shapes allow it
    Q, K = _heads(q, num_heads), _heads(k, num_heads)
    w = (Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])).softmax(dim=-1)
    return (w @ Q if q.shape == k.shape else w @ K).transpose(1, 2).flatten(2)


def mha_heads_not_merged(q, k, v, num_heads):
    Q, K, V = _heads(q, num_heads), _heads(k, num_heads), _heads(v, num_heads)
    return (Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])).softmax(dim=-1) @ V


ANSWERS = [
    # Exercise 1
    right(EX1, "int", lambda: 288),
    right(EX1, "expression", lambda: 4 * 8**2 + 4 * 8),
    right(EX1, "counted-in-torch", _torch_count),
    right(EX1, "numpy-int", lambda: np.int64(288)),
    right(EX1, "0d-tensor", lambda: torch.tensor(288)),
    right(EX1, "float", lambda: 288.0),
    wrong(EX1, "no-biases", lambda: 4 * 8**2, ("bias",)),
    wrong(EX1, "no-output-projection", lambda: 3 * 8**2 + 3 * 8, ("W^O", "output", "four", "4")),
    wrong(EX1, "times-heads", lambda: 4 * (4 * 8**2 + 4 * 8), ("head", "H", "whatever", "independent")),
    wrong(EX1, "one-bias", lambda: 4 * 8**2 + 8),
    wrong(EX1, "running-example-E", lambda: 4 * 4**2 + 4 * 4),
    wrong(EX1, "one-projection", lambda: 8 * 8 + 8),
    wrong(EX1, "one-head-of-four", lambda: 4 * (2 * 8 + 2)),
    wrong(EX1, "string", lambda: "288", ("number", "string", "quote")),
    # Exercise 2
    right(EX2, "tuple", lambda: (1, 1, 5, 3)),
    right(EX2, "list", lambda: [1, 1, 5, 3]),
    right(EX2, "computed", lambda: (1, 7 // (12 // 3), 5, 7 % (12 // 3))),
    right(EX2, "floats", lambda: (1.0, 1.0, 5.0, 3.0)),
    right(EX2, "found-by-running", lambda: tuple(
        attnlib.split_heads(torch.arange(2 * 7 * 12).reshape(2, 7, 12), 3).eq(1 * 84 + 5 * 12 + 7)
        .nonzero()[0].tolist()), note="run split_heads on numbers that name their place, as section 4 does"),
    right(EX2, "numpy-array", lambda: np.array([1, 1, 5, 3])),
    right(EX2, "tensor", lambda: torch.tensor([1, 1, 5, 3])),
    wrong(EX2, "no-transpose", lambda: (1, 5, 1, 3), ("swaps", "transpose", "head index", "(B, T, H, Dh)")),
    wrong(EX2, "feature-not-renumbered", lambda: (1, 1, 5, 7)),
    wrong(EX2, "heads-of-three", lambda: (1, 2, 5, 1)),
    wrong(EX2, "interleaved", lambda: (1, 1, 5, 2)),
    wrong(EX2, "straight-reshape", lambda: (1, 2, 2, 3)),
    wrong(EX2, "counted-from-one", lambda: (2, 2, 6, 4)),
    wrong(EX2, "the-shape", lambda: (2, 3, 7, 4)),
    wrong(EX2, "three-numbers", lambda: (1, 5, 7), ("entries", "4")),
    wrong(EX2, "next-head", lambda: (1, 2, 5, 3), ("number for the head", "h*Dh")),
    wrong(EX2, "feature-off-by-one", lambda: (1, 1, 5, 4), ("feature within the head", "from 0")),
    wrong(EX2, "token-replaced", lambda: (1, 1, 1, 3), ("number for the token",)),
    wrong(EX2, "sequence-changed", lambda: (0, 1, 5, 3), ("number for the sequence",)),
    wrong(EX2, "token-and-feature-swapped", lambda: (1, 1, 3, 5), ("another order",)),
    wrong(EX2, "order-b-t-d-h", lambda: (1, 5, 3, 1), ("another order",)),
    wrong(EX2, "string", lambda: "(1, 1, 5, 3)", ("tuple", "string", "quote")),
    # Exercise 3
    right(EX3, "float", lambda: 8.0),
    right(EX3, "expression", lambda: math.sqrt(512 / 8)),
    right(EX3, "int", lambda: 8),
    right(EX3, "numpy-float", lambda: np.float64(8.0)),
    right(EX3, "0d-tensor", lambda: torch.tensor(64.0).sqrt()),
    right(EX3, "fraction", lambda: Fraction(8)),
    wrong(EX3, "sqrt-of-E", lambda: math.sqrt(512), ("Dh", "E / H", "head", "64", "22.6")),
    wrong(EX3, "Dh-without-sqrt", lambda: 64, ("sqrt", "square root", "√")),
    wrong(EX3, "factor-not-divisor", lambda: 1 / 8, ("divide", "1/8", "factor", "multipl")),
    wrong(EX3, "sqrt-of-H", lambda: math.sqrt(8), ("Dh", "E / H", "head width", "64")),
    wrong(EX3, "sqrt-of-H-one-decimal", lambda: 2.8, ("sqrt(H)",)),
    wrong(EX3, "one-over-sqrt-E", lambda: 1 / math.sqrt(512)),
    wrong(EX3, "string", lambda: "8", ("number", "string", "quote")),
    # Exercise 4
    right(EX4, "reshape-transpose", lambda: mh_reshape_transpose),
    right(EX4, "view-contiguous", lambda: mh_view_contiguous),
    right(EX4, "unflatten-permute", lambda: mh_unflatten_permute),
    right(EX4, "cat-strided-rows", lambda: mh_cat_strided),
    right(EX4, "loop-over-sequences", lambda: mh_loop),
    wrong(EX4, "attnlib-merge-after-unflatten", lambda: mh_attnlib_merge, ("merge_heads",),
          note="attnlib's merge_heads is refused (learner population L4): the exercise would be one reshape"),
    wrong(EX4, "head-major", lambda: mh_head_major, ("sequence", "batch first", "(B, H)")),
    wrong(EX4, "no-transpose", lambda: mh_no_transpose, ("transpose", "tokens")),
    wrong(EX4, "view-without-contiguous", lambda: mh_view_no_contiguous, ("contiguous", "reshape")),
    wrong(EX4, "batch-not-divided", lambda: mh_batch_not_divided, ("B*H", "num_heads", "sequences")),
    wrong(EX4, "hard-coded-two-heads", lambda: mh_two_heads),
    wrong(EX4, "dh-major", lambda: mh_dh_major),
    wrong(EX4, "one-argument", lambda: mh_one_argument, ("num_heads", "arguments")),
    wrong(EX4, "sum-heads", lambda: mh_sum_heads),
    wrong(EX4, "split-instead-of-merge", lambda: mh_split_instead),
    wrong(EX4, "heads-reversed", lambda: mh_heads_reversed),
    wrong(EX4, "transposes-t-and-dh", lambda: mh_transpose_t_dh),
    wrong(EX4, "stops-at-4d", lambda: mh_stops_at_4d),
    wrong(EX4, "one-fake-sequence", lambda: mh_one_fake_sequence, ("merge_heads",),
          note="calls attnlib's merge_heads, now refused; mh_batch_of_one makes the same mistake by hand"),
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
    wrong(EX5, "keys-reshaped-with-tq", lambda: mha_keys_with_tq),
    wrong(EX5, "single-head", lambda: mha_one_head),
    wrong(EX5, "single-head-dh-scale", lambda: mha_one_head_dh_scale),
    wrong(EX5, "attnlib-helpers", lambda: mha_attnlib_helpers, ("attnlib's split_heads",)),
    wrong(EX5, "torch-sdpa", lambda: mha_torch_sdpa, ("scaled_dot_product_attention",)),
    wrong(EX5, "scales-q-in-place", lambda: mha_scales_q_in_place, ("in place",)),
    wrong(EX5, "divides-by-dh", lambda: _scaled(lambda e, h: e // h), ("Dh itself",)),
    wrong(EX5, "divides-by-sqrt-h", lambda: _scaled(lambda e, h: math.sqrt(h))),
    wrong(EX5, "hard-coded-two-heads", lambda: mha_two_heads),
    wrong(EX5, "keys-not-transposed", lambda: mha_keys_not_transposed),
    wrong(EX5, "features-dealt-to-heads", lambda: mha_dealt_heads),
    # Learner population L4
    wrong(EX1, "biases-of-length-H", lambda: 4 * 64 + 4 * 4),
    wrong(EX4, "batch-and-heads-swapped", lambda: mh_heads_then_batch,
          note="was once told it used another number of heads than num_heads; now gets its shape, (H, T, E)"),
    wrong(EX4, "batch-of-one", lambda: mh_batch_of_one, ("one sequence",)),
    wrong(EX4, "merged-width-dh", lambda: mh_merged_width_dh, ("rows of Dh features",)),
    wrong(EX5, "keys-as-values", lambda: mha_keys_as_values,
          note="judged correct while every probe passed k equal to v; the last probe's k and v differ"),
    wrong(EX5, "k-and-v-swapped", lambda: mha_k_and_v_swapped),
    wrong(EX5, "queries-as-values", lambda: mha_queries_as_values),
    wrong(EX5, "heads-not-merged", lambda: mha_heads_not_merged),
    wrong(EX5, "straight-both-ways", lambda: mha_straight_both_ways, ("round-trips", "transpose")),
    wrong(EX5, "view-after-transpose", lambda: mha_view_after_transpose, ("view", "contiguous", "reshape")),
]
