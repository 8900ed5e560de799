"""Notebook 10 (induction heads): learner answers to its five exercises.

Written from notebook 10's prompts, stubs and check cells (learner and solved versions) and the public
``attnlib.induction``, without reading its checkers. The module imports nothing of notebook 10's, so
it loads on a branch without it; ``tests/corpus/__init__.py`` runs it wherever notebook 10 exists.
"""

import math
from fractions import Fraction

import numpy as np
import torch

from . import right, wrong

EXERCISES = {"check_repeated_batch": 1, "check_untrained_loss": 2, "check_previous_token_score": 3,
             "check_prefix_matching_score": 4, "check_ablation_loss": 5}

EX1 = "nb10.check_repeated_batch"
EX2 = "nb10.check_untrained_loss"  # a uniform guess over V = 64 tokens: ln 64 = 4.16 nats
EX3 = "nb10.check_previous_token_score"
EX4 = "nb10.check_prefix_matching_score"
EX5 = "nb10.check_ablation_loss"  # induction heads zeroed: back near ln 64 = 4.16 nats


# Exercise 1: repeated_batch(batch_size, seq_len, repeat_len, vocab_size, generator) -> tokens, first, second
def rb_loop_randint(batch_size, seq_len, repeat_len, vocab_size, generator):
    """Each row's starts drawn with randint: first in 0 .. T - 2L, second in first + L .. T - L."""
    L = repeat_len
    tokens = torch.randint(0, vocab_size, (batch_size, seq_len), generator=generator)
    first, second = torch.zeros(batch_size, dtype=torch.long), torch.zeros(batch_size, dtype=torch.long)
    for b in range(batch_size):
        f = int(torch.randint(0, seq_len - 2 * L + 1, (1,), generator=generator))
        s = int(torch.randint(f + L, seq_len - L + 1, (1,), generator=generator))
        tokens[b, s:s + L] = tokens[b, f:f + L]
        first[b], second[b] = f, s
    return tokens, first, second


def rb_sorted_pair(batch_size, seq_len, repeat_len, vocab_size, generator):
    """Two starts drawn in 0 .. T - 2L and sorted; the later one moved L on: every valid pair can come up."""
    L = repeat_len
    tokens = torch.randint(vocab_size, (batch_size, seq_len), generator=generator)
    pair = torch.randint(seq_len - 2 * L + 1, (batch_size, 2), generator=generator).sort(dim=1).values
    first, second = pair[:, 0], pair[:, 1] + L
    rows, j = torch.arange(batch_size)[:, None], torch.arange(L)[None, :]
    tokens[rows, second[:, None] + j] = tokens[rows, first[:, None] + j]
    return tokens, first, second


def rb_gather_scatter(batch_size, seq_len, repeat_len, vocab_size, generator):
    """The segment read with gather and written with scatter; the gap drawn as a fraction of the room left."""
    L = repeat_len
    tokens = torch.randint(vocab_size, (batch_size, seq_len), generator=generator)
    first = torch.randint(seq_len - 2 * L + 1, (batch_size,), generator=generator)
    room = seq_len - 2 * L - first + 1  # (B,): how many starts the second copy can take
    second = first + L + torch.floor(torch.rand(batch_size, generator=generator) * room).long()
    j = torch.arange(L)
    segment = tokens.gather(1, first[:, None] + j)  # (B, L)
    return tokens.scatter(1, second[:, None] + j, segment), first, second


def rb_segment_first(batch_size, seq_len, repeat_len, vocab_size, generator):
    """Draws the segment on its own, then writes it at both places of a random row; starts as int32."""
    L = repeat_len
    tokens = torch.randint(vocab_size, (batch_size, seq_len), generator=generator)
    segments = torch.randint(vocab_size, (batch_size, L), generator=generator)
    first = torch.empty(batch_size, dtype=torch.int32)
    second = torch.empty(batch_size, dtype=torch.int32)
    for b in range(batch_size):
        gap = int(torch.randint(0, seq_len - 2 * L + 1, (1,), generator=generator))  # free tokens around them
        f = int(torch.randint(0, seq_len - 2 * L - gap + 1, (1,), generator=generator))
        first[b], second[b] = f, f + L + gap
        tokens[b, f:f + L] = segments[b]
        tokens[b, f + L + gap:f + 2 * L + gap] = segments[b]
    return tokens, first, second


def rb_attnlib(batch_size, seq_len, repeat_len, vocab_size, generator):
    """The library function the notebook announces right after the exercise."""
    from attnlib import induction

    return induction.repeated_tokens(batch_size, seq_len, repeat_len, vocab_size, generator=generator)


def rb_fixed_distance(batch_size, seq_len, repeat_len, vocab_size, generator):
    """The second copy right after the first in every row: a fixed distance L, learnable by position."""
    L = repeat_len
    tokens = torch.randint(vocab_size, (batch_size, seq_len), generator=generator)
    first = torch.randint(seq_len - 2 * L + 1, (batch_size,), generator=generator)
    second = first + L
    for b in range(batch_size):
        tokens[b, second[b]:second[b] + L] = tokens[b, first[b]:first[b] + L]
    return tokens, first, second


def rb_same_starts(batch_size, seq_len, repeat_len, vocab_size, generator):
    """One pair of starts drawn once, used in every row."""
    L = repeat_len
    tokens = torch.randint(vocab_size, (batch_size, seq_len), generator=generator)
    f = int(torch.randint(seq_len - 2 * L + 1, (1,), generator=generator))
    s = int(torch.randint(f + L, seq_len - L + 1, (1,), generator=generator))
    tokens[:, s:s + L] = tokens[:, f:f + L]
    return tokens, torch.full((batch_size,), f), torch.full((batch_size,), s)


def rb_may_overlap(batch_size, seq_len, repeat_len, vocab_size, generator):
    """second drawn from first + 1 on: the copies may overlap, and the copy then overwrites its own source."""
    L = repeat_len
    tokens = torch.randint(vocab_size, (batch_size, seq_len), generator=generator)
    first = torch.randint(seq_len - 2 * L + 1, (batch_size,), generator=generator)
    second = torch.stack([torch.randint(int(f) + 1, seq_len - L + 1, (1,), generator=generator)[0] for f in first])
    rows, j = torch.arange(batch_size)[:, None], torch.arange(L)[None, :]
    tokens[rows, second[:, None] + j] = tokens[rows, first[:, None] + j]
    return tokens, first, second


def rb_global_rng(batch_size, seq_len, repeat_len, vocab_size, generator):
    """Right copies, but drawn from torch's global generator: the seed passed in changes nothing."""
    L = repeat_len
    tokens = torch.randint(vocab_size, (batch_size, seq_len))
    first = torch.randint(seq_len - 2 * L + 1, (batch_size,))
    second = first + L + (torch.rand(batch_size) * (seq_len - 2 * L - first + 1)).long()
    rows, j = torch.arange(batch_size)[:, None], torch.arange(L)[None, :]
    tokens[rows, second[:, None] + j] = tokens[rows, first[:, None] + j]
    return tokens, first, second


def rb_short_copy(batch_size, seq_len, repeat_len, vocab_size, generator):
    """The slice end off by one: copies L - 1 tokens."""
    L = repeat_len
    tokens = torch.randint(vocab_size, (batch_size, seq_len), generator=generator)
    first = torch.randint(seq_len - 2 * L + 1, (batch_size,), generator=generator)
    second = first + L + (torch.rand(batch_size, generator=generator) * (seq_len - 2 * L - first + 1)).long()
    for b in range(batch_size):
        tokens[b, second[b]:second[b] + L - 1] = tokens[b, first[b]:first[b] + L - 1]
    return tokens, first, second


def rb_vocab_from_one(batch_size, seq_len, repeat_len, vocab_size, generator):
    """Token ids 1 .. vocab_size instead of 0 .. vocab_size - 1."""
    tokens, first, second = rb_sorted_pair(batch_size, seq_len, repeat_len, vocab_size, generator)
    return tokens + 1, first, second


def rb_starts_swapped(batch_size, seq_len, repeat_len, vocab_size, generator):
    """Returns (tokens, second, first): the later start where the earlier one is asked."""
    tokens, first, second = rb_sorted_pair(batch_size, seq_len, repeat_len, vocab_size, generator)
    return tokens, second, first


# Exercise 3: previous_token_score(weights (B, H, T, T)) -> (H,)
def pt_loop(weights):
    T = weights.shape[-1]
    return torch.stack([weights[:, :, i, i - 1] for i in range(1, T)], dim=-1).mean(dim=(0, 2))


def pt_positive_dims_batch_first(weights):
    return weights.mean(dim=0).diagonal(offset=-1, dim1=1, dim2=2).mean(dim=1)


def pt_sliced_diagonal(weights):
    return weights[..., 1:, :-1].diagonal(dim1=-2, dim2=-1).mean(dim=(0, -1))


def pt_subdiagonal_einsum(weights):
    B, H, T, _ = weights.shape
    below = torch.diag(torch.ones(T - 1, dtype=weights.dtype), diagonal=-1)  # 1 at (i, i - 1)
    return torch.einsum("bhqk,qk->h", weights, below) / (B * (T - 1))


def pt_float64(weights):
    i = torch.arange(1, weights.shape[-1])
    return weights.double()[:, :, i, i - 1].mean(dim=(0, 2))


def pt_next_token(weights):
    return weights.diagonal(offset=1, dim1=-2, dim2=-1).mean(dim=(0, -1))


def pt_dims_swapped(weights):
    return weights.diagonal(offset=-1, dim1=-1, dim2=-2).mean(dim=(0, -1))


def pt_main_diagonal(weights):
    return weights.diagonal(dim1=-2, dim2=-1).mean(dim=(0, -1))


def pt_divided_by_T(weights):
    B, T = weights.shape[0], weights.shape[-1]
    return weights.diagonal(offset=-1, dim1=-2, dim2=-1).sum(dim=(0, -1)) / (B * T)


def pt_per_sequence(weights):  # (B, H): the batch not averaged
    return weights.diagonal(offset=-1, dim1=-2, dim2=-1).mean(dim=-1)


def pt_default_dims(weights):  # torch.diagonal's default dim1=0, dim2=1: the batch and head axes
    return torch.diagonal(weights, -1).mean(dim=-1).mean(dim=0)


def pt_mean_over_heads(weights):  # (T - 1,): one number per query
    return weights.diagonal(offset=-1, dim1=-2, dim2=-1).mean(dim=(0, 1))


# Exercise 4: prefix_matching_score(weights (B, H, 2L, 2L), repeat_len) -> (B, H)
def pm_loop(weights, repeat_len):
    L = repeat_len
    return torch.stack([weights[..., L + j, j + 1] for j in range(L)], dim=-1).mean(dim=-1)


def pm_indexing(weights, repeat_len):
    queries = torch.arange(repeat_len, 2 * repeat_len)  # the second copy
    return weights[..., queries, queries - repeat_len + 1].mean(dim=-1)


def pm_block_diagonal(weights, repeat_len):
    L = repeat_len
    return weights[..., L:, 1:L + 1].diagonal(dim1=-2, dim2=-1).mean(dim=-1)  # rows L.., columns 1..


def pm_gather(weights, repeat_len):
    L = repeat_len
    keys = torch.arange(1, L + 1).expand(*weights.shape[:-2], L)[..., None]  # (B, H, L, 1)
    return weights[..., L:, :].gather(-1, keys).squeeze(-1).mean(dim=-1)


def pm_mask_float64(weights, repeat_len):
    L, T = repeat_len, weights.shape[-1]
    pick = torch.zeros(T, T, dtype=torch.float64)
    pick[torch.arange(L, 2 * L), torch.arange(1, L + 1)] = 1.0
    return (weights.double() * pick).sum(dim=(-2, -1)) / L


def pm_earlier_occurrence(weights, repeat_len):  # key j: the same token as the query, not the one after it
    return weights.diagonal(offset=-repeat_len, dim1=-2, dim2=-1).mean(dim=-1)


def pm_with_first_copy(weights, repeat_len):  # the whole diagonal: query L - 1 (first copy) counted too
    return weights.diagonal(offset=1 - repeat_len, dim1=-2, dim2=-1).mean(dim=-1)


def pm_two_after(weights, repeat_len):  # key j + 2
    L = repeat_len
    return torch.stack([weights[..., L + j, j + 2] for j in range(L - 1)], dim=-1).mean(dim=-1)


def pm_dims_swapped(weights, repeat_len):  # weights[..., j + 1, L + j]: above the diagonal
    return weights.diagonal(offset=1 - repeat_len, dim1=-1, dim2=-2)[..., 1:].mean(dim=-1)


def pm_sum(weights, repeat_len):
    return weights.diagonal(offset=1 - repeat_len, dim1=-2, dim2=-1)[..., 1:].sum(dim=-1)


def pm_previous_token(weights, repeat_len):  # the second copy's previous-token score
    L = repeat_len
    return weights[..., L:, L - 1:2 * L - 1].diagonal(dim1=-2, dim2=-1).mean(dim=-1)


def pm_batch_averaged(weights, repeat_len):  # (H,) where (B, H) is asked
    return weights.diagonal(offset=1 - repeat_len, dim1=-2, dim2=-1)[..., 1:].mean(dim=(0, -1))


ANSWERS = [
    # Exercise 1
    right(EX1, "loop-randint-per-row", lambda: rb_loop_randint),
    right(EX1, "sorted-pair", lambda: rb_sorted_pair,
          note="another distribution of the starts than the reference's; every valid pair can come up"),
    right(EX1, "gather-scatter", lambda: rb_gather_scatter),
    right(EX1, "segment-first-int32-starts", lambda: rb_segment_first),
    right(EX1, "attnlib-repeated-tokens", lambda: rb_attnlib),
    wrong(EX1, "fixed-distance", lambda: rb_fixed_distance, ("distance", "fixed", "position", "vary", "same")),
    wrong(EX1, "same-starts-every-row", lambda: rb_same_starts, ("row", "same", "vary", "every"),
          note="one pair of starts for the whole batch: the prompt asks for both starts drawn for every row"),
    wrong(EX1, "copies-may-overlap", lambda: rb_may_overlap, ("overlap", "first + L", "second >=")),
    wrong(EX1, "global-generator", lambda: rb_global_rng, ("generator", "seed")),
    wrong(EX1, "copies-L-minus-1", lambda: rb_short_copy, ("copy", "copied", "segment", "L")),
    wrong(EX1, "vocab-from-1", lambda: rb_vocab_from_one, ("vocab", "0 ..", "range", "ids")),
    wrong(EX1, "starts-swapped", lambda: rb_starts_swapped, ("order", "swap", "(tokens, first, second)", "before"),
          note="the copies do not overlap; they are returned in the wrong order"),
    # Exercise 2
    right(EX2, "ln-64", lambda: math.log(64)),
    right(EX2, "two-decimals", lambda: 4.16),
    right(EX2, "numpy-log", lambda: np.log(64)),
    right(EX2, "0d-tensor-minus-log-prob", lambda: -torch.log(torch.tensor(1 / 64))),
    right(EX2, "6-ln-2", lambda: 6 * math.log(2)),
    right(EX2, "numpy-float32", lambda: np.float32(math.log(64))),
    right(EX2, "fraction", lambda: Fraction(416, 100)),
    wrong(EX2, "bits", lambda: math.log2(64), ("nats", "natural", "ln", "bits", "log2")),
    wrong(EX2, "probability", lambda: 1 / 64, ("probability", "log", "ln", "loss")),
    wrong(EX2, "log10", lambda: math.log10(64), ("natural", "ln", "log10", "nats")),
    wrong(EX2, "zero", lambda: 0.0, ("uniform", "untrained", "ln", "guess")),
    wrong(EX2, "ln-T", lambda: math.log(32), ("V", "vocab", "64", "T")),
    wrong(EX2, "string", lambda: "4.16", ("number", "string", "quote")),
    # Exercise 3
    right(EX3, "python-loop", lambda: pt_loop),
    right(EX3, "batch-mean-first-positive-dims", lambda: pt_positive_dims_batch_first),
    right(EX3, "sliced-diagonal", lambda: pt_sliced_diagonal),
    right(EX3, "subdiagonal-einsum", lambda: pt_subdiagonal_einsum),
    right(EX3, "indexing-float64", lambda: pt_float64),
    wrong(EX3, "next-token", lambda: pt_next_token, ("offset", "-1", "before", "previous")),
    wrong(EX3, "dims-swapped", lambda: pt_dims_swapped, ("dim1", "dim2", "swap", "transpos")),
    wrong(EX3, "main-diagonal", lambda: pt_main_diagonal, ("offset", "-1", "itself", "own")),
    wrong(EX3, "divided-by-T", lambda: pt_divided_by_T, ("T - 1", "mean", "T−1")),
    wrong(EX3, "batch-not-averaged", lambda: pt_per_sequence, ("(H,)", "batch", "shape", "dim=0")),
    wrong(EX3, "default-diagonal-dims", lambda: pt_default_dims, ("dim1", "dim2", "last two", "axes", "shape")),
    wrong(EX3, "mean-over-heads", lambda: pt_mean_over_heads, ("(H,)", "head", "shape")),
    # Exercise 4
    right(EX4, "python-loop", lambda: pm_loop),
    right(EX4, "advanced-indexing", lambda: pm_indexing),
    right(EX4, "block-diagonal", lambda: pm_block_diagonal),
    right(EX4, "gather", lambda: pm_gather),
    right(EX4, "mask-float64", lambda: pm_mask_float64),
    wrong(EX4, "earlier-occurrence-itself", lambda: pm_earlier_occurrence,
          ("after", "+ 1", "+1", "next", "itself", "same token")),
    wrong(EX4, "first-copy-counted", lambda: pm_with_first_copy,
          ("second copy", "first copy", "L - 1", "queries", "L + 1")),
    wrong(EX4, "two-after", lambda: pm_two_after),
    wrong(EX4, "dims-swapped", lambda: pm_dims_swapped, ("dim1", "dim2", "swap", "transpos")),
    wrong(EX4, "sum-not-mean", lambda: pm_sum, ("mean", "average", "sum")),
    wrong(EX4, "previous-token-score", lambda: pm_previous_token),
    wrong(EX4, "batch-averaged", lambda: pm_batch_averaged, ("(B, H)", "shape", "batch")),
    # Exercise 5
    right(EX5, "ln-64", lambda: math.log(64)),
    right(EX5, "one-decimal", lambda: 4.2),
    right(EX5, "numpy-log", lambda: np.log(64.0)),
    right(EX5, "0d-tensor", lambda: torch.tensor(64.0).log()),
    right(EX5, "as-untrained", lambda: -math.log(1 / 64), note="the same as Exercise 2's answer"),
    wrong(EX5, "unchanged-trained", lambda: 0.5, ("copy", "induction", "ln 64", "uniform", "4.16")),
    wrong(EX5, "bits", lambda: math.log2(64), ("nats", "natural", "ln", "bits", "log2")),
    wrong(EX5, "zero", lambda: 0, ("copy", "induction", "ln 64", "uniform", "4.16")),
    wrong(EX5, "infinite", lambda: math.inf),
    wrong(EX5, "plateau", lambda: 3.0, note="the plateau of section 3; zeroing the heads goes back further"),
    wrong(EX5, "probability", lambda: 1 / 64, ("probability", "log", "ln", "loss")),
    wrong(EX5, "string", lambda: "4.16", ("number", "string", "quote")),
]
