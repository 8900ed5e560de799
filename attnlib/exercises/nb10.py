"""Checkers for the exercises of notebook 10, induction heads.

One function per exercise; each prints one line ("correct", "not yet. <hint>" or "not attempted
yet") and returns None. The hints name the classic mistakes: the loss of a uniform guess in bits or
as a probability instead of nats; a repeated batch whose copies sit at a fixed offset (which a model
solves by position instead of by induction), overlap, or never reach the ends; the previous-token
score read off the wrong diagonal or divided by T; the prefix-matching score read at the earlier
occurrence itself instead of the token after it, or averaged with the first copy's queries; and an
ablation predicted to leave the loss low (another head taking over) or in the wrong units.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from ..induction import prefix_matching_score, previous_token_score
from . import Mistake, check_function, check_value, read_value

__all__ = ["check_ablation_loss", "check_prefix_matching_score", "check_previous_token_score",
           "check_repeated_batch", "check_untrained_loss"]

VOCAB = 64  # the notebook's vocabulary: a uniform guess over 64 tokens


def _number(answer: Any) -> Any:
    """A number the learner wrote (Python, NumPy, Fraction, 0-d or 1-element tensor) as a float, else unchanged."""
    value = read_value(answer, 0.0)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else value


def _near(value: float, tol: float):
    return lambda got: isinstance(got, float) and abs(got - value) <= tol


# --- Exercise 2 (predict, then run): the loss of an untrained model --------------------------------


def check_untrained_loss(answer: Any) -> None:
    """Exercise 2: an untrained model spreads its probability evenly over 64 tokens: a loss of ln 64 nats."""
    expected = math.log(VOCAB)
    got = _number(answer)
    mistakes = [
        Mistake("That is log2(64) = 6, the loss in bits; cross_entropy uses the natural log: ln 64 nats.",
                when=_near(math.log2(VOCAB), 0.05)),
        Mistake("1/64 is the probability the model gives the right token; the loss is minus its log, ln 64.",
                when=_near(1 / VOCAB, 0.002)),
        Mistake("64 is the number of tokens; the loss of a uniform guess over them is -ln(1/64) = ln 64.",
                when=_near(VOCAB, 0.5)),
        Mistake("That is log10(64) = 1.81, a base-10 log; cross_entropy uses the natural log: ln 64 nats.",
                when=_near(math.log10(VOCAB), 0.05)),
        Mistake("A loss of 0 means the model is sure and right; an untrained model has no idea, so it guesses "
                "uniformly: -ln(1/64).", when=_near(0.0, 0.05)),
    ]
    check_value("Exercise 2", got, expected, mistakes, atol=0.02, rtol=0,
                correct=f"ln 64 = {expected:.2f} nats: a uniform guess, on every position alike.")


# --- Exercise 1: the repeated-token batch ------------------------------------------------------------

T, L = 32, 10  # the notebook's sequence and segment lengths


def _batch_problem(function: Any) -> str:
    """'ok' when ``function`` builds a valid repeated batch with random offsets, else the hint naming the fault."""
    try:
        out = function(2048, T, L, VOCAB, torch.Generator().manual_seed(0))
        again = function(2048, T, L, VOCAB, torch.Generator().manual_seed(0))
    except Exception as err:  # the learner's code: named in one line instead of a traceback
        return f"Your function raised {type(err).__name__} on repeated_batch(2048, {T}, {L}, {VOCAB}, generator)."
    if not (isinstance(out, tuple | list) and len(out) == 3 and all(isinstance(x, torch.Tensor) for x in out)):
        return "Return three tensors: (tokens (B, T), first (B,), second (B,))."
    tokens, first, second = out
    if tokens.shape != (2048, T) or first.shape != (2048,) or second.shape != (2048,):
        return (f"Expected tokens (2048, {T}), first (2048,), second (2048,); got {tuple(tokens.shape)}, "
                f"{tuple(first.shape)}, {tuple(second.shape)}.")
    if tokens.is_floating_point() or first.is_floating_point() or second.is_floating_point():
        return "Token ids and starts are integers (torch.randint gives int64), not floats."
    if tokens.min() < 0 or tokens.max() >= VOCAB:
        return f"Token ids must lie in 0 .. {VOCAB - 1}."
    if not all(torch.equal(a, b) for a, b in zip(out, again)):
        return "Two calls with the same seed gave different batches: draw everything from the generator you are " \
               "given (torch.randint(..., generator=generator))."
    if (first < 0).any() or (second + L > T).any():
        return f"A copy runs off the sequence: first >= 0 and second + {L} <= {T}."
    if (first >= second + L).all():
        return ("first and second are returned in the wrong order: every 'first' starts after its 'second'. "
                "Return (tokens, first, second), the earlier start first.")
    if (second < first + L).any():
        return (f"Your two copies overlap: the second must start at least {L} tokens after the first "
                "(second >= first + L).")
    j = torch.arange(L)
    rows = torch.arange(2048)[:, None]
    if not torch.equal(tokens[rows, second[:, None] + j], tokens[rows, first[:, None] + j]):
        return ("tokens[b, second + j] must equal tokens[b, first + j] for j < L: copy the segment after drawing "
                "the tokens.")
    if first.unique().numel() == 1 and second.unique().numel() == 1:
        return (f"Every row has its copies at the same places (first = {int(first[0])}, second = {int(second[0])}): "
                "you drew one pair of starts for the whole batch. Draw first and second for every row, so a model "
                "cannot learn the places instead of matching tokens.")
    if (second - first).unique().numel() == 1:
        return (f"Your repeats sit at a fixed offset: the second copy always starts {int(second[0] - first[0])} tokens "
                "after the first. A model then finds the earlier token by its distance (attend to i - offset + 1) "
                "instead of by matching tokens, and no induction head forms: draw first and second at random.")
    if first.unique().numel() == 1 or second.unique().numel() == 1:
        return "One of the copies always starts at the same position: draw both starts at random."
    if int(first.min()) != 0 or int(second.max()) != T - L:
        return (f"Your starts never reach the ends (first from 0, second up to T - L = {T - L}): an off-by-one in "
                "randint's high, which is exclusive.")
    if tokens[:, 0].unique().numel() < VOCAB // 2:
        return "The tokens are not random: draw each one uniformly from the vocabulary."
    return "ok"


def check_repeated_batch(function: Any) -> None:
    """Exercise 1: ``repeated_batch(batch_size, seq_len, repeat_len, vocab_size, generator)``.

    It returns ``(tokens, first, second)``; judged by its properties, since the batch is random.
    """
    if function is None or function is Ellipsis:
        check_value("Exercise 1", None, "ok")
        return
    if callable(function):
        try:
            if function(4, T, L, VOCAB, torch.Generator().manual_seed(0)) is None:
                check_value("Exercise 1", None, "ok")  # the stub's body: not attempted yet
                return
        except Exception:  # reported with its inputs by _batch_problem below
            pass
        found = _batch_problem(function)
    else:
        found = "Expected a function."
    check_value("Exercise 1", found, "ok", [Mistake(found, answer=found)],
                correct="Random tokens, one segment twice, at places that change from row to row.")


# --- Exercise 3: the previous-token score per head ---------------------------------------------------


def _previous_token_score(weights: torch.Tensor) -> torch.Tensor:
    return previous_token_score(weights).mean(dim=0)  # (B, H) -> (H,)


def _causal_weights(b: int, h: int, t: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    scores = torch.randn(b, h, t, t, generator=g) * 2
    blocked = torch.ones(t, t, dtype=torch.bool).triu(1)
    return scores.masked_fill(blocked, float("-inf")).softmax(dim=-1)  # (B, H, T, T), causal


def check_previous_token_score(function: Any) -> None:
    """Exercise 3: ``previous_token_score(weights (B, H, T, T)) -> (H,)``: mean of weights[b, h, i, i - 1], i >= 1."""
    inputs = [(_causal_weights(5, 3, 7, 10),), (_causal_weights(2, 4, 4, 11),)]  # B != H, so axes can be told apart
    mistakes = [
        Mistake("You averaged the main diagonal, the weight each token gives itself: the previous token is one "
                "column to the left, weights.diagonal(offset=-1, dim1=-2, dim2=-1).",
                answer=lambda w: w.diagonal(dim1=-2, dim2=-1).mean(dim=-1).mean(dim=0)),
        Mistake("You read the next token, which the causal mask hides (its weight is 0 everywhere): offset=+1, or "
                "offset=-1 with the axes swapped (dim1=-1, dim2=-2). Rows are queries: weights.diagonal(offset=-1, "
                "dim1=-2, dim2=-1).", answer=lambda w: w.diagonal(offset=1, dim1=-2, dim2=-1).mean(dim=(0, -1))),
        Mistake("You divided by T, counting query 0, which has no previous token: average over the T - 1 entries of "
                "the diagonal.",
                answer=lambda w: (w.diagonal(offset=-1, dim1=-2, dim2=-1).sum(dim=-1) / w.shape[-1]).mean(0)),
        Mistake("You averaged over the heads instead of the batch: the result has one score per head, (H,); "
                "average over dim 0 (B) and the queries.",
                answer=lambda w: w.diagonal(offset=-1, dim1=-2, dim2=-1).mean(dim=(1, -1))),
    ]
    check_function("Exercise 3", function, inputs, _previous_token_score, mistakes,
                   correct="One score per head: near 1 for a previous-token head, about 1 / T for an even spread.")


# --- Exercise 4: the prefix-matching score on two copies -----------------------------------------------


def _two_copies_score(weights: torch.Tensor, repeat_len: int) -> torch.Tensor:
    return prefix_matching_score(weights, 0, repeat_len, repeat_len)  # (B, H): queries L .. 2L - 1


def _prefix_inputs() -> list[tuple]:
    return [(_causal_weights(3, 2, 10, 12), 5), (_causal_weights(2, 3, 8, 13), 4)]


def check_prefix_matching_score(function: Any) -> None:
    """Exercise 4: ``prefix_matching_score(weights (B, H, 2L, 2L), repeat_len) -> (B, H)`` on two copies of L tokens."""

    def diag(w: torch.Tensor, offset: int) -> torch.Tensor:
        return w.diagonal(offset=offset, dim1=-2, dim2=-1)

    mistakes = [
        Mistake("You scored the earlier occurrence itself (key i - L, the same token as the query): an induction head "
                "attends to the token right after it, key i - L + 1, the one it copies.",
                answer=lambda w, n: diag(w, -n).mean(dim=-1)),
        Mistake("You counted a query of the first copy: diagonal(offset=1 - L) starts at query L - 1, the last token "
                "of the first copy, which has no earlier occurrence. Keep the second copy's L queries: [..., 1:].",
                answer=lambda w, n: diag(w, 1 - n).mean(dim=-1)),
        Mistake("You averaged over all 2L queries, the first copy's included (they have no earlier occurrence to "
                "match): average over the L queries of the second copy only.",
                answer=lambda w, n: diag(w, 1 - n)[..., 1:].sum(dim=-1) / (2 * n)),
        Mistake("You summed the L weights of each head instead of averaging them: the score is their mean, "
                "between 0 and 1 (.mean(dim=-1)).", answer=lambda w, n: diag(w, 1 - n)[..., 1:].sum(dim=-1)),
        Mistake("Your scores are all 0: you read keys after their queries (dim1 and dim2 swapped in diagonal, "
                "or the offset's sign flipped), which the causal mask hides. Rows are queries: "
                "weights.diagonal(offset=1 - L, dim1=-2, dim2=-1)[..., 1:].",
                when=lambda got: isinstance(got, torch.Tensor) and got.numel() > 0 and bool((got == 0).all())),
        Mistake("Key i - L - 1 is the token before the earlier occurrence; the induction head's target is the token "
                "after it, key i - L + 1.", answer=lambda w, n: diag(w, -n - 1)[..., :].mean(dim=-1)),
    ]
    check_function("Exercise 4", function, _prefix_inputs(), _two_copies_score, mistakes,
                   correct="Query L + j scores key j + 1: the token after the earlier occurrence, what it would copy.")


# --- Exercise 5 (predict, then run): the loss after ablating the induction heads ------------------------


def check_ablation_loss(answer: Any) -> None:
    """Exercise 5: with layer 1's induction heads zeroed nothing copies: the second copy's loss goes back near ln 64."""
    got = _number(answer)
    uniform = math.log(VOCAB)
    mistakes = [
        Mistake("A loss that stays low would need another head to copy; no other head matches prefixes, so with the "
                "induction heads gone the model can only guess: back near ln 64.",
                when=lambda g: isinstance(g, float) and g < 2.0),
        Mistake("That is in bits (log2 64 = 6); the losses here are in nats, natural logs: ln 64.",
                when=_near(math.log2(VOCAB), 0.3)),
        Mistake("64 is the number of tokens; a uniform guess over them costs ln 64 nats.", when=_near(VOCAB, 1.0)),
    ]
    check_value("Exercise 5", got, uniform, mistakes, atol=0.45, rtol=0,
                correct=f"Near ln 64 = {uniform:.2f}: without the heads that copy, the repeat is as unpredictable as "
                        "the first copy.")
