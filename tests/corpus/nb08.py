"""Notebook 08 (efficient attention): learner answers to its four exercises."""

from fractions import Fraction

import numpy as np
import torch

from attnlib import causal_mask

from . import right, wrong

EXERCISES = {"check_weights_memory": 1, "check_online_update": 2, "check_cache_keys_seen": 3, "check_expand_kv": 4}

EX1 = "nb08.check_weights_memory"  # (1, 8, 8192, 8192) float32 weights: 2048 MiB
EX2 = "nb08.check_online_update"
EX3 = "nb08.check_cache_keys_seen"  # 5 cached + 3 new tokens, first new query: 6 keys
EX4 = "nb08.check_expand_kv"


# Exercise 2: online_update(m, s, x) -> (m_new, s_new), 0-d tensors
def ou_python_max(m, s, x):
    m_new = max(m, x)
    return m_new, s * torch.exp(m - m_new) + torch.exp(x - m_new)


def ou_if_else(m, s, x):
    if x > m:  # x is the new maximum: rescale the old sum, the new term is exp(0) = 1
        return x, s * torch.exp(m - x) + 1.0
    return m, s + torch.exp(x - m)


def ou_where(m, s, x):
    m_new = torch.where(x > m, x, m)
    return m_new, s * (m - m_new).exp() + (x - m_new).exp()


def ou_logaddexp(m, s, x):
    m_new = torch.maximum(m, x)
    return m_new, torch.exp(torch.logaddexp(torch.log(s) + m, x) - m_new)


def ou_float64(m, s, x):
    m64, s64, x64 = m.double(), s.double(), x.double()
    m_new = torch.maximum(m64, x64)
    s_new = s64 * torch.exp(m64 - m_new) + torch.exp(x64 - m_new)
    return m_new.to(m.dtype), s_new.to(s.dtype)


def ou_divide_by_exp(m, s, x):  # exact algebra, but exp(m) overflows float32 once m > 88
    m_new = torch.maximum(m, x)
    return m_new, (s * torch.exp(m) + torch.exp(x)) / torch.exp(m_new)


def ou_no_rescale(m, s, x):
    m_new = torch.maximum(m, x)
    return m_new, s + torch.exp(x - m_new)


def ou_rescale_inverted(m, s, x):
    m_new = torch.maximum(m, x)
    return m_new, s * torch.exp(m_new - m) + torch.exp(x - m_new)


def ou_new_term_old_max(m, s, x):
    m_new = torch.maximum(m, x)
    return m_new, s * torch.exp(m - m_new) + torch.exp(x - m)


def ou_max_is_x(m, s, x):  # takes every new score as the new maximum
    return x, s * torch.exp(m - x) + 1.0


def ou_swapped_return(m, s, x):
    m_new = torch.maximum(m, x)
    return s * torch.exp(m - m_new) + torch.exp(x - m_new), m_new


def ou_no_max(m, s, x):  # a plain running sum of exp(x)
    return torch.maximum(m, x), s + torch.exp(x)


def ou_minimum(m, s, x):
    m_new = torch.minimum(m, x)
    return m_new, s * torch.exp(m - m_new) + torch.exp(x - m_new)


# Exercise 4: expand_kv(kv, num_query_heads), (B, Hkv, T, Dh) -> (B, Hq, T, Dh)
def ek_expand_reshape(kv, num_query_heads):  # Hugging Face's repeat_kv
    b, hkv, t, dh = kv.shape
    g = num_query_heads // hkv
    return kv[:, :, None, :, :].expand(b, hkv, g, t, dh).reshape(b, num_query_heads, t, dh)


def ek_index(kv, num_query_heads):
    g = num_query_heads // kv.shape[1]
    return kv[:, torch.arange(num_query_heads) // g]


def ek_index_select(kv, num_query_heads):
    g = num_query_heads // kv.size(1)
    return kv.index_select(1, torch.arange(num_query_heads).div(g, rounding_mode="floor"))


def ek_cat_loop(kv, num_query_heads):
    g = num_query_heads // kv.shape[1]
    return torch.cat([kv[:, j:j + 1] for j in range(kv.shape[1]) for _ in range(g)], dim=1)


def ek_stack_flatten(kv, num_query_heads):
    g = num_query_heads // kv.shape[1]
    return torch.stack([kv] * g, dim=2).flatten(1, 2)


def ek_repeat_tiled(kv, num_query_heads):  # tiles 0, 1, 0, 1, ...: the groups are not consecutive
    return kv.repeat(1, num_query_heads // kv.shape[1], 1, 1)


def ek_index_modulo(kv, num_query_heads):
    return kv[:, torch.arange(num_query_heads) % kv.shape[1]]


def ek_repeat_hkv_times(kv, num_query_heads):  # repeats Hkv times, not g = Hq / Hkv times
    return kv.repeat_interleave(kv.shape[1], dim=1)


def ek_wrong_dim(kv, num_query_heads):  # repeats along T
    return kv.repeat_interleave(num_query_heads // kv.shape[1], dim=2)


def ek_repeat_hq(kv, num_query_heads):  # num_query_heads copies of each head
    return kv.repeat_interleave(num_query_heads, dim=1)


ANSWERS = [
    # Exercise 1
    right(EX1, "int", lambda: 2048),
    right(EX1, "float", lambda: 2048.0),
    right(EX1, "power-of-two", lambda: 2**11),
    right(EX1, "numpy-int", lambda: np.int64(2048)),
    right(EX1, "0d-tensor", lambda: torch.tensor(2048)),
    right(EX1, "fraction", lambda: Fraction(1 * 8 * 8192 * 8192 * 4, 2**20)),
    wrong(EX1, "bytes", lambda: 8 * 8192 * 8192 * 4, ("MiB", "2**20", "bytes", "2²⁰")),
    wrong(EX1, "no-bytes-per-number", lambda: 8 * 8192 * 8192 / 2**20, ("4", "bytes", "float32")),
    wrong(EX1, "one-head", lambda: 8192 * 8192 * 4 / 2**20, ("8", "heads", "H")),
    wrong(EX1, "decimal-megabytes", lambda: 8 * 8192 * 8192 * 4 / 1e6, ("MiB", "2**20", "1e6", "2²⁰", "1048576")),
    wrong(EX1, "gibibytes", lambda: 2, ("MiB", "GiB", "1024")),
    wrong(EX1, "string", lambda: "2048", ("number", "string", "quote")),
    # Exercise 2
    right(EX2, "python-max", lambda: ou_python_max),
    right(EX2, "if-else", lambda: ou_if_else),
    right(EX2, "torch-where", lambda: ou_where),
    right(EX2, "logaddexp", lambda: ou_logaddexp),
    right(EX2, "float64-inside", lambda: ou_float64),
    wrong(EX2, "divide-by-exp", lambda: ou_divide_by_exp, ("overflow", "inf", "nan", "exp(m - m_new)", "large")),
    wrong(EX2, "no-rescale", lambda: ou_no_rescale, ("rescale", "exp(m - m_new)")),
    wrong(EX2, "rescale-inverted", lambda: ou_rescale_inverted, ("exp(m - m_new)", "sign", "direction", "invert")),
    wrong(EX2, "new-term-old-max", lambda: ou_new_term_old_max, ("x - m_new", "new max", "m_new")),
    wrong(EX2, "max-is-x", lambda: ou_max_is_x, ("max", "smaller")),
    wrong(EX2, "swapped-return", lambda: ou_swapped_return, ("order", "(m_new, s_new)", "first")),
    wrong(EX2, "no-max-subtracted", lambda: ou_no_max, ("m_new", "exp(x - m_new)", "subtract")),
    wrong(EX2, "running-minimum", lambda: ou_minimum),
    # Exercise 3
    right(EX3, "int", lambda: 6),
    right(EX3, "float", lambda: 6.0),
    right(EX3, "0d-tensor-from-mask", lambda: causal_mask(3, 8, align="bottom_right")[0].sum()),
    right(EX3, "numpy-int", lambda: np.int64(6)),
    right(EX3, "fraction", lambda: Fraction(6)),
    right(EX3, "expression", lambda: 5 + 1),
    wrong(EX3, "top-left", lambda: 1, ("bottom", "right", "cache", "top-left", "5")),
    wrong(EX3, "cache-only", lambda: 5, ("own", "itself", "6")),
    wrong(EX3, "all-keys", lambda: 8, ("future", "causal", "later", "new")),
    wrong(EX3, "off-by-one", lambda: 7, ("future", "token 5", "6", "itself", "own")),
    wrong(EX3, "string", lambda: "6", ("number", "string", "quote")),
    # Exercise 4
    right(EX4, "expand-reshape", lambda: ek_expand_reshape),
    right(EX4, "integer-index", lambda: ek_index),
    right(EX4, "index-select", lambda: ek_index_select),
    right(EX4, "cat-loop", lambda: ek_cat_loop),
    right(EX4, "stack-flatten", lambda: ek_stack_flatten),
    wrong(EX4, "repeat-tiled", lambda: ek_repeat_tiled, ("repeat_interleave", "consecutive", "tile", "group")),
    wrong(EX4, "index-modulo", lambda: ek_index_modulo, ("repeat_interleave", "consecutive", "//", "group")),
    wrong(EX4, "repeats-hkv-times", lambda: ek_repeat_hkv_times, ("Hq / Hkv", "group", "num_query_heads", "g")),
    wrong(EX4, "repeats-along-T", lambda: ek_wrong_dim),
    wrong(EX4, "repeats-hq-times", lambda: ek_repeat_hq, ("Hq / Hkv", "group", "num_query_heads //", "g")),
]
