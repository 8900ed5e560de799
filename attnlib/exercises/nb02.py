"""Exercises of notebook 02 (over which axis softmax normalises), declared as data.

book/teachers.md quotes Exercise 4's line for the naive softmax word for word."""

from __future__ import annotations

import torch

from . import Exercise, Mistake, Probe, Refused, as_number, plain, row_sums, same, variant, watched

__all__ = ["check_key1_column", "check_key_major_weights", "check_stable_softmax", "check_tau_limits",
           "check_temperature_softmax"]


def _pair(got: tuple) -> str:
    return "(" + ", ".join(f"{v:.4g}" for v in got) + ")"


def _sums_to_one(got: torch.Tensor, dim: int) -> bool:
    sums = got.detach().real.double().sum(dim=dim)
    return bool(torch.allclose(sums, torch.ones_like(sums), atol=1e-4))


# --- Exercise 1: key 1's column of softmax(scores_hand, dim=-2), scores_hand = [[2, 0, 0], [0, 0, 2]] ---------

check_key1_column = Exercise(
    "Exercise 1", expected=(0.5, 0.5), decimals=2,
    correct="Two equal scores in a column of 2 share the key's unit: 0.5 each, though neither query asked for key 1.",
    diagnose=lambda got, expected, args: "Softmax with dim=-2 normalises key 1's column, its two scores, over the 2 "
    "queries." if isinstance(got, tuple) and len(got) == 2 else "Write the two weights of key 1's column, query 0's "
    "then query 1's, as a tuple of numbers.",
    mistakes=[
        Mistake(lambda got: f"{_pair(got)} is key 1's weight with dim=-1, where each query's row is normalised over "
                "the 3 keys. With dim=-2 each column is normalised over the 2 queries.", answer=(0.1065, 0.1065)),
        Mistake("A score of 0 does not give a weight of 0: e^0 = 1. Compare the two scores of key 1's column, then "
                "normalise the column over the 2 queries.", answer=(0.0, 0.0)),
        Mistake(lambda got: f"{_pair(got)} splits one unit over the 3 keys; dim=-2 normalises over the 2 queries.",
                answer=(1 / 3, 1 / 3)),
        Mistake(lambda got: f"{_pair(got)} has 3 numbers, one per key, as a query's row does: key 1's column holds "
                "one weight per query.", when=lambda got: len(got) == 3, example=(0.88, 0.5, 0.12)),
        Mistake(lambda got: f"{_pair(got)} is another key's column: key 1 is the middle one (keys count from 0).",
                when=lambda got: len(got) == 2 and abs(max(got) - 0.8808) < 0.01 and abs(min(got) - 0.1192) < 0.01,
                example=(0.88, 0.12)),
        Mistake(lambda got: f"Your column sums to {sum(got):.4g}: with dim=-2 every key's column sums to 1.",
                when=lambda got: len(got) == 2 and abs(sum(got) - 1) > 0.02, example=(0.3, 0.4)),
    ])


# --- Exercise 2: weights from key-major scores (..., Tk, Tq) --------------------------------------------


def key_major_weights(scores: torch.Tensor) -> torch.Tensor:
    """Scores (..., Tk, Tq), as ``key @ query.mT`` gives them -> weights (..., Tq, Tk), each query's row summing to 1"""
    return torch.softmax(scores.transpose(-2, -1), dim=-1)


HAND = torch.tensor([[2.0, 0.0], [0.0, 0.0], [0.0, 2.0]])  # the hand-made lookup, key-major: (Tk, Tq) = (3, 2)


def _key_major_probes() -> list[Probe]:
    g = torch.Generator().manual_seed(2)
    return [Probe((HAND,), "the hand-made lookup, (Tk, Tq) = (3, 2)"),
            Probe((torch.randn(2, 5, 4, generator=g),), "(B, Tk, Tq) = (2, 5, 4)"),
            Probe((torch.randn(2, 4, 4, generator=g),), "(B, Tk, Tq) = (2, 4, 4)"),
            Probe((torch.randn(2, 3, 6, 4, generator=g),), "(B, H, Tk, Tq) = (2, 3, 6, 4)"),
            Probe((torch.randn(1, 4, 3, generator=g),), "a batch of one, (B, Tk, Tq) = (1, 4, 3)")]


def _scale(got: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
    """k per row where log(got) = k * scores + a constant of the row (weights = softmax(k * scores)); NaN elsewhere."""
    a, b = (t.real.double() - t.real.double().mean(-1, keepdim=True) for t in (got.log(), scores))
    k = (a * b).sum(-1) / (b * b).sum(-1)
    return torch.where(torch.isclose(a, k[..., None] * b, atol=1e-4).all(-1), k, torch.nan)


_ALL_AXES = ("Your function is right on a matrix but not with a batch in front: `.T`, transpose(0, 1) or "
             "transpose(0, -1) move the batch axis. Swap only the last two axes.")

check_key_major_weights = Exercise(
    "Exercise 2", reference=key_major_weights, probes=_key_major_probes,
    diagnose=lambda got, expected, args: None if _sums_to_one(got, -1) else f"Your weights' rows sum to "
    f"{row_sums(got)}: each row of the result is one query, and its weights over the keys must sum to 1.",
    correct="The keys are the axis to normalise over, wherever they sit; the result is back in (..., Tq, Tk).",
    mistakes=[
        Mistake("Your softmax ran over the last axis, which here is the queries (on the 2-D hand-made lookup so does "
                "dim=1, an axis counted from the front): each key's weights over the queries sum to 1. Normalise over "
                "the keys' axis, counted from the back.", answer=lambda s: torch.softmax(s, -1).mT),
        Mistake("Your softmax ran over the last axis, which here is the queries, and the result is still key-major. "
                "Normalise over the keys, and return one row per query.", answer=variant(torch.softmax, dim=-1)),
        Mistake("Your weights are normalised over the keys, but still laid out (..., Tk, Tq): return them as "
                "(..., Tq, Tk), one row per query.", answer=variant(torch.softmax, dim=-2)),
        Mistake(_ALL_AXES, when=lambda got, args: got.shape[:-2] != args[0].shape[:-2]
                and sorted(got.shape) == sorted(args[0].shape), example=lambda s: torch.softmax(s.T, -1)),
        Mistake("Your weights have the right shape, but reshape (or view) only regroups the numbers in their stored "
                "order: it does not swap axes, so a row mixes several queries' scores. Swap the two axes instead.",
                answer=lambda s: torch.softmax(s.reshape(*s.shape[:-2], s.shape[-1], s.shape[-2]), -1)),
        Mistake("Your rows sum to 1, but they are the scores divided by their sum, without exp: a negative score "
                "would get a negative weight. Softmax normalises exponentials.",
                answer=lambda s: s.mT / s.mT.sum(-1, keepdim=True)),
        Mistake(lambda got, args: f"On scores of shape {tuple(args[0].shape)} your function returns the hand-made "
                "lookup's weights again: it reads a notebook variable (scores_hand?) instead of its argument, scores.",
                when=lambda got, args: args[0].shape != HAND.shape and same(got, key_major_weights(HAND)),
                example=lambda s: key_major_weights(HAND)),
        Mistake(lambda got, args: f"On scores of shape {tuple(args[0].shape)} your result has shape "
                f"{tuple(got.shape)}: an axis of size 1 was dropped (.squeeze()?). Keep every axis in front.",
                when=lambda got, args: got.dim() < args[0].dim() and 1 in args[0].shape,
                example=lambda s: torch.softmax(s.mT, -1).squeeze()),
        Mistake(lambda got, args: f"Your weights are {'flatter' if _scale(got, args[0].mT).mean() < 1 else 'sharper'} "
                "than the softmax of the scores: something scales them (a temperature, such as the 1/sqrt(d_k) of "
                "section 5) that this exercise does not ask for.", when=lambda got, args: bool(
                    (_scale(got, args[0].mT) > 0).all()), example=lambda s: torch.softmax(s.mT / 2, -1)),
        Mistake(lambda err, args: f"Your function raised {type(err).__name__} on {args[0].dim()}-D scores: it numbers "
                "an axis from the front (dim=1, transpose(1, 2), permute(0, 2, 1)), which fits one number of axes "
                "only. Count from the back, as section 4 does.", raises=(IndexError, RuntimeError),
                match="out of range|number of dimensions", example=lambda s: torch.softmax(s, 1).transpose(1, 2)),
    ])


# --- Exercise 3: the largest weight of the row [2, 2, 0] (a tie at the top) at tau = 0.01 and tau = 100 -----

TIED = torch.tensor([2.0, 2.0, 0.0])


def _taus(small: float, large: float) -> dict:
    return {"max_at_small_tau": small, "max_at_large_tau": large}


check_tau_limits = Exercise(
    "Exercise 3", answers=("max_at_small_tau", "max_at_large_tau"), read=as_number, decimals=2,
    expected=_taus(0.5, torch.softmax(TIED / 100, -1).max().item()),
    correct="A tiny tau gives all the weight to the top score, shared by the keys that tie for it; a huge tau "
            "makes the row uniform. The order never changes.",
    diagnose=lambda got, expected, args: "Push the table of this section to its extremes: what does dividing "
                                         "[2, 2, 0] by 0.01, and by 100, do to the gaps between the scores?",
    mistakes=[
        Mistake("A weight lies between 0 and 1: the weights of a row are shares of one unit.",
                when=lambda got: not all(0 <= v <= 1 for v in got.values()), example=_taus(1.5, 0.5)),
        Mistake("You swapped them. A small tau stretches the gaps between the scores, so the top score takes all the "
                "weight; a large tau shrinks every score toward 0, and nearly equal scores give nearly equal weights.",
                when=lambda got: abs(got["max_at_small_tau"] - 1 / 3) < 0.02 and got["max_at_large_tau"] >= 0.5,
                example=_taus(0.34, 0.5)),
        Mistake(lambda got: f"At tau = 0.01 you wrote {got['max_at_small_tau']:.4g}: the top score does take "
                "everything, but two keys tie for it here. What do equal scores get, at any temperature?",
                when=lambda got: got["max_at_small_tau"] > 0.52, example=_taus(1.0, 0.34)),
        Mistake(lambda got: f"At tau = 100 you wrote {got['max_at_large_tau']:.4g}: every score / 100 is close to 0, "
                "and softmax turns equal scores into equal weights, not zero ones.",
                when=lambda got: got["max_at_large_tau"] < 0.05, example=_taus(0.5, 0.0)),
        Mistake("At tau = 100 you kept the tie's split: dividing by 100 brings the third key's score, 0, close to the "
                "other two as well, and all three scores become nearly equal.",
                when=lambda got: abs(got["max_at_large_tau"] - 0.5) < 0.02, example=_taus(0.5, 0.5)),
        Mistake(lambda got: f"At tau = 0.01 you wrote {got['max_at_small_tau']:.4g}, the third key's weight, the "
                "smallest of the row: the question asks for the largest.",
                when=lambda got: got["max_at_small_tau"] < 0.05, example=_taus(0.0, 0.34)),
        Mistake(lambda got: f"At tau = 0.01 you wrote {got['max_at_small_tau']:.4g}: dividing by 0.01 stretches the "
                "gaps between the scores a hundredfold, so the third key's share vanishes.",
                when=lambda got: got["max_at_small_tau"] < 0.4899, example=_taus(0.47, 0.34)),
        Mistake(lambda got: f"At tau = 100 you wrote {got['max_at_large_tau']:.4g}: the largest of three weights that "
                "sum to 1 is never below their mean.", when=lambda got: got["max_at_large_tau"] < 0.325,
                example=_taus(0.5, 0.32)),
    ])


# --- Exercise 4: a softmax over the last axis that never overflows ---------------------------------------

BIG = torch.tensor([[1.0, 2.0, 3.0], [100.0, 101.0, 103.0], [-1000.0, -1001.0, -1003.0]])  # 3 rows, Tk = 3
WIDE = ([[0.0, 200.0]], [[-1000.0, 0.0, 5.0]])  # rows where subtracting anything but the maximum overflows


def _naive(x: torch.Tensor, keepdim: bool = True, dim: int = -1) -> torch.Tensor:
    e = torch.exp(x)
    return e / e.sum(dim=dim, keepdim=keepdim)


def _nan_rows(got: torch.Tensor) -> str:
    rows = got.reshape(-1, got.shape[-1])
    return f"{int((~rows.isfinite()).any(dim=-1).sum())} of your {rows.shape[0]} rows"


check_stable_softmax = Exercise(
    "Exercise 4", reference=lambda x: torch.softmax(*plain(x), dim=-1), refuse=("attnlib.attention",),
    probes=lambda: [Probe(watched(x, functions=("softmax", "log_softmax", "scaled_dot_product_attention")), label)
                    for x, label in [(BIG, ""), *((torch.tensor(w), f"the row {w[0]}") for w in WIDE),
                                     (5 * torch.randn(2, 3, 4, 5, generator=torch.Generator().manual_seed(3)), "")]],
    correct="Rows near 100 and -1000 come out finite and equal to torch.softmax.",
    mistakes=[
        Mistake("Your function calls torch's softmax (torch.softmax, F.softmax, .softmax or log_softmax), which does "
                "the shift inside: write it with torch.exp and .sum, as the prompt asks.", raises=Refused,
                example=variant(torch.softmax, dim=-1)),
        Mistake(lambda got, args: f"On the row {[round(v) for v in args[0][0].tolist()]} your weights are NaN, though "
                "the rows near 100 and -1000 passed: your constant (the row's minimum, mean or first score?) leaves an "
                "exponent far above 0 here; exp(89) already overflows float32. Which constant leaves none, in any row?",
                when=lambda got, args: args[0].tolist() in WIDE and not bool(got.isfinite().all()),
                example=lambda x: _naive(x - x.amin(dim=-1, keepdim=True))),
        Mistake(lambda got: f"{_nan_rows(got)} are NaN (the rows with scores near 100 and -1000): exp(100) overflows "
                "float32 to inf and exp(-1000) underflows to 0, so the division is inf / inf or 0 / 0. Section 6's "
                "property lets you subtract one constant from each row first: which one keeps every exponent in "
                "range, in every row?", answer=_naive),
        Mistake(lambda got: f"{_nan_rows(got)} are NaN: you subtracted one maximum for the whole tensor, and a row far "
                "below it underflows to 0 / 0. Subtract each row's own maximum.", answer=lambda x: _naive(x - x.max())),
        Mistake("You subtracted the row maxima without keepdim=True: x.amax(dim=-1), one number per row, broadcasts "
                "along the keys: each column got another row's maximum.", answer=lambda x: _naive(x - x.amax(dim=-1))),
        Mistake("You divided by the row sums without keepdim=True: they broadcast along the keys, so each column was "
                "divided by another row's sum.", answer=lambda x: _naive(x - x.amax(dim=-1, keepdim=True), False)),
        Mistake(lambda got: f"{_nan_rows(got)} contain NaN or inf: some exponent overflowed or a row underflowed to "
                "0 / 0. Choose each row's own constant so that no exponent is above 0.",
                when=lambda got: not bool(got.isfinite().all()), example=lambda x: _naive(x - x.min())),
        Mistake(lambda got: f"Your rows sum to {row_sums(got)} and your columns to 1: the maximum, the exponentials "
                "and the sum all run along the last axis, the keys.",
                example=lambda x: _naive(x - x.amax(dim=-2, keepdim=True), dim=-2),
                when=lambda got: _sums_to_one(got, -2) and not _sums_to_one(got, -1)),
        Mistake(lambda got: f"Your rows sum to {row_sums(got)}: a softmax divides each row's exponentials by their "
                "own sum, that row's and no other's, so that every row sums to 1.",
                when=lambda got, args: got.shape == args[0].shape and bool((got >= 0).all())
                and not _sums_to_one(got, -1),
                example=lambda x: _naive(x - x.amax(-1, keepdim=True), dim=(-2, -1))),
        Mistake("Some of your rows are uniform though their scores differ: clamping the scores changes "
                "them, and so their weights. Section 6's property changes no weight: use that instead.",
                when=lambda got, args: bool(((got.amax(-1) - got.amin(-1) < 1e-6) & (args[0].std(-1) > 0)).any()),
                example=lambda x: _naive(x.clamp(-80, 80))),
        Mistake("Your function raised TypeError: x.max(dim=...) returns a pair (values, indices), not a tensor. Take "
                "its .values, or use x.amax(...), which returns the values alone.", raises=TypeError,
                match=r"return_types\.max\b",
                example=lambda x: x - x.max(dim=-1, keepdim=True)),
    ])


# --- Exercise 5: one temperature per head, scores (B, H, Tq, Tk), tau (H,) -------------------------------


def per_head(scores: torch.Tensor, tau: torch.Tensor) -> torch.Tensor:
    """softmax(scores / tau_h) over the keys, head h's scores divided by its own temperature."""
    return torch.softmax(scores / tau.reshape(-1, 1, 1), dim=-1)  # (H,) -> (H, 1, 1): lines up with the heads


def _temperature_probes() -> list[Probe]:
    g = torch.Generator().manual_seed(4)
    # First B = H = Tq = Tk, where tau lined up with any axis runs, so that each such mistake is recognised.
    shapes = [(3, 3, 3, 3), (2, 3, 4, 5), (1, 4, 2, 4), (3, 5, 6, 2)]
    labels = ["(B, H, Tq, Tk) = (3, 3, 3, 3)", *map(str, shapes[1:])]
    return [Probe((torch.randn(*shape, generator=g), torch.linspace(0.5, 4.0, shape[1])), label)
            for shape, label in zip(shapes, labels)]


def _normalised_over(got: torch.Tensor) -> str:
    """The axis of (B, H, Tq, Tk) the weights sum to 1 over when it is not the keys ("" otherwise)."""
    axes = [name for d, name in enumerate(("batch", "heads", "queries")) if _sums_to_one(got, d)]
    return axes[0] if axes and not _sums_to_one(got, -1) else ""


def _divided_along(view: tuple, what: str) -> Mistake:
    return Mistake(f"Your tau divided the {what} instead of the heads: broadcasting lines axes up from the right, and "
                   "nothing complains when the sizes happen to agree. Give tau a shape that lines up with the heads, "
                   "the second axis of (B, H, Tq, Tk).", answer=lambda s, t: torch.softmax(s / t.reshape(view), dim=-1))


check_temperature_softmax = Exercise(
    "Exercise 5", reference=per_head, probes=_temperature_probes,
    correct="Each head divides its own scores by its own temperature: broadcasting lines axes up from the right.",
    mistakes=[
        _divided_along((-1,), "keys"), _divided_along((-1, 1), "queries"), _divided_along((-1, 1, 1, 1), "batch"),
        Mistake(lambda err, args: f"Your function raised {type(err).__name__} on scores {tuple(args[0].shape)} and "
                f"tau {tuple(args[1].shape)}: broadcasting lines axes up from the right, so a (H,) tensor meets the "
                "keys. Give tau a shape that lines up with the heads.", raises=RuntimeError,
                example=lambda s, t: torch.softmax(s / t.reshape(2, -1, 1, 1), dim=-1)),
        Mistake("You subtracted tau from the scores: a temperature divides them. (Subtracted one per head, it would "
                "even cancel: softmax ignores a constant added to a whole row, section 6.)",
                answer=lambda s, t: torch.softmax(s - t, dim=-1)),
        Mistake("Your weights are those without any temperature: either tau is not used, or it was added to or "
                "subtracted from the scores, and softmax ignores a constant added to a whole row (section 6). A "
                "temperature divides the scores.", answer=lambda s, t: torch.softmax(s, dim=-1)),
        Mistake("You multiplied the scores by tau: a tau below 1 then flattens the weights and one above 1 sharpens "
                "them, the opposite of a temperature. Divide.",
                answer=lambda s, t: torch.softmax(s * t.reshape(-1, 1, 1), dim=-1)),
        Mistake(lambda got: f"Your rows sum to {row_sums(got)}: you divided the weights after the softmax. Divide "
                "the scores before it.", answer=lambda s, t: torch.softmax(s, dim=-1) / t.reshape(-1, 1, 1)),
        Mistake("Every head was divided by head 0's temperature: each head's scores need its own tau.",
                answer=lambda s, t: torch.softmax(s / t[0], dim=-1)),
        Mistake("Every head was divided by the same temperature (tau's mean, or another single number): each head's "
                "scores need its own tau[h].", when=lambda got, args: bool(
                    (_scale(got, args[0]) - _scale(got, args[0]).flatten()[0]).abs().max() < 1e-4),
                example=lambda s, t: torch.softmax(s / t.mean(), dim=-1)),
        Mistake("Your function divides by the notebook's temperatures, tau = [0.5, 1, 4], not by the tau it is given "
                "(a global read, or the numbers written in): use its argument.",
                answer=lambda s, t: per_head(s, torch.tensor([0.5, 1.0, 4.0]))),
        Mistake(lambda got: f"Your rows sum to {row_sums(got)}: the softmax ran over the {_normalised_over(got)}, "
                "not over the keys.", when=lambda got: bool(_normalised_over(got)),
                example=lambda s, t: torch.softmax(s / t.reshape(-1, 1, 1), dim=-2)),
    ])
