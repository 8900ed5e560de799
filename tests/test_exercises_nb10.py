"""The checkers of notebook 10: right answers written differently pass, each classic mistake gets its hint,
a stub is not attempted."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from attnlib.exercises import nb10

T, L, V = 32, 10, 64


def said(capsys) -> str:
    out = capsys.readouterr().out.strip()
    assert "\n" not in out  # one line
    return out


def stub_function(*args):
    return None  # the learner version's body: "# YOUR CODE HERE" then pass


@pytest.mark.parametrize("check", [nb10.check_repeated_batch, nb10.check_untrained_loss,
                                   nb10.check_previous_token_score, nb10.check_prefix_matching_score,
                                   nb10.check_ablation_loss])
def test_a_stub_is_not_attempted(check, capsys):
    check(None)
    assert said(capsys).endswith(": not attempted yet")


@pytest.mark.parametrize("check", [nb10.check_repeated_batch, nb10.check_previous_token_score,
                                   nb10.check_prefix_matching_score])
def test_a_stub_function_is_not_attempted(check, capsys):
    check(stub_function)
    assert "not attempted yet" in said(capsys)


# --- Exercise 1: the repeated batch ----------------------------------------------------------------


def batch_with_loop(batch_size, seq_len, repeat_len, vocab_size, generator):
    tokens = torch.randint(vocab_size, (batch_size, seq_len), generator=generator)
    first = torch.randint(seq_len - 2 * repeat_len + 1, (batch_size,), generator=generator)
    second = first + repeat_len + (torch.rand(batch_size, generator=generator)
                                   * (seq_len - 2 * repeat_len - first + 1)).long()
    for b in range(batch_size):
        tokens[b, second[b]:second[b] + repeat_len] = tokens[b, first[b]:first[b] + repeat_len]
    return tokens, first, second


def batch_pairs_drawn_together(batch_size, seq_len, repeat_len, vocab_size, generator):
    # another right answer: draw (first, second) uniformly from all valid pairs, then copy with gather
    pairs = torch.tensor([(f, s) for f in range(seq_len - 2 * repeat_len + 1)
                          for s in range(f + repeat_len, seq_len - repeat_len + 1)])
    pick = pairs[torch.randint(len(pairs), (batch_size,), generator=generator)]
    tokens = torch.randint(vocab_size, (batch_size, seq_len), generator=generator)
    j = torch.arange(repeat_len)
    tokens.scatter_(1, pick[:, 1:] + j, tokens.gather(1, pick[:, :1] + j))
    return tokens, pick[:, 0], pick[:, 1]


def batch_fixed_offset(batch_size, seq_len, repeat_len, vocab_size, generator):
    tokens = torch.randint(vocab_size, (batch_size, seq_len), generator=generator)
    first = torch.randint(seq_len - 2 * repeat_len + 1, (batch_size,), generator=generator)
    second = first + repeat_len  # always right after: a fixed distance
    for b in range(batch_size):
        tokens[b, second[b]:second[b] + repeat_len] = tokens[b, first[b]:first[b] + repeat_len]
    return tokens, first, second


def batch_fixed_places(batch_size, seq_len, repeat_len, vocab_size, generator):
    tokens = torch.randint(vocab_size, (batch_size, seq_len), generator=generator)
    tokens[:, seq_len - repeat_len:] = tokens[:, :repeat_len]
    return tokens, torch.zeros(batch_size, dtype=torch.long), torch.full((batch_size,), seq_len - repeat_len)


def batch_overlapping(batch_size, seq_len, repeat_len, vocab_size, generator):
    tokens = torch.randint(vocab_size, (batch_size, seq_len), generator=generator)
    first = torch.randint(seq_len - repeat_len - 1, (batch_size,), generator=generator)
    second = first + 1 + (torch.rand(batch_size, generator=generator) * (seq_len - repeat_len - first)).long()
    for b in range(batch_size):
        tokens[b, second[b]:second[b] + repeat_len] = tokens[b, first[b]:first[b] + repeat_len].clone()
    return tokens, first, second


def batch_exclusive_high(batch_size, seq_len, repeat_len, vocab_size, generator):
    tokens = torch.randint(vocab_size, (batch_size, seq_len), generator=generator)
    first = torch.randint(seq_len - 2 * repeat_len, (batch_size,), generator=generator)  # T - 2L never drawn
    second = first + repeat_len + (torch.rand(batch_size, generator=generator)
                                   * (seq_len - 2 * repeat_len - first)).long()  # T - L never drawn
    for b in range(batch_size):
        tokens[b, second[b]:second[b] + repeat_len] = tokens[b, first[b]:first[b] + repeat_len]
    return tokens, first, second


def batch_ignores_generator(batch_size, seq_len, repeat_len, vocab_size, generator):
    return batch_with_loop(batch_size, seq_len, repeat_len, vocab_size, None)


def batch_not_copied(batch_size, seq_len, repeat_len, vocab_size, generator):
    tokens, first, second = batch_with_loop(batch_size, seq_len, repeat_len, vocab_size, generator)
    return torch.randint(vocab_size, (batch_size, seq_len), generator=generator), first, second


@pytest.mark.parametrize("right", [batch_with_loop, batch_pairs_drawn_together])
def test_repeated_batch_right_answers(right, capsys):
    nb10.check_repeated_batch(right)
    assert said(capsys).startswith("Exercise 1: correct.")


@pytest.mark.parametrize("wrong, words", [
    (batch_fixed_offset, "fixed offset"),
    (batch_fixed_places, "same places"),
    (batch_overlapping, "overlap"),
    (batch_exclusive_high, "never reach the ends"),
    (batch_ignores_generator, "generator you are"),
    (batch_not_copied, "must equal"),
    (lambda *a: batch_with_loop(*a)[0], "three tensors"),
    (lambda b, t, n, v, g: tuple(x.float() for x in batch_with_loop(b, t, n, v, g)), "integers"),
    (lambda *a: 1 / 0, "raised ZeroDivisionError"),
    (42, "Expected a function"),
])
def test_repeated_batch_mistakes(wrong, words, capsys):
    nb10.check_repeated_batch(wrong)
    out = said(capsys)
    assert out.startswith("Exercise 1: not yet.") and words in out, out


# --- Exercise 2: the untrained loss -------------------------------------------------------------------


@pytest.mark.parametrize("right", [math.log(64), -math.log(1 / 64), 6 * math.log(2), torch.tensor(64.0).log(),
                                   np.log(64), 4.16, torch.tensor([math.log(64)]), np.array(4.16),
                                   torch.tensor(math.log(64), dtype=torch.float16), [4.16]])
def test_untrained_loss_right(right, capsys):
    nb10.check_untrained_loss(right)
    assert said(capsys).startswith("Exercise 2: correct.")


@pytest.mark.parametrize("wrong, words", [(6, "bits"), (math.log2(64), "bits"), (1 / 64, "probability"),
                                          (64, "number of tokens"), (0, "sure and right")])
def test_untrained_loss_mistakes(wrong, words, capsys):
    nb10.check_untrained_loss(wrong)
    out = said(capsys)
    assert out.startswith("Exercise 2: not yet.") and words in out, out


def test_untrained_loss_other_number_shows_the_expected_value(capsys):
    nb10.check_untrained_loss(3.0)
    assert said(capsys).startswith("Exercise 2: not yet. Expected 4.158")


# --- Exercise 3: previous-token score -------------------------------------------------------------------


@pytest.mark.parametrize("right", [
    lambda w: w.diagonal(offset=-1, dim1=-2, dim2=-1).mean(dim=(0, -1)),
    lambda w: torch.stack([w[:, :, i, i - 1] for i in range(1, w.shape[-1])], dim=-1).mean(-1).mean(0),
    lambda w: torch.einsum("bhij,ij->h", w, torch.eye(w.shape[-1], dtype=w.dtype).roll(-1, 1).tril(-1))
    / (w.shape[0] * (w.shape[-1] - 1)),
    lambda w: w.double().diagonal(offset=-1, dim1=2, dim2=3).mean(dim=(0, 2)),
])
def test_previous_token_score_right(right, capsys):
    nb10.check_previous_token_score(right)
    assert said(capsys).startswith("Exercise 3: correct."), said


@pytest.mark.parametrize("wrong, words", [
    (lambda w: w.diagonal(dim1=-2, dim2=-1).mean(dim=(0, -1)), "main diagonal"),
    (lambda w: w.diagonal(offset=1, dim1=-2, dim2=-1).mean(dim=(0, -1)), "read the next token"),
    (lambda w: w.diagonal(offset=-1, dim1=-2, dim2=-1).sum(-1).mean(0) / w.shape[-1], "counting query 0"),
    (lambda w: w.diagonal(offset=-1, dim1=-2, dim2=-1).mean(dim=(1, -1)), "over the heads instead of the batch"),
    (lambda w: w.diagonal(offset=-1, dim1=-1, dim2=-2).mean(dim=(0, -1)), "axes swapped"),
])
def test_previous_token_score_mistakes(wrong, words, capsys):
    nb10.check_previous_token_score(wrong)
    out = said(capsys)
    assert out.startswith("Exercise 3: not yet.") and words in out, out


# --- Exercise 4: prefix-matching score ---------------------------------------------------------------------


@pytest.mark.parametrize("right", [
    lambda w, n: w.diagonal(offset=1 - n, dim1=-2, dim2=-1)[..., 1:].mean(-1),
    lambda w, n: torch.stack([w[..., n + j, j + 1] for j in range(n)], dim=-1).mean(-1),
    lambda w, n: w[..., torch.arange(n, 2 * n), torch.arange(1, n + 1)].mean(-1),
])
def test_prefix_matching_score_right(right, capsys):
    nb10.check_prefix_matching_score(right)
    assert said(capsys).startswith("Exercise 4: correct.")


@pytest.mark.parametrize("wrong, words", [
    (lambda w, n: w.diagonal(offset=-n, dim1=-2, dim2=-1).mean(-1), "earlier occurrence itself"),
    (lambda w, n: torch.stack([w[..., n + j, j] for j in range(n)], dim=-1).mean(-1), "earlier occurrence itself"),
    (lambda w, n: w.diagonal(offset=1 - n, dim1=-2, dim2=-1).mean(-1), "counted a query of the first copy"),
    (lambda w, n: w.diagonal(offset=1 - n, dim1=-2, dim2=-1)[..., 1:].sum(-1) / (2 * n), "all 2L queries"),
    (lambda w, n: w.diagonal(offset=-n - 1, dim1=-2, dim2=-1).mean(-1), "token before the earlier occurrence"),
])
def test_prefix_matching_score_mistakes(wrong, words, capsys):
    nb10.check_prefix_matching_score(wrong)
    out = said(capsys)
    assert out.startswith("Exercise 4: not yet.") and words in out, out


# --- Exercise 5: the loss after ablation ------------------------------------------------------------------


@pytest.mark.parametrize("right", [math.log(64), 4.0, 4.5, torch.tensor(4.2), np.float32(3.9)])
def test_ablation_loss_right(right, capsys):
    nb10.check_ablation_loss(right)
    assert said(capsys).startswith("Exercise 5: correct.")


@pytest.mark.parametrize("wrong, words", [(0.8, "another head to copy"), (0, "another head to copy"),
                                          (6, "bits"), (64, "number of tokens")])
def test_ablation_loss_mistakes(wrong, words, capsys):
    nb10.check_ablation_loss(wrong)
    out = said(capsys)
    assert out.startswith("Exercise 5: not yet.") and words in out, out
