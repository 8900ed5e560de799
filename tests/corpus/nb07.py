"""Notebook 07 (positional encoding): learner answers to its four exercises."""

import math

import numpy as np
import torch

from attnlib import apply_rope

from . import right, wrong

EXERCISES = {"check_permuted_rows": 1, "check_shift_matrix": 2, "check_rope_rotate_half": 3, "check_decode_bugs": 4}

EX1 = "nb07.check_permuted_rows"  # "man bites dog": rows [2, 1, 0] of "dog bites man"'s output
EX2 = "nb07.check_shift_matrix"
EX3 = "nb07.check_rope_rotate_half"
EX4 = "nb07.check_decode_bugs"  # lines A and C are wrong


# Exercise 2: shift_matrix(k, E, base=10000.0) -> (E, E) with PE(t + k) = M_k PE(t)
def shift_blocks(k, E, base=10000.0):  # one 2 x 2 block per pair, entry by entry
    M = torch.zeros(E, E)
    for i in range(E // 2):
        w = base ** (-2 * i / E)
        M[2 * i, 2 * i] = M[2 * i + 1, 2 * i + 1] = math.cos(k * w)
        M[2 * i, 2 * i + 1] = math.sin(k * w)
        M[2 * i + 1, 2 * i] = -math.sin(k * w)
    return M


def shift_block_diag(k, E, base=10000.0):
    angles = k * base ** (-torch.arange(0, E, 2, dtype=torch.float64) / E)  # (E/2,)
    blocks = [torch.tensor([[a.cos(), a.sin()], [-a.sin(), a.cos()]]) for a in angles]
    return torch.block_diag(*blocks)


def shift_by_solving(k, E, base=10000.0):  # M from the encodings themselves: PE(t + k) = M PE(t) for many t
    t = torch.arange(0, 30000, 97, dtype=torch.float64)[:, None]  # slow pairs need long stretches
    w = base ** (-torch.arange(0, E, 2, dtype=torch.float64) / E)
    pe = torch.stack([(t * w).sin(), (t * w).cos()], dim=-1).flatten(1)  # (310, E), sin and cos interleaved
    later = torch.stack([((t + k) * w).sin(), ((t + k) * w).cos()], dim=-1).flatten(1)
    return torch.linalg.lstsq(pe, later).solution.T


def shift_by_rope(k, E, base=10000.0):  # turning back by k: interleaved RoPE at position -k, read as a matrix
    return apply_rope(torch.eye(E, dtype=torch.float64), torch.full((E,), -k), base=base, interleaved=True).T


def shift_other_way(k, E, base=10000.0):  # the blocks of a rotation by +k*w as RoPE writes it: moves back
    return shift_blocks(k, E, base).T


def shift_feature_index(k, E, base=10000.0):  # frequency of pair i from its feature index 2i
    M = torch.zeros(E, E)
    for i in range(E // 2):
        c, s = math.cos(k * base ** (-2 * (2 * i) / E)), math.sin(k * base ** (-2 * (2 * i) / E))
        M[2 * i: 2 * i + 2, 2 * i: 2 * i + 2] = torch.tensor([[c, s], [-s, c]])
    return M


def shift_missing_two(k, E, base=10000.0):
    M = torch.zeros(E, E)
    for i in range(E // 2):
        c, s = math.cos(k * base ** (-i / E)), math.sin(k * base ** (-i / E))
        M[2 * i: 2 * i + 2, 2 * i: 2 * i + 2] = torch.tensor([[c, s], [-s, c]])
    return M


def shift_k_radians(k, E, base=10000.0):  # every pair turned by k radians
    c, s = math.cos(k), math.sin(k)
    return torch.block_diag(*[torch.tensor([[c, s], [-s, c]])] * (E // 2))


def shift_rotate_half_layout(k, E, base=10000.0):  # pairs (i, i + E/2), as RoPE's rotate-half
    M = torch.zeros(E, E)
    for i in range(E // 2):
        c, s = math.cos(k * base ** (-2 * i / E)), math.sin(k * base ** (-2 * i / E))
        j = i + E // 2
        M[i, i], M[i, j], M[j, i], M[j, j] = c, s, -s, c
    return M


def shift_notebook_width(k, E, base=10000.0):  # the notebook's E = 32, hard-coded
    return shift_blocks(k, 32, base)


def shift_without_k(k, E, base=10000.0):  # always M_1
    return shift_blocks(1, E, base)


def shift_writes_cosine_first(k, E, base=10000.0):  # reader r39: reads (sin, cos) but writes the new pair cos first
    M = torch.zeros(E, E)
    for i in range(E // 2):
        c, s = math.cos(k * base ** (-2 * i / E)), math.sin(k * base ** (-2 * i / E))
        M[2 * i: 2 * i + 2, 2 * i: 2 * i + 2] = torch.tensor([[-s, c], [c, s]])
    return M


def shift_cosine_first(k, E, base=10000.0):  # the block written for the pair (cos, sin)
    M = torch.zeros(E, E)
    for i in range(E // 2):
        c, s = math.cos(k * base ** (-2 * i / E)), math.sin(k * base ** (-2 * i / E))
        M[2 * i: 2 * i + 2, 2 * i: 2 * i + 2] = torch.tensor([[s, c], [c, -s]])
    return M


def _blocks_of(k, E, angle, off_diagonal=-1.0, dtype=torch.float32):  # block i turns by angle(k * w_i)
    M = torch.zeros(E, E, dtype=dtype)
    for i in range(E // 2):
        b = angle(k, i)
        M[2 * i: 2 * i + 2, 2 * i: 2 * i + 2] = torch.tensor([[math.cos(b), math.sin(b)],
                                                              [off_diagonal * math.sin(b), math.cos(b)]])
    return M


def shift_ignores_base(k, E, base=10000.0):  # L6: 10000 written in
    return _blocks_of(k, E, lambda k, i: k * 10000.0 ** (-2 * i / E))


def shift_frequencies_of_32(k, E, base=10000.0):  # L6: the table's E = 32 in the frequencies, an (E, E) matrix
    return _blocks_of(k, E, lambda k, i: k * base ** (-2 * i / 32))


def shift_k_plus_1(k, E, base=10000.0):  # L6
    return _blocks_of(k, E, lambda k, i: (k + 1) * base ** (-2 * i / E))


def shift_degrees(k, E, base=10000.0):  # L6: math.radians of an angle already in radians
    return _blocks_of(k, E, lambda k, i: math.radians(k * base ** (-2 * i / E)))


def shift_minus_lost(k, E, base=10000.0):  # L6: [[c, s], [s, c]], not a rotation
    return _blocks_of(k, E, lambda k, i: k * base ** (-2 * i / E), off_diagonal=1.0)


def shift_float16(k, E, base=10000.0):  # L6: right to float16's 3 digits
    return _blocks_of(k, E, lambda k, i: k * base ** (-2 * i / E), dtype=torch.float16)


def shift_blocks_only(k, E, base=10000.0):  # L6: the (E/2, 2, 2) blocks, not the (E, E) matrix
    b = k * base ** (-2 * torch.arange(E // 2) / E)
    return torch.stack([torch.stack([b.cos(), b.sin()], -1), torch.stack([-b.sin(), b.cos()], -1)], -2)


# Exercise 3: rope_rotate_half(x, positions, theta), pair i = features (i, i + D/2), angle positions[t] * theta[i]
def rope_llama(x, positions, theta):  # Hugging Face's rotate_half, and cos/sin of width D
    def rotate_half(t):
        t1, t2 = t[..., : t.shape[-1] // 2], t[..., t.shape[-1] // 2:]
        return torch.cat((-t2, t1), dim=-1)
    angle = positions.float()[:, None] * theta.float()  # (T, D/2)
    emb = torch.cat((angle, angle), dim=-1)  # (T, D)
    return x * emb.cos() + rotate_half(x) * emb.sin()


def rope_complex(x, positions, theta):
    D = x.shape[-1]
    z = torch.complex(x[..., : D // 2].double(), x[..., D // 2:].double())  # pair i as a + ib
    z = z * torch.polar(torch.ones(1, dtype=torch.float64), positions.double()[:, None] * theta.double())
    return torch.cat([z.real, z.imag], dim=-1).to(x.dtype)


def rope_chunk(x, positions, theta):
    a, b = x.chunk(2, dim=-1)
    angle = positions[:, None] * theta
    return torch.cat([a * angle.cos() - b * angle.sin(), b * angle.cos() + a * angle.sin()], dim=-1)


def rope_matrices(x, positions, theta):  # one (D, D) rotation matrix per position, applied with einsum
    T, D = x.shape[-2], x.shape[-1]
    half = D // 2
    angle = positions.double()[:, None] * theta.double()  # (T, D/2)
    R = torch.zeros(T, D, D, dtype=torch.float64)
    idx = torch.arange(half)
    R[:, idx, idx] = R[:, idx + half, idx + half] = angle.cos()
    R[:, idx, idx + half] = -angle.sin()
    R[:, idx + half, idx] = angle.sin()
    return torch.einsum("tij,...tj->...ti", R, x.double()).to(x.dtype)


def rope_interleaved(x, positions, theta):  # RoFormer's pairs (2i, 2i + 1)
    a, b = x[..., 0::2], x[..., 1::2]
    angle = positions[:, None] * theta
    out = torch.empty_like(x)
    out[..., 0::2] = a * angle.cos() - b * angle.sin()
    out[..., 1::2] = a * angle.sin() + b * angle.cos()
    return out


def rope_backwards(x, positions, theta):  # turns by -angle
    a, b = x.chunk(2, dim=-1)
    angle = positions[:, None] * theta
    return torch.cat([a * angle.cos() + b * angle.sin(), -a * angle.sin() + b * angle.cos()], dim=-1)


def rope_arange_positions(x, positions, theta):  # ignores the positions: 0..T-1
    return rope_chunk(x, torch.arange(x.shape[-2]), theta)


def rope_attnlib(x, positions, theta):  # attnlib's apply_rope, whose frequencies come from base 10000
    return apply_rope(x, positions)


def rope_halves_swapped(x, positions, theta):  # the two halves of the result in the wrong order
    a, b = x.chunk(2, dim=-1)
    angle = positions[:, None] * theta
    return torch.cat([a * angle.sin() + b * angle.cos(), a * angle.cos() - b * angle.sin()], dim=-1)


def rope_repeat_interleave(x, positions, theta):  # the angles doubled pair by pair, then rotate_half
    angle = (positions[:, None] * theta).repeat_interleave(2, dim=-1)  # (T, D)
    a, b = x.chunk(2, dim=-1)
    return x * angle.cos() + torch.cat([-b, a], dim=-1) * angle.sin()


def rope_pair_matrices(x, positions, theta):  # a 2 x 2 matrix per (position, pair), matmul on x's pairs
    half = x.shape[-1] // 2
    angle = positions[:, None] * theta  # (T, D/2), in theta's dtype
    R = torch.stack([torch.stack([angle.cos(), -angle.sin()], -1), torch.stack([angle.sin(), angle.cos()], -1)], -2)
    pairs = torch.stack([x[..., :half], x[..., half:]], -1)  # (..., T, D/2, 2)
    out = (R @ pairs.unsqueeze(-1)).squeeze(-1)
    return torch.cat([out[..., 0], out[..., 1]], -1)


def rope_no_positions(x, positions, theta):  # angle = theta, the same at every position
    a, b = x.chunk(2, dim=-1)
    return torch.cat([a * theta.cos() - b * theta.sin(), b * theta.cos() + a * theta.sin()], dim=-1)


def rope_first_frequency(x, positions, theta):  # pair 0's frequency for every pair
    a, b = x.chunk(2, dim=-1)
    angle = (positions * theta[0])[:, None]
    return torch.cat([a * angle.cos() - b * angle.sin(), b * angle.cos() + a * angle.sin()], dim=-1)


def rope_first_half_only(x, positions, theta):  # the second half left as it is
    a, b = x.chunk(2, dim=-1)
    angle = positions[:, None] * theta
    return torch.cat([a * angle.cos() - b * angle.sin(), b], dim=-1)


def rope_2d_only(x, positions, theta):  # written for x (T, D)
    D = x.shape[1]
    angle = positions[:, None] * theta
    a, b = x[:, : D // 2], x[:, D // 2:]
    return torch.cat([a * angle.cos() - b * angle.sin(), a * angle.sin() + b * angle.cos()], dim=1)


def rope_one_sign_wrong(x, positions, theta):  # L6: the second half b cos - a sin
    a, b = x.chunk(2, dim=-1)
    angle = positions[:, None] * theta
    return torch.cat([a * angle.cos() - b * angle.sin(), b * angle.cos() - a * angle.sin()], dim=-1)


def rope_theta_reversed(x, positions, theta):  # L6
    return rope_chunk(x, positions, theta.flip(0))


def rope_in_float32(x, positions, theta):  # L6: float64 inputs computed (and returned) in float32
    return rope_chunk(x.float(), positions, theta.float())


def rope_mirror_pairs(x, positions, theta):  # L6: feature i paired with D - 1 - i
    angle = positions[:, None] * theta
    h = x.shape[-1] // 2
    a, b = x[..., :h], x[..., h:].flip(-1)
    return torch.cat([a * angle.cos() - b * angle.sin(), (b * angle.cos() + a * angle.sin()).flip(-1)], -1)


ANSWERS = [
    # Exercise 1
    right(EX1, "list", lambda: [2, 1, 0]),
    right(EX1, "tuple", lambda: (2, 1, 0)),
    right(EX1, "tensor", lambda: torch.tensor([2, 1, 0])),
    right(EX1, "numpy-array", lambda: np.array([2, 1, 0])),
    right(EX1, "reversed-range", lambda: list(range(2, -1, -1))),
    right(EX1, "numpy-ints", lambda: [np.int64(2), np.int64(1), np.int64(0)]),
    right(EX1, "range-object", lambda: range(2, -1, -1)),
    right(EX1, "negative-indices", lambda: [-1, -2, -3], note="Python's -1, -2, -3 name rows 2, 1 and 0"),
    wrong(EX1, "positions-keep", lambda: [0, 1, 2], ("word", "position", "follow", "permut")),
    wrong(EX1, "new-vectors", lambda: "new", ("permut", "same", "position", "order")),
    wrong(EX1, "rotated", lambda: [1, 2, 0], ("word", "man", "dog", "row")),
    wrong(EX1, "one-index", lambda: [3, 2, 1]),
    wrong(EX1, "set", lambda: {0, 1, 2}),
    wrong(EX1, "string", lambda: "[2, 1, 0]", ("list", "string", "quote")),
    # Exercise 2
    right(EX2, "entry-by-entry", lambda: shift_blocks),
    right(EX2, "block-diag-float64", lambda: shift_block_diag),
    right(EX2, "solved-from-the-encodings", lambda: shift_by_solving),
    right(EX2, "interleaved-rope-at-minus-k", lambda: shift_by_rope,
          note="RoPE's interleaved rotation turned back by k, read column by column: the same blocks"),
    wrong(EX2, "turns-the-other-way", lambda: shift_other_way, ("wrong way", "back", "angle-addition")),
    wrong(EX2, "feature-index", lambda: shift_feature_index, ("pair", "2i", "index")),
    wrong(EX2, "missing-two", lambda: shift_missing_two),
    wrong(EX2, "k-radians", lambda: shift_k_radians),
    wrong(EX2, "rotate-half-layout", lambda: shift_rotate_half_layout),
    wrong(EX2, "notebook-width", lambda: shift_notebook_width, ("shape",)),
    wrong(EX2, "without-k", lambda: shift_without_k),
    wrong(EX2, "cosine-first-block", lambda: shift_cosine_first, ("sine first",)),
    # Exercise 3
    right(EX3, "llama-rotate-half", lambda: rope_llama),
    right(EX3, "complex-float64", lambda: rope_complex),
    right(EX3, "chunk", lambda: rope_chunk),
    right(EX3, "rotation-matrices-einsum", lambda: rope_matrices),
    right(EX3, "pair-matrices-matmul", lambda: rope_pair_matrices, note="a matmul needs theta in x's dtype"),
    wrong(EX3, "interleaved-pairs", lambda: rope_interleaved, ("interleav", "pair", "i + D/2", "2i", "half")),
    wrong(EX3, "rotates-backwards", lambda: rope_backwards, ("sign", "direction", "wrong way", "minus", "negative")),
    wrong(EX3, "ignores-positions", lambda: rope_arange_positions),
    wrong(EX3, "calls-attnlib", lambda: rope_attnlib, ("theta", "frequencies"),
          note="attnlib's apply_rope turns by base 10000's frequencies, not the given theta"),
    wrong(EX3, "halves-swapped", lambda: rope_halves_swapped),
    wrong(EX3, "angles-repeat-interleaved", lambda: rope_repeat_interleave),
    wrong(EX3, "matrices-only", lambda: rope_2d_only),
    wrong(EX3, "no-positions", lambda: rope_no_positions),
    wrong(EX3, "first-frequency-only", lambda: rope_first_frequency),
    wrong(EX3, "first-half-only", lambda: rope_first_half_only),
    # Exercise 4
    right(EX4, "set", lambda: {"A", "C"}),
    right(EX4, "list", lambda: ["A", "C"]),
    right(EX4, "tuple-reversed", lambda: ("C", "A")),
    right(EX4, "frozenset", lambda: frozenset("AC")),
    right(EX4, "lowercase", lambda: {"a", "c"}),
    right(EX4, "words", lambda: "A and C", note="issue 21: today it is told 'N is not one of them'"),
    right(EX4, "sentence", lambda: "lines A, C"),
    wrong(EX4, "A-and-B", lambda: {"A", "B"}, ("B", "right", "correct", "position t")),
    wrong(EX4, "C-and-D", lambda: {"C", "D"}, ("D", "cached", "right", "correct")),
    wrong(EX4, "only-A", lambda: {"A"}, ("value",)),
    wrong(EX4, "only-C", lambda: ["C"], ("position",)),
    wrong(EX4, "line-E", lambda: "A, E", ("not one of them",)),
    wrong(EX4, "three-lines", lambda: {"A", "C", "D"}, ("two", "D", "cached")),
    wrong(EX4, "B-and-D", lambda: {"B", "D"}, ("B", "D", "right", "correct")),
    # population L6
    wrong(EX2, "ignores-base", lambda: shift_ignores_base),
    wrong(EX2, "frequencies-of-E-32", lambda: shift_frequencies_of_32),
    wrong(EX2, "k-plus-1", lambda: shift_k_plus_1),
    wrong(EX2, "degrees", lambda: shift_degrees),
    wrong(EX2, "minus-lost", lambda: shift_minus_lost, ("not rotations", "same sign", "minus")),
    wrong(EX2, "float16", lambda: shift_float16, ("float16", "digits")),
    wrong(EX2, "blocks-only", lambda: shift_blocks_only),
    wrong(EX3, "one-sign-wrong", lambda: rope_one_sign_wrong, ("wrong sign", "sin")),
    wrong(EX3, "theta-reversed", lambda: rope_theta_reversed),
    wrong(EX3, "float32-for-float64", lambda: rope_in_float32, ("float32", "dtype")),
    wrong(EX3, "mirror-pairs", lambda: rope_mirror_pairs),
    wrong(EX2, "writes-cosine-first", lambda: shift_writes_cosine_first, ("cos first", "sine first")),
]
