"""The examples of issue 21, one test each: right answers written differently are accepted, the wrong
answers that used to pass are caught, and the hints that blamed the wrong mistake now name the right one."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import torch

from attnlib import causal_mask
from attnlib.exercises import grading, nb01, nb02, nb03, nb04, nb05, nb06, nb07, nb08, nb09


def said(capsys) -> str:
    out = capsys.readouterr().out
    assert out.count("\n") == 1, f"a checker prints exactly one line, got {out!r}"
    return out.rstrip("\n")


# --- right answers rejected for their type ---------------------------------------------------------

@pytest.mark.parametrize(("check", "answer"), [
    (nb08.check_cache_keys_seen, causal_mask(3, 8, align="bottom_right")[0].sum()),  # a 0-d tensor
    (nb08.check_cache_keys_seen, np.int64(6)),
    (nb08.check_weights_memory, torch.tensor(8 * 8192 * 8192 * 4 / 2**20)),
    (nb09.check_group_size, torch.tensor(9) // 3),
    (nb09.check_group_size, np.float64(3.0)),
    (nb09.check_cache_bytes, torch.tensor(2 * 30 * 3 * 64 * 4)),
    (nb05.check_split_shape, np.array([2, 3, 7, 4])),
    (nb05.check_split_shape, torch.Size([2, 3, 7, 4])),
    (nb05.check_head_scale, torch.tensor(64.0).sqrt()),
    (nb05.check_head_scale, np.sqrt(64)),
    (nb05.check_parameter_count, torch.tensor(288)),
    (nb06.check_features_shape, torch.tensor([2, 3, 4, 6])),
    (nb06.check_largest_weight, Fraction(1, 7)),
    (nb06.check_largest_weight, torch.tensor(1 / 7)),
    (nb04.check_combined_shape, np.array([3, 1, 3, 3])),
    (nb04.check_example0_mask, np.array([[1, 0, 0], [1, 1, 0], [1, 1, 0]])),
    (nb04.check_example0_mask, torch.tensor([[True, False, False], [True, True, False], [True, True, False]])),
    (nb03.check_variance_prediction, Fraction(8)),
    (nb03.check_iiith_scaled, np.float32(4.09 / 6)),
    (nb03.check_scaled_variance, torch.tensor(4.0)),
    (nb02.check_key1_column, np.array([0.5, 0.5])),
    (nb02.check_key1_column, (Fraction(1, 2), np.float64(0.5))),
    (nb07.check_permuted_rows, torch.tensor([2, 1, 0])),
    (nb07.check_permuted_rows, np.array([2, 1, 0])),
    (nb07.check_permuted_rows, (2, 1, 0)),
    (nb07.check_decode_bugs, "A and C"),
    (nb07.check_decode_bugs, "lines A, C"),
    (nb07.check_decode_bugs, ["A", "C"]),
])
def test_a_right_answer_in_another_type_is_accepted(capsys, check, answer):
    check(answer)
    assert ": correct." in said(capsys)


def test_shapes_of_notebook_01_may_be_sizes_arrays_or_tensors(capsys):
    nb01.check_shapes(torch.Size([5, 7]), np.array([5, 7]), torch.tensor([5, 32]))
    assert said(capsys).startswith("Exercise 1: correct.")
    nb01.check_shapes("(5, 7)", (5, 7), (5, 32))
    assert said(capsys).startswith("Exercise 1: not yet. Write scores_shape as a tuple of numbers")


def test_weights_of_notebook_01_may_be_an_array(capsys):
    q, k, _ = nb01.exercise_3_inputs()
    weights = torch.softmax(q @ k.T / 2, dim=-1)
    nb01.check_weights(weights.numpy())
    assert said(capsys).startswith("Exercise 3: correct.")
    nb01.check_weights(weights.double())
    assert said(capsys).startswith("Exercise 3: correct.")


@pytest.mark.parametrize(("check", "answer"), [(nb08.check_cache_keys_seen, "6"), (nb03.check_iiith_scaled, "0.68"),
                                               (nb06.check_largest_weight, "1/7"), (nb09.check_cache_bytes, "46080")])
def test_a_number_in_a_string_is_told_to_drop_the_quotes(capsys, check, answer):
    check(answer)
    assert f"You wrote the string {answer!r}: write the number itself" in said(capsys)


# --- right answers rejected for their precision ----------------------------------------------------

def _guard(mask):
    return mask.any(dim=-1, keepdim=True)


@pytest.mark.parametrize("answer", [
    lambda s, m: torch.where(_guard(m), torch.softmax(s.masked_fill(~m, float("-inf")), -1, dtype=torch.float32), 0.0),
    lambda s, m: torch.where(_guard(m), torch.exp(s.float().masked_fill(~m, float("-inf"))
                                                  - torch.logsumexp(s.float().masked_fill(~m, float("-inf")), -1,
                                                                    keepdim=True)), 0.0),
    lambda s, m: torch.where(_guard(m), torch.softmax(s.double().masked_fill(~m, float("-inf")), -1), 0.0),
])
def test_float16_scores_computed_in_float32_or_with_logsumexp_are_right(capsys, answer):
    nb04.check_safe_masked_softmax(answer)
    assert said(capsys).startswith("Exercise 4: correct.")


@pytest.mark.parametrize(("small", "large"), [(0.99, 0.17), (1, 0.16), (1.0, 1 / 6)])
def test_two_decimals_are_enough_in_02_exercise_2(capsys, small, large):
    nb02.check_tau_limits(small, large)
    assert said(capsys).startswith("Exercise 2: correct.")


# --- wrong answers accepted ------------------------------------------------------------------------

def _shifted_by(shift):
    def softmax(x):
        e = torch.exp(x - shift(x))
        return e / e.sum(dim=-1, keepdim=True)
    return softmax


@pytest.mark.parametrize("shift", [lambda x: x.amin(dim=-1, keepdim=True), lambda x: x.mean(dim=-1, keepdim=True),
                                   lambda x: x[..., :1]], ids=["min", "mean", "first"])
def test_02_softmax_shifted_by_anything_but_the_maximum_is_caught_on_a_wide_row(capsys, shift):
    nb02.check_stable_softmax(_shifted_by(shift))
    out = said(capsys)
    assert out.startswith("Exercise 4: not yet. On the row [0, 200] your weights are NaN") and "x.amax" in out


def test_08_online_update_with_raw_exponentials_is_caught_in_float32(capsys):
    def late(m, s, x):
        m_new = torch.maximum(m, x)
        return m_new, (s * torch.exp(m) + torch.exp(x)) / torch.exp(m_new)

    nb08.check_online_update(late)
    out = said(capsys)
    assert out.startswith("Exercise 2: not yet. On the probe m = 100, s = 1, x = 101 in float32") and "exp(101)" in out


def test_04_additive_inf_mask_then_nan_to_num_is_caught_by_its_gradient(capsys):
    def additive_then_nan_to_num(scores, mask):
        additive = torch.zeros_like(scores).masked_fill(~mask, float("-inf"))
        return torch.softmax(scores + additive, dim=-1).nan_to_num(0.0)

    nb04.check_safe_masked_softmax(additive_then_nan_to_num)
    out = said(capsys)
    assert out.startswith("Exercise 4: not yet. Your weights are right, but under P2's loss mask") and "NaN" in out

    def masked_fill_then_nan_to_num(scores, mask):  # masked_fill sends no gradient to the masked scores: right
        return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1).nan_to_num(0.0)

    nb04.check_safe_masked_softmax(masked_fill_then_nan_to_num)
    assert said(capsys).startswith("Exercise 4: correct.")


# --- hints that blamed the wrong thing -------------------------------------------------------------

def test_06_softmax_then_mask_without_renormalising_is_named(capsys):
    def softmax_then_mask(scores, valid_lens):
        mask = torch.arange(scores.shape[-1]) < valid_lens[:, None, None]
        return torch.softmax(scores, -1) * mask

    nb06.check_masked_weights(softmax_then_mask)
    out = said(capsys)
    assert "zeroed the padded keys' weights after the softmax" in out and "axis" not in out


def test_09_diagonal_with_swapped_dims_is_told_about_the_dims(capsys):
    nb09.check_previous_token_score(lambda w: w.diagonal(offset=-1, dim1=-1, dim2=-2).mean(-1))
    out = said(capsys)
    assert "dims swapped (dim1=-1, dim2=-2)" in out and "NEXT token" in out


def test_09_the_mean_pool_hint_can_be_followed_as_written(capsys):
    nb09.check_mean_pool(lambda hidden, mask: hidden.mean(dim=1))
    assert "attention_mask.sum(dim=1, keepdim=True)" in said(capsys)

    def as_the_hint_says(hidden, attention_mask):
        summed = (hidden * attention_mask[..., None]).sum(dim=1)
        return summed / attention_mask.sum(dim=1, keepdim=True)

    nb09.check_mean_pool(as_the_hint_says)
    assert said(capsys).startswith("Exercise 2: correct.")


def test_09_checkers_leave_the_global_generator_alone(capsys):
    torch.manual_seed(123)
    before = torch.get_rng_state()
    nb09.check_mean_pool(lambda h, m: h.mean(dim=1))
    nb09.check_previous_token_score(lambda w: w.diagonal(dim1=-2, dim2=-1).mean(-1))
    capsys.readouterr()
    assert torch.equal(torch.get_rng_state(), before)


@pytest.mark.parametrize("answer", ["A and C", "a and c", "A, C"])
def test_07_an_and_between_letters_is_not_a_line_called_n(capsys, answer):
    nb07.check_decode_bugs(answer)
    assert "N is not one of them" not in said(capsys)
    nb07.check_decode_bugs("A and B")
    out = said(capsys)
    assert "Line B is right" in out and "Line C is wrong" in out


def test_07_a_wrong_exponent_is_not_told_about_its_dtype(capsys):
    def pair_index_without_two(T, E):
        i = torch.arange(E // 2)
        angle = torch.arange(T)[:, None] / 10000 ** (i / E)
        pe = torch.zeros(T, E)
        pe[:, 0::2], pe[:, 1::2] = angle.sin(), angle.cos()
        return pe

    def some_other_exponent(T, E):
        i = torch.arange(E // 2)
        angle = torch.arange(T)[:, None] / 10000 ** (3 * i / E)
        pe = torch.zeros(T, E)
        pe[:, 0::2], pe[:, 1::2] = angle.sin(), angle.cos()
        return pe

    nb07.check_sinusoidal(pair_index_without_two)
    assert "your exponent is i/E with i the pair index" in said(capsys)
    nb07.check_sinusoidal(some_other_exponent)
    out = said(capsys)
    assert out == "Exercise 2: not yet. On inputs 6, 4, at index (1, 2) expected 0.01, got 0.001.", out


# --- grading mode on the examples ----------------------------------------------------------

def test_grading_mode_fails_the_lucky_softmax_and_passes_the_right_one(capsys):
    with grading(), pytest.raises(AssertionError, match=r"^Exercise 4: not yet\. On the row \[0, 200\]"):
        nb02.check_stable_softmax(_shifted_by(lambda x: x.amin(dim=-1, keepdim=True)))
    with grading():
        nb02.check_stable_softmax(_shifted_by(lambda x: x.amax(dim=-1, keepdim=True)))
    assert capsys.readouterr().out == ""
