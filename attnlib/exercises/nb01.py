"""Checkers for the exercises of notebook 01, "Q, K and V: what goes in, and what comes out?".

One checker per exercise; each prints one line (correct, not yet with a hint, or not attempted yet)
and returns None. The mistakes they name:

- the shape of the scores, weights and output (Exercise 1, and Exercise 2 for cross-attention):
  keys and queries swapped, the summed width d_k left in, softmax changing the shape, the output
  taking d_k or an encoding's width instead of Ev, one output row per key instead of per query, a
  square score matrix where keys come from another sequence;
- softmax over the wrong axis (the queries instead of the keys), or no softmax at all;
- scaling by the wrong width: sqrt(Ev), d_k instead of sqrt(d_k), or no scaling;
- an attention function that returns one tensor or (weights, output), or that works on matrices
  only (`key.T`) and fails on (B, H, T, d_k) inputs;
- cross-attention with the keys or values (or the queries) taken from the wrong sequence.

The functions of Exercises 4 and 5 return a pair (output, weights), and their hints quote the
learner's own numbers (row sums, shapes): :func:`_check_pair_function` gives
:func:`attnlib.exercises.check_function` a diagnosis that reads the pair.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch.nn.functional as F

from . import (
    Mistake,
    _fresh,
    _quietly,
    check_function,
    check_value,
    describe,
    first_difference,
    read_value,
    report,
    same,
    shape_of,
)

# Exercise 1: the sizes the learner predicts shapes for.
TQ, TK, D_K, EV = 5, 7, 16, 32
# Exercise 2: section 6's cross-attention, 2 decoder tokens (width 6) over 5 encoder tokens (width 8).
CROSS_TQ, CROSS_TK, CROSS_D_K, CROSS_EV, DECODER_WIDTH, ENCODER_WIDTH = 2, 5, 4, 3, 6, 8


def _shape(x: Any) -> Any:
    """A shape as a tuple of ints when it holds one (tuple, list, torch.Size, 1-d tensor or array), else unchanged."""
    shape = shape_of(x)
    return shape if shape is not None else x


def _all_one(sums: torch.Tensor) -> bool:
    return bool(torch.allclose(sums, torch.ones_like(sums), atol=1e-4))


def _rounded(values: Sequence[float]) -> str:
    return ", ".join(f"{v:.2f}" for v in values)


def _shape_mistakes(answer: dict[str, Any], rules: list[tuple[str, Any, str]]) -> list[Mistake]:
    """Mistakes for a dict of predicted shapes: each rule is (which shape, wrong value, hint)."""
    return [Mistake(hint, when=lambda got, k=key, w=wrong: got[k] == w) for key, wrong, hint in rules]


def _check_shapes(name: str, answer: dict[str, Any], expected: dict[str, tuple], rules, correct: str) -> None:
    if all(v is None or v is Ellipsis for v in answer.values()):
        check_value(name, None, expected)
        return
    answer = {k: _shape(v) for k, v in answer.items()}
    missing = [k for k, v in answer.items() if v is None or v is Ellipsis]
    if missing:
        report(name, "not yet", f"Fill in every shape: {', '.join(missing)} is still None.")
        return
    for key, value in answer.items():
        if isinstance(value, str):
            report(name, "not yet", f"Write {key} as a tuple of numbers, e.g. (2, 3), not the string {value!r}.")
            return
        if not (isinstance(value, tuple) and all(isinstance(n, int) for n in value)):
            report(name, "not yet", f"Write each shape as a tuple of numbers, e.g. (2, 3); {key} is {describe(value)}.")
            return
    check_value(name, answer, expected, _shape_mistakes(answer, rules), correct=correct)


def check_shapes(scores_shape: Any, weights_shape: Any, output_shape: Any) -> None:
    """Exercise 1 (predict): the shapes of scores, weights and output for Tq=5, Tk=7, d_k=16, Ev=32.

    Expected (5, 7), (5, 7), (5, 32). Named mistakes: scores (7, 5) (keys times queries); scores
    that keep d_k, (5, 16) or (16, 16) (d_k is summed away); weights of another shape than the
    scores (softmax keeps the shape); output (5, 16) (d_k instead of Ev); output (7, 32) (one row
    per key); output (5, 7) (the weights, not weights @ V).
    """
    answer = {"scores_shape": scores_shape, "weights_shape": weights_shape, "output_shape": output_shape}
    s, w, o = (_shape(v) for v in answer.values())
    rules = [
        ("scores_shape", (TK, TQ), f"Your scores_shape {s} is (Tk, Tq), one row per key: Q Kᵀ has one row "
                                   f"per query and one column per key, (Tq, Tk) = ({TQ}, {TK})."),
        ("scores_shape", (TQ, D_K), f"Your scores_shape {s} keeps d_k = {D_K}: the product Q Kᵀ sums over d_k, "
                                    f"so the scores are (Tq, Tk) = ({TQ}, {TK})."),
        ("scores_shape", (D_K, D_K), f"Your scores_shape {s} is (d_k, d_k): Q Kᵀ is (Tq, d_k) @ (d_k, Tk), "
                                     f"d_k is summed away, leaving (Tq, Tk) = ({TQ}, {TK})."),
        ("weights_shape", (TQ,), f"Your weights_shape {w} has one number per query: softmax keeps the shape of "
                                 f"the scores, one weight per (query, key) pair, (Tq, Tk) = ({TQ}, {TK})."),
        ("weights_shape", (TK, TQ), f"Your weights_shape {w} is (Tk, Tq): softmax keeps the scores' shape, "
                                    f"(Tq, Tk) = ({TQ}, {TK}), one row per query."),
        ("output_shape", (TQ, D_K), f"Your output_shape {o} has the width d_k = {D_K}: the output mixes value "
                                    f"rows, so it takes their width Ev = {EV}: (Tq, Ev) = ({TQ}, {EV})."),
        ("output_shape", (TK, EV), f"Your output_shape {o} has one row per key: weights @ V is (Tq, Tk) @ (Tk, Ev), "
                                   f"one mixed value per query, (Tq, Ev) = ({TQ}, {EV})."),
        ("output_shape", (TQ, TK), f"Your output_shape {o} is the weights' shape: the output is weights @ V, "
                                   f"(Tq, Tk) @ (Tk, Ev) = ({TQ}, {EV})."),
    ]
    if isinstance(w, tuple) and isinstance(s, tuple) and w != s:  # before the 3 output rules
        hint = (f"Your weights_shape {w} differs from your scores_shape {s}: softmax only rescales each row, "
                "so the weights have the scores' shape.")
        rules.insert(len(rules) - 3, ("weights_shape", w, hint))
    expected = {"scores_shape": (TQ, TK), "weights_shape": (TQ, TK), "output_shape": (TQ, EV)}
    _check_shapes("Exercise 1", answer, expected, rules,
                  correct=f"Scores and weights are (Tq, Tk) = ({TQ}, {TK}); the output is (Tq, Ev) = ({TQ}, {EV}).")


def check_cross_shapes(cross_weights_shape: Any, cross_output_shape: Any) -> None:
    """Exercise 2 (predict): the cross-attention shapes of section 6 (2 decoder tokens over 5 encoder tokens).

    Expected weights (2, 5) and output (2, 3). Named mistakes: weights (5, 2) (one row per key);
    square weights (2, 2) or (5, 5), as if it were self-attention; output (5, 3) (one row per
    encoder token); output (2, 4) (d_k instead of Ev); output (2, 8) or (2, 6) (an encoding's width
    instead of the projected Ev).
    """
    answer = {"cross_weights_shape": cross_weights_shape, "cross_output_shape": cross_output_shape}
    w, o = (_shape(v) for v in answer.values())
    tq, tk = CROSS_TQ, CROSS_TK
    rules = [
        ("cross_weights_shape", (tk, tq), f"Your weights {w} have one row per encoder token: the rows are the "
                                          f"queries, which come from the decoder, so (Tq, Tk) = ({tq}, {tk})."),
        ("cross_weights_shape", (tq, tq), f"Your weights {w} are square, as in self-attention: here the keys come "
                                          f"from the encoder's {tk} tokens, so (Tq, Tk) = ({tq}, {tk})."),
        ("cross_weights_shape", (tk, tk), f"Your weights {w} are square, as in self-attention: here the queries come "
                                          f"from the decoder's {tq} tokens, so (Tq, Tk) = ({tq}, {tk})."),
        ("cross_output_shape", (tk, CROSS_EV), f"Your output {o} has one row per encoder token: each decoder token "
                                               f"(query) gets one mixed value, so (Tq, Ev) = ({tq}, {CROSS_EV})."),
        ("cross_output_shape", (tq, CROSS_D_K), f"Your output {o} has the width d_k = {CROSS_D_K}: it mixes value "
                                                f"rows, of width Ev = {CROSS_EV}, so ({tq}, {CROSS_EV})."),
        ("cross_output_shape", (tq, ENCODER_WIDTH), f"Your output {o} has the encoder's width {ENCODER_WIDTH}: the "
                                                    f"values are projected to Ev = {CROSS_EV} first, "
                                                    f"so ({tq}, {CROSS_EV})."),
        ("cross_output_shape", (tq, DECODER_WIDTH), f"Your output {o} has the decoder's width {DECODER_WIDTH}: the "
                                                    f"output takes the values' width Ev = {CROSS_EV}, "
                                                    f"so ({tq}, {CROSS_EV})."),
    ]
    expected = {"cross_weights_shape": (tq, tk), "cross_output_shape": (tq, CROSS_EV)}
    _check_shapes("Exercise 2", answer, expected, rules,
                  correct=f"One row per decoder token: weights (Tq, Tk) = ({tq}, {tk}), "
                          f"output (Tq, Ev) = ({tq}, {CROSS_EV}).")


def exercise_3_inputs() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The tensors of Exercise 3, drawn as the notebook draws them: q (3, 4), k (5, 4), v (5, 9)."""
    g = torch.Generator().manual_seed(3)
    return torch.randn(3, 4, generator=g), torch.randn(5, 4, generator=g), torch.randn(5, 9, generator=g)


def check_weights(my_weights: Any) -> None:
    """Exercise 3: the attention weights for Exercise 3's q (Tq=3, d_k=4), k (Tk=5) and v (Ev=9).

    Expected softmax(q kᵀ / sqrt(4), dim=-1), shape (3, 5). Named mistakes: weights (5, 3) (k qᵀ);
    softmax over the queries (columns sum to 1; the hint quotes the learner's row sums); no softmax
    (the scores); scores divided by sqrt(Ev) = 3, by d_k = 4, or not at all.
    """
    q, k, _ = exercise_3_inputs()
    dots = q @ k.T
    expected = F.softmax(dots.double() / 2, dim=-1)
    got = read_value(my_weights, expected)  # a NumPy array or a list of rows is read as the tensor it holds
    mistakes = []
    if isinstance(got, torch.Tensor) and got.is_floating_point():
        got_d = got.detach().double()
        if got.shape == (5, 3):
            mistakes.append(Mistake(f"Your weights are {tuple(got.shape)}, one row per key: compute q @ k.T, "
                                    "(Tq, d_k) @ (d_k, Tk) = (3, 5), one row per query.", when=lambda a: True))
        elif got.shape == (3, 5):
            rows, cols = got_d.sum(dim=-1), got_d.sum(dim=-2)
            if _all_one(cols) and not _all_one(rows):
                mistakes.append(Mistake(
                    f"Your rows sum to {_rounded(rows.tolist())} and your columns to 1: softmax ran over the "
                    "queries (dim=0); use dim=-1, so that each query's weights over the keys sum to 1.",
                    when=lambda a: True))
        mistakes += [
            Mistake("These are the scaled scores, not weights: apply softmax over the keys, "
                    "F.softmax(scores, dim=-1).", answer=dots / 2),
            Mistake("These are the raw scores q @ k.T: divide by sqrt(d_k) = 2, then apply softmax over the keys "
                    "(dim=-1).", answer=dots),
            Mistake("Your scores were divided by sqrt(Ev) = sqrt(9) = 3, the values' width: scale by sqrt(d_k), "
                    "the width of the queries and keys, sqrt(4) = 2.", answer=F.softmax(dots / 3, dim=-1)),
            Mistake("Your scores were divided by d_k = 4: divide by its square root, sqrt(d_k) = 2.",
                    answer=F.softmax(dots / 4, dim=-1)),
            Mistake("Your scores were not scaled: divide q @ k.T by sqrt(d_k) = 2 before the softmax.",
                    answer=F.softmax(dots, dim=-1)),
        ]
        c = scale_used(got, dots) if got.shape == (3, 5) else None
        hint = scale_hint(c, 4, ev=9, tk=5) if c is not None else None
        if hint is not None:
            mistakes.append(Mistake(hint, when=lambda a: True))
    check_value("Exercise 3", got, expected, mistakes,
                correct="Each of the 3 rows is one query's weights over the 5 keys, summing to 1.")


def scale_used(weights: torch.Tensor, dots: torch.Tensor) -> float | None:
    """The factor c with ``weights == softmax(c * dots)`` over the last axis, or None when there is none.

    Read off the learner's weights: log-weights minus their row mean are c times the centred dots.
    """
    w, d = weights.detach().double(), dots.detach().double()
    if w.shape != d.shape or not bool((w > 0).all()) or not bool(torch.isfinite(w).all()):
        return None
    lw, dd = w.log() - w.log().mean(-1, keepdim=True), d - d.mean(-1, keepdim=True)
    c = float((lw * dd).sum() / (dd * dd).sum())
    if abs(c) < 1e-6:  # uniform weights: the scores were not used at all, no scale to name
        return None
    return c if torch.allclose(torch.softmax(c * d, dim=-1), w, atol=1e-4, rtol=1e-3) else None


def scale_hint(c: float, d_k: int, *, ev: int | None = None, tk: int | None = None, e: int | None = None) -> str | None:
    """Name the width a learner's scale ``c`` (scores multiplied by c) came from; None when c is right."""
    right = 1 / math.sqrt(d_k)
    if math.isclose(c, right, rel_tol=1e-3):
        return None
    root = math.sqrt(d_k)
    fix = f"divide the scores by sqrt(d_k) = sqrt({d_k}) = {root:.4g}, query.shape[-1] ** 0.5."
    known = [(1.0, "were not scaled at all"), (1 / d_k, f"were divided by d_k = {d_k}, not by its square root"),
             (root, f"were multiplied by sqrt(d_k) = {root:.4g} instead of divided by it")]
    if ev is not None:
        known.append((1 / math.sqrt(ev), f"were divided by sqrt(Ev) = sqrt({ev}), the values' width, not d_k"))
    if tk is not None:
        known.append((1 / math.sqrt(tk), f"were divided by sqrt(Tk) = sqrt({tk}), the number of keys "
                                         "(key.shape[-2]), not the width d_k"))
    if e is not None:
        known.append((1 / math.sqrt(e), f"were divided by sqrt({e}), the model's width, not the head's d_k"))
    for value, what in known:
        if math.isclose(c, value, rel_tol=1e-3):
            return f"Your scores {what}: {fix}"
    return f"Your scores were multiplied by {c:.4g} before the softmax, where 1/sqrt(d_k) = {right:.4g} is asked: {fix}"


class _Pair:
    """What an attention function returned, compared as the pair (output, weights)."""

    def __init__(self, value: Any):
        self.value = value

    def parts(self) -> tuple[torch.Tensor, torch.Tensor] | None:
        v = self.value
        if isinstance(v, (tuple, list)) and len(v) == 2 and all(isinstance(t, torch.Tensor) for t in v):
            return v[0], v[1]
        return None

    def __eq__(self, other: object) -> bool:
        mine, theirs = self.parts(), _Pair(other.value if isinstance(other, _Pair) else other).parts()
        return mine is not None and theirs is not None and all(same(a, b) for a, b in zip(mine, theirs))

    __hash__ = None

    def __repr__(self) -> str:
        parts = self.parts()
        if parts is None:
            return describe(self.value)
        return f"(output: {describe(parts[0])}; weights: {describe(parts[1])})"


# A hint for one wrong answer: (recognise(got, args) -> bool, hint(got, args) -> str).
PairMistake = tuple[Callable[[_Pair, tuple], bool], Callable[[_Pair, tuple], str]]


def _wrong(implementation: Callable[..., Any]) -> Callable[[_Pair, tuple], bool]:
    """Recognise a wrong implementation by running it on the same inputs."""
    def recognise(got: _Pair, args: tuple) -> bool:
        return got == _Pair(implementation(*args))
    return recognise


def _shapes_text(args: tuple) -> str:
    return ", ".join(str(tuple(a.shape)) if isinstance(a, torch.Tensor) else repr(a) for a in args)


def _check_pair_function(
    name: str, function: Any, inputs: Sequence[tuple], reference: Callable[..., Any],
    mistakes: Sequence[PairMistake], *, correct: str = "",
    on_error: Callable[[Exception, tuple], str | None] | None = None,
) -> None:
    """:func:`attnlib.exercises.check_function` for functions returning (output, weights).

    On the first input where the learner's pair differs from the reference's, each mistake is tried
    in order and the first that recognises it writes the hint, which may quote the learner's numbers;
    otherwise the general hint names the pair's two parts.
    """
    def diagnose(got: Any, expected: Any, args: tuple) -> str:
        pair = _Pair(got)
        for recognise, hint in mistakes:
            try:
                matched = _quietly(recognise, pair, _fresh(args))
            except Exception:  # a recogniser that cannot judge this answer does not match it
                matched = False
            if matched:
                return hint(pair, args)
        parts = pair.parts()
        if parts is None:
            return f"On inputs {_shapes_text(args)} expected a pair (output, weights), got {pair!r}."
        for what, mine, theirs in zip(("output", "weights"), parts, expected):
            if not same(mine, theirs):
                return f"On inputs {_shapes_text(args)}, in your {what}: {first_difference(mine, theirs)}."
        return f"On inputs {_shapes_text(args)} expected {_Pair(expected)!r}, got {pair!r}."

    check_function(name, function, inputs, reference, diagnose=diagnose, on_error=on_error, correct=correct)


def reference_attention(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor):
    """softmax(Q Kᵀ / sqrt(d_k)) V and the weights, for any leading axes: Exercise 4's reference."""
    weights = F.softmax(query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1]), dim=-1)
    return weights @ value, weights


def _attention_scaled_by(scale: Callable[[torch.Tensor, torch.Tensor], float], dim: int = -1):
    def attention(query, key, value):
        weights = F.softmax(query @ key.transpose(-2, -1) / scale(query, value), dim=dim)
        return weights @ value, weights
    return attention


def _attention_inputs() -> list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    g = torch.Generator().manual_seed(4)
    return [
        (torch.randn(3, 4, generator=g), torch.randn(5, 4, generator=g), torch.randn(5, 9, generator=g)),
        (torch.randn(2, 3, 4, 8, generator=g), torch.randn(2, 3, 6, 8, generator=g),
         torch.randn(2, 3, 6, 5, generator=g)),
    ]


def _is_output_only(got: _Pair, args: tuple) -> bool:
    return isinstance(got.value, torch.Tensor)


def _is_swapped(got: _Pair, args: tuple) -> bool:
    output, weights = reference_attention(*args)
    return got == _Pair((weights, output))


def _columns_sum_to_one(got: _Pair, args: tuple) -> bool:
    parts = got.parts()
    if parts is None or parts[1].shape != reference_attention(*args)[1].shape:
        return False
    weights = parts[1].detach().double()
    cols, rows = weights.sum(dim=-2), weights.sum(dim=-1)
    return _all_one(cols) and not _all_one(rows)


def _rows_not_one(got: _Pair, args: tuple) -> bool:
    parts = got.parts()
    if parts is None:
        return False
    rows = parts[1].detach().double().sum(dim=-1)
    return not _all_one(rows)


def _row_sums(got: _Pair) -> str:
    rows = got.parts()[1].detach().double().sum(dim=-1).flatten().tolist()
    return _rounded(rows[:5]) + (", ..." if len(rows) > 5 else "")


def _scale_text(got: _Pair, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor) -> str | None:
    parts = got.parts()
    if parts is None:
        return None
    c = scale_used(parts[1], query @ key.transpose(-2, -1))
    if c is None:
        return None
    return scale_hint(c, query.shape[-1], ev=value.shape[-1], tk=key.shape[-2])


def _scaled_otherwise(got: _Pair, args: tuple) -> bool:
    return _scale_text(got, *args[:3]) is not None


def _attention_error(err: Exception, args: tuple) -> str | None:
    if args[0].dim() > 2:
        return (f"Your function works on matrices but raised {type(err).__name__} on batched inputs "
                f"{_shapes_text(args)}, (B, H, T, d_k): transpose only the last two axes, "
                "key.transpose(-2, -1), instead of key.T.")
    return None


def check_attention(my_attention: Any) -> None:
    """Exercise 4: ``my_attention(query, key, value) -> (output, weights)``, scaled dot-product attention.

    Run on (Tq, d_k) = (3, 4), (Tk, d_k) = (5, 4), (Tk, Ev) = (5, 9), then on batched (B, H, Tq, d_k)
    tensors. Named mistakes: returning the output only; returning (weights, output); softmax over
    the queries (the hint quotes the row sums); rows that do not sum to 1 (no softmax, or softmax
    over another axis); scaling by sqrt(Ev), by d_k, or not at all; `key.T`, which fails on
    batched inputs.
    """
    def scaled_dims(got: _Pair, args: tuple) -> tuple[int, int]:
        return args[0].shape[-1], args[2].shape[-1]

    mistakes: list[PairMistake] = [
        (_is_output_only, lambda got, args: f"Your function returns one tensor, of shape {tuple(got.value.shape)}: "
                                             "return both, `return output, weights`."),
        (_is_swapped, lambda got, args: "You return (weights, output): return them in the order (output, weights), "
                                        "as attnlib and this notebook do."),
        (_columns_sum_to_one, lambda got, args: f"Your weights' rows sum to {_row_sums(got)} and their columns to 1: "
                                                "softmax ran over the queries; use dim=-1, the keys."),
        (_wrong(_attention_scaled_by(lambda q, v: math.sqrt(v.shape[-1]))),
         lambda got, args: "Your scores were divided by sqrt(Ev) = sqrt({1}) = {2:.2f}, the values' width: scale by "
                           "sqrt(d_k) = sqrt({0}) = {3:.2f}, query.shape[-1].".format(
                               *scaled_dims(got, args), math.sqrt(args[2].shape[-1]), math.sqrt(args[0].shape[-1]))),
        (_wrong(_attention_scaled_by(lambda q, v: q.shape[-1])),
         lambda got, args: f"Your scores were divided by d_k = {args[0].shape[-1]}: divide by its square root, "
                           f"sqrt(d_k) = {math.sqrt(args[0].shape[-1]):.2f}."),
        (_wrong(_attention_scaled_by(lambda q, v: 1.0)),
         lambda got, args: f"Your scores were not scaled: divide query @ key.transpose(-2, -1) by sqrt(d_k) = "
                           f"{math.sqrt(args[0].shape[-1]):.2f} before the softmax."),
        (_scaled_otherwise, lambda got, args: _scale_text(got, args[0], args[1], args[2])),
        (_rows_not_one, lambda got, args: f"Your weights' rows sum to {_row_sums(got)}, not 1: apply softmax to the "
                                          "scaled scores over the keys, dim=-1."),
    ]
    _check_pair_function("Exercise 4", my_attention, _attention_inputs(), reference_attention, mistakes,
                         on_error=_attention_error,
                         correct="It matches softmax(Q Kᵀ / √d_k) V on matrices and on (B, H, Tq, d_k) batches.")


def reference_cross_attention(decoder, encoder, W_q, W_k, W_v):
    """Exercise 5's reference: queries from the decoder, keys and values from the encoder."""
    return reference_attention(decoder @ W_q, encoder @ W_k, encoder @ W_v)


def _cross_inputs() -> list[tuple[torch.Tensor, ...]]:
    g = torch.Generator().manual_seed(5)

    def draw(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=g)

    # First two sequences of the same length and width, so that a wrong choice still runs and is
    # recognised by its numbers; then section 6's shapes, where only the right choice runs.
    return [
        (draw(3, 6), draw(3, 6), draw(6, 4) / 6**0.5, draw(6, 4) / 6**0.5, draw(6, 5) / 6**0.5),
        (draw(2, 6), draw(5, 8), draw(6, 4) / 6**0.5, draw(8, 4) / 8**0.5, draw(8, 3) / 8**0.5),
    ]


def check_cross_attention(my_cross_attention: Any) -> None:
    """Exercise 5: ``my_cross_attention(decoder, encoder, W_q, W_k, W_v) -> (output, weights)``.

    Queries come from the decoder, keys and values from the encoder. Named mistakes (recognised
    on two sequences of equal shape, where every choice runs): everything from the decoder
    (self-attention); everything from the encoder; the roles swapped (queries from the encoder);
    keys from the encoder but values from the decoder; keys from the decoder but values from the
    encoder; returning one tensor.
    """
    att = reference_attention
    wrong = [
        (lambda d, e, q, k, v: att(d @ q, d @ k, d @ v),
         "Your keys and values come from the decoder, as in self-attention: take them from the encoder, "
         "key = encoder @ W_k, value = encoder @ W_v."),
        (lambda d, e, q, k, v: att(e @ q, e @ k, e @ v),
         "Your queries come from the encoder: in cross-attention the decoder asks, query = decoder @ W_q."),
        (lambda d, e, q, k, v: att(e @ q, d @ k, d @ v),
         "The roles are swapped: the queries come from the decoder (decoder @ W_q), the keys and values from "
         "the encoder."),
        (lambda d, e, q, k, v: att(d @ q, e @ k, d @ v),
         "Your values come from the decoder: each key must hand over its own value, value = encoder @ W_v."),
        (lambda d, e, q, k, v: att(d @ q, d @ k, e @ v),
         "Your keys come from the decoder: the keys and the values both come from the encoder, key = encoder @ W_k."),
    ]
    mistakes: list[PairMistake] = [
        (_is_output_only, lambda got, args: f"Your function returns one tensor, of shape {tuple(got.value.shape)}: "
                                             "return both, `return output, weights`."),
        (_is_swapped_cross, lambda got, args: "You return (weights, output): return them in the order "
                                              "(output, weights)."),
    ] + [(_wrong(impl), lambda got, args, h=hint: h) for impl, hint in wrong] + [
        (_values_not_projected, lambda got, args: f"Your output is {tuple(got.parts()[0].shape)}, as wide as the "
                                                  f"encoder ({args[1].shape[-1]}): the values were not projected. "
                                                  "value = encoder @ W_v gives them the width Ev."),
        (_cross_scaled_otherwise, lambda got, args: _cross_scale_text(got, args)),
    ]

    def on_error(err: Exception, args: tuple) -> str | None:
        if args[0].shape != args[1].shape:  # the second input: decoder and encoder of different shapes
            return (f"Your function raised {type(err).__name__} on a decoder of 2 tokens (width 6) and an encoder of "
                    "5 tokens (width 8): W_q multiplies the decoder, W_k and W_v the encoder.")
        return None

    _check_pair_function("Exercise 5", my_cross_attention, _cross_inputs(), reference_cross_attention, mistakes,
                         on_error=on_error,
                         correct="Queries from the decoder, keys and values from the encoder: "
                                 "weights (Tq, Tk), output (Tq, Ev).")


def _values_not_projected(got: _Pair, args: tuple) -> bool:
    parts = got.parts()
    decoder, encoder, W_q, W_k, W_v = args
    return parts is not None and parts[0].shape[-1] == encoder.shape[-1] != W_v.shape[-1]


def _cross_scale_text(got: _Pair, args: tuple) -> str | None:
    decoder, encoder, W_q, W_k, W_v = args
    return _scale_text(got, decoder @ W_q, encoder @ W_k, encoder @ W_v)


def _cross_scaled_otherwise(got: _Pair, args: tuple) -> bool:
    return _cross_scale_text(got, args) is not None


def _is_swapped_cross(got: _Pair, args: tuple) -> bool:
    output, weights = reference_cross_attention(*args)
    return got == _Pair((weights, output))


__all__ = [
    "check_attention",
    "check_cross_attention",
    "check_cross_shapes",
    "check_shapes",
    "check_weights",
    "exercise_3_inputs",
    "reference_attention",
    "reference_cross_attention",
]
