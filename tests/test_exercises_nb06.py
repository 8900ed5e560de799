"""The checkers of notebook 06: each accepts the reference, names each listed mistake, and reports a stub."""

from __future__ import annotations

from fractions import Fraction

import pytest
import torch

from attnlib import masked_softmax
from attnlib.exercises import NOT_ATTEMPTED, nb06


def line(capsys) -> str:
    out = capsys.readouterr().out
    assert out.count("\n") == 1, f"a checker prints exactly one line, got {out!r}"
    return out.rstrip("\n")


# --- Exercise 1: the shape of the features ---------------------------------------------------------

def test_features_shape_accepts_the_reference_in_any_spelling(capsys):
    for answer in [(2, 3, 4, 6), torch.Size([2, 3, 4, 6]), [2, 3, 4, 6]]:
        nb06.check_features_shape(answer)
        assert line(capsys).startswith("Exercise 1: correct. (B, Tq, Tk, h) = (2, 3, 4, 6)")


@pytest.mark.parametrize(("answer", "hint"), [
    ((2, 3, 4), "is the shape of the scores, after w_v"),
    ((2, 3, 4, 1), "w_v's output before squeeze(-1)"),
    ((2, 4, 3, 6), "the queries' axis comes before the keys'"),
    ((2, 3, 4, 5), "your last axis is 5, a width of the inputs"),
    ((2, 3, 4, 7), "your last axis is 7, a width of the inputs"),
    ((2, 3, 4, 12), "added, not concatenated"),
    ((2, 3, 6), "(2, 3, 6) is the shape of one side's projection, one h-vector per query"),
    ((2, 4, 6), "(2, 4, 6) is the shape of one side's projection, one h-vector per key"),
    ((2, 3, 1, 6), "(2, 3, 1, 6) is one of the two operands after unsqueeze"),
    ((2, 1, 4, 6), "(2, 1, 4, 6) is one of the two operands after unsqueeze"),
    ((3, 4, 6), "you left out the batch axis"),
])
def test_features_shape_names_each_mistake(capsys, answer, hint):
    nb06.check_features_shape(answer)
    out = line(capsys)
    assert out.startswith("Exercise 1: not yet. ") and hint in out


def test_features_shape_other_answers_and_the_stub(capsys):
    nb06.check_features_shape((6, 6))
    assert line(capsys) == "Exercise 1: not yet. Expected (2, 3, 4, 6), got (6, 6)."
    nb06.check_features_shape(None)
    assert line(capsys) == f"Exercise 1: {NOT_ATTEMPTED}"


# --- Exercise 2: the largest weight with large queries ---------------------------------------------

@pytest.mark.parametrize("answer", [1 / 7, 0.143, 0.14, torch.tensor(0.1429)])
def test_largest_weight_accepts_one_seventh(capsys, answer):
    nb06.check_largest_weight(answer)
    assert line(capsys).startswith("Exercise 2: correct. 1/7 = 0.143")


@pytest.mark.parametrize(("answer", "hint"), [
    (1.0, "1 means one-hot weights: that is what dot-product weights do"),
    (0.999, "0.999 means one-hot weights"),
    (1, "1 means one-hot weights"),
    (0.2, "1/5 would be uniform over the 5 queries"),
    (0.05, "the largest is at least 1/7 = 0.143; 0.05 is below that"),
    (0.0, "the largest is at least 1/7"),
    (7.0, "a weight of 7 is impossible"),
    (-0.5, "a weight of -0.5 is impossible"),
])
def test_largest_weight_names_each_mistake(capsys, answer, hint):
    nb06.check_largest_weight(answer)
    out = line(capsys)
    assert out.startswith("Exercise 2: not yet. ") and hint in out


def test_largest_weight_other_answers_and_the_stub(capsys):
    nb06.check_largest_weight(0.5)
    assert line(capsys) == "Exercise 2: not yet. Expected 0.142857, got 0.5."
    nb06.check_largest_weight("uniform")
    assert line(capsys).startswith("Exercise 2: not yet. Expected")
    nb06.check_largest_weight(None)
    assert line(capsys) == f"Exercise 2: {NOT_ATTEMPTED}"


# --- Exercise 3: pair scores by broadcasting -------------------------------------------------------

def solution_pair_scores(queries, keys, W_q, W_k, w_v):
    q = queries @ W_q.T  # (B, Tq, h)
    k = keys @ W_k.T  # (B, Tk, h)
    return torch.tanh(q.unsqueeze(2) + k.unsqueeze(1)) @ w_v


def elementwise(queries, keys, W_q, W_k, w_v):
    return torch.tanh(queries @ W_q.T + keys @ W_k.T) @ w_v


def swapped(queries, keys, W_q, W_k, w_v):
    return torch.tanh((queries @ W_q.T).unsqueeze(1) + (keys @ W_k.T).unsqueeze(2)) @ w_v


def tanh_last(queries, keys, W_q, W_k, w_v):
    return torch.tanh(((queries @ W_q.T).unsqueeze(2) + (keys @ W_k.T).unsqueeze(1)) @ w_v)


def no_tanh(queries, keys, W_q, W_k, w_v):
    return ((queries @ W_q.T).unsqueeze(2) + (keys @ W_k.T).unsqueeze(1)) @ w_v


def features_only(queries, keys, W_q, W_k, w_v):
    return torch.tanh((queries @ W_q.T).unsqueeze(2) + (keys @ W_k.T).unsqueeze(1))


def unsqueezed(queries, keys, W_q, W_k, w_v):
    return features_only(queries, keys, W_q, W_k, w_v) @ w_v.unsqueeze(-1)  # (B, Tq, Tk, 1)


def weights_not_scores(queries, keys, W_q, W_k, w_v):
    return solution_pair_scores(queries, keys, W_q, W_k, w_v).softmax(dim=-1)


def test_pair_scores_accepts_the_reference(capsys):
    nb06.check_pair_scores(solution_pair_scores)
    assert line(capsys).startswith("Exercise 3: correct.")


@pytest.mark.parametrize(("wrong", "hint"), [
    (elementwise, "your scores have shape (2, 3), one per query, not one per pair"),
    (swapped, "your scores are the transpose of the right ones"),
    (tanh_last, "tanh came after w_v: all your scores lie within +-"),
    (no_tanh, "no tanh: without it the query's term"),
    (features_only, "your output has shape (2, 3, 3, 6): these are the (B, Tq, Tk, h) tanh features"),
    (unsqueezed, "your scores have shape (2, 3, 3, 1), with a trailing axis of 1"),
    (weights_not_scores, "your rows sum to 1: you returned the softmax weights"),
])
def test_pair_scores_names_each_mistake(capsys, wrong, hint):
    nb06.check_pair_scores(wrong)
    out = line(capsys)
    assert out.startswith("Exercise 3: not yet. ") and hint in out


def test_pair_scores_other_answers_and_the_stub(capsys):
    def stub(queries, keys, W_q, W_k, w_v):
        pass
    nb06.check_pair_scores(stub)
    assert line(capsys).startswith(f"Exercise 3: {NOT_ATTEMPTED}")
    nb06.check_pair_scores(None)
    assert line(capsys) == f"Exercise 3: {NOT_ATTEMPTED}"
    nb06.check_pair_scores(lambda queries, keys, W_q, W_k, w_v: queries @ W_q @ w_v)  # W_q not transposed: raises
    assert line(capsys).startswith("Exercise 3: not yet. Your function raised RuntimeError")
    nb06.check_pair_scores(lambda *args: 2 * solution_pair_scores(*args))
    assert line(capsys).startswith("Exercise 3: not yet. On inputs")


def test_the_checkers_leave_the_global_random_generator_alone(capsys):
    torch.manual_seed(0)
    before = torch.rand(3)
    torch.manual_seed(0)
    nb06.check_pair_scores(solution_pair_scores)
    nb06.check_masked_weights(solution_masked_weights)
    assert torch.equal(torch.rand(3), before)
    capsys.readouterr()


# --- Exercise 4: masked weights --------------------------------------------------------------------

def solution_masked_weights(scores, valid_lens):
    mask = torch.arange(scores.shape[-1]) < valid_lens[:, None, None]  # (B, 1, Tk)
    return masked_softmax(scores, mask)


def with_fill(scores, valid_lens, fill):
    mask = torch.arange(scores.shape[-1]) < valid_lens[:, None, None]
    return scores.masked_fill(~mask, fill).softmax(dim=-1)


def unmasked(scores, valid_lens):
    return scores.softmax(dim=-1)


def inverted(scores, valid_lens):
    mask = torch.arange(scores.shape[-1]) >= valid_lens[:, None, None]  # True = padding, given as True = may attend
    return masked_softmax(scores, mask)


def inverted_fill(scores, valid_lens):
    mask = torch.arange(scores.shape[-1]) < valid_lens[:, None, None]
    return scores.masked_fill(mask, float("-inf")).softmax(dim=-1)  # fills the real keys: NaN where all are real


def inclusive(scores, valid_lens):
    mask = torch.arange(scores.shape[-1]) <= valid_lens[:, None, None]
    return scores.masked_fill(~mask, float("-inf")).softmax(dim=-1)


def no_query_axis(scores, valid_lens):
    mask = torch.arange(scores.shape[-1]) < valid_lens[:, None]  # (B, Tk)
    return scores.masked_fill(~mask, float("-inf")).softmax(dim=-1)


def no_query_axis_masked_softmax(scores, valid_lens):
    return masked_softmax(scores, torch.arange(scores.shape[-1]) < valid_lens[:, None])  # (B, Tk) as (1, B, Tk)


def over_queries(scores, valid_lens):
    mask = torch.arange(scores.shape[-1]) < valid_lens[:, None, None]
    return masked_softmax(scores, mask, dim=-2)


def test_masked_weights_accepts_the_reference_and_a_large_negative_fill(capsys):
    for function in (solution_masked_weights, lambda s, v: with_fill(s, v, float("-inf")),
                     lambda s, v: with_fill(s, v, -1e9)):
        nb06.check_masked_weights(function)
        assert line(capsys).startswith("Exercise 4: correct.")


@pytest.mark.parametrize(("wrong", "hint"), [
    (unmasked, "the padded keys get weight: example 0 has 2 real keys, yet its keys 2 and 3 take 0."),
    (inverted, "the mask is the wrong way round: example 0's real keys 0 and 1 get 0.00 of query 0's weight "
               "and its padded keys 1.00"),
    (inverted_fill, "the mask is the wrong way round"),
    (inclusive, "one key too many: example 0 has 2 real keys (0 and 1), yet key 2 gets 0."),
    (no_query_axis, "your mask has no query axis"),
    (no_query_axis_masked_softmax, "your mask has no query axis"),
    (lambda s, v: with_fill(s, v, 0.0), "the padded scores were set to 0, and exp(0) is not small"),
    (over_queries, "your rows do not sum to 1 over the keys (query 0 of example 0 sums to"),
])
def test_masked_weights_names_each_mistake(capsys, wrong, hint):
    nb06.check_masked_weights(wrong)
    out = line(capsys)
    assert out.startswith("Exercise 4: not yet. ") and hint in out


def test_masked_weights_hints_quote_the_learners_numbers(capsys):
    scores, valid_lens = nb06._masked_weights_inputs()[0]
    padded = scores[0, 0].softmax(dim=-1)[2:].sum()
    nb06.check_masked_weights(unmasked)
    assert f"take {padded:.2f} of query 0's weight" in line(capsys)


def test_masked_weights_the_stub(capsys):
    def stub(scores, valid_lens):
        pass
    nb06.check_masked_weights(stub)
    assert line(capsys).startswith(f"Exercise 4: {NOT_ATTEMPTED}")
    nb06.check_masked_weights(None)
    assert line(capsys) == f"Exercise 4: {NOT_ATTEMPTED}"


# --- answers written another way, and hints that once blamed another mistake --------------------------


def said(capsys) -> str:
    out = capsys.readouterr().out
    assert out.count("\n") == 1, f"a checker prints exactly one line, got {out!r}"
    return out.rstrip("\n")


@pytest.mark.parametrize(("check", "answer"), [
    (nb06.check_features_shape, torch.tensor([2, 3, 4, 6])),
    (nb06.check_largest_weight, Fraction(1, 7)),
    (nb06.check_largest_weight, torch.tensor(1 / 7)),
])
def test_a_right_answer_in_another_type_is_accepted(capsys, check, answer):
    check(answer)
    assert ": correct." in said(capsys)


def test_06_softmax_then_mask_without_renormalising_is_named(capsys):
    def softmax_then_mask(scores, valid_lens):
        mask = torch.arange(scores.shape[-1]) < valid_lens[:, None, None]
        return torch.softmax(scores, -1) * mask

    nb06.check_masked_weights(softmax_then_mask)
    out = said(capsys)
    assert "zeroed the padded keys' weights after the softmax" in out and "axis" not in out


def test_a_number_in_a_string_is_told_to_drop_the_quotes(capsys):
    nb06.check_largest_weight("1/7")
    assert "You wrote the string '1/7': write the number itself" in said(capsys)
