"""Exercises of notebook 03 (why divide by sqrt(d_k)), declared as data.

No hint states the expected value: a hint names the mistake, or says in which direction the answer is off."""

from __future__ import annotations

import math
import re
from typing import Any

import torch

from . import Exercise, Mistake, Probe, as_number, direction, variant

__all__ = ["check_scaled_scores", "check_scaled_variance", "check_top_weight_prediction", "check_variance_prediction"]


# --- Exercise 1: Var(q . k) over all 2**8 patterns of +-1 entries at d_k = 8 -------------------------

check_variance_prediction = Exercise(
    "Exercise 1", expected=8, decimals=1, read=as_number,
    correct="Var(q · k) = d_k: the variances of the d_k independent products add up.",
    mistakes=[Mistake(hint, answer=answer) for answer, hint in [
        (math.sqrt(8), "{got} is sqrt(d_k), the standard deviation of q · k. The variance asked for is its square."),
        (64, "{got} = d_k²: the variances of independent terms add, they do not multiply."),
        (1, "{got} is the variance of one product q_i k_i: the score adds d_k independent ones, whose variances add."),
        (0, "{got} is the mean of q · k. The variance is the mean of its square."),
        (32, "{got} = d_k²/2 fits d_k = 2, but a variance that grows as the square would need the products to "
             "move together. They are independent, so their variances add."),
        (256, "{got} = 2**8 is the number of patterns, not the variance of their scores."),
        (2, "{got} is the variance at d_k = 2, the section's worked case (and at d_k = 8 that of the number of "
            "agreements, not of the score). At d_k = 8 the score adds eight independent ±1 products: how does "
            "each one add to the variance?"),
    ]],
    diagnose=direction("{got} is lower than the patterns give: each of the 8 products has variance 1.",
                       "{got} is higher than the patterns give: each of the 8 products has variance 1."))


# --- Exercise 2: Var(q . k / sqrt(64)) when Var(q_i) = 4 and Var(k_i) = 1 ------------------------------

_LAW = "work out Var(q_i k_i) from the two given variances, then what adding 64 such terms and the scale each do to it."

check_scaled_variance = Exercise(
    "Exercise 2", expected=4.0, decimals=1, read=as_number,
    correct="Var(q_i k_i) = 4 · 1, 64 of them add up, and the scale divides by 64: it removes the growth "
            "with d_k, not the level.",
    mistakes=[Mistake(hint, answer=answer) for answer, hint in [
        (1, "{got} is what entries of variance 1 give. The scale removes the growth with d_k, not the level the "
            "scores start from: work out Var(q_i k_i) for these entries first."),
        (256, "{got} is Var(q · k) unscaled: dividing scores by sqrt(64) divides their variance by its square."),
        (2, "{got} is a standard deviation. The question asks for the variance, its square."),
        (32, "{got} divides the variance by sqrt(d_k). Dividing a number by c divides its variance by c²."),
        (4 / 64, "{got} divides by d_k once too often: the 64 products add up first, then the scale divides."),
        (5, "{got} adds the two variances. For a product of independent mean-0 entries they multiply: "
            "Var(q_i k_i) = Var(q_i) · Var(k_i)."),
        (16, "{got} squares the query's variance. Var(q_i k_i) = Var(q_i) · Var(k_i), and Var(q_i) is given, "
             "not its standard deviation."),
    ]],
    diagnose=direction("{got} is too low: " + _LAW, "{got} is too high: " + _LAW))


# --- Exercise 3: above or below 0.9, the mean largest weight of an unscaled row at d_k = 1024, and why ------


def _word(answer: Any) -> str | None:
    """A side or a reason letter, however written ("Above", " b. ", "(B)"); None for anything but a string."""
    return re.sub(r"[^a-z]", "", answer.lower()) if isinstance(answer, str) else None


check_top_weight_prediction = Exercise(
    "Exercise 3", expected={"my_side": "above", "my_reason": "b"}, answers=("my_side", "my_reason"), read=_word,
    unreadable='Write my_side as "above" or "below" and my_reason as one letter from "a" to "d"; got {got}.',
    correct="Without the scale the scores' spread grows as sqrt(d_k), 32 at d_k = 1024, and with it the gaps "
            "that softmax turns into near certainty: the rows are nearly one-hot.",
    mistakes=[
        Mistake('Write my_side as "above" or "below" and my_reason as one letter from "a" to "d".',
                when=lambda got: got["my_side"] not in ("above", "below") or got["my_reason"] not in tuple("abcd"),
                example={"my_side": "higher", "my_reason": "e"}),
        Mistake("Reason a: the differences grow too. Two independent scores each of variance d_k differ by a "
                "number of variance 2 d_k, so the gaps widen as sqrt(d_k), like the scores.",
                when=lambda got: got["my_reason"] == "a", example={"my_side": "below", "my_reason": "a"}),
        Mistake("Reason c: which key wins is random, but the winner takes its weight whichever key it is. The mean "
                "weight of a key is always 1/16; the mean of each row's largest weight is another number.",
                when=lambda got: got["my_reason"] == "c", example={"my_side": "below", "my_reason": "c"}),
        Mistake("Reason d: nothing overflows. Softmax subtracts the row's largest score first (notebook 02), and "
                "exp(32) fits even in float32: no weight is rounded.",
                when=lambda got: got["my_reason"] == "d", example={"my_side": "above", "my_reason": "d"}),
        Mistake("Your reason is right; follow it through. Gaps of tens of units, and softmax near certain at a gap of "
                "a few: what does that make of a row's largest weight?", answer={"my_side": "below", "my_reason": "b"}),
    ])


# --- Exercise 4: scaled_scores(q, k) for any number of leading axes ---------------------------------------


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
    if not isinstance(got, torch.Tensor) or got.shape != expected.shape:
        return None
    ratios = (q.double() @ k.double().transpose(-2, -1)) / got.double()
    divisor = ratios.median().item()
    if not torch.allclose(ratios, torch.full_like(ratios, divisor), rtol=1e-3):
        return None
    return (f"On q {tuple(q.shape)} your scores are q @ k^T divided by {divisor:.4g}, a number that does not "
            "follow this input's width: read d_k from the shape of q itself, not from a notebook variable.")


check_scaled_scores = Exercise(
    "Exercise 4", reference=scaled_scores, probes=_qk_probes, diagnose=_which_divisor,
    correct="Divided by the square root of the width the dot products run over: Dh, for one head's scores.",
    mistakes=[
        *[Mistake(f"Your {text}", answer=variant(scaled_scores, divisor=divisor)) for text, divisor in [
            ("scores are not scaled: their variance grows with the width d_k, and the exercise asks for the scale "
             "that keeps it the same at every width.", lambda q, k: 1.0),
            ("scores are divided by d_k itself, not by its square root: that shrinks their variance to 1/d_k, a "
             "temperature that flattens the weights as d_k grows.", lambda q, k: q.shape[-1]),
            ("scores are multiplied by sqrt(d_k) instead of divided by it.", lambda q, k: q.shape[-1] ** -0.5),
            ("per-head scores are divided by sqrt(E), the model's width H * Dh. Each head's queries and keys are "
             "Dh wide, so its d_k is Dh, the last axis.",
             lambda q, k: math.sqrt(q.shape[-1] * (q.shape[1] if q.dim() == 4 else 1))),
            ("scores are divided by sqrt(q.shape[1]): for per-head queries (B, H, Tq, Dh) that axis counts the "
             "heads. The width is the last axis, q.shape[-1].", lambda q, k: math.sqrt(q.shape[1])),
            ("scores are divided by the square root of the number of queries, q.shape[-2]. The width the dot "
             "products run over is q.shape[-1].", lambda q, k: math.sqrt(q.shape[-2])),
            ("scores are divided by the square root of the number of keys, k.shape[-2]. The width the dot "
             "products run over is q.shape[-1].", lambda q, k: math.sqrt(k.shape[-2])),
            ("scale is a whole number: math.isqrt or int(math.sqrt(...)) cuts sqrt(d_k) down to an integer, "
             "exact only when d_k is a perfect square (not on a probe with d_k = 10).",
             lambda q, k: math.isqrt(q.shape[-1]))]],
        Mistake("Your rows sum to 1: you applied softmax. The exercise asks for the scores before the softmax: q @ k^T "
                "divided by the scale.", example=lambda q, k: torch.softmax(scaled_scores(q, k), dim=-1),
                when=lambda got: bool((got >= 0).all()) and torch.allclose(got.sum(-1), torch.ones(()))),
        Mistake("Your scores are (..., Tk, Tq), a row per key: the product is in the wrong order. Scores have a row "
                "per query and a column per key.", answer=lambda q, k: scaled_scores(k, q)),
        Mistake("Your function raised on batched queries and keys: something in it takes matrices only (k.T "
                "reverses every axis of a batched tensor, transpose(0, 1) counts axes from the front, k.t() and "
                "torch.mm refuse them). Swap only the two axes of k that a matrix has, counted from the back, and use "
                "a product that keeps the leading axes.", raises=(RuntimeError, ValueError),
                when=lambda err, args: args[0].dim() > 2,
                example=lambda q, k: q @ k.T / math.sqrt(q.shape[-1]) if q.dim() == 2 else torch.mm(q, k)),
        Mistake("Your function raised on plain matrices q (Tq, d_k), k (Tk, d_k): something in it assumes a batch "
                "axis (transpose(1, 2) counts axes from the front, torch.bmm takes 3-D tensors only). Swap the two "
                "axes of k counted from the back, with a product that takes any number of leading axes.",
                raises=(RuntimeError, IndexError), match="out of range|3D tensor|3-D",
                when=lambda err, args: args[0].dim() == 2, example=lambda q, k: q @ k.transpose(1, 2)),
    ])
