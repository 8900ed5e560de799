"""Notebook 01 (Q, K and V): learner answers to its five exercises."""

import math

import numpy as np
import torch
import torch.nn.functional as F

import attnlib

from . import right, wrong

EXERCISES = {"check_shapes": 1, "check_cross_shapes": 2, "check_weights": 3, "check_attention": 4,
             "check_cross_attention": 5}

# Exercise 1: Tq = 5, Tk = 7, d_k = 16, Ev = 32 -> scores, weights (5, 7), output (5, 32)
EX1 = "nb01.check_shapes"
# Exercise 2: 2 decoder tokens of width 6, 5 encoder tokens of width 8, d_k = 4, Ev = 3 -> (2, 5), (2, 3)
EX2 = "nb01.check_cross_shapes"


def _ex3_inputs():
    """The cell of exercise 3: queries (3, 4), keys (5, 4), values (5, 9)."""
    g = torch.Generator().manual_seed(3)
    ex_q = torch.randn(3, 4, generator=g)
    ex_k = torch.randn(5, 4, generator=g)
    ex_v = torch.randn(5, 9, generator=g)
    return ex_q, ex_k, ex_v


def _w_einsum():
    q, k, _ = _ex3_inputs()
    return torch.einsum("qd,kd->qk", q, k).div(math.sqrt(4)).softmax(dim=-1)


def _w_exp_sum():
    q, k, _ = _ex3_inputs()
    s = q @ k.T / 2
    e = torch.exp(s - s.max(dim=1, keepdim=True).values)
    return e / e.sum(dim=1, keepdim=True)


def _w_loop():
    q, k, _ = _ex3_inputs()
    rows = []
    for i in range(q.shape[0]):
        rows.append(F.softmax(torch.stack([q[i] @ k[j] for j in range(k.shape[0])]) / math.sqrt(q.shape[1]), dim=0))
    return torch.stack(rows)


def _w_float64():
    q, k, _ = _ex3_inputs()
    return torch.softmax(q.double() @ k.double().T / math.sqrt(4), dim=-1)


def _w_numpy():
    q, k, _ = _ex3_inputs()
    return F.softmax(q @ k.T / math.sqrt(4), dim=-1).numpy()


def _w_dim0():
    q, k, _ = _ex3_inputs()
    return F.softmax(q @ k.T / math.sqrt(4), dim=0)


def _w_unscaled():
    q, k, _ = _ex3_inputs()
    return F.softmax(q @ k.T, dim=-1)


def _w_scale_ev():
    q, k, v = _ex3_inputs()
    return F.softmax(q @ k.T / math.sqrt(v.shape[-1]), dim=-1)


def _w_scale_dk_no_sqrt():
    q, k, _ = _ex3_inputs()
    return F.softmax(q @ k.T / q.shape[-1], dim=-1)


def _w_transposed():
    q, k, _ = _ex3_inputs()
    return F.softmax(k @ q.T / math.sqrt(4), dim=-1)


def _w_output():
    q, k, v = _ex3_inputs()
    return F.softmax(q @ k.T / math.sqrt(4), dim=-1) @ v


def _w_times_sqrt():
    q, k, _ = _ex3_inputs()
    return F.softmax(q @ k.T * math.sqrt(4), dim=-1)


# Exercise 4: my_attention(query, key, value) -> (output, weights), with leading axes
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


# Exercise 5: my_cross_attention(decoder, encoder, W_q, W_k, W_v) -> (output, weights)
EX5 = "nb01.check_cross_attention"


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
    wrong(EX1, "output-rows-tk", lambda: ((5, 7), (5, 7), (7, 32)), ("Tq", "quer", "row"), star=True),
    wrong(EX1, "scores-keep-dk", lambda: ((5, 16), (5, 16), (5, 32)), ("Tk", "key"), star=True),
    wrong(EX1, "weights-reduced", lambda: ((5, 7), (5,), (5, 32)), ("shape", "softmax"), star=True),
    wrong(EX1, "strings", lambda: ("(5, 7)", "(5, 7)", "(5, 32)"), ("tuple", "string", "str"), star=True),
    # Exercise 2
    right(EX2, "tuples", lambda: ((2, 5), (2, 3)), star=True),
    right(EX2, "lists", lambda: ([2, 5], [2, 3]), star=True),
    right(EX2, "torch-size", lambda: (torch.Size([2, 5]), torch.Size([2, 3])), star=True),
    right(EX2, "numpy-arrays", lambda: (np.array([2, 5]), np.array([2, 3])), star=True),
    right(EX2, "tensors", lambda: (torch.tensor([2, 5]), torch.tensor([2, 3])), star=True),
    wrong(EX2, "weights-transposed", lambda: ((5, 2), (2, 3)), ("Tq", "decoder", "row"), star=True),
    wrong(EX2, "output-width-dk", lambda: ((2, 5), (2, 4)), ("Ev", "value"), star=True),
    wrong(EX2, "output-width-encoder", lambda: ((2, 5), (2, 8)), ("Ev", "value", "W_v"), star=True),
    wrong(EX2, "output-rows-encoder", lambda: ((2, 5), (5, 3)), ("Tq", "decoder", "row"), star=True),
    wrong(EX2, "self-attention-shapes", lambda: ((2, 2), (2, 3)), ("Tk", "encoder", "key"), star=True),
    # Exercise 3
    right("nb01.check_weights", "einsum", _w_einsum),
    right("nb01.check_weights", "exp-over-sum", _w_exp_sum),
    right("nb01.check_weights", "python-loop", _w_loop),
    right("nb01.check_weights", "float64", _w_float64),
    right("nb01.check_weights", "numpy-array", _w_numpy),
    wrong("nb01.check_weights", "softmax-dim0", _w_dim0, ("axis", "dim", "column", "row")),
    wrong("nb01.check_weights", "unscaled", _w_unscaled, ("scale", "sqrt", "√")),
    wrong("nb01.check_weights", "scaled-by-sqrt-ev", _w_scale_ev, ("d_k", "Ev", "width", "9")),
    wrong("nb01.check_weights", "divided-by-dk", _w_scale_dk_no_sqrt, ("sqrt", "√", "square root")),
    wrong("nb01.check_weights", "keys-times-queries", _w_transposed, ("shape", "transpos", "(3, 5)")),
    wrong("nb01.check_weights", "output-not-weights", _w_output, ("shape", "weights", "(3, 5)")),
    wrong("nb01.check_weights", "multiplied-by-sqrt", _w_times_sqrt, ("divide", "sqrt", "√", "scale")),
    # Exercise 4
    right(EX4, "einsum", lambda: att_einsum),
    right(EX4, "matmul-mT", lambda: att_matmul_mT),
    right(EX4, "exp-over-sum", lambda: att_exp_sum),
    right(EX4, "python-loop", lambda: att_loop),
    right(EX4, "scale-queries-first", lambda: att_scale_q_first),
    wrong(EX4, "dot-T", lambda: att_dot_T, ("transpose", ".T", "batch", "axes", "leading")),
    wrong(EX4, "transpose-0-1", lambda: att_transpose01, ("transpose", "batch", "axes", "leading", "-2")),
    wrong(EX4, "softmax-dim-2", lambda: att_dim_minus2, ("axis", "dim", "keys")),
    wrong(EX4, "unscaled", lambda: att_unscaled, ("scale", "sqrt", "√")),
    wrong(EX4, "scaled-by-sqrt-ev", lambda: att_scale_ev, ("d_k", "Ev", "width", "value")),
    wrong(EX4, "scaled-by-sqrt-tk", lambda: att_scale_tk, ("d_k", "width", "Tk")),
    wrong(EX4, "returns-weights-output", lambda: att_swapped_return, ("order", "(output, weights)", "first")),
    wrong(EX4, "returns-output-only", lambda: att_output_only, ("tuple", "pair", "both", "output, weights", "two")),
    # Exercise 5
    right(EX5, "own-attention", lambda: cross_mine),
    right(EX5, "matmul-softmax", lambda: cross_matmul),
    right(EX5, "transposed-projection", lambda: cross_transposed_weights),
    right(EX5, "torch-sdpa-output", lambda: cross_torch_sdpa),
    wrong(EX5, "values-not-projected", lambda: cross_unprojected_values, ("W_v", "value", "project")),
    wrong(EX5, "roles-swapped", lambda: cross_roles_swapped, ("decoder", "encoder", "quer")),
    wrong(EX5, "values-from-decoder", lambda: cross_values_from_decoder, ("encoder", "value")),
    wrong(EX5, "self-attention", lambda: cross_self_attention, ("encoder", "key")),
    wrong(EX5, "unscaled", lambda: cross_unscaled, ("scale", "sqrt", "√")),
    wrong(EX5, "returns-weights-output", lambda: cross_swapped_return, ("order", "(output, weights)", "first")),
]
