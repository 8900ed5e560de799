"""What is specific to notebook 03's exercises (the generic tests cover every exercise's table and strange inputs)."""

from __future__ import annotations

import itertools
import math
import re

import pytest
import torch

from attnlib.exercises import nb03


def verdict(exercise, answer):
    return exercise.judge(answer)


def test_the_expected_variance_is_the_patterns_variance():
    """Exercise 1's expected value is what the enumeration of all 2**8 patterns of +-1 entries gives."""
    patterns = torch.tensor(list(itertools.product([1.0, -1.0], repeat=8)), dtype=torch.float64)
    assert verdict(nb03.check_variance_prediction, patterns.sum(-1).var(correction=0)).verdict == "correct"


def test_the_expected_scaled_variance_is_measured():
    """Exercise 2's 4 holds for queries of variance 4 and keys of variance 1 at d_k = 64 (not the 1 of unit entries)."""
    g = torch.Generator().manual_seed(0)
    q = 2 * torch.randn(200_000, 64, generator=g, dtype=torch.float64)  # entries of variance 4
    k = torch.randn(200_000, 64, generator=g, dtype=torch.float64)      # entries of variance 1
    measured = ((q * k).sum(-1) / 8).var().item()
    assert verdict(nb03.check_scaled_variance, measured).verdict == "correct"
    assert verdict(nb03.check_scaled_variance, 1.0).verdict == "not yet"


@pytest.mark.parametrize(("exercise", "answers", "value"), [
    (nb03.check_variance_prediction, [3, 5, 7.5, 9, 12, 100], r"\b8(\.0+)?\b(?! products)"),
    (nb03.check_scaled_variance, [0.5, 3, 4.5, 6, 8, 100], r"(?<![\d.])4(\.0+)?(?![\d.])"),
])
def test_no_hint_states_the_answer(exercise, answers, value):
    """The general hint of a prediction says in which direction it is off and why, never the expected number."""
    for answer in answers:
        result = verdict(exercise, answer)
        assert result.verdict == "not yet" and not re.search(value, result.text), (answer, result.text)


def test_the_side_of_exercise_3_is_measured():
    """Unscaled rows of 16 keys at d_k = 1024 have a mean largest weight above 0.9, for several seeds."""
    for seed in range(3):
        g = torch.Generator().manual_seed(seed)
        q = torch.randn(1000, 1, 1024, generator=g, dtype=torch.float64)
        k = torch.randn(1000, 16, 1024, generator=g, dtype=torch.float64)
        assert torch.softmax((q * k).sum(-1), dim=-1).amax(-1).mean() > 0.9


def test_reason_a_of_exercise_3_is_false():
    """The differences of scores grow with d_k too (variance 2 d_k): the premise of reason a fails."""
    g = torch.Generator().manual_seed(0)
    for d_k in (16, 1024):
        s = (torch.randn(20_000, 2, d_k, generator=g, dtype=torch.float64)
             * torch.randn(20_000, 1, d_k, generator=g, dtype=torch.float64)).sum(-1)  # two scores per query
        assert abs((s[:, 0] - s[:, 1]).var().item() / (2 * d_k) - 1) < 0.05


@pytest.mark.parametrize("side", ["above", "below"])
@pytest.mark.parametrize("reason", list("abcd"))
def test_exercise_3_takes_the_side_and_the_reason_together(side, reason):
    """Only ("above", "b") is right; no hint for a wrong pair names a side or the right letter."""
    result = nb03.check_top_weight_prediction.judge(side, reason)
    assert (result.verdict == "correct") == ((side, reason) == ("above", "b"))
    if result.verdict != "correct":
        assert not re.search(r"\b(above|below|one-hot)\b|reason b\b", result.text, re.I), result.text


def test_a_hard_coded_width_is_named():
    """A width read from the notebook (the running example's d_k = 1024) fails and is told to read it from q
    (without the code or the number that gives it)."""
    result = verdict(nb03.check_scaled_scores, lambda q, k: q @ k.transpose(-2, -1) / 32)
    assert result.verdict == "not yet" and "divided by 32" in result.text and "shape of q itself" in result.text
    assert "shape[-1]" not in result.text and "= 9" not in result.text


@pytest.mark.parametrize("function", [lambda q, k: q @ k.T / math.sqrt(q.shape[-1]),
                                      lambda q, k: q @ k.t() / math.sqrt(q.shape[-1]),
                                      lambda q, k: torch.mm(q, k.transpose(-2, -1)) / math.sqrt(q.shape[-1])])
def test_a_matrices_only_function_is_named_on_batched_probes(function):
    result = verdict(nb03.check_scaled_scores, function)
    assert result.verdict == "not yet" and "takes matrices only" in result.text


@pytest.mark.parametrize("function", [
    lambda q, k: q @ k.transpose(-2, -1),  # unscaled
    lambda q, k: q @ k.T / math.sqrt(q.shape[-1]),  # matrices only
    lambda q, k: q @ k.transpose(0, 1) / math.sqrt(q.shape[-1]),  # axes counted from the front
    lambda q, k: k @ q.transpose(-2, -1) / math.sqrt(q.shape[-1]),  # a row per key
    lambda q, k: q @ k.transpose(-2, -1) / 32,  # a notebook's width
])
def test_a_hint_does_not_write_the_function(function):
    """The hints name the mistake; none writes the product, the transpose or the width to use."""
    result = verdict(nb03.check_scaled_scores, function)
    assert result.verdict == "not yet"
    assert not re.search(r"transpose\(-2, -1\)|q\.shape\[-1\]|k\.mT|sqrt\(q", result.text), result.text


def test_the_probes_vary_every_dimension():
    """Batch, heads, query and key lengths and the width all change from probe to probe."""
    shapes = [tuple(p.args[0].shape) + tuple(p.args[1].shape[-2:-1]) for p in nb03._qk_probes()]
    assert {len(s) for s in shapes} == {3, 4, 5}  # 2-D, 3-D and 4-D queries (+ the number of keys)
    assert len({s[-2] for s in shapes}) == len(shapes) and len({s[-1] for s in shapes}) == len(shapes)  # d_k, Tk
    assert len({s[-3] for s in shapes}) > 1  # Tq
    heads = [s[1] for s in shapes if len(s) == 5]
    assert len(set(heads)) == 2  # H = 2 and 4
