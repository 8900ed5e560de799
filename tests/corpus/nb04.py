"""Notebook 04 (padding and causal masks): learner answers to its five exercises."""

import numpy as np
import torch

from . import right, wrong

EXERCISES = {"check_combined_shape": 1, "check_example0_mask": 2, "check_decoder_mask": 3,
             "check_safe_masked_softmax": 4, "check_cache_causal_mask": 5}

EX1 = "nb04.check_combined_shape"  # expand_key_mask(pad) & causal_mask(3), pad (3, 3): (3, 1, 3, 3)
EX2 = "nb04.check_example0_mask"  # [[1, 0, 0], [1, 1, 0], [1, 1, 0]]
EX3 = "nb04.check_decoder_mask"
EX4 = "nb04.check_safe_masked_softmax"
EX5 = "nb04.check_cache_causal_mask"
NEG_INF = float("-inf")
EXAMPLE0 = [[1, 0, 0], [1, 1, 0], [1, 1, 0]]


# Exercise 3: decoder_mask(valid_lens, T) -> bool (B, 1, T, T)
def dm_arange(valid_lens, T):
    j = torch.arange(T)
    real = j[None, None, None, :] < valid_lens[:, None, None, None]  # (B, 1, 1, Tk)
    not_future = j[None, :] <= j[:, None]  # (Tq, Tk): key j <= query i
    return real & not_future


def dm_loop(valid_lens, T):
    mask = torch.zeros(len(valid_lens), 1, T, T, dtype=torch.bool)
    for b, n in enumerate(valid_lens.tolist()):
        for i in range(T):
            for j in range(min(i + 1, n)):
                mask[b, 0, i, j] = True
    return mask


def dm_unsqueeze(valid_lens, T):
    real = torch.arange(T).unsqueeze(0) < valid_lens.unsqueeze(1)  # (B, Tk)
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
    return real.unsqueeze(1).unsqueeze(2) & causal


def dm_int_product(valid_lens, T):
    real = (torch.arange(T)[None, :] < valid_lens[:, None]).int()  # (B, Tk)
    causal = torch.ones(T, T, dtype=torch.int64).tril()
    return (real[:, None, None, :] * causal).bool()


def dm_expand(valid_lens, T):
    B = valid_lens.shape[0]
    keys = torch.arange(T).expand(B, 1, T, T)
    queries = torch.arange(T).view(T, 1).expand(B, 1, T, T)
    return (keys < valid_lens.view(B, 1, 1, 1)) & (keys <= queries)


def dm_padding_only(valid_lens, T):
    return (torch.arange(T) < valid_lens[:, None])[:, None, None, :].expand(-1, 1, T, T)


def dm_causal_only(valid_lens, T):
    return torch.ones(T, T, dtype=torch.bool).tril().expand(len(valid_lens), 1, T, T)


def dm_flipped(valid_lens, T):  # True = blocked, torch's nn.MultiheadAttention convention
    return ~dm_arange(valid_lens, T)


def dm_query_padding(valid_lens, T):  # the lengths applied to the queries' axis
    real = torch.arange(T) < valid_lens[:, None]
    return real[:, None, :, None] & torch.ones(T, T, dtype=torch.bool).tril()


def dm_triu(valid_lens, T):
    real = torch.arange(T) < valid_lens[:, None]
    return real[:, None, None, :] & torch.ones(T, T, dtype=torch.bool).triu()


def dm_no_head_axis(valid_lens, T):
    real = torch.arange(T) < valid_lens[:, None]
    return real[:, None, :] & torch.ones(T, T, dtype=torch.bool).tril()  # (B, T, T)


def dm_strict(valid_lens, T):  # a query may not see itself
    real = torch.arange(T) < valid_lens[:, None]
    return real[:, None, None, :] & torch.ones(T, T, dtype=torch.bool).tril(diagonal=-1)


def dm_float(valid_lens, T):  # 1.0 / 0.0: a float mask is added to the scores, not a bool mask
    real = (torch.arange(T) < valid_lens[:, None]).float()
    return real[:, None, None, :] * torch.ones(T, T).tril()


def dm_hides_padded_queries(valid_lens, T):
    real = torch.arange(T) < valid_lens[:, None]
    return real[:, None, None, :] & real[:, None, :, None] & torch.ones(T, T, dtype=torch.bool).tril()


# Exercise 4: safe_masked_softmax(scores, mask)
def sms_where_isnan(scores, mask):
    weights = torch.softmax(torch.where(mask, scores, NEG_INF), dim=-1)
    return torch.where(torch.isnan(weights), 0.0, weights).to(scores.dtype)


def sms_masked_fill_nan_to_num(scores, mask):  # masked_fill's backward zeroes the masked scores' gradient
    return torch.softmax(scores.masked_fill(~mask, NEG_INF), dim=-1).nan_to_num(0.0)


def sms_finfo_min_times_mask(scores, mask):
    weights = torch.softmax(scores.masked_fill(~mask, torch.finfo(scores.dtype).min), dim=-1)
    return weights * mask


def sms_manual(scores, mask):
    top = scores.masked_fill(~mask, NEG_INF).amax(dim=-1, keepdim=True)
    top = torch.where(torch.isfinite(top), top, torch.zeros_like(top))  # empty rows: any shift will do
    e = torch.exp(scores - top) * mask
    return e / e.sum(dim=-1, keepdim=True).clamp_min(torch.finfo(scores.dtype).tiny)


def sms_float32_result(scores, mask):  # computed and returned in float32, also for float16 scores
    weights = torch.softmax(scores.float().masked_fill(~mask, NEG_INF), dim=-1)
    return torch.where(mask.any(dim=-1, keepdim=True), weights, 0.0)


def sms_softmax_dtype(scores, mask):
    weights = torch.softmax(scores.masked_fill(~mask, NEG_INF), dim=-1, dtype=torch.float32)
    return torch.where(mask.any(dim=-1, keepdim=True), weights, 0.0).to(scores.dtype)


def sms_logsumexp(scores, mask):
    x = scores.masked_fill(~mask, NEG_INF)
    return torch.exp(x - x.logsumexp(dim=-1, keepdim=True)).nan_to_num(0.0)


def sms_plain(scores, mask):
    return torch.softmax(scores.masked_fill(~mask, NEG_INF), dim=-1)


def sms_additive_nan_to_num(scores, mask):  # the NaN is hidden in the forward, not in the gradient
    additive = torch.zeros_like(scores).masked_fill(~mask, NEG_INF)
    return torch.softmax(scores + additive, dim=-1).nan_to_num(0.0)


def sms_additive_where(scores, mask):  # the guard of the prompt, but after an additive -inf mask
    weights = torch.softmax(scores + torch.zeros_like(scores).masked_fill(~mask, NEG_INF), dim=-1)
    return torch.where(mask.any(dim=-1, keepdim=True), weights, 0.0)


def sms_minus_1e9(scores, mask):  # uniform 1/Tk rows in float32, refused by masked_fill in float16
    return torch.softmax(scores.masked_fill(~mask, -1e9), dim=-1)


def sms_finfo_min(scores, mask):  # no NaN, but the empty rows come out uniform
    return torch.softmax(scores.masked_fill(~mask, torch.finfo(scores.dtype).min), dim=-1)


def sms_flipped(scores, mask):
    weights = torch.softmax(scores.masked_fill(mask, NEG_INF), dim=-1)
    return torch.where((~mask).any(dim=-1, keepdim=True), weights, 0.0)


def sms_not_renormalised(scores, mask):
    return torch.softmax(scores, dim=-1) * mask


def sms_wrong_axis(scores, mask):
    weights = torch.softmax(scores.masked_fill(~mask, NEG_INF), dim=-2)
    return weights.nan_to_num(0.0)


def sms_additive_1e9_half(scores, mask):  # P3's additive mask: -1e9 becomes -inf in float16
    return torch.softmax(scores + (1 - mask.to(scores.dtype)) * -1e9, dim=-1)


# Exercise 5: cache_causal_mask(q_len, kv_len) -> bool (Tq, Tk)
def cc_arange(q_len, kv_len):
    i = torch.arange(q_len)[:, None] + (kv_len - q_len)  # the new queries' positions
    return torch.arange(kv_len)[None, :] <= i


def cc_loop(q_len, kv_len):
    return torch.tensor([[j <= i + kv_len - q_len for j in range(kv_len)] for i in range(q_len)], dtype=torch.bool)


def cc_triu_blocked(q_len, kv_len):
    return torch.ones(q_len, kv_len, dtype=torch.bool).triu(diagonal=kv_len - q_len + 1).logical_not()


def cc_torch_tril(q_len, kv_len):
    return torch.tril(torch.ones(q_len, kv_len, dtype=torch.bool), diagonal=kv_len - q_len)


def cc_flip(q_len, kv_len):  # the top-left triangle of the (Tk, Tk) mask, last Tq rows
    return torch.ones(kv_len, kv_len, dtype=torch.bool).tril()[kv_len - q_len:]


def cc_top_left(q_len, kv_len):
    return torch.ones(q_len, kv_len, dtype=torch.bool).tril()


def cc_off_by_one(q_len, kv_len):
    return torch.ones(q_len, kv_len, dtype=torch.bool).tril(diagonal=kv_len - q_len + 1)


def cc_off_by_minus_one(q_len, kv_len):
    return torch.ones(q_len, kv_len, dtype=torch.bool).tril(diagonal=kv_len - q_len - 1)


def cc_flipped(q_len, kv_len):
    return torch.ones(q_len, kv_len, dtype=torch.bool).triu(diagonal=kv_len - q_len + 1)


def cc_float(q_len, kv_len):
    return torch.ones(q_len, kv_len).tril(diagonal=kv_len - q_len)


def cc_wrong_sign(q_len, kv_len):
    return torch.ones(q_len, kv_len, dtype=torch.bool).tril(diagonal=q_len - kv_len)


def cc_transposed(q_len, kv_len):
    return torch.ones(kv_len, q_len, dtype=torch.bool).triu(diagonal=q_len - kv_len)


ANSWERS = [
    # Exercise 1
    right(EX1, "tuple", lambda: (3, 1, 3, 3)),
    right(EX1, "list", lambda: [3, 1, 3, 3]),
    right(EX1, "torch-size", lambda: torch.Size([3, 1, 3, 3])),
    right(EX1, "numpy-array", lambda: np.array([3, 1, 3, 3])),
    right(EX1, "numpy-ints", lambda: tuple(np.int64(n) for n in (3, 1, 3, 3))),
    right(EX1, "computed", lambda: tuple((torch.ones(3, 1, 1, 3, dtype=torch.bool)
                                          & torch.ones(3, 3, dtype=torch.bool).tril()).shape)),
    wrong(EX1, "no-head-axis", lambda: (3, 3, 3), ("head", "1", "singleton")),
    wrong(EX1, "key-mask-shape", lambda: (3, 1, 1, 3), ("Tq", "causal", "broadcast", "quer")),
    wrong(EX1, "causal-shape", lambda: (3, 3), ("B", "batch", "broadcast")),
    wrong(EX1, "batch-last", lambda: (1, 3, 3, 3)),
    wrong(EX1, "string", lambda: "(3, 1, 3, 3)", ("tuple", "string", "quote")),
    # Exercise 2
    right(EX2, "list-of-lists", lambda: EXAMPLE0),
    right(EX2, "bool-tensor", lambda: torch.tensor(EXAMPLE0, dtype=torch.bool)),
    right(EX2, "int-tensor", lambda: torch.tensor(EXAMPLE0)),
    right(EX2, "numpy-array", lambda: np.array(EXAMPLE0)),
    right(EX2, "tuple-of-tuples", lambda: tuple(tuple(row) for row in EXAMPLE0)),
    right(EX2, "bools", lambda: [[bool(x) for x in row] for row in EXAMPLE0]),
    right(EX2, "computed", lambda: (torch.ones(3, 3, dtype=torch.bool).tril()
                                    & (torch.arange(3) < 2))),
    wrong(EX2, "polarity-flipped", lambda: [[0, 1, 1], [0, 0, 1], [0, 0, 1]], ("True", "1 =", "may attend", "flip")),
    wrong(EX2, "padded-query-hidden", lambda: [[1, 0, 0], [1, 1, 0], [0, 0, 0]], ("query", "row", "key")),
    wrong(EX2, "causal-only", lambda: [[1, 0, 0], [1, 1, 0], [1, 1, 1]], ("pad", "t2", "column")),
    wrong(EX2, "padding-only", lambda: [[1, 1, 0], [1, 1, 0], [1, 1, 0]], ("causal", "future", "triangle")),
    wrong(EX2, "upper-triangle", lambda: [[1, 1, 0], [0, 1, 0], [0, 0, 0]], ("future", "lower", "triangle", "tril")),
    wrong(EX2, "transposed", lambda: [[1, 1, 1], [0, 1, 1], [0, 0, 0]]),
    # Exercise 3
    right(EX3, "arange-comparisons", lambda: dm_arange),
    right(EX3, "python-loop", lambda: dm_loop),
    right(EX3, "unsqueeze", lambda: dm_unsqueeze),
    right(EX3, "int-product-to-bool", lambda: dm_int_product),
    right(EX3, "expand", lambda: dm_expand),
    wrong(EX3, "padding-only", lambda: dm_padding_only, ("future", "causal")),
    wrong(EX3, "causal-only", lambda: dm_causal_only, ("pad", "valid_lens", "length")),
    wrong(EX3, "polarity-flipped", lambda: dm_flipped, ("True", "may attend", "flip", "invert", "~")),
    wrong(EX3, "lengths-on-queries", lambda: dm_query_padding, ("key", "query", "axis")),
    wrong(EX3, "triu", lambda: dm_triu, ("future", "tril", "lower", "triangle")),
    wrong(EX3, "no-head-axis", lambda: dm_no_head_axis, ("shape", "head", "(B, 1, T, T)")),
    wrong(EX3, "strict-diagonal", lambda: dm_strict),
    wrong(EX3, "float-mask", lambda: dm_float, ("bool", "dtype")),
    wrong(EX3, "hides-padded-queries", lambda: dm_hides_padded_queries, ("query", "queries", "key")),
    # Exercise 4
    right(EX4, "where-isnan", lambda: sms_where_isnan),
    right(EX4, "masked-fill-nan-to-num", lambda: sms_masked_fill_nan_to_num),
    right(EX4, "finfo-min-times-mask", lambda: sms_finfo_min_times_mask),
    right(EX4, "manual-exp", lambda: sms_manual),
    right(EX4, "float32-result", lambda: sms_float32_result,
          note="float32 weights for float16 scores: compared at float16 tolerance (issue 21)"),
    right(EX4, "softmax-dtype-float32", lambda: sms_softmax_dtype),
    right(EX4, "logsumexp", lambda: sms_logsumexp),
    wrong(EX4, "plain-softmax", lambda: sms_plain, ("NaN", "empty", "no key")),
    wrong(EX4, "additive-inf-nan-to-num", lambda: sms_additive_nan_to_num, ("additive",)),
    wrong(EX4, "additive-inf-where-guard", lambda: sms_additive_where, ("additive",)),
    wrong(EX4, "fill-minus-1e9", lambda: sms_minus_1e9, ("1/Tk", "uniform", "float16", "-1e9", "zero")),
    wrong(EX4, "fill-finfo-min", lambda: sms_finfo_min, ("1/Tk", "uniform", "zero", "empty")),
    wrong(EX4, "polarity-flipped", lambda: sms_flipped, ("True", "may attend", "~mask", "flip", "invert")),
    wrong(EX4, "not-renormalised", lambda: sms_not_renormalised, ("renormal", "normalis", "normaliz", "divide")),
    wrong(EX4, "wrong-axis", lambda: sms_wrong_axis, ("dim", "axis", "keys")),
    wrong(EX4, "additive-1e9", lambda: sms_additive_1e9_half, ("float16", "-1e9", "inf", "1/Tk", "uniform")),
    # Exercise 5
    right(EX5, "arange", lambda: cc_arange),
    right(EX5, "python-loop", lambda: cc_loop),
    right(EX5, "not-triu", lambda: cc_triu_blocked),
    right(EX5, "torch-tril", lambda: cc_torch_tril),
    right(EX5, "last-rows-of-square", lambda: cc_flip),
    wrong(EX5, "top-left", lambda: cc_top_left, ("bottom", "right", "cache", "diagonal", "Tk - Tq")),
    wrong(EX5, "off-by-one-up", lambda: cc_off_by_one, ("diagonal", "future", "one", "Tk - Tq")),
    wrong(EX5, "off-by-one-down", lambda: cc_off_by_minus_one, ("diagonal", "itself", "own", "one", "Tk - Tq")),
    wrong(EX5, "polarity-flipped", lambda: cc_flipped, ("True", "may attend", "flip", "invert")),
    wrong(EX5, "float", lambda: cc_float, ("bool", "dtype")),
    wrong(EX5, "wrong-sign", lambda: cc_wrong_sign),
    wrong(EX5, "transposed", lambda: cc_transposed, ("shape", "(Tq, Tk)", "transpos")),
]
