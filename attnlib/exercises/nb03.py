"""Checkers for notebook 03 (why divide by sqrt(d_k)): one per exercise, each naming the classic mistake.

The helpers :func:`~attnlib.exercises.nb02.numbers_of` and
:func:`~attnlib.exercises.nb02.check_function_diagnosed` come from notebook 02's module.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from attnlib.exercises import Mistake, check_value, decimals_tolerance, number_in_string, report
from attnlib.exercises.nb02 import check_function_diagnosed, numbers_of


def _one_number(answer: Any) -> float | None:
    got = numbers_of(answer)
    return got[0] if got is not None and len(got) == 1 else None


def _check_number(name: str, answer: Any, expected: float, mistakes: list[tuple[float, float, str]], *,
                  tol: float, correct: str) -> None:
    """check_value for one predicted number; each mistake is (wrong value, its tolerance, hint)."""
    if (hint := number_in_string(answer)) is not None:
        report(name, "not yet", hint)
        return
    got = _one_number(answer)
    named = [Mistake(hint, when=lambda _a, w=wrong, t=t: got is not None and abs(got - w) <= t)
             for wrong, t, hint in mistakes]
    check_value(name, got if got is not None else answer, expected, named, atol=tol, rtol=0, correct=correct)


# ----------------------------------------------------------------------------- exercise 1


def check_variance_prediction(answer: Any) -> None:
    """Exercise 1 (predict): Var(q · k) for independent entries of mean 0 and variance 1 at d_k = 8; expected 8.

    Names: sqrt(8) (the standard deviation), 64 = 8² (variances multiplied instead of added),
    1 (the variance of one product, or of the scaled score), 0 (the mean).
    """
    _check_number("Exercise 1", answer, 8.0, [
        (math.sqrt(8), 0.02, "2.83 is sqrt(8), the standard deviation of q · k. The variance is its square: "
                             "the 8 products of variance 1 add up to 8."),
        (64.0, 0.5, "64 = 8²: the variances of independent terms add, they do not multiply. q · k is a sum of "
                    "8 products q_i k_i, each of variance 1."),
        (1.0, 0.02, "1 is the variance of one product q_i k_i (or of the score after dividing by sqrt(d_k)). "
                    "The unscaled score adds 8 of them, and variances of independent terms add."),
        (0.0, 0.02, "0 is the mean of q · k. The variance is the mean of its square: the 8 products of "
                    "variance 1 add up."),
    ], tol=0.05, correct="Var(q · k) = d_k: 8 independent products of variance 1 add up to 8.")


# ----------------------------------------------------------------------------- exercise 2

SOURCE_UNSCALED = 4.089120011404893  # the variance of q @ k.T the IIITH notebook printed, d_k = 6
SOURCE_SCALED = SOURCE_UNSCALED / 6


def check_iiith_scaled(answer: Any) -> None:
    """Exercise 2 (predict): the variance the IIITH notebook printed after dividing its scores by sqrt(6).

    Its unscaled variance was 4.09 at d_k = 6, so the answer is 4.09 / 6 = 0.68 (within 0.01). Names:
    4.09 / sqrt(6) (the variance divided by the divisor, not its square), 1 (the theory's value
    instead of this draw's), 4.09 (unchanged), 4.09 / 36 (divided twice).
    """
    _check_number("Exercise 2", answer, round(SOURCE_SCALED, 4), [
        (SOURCE_UNSCALED / math.sqrt(6), 0.01,
         "1.67 = 4.09 / sqrt(6): dividing a variable by c divides its variance by c², so dividing the scores "
         "by sqrt(6) divides their variance by 6."),
        (1.0, 0.01, "1 is what the theory gives on average, but this draw's unscaled variance was 4.09, not 6, "
                    "and dividing by sqrt(6) divides that measured variance by 6."),
        (SOURCE_UNSCALED, 0.01, "4.09 is the variance before the scaling; dividing the scores by sqrt(6) "
                                "divides their variance by 6."),
        (SOURCE_UNSCALED / 36, 0.005, "0.11 = 4.09 / 36 divides the variance by 6² = d_k²: that is dividing the "
                                      "scores by d_k. Dividing them by sqrt(6) divides the variance by 6."),
    ], tol=decimals_tolerance(2),
        correct="4.09 / 6 = 0.68: dividing the scores by sqrt(d_k) divides their variance by exactly d_k.")


# ----------------------------------------------------------------------------- exercise 3

MEASURED_TOP_WEIGHT = 0.9583  # section 3: mean largest weight of unscaled rows, d_k = 1024, 16 keys


def check_top_weight_prediction(answer: Any) -> None:
    """Exercise 3 (predict): the mean largest weight of an unscaled row of 16 keys at d_k = 1024.

    Correct: between about 0.9 and 1 (the measured 0.958, within 0.06). Names: about 1/16 (uniform,
    what tiny scores would give), about 0.24 (the scaled rows' value), a number outside [0, 1].
    """
    got = _one_number(answer)
    outside = got is not None and not 0 <= got <= 1
    _check_number("Exercise 3", answer, MEASURED_TOP_WEIGHT, [
        (1 / 16, 0.04, f"{got if got is not None else 0:.4g} is about 1/16, a uniform row: what scores near 0 (a "
                       "huge temperature) give. Unscaled scores at d_k = 1024 have a standard deviation of 32: like "
                       "a tiny temperature, so the largest key takes almost everything."),
        (0.24, 0.09, f"{got if got is not None else 0:.4g} is about what the scaled rows keep at every width "
                     "(and what d_k = 1 gives). Without the scale the scores' spread grows as sqrt(d_k), and the "
                     "rows harden toward one-hot."),
        (got if outside else math.nan, 0.0, "A weight lies between 0 and 1: a row's weights are shares of one unit."),
    ], tol=0.06, correct="Without the scale the rows are nearly one-hot at d_k = 1024.")


# ----------------------------------------------------------------------------- exercise 4

QUERY_VARIANCE, KEY_VARIANCE, WIDTH = 4.0, 1.0, 64  # Exercise 4: queries of variance 4, keys of variance 1


def check_scaled_variance(answer: Any) -> None:
    """Exercise 4 (predict): Var(q · k / sqrt(d_k)) at d_k = 64 for query entries of variance 4, key entries of 1.

    Each product q_i k_i has variance 4 · 1 = 4, the 64 of them add up to 256, and dividing the scores
    by sqrt(64) = 8 divides the variance by 64: 4 (one decimal). Names: 1 (the unit-variance answer:
    the scale removes the growth with d_k, not the level), 256 (before the scale), 2 (the standard
    deviation), 32 (the variance divided by sqrt(d_k) instead of d_k), 0.0625 (divided by d_k once
    too often), 5 (the two variances added instead of multiplied), 16 (the query's variance squared).
    """
    expected = QUERY_VARIANCE * KEY_VARIANCE * WIDTH / WIDTH
    _check_number("Exercise 4", answer, expected, [
        (1.0, 0.1, "1 is what entries of variance 1 give. The scale removes the growth with d_k, not the level: "
                   "here each product q_i k_i has variance 4 · 1 = 4, so the scaled scores keep variance 4."),
        (256.0, 0.5, "256 = 64 · 4 is the variance of q · k before the scale. Dividing the scores by sqrt(64) = 8 "
                     "divides their variance by 8² = 64."),
        (2.0, 0.1, "2 is the standard deviation of the scaled scores; the variance is its square, 4."),
        (32.0, 0.1, "32 = 256 / 8 divides the variance by sqrt(d_k). Dividing the scores by c divides their "
                    "variance by c²: 256 / 64."),
        (0.0625, 0.01, "0.0625 = 4 / 64 divides by d_k once too often: the 64 products of variance 4 add up to "
                       "256, and the scale divides that by 64."),
        (5.0, 0.1, "5 = 4 + 1 adds the two variances. For a product of independent mean-0 entries they "
                   "multiply: Var(q_i k_i) = 4 · 1 = 4; then the 64 products add and the scale divides by 64."),
        (16.0, 0.1, "16 squares the query's variance. For independent mean-0 entries Var(q_i k_i) = "
                    "Var(q_i) Var(k_i) = 4 · 1 = 4."),
    ], tol=decimals_tolerance(1), correct="Var(q_i k_i) = 4 · 1, 64 of them add to 256, and / sqrt(64) divides "
                                          "the variance by 64: the scale fixes the growth, the level stays 4.")


# ----------------------------------------------------------------------------- exercise 5

B, H, TQ, TK, DH = 3, 2, 4, 5, 16  # E = H * DH = 32


def _qk_inputs() -> list[tuple]:
    g = torch.Generator().manual_seed(6)
    return [
        (torch.randn(B, H, TQ, DH, generator=g), torch.randn(B, H, TK, DH, generator=g)),  # per-head q, k
        (torch.randn(TQ, 9, generator=g), torch.randn(TK, 9, generator=g)),                # (Tq, d_k), (Tk, d_k)
    ]


def _scaled_scores(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])


def check_scaled_scores(function: Any) -> None:
    """Exercise 5 (write): ``scaled_scores(q, k)``, q (..., Tq, d_k) and k (..., Tk, d_k) -> (..., Tq, Tk).

    Run on per-head queries and keys (B, H, Tq, Dh) with E = H * Dh, then on 2-D ones. The hint reads
    the number the learner divided by off their scores and names it: 1 (no scaling), d_k (instead of
    sqrt(d_k)), sqrt(E) = sqrt(H * Dh) (the model width instead of the head's), sqrt(Tq) or sqrt(Tk)
    (the length axis, shape[-2]), 1 / sqrt(d_k) (multiplied instead of divided); and a wrong shape.
    """
    def diagnose(args: tuple, got: Any) -> str | None:
        q, k = args
        expected = _scaled_scores(q, k)
        if not isinstance(got, torch.Tensor) or not got.is_floating_point():
            return None
        if got.shape != expected.shape:
            return (f"your scores have shape {tuple(got.shape)}, expected {tuple(expected.shape)} = (..., Tq, Tk), "
                    "a row per query and a column per key: q @ k.transpose(-2, -1) swaps only the last two axes of k.")
        unscaled = q @ k.transpose(-2, -1)
        ratios = unscaled / got
        divisor = ratios.median().item()
        if not torch.allclose(ratios, torch.full_like(ratios, divisor), rtol=1e-3):
            return None
        d_k = q.shape[-1]
        names = {1.0: "no scaling at all: the scores' variance grows with d_k",
                 float(d_k): f"d_k = {d_k} instead of sqrt(d_k): that shrinks the variance to 1/d_k and flattens "
                             "the weights",
                 1 / math.sqrt(d_k): f"1 / sqrt(d_k): you multiplied by sqrt({d_k}) instead of dividing",
                 math.sqrt(q.shape[-2]): f"sqrt({q.shape[-2]}) = sqrt(Tq): q.shape[-2] is the number of queries, "
                                         "the width is q.shape[-1]",
                 math.sqrt(k.shape[-2]): f"sqrt({k.shape[-2]}) = sqrt(Tk): k.shape[-2] is the number of keys, "
                                         "the width is k.shape[-1]"}
        if q.dim() == 4:
            e = q.shape[1] * d_k
            names[math.sqrt(e)] = (f"sqrt({e}) = sqrt(E), the model's width H * Dh: each head's queries and keys "
                                   f"are Dh = {d_k} wide, so its d_k is {d_k}")
        for value, why in names.items():
            if math.isclose(divisor, value, rel_tol=1e-3):
                return (f"on q {tuple(q.shape)} your scores are q @ k^T divided by {divisor:.4g}, which is {why}. "
                        f"Divide by sqrt(q.shape[-1]) = {math.sqrt(d_k):.4g}.")
        return (f"on q {tuple(q.shape)} your scores are q @ k^T divided by {divisor:.4g}; divide by "
                f"sqrt(q.shape[-1]) = sqrt({d_k}) = {math.sqrt(d_k):.4g}.")

    check_function_diagnosed("Exercise 5", function, _qk_inputs(), _scaled_scores, diagnose,
                             correct="Divided by sqrt of the width the dot products run over, per head.")


__all__ = ["check_iiith_scaled", "check_scaled_scores", "check_scaled_variance", "check_top_weight_prediction",
           "check_variance_prediction"]
