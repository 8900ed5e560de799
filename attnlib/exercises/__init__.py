"""Checkers for the course's exercises: each names the classic mistake when it recognises one.

Every exercise in a notebook is a stub cell the learner fills in, then a check cell that calls one
checker from the notebook's module here (``attnlib.exercises.nb01`` for notebook 01, and so on).
A checker prints exactly one line and never raises, so a learner notebook always runs top to bottom:

- ``"<exercise>: correct. ..."`` when the answer matches the reference;
- ``"<exercise>: not yet. <hint>"`` when it matches a known wrong answer (the hint names the
  mistake and the fix), or a general hint that shows what was expected and what came back;
- ``"<exercise>: not attempted yet"`` while the stub is untouched (its answer is ``None`` or
  ``...``, or its function returns ``None``).

This module holds the shared machinery, :func:`check_value` for an answer that is a value (a shape,
a number, a tensor, a boolean) and :func:`check_function` for an answer that is a function; each
notebook's module builds its checkers from them. Every checker returns ``None``: it reports by
printing, so a check cell shows one line and no ``Out[...]``.

Every verdict goes through one function, :func:`report`. Inside ``with grading():`` (nbgrader's test
cells) a checker that would print "not yet ..." or "not attempted yet" raises
``AssertionError(<that same line>)`` instead, and a correct answer passes silently::

    from attnlib.exercises import grading
    with grading():
        nb02.check_stable_softmax(my_softmax)
"""

from __future__ import annotations

import contextlib
import contextvars
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

NOT_ATTEMPTED = "not attempted yet"

_GRADING: contextvars.ContextVar[bool] = contextvars.ContextVar("attnlib_exercises_grading", default=False)


@contextlib.contextmanager
def grading() -> Iterator[None]:
    """Grading mode: inside it a checker raises ``AssertionError`` with its hint instead of printing it.

    A correct answer passes silently; "not yet. <hint>" and "not attempted yet" raise
    ``AssertionError("<exercise>: not yet. <hint>")``, the very line the checker prints outside
    grading mode. Used by nbgrader's test cells, where a failed assert costs the points. Nesting is
    allowed; the previous mode comes back on exit, also after an exception.
    """
    token = _GRADING.set(True)
    try:
        yield
    finally:
        _GRADING.reset(token)


def report(name: str, verdict: str, text: str = "") -> None:
    """Say a checker's verdict in one line: print it, or in grading mode raise it unless it is correct.

    Args:
        name: the exercise, as the notebook titles it (``"Exercise 2"``).
        verdict: ``"correct"``, ``"not yet"`` or ``"not attempted"``.
        text: what follows: the sentence after "correct.", the hint after "not yet.", or a remark
            after "not attempted yet" (e.g. "(your function returns None: ...)").

    Raises:
        AssertionError: in grading mode, when the verdict is not "correct" (its message is the line).
        ValueError: for an unknown verdict (a bug in a checker, never the learner's answer).
    """
    if verdict == "correct":
        line = f"{name}: correct." + (f" {text}" if text else "")
    elif verdict == "not yet":
        line = f"{name}: not yet." + (f" {text}" if text else "")
    elif verdict == "not attempted":
        line = f"{name}: {NOT_ATTEMPTED}" + (f" {text}" if text else "")
    else:
        raise ValueError(f"verdict must be 'correct', 'not yet' or 'not attempted', got {verdict!r}")
    if _GRADING.get():
        if verdict != "correct":
            raise AssertionError(line)
        return
    print(line)


@dataclass(frozen=True)
class Mistake:
    """A known wrong answer and the hint that names it.

    ``answer`` is either the wrong value itself (compared like the reference) or, for
    :func:`check_function`, a wrong implementation run on the same inputs as the learner's.
    ``when`` may replace both: a predicate on the learner's answer (or output) that recognises
    the mistake, for mistakes that are a family rather than one value (e.g. "rows sum to Tq").
    """

    hint: str
    answer: Any = None
    when: Callable[[Any], bool] | None = field(default=None, compare=False)


def _is_stub(answer: Any) -> bool:
    return answer is None or answer is Ellipsis


def _as_comparable(x: Any) -> Any:
    if isinstance(x, torch.Size):
        return tuple(x)
    if isinstance(x, list) and x and all(isinstance(v, (int, float, bool)) for v in x):
        return tuple(x)
    return x


def same(got: Any, expected: Any, *, atol: float = 1e-5, rtol: float = 1e-4) -> bool:
    """True when ``got`` equals ``expected``: tensors by shape and values (NaN never equal), the rest by ==.

    A tuple or list holding tensors, such as ``(output, weights)``, is compared item by item.
    """
    if isinstance(expected, (tuple, list)) and any(isinstance(e, torch.Tensor) for e in expected):
        return (isinstance(got, (tuple, list)) and len(got) == len(expected)
                and all(same(g, e, atol=atol, rtol=rtol) for g, e in zip(got, expected)))
    got, expected = _as_comparable(got), _as_comparable(expected)
    if isinstance(expected, torch.Tensor) or isinstance(got, torch.Tensor):
        if not (isinstance(expected, torch.Tensor) and isinstance(got, torch.Tensor)):
            return False
        if got.shape != expected.shape or got.dtype.is_floating_point != expected.dtype.is_floating_point:
            return False
        if got.dtype == torch.bool or expected.dtype == torch.bool:
            return got.dtype == expected.dtype and torch.equal(got, expected)
        got_d, exp_d = got.detach().double(), expected.detach().double()
        return bool(torch.allclose(got_d, exp_d, atol=atol, rtol=rtol))  # equal_nan=False: NaN is always wrong
    if isinstance(expected, float) and isinstance(got, (int, float)) and not isinstance(got, bool):
        return abs(got - expected) <= atol + rtol * abs(expected)
    if isinstance(got, bool) or isinstance(expected, bool):
        return type(got) is type(expected) and got == expected  # True is an answer, 1 is not
    try:
        return bool(got == expected)
    except Exception:  # an answer whose == raises is simply not the expected one
        return False


def shape_of(answer: Any) -> tuple | None:
    """A predicted shape as a tuple of ints (a torch.Size, list or tuple is fine), or None when it is not one."""
    try:
        shape = tuple(answer)
    except TypeError:
        return None
    if all(isinstance(n, int) and not isinstance(n, bool) for n in shape):
        return shape
    return None


def describe(x: Any, limit: int = 120) -> str:
    """A short, readable form of an answer for a hint: shapes for big tensors, rounded values for small."""
    if isinstance(x, (tuple, list)) and x and all(isinstance(t, torch.Tensor) for t in x):
        return "(" + "; ".join(describe(t, limit) for t in x) + ")"  # e.g. (output, weights)
    if isinstance(x, torch.Tensor):
        if x.numel() <= 12:
            values = x.detach().double().round(decimals=4).tolist() if x.is_floating_point() else x.tolist()
            return f"tensor of shape {tuple(x.shape)}: {values}"
        return f"tensor of shape {tuple(x.shape)}, dtype {str(x.dtype).removeprefix('torch.')}"
    text = repr(_as_comparable(x))
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _matching_mistake(got: Any, mistakes: Sequence[Mistake], wrong_value: Callable[[Mistake], Any]) -> Mistake | None:
    for mistake in mistakes:
        try:
            if mistake.when is not None:
                if mistake.when(got):
                    return mistake
            elif same(got, wrong_value(mistake)):
                return mistake
        except Exception:  # a predicate that cannot judge this answer does not match it
            continue
    return None


def check_value(
    name: str, answer: Any, expected: Any, mistakes: Sequence[Mistake] = (), *,
    correct: str = "", atol: float = 1e-5, rtol: float = 1e-4,
) -> None:
    """Print one line judging ``answer`` against ``expected``, naming the mistake when one is recognised.

    Args:
        name: the exercise, as the notebook titles it (e.g. ``"Exercise 2"``).
        answer: the learner's value; ``None`` or ``...`` means not attempted.
        expected: the reference value (tensor, tuple, number, bool, str).
        mistakes: known wrong values, each with the hint to print.
        correct: a short sentence added after "correct." (what the answer means).
        atol, rtol: tolerances for tensors and floats.
    """
    if _is_stub(answer):
        report(name, "not attempted")
    elif same(answer, expected, atol=atol, rtol=rtol):
        report(name, "correct", correct)
    elif (mistake := _matching_mistake(answer, mistakes, lambda m: m.answer)) is not None:
        report(name, "not yet", mistake.hint)
    else:
        report(name, "not yet", f"Expected {describe(expected)}, got {describe(answer)}.")


def check_function(
    name: str, function: Any, inputs: Sequence[tuple], reference: Callable[..., Any],
    mistakes: Sequence[Mistake] = (), *, diagnose: Callable[[Any, Any, tuple], str | None] | None = None,
    on_error: Callable[[Exception, tuple], str | None] | None = None,
    correct: str = "", atol: float = 1e-5, rtol: float = 1e-4,
) -> None:
    """Print one line judging the learner's ``function`` on every input tuple against ``reference``.

    The function is called on each tuple of ``inputs`` (tensors are cloned first, so the learner's
    function cannot change them for the next call; warnings it triggers are silenced). On the first
    input where it disagrees with the reference, each mistake is tried in order: its wrong
    implementation (``Mistake.answer``, run on the same input) or predicate (``Mistake.when``, given
    the learner's output); a match prints its hint. Then ``diagnose(got, expected, args)``, when
    given, may write a hint that quotes the learner's own numbers (it returns None when it does not
    recognise the answer). Otherwise the general hint shows what was expected and what came back.

    A function that returns ``None`` (the stub) is not attempted yet. One that raises is told which
    exception it raised, on which inputs, unless ``on_error(err, args)`` names the mistake behind it.
    A mistake, diagnosis or error hint that itself fails is skipped, so a checker never raises.
    """
    if _is_stub(function):
        report(name, "not attempted")
        return
    if not callable(function):
        report(name, "not yet", f"Expected a function, got {describe(function)}.")
        return
    for args in inputs:
        try:
            got = _quietly(function, *_fresh(args))
        except Exception as err:  # the learner's code: report it in one line instead of a traceback
            text = str(err).strip().splitlines()[0] if str(err).strip() else ""
            raised = f"Your function raised {type(err).__name__} on inputs {_inputs_text(args)}"
            hint = _safely(on_error, err, args) or (raised + (f": {text}" if text else "."))
            report(name, "not yet", hint)
            return
        if got is None:
            report(name, "not attempted", "(your function returns None: finish it with a return)")
            return
        expected = reference(*_fresh(args))
        if same(got, expected, atol=atol, rtol=rtol):
            continue
        mistake = _matching_mistake(got, mistakes, lambda m, args=args: _quietly(m.answer, *_fresh(args)))
        hint = mistake.hint if mistake is not None else _safely(diagnose, got, expected, args)
        report(name, "not yet",
               hint or f"On inputs {_inputs_text(args)} expected {describe(expected)}, got {describe(got)}.")
        return
    report(name, "correct", correct)


def _fresh(args: tuple) -> tuple:
    """The inputs, tensors cloned: a learner's function that writes into its inputs cannot spoil the next call."""
    return tuple(a.clone() if isinstance(a, torch.Tensor) else a for a in args)


def _quietly(function: Callable[..., Any], *args: Any) -> Any:
    """``function(*args)`` with warnings silenced (e.g. torch's deprecation of ``.T`` on more than 2 axes)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(*args)


def _safely(function: Callable[..., str | None] | None, *args: Any) -> str | None:
    """A hint from ``function``, or None when there is none or it cannot read this answer."""
    if function is None:
        return None
    try:
        return function(*args)
    except Exception:  # a diagnosis that cannot read this answer falls back to the general hint
        return None


def _inputs_text(args: tuple) -> str:
    """Inputs as a hint shows them: a tensor by its shape and dtype, anything else by its repr."""
    return ", ".join(
        f"{tuple(a.shape)} {str(a.dtype).removeprefix('torch.')}" if isinstance(a, torch.Tensor) else repr(a)
        for a in args
    )


__all__ = [
    "NOT_ATTEMPTED", "Mistake", "check_function", "check_value", "describe", "grading", "report", "same",
    "shape_of",
]
