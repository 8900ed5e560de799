"""Every checker of notebooks 01-09 prints exactly one line and raises nothing, whatever it is given."""

from __future__ import annotations

import importlib
import inspect
import math
from fractions import Fraction

import numpy as np
import pytest
import torch

MODULES = [importlib.import_module(f"attnlib.exercises.nb0{n}") for n in range(1, 10)]
CHECKERS = [(m.__name__.rsplit(".", 1)[1], name, fn) for m in MODULES for name, fn in vars(m).items()
            if name.startswith("check_") and inspect.isfunction(fn) and fn.__module__ == m.__name__
            and name != "check_function_diagnosed"]

STRANGE_VALUES = [
    "", "abc", "0.5", "(2, 3)", "[2, 1, 0]", {"a": 1}, {1, 2}, [], (), [[]], [1, "a"], [[1, 2], [3]],
    float("nan"), float("inf"), -math.inf, 10**30, -1, 0, True, 1 + 2j, Fraction(1, 3), np.float16(0.5),
    np.array([]), np.array([[1.0, 2.0], [3.0, 4.0]]), np.array(["a"]), torch.tensor([]), torch.tensor(float("nan")),
    torch.ones(2, 2, dtype=torch.bool), torch.zeros(3, 5, dtype=torch.complex64), torch.randn(2, 3, 4, 5),
    torch.tensor([1, 2], dtype=torch.uint8), object(),
]


def _raises(*args):
    raise ValueError("learner's bug")


STRANGE_FUNCTIONS = [
    _raises,
    lambda *a: "a string",
    lambda *a: (None, None),
    lambda *a: [1, 2, 3],
    lambda *a: torch.tensor(float("nan")),
    lambda *a: a[0] if isinstance(a[0], torch.Tensor) else a,
    lambda *a: (a[0], a[0]) if isinstance(a[0], torch.Tensor) else a,
    lambda *a: torch.full((2, 3), float("nan")),
    lambda *a: np.zeros((2, 3)),
    lambda *a: torch.zeros(2, 3, dtype=torch.complex64),
    lambda *a: {"output": 1},
]


def _arity(fn) -> int:
    return len([p for p in inspect.signature(fn).parameters.values() if p.default is inspect.Parameter.empty])


def _one_line(capsys, call) -> None:
    call()  # raises nothing
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and out.strip(), out


@pytest.mark.parametrize(("module", "name", "checker"), CHECKERS, ids=[f"{m}.{n}" for m, n, _ in CHECKERS])
def test_strange_answers_get_one_line(capsys, module, name, checker):
    n = _arity(checker)
    for value in STRANGE_VALUES:
        _one_line(capsys, lambda value=value: checker(*([value] * n)))
    for function in STRANGE_FUNCTIONS:
        _one_line(capsys, lambda function=function: checker(*([function] * n)))


def test_every_notebook_has_checkers():
    """Checker functions here; the modules converted to Exercise entries are tested by test_exercises_generic.py."""
    from attnlib.exercises import exercises_of

    declared = {m.__name__.rsplit(".", 1)[1] for m in MODULES if exercises_of(m)}
    assert {m for m, _, _ in CHECKERS} | declared == {f"nb0{n}" for n in range(1, 10)}


@pytest.mark.parametrize(("module", "name", "checker"), CHECKERS, ids=[f"{m}.{n}" for m, n, _ in CHECKERS])
def test_in_grading_mode_a_strange_answer_fails_with_an_assertion_only(capsys, module, name, checker):
    from attnlib.exercises import grading

    n = _arity(checker)
    for value in ["abc", np.array([[1.0, 2.0], [3.0, 4.0]]), _raises, lambda *a: torch.full((2, 3), float("nan"))]:
        with grading(), pytest.raises(AssertionError, match=r"^Exercise \d: (not yet|not attempted yet)"):
            checker(*([value] * n))
    assert capsys.readouterr().out == ""
