"""Exercises of notebook 03 (why divide by sqrt(d_k)): no hint states the expected value, or by how much it is off."""

from __future__ import annotations

import math
import re

import torch

from . import Exercise, Mistake, Probe, as_number, direction, variant

__all__ = ["check_scaled_scores", "check_scaled_variance", "check_top_weight_prediction", "check_variance_prediction"]


check_variance_prediction = Exercise(
    "Exercise 1", expected=8, decimals=1, read=as_number,
    correct="Var(q · k) = d_k: the variances of the d_k independent products add up.",
    mistakes=[Mistake(hint, answer) for answer, hint in [
        (math.sqrt(8), "{got} is sqrt(d_k), the standard deviation of q · k; the variance is its square."),
        (64, "{got} = d_k²: the variances of independent terms add, they do not multiply."),
        (32, "{got} = d_k²/2 fits d_k = 2 only: the products are independent, so their variances add."),
    ]],
    diagnose=direction("{got} is lower than the patterns give: each of the 8 products has variance 1.",
                       "{got} is higher than the patterns give: each of the 8 products has variance 1."))


_LAW = "work out Var(q_i k_i) from the two given variances, then what adding 64 such terms and the scale each do to it."

check_scaled_variance = Exercise(
    "Exercise 2", expected=4.0, decimals=1, read=as_number,
    correct="Var(q_i k_i) = 4 · 1, 64 of them add up, and the scale divides by 64: it removes the growth "
            "with d_k, not the level.",
    mistakes=[Mistake(hint, answer) for answer, hint in [
        (1, "{got} is what entries of variance 1 give: the scale removes the growth with d_k, not the level."),
        (256, "{got} is Var(q · k) unscaled: dividing scores by sqrt(64) divides their variance by its square."),
        (2, "{got} is a standard deviation; the question asks for the variance, its square."),
        (32, "{got} divides the variance by sqrt(d_k); dividing a number by c divides its variance by c²."),
    ]],
    diagnose=direction("{got} is too low: " + _LAW, "{got} is too high: " + _LAW))


_ASK = 'Write my_side as "above" or "below" and my_reason as one letter from "a" to "d"'

check_top_weight_prediction = Exercise(
    "Exercise 3", expected={"my_side": "above", "my_reason": "b"}, answers=("my_side", "my_reason"),
    read=lambda answer: re.sub(r"[^a-z]", "", answer.lower()) if isinstance(answer, str) else None,  # " (B). "
    unreadable=_ASK + "; got {got}.",
    correct="Without the scale the scores' spread grows as sqrt(d_k), 32 at d_k = 1024, and with it the gaps "
            "that softmax turns into near certainty: the rows are nearly one-hot.",
    mistakes=[
        Mistake(_ASK + ".", example={"my_side": "higher", "my_reason": "e"},
                when=lambda got: got["my_side"] not in ("above", "below") or got["my_reason"] not in tuple("abcd")),
        *[Mistake(f"Reason {reason}: {hint}", when=lambda got, reason=reason: got["my_reason"] == reason,
                  example={"my_side": side, "my_reason": reason}) for reason, side, hint in [
            ("a", "below", "the differences grow too: two independent scores of variance d_k differ by a number of "
                           "variance 2 d_k."),
            ("c", "below", "the winner takes its weight whichever key it is; 1/16 is the mean weight of a key, not "
                           "of each row's largest."),
            ("d", "above", "nothing overflows: softmax subtracts the row's largest score first (notebook 02), and "
                           "exp(32) fits in float32."),
        ]],
    ])


def scaled_scores(q: torch.Tensor, k: torch.Tensor, *, divisor=None) -> torch.Tensor:
    """(..., Tq, d_k), (..., Tk, d_k) -> (..., Tq, Tk); ``divisor(q, k)`` instead of sqrt(d_k) makes one mistake."""
    return q @ k.transpose(-2, -1) / (math.sqrt(q.shape[-1]) if divisor is None else divisor(q, k))


def _qk_probes() -> list[Probe]:
    g = torch.Generator().manual_seed(6)
    return [Probe(tuple(torch.randn(*shape, generator=g, dtype=dtype) for shape in shapes), label)
            for *shapes, label, dtype in [
        ((4, 9), (6, 9), "q (4, 9), k (6, 9)", torch.float32),
        ((3, 2, 4, 16), (3, 2, 5, 16), "per-head q (B, H, Tq, Dh) = (3, 2, 4, 16), 5 keys", torch.float32),
        ((2, 4, 3, 4), (2, 4, 7, 4), "per-head q (B, H, Tq, Dh) = (2, 4, 3, 4), 7 keys", torch.float32),
        ((5, 2, 25), (5, 3, 25), "q (B, Tq, d_k) = (5, 2, 25), 3 keys", torch.float32),
        ((2, 3, 10), (2, 4, 10), "q (B, Tq, d_k) = (2, 3, 10), 4 keys: d_k = 10 is not a square", torch.float32),
        ((1, 2, 5, 12), (1, 2, 8, 12), "per-head q (1, 2, 5, 12) in float64, 8 keys", torch.float64)]]


def _which_divisor(got: torch.Tensor, expected: torch.Tensor, args: tuple) -> str | None:
    """Names the number the scores were divided by, when they are q @ k^T divided by one constant."""
    q, k = args
    if got.shape == expected.shape:
        ratios = (q.double() @ k.double().transpose(-2, -1)) / got.double()
        if torch.allclose(ratios, torch.full_like(ratios, divisor := ratios.median().item()), rtol=1e-3):
            lengths = {math.sqrt(k.shape[-2]): "sqrt(Tk), the number of keys", math.sqrt(q.shape[-2]): "sqrt(Tq), "
                       "the number of queries"}  # a length, not the width the dot products run over
            length = next((text for n, text in lengths.items() if math.isclose(divisor, n, rel_tol=1e-3)), None)
            return (f"On q {tuple(q.shape)} your scores are q @ k^T divided by {divisor:.4g}, " + (
                f"{length}: d_k is the width, the last axis of q." if length else "a number that does not follow "
                "this input's width: read d_k from the shape of q itself, not from a notebook variable."))
    return None


check_scaled_scores = Exercise(
    "Exercise 4", reference=scaled_scores, probes=_qk_probes, diagnose=_which_divisor,
    correct="Divided by the square root of the width the dot products run over: Dh, for one head's scores.",
    mistakes=[
        *[Mistake(f"Your {text}", variant(scaled_scores, divisor=divisor)) for text, divisor in [
            ("scores are not scaled: their variance grows with d_k, and the exercise asks for a scale that keeps it "
             "the same at every width.", lambda q, k: 1.0),
            ("scores are divided by d_k itself, not by its square root: that shrinks their variance to 1/d_k and "
             "flattens the weights as d_k grows.", lambda q, k: q.shape[-1]),
            ("per-head scores are divided by sqrt(E), the model's width H * Dh; a head's d_k is Dh, the last axis.",
             lambda q, k: math.sqrt(q.shape[-1] * (q.shape[1] if q.dim() == 4 else 1)))]],
        Mistake("Your rows sum to 1: you applied softmax; the exercise asks for the scaled scores before it.",
                example=lambda q, k: torch.softmax(scaled_scores(q, k), dim=-1),
                when=lambda got: bool((got >= 0).all()) and torch.allclose(got.sum(-1), torch.ones(()))),
        Mistake("Your scores are (..., Tk, Tq), a row per key: the product is in the wrong order.",
                lambda q, k: scaled_scores(k, q)),
        Mistake("Your function raised on batched inputs: something in it takes matrices only (k.T reverses every "
                "axis, transpose(0, 1) counts axes from the front, k.t() and torch.mm refuse them): swap only the "
                "last two axes of k.", raises=(RuntimeError, ValueError), when=lambda err, args: args[0].dim() > 2,
                example=lambda q, k: q @ k.T / math.sqrt(q.shape[-1]) if q.dim() == 2 else torch.mm(q, k)),
    ])
