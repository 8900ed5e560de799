"""Checkers for notebook 02 (softmax axes): one per exercise, each naming the classic mistake.

Besides the checkers, this module holds two small helpers the framework in
``attnlib.exercises`` does not have, used here and by ``nb03``: :func:`numbers_of` reads a
prediction written as a number, a tuple, a list or a tensor, and :func:`check_function_diagnosed`
is :func:`~attnlib.exercises.check_function` with a hint computed from the learner's own output
(so the hint can quote the learner's numbers, e.g. "your rows sum to 1.5").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

from attnlib.exercises import (
    Mistake,
    Probe,
    _flat_numbers,
    _is_number,
    _scalar,
    check_function,
    check_value,
    decimals_tolerance,
    number_in_string,
    report,
    same,
)

# ----------------------------------------------------------------------------- shared helpers


def numbers_of(answer: Any) -> tuple[float, ...] | None:
    """A prediction as a tuple of floats, or None if it is not numbers.

    Reads what :func:`attnlib.exercises.read_value` reads: Python numbers, NumPy scalars and arrays,
    tensors, ``Fraction``, and lists or tuples of these. A boolean or a string is not a number.
    """
    if answer is None or isinstance(answer, (str, bytes, dict)):
        return None
    value = _scalar(answer)
    if isinstance(value, bool):
        return None
    if _is_number(value):
        return (float(value),)
    flat = _flat_numbers(answer)
    if flat is None or not all(_is_number(v) for v in flat):
        return None
    return tuple(float(v) for v in flat)


def near(got: Sequence[float], want: Sequence[float], tol: float) -> bool:
    """True when two tuples of numbers have the same length and agree to within ``tol`` each."""
    return len(got) == len(want) and all(abs(g - w) <= tol for g, w in zip(got, want))


def check_function_diagnosed(
    name: str, function: Any, inputs: Sequence[tuple], reference: Callable[..., Any],
    diagnose: Callable[[tuple, Any], str | None], *, correct: str = "",
) -> None:
    """:func:`attnlib.exercises.check_function` with the hint written from the learner's own output.

    ``diagnose(args, got)`` receives the first input on which the learner's function disagrees with
    the reference and what it returned there; it returns a hint naming the mistake (quoting numbers
    from ``got``), or None to fall back to the general expected/got hint.
    """
    def hint(got: Any, expected: Any, args: tuple) -> str | None:
        text = diagnose(args, got)
        return text[0].upper() + text[1:] if text else None

    check_function(name, function, inputs, reference, diagnose=hint, correct=correct)


LAYOUTS = {2: ("Tq", "Tk"), 3: ("B", "Tq", "Tk"), 4: ("B", "H", "Tq", "Tk")}
AXIS_NAMES = {"B": "the batch", "H": "the heads", "Tq": "the queries", "Tk": "the keys"}


def normalised_axis(weights: torch.Tensor, atol: float = 1e-4) -> int | None:
    """The axis along which ``weights`` sum to 1 everywhere, counted from the front (None if there is none)."""
    if not weights.is_floating_point() or not weights.isfinite().all():
        return None
    for axis in range(weights.dim()):
        if torch.allclose(weights.sum(dim=axis), torch.ones(()), atol=atol):
            return axis
    return None


def wrong_axis_hint(weights: torch.Tensor) -> str | None:
    """'your rows sum to ...: softmax ran over <axis>' for weights normalised over an axis that is not the keys."""
    layout = LAYOUTS.get(weights.dim())
    axis = normalised_axis(weights)
    if layout is None or axis is None or axis == weights.dim() - 1:
        return None
    sums = weights.sum(dim=-1).flatten()[:3]
    shown = ", ".join(f"{s:.2f}" for s in sums.tolist())
    label = layout[axis]
    return (f"on ({', '.join(layout)}) scores your rows sum to {shown}, ... instead of 1: softmax ran over "
            f"{AXIS_NAMES[label]} ({label} is dim={axis} or dim={axis - weights.dim()} here). "
            "The keys are always the last axis: use dim=-1.")


def _nan_rows(weights: torch.Tensor) -> tuple[int, int]:
    rows = weights.reshape(-1, weights.shape[-1])
    return int((~rows.isfinite()).any(dim=-1).sum()), rows.shape[0]


# ----------------------------------------------------------------------------- exercise 1


def check_key1_column(answer: Any) -> None:
    """Exercise 1 (predict): key 1's column of ``softmax(scores_hand, dim=-2)``, expected (0.5, 0.5).

    Names: the dim=-1 value 0.1065 (normalised over the keys), weights of 0 for scores of 0,
    1/3 (split over the 3 keys instead of the 2 queries), and weights that do not sum to 1.
    """
    name = "Exercise 1"
    if (hint := number_in_string(answer)) is not None:
        report(name, "not yet", hint)
        return
    got = numbers_of(answer)
    expected = (0.5, 0.5)
    mistakes = []
    if got:
        mistakes = [
            Mistake(f"{got[0]:.4g} is key 1's weight with dim=-1, where each query's row is normalised over the "
                    "3 keys. With dim=-2 each column is normalised over the 2 queries: key 1's two equal scores "
                    "share its unit equally.", when=lambda _: near(got, (0.1065, 0.1065), 0.01)),
            Mistake("A score of 0 does not give a weight of 0: e^0 = 1. Key 1's column holds two equal scores "
                    "(0 and 0), and a softmax over the column turns two equal scores into two equal weights.",
                    when=lambda _: near(got, (0.0, 0.0), 0.01)),
            Mistake(f"{got[0]:.4g} splits one unit over the 3 keys; dim=-2 normalises over the queries, and there "
                    "are 2 of them.", when=lambda _: near(got, (1 / 3, 1 / 3), 0.01)),
            Mistake(f"Your column sums to {sum(got):.4g}: with dim=-2 every key's column sums to 1, and key 1's two "
                    "scores are equal.", when=lambda _: len(got) == 2 and abs(sum(got) - 1) > 0.02),
        ]
    check_value(name, torch.tensor(got, dtype=torch.float64) if got else answer,
                torch.tensor(expected, dtype=torch.float64), mistakes, atol=decimals_tolerance(2), rtol=0,
                correct="Two equal scores in a column of 2 share the key's unit: 0.5 each, though neither "
                        "query asked for key 1.")


# ----------------------------------------------------------------------------- exercise 2

ROW = torch.tensor([2.0, 1.0, 0.1, -0.5, 1.5, -1.0])  # the row of section 7


def check_tau_limits(max_at_small_tau: Any, max_at_large_tau: Any) -> None:
    """Exercise 2 (predict): the largest weight of section 7's row at tau = 0.01 and at tau = 100.

    Expected about 1 (one-hot) and about 1/6 (uniform over 6 keys), within 0.01. Names: the two
    swapped, a weight of 0 at large tau, a weight of 0 at small tau, and a weight outside [0, 1].
    """
    name = "Exercise 2"
    if any(a is None or a is Ellipsis for a in (max_at_small_tau, max_at_large_tau)):
        check_value(name, None, None)
        return
    for answer in (max_at_small_tau, max_at_large_tau):
        if (hint := number_in_string(answer)) is not None:
            report(name, "not yet", hint)
            return
    small, large = numbers_of(max_at_small_tau), numbers_of(max_at_large_tau)
    expected = tuple(torch.softmax(ROW / tau, dim=-1).max().item() for tau in (0.01, 100.0))  # about (1.0, 0.169)
    if small is None or large is None or len(small) != 1 or len(large) != 1:
        check_value(name, (max_at_small_tau, max_at_large_tau), expected)  # the general hint
        return
    got = (small[0], large[0])
    mistakes = [
        Mistake("A weight lies between 0 and 1 (the weights of a row are shares of one unit).",
                when=lambda _: not all(0 <= g <= 1 for g in got)),
        Mistake("You swapped them. A small tau divides the scores by a small number: the gaps between them grow "
                "(2 / 0.01 - 1.5 / 0.01 = 50), so the largest score takes all the weight, about 1. A large tau "
                "shrinks every score toward 0, and equal scores give equal weights: about 1/6 for 6 keys.",
                when=lambda _: near(got, (1 / 6, 1.0), 0.02)),
        Mistake(f"At tau = 100 you wrote {got[1]:.4g}: every score / 100 is close to 0, and softmax turns equal "
                "scores into equal weights, not zero ones. With 6 keys each gets about 1/6.",
                when=lambda _: abs(got[1]) < 0.05),
        Mistake(f"At tau = 0.01 you wrote {got[0]:.4g}: dividing by 0.01 stretches the gaps between the scores, so "
                "the largest score wins: its weight goes to 1, the others to 0.", when=lambda _: got[0] < 0.5),
    ]
    check_value(name, torch.tensor(got, dtype=torch.float64), torch.tensor(expected, dtype=torch.float64),
                mistakes, atol=decimals_tolerance(2), rtol=0,
                correct="A tiny tau makes the row one-hot, a huge one makes it uniform; the order never changes.")


# ----------------------------------------------------------------------------- exercise 3


def _scores_inputs() -> list[tuple]:
    g = torch.Generator().manual_seed(2)
    scores_hand = torch.tensor([[2.0, 0.0, 0.0], [0.0, 0.0, 2.0]])  # (Tq, Tk) = (2, 3)
    return [
        (scores_hand,),
        (torch.randn(2, 4, 5, generator=g),),     # (B, Tq, Tk)
        (torch.randn(2, 3, 4, 5, generator=g),),  # (B, H, Tq, Tk)
    ]


def _softmax_keys(scores: torch.Tensor) -> torch.Tensor:
    return torch.softmax(scores, dim=-1)


def check_attention_weights(function: Any) -> None:
    """Exercise 3 (write): ``attention_weights(scores)`` for scores (..., Tq, Tk), any number of leading axes.

    Run on (Tq, Tk), (B, Tq, Tk) and (B, H, Tq, Tk) scores against ``torch.softmax(scores, dim=-1)``.
    Names, quoting the learner's row sums: softmax over the queries (dim=-2, or dim=1 on 3-D), over
    the batch (dim=0, or no dim on 3-D), over the heads (dim=1 on 4-D, or no dim on 4-D).
    """
    def diagnose(args: tuple, got: Any) -> str | None:
        return wrong_axis_hint(got) if isinstance(got, torch.Tensor) else None

    check_function_diagnosed("Exercise 3", function, _scores_inputs(), _softmax_keys, diagnose,
                             correct="Every query's row sums to 1 over the keys, whatever comes in front.")


# ----------------------------------------------------------------------------- exercise 4

BIG = torch.tensor([[1.0, 2.0, 3.0], [100.0, 101.0, 103.0], [-1000.0, -1001.0, -1003.0]])  # 3 rows, Tk = 3


def _wide_row_hint(row: str) -> Callable[[Any, Any, tuple], str | None]:
    """The hint of a probe row with a wide spread: NaN there means the row maximum was not what was subtracted."""
    def hint(got: Any, expected: Any, args: tuple) -> str | None:
        if not isinstance(got, torch.Tensor) or not got.is_floating_point() or bool(got.isfinite().all()):
            return None
        return (f"On the row {row} your weights are NaN, though the rows near 100 and -1000 passed: you subtracted "
                "something other than each row's maximum (its minimum, its mean or its first score?), which leaves "
                "an exponent far above 0, and exp(89) already overflows float32 to inf, so the row is inf / inf. "
                "Subtract x.amax(dim=-1, keepdim=True): every exponent is then at most 0.")
    return hint


def _softmax_inputs() -> list[tuple | Probe]:
    g = torch.Generator().manual_seed(3)
    return [(BIG,),
            Probe((torch.tensor([[0.0, 200.0]]),), "the row [0, 200]", _wide_row_hint("[0, 200]")),
            Probe((torch.tensor([[-1000.0, 0.0, 5.0]]),), "the row [-1000, 0, 5]", _wide_row_hint("[-1000, 0, 5]")),
            (5 * torch.randn(2, 3, 4, 5, generator=g),)]


def _naive(x: torch.Tensor) -> torch.Tensor:
    e = torch.exp(x)
    return e / e.sum(dim=-1, keepdim=True)


def _global_max(x: torch.Tensor) -> torch.Tensor:
    e = torch.exp(x - x.max())
    return e / e.sum(dim=-1, keepdim=True)


def _max_without_keepdim(x: torch.Tensor) -> torch.Tensor:
    e = torch.exp(x - x.amax(dim=-1))
    return e / e.sum(dim=-1, keepdim=True)


def _sum_without_keepdim(x: torch.Tensor) -> torch.Tensor:
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1)


def _same_with_nan(got: Any, wrong: torch.Tensor) -> bool:
    return (isinstance(got, torch.Tensor) and got.shape == wrong.shape
            and bool(torch.allclose(got.double(), wrong.double(), atol=1e-5, equal_nan=True)))


def check_stable_softmax(function: Any) -> None:
    """Exercise 4 (write): ``my_softmax(x)`` over the last axis that does not overflow, without torch.softmax.

    Run on rows of scores around 1, 100 and -1000, then on the probes [0, 200] and [-1000, 0, 5]
    (rows with a wide spread, where subtracting anything but the row maximum overflows), then on
    random (B, H, Tq, Tk) scores. Names: no maximum subtracted (NaN rows, counted), one maximum for
    the whole tensor (x.max()), the row maxima or the row sums taken without keepdim=True, the
    minimum, mean or first score subtracted instead of the maximum, and a softmax over the wrong axis.
    """
    def diagnose(args: tuple, got: Any) -> str | None:
        (x,) = args
        if not isinstance(got, torch.Tensor):
            return None
        bad, rows = _nan_rows(got)
        if _same_with_nan(got, _naive(x)):
            return (f"{bad} of your {rows} rows are NaN (the rows with scores near 100 and -1000): exp(100) overflows "
                    "float32 to inf and exp(-1000) underflows to 0, so the division is inf / inf or 0 / 0. Subtract "
                    "each row's maximum before exp: x - x.amax(dim=-1, keepdim=True).")
        if _same_with_nan(got, _global_max(x)):
            return (f"{bad} of your {rows} rows are NaN: you subtracted one maximum for the whole tensor (103), and "
                    "a row far below it (-1000 - 103) still underflows to 0 / 0. Subtract each row's own maximum: "
                    "x.amax(dim=-1, keepdim=True).")
        if _same_with_nan(got, _max_without_keepdim(x)):
            return ("you subtracted the row maxima without keepdim=True: x.amax(dim=-1) has shape (3,), which "
                    "broadcasts along the keys, so each column got another row's maximum. Use "
                    "x.amax(dim=-1, keepdim=True), shape (3, 1).")
        if _same_with_nan(got, _sum_without_keepdim(x)):
            return ("you divided by the row sums without keepdim=True: e.sum(dim=-1) has shape (3,), which broadcasts "
                    "along the keys, so each column was divided by another row's sum. Use e.sum(dim=-1, keepdim=True).")
        if bad:
            return (f"{bad} of your {rows} rows contain NaN or inf: some exponent overflowed or a row underflowed to "
                    "0 / 0. Subtract each row's maximum before exp, so every exponent is at most 0.")
        return wrong_axis_hint(got)

    check_function_diagnosed("Exercise 4", function, _softmax_inputs(), _softmax_keys, diagnose,
                             correct="Rows near 100 and -1000 come out finite and equal to torch.softmax.")


# ----------------------------------------------------------------------------- exercise 5


def _temperature_inputs() -> list[tuple]:
    g = torch.Generator().manual_seed(4)
    scores_2d = torch.stack([ROW, torch.tensor([-1.0, 0.5, 2.5, 0.0, -2.0, 1.0])])  # (Tq, Tk) = (2, 6)
    return [(scores_2d, 0.5),
            (torch.randn(2, 4, 5, generator=g), 4.0),     # (B, Tq, Tk)
            (torch.randn(2, 3, 4, 5, generator=g), 2.0)]  # (B, H, Tq, Tk)


def _softmax_tau(scores: torch.Tensor, tau: float) -> torch.Tensor:
    return torch.softmax(scores / tau, dim=-1)


def check_temperature_softmax(function: Any) -> None:
    """Exercise 5 (write): ``softmax_with_temperature(scores, tau)``, the weights of scores / tau over the keys.

    Run on scores of the shape the stub promises, (..., Tq, Tk): (Tq, Tk) scores whose first row is
    section 7's row, at tau = 0.5; (B, Tq, Tk) ones at tau = 4; (B, H, Tq, Tk) ones at tau = 2.
    Names, quoting the learner's largest weight or row sums: scores multiplied by tau (sharper where
    it should be flatter), the weights divided by tau after the softmax (rows sum to 1 / tau), tau
    ignored, a softmax over the wrong axis (the queries, the batch or the heads), and weights changed
    after the softmax without normalising them again (e.g. raised to the power 1 / tau).
    """
    def diagnose(args: tuple, got: Any) -> str | None:
        scores, tau = args
        if not isinstance(got, torch.Tensor) or got.shape != scores.shape:
            return None
        expected = _softmax_tau(scores, tau)
        top, want = got.amax(dim=-1).flatten()[0].item(), expected.amax(dim=-1).flatten()[0].item()
        if same(got, torch.softmax(scores * tau, dim=-1)):
            trend = "flatter" if tau < 1 else "sharper"
            return (f"at tau = {tau} your largest weight is {top:.4f}, expected {want:.4f}: you multiplied the scores "
                    f"by tau, so tau = {tau} made the row {trend} instead of the opposite. A temperature divides: "
                    "softmax(scores / tau).")
        if same(got, torch.softmax(scores, dim=-1) / tau):
            return (f"your rows sum to {got.sum(dim=-1).flatten()[0].item():.4g} = 1 / tau: you divided the weights "
                    "after the softmax. Divide the scores before it: softmax(scores / tau).")
        if same(got, torch.softmax(scores, dim=-1)):
            return (f"your weights are the same at tau = {tau} as at tau = 1 (largest {top:.4f}, expected {want:.4f}): "
                    "tau is not used. Divide the scores by it before the softmax.")
        axis = wrong_axis_hint(got)
        if axis is not None:
            return axis
        sums = got.double().sum(dim=-1).flatten()
        if bool(torch.isfinite(sums).all()) and not torch.allclose(sums, torch.ones_like(sums), atol=1e-4):
            if same(got, torch.softmax(scores, dim=-1) ** (1 / tau)):
                how = "you raised the weights to the power 1 / tau after the softmax, and that does not keep the sum"
            else:
                how = "something after the softmax changed the weights without normalising them again"
            return (f"at tau = {tau} your first row sums to {sums[0].item():.4g}, not 1: {how}. softmax(scores / tau) "
                    "is that sharpening done right: e^(s / tau) normalised over the keys.")
        return None

    check_function_diagnosed("Exercise 5", function, _temperature_inputs(), _softmax_tau, diagnose,
                             correct="Below 1 sharper, above 1 flatter, the order of the keys unchanged.")


__all__ = [
    "check_attention_weights", "check_function_diagnosed", "check_key1_column", "check_stable_softmax",
    "check_tau_limits", "check_temperature_softmax", "near", "normalised_axis", "numbers_of", "wrong_axis_hint",
]

