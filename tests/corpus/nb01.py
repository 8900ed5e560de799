"""Notebook 01 (Q, K and V): learner answers to its four exercises."""

import math

import numpy as np
import torch
import torch.nn.functional as F

import attnlib

from . import right, wrong

EXERCISES = {"check_shapes": 1, "check_projection_shapes": 2, "check_cross_attention": 3, "check_attention": 4}

# Exercise 1: Q (5, 16), K (7, 16), V (7, 32) -> scores, weights (5, 7), output (5, 32)
EX1 = "nb01.check_shapes"
# Exercise 2: the shapes of W_q, W_k, W_v for a decoder of 4 tokens of width 6 over an encoder of 3 tokens
# of width 2, d_k = 5, Ev = 7 -> (6, 5), (2, 5), (2, 7)
EX2 = "nb01.check_projection_shapes"


# Exercise 4: my_attention(query, key, value) -> (output, weights), with leading axes, without attnlib
EX4 = "nb01.check_attention"


def att_einsum(query, key, value):
    scores = torch.einsum("...qd,...kd->...qk", query, key) / math.sqrt(query.shape[-1])
    weights = torch.softmax(scores, dim=-1)
    return torch.einsum("...qk,...kv->...qv", weights, value), weights


def att_matmul_mT(query, key, value):
    weights = (torch.matmul(query, key.mT) * query.size(-1) ** -0.5).softmax(-1)
    return torch.matmul(weights, value), weights


def att_exp_sum(query, key, value):
    scores = query @ key.transpose(-1, -2) / query.shape[-1] ** 0.5
    e = (scores - scores.amax(dim=-1, keepdim=True)).exp()
    weights = e / e.sum(dim=-1, keepdim=True)
    return weights @ value, weights


def att_loop(query, key, value):
    """Flatten the leading axes and loop over the matrices."""
    lead = query.shape[:-2]
    q = query.reshape(-1, *query.shape[-2:])
    k = key.reshape(-1, *key.shape[-2:])
    v = value.reshape(-1, *value.shape[-2:])
    outs, ws = [], []
    for i in range(q.shape[0]):
        w = F.softmax(q[i] @ k[i].T / math.sqrt(q.shape[-1]), dim=-1)
        ws.append(w)
        outs.append(w @ v[i])
    return torch.stack(outs).reshape(*lead, *outs[0].shape), torch.stack(ws).reshape(*lead, *ws[0].shape)


def att_scale_q_first(query, key, value):
    weights = F.softmax((query / math.sqrt(query.shape[-1])) @ key.transpose(-2, -1), dim=-1)
    return weights @ value, weights


def att_calls_attnlib(query, key, value):  # the library's function, which the prompt rules out
    return attnlib.scaled_dot_product_attention(query, key, value)


def att_torch_output_own_weights(query, key, value):  # torch's output, the weights written out
    weights = torch.softmax(query @ key.transpose(-2, -1) * query.shape[-1] ** -0.5, dim=-1)
    return F.scaled_dot_product_attention(query, key, value), weights


def att_dot_T(query, key, value):  # .T: fine on matrices, reverses every axis of a 4-D tensor
    weights = F.softmax(query @ key.T / math.sqrt(query.shape[-1]), dim=-1)
    return weights @ value, weights


def att_transpose01(query, key, value):  # transpose(0, 1): the last two axes only for matrices
    weights = F.softmax(query @ key.transpose(0, 1) / math.sqrt(query.shape[-1]), dim=-1)
    return weights @ value, weights


def att_dim_minus2(query, key, value):
    weights = F.softmax(query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1]), dim=-2)
    return weights @ value, weights


def att_unscaled(query, key, value):
    weights = F.softmax(query @ key.transpose(-2, -1), dim=-1)
    return weights @ value, weights


def att_scale_ev(query, key, value):
    weights = F.softmax(query @ key.transpose(-2, -1) / math.sqrt(value.shape[-1]), dim=-1)
    return weights @ value, weights


def att_swapped_return(query, key, value):
    weights = F.softmax(query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1]), dim=-1)
    return weights, weights @ value


def att_output_only(query, key, value):
    weights = F.softmax(query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1]), dim=-1)
    return weights @ value


def att_scale_tk(query, key, value):
    weights = F.softmax(query @ key.transpose(-2, -1) / math.sqrt(key.shape[-2]), dim=-1)
    return weights @ value, weights


# Exercise 3: my_cross_attention(decoder, encoder, W_q, W_k, W_v) -> (output, weights)
EX3 = "nb01.check_cross_attention"


def cross_mine(decoder, encoder, W_q, W_k, W_v):
    return att_einsum(decoder @ W_q, encoder @ W_k, encoder @ W_v)


def cross_matmul(decoder, encoder, W_q, W_k, W_v):
    q, k, v = torch.matmul(decoder, W_q), torch.matmul(encoder, W_k), torch.matmul(encoder, W_v)
    weights = torch.softmax(q @ k.T / math.sqrt(W_q.shape[1]), dim=-1)
    return weights @ v, weights


def cross_transposed_weights(decoder, encoder, W_q, W_k, W_v):
    q = (W_q.T @ decoder.T).T
    k = (W_k.T @ encoder.T).T
    v = (W_v.T @ encoder.T).T
    return attnlib.scaled_dot_product_attention(q, k, v)


def cross_torch_sdpa(decoder, encoder, W_q, W_k, W_v):
    q, k, v = decoder @ W_q, encoder @ W_k, encoder @ W_v
    output = F.scaled_dot_product_attention(q[None], k[None], v[None])[0]
    weights = torch.softmax(q @ k.T / math.sqrt(q.shape[-1]), dim=-1)
    return output, weights


def cross_unprojected_values(decoder, encoder, W_q, W_k, W_v):
    return attnlib.scaled_dot_product_attention(decoder @ W_q, encoder @ W_k, encoder)


def cross_roles_swapped(decoder, encoder, W_q, W_k, W_v):  # the encoder asks: fails or gives (Tk, ...)
    return attnlib.scaled_dot_product_attention(encoder @ W_q, decoder @ W_k, decoder @ W_v)


def cross_values_from_decoder(decoder, encoder, W_q, W_k, W_v):
    return attnlib.scaled_dot_product_attention(decoder @ W_q, encoder @ W_k, decoder @ W_v)


def cross_unscaled(decoder, encoder, W_q, W_k, W_v):
    q, k, v = decoder @ W_q, encoder @ W_k, encoder @ W_v
    weights = torch.softmax(q @ k.T, dim=-1)
    return weights @ v, weights


def cross_swapped_return(decoder, encoder, W_q, W_k, W_v):
    output, weights = attnlib.scaled_dot_product_attention(decoder @ W_q, encoder @ W_k, encoder @ W_v)
    return weights, output


def cross_self_attention(decoder, encoder, W_q, W_k, W_v):  # keys and values from the decoder as well
    return attnlib.scaled_dot_product_attention(decoder @ W_q, decoder @ W_k, decoder @ W_v)


def att_mT_and_sqrt_size(query, key, value):  # .mT and Tensor.size: another spelling of the same steps
    weights = torch.softmax(query @ key.mT / math.sqrt(key.size(-1)), dim=-1)
    return weights @ value, weights


def att_typed_width(query, key, value):  # d_k typed in from section 3's example (d_k = 2)
    weights = F.softmax(query @ key.transpose(-2, -1) / math.sqrt(2), dim=-1)
    return weights @ value, weights


def att_no_softmax(query, key, value):  # the scaled scores used as weights
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    return scores @ value, scores


def att_dk_not_sqrt(query, key, value):
    weights = F.softmax(query @ key.transpose(-2, -1) / query.shape[-1], dim=-1)
    return weights @ value, weights


def cross_keys_from_decoder(decoder, encoder, W_q, W_k, W_v):
    return attnlib.scaled_dot_product_attention(decoder @ W_q, decoder @ W_k, encoder @ W_v)


def cross_my_attention_inline(decoder, encoder, W_q, W_k, W_v):  # the steps written out, in float64
    q, k, v = (decoder @ W_q).double(), (encoder @ W_k).double(), (encoder @ W_v).double()
    weights = torch.softmax(q @ k.transpose(0, 1) / q.shape[1] ** 0.5, dim=1)
    return weights @ v, weights


def cross_output_only(decoder, encoder, W_q, W_k, W_v):
    return attnlib.scaled_dot_product_attention(decoder @ W_q, encoder @ W_k, encoder @ W_v)[0]


# Learner population L1 (notes/learners/L1): answers that found a gap in the checkers of Exercises 3 and 4
X = torch.tensor([[0.2, 0.3], [0.5, 0.8], [0.9, 0.1]])  # stands for the notebook's X, (3, 2): the encoder of section 5


def cross_softmax_dim0(decoder, encoder, W_q, W_k, W_v):
    q, k, v = decoder @ W_q, encoder @ W_k, encoder @ W_v
    w = F.softmax(q @ k.T / math.sqrt(k.shape[-1]), dim=0)
    return w @ v, w


def cross_scale_decoder_width(decoder, encoder, W_q, W_k, W_v):
    q, k, v = decoder @ W_q, encoder @ W_k, encoder @ W_v
    w = F.softmax(q @ k.T / math.sqrt(decoder.shape[-1]), dim=-1)
    return w @ v, w


def cross_scale_ev(decoder, encoder, W_q, W_k, W_v):
    q, k, v = decoder @ W_q, encoder @ W_k, encoder @ W_v
    w = F.softmax(q @ k.T / math.sqrt(v.shape[-1]), dim=-1)
    return w @ v, w


def cross_scaled_twice(decoder, encoder, W_q, W_k, W_v):  # by hand, and again inside attnlib's function
    q = decoder @ W_q / math.sqrt(W_q.shape[1])
    return attnlib.scaled_dot_product_attention(q, encoder @ W_k, encoder @ W_v)


def cross_linear_layout(decoder, encoder, W_q, W_k, W_v):  # the nn.Linear habit: x @ W.T
    return attnlib.scaled_dot_product_attention(decoder @ W_q.T, encoder @ W_k.T, encoder @ W_v.T)


def cross_global_x(decoder, encoder, W_q, W_k, W_v):  # the worked cell copied: the encoder is the notebook's X
    return attnlib.scaled_dot_product_attention(decoder @ W_q, X @ W_k, X @ W_v)


def att_typed_16(query, key, value):  # d_k = 16 from Exercise 1, typed in
    weights = F.softmax(query @ key.transpose(-2, -1) / math.sqrt(16), dim=-1)
    return weights @ value, weights


def att_width_shape1(query, key, value):  # the width for matrices; H or Tq with axes in front
    weights = F.softmax(query @ key.transpose(-2, -1) / math.sqrt(query.shape[1]), dim=-1)
    return weights @ value, weights


def att_permute_4d(query, key, value):  # axes numbered for (B, H, T, d_k) only
    weights = F.softmax(query @ key.permute(0, 1, 3, 2) / math.sqrt(query.shape[-1]), dim=-1)
    return weights @ value, weights


def att_softmax_dim3(query, key, value):
    weights = F.softmax(query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1]), dim=3)
    return weights @ value, weights


# Learner population L4 (notes/learners/L4): answers whose hint blamed another mistake, or was generic
def att_weights_at_keys(query, key, value):  # the keys mixed instead of the values
    w = F.softmax(query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1]), dim=-1)
    return w @ key, w


def att_scaled_after_softmax(query, key, value):
    w = F.softmax(query @ key.transpose(-2, -1), dim=-1) / math.sqrt(query.shape[-1])
    return w @ value, w


def cross_scaled_after_softmax(decoder, encoder, W_q, W_k, W_v):
    q, k, v = decoder @ W_q, encoder @ W_k, encoder @ W_v
    w = F.softmax(q @ k.T, dim=-1) / math.sqrt(q.shape[-1])
    return w @ v, w


def cross_values_with_W_k(decoder, encoder, W_q, W_k, W_v):
    q, k = decoder @ W_q, encoder @ W_k
    return attnlib.scaled_dot_product_attention(q, k, encoder @ W_k)


def cross_decoder_times_W_q(decoder, encoder, W_q, W_k, W_v):  # self-attention on the decoder, W_q thrice
    return attnlib.scaled_dot_product_attention(decoder @ W_q, decoder @ W_q, decoder @ W_q)


def cross_W_k_W_v_swapped(decoder, encoder, W_q, W_k, W_v):
    return attnlib.scaled_dot_product_attention(decoder @ W_q, encoder @ W_v, encoder @ W_k)


ANSWERS = [
    # Exercise 1
    right(EX1, "tuples", lambda: ((5, 7), (5, 7), (5, 32)), star=True),
    right(EX1, "lists", lambda: ([5, 7], [5, 7], [5, 32]), star=True),
    right(EX1, "torch-size", lambda: (torch.Size([5, 7]), torch.Size([5, 7]), torch.Size([5, 32])), star=True),
    right(EX1, "numpy-arrays", lambda: (np.array([5, 7]), np.array([5, 7]), np.array([5, 32])), star=True),
    right(EX1, "numpy-ints", lambda: ((np.int64(5), np.int64(7)),) * 2 + ((np.int64(5), np.int64(32)),), star=True),
    right(EX1, "computed-shapes", lambda: (tuple(torch.empty(5, 16).matmul(torch.empty(16, 7)).shape),
                                           torch.empty(5, 7).softmax(-1).shape,
                                           torch.empty(5, 7).matmul(torch.empty(7, 32)).shape), star=True),
    wrong(EX1, "scores-transposed", lambda: ((7, 5), (7, 5), (5, 32)), ("Tq", "quer", "row"), star=True),
    wrong(EX1, "output-width-dk", lambda: ((5, 7), (5, 7), (5, 16)), ("Ev", "value"), star=True),
    wrong(EX1, "output-rows-tk", lambda: ((5, 7), (5, 7), (7, 32)), star=True),
    wrong(EX1, "scores-keep-dk", lambda: ((5, 16), (5, 16), (5, 32)), ("Tk", "key"), star=True),
    wrong(EX1, "weights-reduced", lambda: ((5, 7), (5,), (5, 32)), star=True),
    wrong(EX1, "output-as-weights", lambda: ((5, 7), (5, 7), (5, 7)), ("weights @ V", "values", "width"), star=True),
    wrong(EX1, "strings", lambda: ("(5, 7)", "(5, 7)", "(5, 32)"), ("tuple", "string", "str"), star=True),
    # Exercise 2
    right(EX2, "tuples", lambda: ((6, 5), (2, 5), (2, 7)), star=True),
    right(EX2, "lists", lambda: ([6, 5], [2, 5], [2, 7]), star=True),
    right(EX2, "torch-size-of-zeros", lambda: (torch.zeros(6, 5).shape, torch.zeros(2, 5).shape,
                                               torch.zeros(2, 7).shape), star=True),
    right(EX2, "numpy-shapes", lambda: (np.empty((6, 5)).shape, np.empty((2, 5)).shape, np.empty((2, 7)).shape),
          star=True),
    right(EX2, "floats", lambda: ((6.0, 5.0), (2.0, 5.0), (2.0, 7.0)), star=True),
    wrong(EX2, "nn-linear-layout", lambda: ((5, 6), (5, 2), (7, 2)), ("nn.Linear", "rows", "transpose", "weight"),
          star=True),
    wrong(EX2, "query-from-encoder", lambda: ((2, 5), (2, 5), (2, 7)), ("decoder", "quer"), star=True),
    wrong(EX2, "keys-from-decoder", lambda: ((6, 5), (6, 5), (2, 7)), ("encoder", "key"), star=True),
    wrong(EX2, "values-d_k-wide", lambda: ((6, 5), (2, 5), (2, 5)), star=True),
    wrong(EX2, "values-from-decoder", lambda: ((6, 5), (2, 5), (6, 7)), ("encoder", "value"), star=True),
    wrong(EX2, "lengths-not-widths", lambda: ((4, 5), (3, 5), (3, 7)), ("length", "width"), star=True),
    wrong(EX2, "queries-Ev-wide", lambda: ((6, 7), (2, 5), (2, 7)), star=True),
    # Exercise 4
    right(EX4, "einsum", lambda: att_einsum),
    right(EX4, "matmul-mT", lambda: att_matmul_mT),
    right(EX4, "exp-over-sum", lambda: att_exp_sum),
    right(EX4, "python-loop", lambda: att_loop),
    right(EX4, "scale-queries-first", lambda: att_scale_q_first),
    right(EX4, "mT-and-size", lambda: att_mT_and_sqrt_size),
    wrong(EX4, "torch-output-own-weights", lambda: att_torch_output_own_weights, ("torch", "yourself"),
          note="the output must be weights @ value: torch's fused function is refused like attnlib's"),
    wrong(EX4, "calls-attnlib", lambda: att_calls_attnlib, ("yourself", "attnlib")),
    wrong(EX4, "dot-T", lambda: att_dot_T, ("transpose", ".T", "batch", "axes", "leading")),
    wrong(EX4, "transpose-0-1", lambda: att_transpose01, ("transpose", "batch", "axes", "leading", "-2")),
    wrong(EX4, "softmax-dim-2", lambda: att_dim_minus2, ("axis", "dim", "keys")),
    wrong(EX4, "unscaled", lambda: att_unscaled, ("scale", "sqrt", "√")),
    wrong(EX4, "scaled-by-sqrt-ev", lambda: att_scale_ev, ("d_k", "Ev", "width", "value")),
    wrong(EX4, "scaled-by-sqrt-tk", lambda: att_scale_tk, ("d_k", "width", "Tk")),
    wrong(EX4, "divided-by-dk", lambda: att_dk_not_sqrt, ("square root", "sqrt")),
    wrong(EX4, "typed-width-2", lambda: att_typed_width, ("d_k", "width", "follow")),
    wrong(EX4, "no-softmax", lambda: att_no_softmax),
    wrong(EX4, "returns-weights-output", lambda: att_swapped_return, ("order", "(output, weights)", "first")),
    wrong(EX4, "returns-output-only", lambda: att_output_only, ("tuple", "pair", "both", "output, weights", "two")),
    # Exercise 3
    right(EX3, "own-attention", lambda: cross_mine),
    right(EX3, "matmul-softmax", lambda: cross_matmul),
    right(EX3, "transposed-projection", lambda: cross_transposed_weights),
    right(EX3, "torch-sdpa-output", lambda: cross_torch_sdpa),
    right(EX3, "inline-float64", lambda: cross_my_attention_inline),
    wrong(EX3, "values-not-projected", lambda: cross_unprojected_values),
    wrong(EX3, "roles-swapped", lambda: cross_roles_swapped, ("decoder", "encoder", "quer")),
    wrong(EX3, "values-from-decoder", lambda: cross_values_from_decoder, ("encoder", "value")),
    wrong(EX3, "keys-from-decoder", lambda: cross_keys_from_decoder, ("encoder", "key")),
    wrong(EX3, "self-attention", lambda: cross_self_attention, ("encoder", "key")),
    wrong(EX3, "unscaled", lambda: cross_unscaled),
    wrong(EX3, "returns-weights-output", lambda: cross_swapped_return, ("order", "(output, weights)", "first")),
    wrong(EX3, "returns-output-only", lambda: cross_output_only, ("pair", "one tensor", "output, weights")),
    # Learner population L1
    wrong(EX1, "scores-as-output", lambda: ((5, 32), (5, 7), (5, 7)), star=True),
    wrong(EX1, "output-transposed", lambda: ((5, 7), (5, 7), (32, 5)), ("transposed", "row per query"), star=True),
    wrong(EX2, "keys-and-values-from-decoder", lambda: ((6, 5), (6, 5), (6, 7)), ("must fit",), star=True),
    wrong(EX3, "softmax-dim-0", lambda: cross_softmax_dim0),
    wrong(EX3, "scaled-by-decoder-width", lambda: cross_scale_decoder_width),
    wrong(EX3, "scaled-by-sqrt-ev", lambda: cross_scale_ev),
    wrong(EX3, "scaled-twice", lambda: cross_scaled_twice),
    wrong(EX3, "nn-linear-layout", lambda: cross_linear_layout, ("transposed", "nn.Linear")),
    wrong(EX3, "global-X-as-encoder", lambda: cross_global_x),
    wrong(EX4, "typed-sqrt-16", lambda: att_typed_16, ("typed",),
          note="on a first probe of d_k = 4, sqrt(16) was read as d_k itself"),
    wrong(EX4, "width-from-shape-1", lambda: att_width_shape1, ("shape[1]", "last axis")),
    wrong(EX4, "permute-4-axes", lambda: att_permute_4d),
    wrong(EX4, "softmax-dim-3", lambda: att_softmax_dim3),
    # Learner population L4
    wrong(EX4, "weights-at-keys", lambda: att_weights_at_keys,
          note="was told its scale 0.378 = 1/sqrt(7), the right one, did not follow d_k"),
    wrong(EX4, "scaled-after-softmax", lambda: att_scaled_after_softmax),
    wrong(EX3, "scaled-after-softmax", lambda: cross_scaled_after_softmax),
    wrong(EX3, "values-with-W_k", lambda: cross_values_with_W_k),
    wrong(EX3, "decoder-times-W_q-thrice", lambda: cross_decoder_times_W_q),
    wrong(EX3, "W_k-W_v-swapped", lambda: cross_W_k_W_v_swapped,
          note="raised attnlib's ValueError, which the hint quoted"),
]
