"""Checkers for the course's exercises: each names the classic mistake when it recognises one.

Each exercise is a stub cell the learner fills in and a check cell that calls one :class:`Exercise` of the notebook's
module here (``attnlib.exercises.nb01`` for notebook 01, ...). A checker prints one line and never raises:
``"<exercise>: correct. ..."``, ``"<exercise>: not yet. <hint>"`` or ``"<exercise>: not attempted yet"``. It judges
the answer, not its spelling (:func:`read_value`). Inside ``with grading():`` (nbgrader's test cells) a line other
than "correct" is raised as ``AssertionError`` instead.
"""

from __future__ import annotations

import ast
import contextlib
import contextvars
import decimal
import fractions
import inspect
import math
import numbers
import re
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import torch

NOT_ATTEMPTED = "not attempted yet"

_GRADING: contextvars.ContextVar[bool] = contextvars.ContextVar("attnlib_exercises_grading", default=False)


@contextlib.contextmanager
def grading() -> Iterator[None]:
    """Grading mode (nbgrader's test cells): a correct answer passes silently; any other verdict raises
    ``AssertionError`` with the very line the checker would print. Nests; the previous mode returns on exit."""
    token = _GRADING.set(True)
    try:
        yield
    finally:
        _GRADING.reset(token)


def _verdict_error(line: str) -> AssertionError:
    """The AssertionError of a verdict, which IPython (and nbgrader's feedback) shows as its one line, without a
    traceback through the checker's code (``_render_traceback_``)."""
    error = AssertionError(line)
    error._render_traceback_ = lambda: [f"AssertionError: {line}"]
    return error


def report(name: str, verdict: str, text: str = "") -> None:
    """Print ``"<name>: <verdict>. <text>"`` (verdict "correct", "not yet" or "not attempted"); in grading mode
    raise it as AssertionError unless correct. ValueError for an unknown verdict (a checker's bug)."""
    text = re.sub(r"\s*\n\s*", " ", text).strip()  # one line, whatever a repr inside the hint spans
    heads = {"correct": "correct.", "not yet": "not yet.", "not attempted": NOT_ATTEMPTED}
    if verdict not in heads:
        raise ValueError(f"verdict must be 'correct', 'not yet' or 'not attempted', got {verdict!r}")
    line = f"{name}: {heads[verdict]}" + (f" {text}" if text else "")
    if _GRADING.get():
        if verdict != "correct":
            raise _verdict_error(line)
        return
    print(line)


# ----------------------------------------------------------------------------- reading an answer


def _is_stub(answer: Any) -> bool:
    return answer is None or answer is Ellipsis


def _scalar(x: Any) -> Any:
    """A Python number or bool for anything that holds one number (NumPy scalar, 0-d tensor, Fraction); else x."""
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (torch.Tensor, np.ndarray)) and x.ndim == 0 or isinstance(x, np.generic):
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
    if isinstance(x, (torch.Tensor, np.ndarray)):
        x = (x.detach() if isinstance(x, torch.Tensor) else x).flatten().tolist()
    if not isinstance(x, (list, tuple, torch.Size)):
        return None
    out: list = []
    for v in x:
        inner = _flat_numbers(v) if isinstance(v, (list, tuple, torch.Tensor, np.ndarray)) else None
        if inner is None and not (_is_number(_scalar(v)) or isinstance(_scalar(v), bool)):
            return None
        out += inner if inner is not None else [_scalar(v)]
    return out


def read_value(answer: Any, like: Any = None) -> Any:
    """The value an answer holds, read toward the kind of ``like`` (the expected value): anything holding one number
    as that number; a sequence of numbers as a tuple (a shape); an array or nested list as a tensor (float64 toward a
    floating one); a dict value by value. ``True`` is never 1. What cannot be read is returned unchanged."""
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


def same(got: Any, expected: Any, *, atol: float = 1e-5, rtol: float = 1e-4, dtype: torch.dtype | None = None,
         equal_nan: bool = False) -> bool:
    """True when ``got``, read toward ``expected`` (:func:`read_value`), equals it: numbers within ``atol + rtol *
    |expected|``, booleans only as booleans, tensors by shape and values at the precision of ``dtype`` (else of the
    narrower tensor; :data:`FLOAT_TOLERANCE` for the half dtypes), NaN never equal; tuples of tensors item by item."""
    if isinstance(expected, (tuple, list)) and any(isinstance(e, torch.Tensor) for e in expected):
        return (isinstance(got, (tuple, list)) and len(got) == len(expected)
                and all(same(g, e, atol=atol, rtol=rtol, dtype=dtype, equal_nan=equal_nan)
                        for g, e in zip(got, expected)))
    if isinstance(expected, dict):
        return (isinstance(got, dict) and got.keys() == expected.keys()
                and all(same(got[k], expected[k], atol=atol, rtol=rtol, dtype=dtype, equal_nan=equal_nan)
                        for k in expected))
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
        return bool(torch.allclose(got_d, exp_d, atol=a, rtol=r, equal_nan=equal_nan))  # by default NaN is wrong
    if isinstance(got, bool) or isinstance(expected, bool):
        return type(got) is type(expected) and got == expected  # True is an answer, 1 is not
    if _is_number(expected) and _is_number(got):
        if isinstance(expected, int) and isinstance(got, int):
            return got == expected
        return math.isfinite(got) and abs(got - expected) <= atol + rtol * abs(expected)
    if isinstance(expected, (tuple, list)) and isinstance(got, (tuple, list)):
        return len(got) == len(expected) and all(same(g, e, atol=atol, rtol=rtol, equal_nan=equal_nan)
                                                 for g, e in zip(got, expected))
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
    """Where ``got`` first differs from ``expected``, in words ("at index (0, 2) expected 0.5, got nan", or the shapes,
    dtypes or types that differ), the two sides never in the same words."""
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


def decimals_tolerance(decimals: int) -> float:
    """The absolute tolerance of a prediction written to ``decimals`` decimals: one unit in the last one."""
    return 10.0 ** -decimals * (1 + 1e-6)


def as_number(answer: Any) -> Any:
    """The number an answer holds (Python, NumPy, ``Fraction``, 0-d or one-element tensor) as an int or
    float; anything else unchanged. The one number reader of the checkers."""
    return read_value(answer, 0.0)


def shown(value: Any) -> str:
    """A learner's answer as a hint quotes it: a number to 4 significant digits, anything else described."""
    value = _scalar(value)
    return _number_text(value) if _is_number(value) else describe(value)


# ----------------------------------------------------------------------------- an exercise, declared


def _required(function: Callable[..., Any]) -> int:
    """How many positional parameters ``function`` requires (those without a default)."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature
        return 1
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return sum(p.kind in kinds and p.default is inspect.Parameter.empty for p in parameters)


def _call(function: Callable[..., Any], got: Any, args: tuple) -> Any:
    """``function(got, args)``, or ``function(got)`` for a predicate or hint written with one required parameter."""
    return function(got, args) if _required(function) >= 2 else function(got)


@dataclass(frozen=True)
class Mistake:
    """A known wrong answer and the hint that names it: one row of an exercise's table of mistakes.

    Recognised by one of:

    - ``answer``: the wrong value itself (compared like the reference; a zero-argument function is called for it), or,
      in a function exercise, a wrong implementation run on the same probe;
    - ``when``: a predicate ``when(got)`` or ``when(got, args)`` on the answer as read (or the function's output on the
      probe ``args``), for a mistake that is a family of values;
    - ``raises``: an exception type the learner's function raised (``match``: a regular expression its message must
      contain; ``when(error, args)`` may narrow it further).

    ``hint`` is the sentence printed after "not yet."; ``{got}`` in it is replaced by the learner's answer (or output)
    as :func:`shown` writes it, or ``hint`` is a function ``(got)`` or ``(got, args)`` that writes the sentence from it.
    ``example`` is an answer (or function) that makes this mistake, for the tests, where neither ``answer`` nor
    ``raises`` gives one. With ``raw=True`` a value exercise's ``when`` sees the answer as given, before it is read
    (rows written as strings of digits). With ``always=True`` a function exercise's row is looked for even where the
    output matches the reference within the tolerance: a property the tolerance would hide (a masked weight of 3e-7
    where the exercise asks for exactly 0).
    """

    hint: str | Callable[..., str]
    answer: Any = None
    when: Callable[..., bool] | None = field(default=None, compare=False)
    raises: type[BaseException] | tuple[type[BaseException], ...] | None = None
    match: str = ""
    example: Any = None
    raw: bool = False
    always: bool = False

    def text(self, got: Any, args: tuple = ()) -> str:
        """The hint for ``got`` (the learner's answer, or output on ``args``)."""
        if callable(self.hint):
            return _call(self.hint, got, args)
        return self.hint.replace("{got}", shown(got)) if "{got}" in self.hint else self.hint


@dataclass(frozen=True)
class Probe:
    """One input of a function exercise, chosen to separate a right implementation from a lucky one.

    ``args`` are the arguments; ``label`` names the input in a hint ("the row [0, 200]"); ``hint`` (a string, or a
    function ``(got, expected, args) -> str | None``) names the mistake this probe is there to catch, used when the
    learner's function fails on it and no mistake of the table matched. ``loss``, when given, also checks the gradients:
    ``loss(output, args)`` is a scalar whose backward pass must give every floating input the reference's gradient
    (finite, never NaN).
    """

    args: tuple
    label: str = ""
    hint: str | Callable[[Any, Any, tuple], str | None] | None = None
    loss: Callable[[Any, tuple], torch.Tensor] | None = None


class Verdict(NamedTuple):
    """What a checker found: ``"correct"``, ``"not yet"`` or ``"not attempted"``, the text after it, and the
    mistake of the table that matched (None when none did)."""

    verdict: str
    text: str = ""
    mistake: Mistake | None = None


@dataclass(frozen=True)
class Exercise:
    """One exercise as data: what is right, the probes that test it, the known mistakes and their hints.

    Calling it (``nb05.check_merge_heads(my_merge_heads)``) prints one line through :func:`report`; :meth:`judge`
    returns the :class:`Verdict` instead. Three kinds, told apart by what is given:

    - a **value** (a prediction, a shape, a number): ``expected`` (or a zero-argument function that computes it). The
      answer is read as the value it holds (:func:`read_value`; ``read`` may read it otherwise, returning None for an
      answer it cannot read, which gets ``unreadable``), compared at ``atol``/``rtol`` or at ``decimals`` decimals.
      ``answers`` names several answers judged together as a dict (``check_shapes(scores_shape, weights_shape,
      output_shape)``).
    - a **function**: ``reference`` and ``probes`` (tuples of arguments, or :class:`Probe`, or a zero-argument function
      returning them). The learner's function runs on each probe (tensors cloned first), the reference on float64
      copies; a result in the inputs' dtype or a wider one is compared at the inputs' precision (float16 and bfloat16 at
      torch's tolerances).
    - a **property** (a function whose output is random, such as a batch): ``probes`` and no reference. The output is
      right when no mistake of the table recognises it: each mistake's ``when`` is then a property the output must not
      show. ``same_twice`` (a hint) also calls the function twice on the same probe (a generator argument copied with
      its state) and requires equal outputs.

    In every kind the answer is judged in this order: not attempted (``None``, ``...``, a function that returns None); a
    number written as a string; right; the first mistake of the table that recognises it; the probe's own hint;
    ``diagnose(got, expected, args)``; then the first difference (the probe, the index, the expected value and the
    learner's). ``correct`` is the sentence after "correct.". A NaN is never right unless ``equal_nan``; a mistake's
    wrong output may hold NaN where the learner's does. ``solution`` is a right answer for the tests where neither
    ``expected`` nor ``reference`` is one (a property exercise). ``refuse`` names modules (``"attnlib.masks"``) or
    functions (``"attnlib.masks.causal_mask"``) the learner's function may not call: it is to be written. With
    ``exact_dtype`` a function's tensors must also have the reference's dtypes (int64 where int32 has the values).
    """

    name: str
    correct: str = ""
    expected: Any = None
    reference: Callable[..., Any] | None = None
    probes: Sequence[tuple | Probe] | Callable[[], Sequence[tuple | Probe]] = ()
    mistakes: Sequence[Mistake] | Callable[[], Sequence[Mistake]] = ()
    answers: tuple[str, ...] = ()
    read: Callable[[Any], Any] | None = None
    unreadable: str = ""
    decimals: int | None = None
    atol: float = 1e-5
    rtol: float = 1e-4
    equal_nan: bool = False
    diagnose: Callable[[Any, Any, tuple], str | None] | None = None
    same_twice: str = ""
    reference_in_float64: bool = True
    solution: Any = None
    refuse: tuple[str, ...] = ()
    exact_dtype: bool = False

    def __call__(self, *answers: Any) -> None:
        verdict = self.judge(*answers)
        report(self.name, verdict.verdict, verdict.text)

    @property
    def is_function(self) -> bool:
        return self.reference is not None or bool(self.probes)

    def table(self) -> list[Mistake]:
        """The mistakes, built when first needed (a table may compute its wrong values)."""
        return list(self.mistakes() if callable(self.mistakes) else self.mistakes)

    def probe_list(self) -> list[Probe]:
        items = self.probes() if callable(self.probes) else self.probes
        return [p if isinstance(p, Probe) else Probe(tuple(p)) for p in items]

    def expected_value(self) -> Any:
        return self.expected() if callable(self.expected) else self.expected

    def right_answer(self) -> tuple:
        """A right answer, as the arguments of a check cell (for the tests)."""
        answer = self.solution if self.solution is not None else (
            self.reference if self.is_function else self.expected_value())
        return tuple(answer[k] for k in self.answers) if self.answers else (answer,)

    def wrong_answer(self, mistake: Mistake) -> tuple | None:
        """An answer that makes ``mistake``, as the arguments of a check cell (None when the table gives none)."""
        answer = mistake.example if mistake.example is not None else mistake.answer
        if answer is None:
            return None
        if not self.is_function and callable(answer):
            answer = answer()
        return tuple(answer[k] for k in self.answers) if self.answers else (answer,)

    def judge(self, *answers: Any) -> Verdict:
        """The verdict on the learner's answer(s), never raising (a checker's own failure is reported in one line)."""
        try:
            if self.answers:
                if len(answers) != len(self.answers):
                    return Verdict("not yet", f"Give {len(self.answers)} answers: {', '.join(self.answers)}.")
                if all(_is_stub(a) for a in answers):
                    return Verdict("not attempted")
                missing = [n for n, a in zip(self.answers, answers) if _is_stub(a)]
                if missing:
                    return Verdict("not yet", f"Fill in every answer: {', '.join(missing)} is still None.")
                answer: Any = dict(zip(self.answers, answers))
            elif len(answers) != 1:
                return Verdict("not yet", f"Give one answer, got {len(answers)}.")
            else:
                answer = answers[0]
            if _is_stub(answer):
                return Verdict("not attempted")
            return self._judge_function(answer) if self.is_function else self._judge_value(answer)
        except Exception as err:  # noqa: BLE001 - a checker never raises into a learner's notebook
            return Verdict("not yet", f"The checker could not read this answer ({type(err).__name__}); "
                                      "check its type and shape against the exercise's prompt.")

    # -- a value --------------------------------------------------------------------------------

    def _read(self, answer: Any, expected: Any) -> Any:
        if isinstance(answer, dict) and isinstance(expected, dict):
            return {k: self._read(v, expected.get(k)) for k, v in answer.items()}
        if self.read is not None:
            return self.read(answer)
        return read_value(answer, expected)

    def _judge_value(self, answer: Any) -> Verdict:
        expected = self.expected_value()
        atol, rtol = (decimals_tolerance(self.decimals), 0.0) if self.decimals is not None else (self.atol, self.rtol)
        for mistake in self.table():
            if mistake.raw and _safely(mistake.when, answer):
                return Verdict("not yet", mistake.text(answer), mistake)
        strings = [answer] if not isinstance(answer, dict) else list(answer.values())
        for value in strings:
            if not isinstance(expected, str) and (hint := number_in_string(value)) is not None:
                return Verdict("not yet", hint)
        got = self._read(answer, expected)
        if got is None or (isinstance(got, dict) and any(v is None for v in got.values())):
            return Verdict("not yet", self.unreadable.replace("{got}", describe(answer))
                           or f"The checker cannot read {describe(answer)} as an answer to this exercise.")
        if same(got, expected, atol=atol, rtol=rtol, equal_nan=self.equal_nan):
            return Verdict("correct", self.correct)
        return self._matching(got, (), self.table(), None, atol, rtol) or Verdict(
            "not yet", _safely(self.diagnose, got, expected, ()) or _not_the_value(got, expected))

    # -- a function or a property -----------------------------------------------------------------

    def _judge_function(self, function: Any) -> Verdict:
        if not callable(function):
            return Verdict("not yet", f"Expected a function, got {describe(function)}.")
        mistakes = self.table()
        for probe in self.probe_list():
            args = probe.args
            where = f"the probe {probe.label}" if probe.label else f"inputs {_inputs_text(args)}"
            fresh, called = _fresh(args), []
            try:
                with _calls_into(self.refuse, called):
                    got = _unwatched(_quietly(function, *fresh))
            except Exception as err:  # the learner's code: one line instead of a traceback
                if not called:
                    return self._raised(err, args, where, mistakes)
            if called:
                return Verdict("not yet", f"Your function calls {called[0]}: this exercise asks you to write "
                                          "that step yourself, with torch's basic operations.")
            if got is None:
                return Verdict("not attempted", "(your function returns None: finish it with a return)")
            if changed := _changed_in_place(function, args, fresh):
                return Verdict("not yet", f"Your function changes its argument {changed} in place (an operation "
                                          "ending in _, or /=, -=, [...] =): the caller's tensor changes too. "
                                          "Compute a new tensor instead (x = x / c, x.masked_fill(...)).")
            if self.same_twice:
                again = _safely(_quietly, function, *_fresh(args))
                if not same(again, got, atol=0.0, rtol=0.0, equal_nan=True):
                    return Verdict("not yet", self.same_twice)
            dtype = _input_dtype(args)
            floor = dtype or torch.float32  # without floating inputs, a half-precision result loses digits too
            narrow = [t for t in _floating_results(got) if narrower(t.dtype, floor) != floor]
            if narrow:
                inputs, keep = (f"{_dtype_name(dtype)} inputs", "the inputs' dtype") if dtype else (
                    "inputs that are numbers", "float32")
                return Verdict("not yet", f"On {where} your function returns {_dtype_name(narrow[0].dtype)} for "
                                          f"{inputs}: keep {keep} (or a wider one), so that no precision is lost.")
            if self.reference is None:  # a property exercise: right unless a property fails
                verdict = self._matching(got, args, mistakes, dtype, self.atol, self.rtol)
                if verdict is not None:
                    return verdict
                continue
            expected = _reference_value(self.reference, args, self.reference_in_float64)
            if isinstance(expected, torch.Tensor) and isinstance(got, (tuple, list)):
                return Verdict("not yet", f"Your function returns a {type(got).__name__} of {len(got)} items; this "
                                          "exercise asks for one tensor.")
            if same(got, expected, atol=self.atol, rtol=self.rtol, dtype=dtype, equal_nan=self.equal_nan) and not (
                    self.exact_dtype and _dtypes(got) != _dtypes(expected)):
                if verdict := self._matching(got, args, [m for m in mistakes if m.always], dtype, self.atol, self.rtol):
                    return verdict
                if probe.loss is not None and (hint := _gradient_hint(
                        function, self.reference, probe, where, atol=self.atol, rtol=self.rtol, dtype=dtype)):
                    return Verdict("not yet", hint)
                continue
            verdict = self._matching(got, args, mistakes, dtype, self.atol, self.rtol)
            if verdict is not None:
                return verdict
            hint = (probe.hint if not callable(probe.hint) else _safely(probe.hint, got, expected, args)) \
                or _safely(self.diagnose, got, expected, args)
            if not hint:
                diff = first_difference(got, expected, atol=self.atol, rtol=self.rtol, dtype=dtype)
                hint = f"On {where}, {diff}."
            return Verdict("not yet", hint)
        return Verdict("correct", self.correct)

    def _matching(self, got: Any, args: tuple, mistakes: list[Mistake], dtype: torch.dtype | None, atol: float,
                  rtol: float) -> Verdict | None:
        """The first mistake that recognises ``got`` (a value, or the output on the probe ``args``), else None."""
        for mistake in mistakes:
            if mistake.raises is not None or mistake.raw:
                continue
            try:
                if mistake.when is not None:
                    hit = _call(mistake.when, got, args)
                else:
                    wrong = _unwatched(_quietly(mistake.answer, *_fresh(args))) if self.is_function else (
                        mistake.answer() if callable(mistake.answer) else mistake.answer)
                    hit = same(got, wrong, atol=atol, rtol=rtol, dtype=dtype, equal_nan=True)
                if hit:
                    return Verdict("not yet", mistake.text(got, args), mistake)
            except Exception:  # a wrong implementation or predicate that cannot take this probe does not match
                continue
        return None

    def _raised(self, err: Exception, args: tuple, where: str, mistakes: list[Mistake]) -> Verdict:
        for mistake in mistakes:
            if mistake.raises is None or not isinstance(err, mistake.raises):
                continue
            if mistake.match and not re.search(mistake.match, str(err), re.I):
                continue
            if mistake.when is not None and not _safely(mistake.when, err, args):
                continue
            return Verdict("not yet", _safely(mistake.text, err, args) or str(mistake.hint), mistake)
        text = str(err).strip().splitlines()[0] if str(err).strip() else ""
        raised = f"Your function raised {type(err).__name__} on {where}"
        return Verdict("not yet", raised + (f": {text}" if text else "."))


def _not_the_value(got: Any, expected: Any) -> str:
    """The general hint of a value exercise: where the answer is off, without writing the expected value."""
    if _is_number(_scalar(got)) and _is_number(_scalar(expected)) and math.isfinite(_scalar(got)):
        side = "too large" if _scalar(got) > _scalar(expected) else "too small"
        return f"{shown(got)} is {side}. Work it out again from the section's numbers."
    if isinstance(expected, dict) and isinstance(got, dict):
        wrong = [k for k in expected if k in got and not same(got[k], expected[k])]
        if wrong:
            return f"{', '.join(wrong)} {'is' if len(wrong) == 1 else 'are'} not right yet; the others are."
    if isinstance(expected, (tuple, list)) and isinstance(got, (tuple, list)):
        if len(got) != len(expected):
            return f"Your answer has {len(got)} entries; the answer has {len(expected)}."
        wrong = [i for i, (g, e) in enumerate(zip(got, expected)) if not same(g, e)]
        return f"Number {wrong[0] + 1} of your answer ({shown(got[wrong[0]])}) is not right; check it again." if wrong \
            else f"Your answer {describe(got)} is not the one asked for."
    if isinstance(expected, torch.Tensor) and isinstance(got, torch.Tensor) and got.shape == expected.shape:
        bad = ~torch.isclose(got.double(), expected.double(), atol=1e-5, rtol=1e-4) if got.dtype != torch.bool \
            else got != expected
        if bad.any():
            where = tuple(bad.nonzero()[0].tolist())
            return f"At index {where} your value {shown(got[where])} is not right; check that entry again."
    text = first_difference(got, expected)
    return text[0].upper() + text[1:] + "." if "expected" not in text[:9] else f"Your answer {describe(got)} is " \
        "not the one asked for."


def exercises_of(module: Any) -> dict[str, Exercise]:
    """The exercises a notebook's module declares, by the name its check cell calls (for tests and tools)."""
    return {name: value for name, value in vars(module).items() if isinstance(value, Exercise)}


# ----------------------------------------------------------------------------- shared by the tables


def variant(function: Callable[..., Any], **keywords: Any) -> Callable[..., Any]:
    """``function`` with ``keywords`` fixed: a reference whose keyword switches on one classic mistake."""
    return lambda *args: function(*args, **keywords)


def near(value: float, *, tol: float | None = None, rel: float = 0.01) -> Callable[[Any], bool]:
    """A predicate: the answer is a number within ``tol`` of ``value`` (by default within ``rel`` of it)."""
    bound = tol if tol is not None else rel * abs(value)
    return lambda got: isinstance(got, (int, float)) and abs(got - value) <= bound


def direction(low: str, high: str) -> Callable[[Any, Any, tuple], str | None]:
    """A diagnosis saying whether a predicted number is too low or too high (``{got}`` quotes it), never by how much."""
    def diagnose(got: Any, expected: Any, args: tuple) -> str | None:
        if not isinstance(got, (int, float)) or not math.isfinite(got):
            return None
        return (low if got < expected else high).replace("{got}", f"{got:.4g}")
    return diagnose


def row_sums(weights: torch.Tensor, count: int = 3) -> str:
    """The first ``count`` row sums of ``weights``, for a hint ("1.00, 0.50, 2.00, ...")."""
    sums = weights.detach().real.double().sum(dim=-1).flatten().tolist()
    return ", ".join(f"{s:.2f}" for s in sums[:count]) + (", ..." if len(sums) > count else "")


def largest_hidden(weights: torch.Tensor, allowed: torch.Tensor) -> float:
    """The largest weight where ``allowed`` (broadcast to ``weights``) is False; 0.0 when each of them is exactly 0."""
    return float(weights.detach().double().nan_to_num(0.0).masked_fill(allowed, 0.0).abs().max())


class Refused(RuntimeError):
    """Raised by a watched probe tensor (:func:`watched`) when the learner's function does what its exercise forbids."""


READY_MADE = "a ready-made attention function"


def _called_from(modules: tuple[str, ...]) -> bool:
    """True when a torch function is called from code in one of ``modules`` (attnlib's attention, say)."""
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_globals.get("__name__") in modules:
            return True
        frame = frame.f_back
    return False


class _Watched(torch.Tensor):
    """A probe's tensor: a ready-made attention is refused, and every result made from it is shown to ``forbid``."""

    refuse: tuple[str, ...] = ("attnlib.flash", "attnlib.attention")
    functions: tuple[str, ...] = ("scaled_dot_product_attention",)

    @staticmethod
    def forbid(t: torch.Tensor) -> str:
        return ""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", "")
        if name in cls.functions or _called_from(cls.refuse):
            raise Refused(f"{READY_MADE} ({name if name in cls.functions else 'attnlib'})")
        out = super().__torch_function__(func, types, args, kwargs or {})
        for t in out if isinstance(out, (tuple, list)) else (out,):
            if isinstance(t, torch.Tensor) and (why := cls.forbid(t)):
                raise Refused(why)
        return out


def watched(*tensors: torch.Tensor, forbid: Callable[[torch.Tensor], str] | None = None,
            refuse: tuple[str, ...] = _Watched.refuse, functions: tuple[str, ...] = _Watched.functions) -> tuple:
    """Probe tensors that raise :class:`Refused` ("a ready-made attention function (<name>)") in the torch
    functions named ``functions`` (torch's SDPA by default; "softmax" refuses torch.softmax, F.softmax and
    Tensor.softmax), inside code of the modules ``refuse`` (attnlib's attention by default), and on any result
    ``forbid(result)`` names (a non-empty reason); every other operation works as usual."""
    kind = type("Tensor", (_Watched,), {"forbid": staticmethod(forbid or _Watched.forbid), "refuse": refuse,
                                         "functions": functions})
    return tuple(t.as_subclass(kind) for t in tensors)


def _unwatched(x: Any) -> Any:
    """A result with every watched tensor made plain, without running a watch: results of two probes compare."""
    if isinstance(x, _Watched):
        with torch._C.DisableTorchFunctionSubclass():
            return x.as_subclass(torch.Tensor)
    return type(x)(_unwatched(v) for v in x) if type(x) in (tuple, list) else x


def plain(*tensors: torch.Tensor) -> tuple:
    """Watched tensors as ordinary ones (for a reference that may use anything)."""
    return tuple(t.as_subclass(torch.Tensor) for t in tensors)


# ----------------------------------------------------------------------------- running the learner's code


def _input_dtype(args: tuple) -> torch.dtype | None:
    return narrower(*(a.dtype for a in args if isinstance(a, torch.Tensor)))


def _in_float64(args: tuple) -> tuple:
    return tuple(a.detach().double() if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args)


def _dtypes(x: Any) -> list[torch.dtype]:
    return [t.dtype for t in (x if isinstance(x, (tuple, list)) else (x,)) if isinstance(t, torch.Tensor)]


def _floating_results(got: Any) -> list[torch.Tensor]:
    if isinstance(got, torch.Tensor):
        return [got] if got.is_floating_point() else []
    if isinstance(got, (tuple, list)):
        return [t for t in got if isinstance(t, torch.Tensor) and t.is_floating_point()]
    return []


def _reference_value(reference: Callable[..., Any], args: tuple, in_float64: bool) -> Any:
    """The reference on float64 copies of the floating inputs; on the inputs as they are if it cannot take float64."""
    if in_float64:
        try:
            return _unwatched(_quietly(reference, *_in_float64(args)))
        except Exception:
            pass
    return _unwatched(_quietly(reference, *_fresh(args)))


def _gradients(function: Callable[..., Any], args: tuple, loss: Callable[[Any, tuple], torch.Tensor]) -> list:
    leaves = tuple(a.detach().clone().requires_grad_(True) if isinstance(a, torch.Tensor) and a.is_floating_point()
                   else a for a in args)
    value = loss(_quietly(function, *leaves), leaves)
    wanted = [a for a in leaves if isinstance(a, torch.Tensor) and a.requires_grad]
    grads = torch.autograd.grad(value, wanted, allow_unused=True)
    return [torch.zeros_like(a) if g is None else g for a, g in zip(wanted, grads)]


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


def _changed_in_place(function: Callable[..., Any], args: tuple, fresh: tuple) -> str:
    """The name of the first tensor argument the learner's function changed in place ("" when none)."""
    for i, (a, f) in enumerate(zip(args, fresh)):
        if isinstance(a, torch.Tensor) and not same(f.as_subclass(torch.Tensor), a.as_subclass(torch.Tensor),
                                                    atol=0.0, rtol=0.0, equal_nan=True):
            try:
                return next(p for j, p in enumerate(inspect.signature(function).parameters) if j == i)
            except (StopIteration, TypeError, ValueError):
                return f"number {i + 1}"
    return ""


def _fresh(args: tuple) -> tuple:
    """The inputs, tensors cloned and generators copied with their state: the learner's function cannot spoil
    the next call, and two calls on the same probe draw the same numbers."""
    def copy(a: Any) -> Any:
        if isinstance(a, torch.Tensor):
            return a.clone()
        if isinstance(a, torch.Generator):
            twin = torch.Generator(device=a.device)
            twin.set_state(a.get_state())
            return twin
        return a
    return tuple(copy(a) for a in args)


@contextlib.contextmanager
def _calls_into(modules: tuple[str, ...], called: list[str]) -> Iterator[None]:
    """Record in ``called`` the first function entered, while the block runs, that ``modules`` names (a module, or
    one function as ``"attnlib.masks.causal_mask"``), as "attnlib's causal_mask"."""
    if not modules:
        yield
        return

    def profile(frame: Any, event: str, arg: Any) -> None:
        module = frame.f_globals.get("__name__")
        name = getattr(frame.f_code, "co_qualname", frame.f_code.co_name).removesuffix(".__init__")
        if event == "call" and not called and (module in modules or f"{module}.{name}" in modules):
            called.append(f"attnlib's {name}" if module.startswith("attnlib") else name)
    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        yield
    finally:
        sys.setprofile(previous)


def _quietly(function: Callable[..., Any], *args: Any) -> Any:
    """``function(*args)`` with warnings silenced (e.g. torch's deprecation of ``.T`` on more than 2 axes)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(*args)


def _safely(function: Callable[..., Any] | None, *args: Any) -> Any:
    """``function(*args)``, or None when there is no function or it cannot read this answer."""
    if function is None:
        return None
    try:
        return function(*args)
    except Exception:  # a diagnosis that cannot read this answer falls back to the general hint
        return None


def _inputs_text(args: tuple) -> str:
    """Inputs as a hint shows them: a tensor by its shape and dtype, anything else by its repr."""
    return ", ".join(
        f"{tuple(a.shape)} {_dtype_name(a.dtype)}" if isinstance(a, torch.Tensor)
        else "a generator" if isinstance(a, torch.Generator) else repr(a)
        for a in args
    )


__all__ = [
    "FLOAT_TOLERANCE", "NOT_ATTEMPTED", "READY_MADE", "Exercise", "Mistake", "Probe", "Refused", "Verdict",
    "as_number", "decimals_tolerance", "describe", "direction", "exercises_of", "first_difference", "grading",
    "largest_hidden", "narrower", "near", "number_in_string", "plain", "read_value", "report", "row_sums", "same",
    "shape_of", "shown", "tolerance", "variant", "watched",
]
