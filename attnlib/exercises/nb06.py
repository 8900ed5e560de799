"""Checkers for the exercises of notebook 06 (additive attention).

Four exercises, from predicting a shape to writing the masked weights:

- :func:`check_features_shape`: the shape of tanh(W_q q + W_k k) over every (query, key) pair, for
  the notebook's B = 2, Tq = 3, Tk = 4, Dq = 5, Dk = 7, h = 6.
- :func:`check_largest_weight`: the largest additive weight when the queries are scaled by 1000
  (5 queries, 7 keys): the weights flatten to uniform, 1/7, unlike dot-product weights.
- :func:`check_pair_scores`: the additive scores of every pair with broadcasting, the weights given
  as plain tensors W_q (h, Dq), W_k (h, Dk), w_v (h,).
- :func:`check_masked_weights`: the weights of (B, Tq, Tk) scores with the keys at or past each
  example's valid length masked out.

Each prints one line (see :mod:`attnlib.exercises`) and names the mistakes this notebook is about:
queries and keys added elementwise instead of pair by pair (no ``unsqueeze``), the two new axes
swapped, ``tanh`` applied after ``w_v`` or not at all, the additive weights expected to become
one-hot like dot-product weights, a forgotten mask (padded keys get weight), a mask of the wrong
polarity, one key too many (``<=``), a mask without its query axis, padded scores filled with 0,
and a softmax over the wrong axis. The framework's hints are fixed strings; the function checkers
here run the learner's function once on the first input beforehand, so that their hints can quote
numbers from the learner's own output (:func:`_first_output`, a helper of this module).

None of the checkers draws from torch's global random generator (their inputs come from a seeded
``torch.Generator``), so a check cell does not change any later random draw of the notebook.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from . import Mistake, check_function, check_value, number_in_string, read_value, report
from . import shape_of as _shape_of

__all__ = ["check_features_shape", "check_largest_weight", "check_masked_weights", "check_pair_scores"]

# The sizes of section 1 of the notebook.
B, TQ, TK, DQ, DK, H = 2, 3, 4, 5, 7, 6
# Section 4: 5 queries, 7 keys.
SCALED_QUERIES, SCALED_KEYS = 5, 7


# ---------------------------------------------------------------------------------------------
# Helpers


def _number(answer: Any) -> float | None:
    """The answer as a float, or None when it holds no single number (a 0-d tensor, NumPy number, Fraction)."""
    value = read_value(answer, 0.0)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def _first_output(function: Any, inputs: Sequence[tuple]) -> torch.Tensor | None:
    """The learner's function on (copies of) the first input, or None if it is a stub, raises or returns no tensor."""
    if function is None or function is Ellipsis or not callable(function):
        return None
    try:
        got = function(*(a.clone() if isinstance(a, torch.Tensor) else a for a in inputs[0]))
    except Exception:  # check_function reports the exception itself
        return None
    return got.detach() if isinstance(got, torch.Tensor) else None


def _generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


# ---------------------------------------------------------------------------------------------
# Exercise 1: predict the shape of the features


def check_features_shape(answer: Any) -> None:
    """Exercise 1: the shape of tanh(W_q q + W_k k) over every pair, (B, Tq, Tk, h) = (2, 3, 4, 6).

    Names: the scores' shape (2, 3, 4) (w_v has not reduced h yet) and (2, 3, 4, 1) (w_v applied,
    not squeezed); the key axis before the query axis (2, 4, 3, 6); a last axis of Dq = 5, Dk = 7
    or Dq + Dk = 12 instead of h (both sides are projected to h, then added, not concatenated); one
    side's projection (2, 3, 6) or (2, 4, 6) (no axis for the other side: not every pair); an
    unsqueezed operand (2, 3, 1, 6) or (2, 1, 4, 6); a shape without the batch axis (3, 4, 6).
    """
    shape = _shape_of(answer)
    side = "query" if shape and len(shape) > 1 and shape[1] == TQ else "key"
    mistakes = [
        Mistake("(2, 3, 4) is the shape of the scores, after w_v has reduced the hidden units. The tanh "
                "features still hold one h-vector per pair: add the axis h = 6 at the end.", answer=(B, TQ, TK)),
        Mistake("(2, 3, 4, 1) is w_v's output before squeeze(-1). The features come before w_v: their last "
                "axis is the hidden width h = 6.", answer=(B, TQ, TK, 1)),
        Mistake("the queries' axis comes before the keys': the queries get the new axis at 2 and the keys at 1, "
                "so the sum is (B, Tq, Tk, h) = (2, 3, 4, 6), one row per query as for the scores.",
                answer=(B, TK, TQ, H)),
        Mistake(f"your last axis is {shape[-1] if shape else '?'}, a width of the inputs. W_q and W_k project "
                "the query (Dq = 5) and the key (Dk = 7) to the same hidden width h = 6, and the two are added, "
                "not concatenated: the last axis is h.",
                when=lambda a: len(a) == 4 and tuple(a[:3]) == (B, TQ, TK) and a[3] in (DQ, DK, DQ + DK)),
        Mistake(f"{shape} is the shape of one side's projection, one h-vector per {side}. The sum has one "
                "h-vector for every (query, key) pair: an axis for the queries (Tq = 3) and one for the keys (Tk = 4).",
                when=lambda a: tuple(a) in ((B, TQ, H), (B, TK, H))),
        Mistake(f"{shape} is one of the two operands after unsqueeze. Their axes of size 1 broadcast against "
                "each other's Tq = 3 and Tk = 4, so the sum is larger than either.",
                when=lambda a: tuple(a) in ((B, TQ, 1, H), (B, 1, TK, H))),
        Mistake("you left out the batch axis: every example of the batch (B = 2) has its own pairs, so the "
                "features are (B, Tq, Tk, h).", when=lambda a: tuple(a) == (TQ, TK, H)),
    ]
    check_value("Exercise 1", answer, (B, TQ, TK, H), mistakes,
                correct="(B, Tq, Tk, h) = (2, 3, 4, 6): one hidden vector of h = 6 numbers for each of the "
                        "2 x 3 x 4 (query, key) pairs.")


# ---------------------------------------------------------------------------------------------
# Exercise 2: predict the largest weight when the queries grow


def check_largest_weight(answer: Any) -> None:
    """Exercise 2: the largest additive weight with queries x 1000, 5 queries and 7 keys: 1/7 (uniform).

    Accepts 1/7 = 0.143 to within 0.003 (a prediction written to 2 or 3 decimals). Names: a weight of
    about 1 (one-hot, which is what dot-product weights do: additive scores are bounded and flatten);
    1/5 (uniform over the 5 queries instead of the 7 keys); a number below 1/7 (the 7 weights of a
    query sum to 1, so the largest is at least 1/7); a number outside [0, 1].
    """
    if (hint := number_in_string(answer)) is not None:
        report("Exercise 2", "not yet", hint)
        return
    value = _number(answer)
    uniform = 1 / SCALED_KEYS
    shown = f"{value:.3g}" if value is not None else repr(answer)
    mistakes = [
        Mistake(f"a weight of {shown} is impossible: softmax weights lie between 0 and 1.",
                when=lambda a: value is not None and not 0 <= value <= 1),
        Mistake(f"{shown} means one-hot weights: that is what dot-product weights do, because a dot product "
                "grows with the query. An additive score cannot: tanh saturates at +-1, so the score tends to "
                "w_v . sign(W_q q), the same number for every key. Equal scores give equal weights.",
                when=lambda a: value is not None and 0.9 <= value <= 1),
        Mistake("1/5 would be uniform over the 5 queries; the softmax of a query runs over its keys, and there "
                "are 7 of them.", when=lambda a: value is not None and abs(value - 1 / SCALED_QUERIES) < 0.003),
        Mistake(f"the 7 weights of a query sum to 1, so the largest is at least 1/7 = 0.143; {shown} is below "
                "that.", when=lambda a: value is not None and 0 <= value < uniform - 0.003),
    ]
    check_value("Exercise 2", value if value is not None else answer, uniform, mistakes, atol=0.003, rtol=0.0,
                correct="1/7 = 0.143: the additive weights become uniform over the 7 keys, while the "
                        "dot-product weights become one-hot.")


# ---------------------------------------------------------------------------------------------
# Exercise 3: the scores of every pair, by broadcasting


def _project(queries: torch.Tensor, keys: torch.Tensor, W_q: torch.Tensor, W_k: torch.Tensor):
    return queries @ W_q.T, keys @ W_k.T  # (B, Tq, Dq) @ (Dq, h) -> (B, Tq, h); (B, Tk, Dk) @ (Dk, h) -> (B, Tk, h)


def _reference_pair_scores(queries, keys, W_q, W_k, w_v):
    q, k = _project(queries, keys, W_q, W_k)
    return torch.tanh(q.unsqueeze(2) + k.unsqueeze(1)) @ w_v  # (B, Tq, Tk, h) @ (h,) -> (B, Tq, Tk)


def _swapped_axes(queries, keys, W_q, W_k, w_v):
    q, k = _project(queries, keys, W_q, W_k)
    return torch.tanh(q.unsqueeze(1) + k.unsqueeze(2)) @ w_v  # (B, Tk, Tq)


def _tanh_after_w_v(queries, keys, W_q, W_k, w_v):
    q, k = _project(queries, keys, W_q, W_k)
    return torch.tanh((q.unsqueeze(2) + k.unsqueeze(1)) @ w_v)


def _no_tanh(queries, keys, W_q, W_k, w_v):
    q, k = _project(queries, keys, W_q, W_k)
    return (q.unsqueeze(2) + k.unsqueeze(1)) @ w_v


def _tanh_each_side(queries, keys, W_q, W_k, w_v):
    q, k = _project(queries, keys, W_q, W_k)
    return (torch.tanh(q).unsqueeze(2) + torch.tanh(k).unsqueeze(1)) @ w_v


def _features_summed(queries, keys, W_q, W_k, w_v):
    q, k = _project(queries, keys, W_q, W_k)
    return torch.tanh(q.unsqueeze(2) + k.unsqueeze(1)).sum(dim=-1)


def _softmax_of_scores(queries, keys, W_q, W_k, w_v):
    return torch.softmax(_reference_pair_scores(queries, keys, W_q, W_k, w_v), dim=-1)


def _pair_score_inputs() -> list[tuple]:
    """Two batches: Tq = Tk first (so adding queries and keys elementwise runs, and is recognised), then Tq != Tk."""
    g = _generator(6)
    inputs = []
    for b, tq, tk, dq, dk, h in [(2, 3, 3, 5, 4, 6), (2, 3, 4, 5, 7, 6)]:
        inputs.append((torch.randn(b, tq, dq, generator=g), torch.randn(b, tk, dk, generator=g),
                       torch.randn(h, dq, generator=g) / dq**0.5, torch.randn(h, dk, generator=g) / dk**0.5,
                       torch.randn(h, generator=g)))
    return inputs


def check_pair_scores(function: Any) -> None:
    """Exercise 3: ``pair_scores(queries, keys, W_q, W_k, w_v)``, the (B, Tq, Tk) additive scores by broadcasting.

    W_q (h, Dq), W_k (h, Dk) and w_v (h,) are plain tensors. Names: queries and keys added elementwise
    (no unsqueeze: a (B, T) result, query i with key i only); the new axes swapped (the transpose,
    (B, Tk, Tq)); tanh applied after w_v; no tanh; the (B, Tq, Tk, h) features returned without w_v;
    a trailing axis of 1 (w_v used as an (h, 1) matrix, not squeezed); softmax weights returned
    instead of scores; tanh applied to each side before the sum; the h features summed instead of
    weighted by w_v. The hints quote the shape or values of the learner's output.
    """
    inputs = _pair_score_inputs()
    got = _first_output(function, inputs)
    shape = tuple(got.shape) if got is not None else None
    spread = f"{got.abs().max():.2f}" if got is not None and got.numel() else "?"
    mistakes = [
        Mistake(f"your scores have shape {shape}, one per query, not one per pair: the queries and keys were added "
                "elementwise (query i with key i only, which runs only when Tq = Tk). Give each side an axis for "
                "the other: q.unsqueeze(2) + k.unsqueeze(1) is (B, Tq, 1, h) + (B, 1, Tk, h) -> (B, Tq, Tk, h).",
                when=lambda g: g.dim() == 2),
        Mistake("your scores are the transpose of the right ones, keys down the rows: the queries get the new "
                "axis at 2 (q.unsqueeze(2)) and the keys at 1 (k.unsqueeze(1)), so that the result is "
                "(B, Tq, Tk).", answer=_swapped_axes),
        Mistake(f"tanh came after w_v: all your scores lie within +-{spread}, squashed one by one. The formula "
                "squashes the h hidden units first and then weighs them: w_v . tanh(W_q q + W_k k).",
                answer=_tanh_after_w_v),
        Mistake("you applied tanh to each side on its own and added the results: the sum goes inside the tanh, "
                "w_v . tanh(W_q q + W_k k), so that the query and the key interact before the squashing.",
                answer=_tanh_each_side),
        Mistake("you summed the h hidden units of each pair: w_v weighs them, each with its own weight, "
                "features @ w_v (a plain sum is w_v full of ones).", answer=_features_summed),
        Mistake("no tanh: without it the query's term w_v . W_q q is the same along its whole row, and the "
                "softmax ignores it. Apply torch.tanh to the (B, Tq, Tk, h) sum before w_v.", answer=_no_tanh),
        Mistake(f"your output has shape {shape}: these are the (B, Tq, Tk, h) tanh features. Finish with w_v, "
                "which turns each pair's h numbers into one score: features @ w_v.",
                when=lambda g: g.dim() == 4 and g.shape[-1] > 1),
        Mistake(f"your scores have shape {shape}, with a trailing axis of 1 (w_v used as an (h, 1) matrix). "
                "Drop it with .squeeze(-1), or multiply by the vector w_v itself.",
                when=lambda g: g.dim() == 4 and g.shape[-1] == 1),
        Mistake("your rows sum to 1: you returned the softmax weights. The exercise asks for the raw scores; "
                "the softmax comes later, after the mask.", answer=_softmax_of_scores),
    ]
    check_function("Exercise 3", function, inputs, _reference_pair_scores, mistakes,
                   correct="one additive score per (query, key) pair, by broadcasting (B, Tq, 1, h) + (B, 1, Tk, h).")


# ---------------------------------------------------------------------------------------------
# Exercise 4: mask the padded keys


def _key_mask(scores: torch.Tensor, valid_lens: torch.Tensor, *, inclusive: bool = False) -> torch.Tensor:
    positions = torch.arange(scores.shape[-1])  # (Tk,)
    limit = valid_lens[:, None, None]  # (B,) -> (B, 1, 1)
    return positions <= limit if inclusive else positions < limit  # (B, 1, Tk), True = may attend


def _reference_masked_weights(scores, valid_lens):
    return torch.softmax(scores.masked_fill(~_key_mask(scores, valid_lens), float("-inf")), dim=-1)


def _no_mask(scores, valid_lens):
    return torch.softmax(scores, dim=-1)


def _one_key_too_many(scores, valid_lens):
    return torch.softmax(scores.masked_fill(~_key_mask(scores, valid_lens, inclusive=True), float("-inf")), dim=-1)


def _mask_without_query_axis(scores, valid_lens):
    mask = torch.arange(scores.shape[-1]) < valid_lens[:, None]  # (B, Tk): broadcasts as (1, B, Tk)
    return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)


def _zeroed_after_softmax(scores, valid_lens):
    return torch.softmax(scores, dim=-1) * _key_mask(scores, valid_lens)


def _filled_with_zero(scores, valid_lens):
    return torch.softmax(scores.masked_fill(~_key_mask(scores, valid_lens), 0.0), dim=-1)


def _masked_weights_inputs() -> list[tuple]:
    """First B = Tq = 2 with 4 keys and valid lengths 2 and 4 (so a (B, Tk) mask broadcasts instead of raising)."""
    g = _generator(60)
    return [(torch.randn(2, 2, 4, generator=g), torch.tensor([2, 4])),
            (torch.randn(3, 2, 5, generator=g), torch.tensor([1, 5, 3]))]


def check_masked_weights(function: Any) -> None:
    """Exercise 4: ``masked_weights(scores, valid_lens)``, softmax over the keys with keys j >= valid_lens[b] at 0.

    Names: no mask (padded keys get weight); a mask of the wrong polarity (weight on the padding, none
    on the real keys); ``j <= valid_len`` (one key too many); a (B, Tk) mask without its query axis
    (it lines up with the queries when B = Tq); the weights zeroed after the softmax without
    renormalising; padded scores filled with 0 instead of -inf; a softmax over another axis than the
    keys (rows that do not sum to 1). The hints quote the learner's weights
    on the first input: scores (2, 2, 4), valid lengths 2 and 4.
    """
    inputs = _masked_weights_inputs()
    got = _first_output(function, inputs)
    ok = got is not None and got.shape == (2, 2, 4)
    padded = f"{got[0, 0, 2:].sum():.2f}" if ok else "?"  # example 0, query 0: weight on keys 2 and 3
    real = f"{got[0, 0, :2].sum():.2f}" if ok else "?"
    key2 = f"{got[0, 0, 2]:.2f}" if ok else "?"
    row_sums = f"{got.nan_to_num().sum(-1).flatten()[0]:.2f}" if ok else "?"
    mistakes = [
        Mistake(f"the padded keys get weight: example 0 has 2 real keys, yet its keys 2 and 3 take {padded} of "
                "query 0's weight. The mask is missing: key j may be attended when j < valid_lens[b]; build that "
                "(B, 1, Tk) mask and give it to masked_softmax.", answer=_no_mask),
        Mistake(f"one key too many: example 0 has 2 real keys (0 and 1), yet key 2 gets {key2} of query 0's "
                "weight. Key j is real when j < valid_len, not j <= valid_len.", answer=_one_key_too_many),
        Mistake("your mask has no query axis: a (B, Tk) mask against (B, Tq, Tk) scores lines up its batch axis "
                "with the queries, so query 1 of example 0 was masked with example 1's lengths. Give it a query "
                "axis, mask[:, None, :], shape (B, 1, Tk).", answer=_mask_without_query_axis),
        Mistake(f"you zeroed the padded keys' weights after the softmax without renormalising, so each row keeps "
                f"only the real keys' share (query 0 of example 0 sums to {row_sums}, not 1): the softmax had already "
                "given the padding its part. Mask the scores before the softmax, masked_fill(~mask, float('-inf')), "
                "or pass the mask to masked_softmax.", answer=_zeroed_after_softmax),
        Mistake(f"the padded scores were set to 0, and exp(0) is not small: example 0's padded keys still take "
                f"{padded} of query 0's weight. Fill them with float('-inf') (or let masked_softmax do it).",
                answer=_filled_with_zero),
        Mistake(f"the mask is the wrong way round: example 0's real keys 0 and 1 get {real} of query 0's weight "
                f"and its padded keys {padded}. True must mean may attend, torch.arange(Tk) < valid_lens, not >=.",
                when=lambda g: bool(g[0, 0, :2].abs().sum() < 1e-6) and bool(g[0, 0, 2:].nan_to_num().sum() > 0.5)),
        Mistake(f"your rows do not sum to 1 over the keys (query 0 of example 0 sums to {row_sums}): the softmax "
                "ran over another axis. Normalise over the keys, dim=-1.",
                when=lambda g: not torch.allclose(g.sum(-1), torch.ones(g.shape[:-1]), atol=1e-4)),
    ]
    check_function("Exercise 4", function, inputs, _reference_masked_weights, mistakes,
                   correct="each query's weights sum to 1 over the real keys, and every padded key gets exactly 0.")
