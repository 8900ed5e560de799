"""Notebook 07 (positional encoding): learner answers to its four exercises."""

import math

import numpy as np
import torch

from attnlib import sinusoidal_positions

from . import right, wrong

EXERCISES = {"check_permuted_rows": 1, "check_sinusoidal": 2, "check_rope_rotate_half": 3, "check_decode_bugs": 4}

EX1 = "nb07.check_permuted_rows"  # "man bites dog": rows [2, 1, 0] of "dog bites man"'s output
EX2 = "nb07.check_sinusoidal"
EX3 = "nb07.check_rope_rotate_half"
EX4 = "nb07.check_decode_bugs"  # lines A and C are wrong


# Exercise 2: sinusoidal_fixed(T, E, base=10000.0) -> (T, E)
def sin_stack(T, E, base=10000.0):
    pos = torch.arange(T, dtype=torch.float32)[:, None]
    freq = base ** (-torch.arange(0, E, 2, dtype=torch.float32) / E)  # (E/2,): 2i / E for i < E/2
    angle = pos * freq
    return torch.stack([torch.sin(angle), torch.cos(angle)], dim=-1).reshape(T, E)  # sin, cos, sin, cos...


def sin_exp_log(T, E, base=10000.0):  # the frequencies as exp(-2i log(base) / E), as in many tutorials
    pe = torch.zeros(T, E)
    position = torch.arange(0, T).unsqueeze(1).float()
    div_term = torch.exp(torch.arange(0, E, 2).float() * (-math.log(base) / E))
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe


def sin_loop(T, E, base=10000.0):
    pe = torch.empty(T, E)
    for t in range(T):
        for i in range(E // 2):
            pe[t, 2 * i] = math.sin(t / base ** (2 * i / E))
            pe[t, 2 * i + 1] = math.cos(t / base ** (2 * i / E))
    return pe


def sin_float64(T, E, base=10000.0):
    i = torch.arange(E // 2, dtype=torch.float64)
    angle = torch.arange(T, dtype=torch.float64)[:, None] / base ** (2 * i / E)
    pe = torch.zeros(T, E, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = angle.sin(), angle.cos()
    return pe.float()


def sin_attnlib(T, E, base=10000.0):
    return sinusoidal_positions(T, E, base)


def sin_colleague(T, E, base=10000.0):  # the colleague's code, unchanged
    j = torch.arange(E)
    angle = torch.arange(T)[:, None] / base ** (2 * j / E)
    pe = torch.cos(angle)
    pe[:, 1::2] = torch.sin(angle[:, 1::2])
    return pe


def sin_feature_index(T, E, base=10000.0):  # sin/cos fixed, but one frequency per feature, not per pair
    j = torch.arange(E)
    angle = torch.arange(T)[:, None] / base ** (2 * j / E)
    pe = torch.zeros(T, E)
    pe[:, 0::2] = torch.sin(angle[:, 0::2])
    pe[:, 1::2] = torch.cos(angle[:, 1::2])
    return pe


def sin_cos_swapped(T, E, base=10000.0):  # pair frequencies fixed, sin and cos still swapped
    i = torch.arange(E // 2)
    angle = torch.arange(T)[:, None] / base ** (2 * i / E)
    pe = torch.zeros(T, E)
    pe[:, 0::2] = torch.cos(angle)
    pe[:, 1::2] = torch.sin(angle)
    return pe


def sin_halves(T, E, base=10000.0):  # all sines, then all cosines
    i = torch.arange(E // 2)
    angle = torch.arange(T)[:, None] / base ** (2 * i / E)
    return torch.cat([torch.sin(angle), torch.cos(angle)], dim=-1)


def sin_missing_two(T, E, base=10000.0):  # base ** (i / E)
    i = torch.arange(E // 2)
    angle = torch.arange(T)[:, None] / base ** (i / E)
    pe = torch.zeros(T, E)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(angle), torch.cos(angle)
    return pe


def sin_from_one(T, E, base=10000.0):  # positions 1..T
    i = torch.arange(E // 2)
    angle = torch.arange(1, T + 1)[:, None] / base ** (2 * i / E)
    pe = torch.zeros(T, E)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(angle), torch.cos(angle)
    return pe


def sin_times(T, E, base=10000.0):  # t * base ** (2i / E): the frequency upside down
    i = torch.arange(E // 2)
    angle = torch.arange(T)[:, None] * base ** (2 * i / E)
    pe = torch.zeros(T, E)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(angle), torch.cos(angle)
    return pe


# Exercise 3: rope_rotate_half(x, positions, base=10000.0), pair i = features (i, i + D/2)
def _angles(positions, D, base):
    theta = base ** (-torch.arange(0, D, 2, dtype=torch.float32) / D)  # (D/2,)
    return positions.float()[:, None] * theta  # (T, D/2)


def rope_llama(x, positions, base=10000.0):  # Hugging Face's rotate_half and cos/sin of width D
    def rotate_half(t):
        t1, t2 = t[..., : t.shape[-1] // 2], t[..., t.shape[-1] // 2:]
        return torch.cat((-t2, t1), dim=-1)
    angle = _angles(positions, x.shape[-1], base)
    emb = torch.cat((angle, angle), dim=-1)
    return x * emb.cos() + rotate_half(x) * emb.sin()


def rope_complex(x, positions, base=10000.0):
    D = x.shape[-1]
    z = torch.complex(x[:, : D // 2].double(), x[:, D // 2:].double())  # pair i as a + ib
    z = z * torch.polar(torch.ones(1, dtype=torch.float64), _angles(positions, D, base).double())
    return torch.cat([z.real, z.imag], dim=-1).to(x.dtype)


def rope_chunk(x, positions, base=10000.0):
    a, b = x.chunk(2, dim=-1)
    angle = _angles(positions, x.shape[-1], base)
    cos, sin = angle.cos(), angle.sin()
    return torch.cat([a * cos - b * sin, b * cos + a * sin], dim=-1)


def rope_loop(x, positions, base=10000.0):
    T, D = x.shape
    out = x.clone()
    for t in range(T):
        for i in range(D // 2):
            ang = float(positions[t]) * base ** (-2 * i / D)
            a, b = float(x[t, i]), float(x[t, i + D // 2])
            out[t, i] = a * math.cos(ang) - b * math.sin(ang)
            out[t, i + D // 2] = a * math.sin(ang) + b * math.cos(ang)
    return out


def rope_interleaved(x, positions, base=10000.0):  # RoFormer's pairs (2i, 2i + 1)
    a, b = x[:, 0::2], x[:, 1::2]
    angle = _angles(positions, x.shape[-1], base)
    out = torch.empty_like(x)
    out[:, 0::2] = a * angle.cos() - b * angle.sin()
    out[:, 1::2] = a * angle.sin() + b * angle.cos()
    return out


def rope_backwards(x, positions, base=10000.0):  # turns by -angle
    a, b = x.chunk(2, dim=-1)
    angle = _angles(positions, x.shape[-1], base)
    return torch.cat([a * angle.cos() + b * angle.sin(), -a * angle.sin() + b * angle.cos()], dim=-1)


def rope_arange_positions(x, positions, base=10000.0):  # ignores the positions: 0..T-1
    return rope_chunk(x, torch.arange(x.shape[0]), base)


def rope_missing_two(x, positions, base=10000.0):
    D = x.shape[-1]
    theta = base ** (-torch.arange(D // 2) / D)
    angle = positions[:, None] * theta
    a, b = x.chunk(2, dim=-1)
    return torch.cat([a * angle.cos() - b * angle.sin(), a * angle.sin() + b * angle.cos()], dim=-1)


def rope_halves_swapped(x, positions, base=10000.0):  # the two halves of the result in the wrong order
    a, b = x.chunk(2, dim=-1)
    angle = _angles(positions, x.shape[-1], base)
    return torch.cat([a * angle.sin() + b * angle.cos(), a * angle.cos() - b * angle.sin()], dim=-1)


ANSWERS = [
    # Exercise 1
    right(EX1, "list", lambda: [2, 1, 0]),
    right(EX1, "tuple", lambda: (2, 1, 0)),
    right(EX1, "tensor", lambda: torch.tensor([2, 1, 0])),
    right(EX1, "numpy-array", lambda: np.array([2, 1, 0])),
    right(EX1, "reversed-range", lambda: list(range(2, -1, -1))),
    right(EX1, "numpy-ints", lambda: [np.int64(2), np.int64(1), np.int64(0)]),
    wrong(EX1, "positions-keep", lambda: [0, 1, 2], ("word", "position", "follow", "permut")),
    wrong(EX1, "new-vectors", lambda: "new", ("permut", "same", "position", "order")),
    wrong(EX1, "rotated", lambda: [1, 2, 0], ("word", "man", "dog", "row")),
    wrong(EX1, "one-index", lambda: [3, 2, 1], ("0", "index", "row")),
    wrong(EX1, "set", lambda: {0, 1, 2}),
    wrong(EX1, "string", lambda: "[2, 1, 0]", ("list", "string", "quote")),
    # Exercise 2
    right(EX2, "stack-interleave", lambda: sin_stack),
    right(EX2, "exp-log-div-term", lambda: sin_exp_log),
    right(EX2, "python-loop", lambda: sin_loop),
    right(EX2, "float64-inside", lambda: sin_float64),
    right(EX2, "attnlib", lambda: sin_attnlib),
    wrong(EX2, "colleague-unchanged", lambda: sin_colleague, ("pair", "sin", "even", "2i")),
    wrong(EX2, "feature-index", lambda: sin_feature_index, ("pair", "2i", "frequency", "i = j // 2", "index")),
    wrong(EX2, "sin-cos-swapped", lambda: sin_cos_swapped, ("sin", "cos", "even")),
    wrong(EX2, "halves", lambda: sin_halves, ("interleav", "even", "odd", "0::2", "alternat")),
    wrong(EX2, "missing-two", lambda: sin_missing_two, ("2i", "frequency", "exponent", "2 * i")),
    wrong(EX2, "positions-from-one", lambda: sin_from_one, ("position", "0", "row 0", "start")),
    wrong(EX2, "frequency-inverted", lambda: sin_times, ("divide", "frequency", "/")),
    # Exercise 3
    right(EX3, "llama-rotate-half", lambda: rope_llama),
    right(EX3, "complex-float64", lambda: rope_complex),
    right(EX3, "chunk", lambda: rope_chunk),
    right(EX3, "python-loop", lambda: rope_loop),
    wrong(EX3, "interleaved-pairs", lambda: rope_interleaved, ("interleav", "pair", "i + D/2", "2i", "half")),
    wrong(EX3, "rotates-backwards", lambda: rope_backwards, ("sign", "direction", "wrong way", "minus", "negative")),
    wrong(EX3, "ignores-positions", lambda: rope_arange_positions, ("positions", "position")),
    wrong(EX3, "missing-two", lambda: rope_missing_two, ("2i", "frequency", "exponent", "2 * i")),
    wrong(EX3, "halves-swapped", lambda: rope_halves_swapped, ("order", "half", "cat", "swap")),
    # Exercise 4
    right(EX4, "set", lambda: {"A", "C"}),
    right(EX4, "list", lambda: ["A", "C"]),
    right(EX4, "tuple-reversed", lambda: ("C", "A")),
    right(EX4, "frozenset", lambda: frozenset("AC")),
    right(EX4, "lowercase", lambda: {"a", "c"}),
    right(EX4, "words", lambda: "A and C", note="issue 21: today it is told 'N is not one of them'"),
    wrong(EX4, "A-and-B", lambda: {"A", "B"}, ("B", "right", "correct", "position t")),
    wrong(EX4, "C-and-D", lambda: {"C", "D"}, ("D", "cached", "right", "correct")),
    wrong(EX4, "only-A", lambda: {"A"}, ("two", "C", "value")),
    wrong(EX4, "three-lines", lambda: {"A", "C", "D"}, ("two", "D", "cached")),
    wrong(EX4, "B-and-D", lambda: {"B", "D"}, ("B", "D", "right", "correct")),
]
