"""Notebook 10 (induction heads): learner answers to its five exercises (Exercises 3 and 4 redesigned:
the previous-token score of an even causal spread, and the induction rule as a function).

Written from notebook 10's prompts, stubs and check cells (learner and solved versions) and the public
``attnlib.induction``, without reading its checkers. The module imports nothing of notebook 10's, so
it loads on a branch without it; ``tests/corpus/__init__.py`` runs it wherever notebook 10 exists.
"""

import math
from fractions import Fraction

import numpy as np
import torch

from . import right, wrong

EXERCISES = {"check_repeated_batch": 1, "check_untrained_loss": 2, "check_even_spread_score": 3,
             "check_induction_targets": 4, "check_ablation_loss": 5}

EX1 = "nb10.check_repeated_batch"
EX2 = "nb10.check_untrained_loss"  # a uniform guess over V = 64 tokens: ln 64 = 4.16 nats
EX3 = "nb10.check_even_spread_score"  # causal even spread at T = 32: mean of 1/(i + 1), i = 1..31 = 0.0987
EX4 = "nb10.check_induction_targets"
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


def rb_last_id_missing(batch_size, seq_len, repeat_len, vocab_size, generator):
    """randint(vocab_size - 1, ...): the ids run 0 .. V - 2, the last id never drawn."""
    tokens, first, second = rb_sorted_pair(batch_size, seq_len, repeat_len, vocab_size - 1, generator)
    return tokens, first, second


def rb_two_distances(batch_size, seq_len, repeat_len, vocab_size, generator):
    """The second copy right after the first, or one token later: only two distances."""
    L = repeat_len
    tokens = torch.randint(vocab_size, (batch_size, seq_len), generator=generator)
    first = torch.randint(seq_len - 2 * L, (batch_size,), generator=generator)  # room for a gap of 1
    second = first + L + torch.randint(2, (batch_size,), generator=generator)
    rows, j = torch.arange(batch_size)[:, None], torch.arange(L)
    tokens[rows, second[:, None] + j] = tokens[rows, first[:, None] + j]
    return tokens, first, second


def rb_first_from_one(batch_size, seq_len, repeat_len, vocab_size, generator):
    """randint(1, T - 2L + 1): the low bound of the first start off by one, never 0."""
    L = repeat_len
    tokens = torch.randint(vocab_size, (batch_size, seq_len), generator=generator)
    first = torch.randint(1, seq_len - 2 * L + 1, (batch_size,), generator=generator)
    second = first + L + (torch.rand(batch_size, generator=generator) * (seq_len - 2 * L - first + 1)).long()
    rows, j = torch.arange(batch_size)[:, None], torch.arange(L)
    tokens[rows, second[:, None] + j] = tokens[rows, first[:, None] + j]
    return tokens, first, second


def rb_first_high_exclusive(batch_size, seq_len, repeat_len, vocab_size, generator):
    """randint(T - 2L): the first copy never starts at T - 2L."""
    L = repeat_len
    tokens = torch.randint(vocab_size, (batch_size, seq_len), generator=generator)
    first = torch.randint(seq_len - 2 * L, (batch_size,), generator=generator)
    second = first + L + (torch.rand(batch_size, generator=generator) * (seq_len - 2 * L - first + 1)).long()
    rows, j = torch.arange(batch_size)[:, None], torch.arange(L)
    tokens[rows, second[:, None] + j] = tokens[rows, first[:, None] + j]
    return tokens, first, second


def rb_hard_coded_sizes(batch_size, seq_len, repeat_len, vocab_size, generator):
    """The notebook's T = 32, L = 10, V = 64 written in, whatever the arguments say."""
    return rb_sorted_pair(batch_size, 32, 10, 64, generator)


def rb_starts(draw):
    """A batch whose starts come from ``draw(B, T, L, generator) -> (first, second)``, copied row by row with slices."""
    def make(batch_size, seq_len, repeat_len, vocab_size, generator):
        L = repeat_len
        tokens = torch.randint(vocab_size, (batch_size, seq_len), generator=generator)
        first, second = draw(batch_size, seq_len, L, generator)
        for b in range(batch_size):
            tokens[b, second[b]:second[b] + L] = tokens[b, first[b]:first[b] + L]
        return tokens, first, second
    return make


def first_always_0(B, T, L, g):  # second drawn, first never (L3)
    return torch.zeros(B, dtype=torch.long), torch.randint(L, T - L + 1, (B,), generator=g)


def gap_fixed(B, T, L, g):  # the gap fixed at L + 8, clamped at the end (L3)
    first = torch.randint(0, T - 2 * L + 1, (B,), generator=g)
    return first, torch.clamp(first + L + 8, max=T - L)


def overlapping(B, T, L, g):  # second from first + 1 on: the slice copy overlaps its own source, torch refuses it (L3)
    first = torch.randint(0, T - 2 * L + 1, (B,), generator=g)
    return first, first + 1 + (torch.rand(B, generator=g) * (T - L - first)).long()


def rb_int32_tokens(batch_size, seq_len, repeat_len, vocab_size, generator):
    """Right, but the tokens drawn as int32 (L3)."""
    tokens, first, second = rb_sorted_pair(batch_size, seq_len, repeat_len, vocab_size, generator)
    return tokens.int(), first, second


# Exercise 3: a head that spreads its weight evenly under the causal mask, T = 32: its previous-token score
def even_score_loop():
    return sum(1 / (i + 1) for i in range(1, 32)) / 31


def even_score_tensor():
    w = torch.tril(torch.ones(32, 32))
    w = w / w.sum(dim=-1, keepdim=True)  # each row spread over its keys
    return w.diagonal(offset=-1).mean()


def even_score_harmonic():
    return (sum(1 / k for k in range(1, 33)) - 1) / 31  # (H_32 - 1) / (T - 1)


# Exercise 4: induction_targets(tokens (B, T)) -> (B, T): position after the latest earlier occurrence, or -1
def it_loops(tokens):
    B, T = tokens.shape
    out = torch.full((B, T), -1, dtype=torch.long)
    for b in range(B):
        for i in range(T):
            for j in range(i - 1, -1, -1):
                if tokens[b, j] == tokens[b, i]:
                    out[b, i] = j + 1
                    break
    return out


def it_last_seen(tokens):  # one pass, remembering where each token was last seen
    out = torch.full(tokens.shape, -1, dtype=torch.long)
    for b, row in enumerate(tokens.tolist()):
        seen = {}
        for i, tok in enumerate(row):
            if tok in seen:
                out[b, i] = seen[tok] + 1
            seen[tok] = i
    return out


def it_matrix(tokens):
    T = tokens.shape[1]
    match = (tokens[:, :, None] == tokens[:, None, :]).tril(diagonal=-1)  # (B, i, j): j < i, same token
    pos = torch.arange(1, T + 1).expand_as(match) * match  # j + 1 where they match, 0 elsewhere
    latest = pos.max(dim=-1).values
    return torch.where(latest > 0, latest, torch.tensor(-1))


def it_argmax_flip(tokens):  # the last match found as the first one in the reversed row, lists out
    result = []
    for row in tokens.tolist():
        out = []
        for i, tok in enumerate(row):
            earlier = row[:i][::-1]
            out.append(i - earlier.index(tok) if tok in earlier else -1)  # reversed index k is j = i - 1 - k
        result.append(out)
    return torch.tensor(result)


def it_occurrence_itself(tokens):  # points at j, the earlier copy of the same token
    return torch.where(it_last_seen(tokens) >= 0, it_last_seen(tokens) - 1, -1)


def it_first_occurrence(tokens):
    out = torch.full(tokens.shape, -1, dtype=torch.long)
    for b, row in enumerate(tokens.tolist()):
        seen = {}
        for i, tok in enumerate(row):
            if tok in seen:
                out[b, i] = seen[tok] + 1
            else:
                seen[tok] = i
    return out


def it_includes_itself(tokens):  # j <= i: every query matches itself
    T = tokens.shape[1]
    match = (tokens[:, :, None] == tokens[:, None, :]).tril()
    return (torch.arange(1, T + 1) * match).max(dim=-1).values


def it_zero_when_new(tokens):
    return it_last_seen(tokens).clamp_min(0)


def it_int32(tokens):  # right positions, int32 (L3)
    return it_last_seen(tokens).int()


def it_any_other(tokens):  # any j != i, later ones too (L3)
    out = torch.full(tokens.shape, -1, dtype=torch.int64)
    for b, row in enumerate(tokens.tolist()):
        for i, tok in enumerate(row):
            js = [j for j in range(len(row)) if j != i and row[j] == tok]
            if js:
                out[b, i] = max(js) + 1
    return out


def it_later_only(tokens):  # the match matrix transposed: triu(1), later occurrences only (L3)
    T = tokens.shape[1]
    same = (tokens[:, :, None] == tokens[:, None, :]) & torch.ones(T, T, dtype=torch.bool).triu(1)
    latest = (same * (torch.arange(T) + 1)).amax(dim=-1)
    return torch.where(latest > 0, latest, -1)


def it_token_not_position(tokens):  # the token at j + 1, the prediction, not its position (L3)
    found = it_last_seen(tokens)
    return torch.where(found >= 0, tokens.gather(1, found.clamp_min(0)), -1)


# Learner population L5 (notes/learners/L5): answers that found a gap in the checkers
def rb_sliced(batch_size, seq_len, repeat_len, vocab_size, generator, *, T=None, L=None, draw=torch.floor):
    """Row by row with slices; T=, L= write the notebook's sizes in, draw=torch.round lets second pass T - L."""
    T, L = T or seq_len, L or repeat_len
    tokens = torch.randint(vocab_size, (batch_size, seq_len), generator=generator)
    first = torch.randint(T - 2 * L + 1, (batch_size,), generator=generator)
    second = first + L + draw(torch.rand(batch_size, generator=generator) * (T - 2 * L - first + 1)).long()
    for b in range(batch_size):
        tokens[b, second[b]:second[b] + L] = tokens[b, first[b]:first[b] + L]
    return tokens, first, second


def it_previous_position(tokens):  # a previous-token head's target
    B, T = tokens.shape
    return torch.arange(-1, T - 1).expand(B, T).clone()


def it_first_row_only(tokens):  # row 0's targets for every row
    return it_last_seen(tokens[:1]).expand(tokens.shape)


def it_two_after(tokens):
    t = tokens.shape[-1]
    earlier = (tokens[:, :, None] == tokens[:, None, :]) & torch.ones(t, t, dtype=torch.bool).tril(-1)
    latest = torch.where(earlier, torch.arange(t), -1).amax(dim=-1)
    return torch.where(latest >= 0, latest + 2, -1)


ANSWERS = [
    # Exercise 1
    right(EX1, "loop-randint-per-row", lambda: rb_loop_randint),
    right(EX1, "sorted-pair", lambda: rb_sorted_pair,
          note="another distribution of the starts than the reference's; every valid pair can come up"),
    right(EX1, "gather-scatter", lambda: rb_gather_scatter),
    right(EX1, "segment-first-int32-starts", lambda: rb_segment_first),
    wrong(EX1, "attnlib-repeated-tokens", lambda: rb_attnlib, ("attnlib's repeated_tokens", "yourself"),
          note="the exercise asks to write it: attnlib's version is announced after it"),
    wrong(EX1, "fixed-distance", lambda: rb_fixed_distance, ("distance", "fixed", "position", "vary", "same")),
    wrong(EX1, "same-starts-every-row", lambda: rb_same_starts,
          note="one pair of starts for the whole batch: the prompt asks for both starts drawn for every row"),
    wrong(EX1, "copies-may-overlap", lambda: rb_may_overlap, ("overlap", "first + L", "second >=")),
    wrong(EX1, "global-generator", lambda: rb_global_rng, ("generator", "seed")),
    wrong(EX1, "copies-L-minus-1", lambda: rb_short_copy, ("copy", "copied", "segment", "L")),
    wrong(EX1, "vocab-from-1", lambda: rb_vocab_from_one, ("vocab", "0 ..", "range", "ids")),
    wrong(EX1, "starts-swapped", lambda: rb_starts_swapped, ("order", "swap", "(tokens, first, second)", "before"),
          note="the copies do not overlap; they are returned in the wrong order"),
    wrong(EX1, "last-id-never-drawn", lambda: rb_last_id_missing, ("last", "exclusive", "vocab")),
    wrong(EX1, "two-distances", lambda: rb_two_distances, ("distance",)),
    wrong(EX1, "first-from-1", lambda: rb_first_from_one, ("never starts at position 0", "low bound")),
    wrong(EX1, "first-high-exclusive", lambda: rb_first_high_exclusive),
    wrong(EX1, "hard-coded-sizes", lambda: rb_hard_coded_sizes),
    wrong(EX1, "first-always-0", lambda: rb_starts(first_always_0), ("same place in every row",)),
    wrong(EX1, "gap-fixed-clamped", lambda: rb_starts(gap_fixed)),
    wrong(EX1, "overlap-slice-copy-raises", lambda: rb_starts(overlapping)),
    wrong(EX1, "int32-tokens", lambda: rb_int32_tokens, ("int64",), note="the stub asks for int64 tokens"),
    # Exercise 2
    right(EX2, "ln-64", lambda: math.log(64)),
    right(EX2, "two-decimals", lambda: 4.16),
    right(EX2, "numpy-log", lambda: np.log(64)),
    right(EX2, "0d-tensor-minus-log-prob", lambda: -torch.log(torch.tensor(1 / 64))),
    right(EX2, "6-ln-2", lambda: 6 * math.log(2)),
    right(EX2, "numpy-float32", lambda: np.float32(math.log(64))),
    right(EX2, "fraction", lambda: Fraction(416, 100)),
    right(EX2, "one-decimal-as-printed", lambda: 4.2, note="the precision the notebook prints its losses at"),
    wrong(EX2, "bits", lambda: math.log2(64), ("nats", "natural", "ln", "bits", "log2")),
    wrong(EX2, "probability", lambda: 1 / 64),
    wrong(EX2, "log10", lambda: math.log10(64), ("natural", "ln", "log10", "nats")),
    wrong(EX2, "zero", lambda: 0.0),
    wrong(EX2, "ln-T", lambda: math.log(32)),
    wrong(EX2, "string", lambda: "4.16", ("number", "string", "quote")),
    wrong(EX2, "negative", lambda: -math.log(64), ("negative",)),
    # Exercise 3
    right(EX3, "loop", lambda: even_score_loop()),
    right(EX3, "tensor", lambda: even_score_tensor()),
    right(EX3, "harmonic-number", lambda: even_score_harmonic()),
    right(EX3, "two-decimals", lambda: 0.1),
    right(EX3, "numpy", lambda: np.float64(0.099)),
    wrong(EX3, "one-over-T", lambda: 1 / 32, ("causal", "keys 0", "i + 1", "1/T")),
    wrong(EX3, "one-over-T-minus-1", lambda: 1 / 31, ("1/(T - 1)",)),
    wrong(EX3, "one-over-mean-keys", lambda: 1 / 16.5),
    wrong(EX3, "query-0-counted", lambda: sum(1 / (i + 1) for i in range(32)) / 32),
    wrong(EX3, "i-keys", lambda: sum(1 / i for i in range(1, 32)) / 31),
    wrong(EX3, "query-1-only", lambda: 0.5),
    wrong(EX3, "string", lambda: "0.1", ("number", "string", "quote")),
    wrong(EX3, "ln-T-over-T", lambda: math.log(32) / 32, note="0.108: it rounds to 0.11"),
    wrong(EX3, "truncated", lambda: 0.09),
    wrong(EX3, "two-decimals-too-high", lambda: 0.11),
    # Exercise 4
    right(EX4, "triple-loop", lambda: it_loops),
    right(EX4, "dict-last-seen", lambda: it_last_seen),
    right(EX4, "match-matrix", lambda: it_matrix),
    right(EX4, "reversed-prefix", lambda: it_argmax_flip),
    wrong(EX4, "earlier-occurrence-itself", lambda: it_occurrence_itself, ("after", "j + 1", "itself", "copies")),
    wrong(EX4, "first-occurrence", lambda: it_first_occurrence, ("latest", "first occurrence")),
    wrong(EX4, "query-matches-itself", lambda: it_includes_itself, ("j < i", "itself", "future")),
    wrong(EX4, "zero-when-new", lambda: it_zero_when_new),
    wrong(EX4, "int32", lambda: it_int32, ("int64",), note="the prompt asks for int64"),
    wrong(EX4, "later-occurrences-too", lambda: it_any_other),
    wrong(EX4, "later-occurrences-only", lambda: it_later_only),
    wrong(EX4, "token-not-position", lambda: it_token_not_position),
    # Exercise 5
    right(EX5, "ln-64", lambda: math.log(64)),
    right(EX5, "one-decimal", lambda: 4.2),
    right(EX5, "numpy-log", lambda: np.log(64.0)),
    right(EX5, "0d-tensor", lambda: torch.tensor(64.0).log()),
    right(EX5, "as-untrained", lambda: -math.log(1 / 64), note="the same as Exercise 2's answer"),
    wrong(EX5, "unchanged-trained", lambda: 0.5, ("copy", "induction", "ln 64", "uniform", "4.16")),
    wrong(EX5, "bits", lambda: math.log2(64)),
    wrong(EX5, "zero", lambda: 0, ("copy", "induction", "ln 64", "uniform", "4.16")),
    wrong(EX5, "infinite", lambda: math.inf),
    wrong(EX5, "plateau", lambda: 3.0, note="the plateau of section 3; zeroing the heads goes back further"),
    wrong(EX5, "probability", lambda: 1 / 64, ("probability", "log", "ln", "loss")),
    wrong(EX5, "string", lambda: "4.16", ("number", "string", "quote")),
    wrong(EX5, "negative", lambda: -4.16, ("negative",)),
    # Learner population L5
    right(EX1, "row-by-row-slices", lambda: rb_sliced),
    wrong(EX1, "sizes-written-in-raises", lambda: lambda *a: rb_sliced(*a, T=32, L=10)),
    wrong(EX1, "round-not-floor", lambda: lambda *a: rb_sliced(*a, draw=torch.round)),
    wrong(EX2, "vocabulary-size", lambda: 64),
    wrong(EX3, "percentage", lambda: 9.87),
    wrong(EX4, "previous-position", lambda: it_previous_position),
    wrong(EX4, "first-row-only", lambda: it_first_row_only),
    wrong(EX4, "two-after", lambda: it_two_after, ("too far",)),
    wrong(EX5, "vocabulary-size", lambda: 64),
]
