"""Exercises of notebook 06 (additive attention), declared as data: each ``check_*`` below is an
:class:`~attnlib.exercises.Exercise` that the notebook's check cell calls."""

from __future__ import annotations

import torch

from . import Exercise, Mistake, Probe, as_number, describe, near, shape_of, variant

__all__ = ["check_features_shape", "check_largest_weight", "check_masked_weights", "check_pair_scores"]

# The running example: 3 texts of one date ("Sat, 7 Feb 2026", "7.2.2026", "2026.02.07", padded to Tk = 15),
# Tq = 10 queries (the characters of "2026-02-07"), queries of width Dq = 2, keys of width Dk = 3, h = 2.
B, TQ, TK, DQ, DK, H = 3, 10, 15, 2, 3, 2

# --- Exercise 1: the shape of tanh(W_q q + W_k k) over every pair ------------------------------------------

check_features_shape = Exercise(
    "Exercise 1", expected=(B, TQ, TK, H), read=shape_of,
    unreadable="Write the shape as a tuple of ints, such as (1, 2, 3, 4); got {got}.",
    correct="(B, Tq, Tk, h): one hidden vector of h numbers for every (text, query, key).",
    diagnose=lambda got, expected, args: f"{got} is not that shape: it has one axis for the texts, one for the "
                                         "queries, one for the keys and one for the hidden units, in that order.",
    mistakes=[
        Mistake("{got} is the shape of the scores, after w_v has turned each pair's hidden units into one number. "
                "The tanh features still hold h numbers per pair: one more axis.", answer=(B, TQ, TK)),
        Mistake("{got} is w_v's output kept as a column. The features come before w_v: their last axis holds the "
                "h hidden units.", answer=(B, TQ, TK, 1)),
        Mistake("{got} puts the keys before the queries. A query's row holds its pairs with every key, so the "
                "queries' axis comes first, as in the (B, Tq, Tk) scores.", answer=(B, TK, TQ, H)),
        Mistake("{got} ends with a width of the inputs. W_q and W_k project the query and the key to the same h "
                "numbers, which are added, not concatenated: the last axis is h.", example=(B, TQ, TK, DK),
                when=lambda a: len(a) == 4 and tuple(a[:3]) == (B, TQ, TK) and a[3] in (DK, DQ + DK)),
        Mistake("{got} stops at the shortest texts. The keys are padded to the longest text, and every padded "
                "position is a key too (the mask comes later).", example=(B, TQ, 8, H),
                when=lambda a: len(a) == 4 and tuple(a[:2]) == (B, TQ) and a[2] in (8, 10) and a[3] == H),
        Mistake("{got} is one side only, the projected queries or keys (with or without an axis of size 1). The "
                "two broadcast against each other: one h-vector for every (query, key) pair.", example=(B, TQ, 1, H),
                when=lambda a: tuple(a) in ((B, TQ, H), (B, TK, H), (B, TQ, 1, H), (B, 1, TK, H))),
        Mistake("{got} leaves out the batch: every text has its own pairs.", answer=(TQ, TK, H)),
    ])


# --- Exercise 2: the scores of every pair, by broadcasting ---------------------------------------------------

def pair_scores(queries, keys, W_q, W_k, w_v, *, tanh_at="sum", reduce="w_v", new_axes=(2, 1)):
    """(B, Tq, Dq), (B, Tk, Dk), W_q (h, Dq), W_k (h, Dk), w_v (h,) -> (B, Tq, Tk); the keywords make a mistake."""
    q, k = queries @ W_q.T, keys @ W_k.T  # (B, Tq, h), (B, Tk, h)
    if tanh_at == "sides":
        q, k = torch.tanh(q), torch.tanh(k)
    summed = q.unsqueeze(new_axes[0]) + k.unsqueeze(new_axes[1])  # (B, Tq, 1, h) + (B, 1, Tk, h) -> (B, Tq, Tk, h)
    features = torch.tanh(summed) if tanh_at == "sum" else summed
    if reduce == "sum":
        return features.sum(dim=-1)
    return torch.tanh(features @ w_v) if tanh_at == "after" else features @ w_v  # (B, Tq, Tk, h) @ (h,) -> (B, Tq, Tk)


PAIR_SIZES = ((2, 3, 3, 5, 4, 6), (1, 2, 5, 3, 2, 4), (3, 4, 2, 2, 3, 2), (2, 3, 4, 5, 7, 3))  # B, Tq, Tk, Dq, Dk, h


def _pair_probes() -> list[Probe]:  # Tq = Tk first: queries and keys added elementwise run, and are named
    g = torch.Generator().manual_seed(6)
    return [Probe((torch.randn(b, tq, dq, generator=g), torch.randn(b, tk, dk, generator=g),
                   torch.randn(h, dq, generator=g) / dq**0.5, torch.randn(h, dk, generator=g) / dk**0.5,
                   torch.randn(h, generator=g)), f"B = {b}, Tq = {tq}, Tk = {tk}, Dq = {dq}, Dk = {dk}, h = {h}")
            for b, tq, tk, dq, dk, h in PAIR_SIZES]


check_pair_scores = Exercise(
    "Exercise 2", reference=pair_scores, probes=_pair_probes,
    correct="one additive score per (query, key) pair, by broadcasting (B, Tq, 1, h) + (B, 1, Tk, h).",
    mistakes=[
        Mistake(lambda got: f"Your scores have shape {tuple(got.shape)}, one per query, not one per pair: the queries "
                "and keys were added elementwise (query i with key i only, which runs only when Tq = Tk). Give each "
                "side an axis for the other with unsqueeze.", when=lambda got: got.dim() == 2,
                example=lambda q, k, W_q, W_k, w_v: torch.tanh(q @ W_q.T + k @ W_k.T) @ w_v),
        Mistake("Your scores are transposed, keys down the rows: the queries take the new axis after their own "
                "(unsqueeze(2)), the keys before theirs (unsqueeze(1)).", answer=variant(pair_scores, new_axes=(1, 2))),
        Mistake("tanh came after w_v, squashing each score on its own. The formula squashes the h hidden units "
                "first and then weighs them: w_v . tanh(W_q q + W_k k).", answer=variant(pair_scores, tanh_at="after")),
        Mistake("You applied tanh to each side on its own and added the results: the sum goes inside the tanh, so "
                "that the query and the key meet before the squashing.", answer=variant(pair_scores, tanh_at="sides")),
        Mistake("You summed each pair's h hidden units: w_v weighs them, each with its own weight (a plain sum is "
                "w_v full of ones).", answer=variant(pair_scores, reduce="sum")),
        Mistake("No tanh: without it the query's part of the score is constant along its row, and the softmax ignores "
                "it. Apply tanh to the (B, Tq, Tk, h) sum before w_v.", answer=variant(pair_scores, tanh_at="none")),
        Mistake(lambda got: f"Your output has shape {tuple(got.shape)}: the (B, Tq, Tk, h) tanh features. Finish with "
                "w_v, which turns each pair's h numbers into one score.", when=lambda got: got.dim() == 4,
                example=lambda *a: torch.tanh((a[0] @ a[2].T).unsqueeze(2) + (a[1] @ a[3].T).unsqueeze(1))),
        Mistake("Your rows sum to 1: you returned softmax weights. The exercise asks for the raw scores; the softmax "
                "comes later, after the mask.", answer=lambda *a: pair_scores(*a).softmax(dim=-1)),
        Mistake(lambda err, args: f"Your function raised {type(err).__name__} on B = {len(args[0])}, Tq = "
                f"{args[0].shape[1]}, Tk = {args[1].shape[1]}: W_q is (h, Dq) and W_k (h, Dk), so project with "
                "queries @ W_q.T and keys @ W_k.T, then add (B, Tq, 1, h) + (B, 1, Tk, h).",
                raises=RuntimeError, match="size|shape|dimension|mat",
                example=lambda q, k, W_q, W_k, w_v: torch.tanh((q @ W_q).unsqueeze(2)) @ w_v),
    ])


# --- Exercise 3: mask the padded keys -------------------------------------------------------------------------

def _real(scores: torch.Tensor, valid_lens: torch.Tensor, *, axis: int = -1, inclusive: bool = False):
    """True for the real keys (axis -1: (B, 1, Tk)); axis 1 compares the lengths with the queries instead."""
    positions = torch.arange(scores.shape[axis])[:, None] if axis == 1 else torch.arange(scores.shape[-1])
    limit = valid_lens[:, None, None]  # (B,) -> (B, 1, 1)
    return positions <= limit if inclusive else positions < limit  # (B, 1, Tk) or (B, Tq, 1)


def masked_weights(scores, valid_lens, *, fill=float("-inf"), **where):
    """(B, Tq, Tk), (B,) -> softmax over the keys with the padded keys at exactly 0."""
    real = _real(scores, valid_lens, **where)
    return torch.softmax(scores.masked_fill(~real, fill), dim=-1).nan_to_num(0.0)


def _padding_share(got, args) -> float:
    return float((got.nan_to_num(0.0) * ~_real(*args)).sum(-1).max())


def _on_queries(got, args) -> bool:
    """The learner's rows equal the unmasked softmax for the queries below each length and differ past it."""
    scores, valid_lens = args
    rows = torch.arange(scores.shape[1])[None, :] < valid_lens[:, None]  # (B, Tq): queries below the length
    free = scores.softmax(dim=-1)
    return bool((~rows).any()) and torch.allclose(got[rows], free[rows], atol=1e-5) \
        and not torch.allclose(got[~rows].nan_to_num(-1.0), free[~rows], atol=1e-5)


def _masked_probes() -> list[Probe]:  # B = Tq first, so a (B, Tk) mask runs (and is named); text 0 has 1 key
    g = torch.Generator().manual_seed(60)
    sizes = [((2, 2, 4), [1, 4]), ((3, 4, 5), [2, 5, 3]), ((1, 3, 6), [4]), ((4, 1, 3), [3, 1, 2, 3])]
    return [Probe((torch.randn(*shape, generator=g), torch.tensor(lens)), f"scores {shape}, valid_lens {lens}")
            for shape, lens in sizes]


check_masked_weights = Exercise(
    "Exercise 3", reference=masked_weights, probes=_masked_probes,
    correct="each query's weights sum to 1 over the real keys, and every padded key gets exactly 0.",
    mistakes=[
        Mistake("Your mask is on the queries' axis: it compares the lengths with the query positions, so whole rows "
                "went to zero while the padded keys still get weight. valid_lens counts keys: compare it with "
                "torch.arange(Tk), as a (B, 1, Tk) mask.", when=_on_queries, example=variant(masked_weights, axis=1)),
        Mistake(lambda got, args: f"The padded keys get weight (up to {_padding_share(got, args):.2f} of a row): the "
                "mask is missing. Key j of text b is real when j < valid_lens[b]: mask the scores with that "
                "(B, 1, Tk) mask before the softmax.", answer=lambda s, v: s.softmax(dim=-1)),
        Mistake("One key too many: the key at index valid_lens[b] gets weight. The real keys are j < valid_len "
                "(indices start at 0), not j <= valid_len.", answer=variant(masked_weights, inclusive=True)),
        Mistake("Your (B, Tk) mask has no query axis: against (B, Tq, Tk) scores its batch axis meets the queries (it "
                "runs when B = Tq), so a query got another text's lengths. Add one: mask[:, None, :], (B, 1, Tk).",
                answer=lambda s, v: s.masked_fill(torch.arange(s.shape[-1]) >= v[:, None], -torch.inf).softmax(-1)),
        Mistake("You zeroed the padded keys' weights after the softmax without renormalising: the rows no longer "
                "sum to 1. Mask the scores (-inf) before it.", answer=lambda s, v: s.softmax(dim=-1) * _real(s, v)),
        Mistake(lambda got, args: f"The padded scores were set to 0, and exp(0) is not small: the padding still takes "
                f"up to {_padding_share(got, args):.2f} of a row. Fill them with float('-inf').",
                answer=variant(masked_weights, fill=0.0)),
        Mistake("The mask is the wrong way round: the real keys get no weight and the padding all of it. True must "
                "mean may attend: torch.arange(Tk) < valid_lens, not >=.",
                when=lambda got, args: float((got.nan_to_num(0.0) * _real(*args)).abs().max()) < 1e-6
                and _padding_share(got, args) > 0.5,
                example=lambda s, v: s.masked_fill(_real(s, v), float("-inf")).softmax(-1)),
        Mistake(lambda got: "Your rows do not sum to 1 over the keys (one sums to "
                f"{float(got.nan_to_num(0.0).sum(-1).flatten()[0]):.2f}): the softmax ran over another axis. "
                "Normalise over the keys, dim=-1.",
                when=lambda got: not torch.allclose(got.sum(-1), torch.ones(got.shape[:-1]), atol=1e-4),
                example=lambda s, v: s.masked_fill(~_real(s, v), float("-inf")).softmax(dim=1)),
        Mistake("Your mask does not line up with the (B, Tq, Tk) scores: the keys are their last axis, so a mask "
                "from the lengths is (B, 1, Tk), valid_lens[:, None, None] compared with torch.arange(Tk).",
                raises=(RuntimeError, ValueError), match="size|shape|broadcast|dimension",
                example=lambda s, v: s.masked_fill(~(torch.arange(s.shape[-1])[:, None] < v[:, None, None]), 0.0)),
    ])


# --- Exercise 4: the largest weight when the queries grow 1000 times ------------------------------------------

check_largest_weight = Exercise(
    "Exercise 4", expected=1 / TK, decimals=3, read=as_number,
    diagnose=lambda got, expected, args: (
        f"Write a number between 0 and 1, such as 0.5 or 1 / 3; got {describe(got)}."
        if not isinstance(got, (int, float))
        else f"{got} is close, but not at three decimals: write three decimals, or the fraction itself."
        if abs(got - expected) < 0.01 else f"{got} is not what the next cell prints. When W_q q is huge, what is "
        "left of the key's part W_k k inside each tanh, and what does that make each key's score?"),
    correct="every hidden unit saturates, every key of a row gets the same score, and the 15 real keys of "
            "\"Sat, 7 Feb 2026\" share the weight equally.",
    mistakes=[
        Mistake("A weight of {got} is impossible: softmax weights lie between 0 and 1.",
                when=lambda got: isinstance(got, (int, float)) and not 0 <= got <= 1, example=1.5),
        Mistake("{got} means one-hot weights: dot-product weights do that, as a dot product grows with the query. "
                "An additive score cannot: tanh stops at +-1.", when=lambda got: 0.9 <= got <= 1, example=1.0),
        Mistake("{got} means the digits still share the weight, as before the scaling. At 1000 times W_q q is so "
                "large that W_k k no longer moves any hidden unit: what does each key's score become?",
                when=near(0.19, tol=0.021), example=0.2),
        Mistake("{got} is uniform over 10 things: the 10 queries (but each query's softmax runs over its keys) or "
                "the characters of \"2026.02.07\" (the question is about the first text).", when=near(0.1, tol=0.004),
                example=0.1),
        Mistake("{got} is uniform over the 8 characters of \"7.2.2026\"; the question is about the first text.",
                when=near(1 / 8, tol=0.004), example=0.125),
        Mistake("The weights of a row sum to 1 over its real keys, so the largest cannot be below their average; "
                "{got} is.", when=lambda got: 0 <= got < 1 / TK - 0.001, example=0.01),
    ])
