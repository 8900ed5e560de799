"""Notebook 09 (pretrained transformers): learner answers to its four exercises (numbered as the notebook now
orders them: mean_pool, previous_token_score for any leading axes, the group size, the cache bytes)."""

from fractions import Fraction

import numpy as np
import torch
import torch.nn.functional as F

from attnlib.induction import previous_token_score

from . import right, wrong

EXERCISES = {"check_mean_pool": 1, "check_previous_token_score": 2, "check_group_size": 3, "check_cache_bytes": 4}

EX1 = "nb09.check_mean_pool"
EX2 = "nb09.check_previous_token_score"
EX3 = "nb09.check_group_size"  # 9 query heads share 3 key/value heads: 3
EX4 = "nb09.check_cache_bytes"  # 2 * 30 * 3 * 64 * 4 = 46080


# Exercise 1: mean_pool(hidden (B, T, E), attention_mask (B, T)) -> (B, E)
def mp_einsum(hidden, attention_mask):
    m = attention_mask.to(hidden.dtype)
    return torch.einsum("bte,bt->be", hidden, m) / m.sum(dim=1, keepdim=True)


def mp_loop(hidden, attention_mask):
    return torch.stack([h[m.bool()].mean(dim=0) for h, m in zip(hidden, attention_mask)])


def mp_masked_fill(hidden, attention_mask):
    pad = attention_mask[:, :, None] == 0
    total = hidden.masked_fill(pad, 0.0).sum(dim=1)
    return total / attention_mask.sum(dim=1, keepdim=True)


def mp_unsqueeze_clamp(hidden, attention_mask):  # sentence-transformers' own mean pooling
    m = attention_mask.unsqueeze(-1).expand(hidden.size()).float()
    return torch.sum(hidden * m, 1) / torch.clamp(m.sum(1), min=1e-9)


def mp_bmm(hidden, attention_mask):
    m = attention_mask.to(hidden.dtype)
    return (m[:, None, :] @ hidden).squeeze(1) / m.sum(-1, keepdim=True)


def mp_plain_mean(hidden, attention_mask):
    return hidden.mean(dim=1)


def mp_divide_by_T(hidden, attention_mask):
    real = attention_mask[..., None].to(hidden.dtype)
    return (hidden * real).sum(dim=1) / hidden.shape[1]


def mp_divide_by_total(hidden, attention_mask):  # every real token of the batch
    real = attention_mask[..., None].to(hidden.dtype)
    return (hidden * real).sum(dim=1) / attention_mask.sum()


def mp_count_without_keepdim(hidden, attention_mask):  # (B, E) / (B,): raises, or lines B up with E
    real = attention_mask[..., None].to(hidden.dtype)
    return (hidden * real).sum(dim=1) / attention_mask.sum(dim=1)


def mp_inverted(hidden, attention_mask):  # averages the padding
    pad = (1 - attention_mask)[..., None].to(hidden.dtype)
    return (hidden * pad).sum(dim=1) / pad.sum(dim=1).clamp_min(1)


def mp_sum(hidden, attention_mask):
    return (hidden * attention_mask[..., None]).sum(dim=1)


def mp_mean_over_features(hidden, attention_mask):
    return hidden.mean(dim=2)


batch = {"attention_mask": torch.ones(5, 12, dtype=torch.long)}  # the notebook's padded batch of 5 sentences


def mp_notebook_mask(hidden, attention_mask):  # reads the notebook's batch, not its argument
    m = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
    return (hidden * m).sum(dim=1) / m.sum(dim=1)


def mp_mask_without_feature_axis(hidden, attention_mask):  # (B, T, E) * (B, T)
    return (hidden * attention_mask).sum(dim=1) / attention_mask.sum(dim=1)


def mp_normalised(hidden, attention_mask):  # section 2's length 1, not asked here
    m = attention_mask.unsqueeze(-1).to(hidden.dtype)
    return F.normalize((hidden * m).sum(dim=1) / m.sum(dim=1), dim=-1)


# Exercise 2: previous_token_score(weights (..., T, T)) -> (...), any leading axes
def pt_negative_dims(weights):
    return weights.diagonal(offset=-1, dim1=-2, dim2=-1).mean(dim=-1)


def pt_loop(weights):
    T = weights.shape[-1]
    return torch.stack([weights[..., i, i - 1] for i in range(1, T)], dim=-1).mean(dim=-1)


def pt_slice_diagonal(weights):
    return weights[..., 1:, :-1].diagonal(dim1=-2, dim2=-1).mean(dim=-1)


def pt_subdiagonal_mask(weights):
    T = weights.shape[-1]
    below = torch.diag(torch.ones(T - 1, dtype=weights.dtype), diagonal=-1)  # 1 at (i, i - 1)
    return (weights * below).sum(dim=(-2, -1)) / (T - 1)


def pt_indexing_float64(weights):
    rows = torch.arange(1, weights.shape[-1])
    return weights.double()[..., rows, rows - 1].mean(dim=-1)


def pt_flatten_leading(weights):  # every leading axis folded into one, then unfolded
    *lead, T, _ = weights.shape
    flat = weights.reshape(-1, T, T)
    return torch.stack([torch.diagonal(w, -1).mean() for w in flat]).reshape(lead)


def pt_positive_dims(weights):  # right for (H, T, T) only: dims 1 and 2 are not the last two of a 4-d tensor
    return weights.diagonal(offset=-1, dim1=1, dim2=2).mean(dim=-1)


def pt_next_token(weights):
    return weights.diagonal(offset=1, dim1=-2, dim2=-1).mean(dim=-1)


def pt_dims_swapped(weights):  # offset -1 of the transposed matrix: the token after
    return weights.diagonal(offset=-1, dim1=-1, dim2=-2).mean(dim=-1)


def pt_main_diagonal(weights):
    return weights.diagonal(dim1=-2, dim2=-1).mean(dim=-1)


def pt_divide_by_T(weights):
    return weights.diagonal(offset=-1, dim1=-2, dim2=-1).sum(dim=-1) / weights.shape[-1]


def pt_sum(weights):
    return weights.diagonal(offset=-1, dim1=-2, dim2=-1).sum(dim=-1)


def pt_mean_over_heads(weights):
    return weights.diagonal(offset=-1, dim1=-2, dim2=-1).mean(dim=0)


def pt_default_dims(weights):  # Tensor.diagonal's default dims 0 and 1
    return torch.diagonal(weights, -1).mean(dim=-1)


def pt_attnlib(weights):  # the notebook's last cell names it
    return previous_token_score(weights)


def pt_front_axes(weights):  # weights[:, i, i - 1]: (H, T, T) only
    i = torch.arange(1, weights.shape[-1])
    return weights[:, i, i - 1].mean(dim=-1)


def pt_sentence_length(weights):  # T = 16, the notebook's sentence
    i = torch.arange(1, 16)
    return weights[..., i, i - 1].mean(dim=-1)


def pt_without_last_query(weights):  # section 3's measurement, which skips [SEP]
    q = torch.arange(1, weights.shape[-1] - 1)
    return weights[..., q, q - 1].mean(dim=-1)


# Learner population L4 (notes/learners/L4)
def mp_first_n_tokens(hidden, attention_mask):  # right padding assumed: the first n tokens
    n = attention_mask.sum(1)
    return torch.stack([hidden[b, :int(n[b])].mean(0) for b in range(hidden.shape[0])])


def mp_first_n_by_arange(hidden, attention_mask):
    m = (torch.arange(hidden.shape[1]) < attention_mask.sum(1, keepdim=True)).unsqueeze(-1).to(hidden.dtype)
    return (hidden * m).sum(1) / m.sum(1)


def mp_cls(hidden, attention_mask):
    return hidden[:, 0]


def mp_max(hidden, attention_mask):
    return hidden.masked_fill(attention_mask[..., None] == 0, -1e9).amax(1)


def mp_mean_of_features_masked(hidden, attention_mask):
    return hidden.mean(-1) * attention_mask.to(hidden.dtype)


def mp_keepdim(hidden, attention_mask):
    m = attention_mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * m).sum(dim=1, keepdim=True) / m.sum(dim=1, keepdim=True)


def pt_query_0_wraps(weights):  # weights[..., 0, -1]: query 0 scores the last key
    i = torch.arange(weights.shape[-1])
    return weights[..., i, i - 1].mean(-1)


ANSWERS = [
    # Exercise 1
    right(EX1, "einsum", lambda: mp_einsum),
    right(EX1, "python-loop", lambda: mp_loop),
    right(EX1, "masked-fill", lambda: mp_masked_fill),
    right(EX1, "sentence-transformers", lambda: mp_unsqueeze_clamp),
    right(EX1, "bmm", lambda: mp_bmm),
    wrong(EX1, "plain-mean", lambda: mp_plain_mean, ("padding", "real", "mask")),
    wrong(EX1, "divided-by-T", lambda: mp_divide_by_T, ("real", "count", "number of", "T")),
    wrong(EX1, "divided-by-batch-total", lambda: mp_divide_by_total),
    wrong(EX1, "count-without-keepdim", lambda: mp_count_without_keepdim, ("keepdim", "(B, 1)", "broadcast")),
    wrong(EX1, "averages-padding", lambda: mp_inverted, ("1 for a real", "real", "invert", "padding")),
    wrong(EX1, "sum-not-mean", lambda: mp_sum),
    wrong(EX1, "mean-over-features", lambda: mp_mean_over_features),
    wrong(EX1, "notebook-mask", lambda: mp_notebook_mask),
    wrong(EX1, "mask-without-feature-axis", lambda: mp_mask_without_feature_axis),
    wrong(EX1, "normalised", lambda: mp_normalised),
    # Exercise 2
    right(EX2, "negative-dims", lambda: pt_negative_dims),
    right(EX2, "python-loop", lambda: pt_loop),
    right(EX2, "sliced-diagonal", lambda: pt_slice_diagonal),
    right(EX2, "subdiagonal-mask", lambda: pt_subdiagonal_mask),
    right(EX2, "advanced-indexing-float64", lambda: pt_indexing_float64),
    right(EX2, "flatten-leading-axes", lambda: pt_flatten_leading),
    wrong(EX2, "positive-dims-3d-only", lambda: pt_positive_dims, ("leading", "shape", "axis")),
    wrong(EX2, "next-token", lambda: pt_next_token, ("offset", "-1", "before", "previous")),
    wrong(EX2, "dims-swapped", lambda: pt_dims_swapped, ("dim1", "dim2", "swap", "transpos")),
    wrong(EX2, "main-diagonal", lambda: pt_main_diagonal, ("offset", "-1", "itself", "own")),
    wrong(EX2, "divided-by-T", lambda: pt_divide_by_T, ("T - 1", "mean", "T−1")),
    wrong(EX2, "sum-not-mean", lambda: pt_sum),
    wrong(EX2, "mean-over-heads", lambda: pt_mean_over_heads, ("(H,)", "head", "leading", "shape")),
    wrong(EX2, "default-diagonal-dims", lambda: pt_default_dims, ("dim1", "dim2", "last two", "axes")),
    wrong(EX2, "attnlib-function", lambda: pt_attnlib, ("previous_token_score", "yourself")),
    wrong(EX2, "axes-from-the-front", lambda: pt_front_axes),
    wrong(EX2, "sentence-length", lambda: pt_sentence_length),
    wrong(EX2, "last-query-left-out", lambda: pt_without_last_query),
    # Exercise 3
    right(EX3, "int", lambda: 3),
    right(EX3, "floor-division", lambda: 9 // 3),
    right(EX3, "float", lambda: 9 / 3),
    right(EX3, "numpy-int", lambda: np.int64(3)),
    right(EX3, "0d-tensor", lambda: torch.tensor(3)),
    right(EX3, "fraction", lambda: Fraction(9, 3)),
    wrong(EX3, "query-heads", lambda: 9, ("9", "share", "group", "3")),
    wrong(EX3, "inverted", lambda: 3 / 9, ("9 / 3", "Hq / Hkv", "query heads per", "invert")),
    wrong(EX3, "kv-heads", lambda: 1),
    wrong(EX3, "kv-width", lambda: 192),
    wrong(EX3, "product", lambda: 27),
    wrong(EX3, "string", lambda: "3", ("number", "string", "quote")),
    wrong(EX3, "notebook-08-self-check", lambda: 4, ("key projection",)),
    # Exercise 4
    right(EX4, "int", lambda: 46080),
    right(EX4, "expression", lambda: 2 * 30 * 3 * 64 * 4),
    right(EX4, "numpy-int", lambda: np.int64(46080)),
    right(EX4, "0d-tensor", lambda: torch.tensor(2 * 30 * 3 * 64) * 4),
    right(EX4, "float", lambda: 46080.0),
    right(EX4, "kib-times-1024", lambda: 45 * 1024),
    wrong(EX4, "keys-only", lambda: 30 * 3 * 64 * 4, ("K and V", "value", "2", "keys and values")),
    wrong(EX4, "query-heads", lambda: 2 * 30 * 9 * 64 * 4, ("key/value heads", "3", "kv", "GQA", "share")),
    wrong(EX4, "one-layer", lambda: 2 * 3 * 64 * 4, ("one layer", "every layer")),
    wrong(EX4, "numbers-not-bytes", lambda: 2 * 30 * 3 * 64, ("4", "bytes", "float32")),
    wrong(EX4, "kib", lambda: 45),
    wrong(EX4, "bits", lambda: 46080 * 8),
    wrong(EX4, "string", lambda: "46080", ("number", "string", "quote")),
    wrong(EX4, "mebibytes", lambda: 0.0439),
    wrong(EX4, "float64", lambda: 92160),
    wrong(EX4, "rounded", lambda: 46000),
    # Learner population L4
    wrong(EX1, "first-n-tokens", lambda: mp_first_n_tokens,
          note="judged correct while every probe padded on the right"),
    wrong(EX1, "first-n-by-arange", lambda: mp_first_n_by_arange),
    wrong(EX1, "cls-vector", lambda: mp_cls),
    wrong(EX1, "max-pooling", lambda: mp_max),
    wrong(EX1, "mean-of-features-masked", lambda: mp_mean_of_features_masked, ("features E",)),
    wrong(EX1, "keepdim-output", lambda: mp_keepdim),
    wrong(EX2, "query-0-wraps", lambda: pt_query_0_wraps),
    wrong(EX2, "weight-on-first-token", lambda: lambda w: w[..., 1:, 0].mean(-1)),
    wrong(EX2, "max-not-mean", lambda: lambda w: w.diagonal(offset=-1, dim1=-2, dim2=-1).amax(-1)),
    wrong(EX4, "values-full-width", lambda: 30 * (192 + 576) * 4,
          note="92160, the float64 count; the generic hint"),
    wrong(EX4, "kilobytes", lambda: 46.08),
    wrong(EX4, "megabytes", lambda: 0.046),
    wrong(EX4, "four-bit", lambda: 30 * 2 * 192 // 2, ("half a byte",)),
]
