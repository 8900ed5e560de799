"""The checkers of notebook 03: each accepts the reference, names each listed mistake, and reports a stub."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
import torch

from attnlib.exercises import nb03


def said(capsys: pytest.CaptureFixture[str]) -> str:
    out = capsys.readouterr().out
    assert out.count("\n") == 1, f"a checker prints exactly one line, got {out!r}"
    return out


# ----------------------------------------------------------------------------- the predictions, exercises 1-4

PREDICTIONS = {
    "Exercise 1": (nb03.check_variance_prediction, [8, 8.0, torch.tensor(8.0)], [
        (math.sqrt(8), "is sqrt(8), the standard deviation"),
        (64, "64 = 8²: the variances of independent terms add"),
        (1, "1 is the variance of one product"),
        (0, "0 is the mean of q · k"),
    ], 5),
    "Exercise 2": (nb03.check_iiith_scaled, [0.68, 4.09 / 6], [
        (4.09 / math.sqrt(6), "divides its variance by c²"),
        (1.0, "1 is what the theory gives on average"),
        (4.09, "4.09 is the variance before the scaling"),
        (4.09 / 36, "divides the variance by 6² = d_k²"),
    ], 0.5),
    "Exercise 3": (nb03.check_top_weight_prediction, [0.95, 1.0, 0.9], [
        (0.06, "is about 1/16, a uniform row"),
        (0.25, "is about what the scaled rows keep"),
        (1.5, "A weight lies between 0 and 1"),
        (-0.1, "A weight lies between 0 and 1"),
    ], 0.6),
    "Exercise 4": (nb03.check_scaled_variance, [4, 4.0, 4.05, torch.tensor(4.0), 256 / 64], [
        (1, "1 is what entries of variance 1 give"),
        (256, "256 = 64 · 4 is the variance of q · k before the scale"),
        (2, "2 is the standard deviation"),
        (32, "32 = 256 / 8 divides the variance by sqrt(d_k)"),
        (4 / 64, "0.0625 = 4 / 64 divides by d_k once too often"),
        (5, "5 = 4 + 1 adds the two variances"),
        (16, "16 squares the query's variance"),
    ], 3.5),
}


@pytest.mark.parametrize(("name", "answer"), [(n, a) for n, (_, good, _, _) in PREDICTIONS.items() for a in good])
def test_prediction_accepts_the_reference(capsys, name, answer):
    PREDICTIONS[name][0](answer)
    assert said(capsys).startswith(f"{name}: correct.")


@pytest.mark.parametrize(("name", "answer", "hint"),
                         [(n, a, h) for n, (_, _, wrong, _) in PREDICTIONS.items() for a, h in wrong])
def test_prediction_names_the_mistake(capsys, name, answer, hint):
    PREDICTIONS[name][0](answer)
    out = said(capsys)
    assert out.startswith(f"{name}: not yet.") and hint in out


@pytest.mark.parametrize("name", PREDICTIONS)
def test_prediction_general_hint_and_stub(capsys, name):
    checker, _, _, other = PREDICTIONS[name]
    checker(other)
    assert f"{name}: not yet. Expected" in said(capsys)
    checker(None)
    assert said(capsys) == f"{name}: not attempted yet\n"


# ----------------------------------------------------------------------------- exercise 5


def scores_by(divisor):
    return lambda q, k: q @ k.transpose(-2, -1) / divisor(q, k)


def test_scaled_scores_accepts_the_reference(capsys):
    nb03.check_scaled_scores(scores_by(lambda q, k: math.sqrt(q.shape[-1])))
    assert said(capsys).startswith("Exercise 5: correct.")


@pytest.mark.parametrize(("divisor", "hint"), [
    (lambda q, k: 1.0, "divided by 1, which is no scaling at all"),
    (lambda q, k: q.shape[-1], "divided by 16, which is d_k = 16 instead of sqrt(d_k)"),
    (lambda q, k: math.sqrt(q.shape[1] * q.shape[-1]), "divided by 5.657, which is sqrt(32) = sqrt(E)"),
    (lambda q, k: 1 / math.sqrt(q.shape[-1]), "you multiplied by sqrt(16) instead of dividing"),
    (lambda q, k: math.sqrt(q.shape[-2]), "sqrt(4) = sqrt(Tq): q.shape[-2] is the number of queries"),
    (lambda q, k: math.sqrt(k.shape[-2]), "sqrt(5) = sqrt(Tk): k.shape[-2] is the number of keys"),
])
def test_scaled_scores_names_the_divisor(capsys, divisor, hint):
    nb03.check_scaled_scores(scores_by(divisor))
    out = said(capsys)
    assert out.startswith("Exercise 5: not yet.") and hint in out
    assert "Divide by sqrt(q.shape[-1]) = 4" in out


def test_scaled_scores_names_a_transposed_result(capsys):
    nb03.check_scaled_scores(lambda q, k: (q @ k.transpose(-2, -1) / 4).transpose(-2, -1))
    out = said(capsys)
    assert "Your scores have shape (3, 2, 5, 4), expected (3, 2, 4, 5)" in out


def test_scaled_scores_general_hint_and_stubs(capsys):
    nb03.check_scaled_scores(scores_by(lambda q, k: 3.0))
    assert "divided by 3; divide by sqrt(q.shape[-1]) = sqrt(16) = 4" in said(capsys)
    nb03.check_scaled_scores(None)
    assert said(capsys) == "Exercise 5: not attempted yet\n"
    nb03.check_scaled_scores(lambda q, k: None)
    assert "not attempted yet" in said(capsys)


# --- answers written another way, and hints that once blamed another mistake --------------------------


@pytest.mark.parametrize(("check", "answer"), [
    (nb03.check_variance_prediction, Fraction(8)),
    (nb03.check_iiith_scaled, np.float32(4.09 / 6)),
    (nb03.check_scaled_variance, torch.tensor(4.0)),
])
def test_a_right_answer_in_another_type_is_accepted(capsys, check, answer):
    check(answer)
    assert ": correct." in said(capsys)


def test_a_number_in_a_string_is_told_to_drop_the_quotes(capsys):
    nb03.check_iiith_scaled("0.68")
    assert "You wrote the string '0.68': write the number itself" in said(capsys)
