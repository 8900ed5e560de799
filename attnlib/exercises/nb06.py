"""Exercises of notebook 06 (additive attention), declared as data."""

from __future__ import annotations

import torch

from . import Exercise, Mistake, Probe, as_number, describe, largest_hidden, near, shape_of, variant

__all__ = ["check_features_shape", "check_largest_weight", "check_masked_weights", "check_pair_scores"]

# The running example: 3 dates ("Sat, 7 Feb 2026", "7.2.2026", "2026.02.07") padded to Tk = 15, Tq = 10 queries.
B, TQ, TK, DQ, DK, H = 3, 10, 15, 2, 3, 2


def _features_hint(got: tuple, expected: tuple, args: tuple) -> str:
    if sorted(got) == sorted(expected):
        return f"{got} has the right sizes in another order: " + (
            "a vector's h hidden units are its innermost, last axis." if got[-1] != H
            else "the texts, queries and keys come in the order the prompt lists them.")
    if len(got) == 4:
        off = [axis for axis, g, e in zip(("texts'", "queries'", "keys'", "hidden units'"), got, expected) if g != e]
        return (f"{got} has four axes, but the {' and the '.join(off)} {'axes are' if off[1:] else 'axis is'} "
                "off: take each size from the prompt's B, Tq, Tk and h.")
    return f"{got} has {len(got)} axes: the features have one each for the texts, queries, keys and hidden units."


check_features_shape = Exercise(
    "Exercise 1", expected=(B, TQ, TK, H), read=shape_of, diagnose=_features_hint,
    unreadable="Write the shape as a tuple of ints, such as (1, 2, 3, 4); got {got}.",
    correct="(B, Tq, Tk, h): one hidden vector of h numbers for every (text, query, key).", mistakes=[
        Mistake("{got} is the scores' shape, after w_v: the features hold h hidden units per pair.", (B, TQ, TK)),
        Mistake("{got} ends with an input width: W_q and W_k project both sides to h numbers, added, not concatenated.",
                when=lambda a: tuple(a) in {(B, TQ, TK, DK), (B, TQ, TK, DQ + DK)}, example=(B, TQ, TK, DK)),
        Mistake("{got} is one side only: queries and keys broadcast to an h-vector per pair.", example=(B, TQ, 1, H),
                when=lambda a: tuple(a) in ((B, TQ, H), (B, TK, H), (B, TQ, 1, H), (B, 1, TK, H))),
    ])


def pair_scores(queries, keys, W_q, W_k, w_v, *, tanh_at="sum", new_axes=(2, 1)):
    """(B, Tq, Dq), (B, Tk, Dk), W_q (h, Dq), W_k (h, Dk), w_v (h,) -> (B, Tq, Tk); the keywords make a mistake."""
    q, k = queries @ W_q.T, keys @ W_k.T  # (B, Tq, h), (B, Tk, h)
    summed = q.unsqueeze(new_axes[0]) + k.unsqueeze(new_axes[1])  # (B, Tq, 1, h) + (B, 1, Tk, h) -> (B, Tq, Tk, h)
    return (torch.tanh(summed) if tanh_at == "sum" else summed) @ w_v


def _sizes(args) -> str:
    (b, tq, dq), (tk, dk), h = args[0].shape, args[1].shape[1:], len(args[4])
    return f"B = {b}, Tq = {tq}, Tk = {tk}, Dq = {dq}, Dk = {dk}, h = {h}"


def _pair_probes() -> list[Probe]:  # Tq = Tk first: queries and keys added elementwise run, and are named
    g = torch.Generator().manual_seed(6)
    sizes = ((2, 3, 3, 5, 4, 6), (1, 2, 5, 3, 2, 4), (3, 4, 2, 2, 3, 2), (2, 3, 4, 5, 7, 3))  # B, Tq, Tk, Dq, Dk, h
    draws = [(torch.randn(b, tq, dq, generator=g), torch.randn(b, tk, dk, generator=g),
              torch.randn(h, dq, generator=g) / dq**0.5, torch.randn(h, dk, generator=g) / dk**0.5,
              torch.randn(h, generator=g)) for b, tq, tk, dq, dk, h in sizes]
    return [Probe(args, _sizes(args)) for args in draws]


check_pair_scores = Exercise(
    "Exercise 2", reference=pair_scores, probes=_pair_probes, refuse=("attnlib.additive",),
    correct="one additive score per (query, key) pair, by broadcasting (B, Tq, 1, h) + (B, 1, Tk, h).", mistakes=[
        Mistake("Your scores are section 1's cell, for one query only: give the projected queries and keys an axis "
                "each for the other.", lambda q, k, W_q, W_k, w_v: torch.tanh(W_q @ q[0, 0] + k @ W_k.T) @ w_v),
        Mistake(lambda got: f"Your scores have shape {tuple(got.shape)}, one per query: queries and keys were added "
                "elementwise; give each side an axis for the other with unsqueeze.", when=lambda got: got.dim() == 2,
                example=lambda q, k, W_q, W_k, w_v: torch.tanh(q @ W_q.T + k @ W_k.T) @ w_v),
        Mistake("Your scores are transposed, (B, Tk, Tq): the sides' new axes are the wrong way round.",
                variant(pair_scores, new_axes=(1, 2))),
        Mistake("Your scores are dot products, dot-product attention's: the additive score adds the projections, then "
                "applies tanh and w_v.", lambda q, k, W_q, W_k, w_v: (q @ W_q.T) @ (k @ W_k.T).transpose(1, 2)),
        Mistake("No tanh: without it the query's part is constant along its row, and the softmax ignores it; apply "
                "tanh to the sum.", variant(pair_scores, tanh_at="none")),
        Mistake("Your rows sum to 1: these are softmax weights, not scores.", lambda *a: pair_scores(*a).softmax(-1)),
    ])


def _real(scores: torch.Tensor, valid_lens: torch.Tensor, *, axis: int = -1, inclusive: bool = False):
    """True for the real keys, (B, 1, Tk); axis 1 compares the lengths with the queries instead, (B, Tq, 1)."""
    positions = torch.arange(scores.shape[axis])[:, None] if axis == 1 else torch.arange(scores.shape[-1])
    limit = valid_lens[:, None, None]
    return positions <= limit if inclusive else positions < limit


def masked_weights(scores, valid_lens, *, fill=float("-inf"), **where):
    """(B, Tq, Tk), (B,) -> softmax over the keys with the padded keys at exactly 0."""
    return torch.softmax(scores.masked_fill(~_real(scores, valid_lens, **where), fill), dim=-1).nan_to_num(0.0)


def _padding_share(got, args) -> float:
    return float((got.nan_to_num(0.0) * ~_real(*args)).sum(-1).max())


def _on_queries(got, args) -> bool:
    """The learner's rows equal the unmasked softmax for the queries below each length and differ past it."""
    scores, valid_lens = args
    rows = torch.arange(scores.shape[1])[None, :] < valid_lens[:, None]  # (B, Tq): queries below the length
    free = scores.softmax(dim=-1)
    return bool((~rows).any()) and torch.allclose(got[rows], free[rows], atol=1e-5) \
        and not torch.allclose(got[~rows].nan_to_num(-1.0), free[~rows], atol=1e-5)


def _masked_probes() -> list[Probe]:  # B = Tq first, so a (B, Tk) mask runs (and is named); text 0 has 1 key,
    g = torch.Generator().manual_seed(60)  # and the longest text is padded too (one length for all is not right)
    sizes = [((2, 2, 4), [1, 3]), ((3, 4, 5), [2, 5, 3]), ((1, 3, 6), [4]), ((4, 1, 3), [3, 1, 2, 3])]
    return [Probe((torch.randn(*shape, generator=g), torch.tensor(lens)), f"scores {shape}, valid_lens {lens}")
            for shape, lens in sizes]


check_masked_weights = Exercise(
    "Exercise 3", reference=masked_weights, probes=_masked_probes, refuse=("attnlib.masks",),
    correct="each query's weights sum to 1 over the real keys, and every padded key gets exactly 0.", mistakes=[
        Mistake("Your mask is on the queries' axis: valid_lens counts keys, so compare it with torch.arange(Tk), "
                "a (B, 1, Tk) mask.", when=_on_queries, example=variant(masked_weights, axis=1)),
        Mistake(lambda got, args: f"The padded keys get weight, up to {_padding_share(got, args):.2f} of a row: the "
                "mask is missing; key j of text b is real when j < valid_lens[b].", lambda s, v: s.softmax(dim=-1)),
        Mistake("One key too many: the real keys are j < valid_len (indices start at 0), not j <= valid_len.",
                variant(masked_weights, inclusive=True)),
        Mistake("One key too few: the last real key gets no weight; indices start at 0, so compare with the length "
                "itself.", lambda s, v: masked_weights(s, v - 1)),
        Mistake("Your (B, Tk) mask has no query axis, so its batch axis met the queries: make it (B, 1, Tk).",
                lambda s, v: s.masked_fill(torch.arange(s.shape[-1]) >= v[:, None], -torch.inf).softmax(-1)),
        Mistake("You zeroed the padded keys' weights after the softmax without renormalising: mask the scores (-inf) "
                "before it.", lambda s, v: s.softmax(dim=-1) * _real(s, v)),
        Mistake(lambda got, args: f"The padded scores were set to 0, and exp(0) is not small: the padding takes up "
                f"to {_padding_share(got, args):.2f} of a row; fill with -inf.", variant(masked_weights, fill=0.0)),
        Mistake("Your mask works the wrong way round: True means may attend, and masked_fill fills where it is True.",
                when=lambda got, args: float((got.nan_to_num(0.0) * _real(*args)).abs().max()) < 1e-6
                and _padding_share(got, args) > 0.5,
                example=lambda s, v: s.masked_fill(_real(s, v), -torch.inf).softmax(-1)),
        Mistake("Your values are negative (or -inf), which a weight never is: these are scores, or a log_softmax.",
                when=lambda got: bool((got < 0).any()), example=lambda s, v: s.masked_fill(~_real(s, v), -torch.inf)),
        Mistake(lambda got: f"Your softmax ran over another axis than the keys, dim=-1: a row sums to "
                f"{float(got.nan_to_num(0.0).sum(-1).flatten()[0]):.2f}, not 1.",
                when=lambda got: not torch.allclose(got.sum(-1), torch.ones(got.shape[:-1]), atol=1e-4),
                example=lambda s, v: s.masked_fill(~_real(s, v), float("-inf")).softmax(dim=1)),
        Mistake("Your mask does not line up with the (B, Tq, Tk) scores: a mask from the lengths is (B, 1, Tk).",
                raises=(RuntimeError, ValueError), match="size|shape|broadcast|dimension",
                example=lambda s, v: s.masked_fill(~(torch.arange(s.shape[-1])[:, None] < v[:, None, None]), 0.0)),
        Mistake(lambda got, args: f"Your padded keys get weights up to {largest_hidden(got, _real(*args)):.1e}, "
                "not 0: a finite fill leaves exp(fill - max) to them; take one whose exp is 0.", always=True,
                when=lambda got, args: 1e-30 < largest_hidden(got, _real(*args)) < 1e-3,
                example=variant(masked_weights, fill=-15.0)),
    ])


check_largest_weight = Exercise(
    "Exercise 4", expected=1 / TK, decimals=3, read=as_number,
    diagnose=lambda got, expected, args: (
        f"Write a number between 0 and 1, such as 0.5 or 1 / 3; got {describe(got)}."
        if not isinstance(got, (int, float))
        else f"{got} is near, but not right at three decimals: work the weight out as a fraction, then round it."
        if abs(got - expected) < 0.01 else f"{got} is not what the next cell prints: when W_q q is huge, what is "
        "left of W_k k inside each tanh?"),
    correct="every hidden unit saturates, every key of a row gets the same score, and the 15 real keys of "
            "\"Sat, 7 Feb 2026\" share the weight equally.", mistakes=[
        Mistake("{got} means one-hot weights, as dot products give: an additive score cannot, as tanh stops at +-1.",
                when=lambda got: 0.9 <= got <= 1, example=1.0),
        Mistake("{got} means the digits share the weight as before the scaling: at 1000 times, what is left of W_k k?",
                when=near(0.19, tol=0.021), example=0.2),
        Mistake("{got} is uniform over 10 queries or characters: the softmax runs over the first text's keys.",
                when=near(0.1, tol=0.004), example=0.1),
    ])
