"""What every exercise declared in attnlib.exercises must do, whatever its notebook.

Each ``nbNN`` module declares its exercises as :class:`attnlib.exercises.Exercise` entries. For every one:

- its right answer (``expected``, ``reference`` or ``solution``) is judged correct, also in grading mode;
- every mistake of its table is recognised, by an answer that makes it, with that mistake's own hint;
- a lucky answer fails: a function that returns the reference's result on the first probe whatever it
  is given, so the probes must differ in what the task varies;
- strange answers (None inside a tuple, strings, NaN, wrong dtypes, a function that raises or returns
  nonsense) get one line and never an exception;
- a hint never states the expected value when it is a shape or a number with decimals.
"""

from __future__ import annotations

import importlib
import math
import pkgutil
import re
from fractions import Fraction

import numpy as np
import pytest
import torch

import attnlib.exercises as framework
from attnlib.exercises import Exercise, _is_number, _scalar, grading

MODULES = sorted(m.name for m in pkgutil.iter_modules(framework.__path__) if re.fullmatch(r"nb\d\d\w*", m.name))
EXERCISES = [(f"{m}.{name}", ex) for m in MODULES
             for name, ex in framework.exercises_of(importlib.import_module(f"attnlib.exercises.{m}")).items()]
IDS = [name for name, _ in EXERCISES]
MISTAKES = [(name, ex, i) for name, ex in EXERCISES for i in range(len(ex.table()))]


def judged(exercise: Exercise, args: tuple) -> framework.Verdict:
    verdict = exercise.judge(*args)
    assert verdict.verdict in ("correct", "not yet", "not attempted")
    return verdict


@pytest.mark.parametrize(("name", "exercise"), EXERCISES, ids=IDS)
def test_the_right_answer_is_correct(name, exercise):
    verdict = judged(exercise, exercise.right_answer())
    assert verdict.verdict == "correct", f"{name}: {verdict.text}"
    with grading():
        exercise(*exercise.right_answer())  # silent


@pytest.mark.parametrize(("name", "exercise", "index"), MISTAKES,
                         ids=[f"{n}-mistake{i}" for n, _, i in MISTAKES])
def test_each_mistake_is_recognised_with_its_own_hint(name, exercise, index):
    mistake = exercise.table()[index]
    args = exercise.wrong_answer(mistake)
    assert args is not None, f"{name}: mistake {index} ({str(mistake.hint)[:60]}...) needs an example answer"
    verdict = judged(exercise, args)
    assert verdict.verdict == "not yet", f"{name}: mistake {index}'s example was judged {verdict.verdict}"
    found = exercise.table().index(verdict.mistake) if verdict.mistake in exercise.table() else None
    assert found == index, (f"{name}: mistake {index}'s example got the hint of mistake {found}: {verdict.text}")
    with grading(), pytest.raises(AssertionError, match=re.escape(verdict.text[:40])):
        exercise(*args)


def _lucky(exercise: Exercise):
    """A function that returns the reference's result on the first probe, whatever it is given."""
    first = exercise.probe_list()[0].args
    fixed = exercise.reference(*first)
    return lambda *args: fixed


@pytest.mark.parametrize(("name", "exercise"), [(n, e) for n, e in EXERCISES if e.reference is not None],
                         ids=[n for n, e in EXERCISES if e.reference is not None])
def test_a_lucky_answer_fails(name, exercise):
    verdict = judged(exercise, (_lucky(exercise),))
    assert verdict.verdict == "not yet", f"{name}: a function that ignores its input passed every probe"


STRANGE_VALUES = [
    "", "abc", "0.5", "(2, 3)", {"a": 1}, [], (), [[]], [1, "a"], float("nan"), float("inf"), 10**30, -1, True,
    1 + 2j, Fraction(1, 3), np.float16(0.5), np.array([]), np.array(["a"]), torch.tensor([]),
    torch.tensor(float("nan")), torch.ones(2, 2, dtype=torch.bool), torch.zeros(3, 5, dtype=torch.complex64),
    torch.randn(2, 3, 4, 5), torch.tensor([1, 2], dtype=torch.uint8), object(),
]


def _raises(*args):
    raise ValueError("learner's bug")


STRANGE_FUNCTIONS = [
    _raises, lambda *a: "a string", lambda *a: (None, None), lambda *a: [1, 2, 3],
    lambda *a: torch.tensor(float("nan")),
    lambda *a: a[0], lambda *a: (a[0], a[0]), lambda *a: torch.full((2, 3), float("nan")), lambda *a: np.zeros((2, 3)),
    lambda *a: torch.zeros(2, 3, dtype=torch.complex64), lambda *a: {"output": 1}, lambda *a: a[0].half()
    if isinstance(a[0], torch.Tensor) and a[0].is_floating_point() else a[0],
]


@pytest.mark.parametrize(("name", "exercise"), EXERCISES, ids=IDS)
def test_strange_answers_get_one_line(capsys, name, exercise):
    count = max(len(exercise.answers), 1)
    answers = STRANGE_VALUES + (STRANGE_FUNCTIONS if exercise.is_function else [])
    for value in answers:
        for args in ([value] * count, [value] + [None] * (count - 1)) if count > 1 else ([value],):
            exercise(*args)
            out = capsys.readouterr().out
            assert out.count("\n") == 1 and out.startswith(exercise.name), f"{name} on {value!r}: {out!r}"
    exercise()  # no answer at all
    assert capsys.readouterr().out.count("\n") == 1


def _forms(value) -> list[str]:
    """How a hint could write an expected shape or non-integer number."""
    value = _scalar(value)
    if isinstance(value, tuple) and all(isinstance(v, int) for v in value) and len(value) > 1:
        return [str(value)]
    if _is_number(value) and isinstance(value, float) and math.isfinite(value) and not value.is_integer():
        return sorted({f"{value:.2f}", f"{value:.3f}", f"{value:.4g}"})
    return []


VALUE_MISTAKES = [(n, e, i) for n, e, i in MISTAKES if not e.is_function]  # a function's answer is code


@pytest.mark.parametrize(("name", "exercise", "index"), VALUE_MISTAKES,
                         ids=[f"{n}-mistake{i}" for n, _, i in VALUE_MISTAKES])
def test_a_hint_does_not_state_the_answer(name, exercise, index):
    mistake = exercise.table()[index]
    args = exercise.wrong_answer(mistake)
    expected = exercise.expected_value()
    values = expected.values() if isinstance(expected, dict) else [expected]
    text = exercise.judge(*args).text if args is not None else ""
    for value in values:
        for form in _forms(value):
            assert form not in text, f"{name}: the hint of mistake {index} writes the answer {form}: {text}"


def test_every_notebook_module_declares_its_exercises():
    """nbNN modules hold data: every one declares its exercises as Exercise entries, one per notebook."""
    declared = {m for m in MODULES if framework.exercises_of(importlib.import_module(f"attnlib.exercises.{m}"))}
    assert declared == set(MODULES) and len(MODULES) >= 11, sorted(set(MODULES) - declared)


def _raises(*args):
    raise ValueError("learner's bug")


@pytest.mark.parametrize(("name", "exercise"), EXERCISES, ids=IDS)
def test_in_grading_mode_a_strange_answer_fails_with_an_assertion_only(capsys, name, exercise):
    """nbgrader's test cell: a strange answer is an AssertionError carrying the one line, and prints nothing."""
    count = max(len(exercise.answers), 1)
    answers = ["abc", np.array([[1.0, 2.0], [3.0, 4.0]])]
    if exercise.is_function:
        answers += [_raises, lambda *a: torch.full((2, 3), float("nan"))]
    for value in answers:
        with grading(), pytest.raises(AssertionError, match=rf"^{exercise.name}: (not yet|not attempted yet)"):
            exercise(*([value] * count))
    assert capsys.readouterr().out == ""
