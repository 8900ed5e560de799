"""Checkers for the course's exercises: each names the classic mistake when it recognises one.

Every exercise in a notebook is a stub cell the learner fills in, then a check cell that calls one
checker from the notebook's module here (``attnlib.exercises.nb01`` for notebook 01, and so on).
A checker prints exactly one line and never raises, so a learner notebook always runs top to bottom:

- ``"<exercise>: correct. ..."`` when the answer matches the reference;
- ``"<exercise>: not yet. <hint>"`` when it matches a known wrong answer (the hint names the
  mistake and the fix), or a general hint that shows the first difference (the input or probe, the
  index, the expected value and the learner's);
- ``"<exercise>: not attempted yet"`` while the stub is untouched (its answer is ``None`` or
  ``...``, or its function returns ``None``).

This module holds the shared machinery, :func:`check_value` for an answer that is a value (a shape,
a number, a tensor, a boolean) and :func:`check_function` for an answer that is a function; each
notebook's module builds its checkers from them. Every checker returns ``None``: it reports by
printing, so a check cell shows one line and no ``Out[...]``.

A checker judges the answer, not its spelling:

- :func:`read_value` reads Python numbers, NumPy scalars and arrays, 0-d and 1-d tensors,
  ``Fraction``, lists, tuples and ``torch.Size`` as the value they hold; a string holding a number
  is told to write the number (:func:`number_in_string`). ``check_value(..., decimals=2)`` compares
  a prediction at the precision its prompt asks for.
- :func:`check_function` runs the reference on float64 copies of the inputs and compares a result in
  the inputs' dtype, or a wider one, at the narrower dtype's tolerance (:data:`FLOAT_TOLERANCE`:
  float16 1e-3, bfloat16 1.6e-2, torch's own).
- A :class:`Probe` is an input chosen to separate a right implementation from a lucky one (a row
  [0, 200], an empty mask row, a float32 overflow point), named in the hint when it catches a
  mistake; with ``loss=`` it also checks the gradients of a backward pass.

Every verdict goes through one function, :func:`report`. Inside ``with grading():`` (nbgrader's test
cells) a checker that would print "not yet ..." or "not attempted yet" raises
``AssertionError(<that same line>)`` instead, and a correct answer passes silently::

    from attnlib.exercises import grading
    with grading():
        nb02.check_stable_softmax(my_softmax)
"""

from __future__ import annotations

import ast
import contextlib
import contextvars
import decimal
import fractions
import math
import numbers
import re
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
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


def _verdict_error(line: str) -> AssertionError:
    """The AssertionError of a verdict, shown by IPython (and so in nbgrader's feedback) as its one line.

    IPython renders an exception that has ``_render_traceback_`` by calling it instead of printing the
    traceback; a traceback through the checker's own code would tell the learner nothing.
    """
    error = AssertionError(line)
    error._render_traceback_ = lambda: [f"AssertionError: {line}"]
    return error


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
    text = re.sub(r"\s*\n\s*", " ", text).strip()  # one line, whatever a repr inside the hint spans
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
            raise _verdict_error(line)
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


# ----------------------------------------------------------------------------- reading an answer


def _is_stub(answer: Any) -> bool:
    return answer is None or answer is Ellipsis


def _scalar(x: Any) -> Any:
    """A Python number or bool for anything that holds one number (NumPy scalar, 0-d tensor, Fraction); else x."""
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, torch.Tensor) and x.dim() == 0:
        return x.item()
    if isinstance(x, np.ndarray) and x.ndim == 0:
        return x.item()
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, numbers.Integral):
        return int(x)
    if isinstance(x, (fractions.Fraction, decimal.Decimal)) or (
            isinstance(x, numbers.Real) and not isinstance(x, float)):
        return float(x)
    return x


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _flat_numbers(x: Any) -> list | None:
    """The numbers a tensor, array, list or tuple holds, flattened (None when it holds something else)."""
    if isinstance(x, torch.Tensor):
        return [_scalar(v) for v in x.detach().flatten().tolist()]
    if isinstance(x, np.ndarray):
        try:
            return [_scalar(v) for v in x.flatten().tolist()]
        except Exception:
            return None
    if isinstance(x, (list, tuple, torch.Size)):
        out: list = []
        for v in x:
            inner = _flat_numbers(v) if isinstance(v, (list, tuple, torch.Tensor, np.ndarray)) else None
            if inner is not None:
                out += inner
            elif _is_number(_scalar(v)) or isinstance(_scalar(v), bool):
                out.append(_scalar(v))
            else:
                return None
        return out
    return None


def read_value(answer: Any, like: Any = None) -> Any:
    """The value an answer holds, read toward the kind of ``like`` (the expected value), else unchanged.

    Python numbers, NumPy scalars and arrays, 0-d and 1-d tensors, ``Fraction``, lists, tuples and
    ``torch.Size`` are read as what they hold: toward a number, anything holding one number becomes
    that number; toward a tuple (a shape, or several numbers), any sequence of numbers becomes a tuple;
    toward a tensor, a NumPy array or a (nested) list of numbers becomes a tensor (float64 when the
    expected tensor is floating); toward a dict, each value is read toward its own. ``True`` stays a
    boolean and is never read as 1. A value that cannot be read is returned unchanged (the comparison
    then rejects it).
    """
    if _is_stub(answer):
        return answer
    if isinstance(like, dict) and isinstance(answer, dict):
        return {k: read_value(v, like.get(k)) for k, v in answer.items()}
    if isinstance(like, bool):
        value = _scalar(answer)
        return value if isinstance(value, bool) else answer
    if _is_number(like):
        value = _scalar(answer)
        if _is_number(value):
            return value
        flat = _flat_numbers(answer) if not isinstance(answer, str) else None
        if flat is not None and len(flat) == 1 and _is_number(flat[0]):
            return flat[0]
        return answer
    if isinstance(like, torch.Tensor):
        if isinstance(answer, torch.Tensor):
            return answer
        if isinstance(answer, (np.ndarray, np.generic, list, tuple, int, float, fractions.Fraction)) \
                and not isinstance(answer, bool):
            try:
                t = torch.as_tensor(np.asarray(answer, dtype=object).tolist() if isinstance(answer, (list, tuple))
                                    else answer)
            except Exception:
                try:
                    t = torch.as_tensor(_flat_numbers(answer)).reshape(np.shape(answer))
                except Exception:
                    return answer
            if like.is_floating_point() and not t.dtype.is_complex:
                return t.double()
            return t
        return answer
    if isinstance(like, (tuple, list, torch.Size)) and not any(isinstance(e, torch.Tensor) for e in like):
        return _as_sequence(answer, list if isinstance(like, list) else tuple)
    return _scalar(answer)


def _as_sequence(answer: Any, kind: type) -> Any:
    """A tensor, array, torch.Size, list or tuple as nested ``kind`` (list or tuple) of Python scalars."""
    if isinstance(answer, (str, bytes, dict)):
        return answer
    if isinstance(answer, (torch.Tensor, np.ndarray)):
        if answer.ndim == 0:
            return _scalar(answer)
        answer = answer.tolist()
    if not isinstance(answer, (list, tuple, torch.Size)):
        return _scalar(answer)
    return kind(_as_sequence(v, kind) for v in answer)


def number_in_string(answer: Any) -> str | None:
    """The hint for an answer written as a string that holds a number ("0.68", "1/7"), a tuple or a list
    ("(3, 1, 3, 3)", "[2, 1, 0]"), or for a tuple or list of such strings (("0.5", "0.5")); None otherwise."""
    if isinstance(answer, (tuple, list)) and answer and all(isinstance(a, str) for a in answer) \
            and all(number_in_string(a) is not None for a in answer):
        return (f"You wrote strings, {answer!r}: write the numbers themselves, without quotes "
                f"({', '.join(a.strip() for a in answer)}).")
    if not isinstance(answer, str):
        return None
    text = answer.strip()
    if text[:1] in "([" and text[-1:] in ")]":
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            return None
        if isinstance(value, (tuple, list)) and all(_is_number(v) for v in value):
            kind = "tuple" if isinstance(value, tuple) else "list"
            return f"You wrote the string {answer!r}: write the {kind} itself, {text}, without quotes."
        return None
    try:
        fractions.Fraction(text.replace(" ", ""))
    except (ValueError, ZeroDivisionError):
        return None
    return f"You wrote the string {answer!r}: write the number itself, {text}, without quotes."


# ----------------------------------------------------------------------------- comparing


FLOAT_TOLERANCE: dict[torch.dtype, float] = {torch.float16: 1e-3, torch.bfloat16: 1.6e-2}
"""The precision of the half dtypes, torch's own (``torch.testing.assert_close``): atol = rtol = this."""

_WIDTH = {torch.float16: 16, torch.bfloat16: 16, torch.float32: 32, torch.float64: 64}


def narrower(*dtypes: torch.dtype | None) -> torch.dtype | None:
    """The floating dtype with the fewest mantissa bits among ``dtypes`` (None when none is floating)."""
    floats = [d for d in dtypes if d is not None and d.is_floating_point]
    if not floats:
        return None
    order = [torch.bfloat16, torch.float16, torch.float32, torch.float64]
    return min(floats, key=lambda d: order.index(d) if d in order else len(order))


def tolerance(dtype: torch.dtype | None, atol: float = 1e-5, rtol: float = 1e-4) -> tuple[float, float]:
    """(atol, rtol) for comparing at ``dtype``'s precision: the given ones, widened for float16 and bfloat16."""
    wide = FLOAT_TOLERANCE.get(dtype, 0.0)
    return max(atol, wide), max(rtol, wide)


def same(got: Any, expected: Any, *, atol: float = 1e-5, rtol: float = 1e-4, dtype: torch.dtype | None = None) -> bool:
    """True when ``got`` equals ``expected``: tensors by shape and values (NaN never equal), the rest by value.

    ``got`` is first read toward ``expected`` (:func:`read_value`: a 0-d tensor or NumPy number for a
    number, a list or ``torch.Size`` for a shape, a NumPy array for a tensor). Numbers are compared
    within ``atol + rtol * |expected|``; booleans only with booleans. Floating tensors are compared at
    the precision of ``dtype`` (the inputs' dtype, when a function computed ``got``) or else of the
    narrower of the two tensors: float16 and bfloat16 at torch's tolerances (:data:`FLOAT_TOLERANCE`).
    A tuple or list holding tensors, such as ``(output, weights)``, is compared item by item.
    """
    if isinstance(expected, (tuple, list)) and any(isinstance(e, torch.Tensor) for e in expected):
        return (isinstance(got, (tuple, list)) and len(got) == len(expected)
                and all(same(g, e, atol=atol, rtol=rtol, dtype=dtype) for g, e in zip(got, expected)))
    if isinstance(expected, dict):
        return (isinstance(got, dict) and got.keys() == expected.keys()
                and all(same(got[k], expected[k], atol=atol, rtol=rtol, dtype=dtype) for k in expected))
    if isinstance(expected, np.ndarray) and expected.ndim > 0:
        expected = torch.as_tensor(expected)
    if not isinstance(expected, torch.Tensor):
        expected = _scalar(expected)
    got = read_value(got, expected)
    if not isinstance(got, torch.Tensor):
        got = _scalar(got)
    if isinstance(expected, torch.Size):
        expected = tuple(expected)
    if isinstance(expected, torch.Tensor) or isinstance(got, torch.Tensor):
        if not (isinstance(expected, torch.Tensor) and isinstance(got, torch.Tensor)):
            return False
        if got.shape != expected.shape or got.dtype.is_floating_point != expected.dtype.is_floating_point:
            return False
        if got.dtype == torch.bool or expected.dtype == torch.bool:
            return got.dtype == expected.dtype and torch.equal(got, expected)
        a, r = tolerance(dtype if dtype is not None else narrower(got.dtype, expected.dtype), atol, rtol)
        got_d, exp_d = got.detach().double(), expected.detach().double()
        return bool(torch.allclose(got_d, exp_d, atol=a, rtol=r))  # equal_nan=False: NaN is always wrong
    if isinstance(got, bool) or isinstance(expected, bool):
        return type(got) is type(expected) and got == expected  # True is an answer, 1 is not
    if _is_number(expected) and _is_number(got):
        if isinstance(expected, int) and isinstance(got, int):
            return got == expected
        return math.isfinite(got) and abs(got - expected) <= atol + rtol * abs(expected)
    if isinstance(expected, (tuple, list)) and isinstance(got, (tuple, list)):
        return len(got) == len(expected) and all(same(g, e, atol=atol, rtol=rtol) for g, e in zip(got, expected))
    try:
        return bool(got == expected)
    except Exception:  # an answer whose == raises is simply not the expected one
        return False


def shape_of(answer: Any) -> tuple | None:
    """A predicted shape as a tuple of ints (a torch.Size, list, tuple, 1-d tensor or array is fine), else None."""
    if isinstance(answer, (str, bytes, dict)) or _is_stub(answer):
        return None
    if isinstance(answer, (torch.Tensor, np.ndarray)) and answer.ndim != 1:
        return None
    try:
        shape = tuple(_scalar(n) for n in answer)
    except TypeError:
        return None
    if all(isinstance(n, int) and not isinstance(n, bool) for n in shape):
        return shape
    if all(_is_number(n) and float(n).is_integer() for n in shape):
        return tuple(int(n) for n in shape)  # (2.0, 3.0) is the shape (2, 3)
    return None


def _as_comparable(x: Any) -> Any:
    if isinstance(x, torch.Size):
        return tuple(x)
    if isinstance(x, list) and x and all(isinstance(v, (int, float, bool)) for v in x):
        return tuple(x)
    return _scalar(x)


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def describe(x: Any, limit: int = 120) -> str:
    """A short, readable form of an answer for a hint: shapes for big tensors, rounded values for small."""
    if isinstance(x, (tuple, list)) and x and all(isinstance(t, torch.Tensor) for t in x):
        return "(" + "; ".join(describe(t, limit) for t in x) + ")"  # e.g. (output, weights)
    if isinstance(x, torch.Tensor):
        if x.numel() <= 12:
            values = x.detach().double().round(decimals=4).tolist() if x.is_floating_point() else x.tolist()
            return f"tensor of shape {tuple(x.shape)}: {values}"
        return f"tensor of shape {tuple(x.shape)}, dtype {_dtype_name(x.dtype)}"
    if isinstance(x, np.ndarray):
        small = x.size <= 12 and x.dtype.kind in "biuf"
        return f"NumPy array of shape {x.shape}" + (f": {x.round(4).tolist()}" if small else "")
    try:
        text = repr(_as_comparable(x))
    except Exception:  # an object whose repr fails is still described
        text = f"a {type(x).__name__}"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _number_text(v: Any, digits: int = 4) -> str:
    """A number as a hint quotes it: ``digits`` significant digits, a float always with its point (1.0, not 1)."""
    if not isinstance(v, float):
        return str(v)
    text = f"{v:.{digits}g}"
    return text + ".0" if text.lstrip("-").isdigit() else text


def _two_numbers(expected: Any, got: Any, digits: int = 4) -> str:
    """ "expected X, got Y" with enough digits that X and Y never read the same."""
    want, have = _number_text(expected, digits), _number_text(got, digits)
    if want == have:
        want, have = repr(expected), repr(got)
    return f"expected {want}, got {have}"


def first_difference(got: Any, expected: Any, *, atol: float = 1e-5, rtol: float = 1e-4,
                     dtype: torch.dtype | None = None) -> str:
    """Where ``got`` first differs from ``expected``, in words: the index, the expected value and the got one.

    Tensors of the same shape: "at index (0, 2) expected 0.5, got nan"; otherwise the shapes, dtypes
    or types that differ. The two sides are never described by the same words.
    """
    if isinstance(expected, (tuple, list)) and any(isinstance(e, torch.Tensor) for e in expected) \
            and isinstance(got, (tuple, list)) and len(got) == len(expected):
        for i, (g, e) in enumerate(zip(got, expected)):
            if not same(g, e, atol=atol, rtol=rtol, dtype=dtype):
                return f"in item {i} of the {len(expected)} you return, " + first_difference(
                    g, e, atol=atol, rtol=rtol, dtype=dtype)
    read = read_value(got, expected)
    if isinstance(expected, torch.Tensor) and isinstance(read, torch.Tensor):
        if read.shape != expected.shape:
            return f"expected shape {tuple(expected.shape)}, got shape {tuple(read.shape)}"
        if expected.dtype == torch.bool and read.dtype != torch.bool:
            return f"expected a bool tensor, got dtype {_dtype_name(read.dtype)}"
        if expected.is_floating_point() != read.is_floating_point():
            return (f"expected a floating tensor (dtype {_dtype_name(expected.dtype)}), got dtype "
                    f"{_dtype_name(read.dtype)}" if expected.is_floating_point() else
                    f"expected dtype {_dtype_name(expected.dtype)}, got dtype {_dtype_name(read.dtype)}")
        if expected.dtype == torch.bool:
            bad = (read != expected)
        else:
            a, r = tolerance(dtype if dtype is not None else narrower(read.dtype, expected.dtype), atol, rtol)
            g, e = read.detach().double(), expected.detach().double()
            bad = ~torch.isclose(g, e, atol=a, rtol=r)
        if bad.any():
            where = tuple(bad.nonzero()[0].tolist())
            at = f"index {where if len(where) != 1 else where[0]}" if where else "the only value"
            return f"at {at} " + _two_numbers(_scalar(expected[where]), _scalar(read[where]))
        return f"expected {describe(expected)}, got {describe(read)}"
    if isinstance(expected, torch.Tensor):
        return f"expected a tensor of shape {tuple(expected.shape)}, got {describe(got)}"
    if _is_number(_scalar(expected)) and _is_number(_scalar(read)):
        return _two_numbers(_scalar(expected), _scalar(read), digits=6)  # a predicted number: 6 digits
    want, have = describe(expected), describe(got)
    if want == have:
        have = f"{have} ({type(got).__name__}, expected {type(expected).__name__})"
    return f"expected {want}, got {have}"


def _matching_mistake(got: Any, mistakes: Sequence[Mistake], wrong_value: Callable[[Mistake], Any], *,
                      atol: float = 1e-5, rtol: float = 1e-4, dtype: torch.dtype | None = None) -> Mistake | None:
    for mistake in mistakes:
        try:
            if mistake.when is not None:
                if mistake.when(got):
                    return mistake
            elif same(got, wrong_value(mistake), atol=atol, rtol=rtol, dtype=dtype):
                return mistake
        except Exception:  # a predicate that cannot judge this answer does not match it
            continue
    return None


def decimals_tolerance(decimals: int) -> float:
    """The absolute tolerance of a prediction written to ``decimals`` decimals: one unit in the last one."""
    return 10.0 ** -decimals * (1 + 1e-6)


# ----------------------------------------------------------------------------- the two checkers


def check_value(
    name: str, answer: Any, expected: Any, mistakes: Sequence[Mistake] = (), *,
    correct: str = "", atol: float = 1e-5, rtol: float = 1e-4, decimals: int | None = None,
) -> None:
    """Print one line judging ``answer`` against ``expected``, naming the mistake when one is recognised.

    The answer is read as the value it holds (:func:`read_value`) before it is compared, so a 0-d
    tensor, a NumPy number, a ``Fraction`` or a list is as good as the Python number or tuple
    asked for; a string holding a number is told to write the number.

    Args:
        name: the exercise, as the notebook titles it (e.g. ``"Exercise 2"``).
        answer: the learner's value; ``None`` or ``...`` means not attempted.
        expected: the reference value (tensor, tuple, number, bool, str, or a dict of these).
        mistakes: known wrong values, each with the hint to print; a ``when`` predicate receives the
            answer as read.
        correct: a short sentence added after "correct." (what the answer means).
        atol, rtol: tolerances for tensors and floats.
        decimals: the precision the prompt asks for ("2 decimals are enough"): when given, numbers
            within one unit of the last decimal are accepted (``atol = 10**-decimals``, ``rtol = 0``).
    """
    if decimals is not None:
        atol, rtol = decimals_tolerance(decimals), 0.0
    if _is_stub(answer):
        report(name, "not attempted")
        return
    if not isinstance(expected, str) and (hint := number_in_string(answer)) is not None:
        report(name, "not yet", hint)
        return
    got = read_value(answer, expected)
    if same(got, expected, atol=atol, rtol=rtol):
        report(name, "correct", correct)
    elif (mistake := _matching_mistake(got, mistakes, lambda m: m.answer, atol=atol, rtol=rtol)) is not None:
        report(name, "not yet", mistake.hint)
    else:
        text = first_difference(got, expected, atol=atol, rtol=rtol)
        report(name, "not yet", text[0].upper() + text[1:] + ".")


@dataclass(frozen=True)
class Probe:
    """One input of :func:`check_function` chosen to separate a right implementation from a lucky one.

    ``args`` are the arguments; ``label`` names the input in a hint ("the row [0, 200]"); ``hint``
    (a string, or a function ``(got, expected, args) -> str | None``) names the mistake this probe is
    there to catch, and is used when the learner's function fails on it and no named mistake matched.
    ``loss``, when given, also checks the gradients: ``loss(output, args)`` is a scalar whose backward
    pass must give every floating input the reference's gradient (finite, never NaN).
    """

    args: tuple
    label: str = ""
    hint: str | Callable[[Any, Any, tuple], str | None] | None = None
    loss: Callable[[Any, tuple], torch.Tensor] | None = None


def _input_dtype(args: tuple) -> torch.dtype | None:
    return narrower(*(a.dtype for a in args if isinstance(a, torch.Tensor)))


def _in_float64(args: tuple) -> tuple:
    return tuple(a.detach().double() if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args)


def _floating_results(got: Any) -> list[torch.Tensor]:
    if isinstance(got, torch.Tensor):
        return [got] if got.is_floating_point() else []
    if isinstance(got, (tuple, list)):
        return [t for t in got if isinstance(t, torch.Tensor) and t.is_floating_point()]
    return []


def _gradients(function: Callable[..., Any], args: tuple, loss: Callable[[Any, tuple], torch.Tensor]) -> list:
    leaves = tuple(a.detach().clone().requires_grad_(True) if isinstance(a, torch.Tensor) and a.is_floating_point()
                   else a for a in args)
    out = _quietly(function, *leaves)
    value = loss(out, leaves)
    grads = torch.autograd.grad(value, [a for a in leaves if isinstance(a, torch.Tensor) and a.requires_grad],
                                allow_unused=True)
    return [torch.zeros_like(a) if g is None else g for a, g in
            zip([a for a in leaves if isinstance(a, torch.Tensor) and a.requires_grad], grads)]


def check_function(
    name: str, function: Any, inputs: Sequence[tuple | Probe], reference: Callable[..., Any],
    mistakes: Sequence[Mistake] = (), *, diagnose: Callable[[Any, Any, tuple], str | None] | None = None,
    on_error: Callable[[Exception, tuple], str | None] | None = None,
    correct: str = "", atol: float = 1e-5, rtol: float = 1e-4, reference_in_float64: bool = True,
) -> None:
    """Print one line judging the learner's ``function`` on every input tuple against ``reference``.

    The function is called on each tuple of ``inputs``, or each :class:`Probe` (tensors are cloned
    first, so the learner's function cannot change them for the next call; warnings it triggers are
    silenced). The reference runs on float64 copies of the floating inputs (unless
    ``reference_in_float64=False``, or the reference cannot take float64 inputs), and the learner's
    result, in the inputs' dtype or a wider one, is compared at the inputs' precision: float16 and
    bfloat16 at torch's tolerances, float32 and float64 at ``atol``/``rtol``. A result narrower than
    its inputs (float16 out of float32 in) is not accepted.

    On the first input where it disagrees with the reference, each mistake is tried in order: its
    wrong implementation (``Mistake.answer``, run on the same input) or predicate (``Mistake.when``,
    given the learner's output); a match prints its hint. Then the probe's own hint, then
    ``diagnose(got, expected, args)`` when given (it returns None when it does not recognise the
    answer). Otherwise the general hint shows the first difference: the input (or probe), the index,
    the expected value and the learner's.

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
    for item in inputs:
        probe = item if isinstance(item, Probe) else Probe(tuple(item))
        args = probe.args
        where = f"the probe {probe.label}" if probe.label else f"inputs {_inputs_text(args)}"
        try:
            got = _quietly(function, *_fresh(args))
        except Exception as err:  # the learner's code: report it in one line instead of a traceback
            text = str(err).strip().splitlines()[0] if str(err).strip() else ""
            raised = f"Your function raised {type(err).__name__} on {where}"
            hint = _safely(on_error, err, args) or (raised + (f": {text}" if text else "."))
            report(name, "not yet", hint)
            return
        if got is None:
            report(name, "not attempted", "(your function returns None: finish it with a return)")
            return
        expected = _reference_value(reference, args, reference_in_float64)
        dtype = _input_dtype(args)
        narrow = [t for t in _floating_results(got) if dtype is not None and narrower(t.dtype, dtype) != dtype]
        if narrow:
            report(name, "not yet", f"On {where} your function returns {_dtype_name(narrow[0].dtype)} for "
                                    f"{_dtype_name(dtype)} inputs: keep the inputs' dtype (or a wider one), "
                                    "so that no precision is lost.")
            return
        if same(got, expected, atol=atol, rtol=rtol, dtype=dtype):
            if probe.loss is None:
                continue
            hint = _gradient_hint(function, reference, probe, where, atol=atol, rtol=rtol, dtype=dtype)
            if hint is None:
                continue
            report(name, "not yet", hint)
            return
        mistake = _matching_mistake(got, mistakes, lambda m, args=args: _quietly(m.answer, *_fresh(args)),
                                    atol=atol, rtol=rtol, dtype=dtype)
        if mistake is not None:
            hint = mistake.hint
        else:
            probe_hint = probe.hint if not callable(probe.hint) else _safely(probe.hint, got, expected, args)
            hint = probe_hint or _safely(diagnose, got, expected, args)
        if not hint:
            diff = first_difference(got, expected, atol=atol, rtol=rtol, dtype=dtype)
            hint = f"On {where}, {diff}."
        report(name, "not yet", hint)
        return
    report(name, "correct", correct)


def _reference_value(reference: Callable[..., Any], args: tuple, in_float64: bool) -> Any:
    """The reference on float64 copies of the floating inputs; on the inputs as they are if it cannot take float64
    (a reference that mixes its inputs with float32 tensors of its own), so an older checker keeps working."""
    if in_float64:
        try:
            return _quietly(reference, *_in_float64(args))
        except Exception:
            pass
    return _quietly(reference, *_fresh(args))


def _gradient_hint(function: Callable[..., Any], reference: Callable[..., Any], probe: Probe, where: str, *,
                   atol: float, rtol: float, dtype: torch.dtype | None) -> str | None:
    """None when the learner's gradients on ``probe`` match the reference's, else the hint that says where not."""
    try:
        got = _gradients(function, probe.args, probe.loss)
    except Exception as err:
        return f"On {where} the backward pass through your function raised {type(err).__name__}."
    try:
        want = _gradients(reference, _in_float64(probe.args), probe.loss)
    except Exception:  # a reference that cannot take float64: its gradients in the inputs' dtype
        want = _gradients(reference, probe.args, probe.loss)
    for g, w in zip(got, want):
        if not same(g, w, atol=atol, rtol=rtol, dtype=dtype):
            if probe.hint is not None and not callable(probe.hint):
                return probe.hint
            if not torch.isfinite(g).all():
                return (f"On {where} your weights are right, but their gradient is not finite (NaN or inf) "
                        "in the backward pass: a training step would spoil every parameter.")
            return f"On {where} your function's gradient differs: {first_difference(g, w, atol=atol, rtol=rtol)}."
    return None


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
        f"{tuple(a.shape)} {_dtype_name(a.dtype)}" if isinstance(a, torch.Tensor) else repr(a)
        for a in args
    )


__all__ = [
    "FLOAT_TOLERANCE", "NOT_ATTEMPTED", "Mistake", "Probe", "check_function", "check_value", "decimals_tolerance",
    "describe", "first_difference", "grading", "narrower", "number_in_string", "read_value", "report", "same",
    "shape_of", "tolerance",
]
