"""Exercises of notebook 02 (over which axis softmax normalises); book/teachers.md quotes Exercise 4's naive hint."""

from __future__ import annotations

import torch

from . import Exercise, Mistake, Probe, Refused, as_number, plain, row_sums, variant, watched

__all__ = ["check_key1_column", "check_key_major_weights", "check_stable_softmax", "check_tau_limits",
           "check_temperature_softmax"]


def _pair(got: tuple) -> str:
    return "(" + ", ".join(f"{v:.4g}" for v in got) + ")"


def _sums_to_one(got: torch.Tensor, dim: int) -> bool:
    sums = got.detach().real.double().sum(dim=dim)
    return bool(torch.allclose(sums, torch.ones_like(sums), atol=1e-4))


# Exercise 1: key 1's column of softmax(scores_hand, dim=-2), scores_hand = [[2, 0, 0], [0, 0, 2]]
check_key1_column = Exercise(
    "Exercise 1", expected=(0.5, 0.5), decimals=2,
    correct="Two equal scores in a column of 2 share the key's unit: 0.5 each, though neither query asked for key 1.",
    diagnose=lambda got, expected, args: "Softmax with dim=-2 normalises key 1's column over the 2 queries."
    if isinstance(got, tuple) and len(got) == 2 else "Write the two weights of key 1's column as a tuple of numbers.",
    mistakes=[
        Mistake(lambda got: f"{_pair(got)} is key 1's weight with dim=-1, over each query's row: dim=-2 normalises "
                "each column over the 2 queries.", (0.1065, 0.1065)),
        Mistake("A score of 0 does not give a weight of 0 (e^0 = 1): normalise the column.", (0.0, 0.0)),
        Mistake(lambda got: f"Your column sums to {sum(got):.4g}: with dim=-2 every key's column sums to 1.",
                when=lambda got: len(got) == 2 and abs(sum(got) - 1) > 0.02, example=(0.3, 0.4)),
    ])


def key_major_weights(scores: torch.Tensor) -> torch.Tensor:
    """Scores (..., Tk, Tq), as ``key @ query.mT`` gives them -> weights (..., Tq, Tk), each query's row summing to 1"""
    return torch.softmax(scores.transpose(-2, -1), dim=-1)


def _key_major_probes() -> list[Probe]:
    g = torch.Generator().manual_seed(2)
    return [Probe((HAND,), "the hand-made lookup, (Tk, Tq) = (3, 2)"), *(
        Probe((torch.randn(*s, generator=g),), f"{axes} = {s}") for axes, s in [
            ("(B, Tk, Tq)", (2, 5, 4)), ("(B, Tk, Tq)", (2, 4, 4)), ("(B, H, Tk, Tq)", (2, 3, 6, 4)),
            ("a batch of one, (B, Tk, Tq)", (1, 4, 3))])]


HAND = torch.tensor([[2.0, 0.0], [0.0, 0.0], [0.0, 2.0]])  # the hand-made lookup, key-major: (Tk, Tq) = (3, 2)
check_key_major_weights = Exercise(
    "Exercise 2", reference=key_major_weights, probes=_key_major_probes,
    diagnose=lambda got, expected, args: None if _sums_to_one(got, -1) else f"Your weights' rows sum to "
    f"{row_sums(got)}: each row of the result is one query, and its weights over the keys must sum to 1.",
    correct="The keys are the axis to normalise over, wherever they sit; the result is back in (..., Tq, Tk).",
    mistakes=[
        Mistake("Your softmax ran over the queries, the last axis here (or dim=1 on the 2-D lookup): normalise over "
                "the keys' axis, counted from the back.", lambda s: torch.softmax(s, -1).mT),
        Mistake("Your weights are normalised over the keys, but still laid out (..., Tk, Tq): return them as "
                "(..., Tq, Tk), one row per query.", variant(torch.softmax, dim=-2)),
        Mistake("Your `.T`, transpose(0, 1) or transpose(0, -1) moves the batch axis too: swap only the last two axes.",
                example=lambda s: torch.softmax(s.T, -1), when=lambda got, args: got.shape[:-2] != args[0].shape[:-2]
                and sorted(got.shape) == sorted(args[0].shape)),
        Mistake(lambda err, args: f"Your function raised {type(err).__name__} on {args[0].dim()}-D scores: it numbers "
                "an axis from the front (dim=1, transpose(1, 2), permute(0, 2, 1)); count from the back.",
                raises=(IndexError, RuntimeError), match="out of range|number of dimensions",
                example=lambda s: torch.softmax(s, 1).transpose(1, 2)),
    ])


def _taus(small: float, large: float) -> dict:
    return {SMALL: small, LARGE: large}


# Exercise 3: the largest weight of the row [2, 2, 0] (a tie at the top) at tau = 0.01 and tau = 100
SMALL, LARGE = "max_at_small_tau", "max_at_large_tau"
check_tau_limits = Exercise(
    "Exercise 3", answers=(SMALL, LARGE), read=as_number, decimals=2,
    expected=_taus(0.5, torch.softmax(torch.tensor([2.0, 2.0, 0.0]) / 100, -1).max().item()),
    correct="A tiny tau gives all the weight to the top score, shared by the keys that tie for it; a huge tau "
            "makes the row uniform. The order never changes.",
    diagnose=lambda got, expected, args: "Push the table of this section to its extremes: what does dividing "
                                         "[2, 2, 0] by 0.01, and by 100, do to the gaps between the scores?",
    mistakes=[
        Mistake("A weight lies between 0 and 1: the weights of a row are shares of one unit.",
                when=lambda got: not all(0 <= v <= 1 for v in got.values()), example=_taus(1.5, 0.5)),
        Mistake("You swapped them: a small tau widens the gaps, a large one shrinks them.", example=_taus(0.34, 0.5),
                when=lambda got: abs(got[SMALL] - 1 / 3) < 0.02 and got[LARGE] >= 0.5),
        Mistake(lambda got: f"At tau = 0.01 you wrote {got[SMALL]:.4g}: the top score takes everything, but two keys "
                "tie for it. What do equal scores get?", when=lambda got: got[SMALL] > 0.52, example=_taus(1.0, 0.34)),
        Mistake("At tau = 100 you kept the tie's split: dividing by 100 brings the third key's score close to the "
                "other two as well.", when=lambda got: abs(got[LARGE] - 0.5) < 0.02, example=_taus(0.5, 0.5)),
    ])


def _naive(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    e = torch.exp(x)
    return e / e.sum(dim=dim, keepdim=True)


def _nan_rows(got: torch.Tensor) -> str:
    rows = got.reshape(-1, got.shape[-1])
    return f"{int((~rows.isfinite()).any(dim=-1).sum())} of your {rows.shape[0]} rows"


BIG = torch.tensor([[1.0, 2.0, 3.0], [100.0, 101.0, 103.0], [-1000.0, -1001.0, -1003.0]])  # 3 rows, Tk = 3
WIDE = ([[0.0, 200.0]], [[-1000.0, 0.0, 5.0]])  # rows where subtracting anything but the maximum overflows
check_stable_softmax = Exercise(
    "Exercise 4", reference=lambda x: torch.softmax(*plain(x), dim=-1), refuse=("attnlib.attention",),
    probes=lambda: [Probe(watched(x, functions=("softmax", "log_softmax", "scaled_dot_product_attention")), label)
                    for x, label in [(BIG, ""), *((torch.tensor(w), f"the row {w[0]}") for w in WIDE),
                                     (5 * torch.randn(2, 3, 4, 5, generator=torch.Generator().manual_seed(3)), "")]],
    correct="Rows near 100 and -1000 come out finite and equal to torch.softmax.",
    mistakes=[
        Mistake("Your function calls torch's softmax (torch.softmax, F.softmax, .softmax or log_softmax): write it "
                "with torch.exp and .sum.", raises=Refused, example=variant(torch.softmax, dim=-1)),
        Mistake(lambda got, args: f"On the row {[round(v) for v in args[0][0].tolist()]} your weights are NaN: your "
                "constant (the row's minimum, mean or first score?) leaves an exponent above 0. Which one leaves none?",
                when=lambda got, args: args[0].tolist() in WIDE and not bool(got.isfinite().all()),
                example=lambda x: _naive(x - x.amin(dim=-1, keepdim=True))),
        Mistake(lambda got: f"{_nan_rows(got)} are NaN: exp(100) overflows float32 to inf and exp(-1000) underflows "
                "to 0. Section 6's property lets you subtract one constant from each row first: which one keeps every "
                "exponent in range?", _naive),
        Mistake(lambda got: f"{_nan_rows(got)} are NaN: you subtracted one maximum for the whole tensor; subtract each "
                "row's own maximum.", lambda x: _naive(x - x.max())),
        Mistake(lambda got: f"Your rows sum to {row_sums(got)} and your columns to 1: the maximum and the sum run "
                "along the last axis.", when=lambda got: _sums_to_one(got, -2) and not _sums_to_one(got, -1),
                example=lambda x: _naive(x - x.amax(dim=-2, keepdim=True), dim=-2)),
        Mistake(lambda got: f"Your rows sum to {row_sums(got)}: divide each row's exponentials by their own sum.",
                when=lambda got, args: got.shape == args[0].shape and bool((got >= 0).all())
                and not _sums_to_one(got, -1), example=lambda x: _naive(x - x.amax(-1, keepdim=True), dim=(-2, -1))),
    ])


def per_head(scores: torch.Tensor, tau: torch.Tensor, *, view: tuple = (-1, 1, 1), dim: int = -1) -> torch.Tensor:
    """softmax(scores / tau_h) over the keys, each head's own tau; the keywords switch on one classic mistake each."""
    return torch.softmax(scores / tau.reshape(view), dim=dim)  # (H,) -> (H, 1, 1): lines up with the heads


def _temperature_probes() -> list[Probe]:
    g = torch.Generator().manual_seed(4)  # first B = H = Tq = Tk, where tau lined up with any axis runs
    shapes = [(3, 3, 3, 3), (2, 3, 4, 5), (1, 4, 2, 4), (3, 5, 6, 2)]
    return [Probe((torch.randn(*s, generator=g), torch.linspace(0.5, 4.0, s[1])), label)
            for s, label in zip(shapes, ["(B, H, Tq, Tk) = (3, 3, 3, 3)", *map(str, shapes[1:])])]


def _normalised_over(got: torch.Tensor) -> str:
    """The axis of (B, H, Tq, Tk) the weights sum to 1 over when it is not the keys ("" otherwise)."""
    axes = [name for d, name in enumerate(("batch", "heads", "queries")) if _sums_to_one(got, d)]
    return axes[0] if axes and not _sums_to_one(got, -1) else ""


check_temperature_softmax = Exercise(
    "Exercise 5", reference=per_head, probes=_temperature_probes,
    correct="Each head divides its own scores by its own temperature: broadcasting lines axes up from the right.",
    mistakes=[
        Mistake("Your tau divided the keys instead of the heads: broadcasting lines axes up from the right; give tau a "
                "shape that lines up with the heads.", variant(per_head, view=(-1,))),
        Mistake(lambda err, args: f"Your function raised {type(err).__name__} on scores {tuple(args[0].shape)} and tau "
                f"{tuple(args[1].shape)}: broadcasting lines axes up from the right, so a (H,) tensor meets the "
                "keys.", raises=RuntimeError, example=lambda s, t: torch.softmax(s / t.reshape(2, -1, 1, 1), dim=-1)),
        Mistake("You subtracted tau: a temperature divides the scores.", lambda s, t: torch.softmax(s - t, dim=-1)),
        Mistake("Your weights are those without any temperature: tau is unused or only shifts the scores, and softmax "
                "ignores a constant added to a whole row. A temperature divides.", lambda s, t: torch.softmax(s, -1)),
        Mistake(lambda got: f"Your rows sum to {row_sums(got)}: the softmax ran over the {_normalised_over(got)}, "
                "not over the keys.", when=lambda got: bool(_normalised_over(got)), example=variant(per_head, dim=-2)),
    ])
