"""Exercises of notebook 05 (multi-head attention: split, attend, merge): each ``check_*`` is an Exercise."""

from __future__ import annotations

import math

import torch

from ..multihead import split_heads
from . import Exercise, Mistake, Probe, Refused, as_number, near, plain, raised_in, same, shape_of, variant, watched

__all__ = ["check_head_scale", "check_merge_heads", "check_multi_head_attention", "check_parameter_count",
           "check_split_index"]


# --- Exercise 1: the parameters of a multi-head layer, E = 8, H = 4, with biases
E, H, DH = 8, 4, 2
check_parameter_count = Exercise(
    "Exercise 1", expected=4 * E * E + 4 * E, read=as_number, correct="4 E^2 + 4 E, whatever the number of heads.",
    mistakes=[Mistake(hint, answer) for answer, hint in [
        (4 * E * E, "{got} counts the four (E, E) matrices but not their biases (four of length E)."),
        (3 * (E * E + E), "{got} counts W_Q, W_K and W_V with their biases but leaves out the output projection W^O."),
        (H * (4 * E * E + 4 * E), "{got} multiplies by the number of heads, but the H heads share the matrices."),
        (4 * H * (DH * DH + DH), "{got} treats each head's matrices as (Dh, Dh): a head reads all E features."),
        (3 * H * (E * E + E) + H * E * E + E, "{got} counts H full-width heads (E -> E), as StatQuest does: with "
                                              "Dh = E / H, a projection's heads make one E -> E."),
        (4 * E * E + 4 * H, "{got} gives each bias H numbers, but a bias has one number for each of the E features."),
        (4 * E * E + E, "{got} counts the four (E, E) matrices but one bias: each projection has its own bias."),
        (E * E + E, "{got} counts one projection (or one head's share): the layer has four projections."),
        (4 * 4 * 4 + 4 * 4, "{got} is the count for the running example's E = 4: the layer here has embed_dim=8."),
    ]])


# --- Exercise 2: where x[1, 5, 7] lands after split_heads(x, 3), x of shape (B, T, E) = (2, 7, 12)
PARTS = {"sequence": "the split never moves a number to another sequence",
         "head": "head h holds features h*Dh to (h+1)*Dh - 1",
         "token": "the split never moves a number to another token",
         "feature within the head": "a head numbers its own Dh features from 0"}


def _wrong_parts(got: tuple, expected: tuple, args: tuple) -> str | None:
    """The parts of the index that are wrong, named by their meaning, or the axis order."""
    parts = [part for part, g, e in zip(PARTS, got, expected) if g != e] if len(got) == 4 else []
    listed = " and ".join(", ".join(f"the {p}" for p in parts).rsplit(", ", 1))
    values, many = ", ".join(str(g) for g, e in zip(got, expected) if g != e), len(parts) > 1
    if parts and sorted(got) == sorted(expected):
        return f"Your four numbers are right but in another order ({listed} out of place): the order is [b, h, t, d]."
    return (f"Your {'numbers' if many else 'number'} for {listed} ({values}) {'are' if many else 'is'} not right: "
            f"{'; '.join(PARTS[p] for p in parts)}.") if parts else None


check_split_index = Exercise(
    "Exercise 2", expected=(1, 1, 5, 3), read=shape_of, diagnose=_wrong_parts,
    unreadable="Write the index as a tuple of four ints (b, h, t, d), such as (0, 2, 6, 1); got {got}.",
    correct="The sequence and the token stay; head 1 holds features 4 to 7, so feature 7 is its feature 3.",
    mistakes=[Mistake(hint, answer) for answer, hint in [
        ((1, 5, 1, 3), "{got} is its index after the reshape to (B, T, H, Dh) only: split_heads then swaps T and H."),
        ((1, 1, 5, 7), "{got} keeps the feature's number 7, but a head numbers its own Dh features from 0."),
        ((1, 2, 5, 1), "{got} cuts E into heads of 3 features, but 3 is the number of heads: Dh = E / H."),
        ((1, 1, 5, 2), "{got} deals the features to the heads in turn, but a head gets a block of consecutive ones."),
        ((1, 2, 2, 3), "{got} is where a straight reshape to (B, H, T, Dh) puts it: split_heads reshapes to "
                       "(B, T, H, Dh) first."),
        ((2, 2, 6, 4), "{got} counts from 1; PyTorch indexes from 0, as x[1, 5, 7] does."),
        ((2, 3, 7, 4), "{got} is the shape of the heads, (B, H, T, Dh), not the index where one number lands."),
    ]])


# --- Exercise 3: the divisor of each head's scores, E = 512, H = 8
check_head_scale = Exercise(
    "Exercise 3", expected=8.0, decimals=2, read=as_number,
    correct="Each head divides by sqrt(Dh) = sqrt(512 / 8), not by sqrt(E) = 22.63.",
    mistakes=[Mistake(hint, when=near(value, tol=tol), example=value) for value, tol, hint in [
        (math.sqrt(512), None, "{got} is sqrt(E), the scale of one head of full width: a head is Dh = E / H wide."),
        (64, None, "{got} is Dh itself: the scores are divided by the square root of the head's width."),
        (512, None, "{got} is E: the scores are divided by the square root of a head's width, not the model's."),
        (math.sqrt(8), 0.05, "{got} is sqrt(H), by which sqrt(E) overshoots: take the square root of the head width."),
        (1 / 8, None, "{got} is a factor the scores are multiplied by; the question asks for the divisor, sqrt(d_k)."),
        (1 / math.sqrt(512), 0.005, "{got} is 1/sqrt(E), a full-width factor: the question asks for a head's divisor."),
    ]])


# --- Exercise 4: heads kept in the batch axis, (B*H, T, Dh) -> (B, T, E)
def _batched_heads(b: int, h: int, t: int, dh: int) -> torch.Tensor:
    """(B*H, T, Dh) heads, row b*H + h = head h of sequence b, each entry naming itself: 1000b + 100t + 10h + d."""
    names = (1000 * torch.arange(b).view(b, 1, 1, 1) + 100 * torch.arange(t).view(t, 1)
             + 10 * torch.arange(h).view(h, 1, 1) + torch.arange(dh))  # (B, H, T, Dh)
    return names.float().reshape(b * h, t, dh)


def merge(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    """(B*H, T, Dh) -> (B, T, E): the reference. B*H splits sequence by sequence, (B, H)."""
    return x.unflatten(0, (-1, num_heads)).transpose(1, 2).flatten(2)


def _rearranged(got: torch.Tensor, args: tuple) -> bool:
    """The output has the reference's shape and holds x's values, moved around."""
    return got.shape == merge(*args).shape and torch.equal(got.flatten().sort()[0], args[0].flatten().sort()[0])


def _mixes(digit: int, axis: int):
    """A predicate: x's values moved around so that a row holds another sequence's (digit 1000) or token's (100)."""
    def mixes(got: torch.Tensor, args: tuple) -> bool:
        index = torch.arange(got.shape[axis]).view([-1 if a == axis else 1 for a in range(3)])
        return _rearranged(got, args) and bool((got.long() // digit % 10 != index).any())
    return mixes


def _in_rows(got: torch.Tensor, digit: int) -> list:
    """For each row of sequence 0, the sequences (digit 1000) or tokens (digit 100) its values come from."""
    return [sorted({int(v) // digit % 10 for v in row.tolist()}) for row in got[0]]


VIEW_AFTER_TRANSPOSE = ("`view` cannot merge axes that `transpose` only relabelled: call .contiguous() first, or use "
                        ".reshape(...).")
check_merge_heads = Exercise(
    "Exercise 4", reference=merge,
    probes=lambda: [Probe((_batched_heads(*shape), shape[1]), "B, H, T, Dh = {}, {}, {}, {}".format(*shape))
                    for shape in ((5, 6, 4, 2), (2, 3, 4, 2), (3, 2, 3, 3), (2, 4, 2, 3), (1, 5, 3, 1))],
    correct="B*H splits into (B, H), the heads move behind the tokens, the last two axes merge.",
    refuse=("attnlib.multihead.merge_heads",),  # B, H = 5, 6 first: no H a learner may type is that probe's B
    mistakes=[
        Mistake("Your function takes another number of arguments: the check calls my_merge_heads(x, num_heads).",
                raises=TypeError, match=r"takes \d+ positional arguments? but|missing \d+ required positional",
                example=lambda x: x),
        Mistake("Your function calls split_heads, the inverse of merging.", raises=(RuntimeError, ValueError),
                example=split_heads, when=lambda err, args: raised_in(err, "split_heads")),
        Mistake("Your last reshape asks for rows of Dh features: a merged row holds all H heads' features.",
                raises=RuntimeError, match="invalid for input of size",
                when=lambda err, args: f"[{args[0].shape[0] // args[1]}, {args[0].shape[1]}, {args[0].shape[2]}]'"
                in str(err), example=lambda x, h: merge(x, h).reshape(len(x) // h, x.shape[1], x.shape[2])),
        Mistake("A reshape of yours does not hold x's values: x holds x.shape[0] // num_heads sequences.",
                raises=RuntimeError, match="invalid for input of size",
                example=lambda x, h: x.reshape(x.shape[0], h, x.shape[1], -1)),
        Mistake(VIEW_AFTER_TRANSPOSE, raises=RuntimeError, match="stride|contiguous",
                example=lambda x, h: x.unflatten(0, (-1, h)).transpose(1, 2).view(-1, x.shape[1], h * x.shape[2])),
        Mistake("Your merge splits B*H into (H, B), the heads first: row b*H + h of x is head h of sequence b.",
                lambda x, h: merge(x, x.shape[0] // h)),
        Mistake("Your function reads all B*H rows of x as the heads of one sequence: x holds B sequences.",
                example=lambda x, h: x.transpose(0, 1).flatten(1),
                when=lambda got, args: same(got.squeeze(0), args[0].transpose(0, 1).flatten(1))),
        Mistake("Your merge sums the heads: a token's H heads go side by side.",
                lambda x, h: x.unflatten(0, (-1, h)).sum(1)),
        Mistake("Your merge uses another number of heads than num_heads: read H from the argument.",
                example=lambda x, h: merge(x, 2 if h != 2 else 1), when=lambda got, args: any(
                    same(got, merge(args[0], h)) for h in range(1, 7) if h != args[1] and args[0].shape[0] % h == 0)),
        Mistake(lambda got: f"Your rows mix sequences (the rows of sequence 0 hold sequences {_in_rows(got, 1000)}): "
                "B*H splits into (B, H), the batch first.", when=_mixes(1000, 0),
                example=lambda x, h: x.reshape(h, -1, *x.shape[1:]).permute(1, 2, 0, 3).flatten(2)),
        Mistake("Your heads are behind the tokens, (B, T, H, Dh), but not merged yet into rows of E features.",
                lambda x, h: x.unflatten(0, (-1, h)).transpose(1, 2)),
        Mistake("Your transpose swaps T and Dh: it is the heads that move behind the tokens.",
                lambda x, h: x.unflatten(0, (-1, h)).transpose(2, 3).reshape(x.shape[0] // h, x.shape[1], -1)),
        Mistake(lambda got: f"Your rows mix tokens (the rows of sequence 0 hold tokens {_in_rows(got, 100)}): move "
                "the heads behind the tokens (a transpose) first.", when=_mixes(100, 1),
                example=lambda x, h: x.reshape(-1, x.shape[1], h * x.shape[2])),
        Mistake("Your rows hold the heads in reverse order: head 0's features come first.",
                lambda x, h: x.unflatten(0, (-1, h)).flip(1).transpose(1, 2).flatten(2)),
        Mistake("Your rows interleave the heads' features: put each head's Dh features side by side, in order.",
                lambda x, h: x.unflatten(0, (-1, h)).permute(0, 2, 3, 1).flatten(2)),
        Mistake("Your rows hold each head's features in another order: keep each head's Dh features in their order.",
                when=lambda got, args: _rearranged(got, args) and torch.equal(got.sort()[0], merge(*args).sort()[0]),
                example=lambda x, h: merge(x.flip(-1), h)),
    ])


# --- Exercise 5: multi-head attention from projected q, k, v
def _merge(x: torch.Tensor, order: str = "right") -> torch.Tensor:
    b, h, t, dh = x.shape  # (B, H, T, Dh) -> (B, T, E); "straight": no transpose; "dealt": feature d*H + h
    return {"right": x.transpose(1, 2), "straight": x, "dealt": x.permute(0, 2, 3, 1)}[order].reshape(b, t, h * dh)


def attend(q, k, v, h, *, split="right", merge=_merge, width="Dh", softmax_dim=-1, keys_t=True) -> torch.Tensor:
    """Multi-head attention without projections, h heads; each keyword switches on one classic mistake."""
    to_heads = {"right": lambda x: x.reshape(len(x), x.shape[1], h, -1).transpose(1, 2),  # (B, T, E) -> (B, H, T, Dh)
                "straight": lambda x: x.reshape(len(x), h, x.shape[1], -1),  # no transpose
                "dealt": lambda x: x.reshape(len(x), x.shape[1], -1, h).permute(0, 3, 1, 2)}[split]  # feature d*H + h
    qh, kh, vh = map(to_heads, (q, k, v))
    e = q.shape[-1]
    d_k = width if isinstance(width, int) else {"E": e, "Dh": e // h, "H": h, "Dh^2": (e // h) ** 2, "none": 1}[width]
    scores = qh @ (kh.transpose(-2, -1) if keys_t else kh) / math.sqrt(d_k)  # (B, H, Tq, Tk)
    return merge(scores.softmax(dim=softmax_dim) @ vh)  # (B, H, Tq, Dh) -> (B, Tq, E)


def _attention_probes() -> list[Probe]:
    g = torch.Generator().manual_seed(5)  # every probe refuses torch's SDPA
    shapes = [(2, 4, 12), (1, 3, 12), (1, 5, 12), (3, 2, 12), (3, 6, 12), (2, 3, 10)]
    x, q, kv, wq, wkv, small, *three = watched(*(torch.randn(*s, generator=g) for s in shapes),
                                               *torch.randn(3, 2, 4, 12, generator=g))
    return [Probe((x, x, x, 3), "self-attention, E = 12, H = 3"),
            Probe((q, kv, kv, 3), "cross-attention, Tq = 3, Tk = 5"),
            Probe((x, x, x, 2), "E = 12, H = 2 heads of width 6"),
            Probe((wq, wkv, wkv, 4), "cross-attention, B = 3, E = 12, H = 4 heads of width 3"),
            Probe((small,) * 3 + (5,), "E = 10, H = 5 heads of width 2"),
            Probe((*three, 4), "q, k and v three different tensors, E = 12, H = 4")]


check_multi_head_attention = Exercise(
    "Exercise 5", reference=lambda q, k, v, h: attend(*plain(q, k, v), h), probes=_attention_probes,
    refuse=("attnlib.multihead", "attnlib.attention"),
    correct="Split, scale by 1/sqrt(Dh), softmax over the keys, weights @ v, merge: all heads in one batched call.",
    mistakes=[
        Mistake("Your function calls torch's scaled_dot_product_attention: write softmax(QK^T / sqrt(d_k)) V yourself.",
                raises=Refused, match="ready-made",
                example=lambda q, k, v, h: torch.nn.functional.scaled_dot_product_attention(q, k, v)),
        *[Mistake(f"Your output mixes the {what}, not the values: the weights multiply the values' heads.",
                  lambda q, k, v, h, pick=pick: attend(*pick(q, k, v), h),
                  example=lambda q, k, v, h, pick=pick: attend(*pick(q, k, v) if q.shape == k.shape else (q, k, v), h))
          for what, pick in [("keys", lambda q, k, v: (q, k, k)), ("queries", lambda q, k, v: (q, k, q)),
                             ("keys (and the scores use the values)", lambda q, k, v: (q, v, k))]],
        Mistake("Your function returns the heads, (B, H, Tq, Dh), not merged yet: merge them.",
                variant(attend, merge=lambda x: x)),
        Mistake("Your heads are scaled by 1/sqrt(E) instead of 1/sqrt(Dh), the width of one head's queries.",
                variant(attend, width="E")),
        Mistake("Your split reshapes (B, T, E) straight to (B, H, T, Dh): reshape to (B, T, H, Dh) first.",
                variant(attend, split="straight", merge=variant(_merge, order="straight"))),
        Mistake("Your split is right but the merge reshapes (B, H, T, Dh) straight to (B, T, E): transpose first.",
                variant(attend, merge=variant(_merge, order="straight"))),
        Mistake("Your split reshapes straight to (B, H, T, Dh) (no transpose): reshape to (B, T, H, Dh) first.",
                variant(attend, split="straight")),
        Mistake("Your heads are not scaled: divide each head's scores by sqrt(d_k).", variant(attend, width="none")),
        Mistake("Your function ignores num_heads: it computes one head of width E instead of num_heads heads.",
                example=lambda q, k, v, h: attend(q, k, v, 1),
                when=lambda got, args: any(same(got, attend(*args[:3], 1, width=w))  # scaled by sqrt(E) or sqrt(Dh)
                                           for w in ("Dh", args[0].shape[-1] // args[3]))),
        Mistake("Your softmax ran over the queries (dim=-2): run it over the keys.", variant(attend, softmax_dim=-2)),
        Mistake("Your function works for 3 heads of width 4 only: read H from num_heads and Dh from the input.",
                example=lambda q, k, v, h: attend(q, k, v, 3),
                when=lambda got, args: args[3] != 3 or args[0].shape[-1] != 12),
        Mistake("Your function splits into another number of heads than num_heads: read H from num_heads.",
                example=lambda q, k, v, h: attend(q, k, v, 6 // h),
                when=lambda got, args: any(same(got, attend(*args[:3], h)) for h in range(2, args[0].shape[-1] + 1)
                                           if args[0].shape[-1] % h == 0 and h != args[3])),
        Mistake("Your heads divide their scores by Dh itself, not its square root.", variant(attend, width="Dh^2")),
        Mistake("Your heads divide their scores by sqrt(H): d_k is the width of one head's queries.",
                variant(attend, width="H")),
        Mistake("Your scores multiply the queries by the keys, not by their transpose.", variant(attend, keys_t=False)),
        Mistake("Your heads take every H-th feature: head h holds the block of features h*Dh to (h+1)*Dh - 1.",
                variant(attend, split="dealt", merge=variant(_merge, order="dealt"))),
        Mistake("Your function raised on cross-attention: reshape k and v with their own length.", raises=RuntimeError,
                match="invalid for input", when=lambda err, args: args[0].shape[1] != args[1].shape[1],
                example=lambda q, k, v, h: attend(q, k.reshape(q.shape[0], q.shape[1], -1), v, h)),
        Mistake(VIEW_AFTER_TRANSPOSE, raises=RuntimeError, match="view|stride|contiguous",
                example=lambda q, k, v, h: attend(q, k, v, h, merge=lambda x: x.transpose(1, 2).view(
                    len(x), x.shape[2], -1))),
    ])
