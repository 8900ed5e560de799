"""Notebook 08 (efficient attention): learner answers to its five exercises."""

import math
from fractions import Fraction

import numpy as np
import torch
import torch.nn.functional as F

from attnlib import causal_mask, flash_attention, scaled_dot_product_attention

from . import right, wrong

EXERCISES = {"check_weights_memory": 1, "check_online_update": 2, "check_blockwise_attention": 3,
             "check_cache_causal_mask": 4, "check_grouped_attention": 5}

EX1 = "nb08.check_weights_memory"  # (1, 8, 8192, 8192) float32 weights: 2048 MiB
EX2 = "nb08.check_online_update"
EX3 = "nb08.check_blockwise_attention"
EX4 = "nb08.check_cache_causal_mask"
EX5 = "nb08.check_grouped_attention"


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


def ou_raw_exp_rescaled(m, s, x):  # rescales the old sum, but the new term is exp of the raw score
    m_new = torch.maximum(m, x)
    return m_new, s * torch.exp(m - m_new) + torch.exp(x)


def ou_no_running_max(m, s, x):  # no maximum at all: a plain running sum of exp
    return m, s + torch.exp(x)


def ou_log_sum(m, s, x):  # L7 #157: the log of the running sum
    m_new = torch.maximum(m, x)
    return m_new, torch.log(s * torch.exp(m - m_new) + torch.exp(x - m_new))


def ou_weight(m, s, x):  # L7 #158: the new score's weight, not the sum
    m_new = torch.maximum(m, x)
    return m_new, torch.exp(x - m_new) / (s * torch.exp(m - m_new) + torch.exp(x - m_new))


def ou_shift_by_old_max_then_rescale(m, s, x):  # L7 #239: exact algebra, but NaN on the first score
    m_new = torch.maximum(m, x)
    return m_new, (s + torch.exp(x - m)) * torch.exp(m - m_new)


def ou_only_s(m, s, x):  # returns the sum alone
    m_new = torch.maximum(m, x)
    return s * torch.exp(m - m_new) + torch.exp(x - m_new)


def ou_adds_score(m, s, x):  # the new term is the score itself
    m_new = torch.maximum(m, x)
    return m_new, s * torch.exp(m - m_new) + x


def ou_adds_one(m, s, x):  # exp(0) = 1, as if x were always the new maximum
    m_new = torch.maximum(m, x)
    return m_new, s * torch.exp(m - m_new) + 1


def ou_only_when_larger(m, s, x):  # a smaller score is dropped, not added
    if x > m:
        return x, s * torch.exp(m - x) + 1
    return m, s


# Exercise 3: blockwise_attention(query, key, value, block_size); the stub starts q, m, s, acc
def _start(query, value):
    q = query / math.sqrt(query.shape[-1])
    m = q.new_full((*q.shape[:-1], 1), -math.inf)
    return q, m, q.new_zeros(*q.shape[:-1], 1), q.new_zeros(*q.shape[:-1], value.shape[-1])


def bw_reference_like(query, key, value, block_size):
    q, m, s, acc = _start(query, value)
    for start in range(0, key.shape[-2], block_size):
        tile = q @ key[..., start:start + block_size, :].transpose(-2, -1)
        m_new = torch.max(m, tile.max(dim=-1, keepdim=True).values)
        alpha = torch.exp(m - m_new)
        p = torch.exp(tile - m_new)
        s, acc = alpha * s + p.sum(-1, keepdim=True), alpha * acc + p @ value[..., start:start + block_size, :]
        m = m_new
    return acc / s


def bw_einsum_split(query, key, value, block_size):  # torch.split into blocks, einsum for the products
    q, m, s, acc = _start(query, value)
    for k_blk, v_blk in zip(key.split(block_size, dim=-2), value.split(block_size, dim=-2)):
        tile = torch.einsum("...qd,...kd->...qk", q, k_blk)
        m_new = torch.maximum(m, tile.amax(-1, keepdim=True))
        p = (tile - m_new).exp()
        s = s * (m - m_new).exp() + p.sum(-1, keepdim=True)
        acc = acc * (m - m_new).exp() + torch.einsum("...qk,...kv->...qv", p, v_blk)
        m = m_new
    return acc / s


def bw_lse(query, key, value, block_size):  # keeps log s instead of s (logaddexp)
    q, m, s, acc = _start(query, value)
    log_s = torch.full_like(m, -math.inf)
    for start in range(0, key.shape[-2], block_size):
        tile = q @ key[..., start:start + block_size, :].mT
        m_new = torch.maximum(m, tile.amax(-1, keepdim=True))
        acc = acc * torch.exp(m - m_new) + torch.exp(tile - m_new) @ value[..., start:start + block_size, :]
        log_s = torch.logaddexp(log_s, torch.logsumexp(tile, dim=-1, keepdim=True))
        m = m_new
    return acc / torch.exp(log_s - m)


def bw_normalised_acc(query, key, value, block_size):  # keeps acc / s (FlashAttention's first paper)
    q, m, s, _ = _start(query, value)
    out = q.new_zeros(*q.shape[:-1], value.shape[-1])
    for start in range(0, key.shape[-2], block_size):
        tile = q @ key[..., start:start + block_size, :].mT
        m_new = torch.maximum(m, tile.amax(-1, keepdim=True))
        p = torch.exp(tile - m_new)
        s_new = s * torch.exp(m - m_new) + p.sum(-1, keepdim=True)
        out = (out * s * torch.exp(m - m_new) + p @ value[..., start:start + block_size, :]) / s_new
        m, s = m_new, s_new
    return out


def bw_key_by_key(query, key, value, block_size):  # ignores block_size: one key at a time (exact, slower)
    q, m, s, acc = _start(query, value)
    for j in range(key.shape[-2]):
        x = q @ key[..., j:j + 1, :].mT  # (..., Tq, 1)
        m_new = torch.maximum(m, x)
        s = s * torch.exp(m - m_new) + torch.exp(x - m_new)
        acc = acc * torch.exp(m - m_new) + torch.exp(x - m_new) * value[..., j:j + 1, :]
        m = m_new
    return acc / s


def _loop(query, key, value, block_size, *, acc_rescaled=True, s_rescaled=True, running=True, keep=True,
          use_query=False, drop_last=False, twice=False, over_queries=False, keepdim=True, max_axis=-1,
          value_last_axis=False, first_axis=False):
    q, m, s, acc = _start(query, value)
    stop = key.shape[-2] - block_size + 1 if drop_last else key.shape[-2]
    for start in range(0, stop, block_size):
        k_blk, v_blk = (key[start:start + block_size], value[start:start + block_size]) if first_axis else (
            key[..., start:start + block_size, :], value[..., start:start + block_size, :])
        v_blk = value[..., start:start + block_size] if value_last_axis else v_blk
        tile = (query if use_query else q) @ k_blk.mT
        tile = tile / math.sqrt(q.shape[-1]) if twice else tile  # q is already scaled
        block_max = (tile.amax(-2, keepdim=True) if over_queries else tile).amax(max_axis, keepdim=keepdim)
        m_new = torch.maximum(m, block_max) if running else block_max
        p = torch.exp(tile - m_new)
        s = s * (torch.exp(m - m_new) if s_rescaled else 1) + p.sum(-1, keepdim=True)
        acc = acc * (torch.exp(m - m_new) if acc_rescaled else 1) + p @ v_blk
        if keep:
            m = m_new
    return acc / s


def bw_four_axes(query, key, value, block_size):  # written for (B, H, T, Dh) only
    q, m, s, acc = _start(query, value)
    for start in range(0, key.shape[2], block_size):
        tile = q @ key[:, :, start:start + block_size].transpose(2, 3)
        m_new = torch.maximum(m, tile.amax(-1, keepdim=True))
        p = torch.exp(tile - m_new)
        s = s * torch.exp(m - m_new) + p.sum(-1, keepdim=True)
        acc = acc * torch.exp(m - m_new) + p @ value[:, :, start:start + block_size]
        m = m_new
    return acc / s


def bw_raw_exp(query, key, value, block_size):  # no maximum: exact algebra, overflows in float32
    q, _, s, acc = _start(query, value)
    for start in range(0, key.shape[-2], block_size):
        p = torch.exp(q @ key[..., start:start + block_size, :].mT)
        s, acc = s + p.sum(-1, keepdim=True), acc + p @ value[..., start:start + block_size, :]
    return acc / s


def bw_full_softmax(query, key, value, block_size):
    return torch.softmax(query @ key.mT / math.sqrt(query.shape[-1]), dim=-1) @ value


def bw_softmax_per_block_averaged(query, key, value, block_size):  # each block's softmax, averaged
    outs = [torch.softmax(query @ k.mT / math.sqrt(query.shape[-1]), dim=-1) @ v
            for k, v in zip(key.split(block_size, -2), value.split(block_size, -2))]
    return sum(outs) / len(outs)


def bw_query_blocks(query, key, value, block_size):  # L7 #183: blocks of queries, each against every key
    q = query / math.sqrt(query.shape[-1])
    return torch.cat([torch.softmax(q[..., i:i + block_size, :] @ key.mT, -1) @ value
                      for i in range(0, q.shape[-2], block_size)], dim=-2)


def _unnormalised(query, key, value, block_size):
    q, m, s, acc = _start(query, value)
    for start in range(0, key.shape[-2], block_size):
        tile = q @ key[..., start:start + block_size, :].mT
        m_new = torch.maximum(m, tile.amax(-1, keepdim=True))
        p = torch.exp(tile - m_new)
        acc, m = acc * torch.exp(m - m_new) + p @ value[..., start:start + block_size, :], m_new
    return acc


# Exercise 4: cache_causal_mask(q_len, kv_len) -> bool (q_len, kv_len), True = may attend
def cm_tril(q_len, kv_len):
    return torch.tril(torch.ones(q_len, kv_len, dtype=torch.bool), diagonal=kv_len - q_len)


def cm_positions(q_len, kv_len):
    positions = torch.arange(kv_len - q_len, kv_len)  # the new tokens' positions
    return torch.arange(kv_len)[None, :] <= positions[:, None]


def cm_triu_inverted(q_len, kv_len):
    return ~torch.ones(q_len, kv_len, dtype=torch.bool).triu(diagonal=kv_len - q_len + 1)


def cm_loops(q_len, kv_len):
    cached = kv_len - q_len
    return torch.tensor([[j <= cached + i for j in range(kv_len)] for i in range(q_len)])


def cm_last_rows_of_square(q_len, kv_len):  # the last q_len rows of the full (kv_len, kv_len) causal mask
    return torch.ones(kv_len, kv_len, dtype=torch.bool).tril()[-q_len:]


def cm_attnlib(q_len, kv_len):  # attnlib's own, named after the exercise
    return causal_mask(q_len, kv_len, align="bottom_right")


def cm_top_left(q_len, kv_len):  # what is_causal=True does
    return torch.ones(q_len, kv_len).tril().bool()


def cm_first_rows_of_square(q_len, kv_len):  # the first q_len rows: top-left again
    return torch.ones(kv_len, kv_len, dtype=torch.bool).tril()[:q_len]


def cm_blocked(q_len, kv_len):  # True = blocked, nn.MultiheadAttention's convention
    return torch.ones(q_len, kv_len, dtype=torch.bool).triu(diagonal=kv_len - q_len + 1)


def cm_without_own_key(q_len, kv_len):
    return torch.ones(q_len, kv_len).tril(diagonal=kv_len - q_len - 1).bool()


def cm_one_too_far(q_len, kv_len):
    return torch.ones(q_len, kv_len).tril(diagonal=kv_len - q_len + 1).bool()


def cm_hard_coded_cache(q_len, kv_len):  # 5 cached tokens, as in the notebook's example
    return torch.ones(q_len, kv_len).tril(diagonal=5).bool()


def cm_float(q_len, kv_len):
    return torch.ones(q_len, kv_len).tril(diagonal=kv_len - q_len)


def cm_additive(q_len, kv_len):  # 0 where allowed, -inf where blocked
    keep = torch.ones(q_len, kv_len, dtype=torch.bool).tril(diagonal=kv_len - q_len)
    return torch.zeros(q_len, kv_len).masked_fill(~keep, -math.inf)


def cm_transposed(q_len, kv_len):
    return torch.ones(q_len, kv_len).tril(diagonal=kv_len - q_len).bool().T


def cm_sign_of_offset(q_len, kv_len):
    return torch.ones(q_len, kv_len, dtype=torch.bool).tril(q_len - kv_len)


def cm_all_true(q_len, kv_len):  # right for one new query only
    return torch.ones(q_len, kv_len, dtype=torch.bool)


def cm_triu(q_len, kv_len):  # L7 #201: the triangle the wrong way
    return torch.ones(q_len, kv_len, dtype=torch.bool).triu(kv_len - q_len)


def cm_cache_hidden(q_len, kv_len):  # L7 #241: the new queries do not see the cached tokens
    return torch.cat([torch.zeros(q_len, kv_len - q_len, dtype=torch.bool),
                      torch.ones(q_len, q_len, dtype=torch.bool).tril()], dim=1)


def cm_notebook_example(q_len, kv_len):  # the notebook's 3 new queries after 5 cached tokens, whatever the lengths
    return torch.ones(3, 8, dtype=torch.bool).tril(5)


# Exercise 5: grouped_query_attention(q, k, v), q (B, Hq, Tq, Dh), k and v (B, Hkv, Tk, Dh), without copies
def gq_reshape_broadcast(q, k, v):
    b, hq, tq, dh = q.shape
    hkv = k.shape[1]
    groups = q.reshape(b, hkv, hq // hkv, tq, dh)
    weights = torch.softmax(groups @ k[:, :, None].transpose(-2, -1) / math.sqrt(dh), dim=-1)
    return (weights @ v[:, :, None]).reshape(b, hq, tq, dh)


def gq_loop_over_query_heads(q, k, v):  # query head h reads key/value head h // g
    g = q.shape[1] // k.shape[1]
    outs = []
    for h in range(q.shape[1]):
        scores = q[:, h] @ k[:, h // g].mT / q.shape[-1] ** 0.5
        outs.append(scores.softmax(dim=-1) @ v[:, h // g])
    return torch.stack(outs, dim=1)


def gq_loop_over_groups(q, k, v):  # one key/value head at a time, its g query heads together
    g = q.shape[1] // k.shape[1]
    outs = []
    for j in range(k.shape[1]):
        qj = q[:, j * g:(j + 1) * g]  # (B, g, Tq, Dh)
        w = (qj @ k[:, j:j + 1].mT / math.sqrt(q.shape[-1])).softmax(-1)  # k broadcast over the g heads
        outs.append(w @ v[:, j:j + 1])
    return torch.cat(outs, dim=1)


def gq_einsum(q, k, v):
    b, hq, tq, dh = q.shape
    qg = q.view(b, k.shape[1], -1, tq, dh)
    w = torch.einsum("bkgqd,bktd->bkgqt", qg, k).div(math.sqrt(dh)).softmax(dim=-1)
    return torch.einsum("bkgqt,bktd->bkgqd", w, v).flatten(1, 2)


def gq_expand_view(q, k, v):  # expand makes a view: nothing is copied
    b, hq, tq, dh = q.shape
    hkv = k.shape[1]
    ke = k.unsqueeze(2).expand(b, hkv, hq // hkv, *k.shape[2:])
    ve = v.unsqueeze(2).expand(b, hkv, hq // hkv, *v.shape[2:])
    w = F.softmax(q.unflatten(1, (hkv, -1)) @ ke.mT * dh ** -0.5, dim=-1)
    return (w @ ve).flatten(1, 2)


def gq_repeat_interleave(q, k, v):  # right numbers, but the cache is copied to Hq heads
    g = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(g, dim=1), v.repeat_interleave(g, dim=1)
    return torch.softmax(q @ k.mT / math.sqrt(q.shape[-1]), dim=-1) @ v


def gq_index_heads(q, k, v):  # copies too: advanced indexing builds a new tensor
    idx = torch.arange(q.shape[1]) // (q.shape[1] // k.shape[1])
    return torch.softmax(q @ k[:, idx].mT / math.sqrt(q.shape[-1]), dim=-1) @ v[:, idx]


def gq_torch(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)


def gq_attnlib(q, k, v):
    return scaled_dot_product_attention(q, k, v, enable_gqa=True)[0]


def gq_modulo(q, k, v):  # query head h reads key/value head h % Hkv: the heads dealt out in turn
    b, hq, tq, dh = q.shape
    hkv = k.shape[1]
    groups = q.reshape(b, hq // hkv, hkv, tq, dh).transpose(1, 2)  # (B, Hkv, g, Tq, Dh), tiled
    w = torch.softmax(groups @ k.unsqueeze(2).mT / math.sqrt(dh), dim=-1)
    return (w @ v.unsqueeze(2)).transpose(1, 2).reshape(b, hq, tq, dh)


def gq_unscaled(q, k, v):
    b, hq, tq, dh = q.shape
    groups = q.reshape(b, k.shape[1], -1, tq, dh)
    return (torch.softmax(groups @ k.unsqueeze(2).mT, dim=-1) @ v.unsqueeze(2)).reshape(b, hq, tq, dh)


def gq_softmax_queries(q, k, v):
    b, hq, tq, dh = q.shape
    groups = q.reshape(b, k.shape[1], -1, tq, dh)
    w = torch.softmax(groups @ k.unsqueeze(2).mT / math.sqrt(dh), dim=-2)
    return (w @ v.unsqueeze(2)).reshape(b, hq, tq, dh)


def gq_groups_of_three(q, k, v):  # the group size of the notebook's example (6 / 2), whatever the shapes
    b, hq, tq, dh = q.shape
    groups = q.reshape(b, -1, 3, tq, dh)
    w = torch.softmax(groups @ k.unsqueeze(2).mT / math.sqrt(dh), dim=-1)
    return (w @ v.unsqueeze(2)).reshape(b, hq, tq, dh)


def _grouped(q, k, v, *, scale=None, causal=False, merge_transposed=False):
    b, hq, tq, dh = q.shape
    scores = q.view(b, k.shape[1], -1, tq, dh) @ k[:, :, None].mT / (scale or math.sqrt(dh))
    if causal:  # by habit: this exercise has no mask
        scores = scores.masked_fill(~causal_mask(tq, k.shape[2]), float("-inf"))
    out = torch.softmax(scores, dim=-1) @ v[:, :, None]  # (B, Hkv, g, Tq, Dh)
    return (out.transpose(1, 2) if merge_transposed else out).reshape(b, hq, tq, dh)


NOTEBOOK_DH = 64  # the notebook's Dh (the cell above Exercise 5)


def gq_ungrouped(q, k, v):  # L7 #248: right only when Hkv is 1 or Hq
    return torch.softmax(q @ k.mT / math.sqrt(q.shape[-1]), -1) @ v


def gq_dh_from_k(q, k, v):  # L7 #249: B, Hkv, Dh, _ = k.shape reads Tk as Dh
    B, Hkv, Dh, _ = k.shape
    w = (q.unflatten(1, (Hkv, -1)) @ k[:, :, None].mT / math.sqrt(Dh)).softmax(-1)
    return (w @ v[:, :, None]).flatten(1, 2)


def gq_not_merged(q, k, v):  # returns (B, Hkv, g, Tq, Dh)
    b, hq, tq, dh = q.shape
    groups = q.reshape(b, k.shape[1], -1, tq, dh)
    return torch.softmax(groups @ k.unsqueeze(2).mT / math.sqrt(dh), dim=-1) @ v.unsqueeze(2)


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
    wrong(EX1, "float16", lambda: 1024),
    wrong(EX1, "bits", lambda: 16384),
    wrong(EX1, "kibibytes", lambda: 8 * 8192 * 8192 * 4 / 2**10),
    wrong(EX1, "rounded-2000", lambda: 2000),
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
    wrong(EX2, "max-is-x", lambda: ou_max_is_x),
    wrong(EX2, "swapped-return", lambda: ou_swapped_return, ("order", "(m_new, s_new)", "first")),
    wrong(EX2, "no-max-subtracted", lambda: ou_no_max, ("m_new", "exp(x - m_new)", "subtract")),
    wrong(EX2, "running-minimum", lambda: ou_minimum),
    wrong(EX2, "raw-exp-rescaled", lambda: ou_raw_exp_rescaled, ("raw", "maximum", "x - m_new")),
    wrong(EX2, "no-running-max", lambda: ou_no_running_max, ("raw", "maximum", "x - m_new")),
    wrong(EX2, "only-s-returned", lambda: ou_only_s, ("two values",)),
    wrong(EX2, "adds-the-score", lambda: ou_adds_score),
    wrong(EX2, "always-adds-one", lambda: ou_adds_one),
    wrong(EX2, "smaller-score-dropped", lambda: ou_only_when_larger),
    # Exercise 3
    right(EX3, "reference-like", lambda: bw_reference_like),
    right(EX3, "split-einsum", lambda: bw_einsum_split),
    right(EX3, "log-sum", lambda: bw_lse),
    right(EX3, "normalised-output", lambda: bw_normalised_acc),
    right(EX3, "key-by-key", lambda: bw_key_by_key),
    wrong(EX3, "acc-not-rescaled", lambda: lambda *a: _loop(*a, acc_rescaled=False), ("acc", "rescale")),
    wrong(EX3, "s-not-rescaled", lambda: lambda *a: _loop(*a, s_rescaled=False), ("s is", "s ", "rescale")),
    wrong(EX3, "nothing-rescaled", lambda: lambda *a: _loop(*a, s_rescaled=False, acc_rescaled=False),
          ("rescale", "exp(m_old - m_new)")),
    wrong(EX3, "block-max-only", lambda: lambda *a: _loop(*a, running=False), ("running maximum", "overflow")),
    wrong(EX3, "m-not-carried", lambda: lambda *a: _loop(*a, keep=False)),
    wrong(EX3, "unscaled-query", lambda: lambda *a: _loop(*a, use_query=True), ("scaled", "sqrt")),
    wrong(EX3, "last-block-dropped", lambda: lambda *a: _loop(*a, drop_last=True), ("last block",)),
    wrong(EX3, "four-axes-only", lambda: bw_four_axes),
    wrong(EX3, "raw-exp", lambda: bw_raw_exp, ("overflow", "maximum", "not finite")),
    wrong(EX3, "full-matrix", lambda: bw_full_softmax, ("whole", "(Tq, Tk)")),
    wrong(EX3, "attnlib-flash", lambda: lambda q, k, v, b: flash_attention(q, k, v, block_size_k=b),
          ("ready-made", "yourself")),
    wrong(EX3, "attnlib-plain", lambda: lambda q, k, v, b: scaled_dot_product_attention(q, k, v)[0],
          ("ready-made", "whole")),
    wrong(EX3, "torch-sdpa", lambda: lambda q, k, v, b: F.scaled_dot_product_attention(q, k, v),
          ("ready-made", "yourself")),
    wrong(EX3, "per-block-softmax-averaged", lambda: bw_softmax_per_block_averaged, note="also L7 #181"),
    wrong(EX3, "no-final-division", lambda: _unnormalised),
    wrong(EX3, "max-over-queries-too", lambda: lambda *a: _loop(*a, over_queries=True), ("whole tile", "per query")),
    wrong(EX3, "scaled-twice", lambda: lambda *a: _loop(*a, twice=True), ("twice", "again")),
    wrong(EX3, "max-without-keepdim", lambda: lambda *a: _loop(*a, keepdim=False)),
    # Exercise 4
    right(EX4, "tril-bool", lambda: cm_tril),
    right(EX4, "positions", lambda: cm_positions),
    right(EX4, "triu-inverted", lambda: cm_triu_inverted),
    right(EX4, "loops", lambda: cm_loops),
    right(EX4, "last-rows-of-square", lambda: cm_last_rows_of_square),
    wrong(EX4, "top-left", lambda: cm_top_left, ("top-left", "is_causal", "kv_len - q_len")),
    wrong(EX4, "first-rows-of-square", lambda: cm_first_rows_of_square, ("top-left", "kv_len - q_len")),
    wrong(EX4, "blocked-polarity", lambda: cm_blocked, ("True = blocked", "may attend", "polarity")),
    wrong(EX4, "without-own-key", lambda: cm_without_own_key, ("own", "left")),
    wrong(EX4, "one-too-far", lambda: cm_one_too_far, ("too many", "right", "after")),
    wrong(EX4, "hard-coded-cache", lambda: cm_hard_coded_cache),
    wrong(EX4, "float-mask", lambda: cm_float),
    wrong(EX4, "additive-mask", lambda: cm_additive),
    wrong(EX4, "transposed", lambda: cm_transposed, ("rows", "(q_len, kv_len)")),
    wrong(EX4, "attnlib-bottom-right", lambda: cm_attnlib, ("causal_mask", "yourself"),
          note="attnlib's own function: the exercise says build it yourself"),
    wrong(EX4, "sign-of-offset", lambda: cm_sign_of_offset),
    wrong(EX4, "all-true", lambda: cm_all_true),
    wrong(EX4, "notebook-example-sizes", lambda: cm_notebook_example),
    # Exercise 5
    right(EX5, "reshape-broadcast", lambda: gq_reshape_broadcast),
    right(EX5, "loop-over-query-heads", lambda: gq_loop_over_query_heads),
    right(EX5, "loop-over-groups", lambda: gq_loop_over_groups),
    right(EX5, "einsum", lambda: gq_einsum),
    right(EX5, "expand-view", lambda: gq_expand_view, note="expand is a view: the cache is not copied"),
    wrong(EX5, "repeat-interleave", lambda: gq_repeat_interleave, ("copy", "copies", "broadcast")),
    wrong(EX5, "index-heads", lambda: gq_index_heads, ("copy", "copies", "indexing")),
    wrong(EX5, "torch-enable-gqa", lambda: gq_torch, ("ready-made", "yourself")),
    wrong(EX5, "attnlib-enable-gqa", lambda: gq_attnlib, ("ready-made", "yourself")),
    wrong(EX5, "heads-dealt-in-turn", lambda: gq_modulo, ("consecutive", "h % Hkv", "in turn")),
    wrong(EX5, "unscaled", lambda: gq_unscaled, ("sqrt(Dh)", "divided")),
    wrong(EX5, "softmax-over-queries", lambda: gq_softmax_queries, ("queries", "sum to 1")),
    wrong(EX5, "groups-of-three", lambda: gq_groups_of_three),
    wrong(EX5, "groups-not-merged", lambda: gq_not_merged),
    wrong(EX5, "divided-by-Dh", lambda: lambda q, k, v: _grouped(q, k, v, scale=q.shape[-1]), ("Dh itself",)),
    wrong(EX5, "notebook-Dh", lambda: lambda q, k, v: _grouped(q, k, v, scale=math.sqrt(NOTEBOOK_DH))),
    wrong(EX5, "merged-after-transpose", lambda: lambda q, k, v: _grouped(q, k, v, merge_transposed=True)),
    wrong(EX5, "causal-by-habit", lambda: lambda q, k, v: _grouped(q, k, v, causal=True)),
    # Learner population L7 (report_L7.md, section 08)
    wrong(EX1, "MB-unrounded", lambda: 2147.48, ("2147.48",), note="L7 #123: the hint quotes the number as written"),
    wrong(EX1, "scores-and-weights", lambda: 4096.0, note="L7 #131"),
    wrong(EX1, "T-not-squared", lambda: 8 * 8192 * 4 / 2**20, note="L7 #132"),
    wrong(EX1, "with-unit", lambda: "2048 MiB", ("unit",), note="L7 #250"),
    wrong(EX2, "log-of-sum", lambda: ou_log_sum, note="L7 #157"),
    wrong(EX2, "new-weight", lambda: ou_weight, note="L7 #158"),
    wrong(EX2, "shift-by-old-max", lambda: ou_shift_by_old_max_then_rescale, ("first score", "NaN"),
          note="L7 #239: right on the first two probes"),
    wrong(EX3, "max-over-queries", lambda: lambda *a: _loop(*a, max_axis=-2), note="L7 #177"),
    wrong(EX3, "value-sliced-on-Ev", lambda: lambda *a: _loop(*a, value_last_axis=True), note="L7 #245"),
    wrong(EX3, "first-axis-sliced", lambda: lambda *a: _loop(*a, first_axis=True), ("first axis",),
          note="L7 #246: right for 2-D inputs"),
    wrong(EX3, "query-blocks", lambda: bw_query_blocks, ("every key",), note="L7 #183"),
    wrong(EX4, "triu", lambda: cm_triu, note="L7 #201"),
    wrong(EX4, "cache-hidden", lambda: cm_cache_hidden, note="L7 #241"),
    wrong(EX4, "offset-q-len", lambda: lambda q_len, kv_len: torch.ones(q_len, kv_len, dtype=torch.bool).tril(q_len),
          note="L7 #208"),
    wrong(EX5, "scale-sqrt-Tk", lambda: lambda q, k, v: _grouped(q, k, v, scale=math.sqrt(k.shape[2])), note="L7 #226"),
    wrong(EX5, "Dh-from-k-shape", lambda: gq_dh_from_k, note="L7 #249"),
    wrong(EX5, "ungrouped", lambda: gq_ungrouped, note="L7 #248"),
]
