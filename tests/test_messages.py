# ruff: noqa: E501  (the messages are pinned whole, one line each)
"""Every error message of attnlib's public functions, word for word.

A learner reads these messages instead of attnlib's source, so each one is pinned here in
full: the argument it names, what was expected and what was received. A change of wording
must change this table too (and book/common-errors.md if the message is quoted there).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

import attnlib as A
from attnlib import hf


def _flash_double_backward():
    q = torch.randn(1, 3, 4, requires_grad=True)
    (grad,) = torch.autograd.grad(A.flash_attention(q, q, q).sum(), q, create_graph=True)
    return grad


def make_cases():
    torch.manual_seed(0)
    q = torch.randn(2, 3, 4)
    k = torch.randn(2, 5, 4)
    v = torch.randn(2, 5, 6)
    mha = A.MultiHeadAttention(8, 2)
    x = torch.randn(2, 3, 8)
    att = A.AdditiveAttention(3, 4, 5)
    aq = torch.randn(2, 3, 3)
    ak = torch.randn(2, 5, 4)
    av = torch.randn(2, 5, 6)
    layer, causal_layer = nn.Module().eval(), nn.Module().eval()
    causal_layer.is_causal = True
    hq = torch.randn(1, 2, 3, 4)  # (B, H, T, Dh) as transformers passes them

    return {
        "split_heads_tensor": lambda: A.split_heads([[1.0]], 2),
        "merge_heads_tensor": lambda: A.merge_heads([[1.0]]),
        "mha_num_heads_bool": lambda: A.MultiHeadAttention(8, True),
        "mha_num_heads_float": lambda: A.MultiHeadAttention(8, 2.0),
        "mha_kdim": lambda: A.MultiHeadAttention(8, 2, kdim=0),
        "mha_vdim": lambda: A.MultiHeadAttention(8, 2, vdim=-1),
        "mha_embed_dim": lambda: A.MultiHeadAttention(0, 2),
        "mha_value_width": lambda: mha(x, x, x[..., :6]),
        "additive_values_ndim": lambda: att(aq, ak, av[0]),
        "check_tensor": lambda: A.scaled_dot_product_attention([1.0], k, v),
        "check_floating": lambda: A.scaled_dot_product_attention(q.long(), k, v),
        "check_min_dims": lambda: A.scaled_dot_product_attention(q[0, 0], k, v),
        "check_ndim": lambda: A.split_heads(q[0], 2),
        "same_dtype": lambda: A.scaled_dot_product_attention(q, k.double(), v),
        "same_device": lambda: A.scaled_dot_product_attention(q, k.to("meta"), v),
        "module_dtype": lambda: mha(x.double(), x.double(), x.double()),
        "module_device": lambda: mha(x.to("meta"), x.to("meta"), x.to("meta")),
        "width": lambda: att(aq, ak[..., :2], av),
        "batch_size": lambda: att(aq, ak[:1], av[:1]),
        "length_tk": lambda: att(aq, ak, av[:, :4]),
        "dropout": lambda: A.scaled_dot_product_attention(q, k, v, dropout_p=1.0),
        "scale_type": lambda: A.scaled_dot_product_attention(q, k, v, scale="1"),
        "scale_finite": lambda: A.scaled_dot_product_attention(q, k, v, scale=float("inf")),
        "broadcast_batch": lambda: A.scaled_dot_product_attention(q[:1].expand(3, 3, 4), k, v),
        "mask_device": lambda: A.scaled_dot_product_attention(
            q, k, v, attn_mask=torch.ones(3, 5, dtype=torch.bool, device="meta")
        ),
        "mask_int": lambda: A.scaled_dot_product_attention(q, k, v, attn_mask=torch.ones(3, 5, dtype=torch.int64)),
        "mask_int_softmax": lambda: A.masked_softmax(q, torch.ones(3, 4, dtype=torch.int64)),
        "mask_float_softmax": lambda: A.masked_softmax(q, torch.ones(3, 4)),
        "mask_float_dtype": lambda: A.scaled_dot_product_attention(
            q, k, v, attn_mask=torch.zeros(3, 5, dtype=torch.float64)
        ),
        "mask_01": lambda: A.scaled_dot_product_attention(q, k, v, attn_mask=torch.ones(3, 5)),
        "mask_nan": lambda: A.scaled_dot_product_attention(q, k, v, attn_mask=torch.full((3, 5), float("nan"))),
        "mask_shape": lambda: A.scaled_dot_product_attention(q, k, v, attn_mask=torch.ones(4, 5, dtype=torch.bool)),
        "key_mask_dtype": lambda: mha(x, x, x, key_mask=torch.ones(2, 3, dtype=torch.int64)),
        "key_mask_shape": lambda: mha(x, x, x, key_mask=torch.ones(3, dtype=torch.bool)),
        "key_mask_device": lambda: mha(x, x, x, key_mask=torch.ones(2, 3, dtype=torch.bool, device="meta")),
        "causal_len": lambda: A.causal_mask(-1),
        "causal_align": lambda: A.causal_mask(2, align="x"),
        "valid_lens_dtype": lambda: A.padding_mask([2.5], 4),
        "max_len": lambda: A.padding_mask([2], -1),
        "valid_lens_range": lambda: A.padding_mask([5, 1], 4),
        "expand_shape": lambda: A.expand_key_mask(torch.ones(3)),
        "expand_ndim": lambda: A.expand_key_mask(torch.ones(2, 3), 1),
        "kpm_int": lambda: A.from_key_padding_mask(torch.ones(2, 3, dtype=torch.int64)),
        "kpm_shape": lambda: A.from_key_padding_mask(torch.ones(3, dtype=torch.bool)),
        "tam_int": lambda: A.from_torch_attn_mask(torch.ones(2, 3, dtype=torch.int64)),
        "tam_heads": lambda: A.from_torch_attn_mask(torch.ones(4, 2, 3, dtype=torch.bool), 0),
        "tam_divide": lambda: A.from_torch_attn_mask(torch.ones(4, 2, 3, dtype=torch.bool), 3),
        "tam_shape": lambda: A.from_torch_attn_mask(torch.ones(3, dtype=torch.bool)),
        "hf_shape": lambda: A.from_hf_attention_mask(torch.ones(3)),
        "hf_values": lambda: A.from_hf_attention_mask(torch.full((2, 3), 2)),
        "positive_int": lambda: A.MultiHeadAttention(8, 0),
        "divisible": lambda: A.MultiHeadAttention(10, 3),
        "mha_3d_mask": lambda: mha(x, x, x, attn_mask=torch.ones(2, 3, 3, dtype=torch.bool)),
        "from_torch_type": lambda: A.MultiHeadAttention.from_torch(nn.Linear(2, 2)),
        "from_torch_bias_kv": lambda: A.MultiHeadAttention.from_torch(nn.MultiheadAttention(4, 2, add_bias_kv=True)),
        "from_torch_zero_attn": lambda: A.MultiHeadAttention.from_torch(
            nn.MultiheadAttention(4, 2, add_zero_attn=True)
        ),
        "additive_positive": lambda: A.AdditiveAttention(3, 0, 5),
        "gqa_flag_type": lambda: A.scaled_dot_product_attention(q, k, v, enable_gqa=1),
        "gqa_ndim": lambda: A.scaled_dot_product_attention(q[0], k[0], v[0], enable_gqa=True),
        "gqa_kv_heads": lambda: A.scaled_dot_product_attention(
            torch.zeros(1, 6, 3, 4), torch.zeros(1, 2, 5, 4), torch.zeros(1, 3, 5, 4), enable_gqa=True
        ),
        "gqa_multiple": lambda: A.scaled_dot_product_attention(
            torch.zeros(1, 6, 3, 4), torch.zeros(1, 4, 5, 4), torch.zeros(1, 4, 5, 4), enable_gqa=True
        ),
        "gqa_hint": lambda: A.scaled_dot_product_attention(
            torch.zeros(1, 6, 3, 4), torch.zeros(1, 2, 5, 4), torch.zeros(1, 2, 5, 4)
        ),
        "flash_block_size_q": lambda: A.flash_attention(q, k, v, block_size_q=0),
        "sdpa_causal_type": lambda: A.scaled_dot_product_attention(q, k, v, is_causal="False"),
        "mha_causal_type": lambda: mha(x, x, x, is_causal=0),
        "flash_causal_type": lambda: A.flash_attention(q, k, v, is_causal="False"),
        "flash_gqa_type": lambda: A.flash_attention(q, k, v, enable_gqa="yes"),
        "flash_lse_type": lambda: A.flash_attention(q, k, v, return_lse="yes"),
        "flash_block_size_bool": lambda: A.flash_attention(q, k, v, block_size_q=True),
        "flash_block_size_numpy": lambda: A.flash_attention(q, k, v, block_size_k=np.int64(0)),
        "flash_gqa_hint": lambda: A.flash_attention(torch.zeros(1, 6, 3, 4), torch.zeros(1, 2, 5, 4), torch.zeros(1, 2, 5, 4)),
        "flash_gqa_multiple": lambda: A.flash_attention(
            torch.zeros(1, 6, 3, 4), torch.zeros(1, 4, 5, 4), torch.zeros(1, 4, 5, 4), enable_gqa=True
        ),
        "flash_double_backward": lambda: _flash_double_backward(),
        "hf_indices": lambda: hf.attention_forward(layer, hq, hq, hq, None, indices=torch.zeros(1)),
        "hf_unknown": lambda: hf.attention_forward(layer, hq, hq, hq, None, alibi_slopes=torch.ones(2)),
        "hf_position_bias_type": lambda: hf.attention_forward(layer, hq, hq, hq, None, position_bias=torch.ones(1, dtype=torch.long)),
        "hf_softcap_type": lambda: hf.attention_forward(layer, hq, hq, hq, None, softcap=0),
        "hf_sinks_shape": lambda: hf.attention_forward(layer, hq, hq, hq, None, s_aux=torch.ones(3)),
        "hf_causal_without_mask": lambda: hf.attention_forward(causal_layer, hq, hq, hq, None),
        "flash_block_size_k": lambda: A.flash_attention(q, k, v, block_size_k=8.0),
        "sdpa_e0": lambda: A.scaled_dot_product_attention(q[..., :0], k[..., :0], v),
        "sdpa_width": lambda: A.scaled_dot_product_attention(q, k[..., :3], v),
        "sdpa_length": lambda: A.scaled_dot_product_attention(q, k, v[:, :4]),
        "sdpa_causal": lambda: A.scaled_dot_product_attention(
            q, k, v, attn_mask=torch.ones(3, 5, dtype=torch.bool), is_causal=True
        ),
        "mha_causal_key_mask": lambda: mha(
            x,
            x,
            x,
            attn_mask=torch.ones(3, 3, dtype=torch.bool),
            is_causal=True,
            key_mask=torch.ones(2, 3, dtype=torch.bool),
        ),
    }


MESSAGES = [
    ("split_heads_tensor", TypeError, "x must be a torch.Tensor, got list"),
    ("merge_heads_tensor", TypeError, "x must be a torch.Tensor, got list"),
    ("mha_num_heads_bool", ValueError, "num_heads must be a positive int, got True"),
    ("mha_num_heads_float", ValueError, "num_heads must be a positive int, got 2.0"),
    ("mha_kdim", ValueError, "kdim must be a positive int, got 0"),
    ("mha_vdim", ValueError, "vdim must be a positive int, got -1"),
    ("mha_embed_dim", ValueError, "embed_dim must be a positive int, got 0"),
    ("mha_value_width", ValueError, "value must have shape (B, Tk, vdim=8), got shape (2, 3, 6)"),
    ("additive_values_ndim", ValueError, "values must have shape (B, Tk, Ev), got shape (5, 6)"),
    ("check_tensor", TypeError, "query must be a torch.Tensor, got list"),
    (
        "check_floating",
        TypeError,
        "query must be a floating-point tensor (float16, bfloat16, float32 or float64), got dtype torch.int64; convert it with query.float()",
    ),
    ("check_min_dims", ValueError, "query must have at least 2 dimensions (..., T, features), got shape (4,)"),
    ("check_ndim", ValueError, "x must have shape (B, T, E), got shape (3, 4)"),
    ("same_dtype", TypeError, "query and key must have the same dtype, got query torch.float32 and key torch.float64"),
    ("same_device", ValueError, "query and key must be on the same device, got query on cpu and key on meta"),
    (
        "module_dtype",
        TypeError,
        "query, key and value must have the module's dtype torch.float32, got torch.float64; convert the module with .to(torch.float64) or the inputs with .to(torch.float32)",
    ),
    ("module_device", ValueError, "query, key and value must be on the module's device cpu, got meta"),
    ("width", ValueError, "keys must have shape (B, Tk, 4), got shape (2, 5, 2)"),
    (
        "batch_size",
        ValueError,
        "queries, keys and values must have the same batch size B, got queries (2, 3, 3), keys (1, 5, 4) and values (1, 5, 6)",
    ),
    (
        "length_tk",
        ValueError,
        "keys and values must have the same length Tk (one value per key), got keys (2, 5, 4) and values (2, 4, 6)",
    ),
    ("dropout", ValueError, "dropout_p must be a float in [0, 1), got 1.0"),
    ("scale_type", TypeError, "scale must be a float or None, got str"),
    ("scale_finite", ValueError, "scale must be a finite float (default 1 / sqrt(E)), got inf"),
    (
        "broadcast_batch",
        ValueError,
        "the batch dimensions (all but the last two) of query and key and value must be equal or broadcastable, got query (3, 3, 4), key (2, 5, 4), value (2, 5, 6)",
    ),
    ("mask_device", ValueError, "attn_mask must be on cpu (where the scores are), got meta"),
    (
        "mask_int",
        TypeError,
        "attn_mask must be a bool tensor (True = may attend) or a float tensor added to the scores, got dtype torch.int64; for a 0/1 mask whose 1 means 'may attend' pass attn_mask.bool(), for one whose 1 means 'blocked' or padding (torch's convention) pass ~attn_mask.bool()",
    ),
    (
        "mask_int_softmax",
        TypeError,
        "mask must be a bool tensor (True = may attend), got dtype torch.int64; for a 0/1 mask whose 1 means 'may attend' pass mask.bool(), for one whose 1 means 'blocked' or padding (torch's convention) pass ~mask.bool()",
    ),
    ("mask_float_softmax", TypeError, "mask must be a bool tensor (True = may attend), got dtype torch.float32"),
    (
        "mask_float_dtype",
        TypeError,
        "a float attn_mask is added to the scores and must have their dtype torch.float32, got torch.float64",
    ),
    (
        "mask_01",
        ValueError,
        "attn_mask is a float tensor of only 0s and 1s; a float mask is added to the scores, so this would shift them instead of masking. If 1 means 'may attend', pass attn_mask.bool(); if 1 means 'blocked', pass ~attn_mask.bool()",
    ),
    (
        "mask_nan",
        ValueError,
        "a float attn_mask must hold finite values or -inf (blocked), got NaN or +inf, which would make the weights NaN",
    ),
    (
        "mask_shape",
        ValueError,
        "attn_mask must broadcast to (..., Tq, Tk) = (2, 3, 5) without enlarging it, got shape (4, 5). A (B, Tk) padding mask needs its query (and head) axes: mask[:, None, :] for 3-D inputs, mask[:, None, None, :] for 4-D inputs",
    ),
    (
        "key_mask_dtype",
        TypeError,
        "key_mask must be a bool tensor (B, Tk), True = real key, got dtype torch.int64; for a 0/1 mask whose 1 means a real key (Hugging Face's attention_mask) pass key_mask.bool(), for torch's key_padding_mask (True or 1 = padding) pass ~key_padding_mask.bool(), and for a float key_padding_mask pass attn_mask=from_key_padding_mask(key_padding_mask) instead",
    ),
    ("key_mask_shape", ValueError, "key_mask must have shape (B, Tk) = (2, 3), got shape (3,)"),
    ("key_mask_device", ValueError, "key_mask must be on cpu (where the inputs are), got meta"),
    ("causal_len", ValueError, "q_len must be a non-negative int, got -1"),
    ("causal_align", ValueError, "align must be one of ('top_left', 'bottom_right'), got 'x'"),
    (
        "valid_lens_dtype",
        TypeError,
        "valid_lens must be an integer tensor or a list of ints (lengths), got dtype torch.float32",
    ),
    ("max_len", ValueError, "max_len must be a non-negative int, got -1"),
    ("valid_lens_range", ValueError, "valid_lens must lie in [0, max_len=4], got values from 1 to 5 in shape (2,)"),
    ("expand_shape", ValueError, "mask must have shape (B, Tk), got shape (3,)"),
    ("expand_ndim", ValueError, "ndim must be an int >= 2, got 1"),
    (
        "kpm_int",
        TypeError,
        "key_padding_mask must be a bool or float tensor (as torch requires), got dtype torch.int64. A 0/1 integer mask says nothing about its polarity: if 1 means padding or blocked (torch's convention), call from_key_padding_mask(key_padding_mask.bool()); if 1 means 'may attend' (attnlib's and Hugging Face's), call from_hf_attention_mask(key_padding_mask)",
    ),
    ("kpm_shape", ValueError, "key_padding_mask must have shape (B, Tk), got shape (3,)"),
    (
        "tam_int",
        TypeError,
        "attn_mask must be a bool or float tensor (as torch requires), got dtype torch.int64. A 0/1 integer mask says nothing about its polarity: if 1 means padding or blocked (torch's convention), call from_torch_attn_mask(attn_mask.bool()); if 1 means 'may attend' (attnlib's and Hugging Face's), call nothing: pass attn_mask.bool() to attnlib as it is",
    ),
    (
        "tam_heads",
        ValueError,
        "a 3-D attn_mask has shape (B * num_heads, Tq, Tk) and needs num_heads, a positive int, got shape (4, 2, 3) and num_heads=0",
    ),
    (
        "tam_divide",
        ValueError,
        "a 3-D attn_mask has shape (B * num_heads, Tq, Tk) and needs num_heads to divide its first dimension, got shape (4, 2, 3) and num_heads=3",
    ),
    ("tam_shape", ValueError, "attn_mask must have shape (Tq, Tk) or (B * H, Tq, Tk), got shape (3,)"),
    ("hf_shape", ValueError, "attention_mask must have shape (B, Tk), got shape (3,)"),
    (
        "hf_values",
        ValueError,
        "attention_mask must hold only 0 (padding) and 1 (attend), got other values; for lengths use from_valid_lens",
    ),
    ("positive_int", ValueError, "num_heads must be a positive int, got 0"),
    (
        "divisible",
        ValueError,
        "embed_dim=10 must be divisible by num_heads=3: each head gets Dh = embed_dim / num_heads features",
    ),
    (
        "mha_3d_mask",
        ValueError,
        "attn_mask must be 2-D (Tq, Tk) or 4-D (B, H or 1, Tq, Tk), got shape (2, 3, 3): a 3-D mask would be read as (H, Tq, Tk), so a (B, 1, Tk) or (B, Tq, Tk) mask gives a wrong answer when B equals H. Add the head axis: attn_mask[:, None], or pass a (B, Tk) padding mask as key_mask",
    ),
    ("from_torch_type", TypeError, "m must be a torch.nn.MultiheadAttention, got Linear"),
    (
        "from_torch_bias_kv",
        ValueError,
        "m was built with add_bias_kv=True (a learned extra key and value); unsupported",
    ),
    (
        "from_torch_zero_attn",
        ValueError,
        "m was built with add_zero_attn=True (an extra all-zero key and value); unsupported",
    ),
    ("additive_positive", ValueError, "key_size must be a positive int, got 0"),
    ("gqa_flag_type", TypeError, "enable_gqa must be True or False, got int 1"),
    ("sdpa_causal_type", TypeError, "is_causal must be True or False, got str 'False'"),
    ("mha_causal_type", TypeError, "is_causal must be True or False, got int 0"),
    ("flash_causal_type", TypeError, "is_causal must be True or False, got str 'False'"),
    ("flash_gqa_type", TypeError, "enable_gqa must be True or False, got str 'yes'"),
    ("flash_lse_type", TypeError, "return_lse must be True or False, got str 'yes'"),
    ("flash_block_size_bool", ValueError, "block_size_q must be a positive int, got True"),
    ("flash_block_size_numpy", ValueError, "block_size_k must be a positive int, got np.int64(0)"),
    (
        "flash_gqa_hint",
        ValueError,
        "query has 6 heads (dim -3) and key and value have 2: pass enable_gqa=True for grouped-query attention (each key/value head shared by 3 query heads), got query (1, 6, 3, 4) and key (1, 2, 5, 4)",
    ),
    (
        "flash_gqa_multiple",
        ValueError,
        "with enable_gqa=True the query heads Hq (dim -3) must be a multiple of the key/value heads Hkv, got query (1, 6, 3, 4) (Hq = 6) and key (1, 4, 5, 4) (Hkv = 4)",
    ),
    (
        "hf_indices",
        hf.UnsupportedAttentionError,
        "Module passes indices= to its attention function (the top-k key indices of DeepSeek's sparse attention, which select a few keys per query); attnlib's attention does not implement it and would compute other numbers than the model's own attention: load the model with attn_implementation=\"eager\" instead",
    ),
    (
        "hf_unknown",
        hf.UnsupportedAttentionError,
        "Module passes alibi_slopes= to its attention function (a keyword attnlib does not know); attnlib's attention does not implement it and would compute other numbers than the model's own attention: load the model with attn_implementation=\"eager\" instead",
    ),
    (
        "hf_position_bias_type",
        hf.UnsupportedAttentionError,
        "Module passes position_bias= to its attention function (expected a float tensor added to the scores, got dtype torch.int64); attnlib's attention does not implement it and would compute other numbers than the model's own attention: load the model with attn_implementation=\"eager\" instead",
    ),
    (
        "hf_softcap_type",
        hf.UnsupportedAttentionError,
        "Module passes softcap= to its attention function (expected a positive float, got 0); attnlib's attention does not implement it and would compute other numbers than the model's own attention: load the model with attn_implementation=\"eager\" instead",
    ),
    (
        "hf_sinks_shape",
        hf.UnsupportedAttentionError,
        "Module passes s_aux= to its attention function (attention sinks of a shape other than (Hq,) or (B, Hq, Tq, 1)); attnlib's attention does not implement it and would compute other numbers than the model's own attention: load the model with attn_implementation=\"eager\" instead",
    ),
    (
        "hf_causal_without_mask",
        ValueError,
        "a causal attention layer received no attention mask, so attnlib would let every token see the future; call attnlib.use_in_transformers() before loading the model, which registers the mask function too",
    ),
    (
        "flash_double_backward",
        RuntimeError,
        "flash_attention has no double backward (create_graph=True): its gradients are computed tile by tile without a graph to differentiate; use attnlib.scaled_dot_product_attention for second derivatives",
    ),
    (
        "gqa_ndim",
        ValueError,
        "query must have at least 3 dimensions (..., H, T, features) with enable_gqa=True, got shape (3, 4)",
    ),
    (
        "gqa_kv_heads",
        ValueError,
        "with enable_gqa=True key and value must have the same number of heads Hkv (dim -3), got key (1, 2, 5, 4) and value (1, 3, 5, 4)",
    ),
    (
        "gqa_multiple",
        ValueError,
        "with enable_gqa=True the query heads Hq (dim -3) must be a multiple of the key/value heads Hkv, got query (1, 6, 3, 4) (Hq = 6) and key (1, 4, 5, 4) (Hkv = 4)",
    ),
    (
        "gqa_hint",
        ValueError,
        "query has 6 heads (dim -3) and key and value have 2: pass enable_gqa=True for grouped-query attention (each key/value head shared by 3 query heads), got query (1, 6, 3, 4) and key (1, 2, 5, 4)",
    ),
    ("flash_block_size_q", ValueError, "block_size_q must be a positive int, got 0"),
    ("flash_block_size_k", ValueError, "block_size_k must be a positive int, got 8.0"),
    (
        "sdpa_e0",
        ValueError,
        "query and key must have a last dimension E of at least 1 for the default scale 1 / sqrt(E), got query (2, 3, 0) and key (2, 5, 0); pass scale= to attend with E = 0",
    ),
    (
        "sdpa_width",
        ValueError,
        "query and key must have the same last dimension E (the dot product runs over it), got query (2, 3, 4) and key (2, 5, 3)",
    ),
    (
        "sdpa_length",
        ValueError,
        "key and value must have the same length Tk (one value per key), got key (2, 5, 4) and value (2, 4, 6)",
    ),
    (
        "sdpa_causal",
        ValueError,
        "attn_mask and is_causal=True cannot be combined; put the causal mask in attn_mask with &",
    ),
    (
        "mha_causal_key_mask",
        ValueError,
        "attn_mask and is_causal=True cannot be combined; put the causal mask in attn_mask with &",
    ),
]


@pytest.mark.parametrize("case,error,message", MESSAGES, ids=[row[0] for row in MESSAGES])
def test_error_message_word_for_word(case, error, message):
    with pytest.raises(error) as info:
        make_cases()[case]()
    assert type(info.value) is error
    assert str(info.value) == message
