"""Exercises of notebook 06 (additive attention), declared as data: each ``check_*`` below is an
:class:`~attnlib.exercises.Exercise` that the notebook's check cell calls."""

from __future__ import annotations

import torch

from ..attention import masked_softmax
from . import Exercise, Mistake, Probe, as_number, describe, matmul_shapes, near, shape_of, variant

__all__ = ["check_features_shape", "check_largest_weight", "check_masked_weights", "check_pair_scores"]

# The running example: 3 texts of one date ("Sat, 7 Feb 2026", "7.2.2026", "2026.02.07", padded to Tk = 15),
# Tq = 10 queries (the characters of "2026-02-07"), queries of width Dq = 2, keys of width Dk = 3, h = 2.
B, TQ, TK, DQ, DK, H = 3, 10, 15, 2, 3, 2

# --- Exercise 1: the shape of tanh(W_q q + W_k k) over every pair ------------------------------------------

def _features_hint(got: tuple, expected: tuple) -> str:
    """The general hint: the axes that are out of place, or whose size is off (never the whole shape)."""
    if sorted(got) == sorted(expected):
        return f"{got} has the right sizes in another order: " + (
            "each (text, query, key) holds a vector of h hidden units, and a vector's entries are the innermost, "
            "last axis." if got[-1] != H else "the texts, queries and keys come in the order the prompt lists them.")
    if len(got) == 4:
        off = [axis for axis, g, e in zip(("texts'", "queries'", "keys'", "hidden units'"), got, expected) if g != e]
        return (f"{got} has four axes, but the {' and the '.join(off)} {'axes are' if off[1:] else 'axis is'} "
                "not the right size: take each size from the prompt's B, Tq, Tk and h.")
    return f"{got} has {len(got)} axes: the features have one each for the texts, queries, keys and hidden units."


check_features_shape = Exercise(
    "Exercise 1", expected=(B, TQ, TK, H), read=shape_of,
    unreadable="Write the shape as a tuple of ints, such as (1, 2, 3, 4); got {got}.",
    correct="(B, Tq, Tk, h): one hidden vector of h numbers for every (text, query, key).",
    diagnose=lambda got, expected, args: _features_hint(got, expected),
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
        Mistake("{got} has as many keys as queries: 10 is Tq (or the length of \"2026.02.07\"). The keys of a text "
                "are its characters, padded to the longest text.", answer=(B, TQ, TQ, H)),
        Mistake("{got} stops at the shortest texts. The keys are padded to the longest text, and every padded "
                "position is a key too (the mask comes later).", answer=(B, TQ, 8, H)),
        Mistake("{got} is one side only, the projected queries or keys (with or without an axis of size 1). The "
                "two broadcast against each other: one h-vector for every (query, key) pair.", example=(B, TQ, 1, H),
                when=lambda a: tuple(a) in ((B, TQ, H), (B, TK, H), (B, TQ, 1, H), (B, 1, TK, H))),
        Mistake("{got} leaves out the batch: every text has its own pairs.", answer=(TQ, TK, H)),
    ])


# --- Exercise 2: the scores of every pair, by broadcasting ---------------------------------------------------

def pair_scores(queries, keys, W_q, W_k, w_v, *, tanh_at="sum", reduce="w_v", new_axes=(2, 1), squash=torch.tanh):
    """(B, Tq, Dq), (B, Tk, Dk), W_q (h, Dq), W_k (h, Dk), w_v (h,) -> (B, Tq, Tk); the keywords make a mistake."""
    q, k = queries @ W_q.T, keys @ W_k.T  # (B, Tq, h), (B, Tk, h)
    if tanh_at == "sides":
        q, k = torch.tanh(q), torch.tanh(k)
    summed = q.unsqueeze(new_axes[0]) + k.unsqueeze(new_axes[1])  # (B, Tq, 1, h) + (B, 1, Tk, h) -> (B, Tq, Tk, h)
    features = squash(summed) if tanh_at == "sum" else summed
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


def _sizes(args) -> str:
    (b, tq, dq), (tk, dk), h = args[0].shape, args[1].shape[1:], len(args[4])
    return f"B = {b}, Tq = {tq}, Tk = {tk}, Dq = {dq}, Dk = {dk}, h = {h}"


def _misused_weight(err, args) -> str:
    """How the product torch refused ("... cannot be multiplied (6x5 and 4x6)") used a weight: "stored" (as stored,
    not transposed), "swapped" (the other side's), "notebook" (a size of the notebook's W_q or W_k only); else ""."""
    found = matmul_shapes(err)
    if not found:
        return ""
    (_, width), (rows, columns) = found
    (dq, dk), h = (w.shape[1] for w in args[2:4]), len(args[4])
    if (rows, columns) in {(h, dq), (h, dk)}:
        return "stored"
    if (width, rows, columns) in {(dq, dk, h), (dk, dq, h)}:
        return "swapped"
    notebook = {(H, DQ), (DQ, H), (H, DK), (DK, H)} - {(h, dq), (h, dk), (dq, h), (dk, h)}
    return "notebook" if (rows, columns) in notebook else ""


check_pair_scores = Exercise(
    "Exercise 2", reference=pair_scores, probes=_pair_probes, refuse=("attnlib.additive",),
    correct="one additive score per (query, key) pair, by broadcasting (B, Tq, 1, h) + (B, 1, Tk, h).",
    mistakes=[
        Mistake("Your scores have one query only, the first of the first text, against every key: section 1's cell, "
                "made for one query. Here every query of every text meets every key of its text: give the projected "
                "queries and keys an axis each for the other.",
                answer=lambda q, k, W_q, W_k, w_v: torch.tanh(W_q @ q[0, 0] + k @ W_k.T) @ w_v),
        Mistake(lambda got: f"Your scores have shape {tuple(got.shape)}, one per query, not one per pair: the queries "
                "and keys were added elementwise (query i with key i only, which runs only when Tq = Tk). Give each "
                "side an axis for the other with unsqueeze.", when=lambda got: got.dim() == 2,
                example=lambda q, k, W_q, W_k, w_v: torch.tanh(q @ W_q.T + k @ W_k.T) @ w_v),
        Mistake("Your scores are transposed, (B, Tk, Tq), keys down the rows: the new axes you gave the two sides are "
                "the wrong way round.", answer=variant(pair_scores, new_axes=(1, 2))),
        Mistake("Your scores are dot products of the projected query and key, dot-product attention's score. The "
                "additive score adds the two projections, squashes the sum with tanh and weighs it with w_v.",
                answer=lambda q, k, W_q, W_k, w_v: (q @ W_q.T) @ (k @ W_k.T).transpose(1, 2)),
        Mistake("tanh came after w_v, squashing each score on its own. The formula squashes the h hidden units "
                "first and then weighs them: w_v . tanh(W_q q + W_k k).", answer=variant(pair_scores, tanh_at="after")),
        Mistake("You applied tanh to each side on its own and added the results: the sum goes inside the tanh, so "
                "that the query and the key meet before the squashing.", answer=variant(pair_scores, tanh_at="sides")),
        Mistake("You summed each pair's h hidden units: w_v weighs them, each with its own weight (a plain sum is "
                "w_v full of ones).", answer=variant(pair_scores, reduce="sum")),
        Mistake("No tanh: without it the query's part of the score is constant along its row, and the softmax ignores "
                "it. Apply tanh to the (B, Tq, Tk, h) sum before w_v.", answer=variant(pair_scores, tanh_at="none")),
        Mistake("Your scores keep a last axis of size 1: w_v went in as a column (h, 1). The scores are (B, Tq, Tk): "
                "use w_v as it is given, (h,), or drop that axis.",
                when=lambda got: got.dim() == 4 and got.shape[-1] == 1,
                example=lambda *a: pair_scores(*a[:4], a[4][:, None])),
        Mistake(lambda got: f"Your output has shape {tuple(got.shape)}: the (B, Tq, Tk, h) tanh features. Finish with "
                "w_v, which turns each pair's h numbers into one score.", when=lambda got: got.dim() == 4,
                example=lambda *a: torch.tanh((a[0] @ a[2].T).unsqueeze(2) + (a[1] @ a[3].T).unsqueeze(1))),
        Mistake("Your rows sum to 1: you returned softmax weights. The exercise asks for the raw scores; the softmax "
                "comes later, after the mask.", answer=lambda *a: pair_scores(*a).softmax(dim=-1)),
        Mistake("Your scores are right for the first text only: the others met the first text's keys (or queries). "
                "Every text's queries meet its own keys.", example=lambda q, k, *w: pair_scores(q, k[:1], *w),
                when=lambda got, args: got.shape[0] > 1 and torch.allclose(got[0], pair_scores(*args)[0], atol=1e-5)),
        Mistake("You used relu: the additive score squashes the sum with tanh, which keeps negative parts (relu zeroes "
                "them).", answer=variant(pair_scores, squash=torch.relu)),
        Mistake("Your scores are the weighted sums divided by h, a mean over the hidden units: the score is w_v's "
                "weighted sum itself.", answer=lambda *a: pair_scores(*a) / len(a[4])),
        Mistake("You used |w_v|: the signs of w_v matter, a negative weight lowers the score.",
                answer=lambda *a: pair_scores(*a[:4], a[4].abs())),
        Mistake(lambda err, args: f"Your function raised RuntimeError on {_sizes(args)}: a weight went into a "
                "product as it is stored. W_q is (h, Dq) and W_k (h, Dk), as in section 1: a (..., Dq) input needs "
                "W_q's transpose, and the keys W_k's.", raises=RuntimeError,
                when=lambda err, args: _misused_weight(err, args) == "stored",
                example=lambda q, k, W_q, W_k, w_v: torch.tanh((q @ W_q).unsqueeze(2)) @ w_v),
        Mistake(lambda err, args: f"Your function raised RuntimeError on {_sizes(args)}: a side met the other "
                "side's weight. W_q (h, Dq) projects the queries and W_k (h, Dk) the keys.", raises=RuntimeError,
                when=lambda err, args: _misused_weight(err, args) == "swapped",
                example=lambda q, k, W_q, W_k, w_v: torch.tanh((q @ W_k.T).unsqueeze(2)) @ w_v),
        Mistake(lambda err, args: f"Your function raised RuntimeError on {_sizes(args)}: a product met a matrix "
                f"of the size of the notebook's W_q or W_k (h = {H}, Dq = {DQ}, Dk = {DK}), none of the weights the "
                "function is given. Use the function's own arguments.", raises=RuntimeError,
                when=lambda err, args: _misused_weight(err, args) == "notebook",
                example=lambda q, k, W_q, W_k, w_v: q @ torch.ones(H, DK).T),
        Mistake(lambda err, args: f"Your function raised {type(err).__name__} on {_sizes(args)}: two sizes that must "
                "agree do not. W_q is (h, Dq), W_k (h, Dk) and w_v (h,): check what each product meets.",
                raises=RuntimeError, match="size|shape|dimension|mat",
                example=lambda q, k, W_q, W_k, w_v: torch.tanh(q @ W_q.T) @ w_v[:1]),
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


def _masked_probes() -> list[Probe]:  # B = Tq first, so a (B, Tk) mask runs (and is named); text 0 has 1 key,
    g = torch.Generator().manual_seed(60)  # and the longest text is padded too (one length for all is not right)
    sizes = [((2, 2, 4), [1, 3]), ((3, 4, 5), [2, 5, 3]), ((1, 3, 6), [4]), ((4, 1, 3), [3, 1, 2, 3])]
    return [Probe((torch.randn(*shape, generator=g), torch.tensor(lens)), f"scores {shape}, valid_lens {lens}")
            for shape, lens in sizes]


check_masked_weights = Exercise(
    "Exercise 3", reference=masked_weights, probes=_masked_probes, refuse=("attnlib.masks",),
    correct="each query's weights sum to 1 over the real keys, and every padded key gets exactly 0.",
    mistakes=[
        Mistake("Your mask is on the queries' axis: it compares the lengths with the query positions, so whole rows "
                "went to zero while the padded keys still get weight. valid_lens counts keys: compare it with "
                "torch.arange(Tk), as a (B, 1, Tk) mask.", when=_on_queries, example=variant(masked_weights, axis=1)),
        Mistake(lambda got, args: f"The padded keys get weight (up to {_padding_share(got, args):.2f} of a row): the "
                "mask is missing. Key j of text b is real when j < valid_lens[b]: mask the scores with that "
                "(B, 1, Tk) mask before the softmax.", answer=lambda s, v: s.softmax(dim=-1)),
        Mistake("Every text is masked with the longest length: the padding of the shorter texts still gets weight. "
                "Each text has its own length, valid_lens[b].",
                answer=lambda s, v: masked_weights(s, v.max().expand_as(v))),
        Mistake("One key too many: the key at index valid_lens[b] gets weight. The real keys are j < valid_len "
                "(indices start at 0), not j <= valid_len.", answer=variant(masked_weights, inclusive=True)),
        Mistake("One key too few: the last real key of each text, at index valid_lens[b] - 1, gets no weight (and a "
                "text of one key none at all). Indices start at 0, so the n real keys are 0 to n - 1: compare the "
                "positions with the length itself.", answer=lambda s, v: masked_weights(s, v - 1)),
        Mistake("Your (B, Tk) mask has no query axis: against (B, Tq, Tk) scores its batch axis meets the queries (it "
                "runs when B = Tq), so a query got another text's lengths. Add one: mask[:, None, :], (B, 1, Tk).",
                answer=lambda s, v: s.masked_fill(torch.arange(s.shape[-1]) >= v[:, None], -torch.inf).softmax(-1)),
        Mistake("You zeroed the padded keys' weights after the softmax without renormalising: the rows no longer "
                "sum to 1. Mask the scores (-inf) before it.", answer=lambda s, v: s.softmax(dim=-1) * _real(s, v)),
        Mistake(lambda got, args: f"The padded scores were set to 0, and exp(0) is not small: the padding still takes "
                f"up to {_padding_share(got, args):.2f} of a row. Fill them with float('-inf').",
                answer=variant(masked_weights, fill=0.0)),
        Mistake("Your mask works the wrong way round: the real keys get no weight and the padding all of it. True "
                "means may attend, and masked_fill fills where its mask is True: -inf must go to the padding.",
                when=lambda got, args: float((got.nan_to_num(0.0) * _real(*args)).abs().max()) < 1e-6
                and _padding_share(got, args) > 0.5,
                example=lambda s, v: s.masked_fill(_real(s, v), float("-inf")).softmax(-1)),
        Mistake("Your values are negative (or -inf), which a weight never is: these are scores, or a log_softmax. "
                "The weights are the softmax of the masked scores over the keys.",
                when=lambda got: bool((got < 0).any()), example=lambda s, v: s.masked_fill(~_real(s, v), -torch.inf)),
        Mistake(lambda got: "Your rows do not sum to 1 over the keys (one sums to "
                f"{float(got.nan_to_num(0.0).sum(-1).flatten()[0]):.2f}): the softmax ran over another axis. "
                "Normalise over the keys, dim=-1.",
                when=lambda got: not torch.allclose(got.sum(-1), torch.ones(got.shape[:-1]), atol=1e-4),
                example=lambda s, v: s.masked_fill(~_real(s, v), float("-inf")).softmax(dim=1)),
        Mistake("Your function uses the notebook's mask, made for the running example's 3 texts of 15 keys: build "
                "the mask inside the function, from valid_lens and the scores' own number of keys.",
                raises=(RuntimeError, ValueError), match=rf"\({B}, 1, {TK}\)",
                example=lambda s, v: masked_softmax(s, torch.ones(B, 1, TK, dtype=torch.bool))),
        Mistake(f"Your mask has {TK} keys whatever the scores, the running example's Tk (a {TK} written in, or the "
                "notebook's mask): take the number of keys from the scores.", raises=(RuntimeError, ValueError),
                match=rf"\b{TK}\b", example=lambda s, v: s.masked_fill(torch.arange(TK) >= v[:, None, None], 0.0)),
        Mistake(f"Your mask has {B} texts whatever the scores: it is built from the notebook's valid_lens (the running "
                "example's 3 lengths), not from the lengths the function is given.", raises=(RuntimeError, ValueError),
                match=rf"\({B}[,)]", when=lambda err, args: len(args[1]) != B,
                example=lambda s, v: masked_weights(s, torch.tensor([15, 8, 10]))),
        Mistake("Your mask does not line up with the (B, Tq, Tk) scores: the keys are their last axis, so a mask "
                "from the lengths is (B, 1, Tk), as section 3's.",
                raises=(RuntimeError, ValueError), match="size|shape|broadcast|dimension",
                example=lambda s, v: s.masked_fill(~(torch.arange(s.shape[-1])[:, None] < v[:, None, None]), 0.0)),
    ])


# --- Exercise 4: the largest weight when the queries grow 1000 times ------------------------------------------

check_largest_weight = Exercise(
    "Exercise 4", expected=1 / TK, decimals=3, read=as_number,
    diagnose=lambda got, expected, args: (
        f"Write a number between 0 and 1, such as 0.5 or 1 / 3; got {describe(got)}."
        if not isinstance(got, (int, float))
        else f"{got} is near, but not right at three decimals: work the weight out exactly (a fraction), then round it."
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
        Mistake("Close, but not at three decimals: write three decimals, or the fraction itself.",
                when=near(round(1 / TK, 2), tol=1e-6), example=0.07),
        Mistake("That is the weight at 5 times, the next cell's third line: there the hidden units are close to "
                "saturation, not saturated. At 1000 times, what is left of W_k k inside each tanh?",
                when=near(0.0699, tol=0.0005), example=0.0699),
        Mistake("That is a weight shared equally by 14 keys: count the real keys of \"Sat, 7 Feb 2026\" again (the "
                "comma and the spaces are keys too).", when=near(1 / (TK - 1), tol=0.0006), example=1 / 14),
    ])
