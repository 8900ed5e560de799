"""Notebook 04 (padding and causal masks): learner answers to its five exercises."""

import numpy as np
import torch

import attnlib

from . import right, wrong

EXERCISES = {"check_sequence1_mask": 1, "check_head_broadcast": 2, "check_decoder_mask": 3,
             "check_torch_masks": 4, "check_safe_masked_softmax": 5}

EX1 = "nb04.check_sequence1_mask"  # combined[1]: "dogs bark" and two pads, under the causal mask
EX2 = "nb04.check_head_broadcast"  # ~pad[:, None, :] on (B, H, Tq, Tk) = (2, 2, 4, 4): sequence 0, heads 0 and 1
EX3 = "nb04.check_decoder_mask"
EX4 = "nb04.check_torch_masks"
EX5 = "nb04.check_safe_masked_softmax"
NEG_INF = float("-inf")
SEQ1 = [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 0, 0], [1, 1, 0, 0]]


# Exercise 3: decoder_mask(attention_mask) -> bool (B, 1, T, T), from Hugging Face's 0/1 ints
def dm_compare(attention_mask):
    T = attention_mask.shape[-1]
    real = attention_mask == 1
    return real[:, None, None, :] & torch.ones(T, T, dtype=torch.bool).tril()


def dm_bool_unsqueeze(attention_mask):
    T = attention_mask.size(1)
    keys = attention_mask.bool().unsqueeze(1).unsqueeze(2)  # (B, 1, 1, Tk)
    return keys & torch.tril(torch.ones(T, T)).bool()


def dm_arange(attention_mask):
    T = attention_mask.shape[1]
    j = torch.arange(T)
    return (attention_mask[:, None, None, :] > 0) & (j[None, :] <= j[:, None])


def dm_loop(attention_mask):
    B, T = attention_mask.shape
    mask = torch.zeros(B, 1, T, T, dtype=torch.bool)
    for b in range(B):
        for i in range(T):
            for j in range(i + 1):
                mask[b, 0, i, j] = bool(attention_mask[b, j] == 1)
    return mask


def dm_int_product(attention_mask):
    T = attention_mask.shape[-1]
    return (attention_mask[:, None, None, :] * torch.ones(T, T, dtype=torch.long).tril()).bool()


def dm_expand(attention_mask):
    B, T = attention_mask.shape
    keys = attention_mask.view(B, 1, 1, T).expand(B, 1, T, T) == 1
    return keys & ~torch.ones(T, T, dtype=torch.bool).triu(1)


def dm_lengths(attention_mask):  # right padding only: the first n positions taken as real
    T = attention_mask.shape[-1]
    n = attention_mask.sum(dim=1)
    real = torch.arange(T)[None, :] < n[:, None]
    return real[:, None, None, :] & torch.ones(T, T, dtype=torch.bool).tril()


def dm_queries(attention_mask):  # the padding on the queries' axis
    T = attention_mask.shape[-1]
    return (attention_mask == 1)[:, None, :, None] & torch.ones(T, T, dtype=torch.bool).tril()


def dm_both_axes(attention_mask):  # padded rows hidden as well as padded columns
    T = attention_mask.shape[-1]
    real = attention_mask == 1
    return real[:, None, :, None] & real[:, None, None, :] & torch.ones(T, T, dtype=torch.bool).tril()


def dm_blocked(attention_mask):  # True = blocked, nn.MultiheadAttention's polarity
    return ~dm_compare(attention_mask)


def dm_hf_flipped(attention_mask):  # 1 read as padding
    T = attention_mask.shape[-1]
    return (attention_mask == 0)[:, None, None, :] & torch.ones(T, T, dtype=torch.bool).tril()


def dm_or(attention_mask):
    T = attention_mask.shape[-1]
    return (attention_mask == 1)[:, None, None, :] | torch.ones(T, T, dtype=torch.bool).tril()


def dm_no_head_axis(attention_mask):
    T = attention_mask.shape[-1]
    return (attention_mask == 1)[:, None, :] & torch.ones(T, T, dtype=torch.bool).tril()  # (B, T, T)


def dm_no_axes(attention_mask):  # (B, Tk) & (Tq, Tk): broadcasts only when B == T
    T = attention_mask.shape[-1]
    return (attention_mask == 1) & torch.ones(T, T, dtype=torch.bool).tril()


def dm_triu(attention_mask):
    T = attention_mask.shape[-1]
    return (attention_mask == 1)[:, None, None, :] & torch.ones(T, T, dtype=torch.bool).triu()


def dm_strict(attention_mask):  # a query may not see itself
    T = attention_mask.shape[-1]
    return (attention_mask == 1)[:, None, None, :] & torch.ones(T, T, dtype=torch.bool).tril(-1)


def dm_float(attention_mask):  # 1.0 / 0.0: a float mask is added to the scores
    T = attention_mask.shape[-1]
    return attention_mask[:, None, None, :].float() * torch.ones(T, T).tril()


def dm_float_tril(attention_mask):  # torch.tril(torch.ones(T, T)) is float: & refuses it
    T = attention_mask.shape[-1]
    return (attention_mask == 1)[:, None, None, :] & torch.tril(torch.ones(T, T))


def dm_padding_only(attention_mask):  # reader r39: the key mask alone, no causal part
    T = attention_mask.shape[-1]
    return (attention_mask == 1)[:, None, None, :].expand(-1, 1, T, T)


def dm_causal_only(attention_mask):
    T = attention_mask.shape[-1]
    return torch.ones(T, T, dtype=torch.bool).tril()


# Exercise 4: torch_masks(attention_mask) -> (key_padding_mask (B, T), attn_mask (T, T)), True = blocked
def tm_compare(attention_mask):
    T = attention_mask.shape[-1]
    return attention_mask == 0, torch.ones(T, T, dtype=torch.bool).triu(diagonal=1)


def tm_logical_not(attention_mask):
    T = attention_mask.shape[1]
    return attention_mask.logical_not(), ~torch.tril(torch.ones(T, T, dtype=torch.bool))


def tm_arange(attention_mask):
    j = torch.arange(attention_mask.shape[-1])
    return ~attention_mask.bool(), j[None, :] > j[:, None]


def tm_loop(attention_mask):
    B, T = attention_mask.shape
    kpm = torch.tensor([[attention_mask[b, t].item() != 1 for t in range(T)] for b in range(B)])
    future = torch.tensor([[j > i for j in range(T)] for i in range(T)])
    return kpm, future


def tm_lt(attention_mask):
    T = attention_mask.shape[-1]
    return attention_mask < 1, torch.triu(torch.ones(T, T), 1) == 1


def tm_float_tril(attention_mask):  # ~ on a float mask
    T = attention_mask.shape[-1]
    return attention_mask == 0, ~torch.tril(torch.ones(T, T))


def tm_attnlib_polarity(attention_mask):  # both masks True = may attend
    T = attention_mask.shape[-1]
    return attention_mask == 1, torch.ones(T, T, dtype=torch.bool).tril()


def tm_attn_not_inverted(attention_mask):
    T = attention_mask.shape[-1]
    return attention_mask == 0, torch.ones(T, T, dtype=torch.bool).tril()


def tm_padding_not_inverted(attention_mask):
    T = attention_mask.shape[-1]
    return attention_mask.bool(), torch.ones(T, T, dtype=torch.bool).triu(1)


def tm_diagonal_blocked(attention_mask):
    T = attention_mask.shape[-1]
    return attention_mask == 0, torch.ones(T, T, dtype=torch.bool).triu()


def tm_swapped(attention_mask):
    T = attention_mask.shape[-1]
    return torch.ones(T, T, dtype=torch.bool).triu(1), attention_mask == 0


def tm_float_additive(attention_mask):  # accepted by the module, but not the boolean form asked for
    T = attention_mask.shape[-1]
    return attention_mask == 0, torch.zeros(T, T).masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), NEG_INF)


def tm_int_padding(attention_mask):  # 1 - mask: the right numbers, as integers
    T = attention_mask.shape[-1]
    return 1 - attention_mask, torch.ones(T, T, dtype=torch.bool).triu(1)


def tm_key_mask_axes(attention_mask):
    T = attention_mask.shape[-1]
    return (attention_mask == 0)[:, None, None, :], torch.ones(T, T, dtype=torch.bool).triu(1)


def tm_lengths(attention_mask):  # right padding only
    T = attention_mask.shape[-1]
    n = attention_mask.sum(-1)
    return torch.arange(T)[None, :] >= n[:, None], torch.ones(T, T, dtype=torch.bool).triu(1)


def tm_one_mask(attention_mask):  # the combined mask, blocked polarity: the module takes two
    T = attention_mask.shape[-1]
    return (attention_mask == 0)[:, None, None, :] | torch.ones(T, T, dtype=torch.bool).triu(1)


# Exercise 5: safe_masked_softmax(scores, mask)
def sms_where_isnan(scores, mask):
    weights = torch.softmax(torch.where(mask, scores, NEG_INF), dim=-1)
    return torch.where(torch.isnan(weights), 0.0, weights).to(scores.dtype)


def sms_masked_fill_nan_to_num(scores, mask):  # masked_fill's backward zeroes the masked scores' gradient
    return torch.softmax(scores.masked_fill(~mask, NEG_INF), dim=-1).nan_to_num(0.0)


def sms_finfo_min_times_mask(scores, mask):
    weights = torch.softmax(scores.masked_fill(~mask, torch.finfo(scores.dtype).min), dim=-1)
    return weights * mask


def sms_manual(scores, mask):  # exp of a masked score far above the allowed ones overflows: inf * 0 is NaN
    top = scores.masked_fill(~mask, NEG_INF).amax(dim=-1, keepdim=True)
    top = torch.where(torch.isfinite(top), top, torch.zeros_like(top))  # empty rows: any shift will do
    e = torch.exp(scores - top) * mask
    return e / e.sum(dim=-1, keepdim=True).clamp_min(torch.finfo(scores.dtype).tiny)


def sms_manual_masked_first(scores, mask):  # the masked scores never reach exp (L1 #412)
    s = scores.masked_fill(~mask, NEG_INF)
    m = s.amax(dim=-1, keepdim=True)
    e = torch.exp(s - torch.where(torch.isfinite(m), m, torch.zeros_like(m)))
    d = e.sum(dim=-1, keepdim=True)
    return e / torch.where(d > 0, d, torch.ones_like(d))


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


def sms_minus_15_guarded(scores, mask):  # reader r39: masked keys keep about 2e-7, not the 0 the prompt asks
    weights = torch.softmax(scores.masked_fill(~mask, -15.0), dim=-1)
    return torch.where(mask.any(dim=-1, keepdim=True), weights, 0.0)


def sms_minus_1e9(scores, mask):  # uniform 1/Tk rows in float32, refused by masked_fill in float16
    return torch.softmax(scores.masked_fill(~mask, -1e9), dim=-1)


def sms_minus_1e9_guarded(scores, mask):  # right in float32, refused by masked_fill in float16
    weights = torch.softmax(scores.masked_fill(~mask, -1e9), dim=-1)
    return torch.where(mask.any(dim=-1, keepdim=True), weights, 0.0)


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


def sms_additive_1e9_half(scores, mask):  # the additive mask: -1e9 becomes -inf in float16
    return torch.softmax(scores + (1 - mask.to(scores.dtype)) * -1e9, dim=-1)


# Answers of learner population L1 (notes/learners/L1): each a case its report flagged
CAUSAL = torch.ones(4, 4, dtype=torch.bool).tril()  # the notebook's global causal mask, T = 4


def dm_global_causal(attention_mask):  # L1 #379: the notebook's 4 x 4 causal mask on every input
    return attention_mask.bool()[:, None, None, :] & CAUSAL


def dm_t_from_batch_axis(attention_mask):  # L1 #453
    T = attention_mask.shape[0]
    return attention_mask.bool()[:, None, None, :] & torch.ones(T, T, dtype=torch.bool).tril()


def dm_int_mask(attention_mask):  # L1 #378: 0/1 integers, not booleans
    T = attention_mask.shape[-1]
    return attention_mask[:, None, None, :] * torch.ones(T, T, dtype=torch.long).tril()


def dm_uint8(attention_mask):  # L1 #454
    T = attention_mask.shape[-1]
    return (attention_mask.bool()[:, None, None, :] & torch.ones(T, T, dtype=torch.bool).tril()).byte()


def dm_additive_float(attention_mask):  # L1 #386: 0/-inf, the additive form
    T = attention_mask.shape[-1]
    m = attention_mask.bool()[:, None, None, :] & torch.ones(T, T, dtype=torch.bool).tril()
    return torch.zeros(m.shape).masked_fill(~m, NEG_INF)


def dm_expand_key_mask(attention_mask):  # L1 #370: the notebook's own axis helper, then the triangle by hand
    T = attention_mask.shape[-1]
    return attnlib.expand_key_mask(attention_mask == 1) & torch.ones(T, T, dtype=torch.bool).tril()


def dm_attnlib_helpers(attention_mask):  # L1 #364: attnlib's own converters
    return attnlib.from_hf_attention_mask(attention_mask) & attnlib.causal_mask(attention_mask.shape[-1])


def sms_attnlib(scores, mask):  # L1 #414
    return attnlib.masked_softmax(scores, mask)


def sms_zeroed_scores(scores, mask):  # L1 #427: a masked score of 0 still gets e^0
    return (scores * mask).softmax(dim=-1) * mask.any(-1, keepdim=True)


def sms_renormalised_0_over_0(scores, mask):  # L1 #429: no -inf anywhere, the empty rows are 0/0
    w = scores.softmax(dim=-1) * mask
    return w / w.sum(dim=-1, keepdim=True)


def sms_max_over_masked_keys(scores, mask):  # L1 #430: a masked key's large score makes the allowed ones underflow
    m = scores.amax(-1, keepdim=True)
    e = torch.where(mask, torch.exp(scores - m), torch.zeros_like(scores))
    d = e.sum(-1, keepdim=True)
    return e / torch.where(d > 0, d, torch.ones_like(d))


def sms_any_without_keepdim(scores, mask):  # L1 #457: the guard lines up with the keys
    s = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    return s.softmax(-1) * mask * mask.any(-1)


# Answers of learner population L7 (notes/learners/L7): each a case its report flagged
PAD = torch.tensor([[True] * 4, [True, True, False, False]])  # the notebook's pad (B = 2, T = 4)
COMBINED = PAD[:, None, :] & torch.ones(4, 4, dtype=torch.bool).tril()  # the cell above Exercise 1


def dm_notebook_pad(attention_mask):  # L7 #63: the notebook's pad, not the argument
    T = attention_mask.shape[1]
    return PAD[:, None, None, :] & torch.ones(T, T, dtype=torch.bool).tril()


def dm_batch_second(attention_mask):  # L7 #65: (1, B, T, T)
    T = attention_mask.shape[1]
    return ((attention_mask == 1)[:, None, :] & torch.ones(T, T, dtype=torch.bool).tril())[None]


def dm_causal_inverted(attention_mask):  # L7 #236: True above the diagonal
    T = attention_mask.shape[1]
    return (attention_mask == 1)[:, None, None, :] & (torch.ones(T, T).tril() == 0)


def tm_t_from_batch_axis(attention_mask):  # L7 #85
    T = attention_mask.shape[0]
    return attention_mask == 0, torch.ones(T, T, dtype=torch.bool).triu(1)


def tm_hard_coded_t(attention_mask):  # L7 #86: the running example's T = 4
    return attention_mask == 0, torch.ones(4, 4, dtype=torch.bool).triu(1)


def tm_next_key_unblocked(attention_mask):  # L7 #89: query i sees key i + 1
    T = attention_mask.shape[1]
    return attention_mask == 0, torch.ones(T, T, dtype=torch.bool).triu(2)


def sms_float32_min(scores, mask):  # L7 #103: float32's min does not fit in float16
    w = scores.masked_fill(~mask, torch.finfo(torch.float32).min).softmax(dim=-1)
    return w.masked_fill(~mask, 0.0)


def sms_floor_1e_12(scores, mask):  # L7 #232: 1e-12 is 0 in float16, so the empty rows are 0/0 there
    s = scores.masked_fill(~mask, float("-inf"))
    m = s.amax(-1, keepdim=True).nan_to_num(0.0, neginf=0.0)
    e = torch.exp(s - m)
    return e / e.sum(-1, keepdim=True).clamp_min(1e-12)


ANSWERS = [
    # Exercise 1
    right(EX1, "list-of-lists", lambda: SEQ1),
    right(EX1, "bool-tensor", lambda: torch.tensor(SEQ1, dtype=torch.bool), note="written by hand, as booleans"),
    right(EX1, "int-tensor", lambda: torch.tensor(SEQ1)),
    right(EX1, "numpy-array", lambda: np.array(SEQ1)),
    right(EX1, "tuple-of-tuples", lambda: tuple(tuple(row) for row in SEQ1)),
    right(EX1, "bools", lambda: [[bool(x) for x in row] for row in SEQ1]),
    right(EX1, "computed", lambda: torch.ones(4, 4, dtype=torch.bool).tril() & (torch.arange(4) < 2),
          note="worked out with torch rather than by hand: the pattern is the learner's own"),
    wrong(EX1, "polarity-flipped", lambda: [[1 - x for x in row] for row in SEQ1], ("True", "1 =", "may attend")),
    wrong(EX1, "padded-queries-hidden", lambda: [[1, 0, 0, 0], [1, 1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]],
          ("quer", "row", "key")),
    wrong(EX1, "causal-only", lambda: [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]]),
    wrong(EX1, "padding-only", lambda: [[1, 1, 0, 0]] * 4),
    wrong(EX1, "or", lambda: [[1, 1, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]], ("|", "&", "both")),
    wrong(EX1, "upper-triangle", lambda: [[1, 1, 0, 0], [0, 1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]),
    wrong(EX1, "no-diagonal", lambda: [[0, 0, 0, 0], [1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 0, 0]], ("itself",)),
    wrong(EX1, "all-real", lambda: [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0]]),
    # Exercise 2 (two rows: the keys sequence 0 may attend to in head 0, and in head 1)
    right(EX2, "lists", lambda: ([1, 1, 1, 1], [1, 1, 0, 0]), star=True),
    right(EX2, "tuples", lambda: ((1, 1, 1, 1), (1, 1, 0, 0)), star=True),
    right(EX2, "booleans", lambda: ([True, True, True, True], [True, True, False, False]), star=True),
    right(EX2, "tensors", lambda: (torch.tensor([1, 1, 1, 1]), torch.tensor([True, True, False, False])), star=True),
    right(EX2, "numpy", lambda: (np.ones(4, dtype=int), np.array([1.0, 1.0, 0.0, 0.0])), star=True),
    right(EX2, "computed-rows", lambda: tuple(
        torch.zeros(2, 2, 4, 4).masked_fill(~torch.tensor([[True] * 4, [True, True, False, False]])[:, None, :],
                                            NEG_INF)[0, h, 0].isfinite().int().tolist() for h in range(2)), star=True),
    wrong(EX2, "as-if-expanded", lambda: ([1, 1, 1, 1], [1, 1, 1, 1]), ("right", "line", "axis"), star=True,
          note="each sequence's own padding in every head: what (B, 1, 1, Tk) would give"),
    wrong(EX2, "heads-swapped", lambda: ([1, 1, 0, 0], [1, 1, 1, 1]), star=True),
    wrong(EX2, "sequence-1-everywhere", lambda: ([1, 1, 0, 0], [1, 1, 0, 0]), star=True),
    wrong(EX2, "blocked-as-1", lambda: ([0, 0, 0, 0], [0, 0, 1, 1]), ("may attend", "hidden"), star=True),
    wrong(EX2, "causal-rows", lambda: ([1, 0, 0, 0], [1, 0, 0, 0]), star=True),
    wrong(EX2, "one-head-mixed", lambda: ([1, 1, 1, 0], [1, 1, 0, 0]), ("right", "row"), star=True),
    wrong(EX2, "strings", lambda: ("[1, 1, 1, 1]", "[1, 1, 0, 0]"), ("list", "string", "quote"), star=True),
    # Exercise 3
    right(EX3, "compare-with-1", lambda: dm_compare),
    right(EX3, "bool-unsqueeze", lambda: dm_bool_unsqueeze),
    right(EX3, "arange-comparisons", lambda: dm_arange),
    right(EX3, "python-loop", lambda: dm_loop),
    right(EX3, "int-product-to-bool", lambda: dm_int_product),
    right(EX3, "expand-not-triu", lambda: dm_expand),
    wrong(EX3, "lengths", lambda: dm_lengths, ("left", "first n", "length")),
    wrong(EX3, "padding-on-queries", lambda: dm_queries, ("queries", "rows", "keys")),
    wrong(EX3, "padding-on-both-axes", lambda: dm_both_axes, ("rows", "queries", "keys")),
    wrong(EX3, "polarity-blocked", lambda: dm_blocked, ("True", "may attend", "blocked")),
    wrong(EX3, "hf-polarity", lambda: dm_hf_flipped, ("1", "real token")),
    wrong(EX3, "or", lambda: dm_or, ("|", "&", "both")),
    wrong(EX3, "no-head-axis", lambda: dm_no_head_axis, ("head", "(B, 1, Tq, Tk)")),
    wrong(EX3, "no-axes", lambda: dm_no_axes, ("axes", "(B, 1, 1, Tk)", "broadcast")),
    wrong(EX3, "triu", lambda: dm_triu, ("wrong way", "below", "diagonal")),
    wrong(EX3, "strict-diagonal", lambda: dm_strict),
    wrong(EX3, "float-mask", lambda: dm_float, ("bool", "dtype")),
    wrong(EX3, "causal-only", lambda: dm_causal_only, ("key mask", "real tokens", "pad")),
    wrong(EX3, "float-tril", lambda: dm_float_tril),
    # Exercise 4
    right(EX4, "compare-and-triu", lambda: tm_compare),
    right(EX4, "logical-not", lambda: tm_logical_not),
    right(EX4, "arange", lambda: tm_arange),
    right(EX4, "python-loops", lambda: tm_loop),
    right(EX4, "less-than-one", lambda: tm_lt),
    wrong(EX4, "attnlib-polarity", lambda: tm_attnlib_polarity, ("polarity", "blocked")),
    wrong(EX4, "attn-mask-not-inverted", lambda: tm_attn_not_inverted, ("attn_mask", "future", "diagonal")),
    wrong(EX4, "padding-not-inverted", lambda: tm_padding_not_inverted, ("key_padding_mask", "real tokens")),
    wrong(EX4, "diagonal-blocked", lambda: tm_diagonal_blocked),
    wrong(EX4, "swapped", lambda: tm_swapped, note="also L1 #400"),
    wrong(EX4, "float-additive", lambda: tm_float_additive, ("float", "bool")),
    wrong(EX4, "int-padding", lambda: tm_int_padding, ("dtype", "bool")),
    wrong(EX4, "key-mask-axes", lambda: tm_key_mask_axes),
    wrong(EX4, "lengths", lambda: tm_lengths, ("left", "number of 1s")),
    wrong(EX4, "one-mask", lambda: tm_one_mask, ("two masks", "pair")),
    wrong(EX4, "float-tril", lambda: tm_float_tril),
    # Exercise 5
    right(EX5, "where-isnan", lambda: sms_where_isnan),
    right(EX5, "masked-fill-nan-to-num", lambda: sms_masked_fill_nan_to_num),
    right(EX5, "finfo-min-times-mask", lambda: sms_finfo_min_times_mask),
    wrong(EX5, "manual-exp", lambda: sms_manual, ("overflow", "inf * 0"),
          note="right until a masked key scores far above the allowed ones (in float16, by 12): exp(inf) * 0"),
    right(EX5, "float32-result", lambda: sms_float32_result,
          note="float32 weights for float16 scores: compared at float16 tolerance"),
    right(EX5, "softmax-dtype-float32", lambda: sms_softmax_dtype),
    right(EX5, "logsumexp", lambda: sms_logsumexp),
    wrong(EX5, "plain-softmax", lambda: sms_plain, ("NaN", "no key")),
    wrong(EX5, "additive-inf-nan-to-num", lambda: sms_additive_nan_to_num, ("additive",)),
    wrong(EX5, "additive-inf-where-guard", lambda: sms_additive_where, ("additive",)),
    wrong(EX5, "fill-minus-1e9", lambda: sms_minus_1e9, ("1/Tk", "uniform", "-1e9")),
    wrong(EX5, "fill-minus-1e9-guarded", lambda: sms_minus_1e9_guarded, ("float16", "-1e9")),
    wrong(EX5, "fill-finfo-min", lambda: sms_finfo_min, ("1/Tk", "uniform", "finfo")),
    wrong(EX5, "polarity-flipped", lambda: sms_flipped, ("True", "may attend", "~mask")),
    wrong(EX5, "not-renormalised", lambda: sms_not_renormalised, ("renormal", "after the softmax")),
    wrong(EX5, "wrong-axis", lambda: sms_wrong_axis, ("dim", "axis", "keys")),
    wrong(EX5, "additive-1e9", lambda: sms_additive_1e9_half, ("float16", "-1e9", "inf", "1/Tk", "uniform")),
    # Learner population L1 (report_L1.md, sections 03 and 04)
    wrong(EX1, "digit-strings", lambda: ["1000", "1100", "1100", "1100"], ("four 0/1 values",),
          note="L1 #326: 'without quotes' would lead to the numbers 1000, 1100, which are no rows either"),
    wrong(EX2, "digit-strings", lambda: ("1111", "1100"), ("four 0/1 values",), star=True, note="L1 #349"),
    wrong(EX2, "head-1-inverted", lambda: ([1, 1, 1, 1], [0, 0, 1, 1]), ("1 = may attend",), star=True,
          note="L1 #355: the right heads, head 1's row with 1 at the padding"),
    wrong(EX3, "global-causal", lambda: dm_global_causal, ("causal part is (4, 4)",)),
    wrong(EX3, "T-from-batch-axis", lambda: dm_t_from_batch_axis, ("causal part is (3, 3)",)),
    wrong(EX3, "int-mask", lambda: dm_int_mask, ("comparisons", "keep the result bool")),
    wrong(EX3, "uint8", lambda: dm_uint8, ("keep the result bool",)),
    wrong(EX3, "additive-float", lambda: dm_additive_float, ("0 and -inf",)),
    wrong(EX3, "attnlib-helpers", lambda: dm_attnlib_helpers, ("from_hf_attention_mask",)),
    right(EX3, "expand-key-mask", lambda: dm_expand_key_mask, note="the notebook's axis helper is allowed"),
    wrong(EX5, "attnlib-masked-softmax", lambda: sms_attnlib, ("masked_softmax",)),
    wrong(EX5, "zeroed-scores", lambda: sms_zeroed_scores, ("e^0",)),
    wrong(EX5, "renormalised-0-over-0", lambda: sms_renormalised_0_over_0, ("row sum of 0",)),
    wrong(EX5, "max-over-masked-keys", lambda: sms_max_over_masked_keys, ("maximum over the allowed keys",)),
    wrong(EX5, "any-without-keepdim", lambda: sms_any_without_keepdim, ("keepdim",)),
    right(EX5, "manual-exp-masked-first", lambda: sms_manual_masked_first),
    # Learner population L7 (report_L7.md, section 04)
    wrong(EX1, "combined-row", lambda: COMBINED[1], ("predict",), note="L7 #252: the cell above computes combined"),
    wrong(EX1, "transposed", lambda: [[1, 1, 1, 1], [0, 1, 1, 1], [0, 0, 0, 0], [0, 0, 0, 0]], ("row = query",),
          note="L7 #13"),
    right(EX1, "int-tensor-by-hand", lambda: torch.tensor(SEQ1, dtype=torch.int64), note="L7 #3"),
    wrong(EX3, "notebook-pad", lambda: dm_notebook_pad, note="L7 #63"),
    wrong(EX3, "batch-axis-second", lambda: dm_batch_second, note="L7 #65"),
    wrong(EX3, "causal-part-inverted", lambda: dm_causal_inverted, note="L7 #236"),
    wrong(EX4, "T-from-batch-axis", lambda: tm_t_from_batch_axis, note="L7 #85"),
    wrong(EX4, "hard-coded-T", lambda: tm_hard_coded_t, note="L7 #86"),
    wrong(EX4, "next-key-unblocked", lambda: tm_next_key_unblocked, note="L7 #89"),
    wrong(EX5, "float32-min-in-float16", lambda: sms_float32_min, ("fill", "finfo.min"), note="L7 #103"),
    wrong(EX5, "floor-1e-12-in-float16", lambda: sms_floor_1e_12, note="L7 #232"),
    wrong(EX5, "fill-minus-15-guarded", lambda: sms_minus_15_guarded, ("not 0", "exp is 0")),
    wrong(EX3, "padding-only", lambda: dm_padding_only, ("causal", "future")),
]
