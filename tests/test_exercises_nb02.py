"""The checkers of notebook 02: each accepts the reference, names each listed mistake, and reports a stub."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from attnlib.exercises import grading, nb02


def said(capsys: pytest.CaptureFixture[str]) -> str:
    out = capsys.readouterr().out
    assert out.count("\n") == 1, f"a checker prints exactly one line, got {out!r}"
    return out


def stub_function(*args):
    pass


# ----------------------------------------------------------------------------- exercise 1


@pytest.mark.parametrize("answer", [(0.5, 0.5), [0.5, 0.5], torch.tensor([0.5, 0.5]), (0.5, 0.501)])
def test_key1_column_accepts_the_reference(capsys, answer):
    nb02.check_key1_column(answer)
    assert said(capsys).startswith("Exercise 1: correct.")


@pytest.mark.parametrize(("answer", "hint"), [
    ((0.1065, 0.1065), "is key 1's weight with dim=-1"),
    ((0.0, 0.0), "A score of 0 does not give a weight of 0"),
    ((1 / 3, 1 / 3), "splits one unit over the 3 keys"),
    ((0.3, 0.3), "Your column sums to 0.6"),
])
def test_key1_column_names_the_mistake(capsys, answer, hint):
    nb02.check_key1_column(answer)
    out = said(capsys)
    assert out.startswith("Exercise 1: not yet.") and hint in out


def test_key1_column_general_hint_and_stub(capsys):
    nb02.check_key1_column((0.7, 0.3))
    assert said(capsys) == "Exercise 1: not yet. At index 0 expected 0.5, got 0.7.\n"
    nb02.check_key1_column(None)
    assert said(capsys) == "Exercise 1: not attempted yet\n"


# ----------------------------------------------------------------------------- exercise 2


@pytest.mark.parametrize("answer", [(1.0, 1 / 6), (1, 0.17), (0.999, 0.1691)])
def test_tau_limits_accepts_the_reference(capsys, answer):
    nb02.check_tau_limits(*answer)
    assert said(capsys).startswith("Exercise 2: correct.")


@pytest.mark.parametrize(("answer", "hint"), [
    ((1 / 6, 1.0), "You swapped them"),
    ((1.0, 0.0), "At tau = 100 you wrote 0"),
    ((0.0, 1 / 6), "At tau = 0.01 you wrote 0"),
    ((1.2, 0.1), "A weight lies between 0 and 1"),
])
def test_tau_limits_names_the_mistake(capsys, answer, hint):
    nb02.check_tau_limits(*answer)
    out = said(capsys)
    assert out.startswith("Exercise 2: not yet.") and hint in out


def test_tau_limits_general_hint_and_stub(capsys):
    nb02.check_tau_limits(0.9, 0.3)
    assert said(capsys) == "Exercise 2: not yet. At index 0 expected 1.0, got 0.9.\n"
    nb02.check_tau_limits(None, None)
    assert said(capsys) == "Exercise 2: not attempted yet\n"
    nb02.check_tau_limits(1.0, None)
    assert said(capsys) == "Exercise 2: not attempted yet\n"


# ----------------------------------------------------------------------------- exercise 3


def test_attention_weights_accepts_the_reference(capsys):
    nb02.check_attention_weights(lambda scores: torch.softmax(scores, dim=-1))
    assert said(capsys).startswith("Exercise 3: correct.")


@pytest.mark.parametrize(("function", "hint"), [
    (lambda s: torch.softmax(s, dim=-2), "on (Tq, Tk) scores your rows sum to 1.50, 1.50"),
    (lambda s: torch.softmax(s, dim=1), "on (B, Tq, Tk) scores your rows sum to"),
    (lambda s: torch.softmax(s, dim=0), "softmax ran over the queries (Tq is dim=0 or dim=-2 here)"),
    (lambda s: F.softmax(s, dim=0 if s.dim() == 3 else -1), "softmax ran over the batch (B is dim=0"),
    (lambda s: torch.softmax(s, dim=1 if s.dim() == 4 else -1), "softmax ran over the heads (H is dim=1"),
])
def test_attention_weights_names_the_axis(capsys, function, hint):
    nb02.check_attention_weights(function)
    out = said(capsys)
    assert out.startswith("Exercise 3: not yet.") and hint.lower() in out.lower()
    assert "use dim=-1" in out


def test_attention_weights_general_hint(capsys):
    nb02.check_attention_weights(lambda s: s)
    assert "expected" in said(capsys)


# ----------------------------------------------------------------------------- exercise 4


def stable(x):
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


def naive(x):
    e = torch.exp(x)
    return e / e.sum(dim=-1, keepdim=True)


def global_max(x):
    e = torch.exp(x - x.max())
    return e / e.sum(dim=-1, keepdim=True)


def max_without_keepdim(x):
    e = torch.exp(x - x.amax(dim=-1))
    return e / e.sum(dim=-1, keepdim=True)


def sum_without_keepdim(x):
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1)


def test_stable_softmax_accepts_the_reference(capsys):
    nb02.check_stable_softmax(stable)
    assert said(capsys).startswith("Exercise 4: correct.")


@pytest.mark.parametrize(("function", "hint"), [
    (naive, "2 of your 3 rows are NaN (the rows with scores near 100 and -1000)"),
    (global_max, "one maximum for the whole tensor"),
    (max_without_keepdim, "the row maxima without keepdim=True"),
    (sum_without_keepdim, "the row sums without keepdim=True"),
    (lambda x: stable(x.transpose(-2, -1)).transpose(-2, -1), "softmax ran over the queries"),
    (lambda x: torch.exp(x) / torch.exp(x).sum(), "1 of your 3 rows contain NaN or inf"),
])
def test_stable_softmax_names_the_mistake(capsys, function, hint):
    nb02.check_stable_softmax(function)
    out = said(capsys)
    assert out.startswith("Exercise 4: not yet.") and hint in out


def test_stable_softmax_general_hint(capsys):
    nb02.check_stable_softmax(lambda x: stable(x) + 0.01)
    assert "expected" in said(capsys)


# ----------------------------------------------------------------------------- exercise 5


def test_temperature_softmax_accepts_the_reference(capsys):
    nb02.check_temperature_softmax(lambda scores, tau: torch.softmax(scores / tau, dim=-1))
    assert said(capsys).startswith("Exercise 5: correct.")


@pytest.mark.parametrize(("function", "hint"), [
    (lambda s, tau: torch.softmax(s * tau, dim=-1), "you multiplied the scores by tau"),
    (lambda s, tau: torch.softmax(s * tau, dim=-1), "largest weight is 0.3047, expected 0.6515"),
    (lambda s, tau: torch.softmax(s, dim=-1) / tau, "your rows sum to 2 = 1 / tau"),
    (lambda s, tau: torch.softmax(s, dim=-1), "tau is not used"),
    (lambda s, tau: torch.softmax(s / tau, dim=0), "On (Tq, Tk) scores your rows sum to"),
    (lambda s, tau: torch.softmax(s / tau, dim=-2), "softmax ran over the queries"),
    (lambda s, tau: torch.softmax(s / tau, dim=1), "softmax ran over the queries (Tq is dim=1"),
])
def test_temperature_softmax_names_the_mistake(capsys, function, hint):
    nb02.check_temperature_softmax(function)
    out = said(capsys)
    assert out.startswith("Exercise 5: not yet.") and hint.lower() in out.lower()


def test_temperature_softmax_probes_have_the_promised_shape(capsys):
    """The stub promises scores (..., Tq, Tk): the probes are (Tq, Tk), (B, Tq, Tk) and (B, H, Tq, Tk), never 1-D."""
    shapes = []

    def recording(scores, tau):
        shapes.append(tuple(scores.shape))
        return torch.softmax(scores / tau, dim=-1)

    nb02.check_temperature_softmax(recording)
    assert said(capsys).startswith("Exercise 5: correct.")
    assert sorted({len(s) for s in shapes}) == [2, 3, 4], shapes
    assert all(s[-2] > 1 for s in shapes), shapes  # more than one query: an axis mistake changes the result


def test_temperature_softmax_accepts_flattened_rows(capsys):
    """A right answer that relies on the promised (..., Tq, Tk) shape is accepted (a 1-D probe made it raise)."""
    nb02.check_temperature_softmax(
        lambda s, tau: torch.softmax(s.flatten(end_dim=-2) / tau, dim=-1).reshape(s.shape))
    assert said(capsys).startswith("Exercise 5: correct.")


def test_temperature_softmax_general_hint(capsys):
    nb02.check_temperature_softmax(lambda s, tau: torch.softmax(s / (tau + 1), dim=-1))
    assert "expected" in said(capsys)


# ----------------------------------------------------------------------------- the stubs of exercises 3-5


@pytest.mark.parametrize(("name", "checker"), [
    ("Exercise 3", nb02.check_attention_weights),
    ("Exercise 4", nb02.check_stable_softmax),
    ("Exercise 5", nb02.check_temperature_softmax),
])
def test_function_stubs_are_not_attempted(capsys, name, checker):
    checker(None)
    assert said(capsys) == f"{name}: not attempted yet\n"
    checker(stub_function)
    assert said(capsys).startswith(f"{name}: not attempted yet (your function returns None")


# --- answers written another way, and hints that once blamed another mistake --------------------------


@pytest.mark.parametrize(("check", "answer"), [
    (nb02.check_key1_column, np.array([0.5, 0.5])),
    (nb02.check_key1_column, (Fraction(1, 2), np.float64(0.5))),
])
def test_a_right_answer_in_another_type_is_accepted(capsys, check, answer):
    check(answer)
    assert ": correct." in said(capsys)


@pytest.mark.parametrize(("small", "large"), [(0.99, 0.17), (1, 0.16), (1.0, 1 / 6)])
def test_two_decimals_are_enough_in_02_exercise_2(capsys, small, large):
    nb02.check_tau_limits(small, large)
    assert said(capsys).startswith("Exercise 2: correct.")


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


def test_grading_mode_fails_the_lucky_softmax_and_passes_the_right_one(capsys):
    with grading(), pytest.raises(AssertionError, match=r"^Exercise 4: not yet\. On the row \[0, 200\]"):
        nb02.check_stable_softmax(_shifted_by(lambda x: x.amin(dim=-1, keepdim=True)))
    with grading():
        nb02.check_stable_softmax(_shifted_by(lambda x: x.amax(dim=-1, keepdim=True)))
    assert capsys.readouterr().out == ""
