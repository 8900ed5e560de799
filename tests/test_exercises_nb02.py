"""What is specific to notebook 02's exercises (tests/test_exercises_generic.py covers what every exercise does)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import torch

from attnlib.exercises import Exercise, grading, nb02


def said(capsys: pytest.CaptureFixture[str]) -> str:
    out = capsys.readouterr().out
    assert out.count("\n") == 1, f"a checker prints exactly one line, got {out!r}"
    return out.rstrip("\n")


# --- Exercises 1 and 3: predictions, at the 2 decimals the prompts ask for --------------------------------


@pytest.mark.parametrize("answer", [(0.5, 0.501), np.array([0.5, 0.5]), (Fraction(1, 2), np.float64(0.5)),
                                    torch.tensor([0.5, 0.5])])
def test_key1_column_in_any_form(capsys, answer):
    nb02.check_key1_column(answer)
    assert said(capsys).startswith("Exercise 1: correct.")


@pytest.mark.parametrize(("answer", "hint"), [
    ((0.88, 0.12), "Softmax with dim=-2 normalises key 1's column"),  # another key's column: no row of its own
    ((0.7, 0.3), "Softmax with dim=-2 normalises key 1's column"),
    (0.5, "Write the two weights of key 1's column"),
])
def test_key1_column_hints_state_no_answer(capsys, answer, hint):
    nb02.check_key1_column(answer)
    out = said(capsys)
    assert out.startswith("Exercise 1: not yet.") and hint in out and "0.5" not in out, out


@pytest.mark.parametrize(("small", "large"),
                         [(0.49, 0.33), (0.5, 0.34), (0.5, 1 / 3), (np.float32(0.5), Fraction(1, 3))])
def test_tau_limits_two_decimals_are_enough(capsys, small, large):
    nb02.check_tau_limits(small, large)
    assert said(capsys).startswith("Exercise 3: correct.")


@pytest.mark.parametrize(("check", "answer"), [(nb02.check_key1_column, ((0.0, 0.0),)),
                                               (nb02.check_tau_limits, (1.0, 0.34))])
def test_a_hint_leaves_the_equal_split_to_the_learner(capsys, check, answer):
    """"Equal scores get equal weights" gave 0.5 away (learners L1, #111 and #157)."""
    check(*answer)
    out = said(capsys)
    assert out.split(": ")[1].startswith("not yet.") and "equal weights" not in out, out


def test_tau_limits_half_done(capsys):
    nb02.check_tau_limits(0.5, None)
    assert "max_at_large_tau is still None" in said(capsys)


# --- Exercise 2: key-major scores ------------------------------------------------------------------------


def test_key_major_probes_include_a_square_one_and_the_hand_made_lookup():
    shapes = [tuple(p.args[0].shape) for p in nb02._key_major_probes()]
    assert (3, 2) in shapes and any(s[-1] == s[-2] for s in shapes), shapes  # square: a layout mistake runs
    assert sorted({len(s) for s in shapes}) == [2, 3, 4], shapes


# --- Exercise 4: the stable softmax -------------------------------------------------------------------------


def naive(x):
    e = torch.exp(x)
    return e / e.sum(dim=-1, keepdim=True)


def test_the_naive_softmax_gets_the_line_the_teachers_page_quotes(capsys):
    """book/teachers.md quotes this feedback line of nbgrader for 02's classic mistake, word for word."""
    nb02.check_stable_softmax(naive)
    assert said(capsys) == (
        "Exercise 4: not yet. 2 of your 3 rows are NaN: exp(100) overflows float32 to inf and exp(-1000) underflows "
        "to 0. Section 6's property lets you subtract one constant from each row first: which one keeps every "
        "exponent in range?")


def _shifted_by(shift):
    def softmax(x):
        e = torch.exp(x - shift(x))
        return e / e.sum(dim=-1, keepdim=True)
    return softmax


@pytest.mark.parametrize("shift", [lambda x: x.amin(dim=-1, keepdim=True), lambda x: x.mean(dim=-1, keepdim=True),
                                   lambda x: x[..., :1]], ids=["min", "mean", "first"])
def test_a_softmax_shifted_by_anything_but_the_maximum_is_caught_on_a_wide_row(capsys, shift):
    nb02.check_stable_softmax(_shifted_by(shift))
    assert said(capsys).startswith("Exercise 4: not yet. On the row [0, 200] your weights are NaN")


def test_grading_mode_fails_the_lucky_softmax_and_passes_the_right_one(capsys):
    with grading(), pytest.raises(AssertionError, match=r"^Exercise 4: not yet\. On the row \[0, 200\]"):
        nb02.check_stable_softmax(_shifted_by(lambda x: x.amin(dim=-1, keepdim=True)))
    with grading():
        nb02.check_stable_softmax(_shifted_by(lambda x: x.amax(dim=-1, keepdim=True)))
    assert capsys.readouterr().out == ""


# --- Exercise 5: one temperature per head ---------------------------------------------------------------


@pytest.mark.parametrize("offset", [lambda s, t: t[:, None, None], lambda s, t: t.reshape(1, -1, 1, 1),
                                    lambda s, t: 7.0])
def test_a_constant_added_to_the_scores_is_named_as_cancelling(capsys, offset):
    """Issue 31: softmax(s - tau) was told "tau is not used"; it is used, and cancels, as section 6 teaches."""
    nb02.check_temperature_softmax(lambda s, t: torch.softmax(s - offset(s, t), dim=-1))
    out = said(capsys)
    assert "softmax ignores a constant added to a whole row" in out and "divides" in out, out


def test_tau_lined_up_with_the_keys_is_named_where_it_runs_and_where_it_raises(capsys):
    nb02.check_temperature_softmax(lambda s, t: torch.softmax(s / t, dim=-1))  # runs on the first probe, H = Tk
    assert "Your tau divided the keys instead of the heads" in said(capsys)
    probes = nb02._temperature_probes()[1:]  # from the second probe on, H != Tk: the same code raises
    verdict = Exercise("Exercise 5", reference=nb02.per_head, probes=probes,
                            mistakes=nb02.check_temperature_softmax.mistakes).judge(
        lambda s, t: torch.softmax(s / t, dim=-1))
    assert "broadcasting lines axes up from the right, so a (H,) tensor meets the keys" in verdict.text


def test_temperature_probes_vary_every_axis():
    shapes = [tuple(p.args[0].shape) for p in nb02._temperature_probes()]
    for axis in range(4):
        assert len({s[axis] for s in shapes}) > 1, shapes
