"""Exercises of notebook 05 (multi-head attention: split, attend, merge): each ``check_*`` is an Exercise."""

from __future__ import annotations

import math

import torch

from . import Exercise, Mistake, Probe, Refused, as_number, near, plain, same, shape_of, variant, watched

__all__ = ["check_head_scale", "check_merge_heads", "check_multi_head_attention", "check_parameter_count",
           "check_split_index"]


# --- Exercise 1: the parameters of a multi-head layer, E = 8, H = 4, with biases
E, H = 8, 4
check_parameter_count = Exercise(
    "Exercise 1", expected=4 * E * E + 4 * E, read=as_number, correct="4 E^2 + 4 E, whatever the number of heads.",
    mistakes=[Mistake(hint, answer) for answer, hint in [
        (4 * E * E, "{got} counts the four (E, E) matrices but not their biases (four of length E)."),
        (3 * (E * E + E), "{got} counts W_Q, W_K and W_V with their biases but leaves out the output projection W^O."),
        (H * (4 * E * E + 4 * E), "{got} multiplies by the number of heads, but the H heads share the matrices."),
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
    ]])


# --- Exercise 3: the divisor of each head's scores, E = 512, H = 8
check_head_scale = Exercise(
    "Exercise 3", expected=8.0, decimals=2, read=as_number,
    correct="Each head divides by sqrt(Dh) = sqrt(512 / 8), not by sqrt(E) = 22.63.",
    mistakes=[Mistake(hint, when=near(value, tol=tol), example=value) for value, tol, hint in [
        (math.sqrt(512), None, "{got} is sqrt(E), the scale of one head of full width: a head is Dh = E / H wide."),
        (64, None, "{got} is Dh itself: the scores are divided by the square root of the head's width."),
        (math.sqrt(8), 0.05, "{got} is sqrt(H), by which sqrt(E) overshoots: take the square root of the head width."),
        (1 / 8, None, "{got} is a factor the scores are multiplied by; the question asks for the divisor, sqrt(d_k)."),
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


def _mixes(digit: int, axis: int):
    """A predicate: x's values in the merged shape, moved so that a row holds another sequence's (1000) or token's."""
    def mixes(got: torch.Tensor, args: tuple) -> bool:
        index = torch.arange(got.shape[axis]).view([-1 if a == axis else 1 for a in range(3)])
        return (got.shape == merge(*args).shape and torch.equal(got.flatten().sort()[0], args[0].flatten().sort()[0])
                and bool((got.long() // digit % 10 != index).any()))
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
        Mistake("Your last reshape asks for rows of Dh features: a merged row holds all H heads' features.",
                raises=RuntimeError, match="invalid for input of size",
                when=lambda err, args: f"[{args[0].shape[0] // args[1]}, {args[0].shape[1]}, {args[0].shape[2]}]'"
                in str(err), example=lambda x, h: merge(x, h).reshape(len(x) // h, x.shape[1], x.shape[2])),
        Mistake("A reshape of yours does not hold x's values: x holds x.shape[0] // num_heads sequences.",
                raises=RuntimeError, match="invalid for input of size",
                example=lambda x, h: x.reshape(x.shape[0], h, x.shape[1], -1)),
        Mistake(VIEW_AFTER_TRANSPOSE, raises=RuntimeError, match="stride|contiguous",
                example=lambda x, h: x.unflatten(0, (-1, h)).transpose(1, 2).view(-1, x.shape[1], h * x.shape[2])),
        Mistake("Your function reads all B*H rows of x as the heads of one sequence: x holds B sequences.",
                example=lambda x, h: x.transpose(0, 1).flatten(1),
                when=lambda got, args: same(got.squeeze(0), args[0].transpose(0, 1).flatten(1))),
        Mistake(lambda got: f"Your rows mix sequences (the rows of sequence 0 hold sequences {_in_rows(got, 1000)}): "
                "B*H splits into (B, H), the batch first.", when=_mixes(1000, 0),
                example=lambda x, h: x.reshape(h, -1, *x.shape[1:]).permute(1, 2, 0, 3).flatten(2)),
        Mistake(lambda got: f"Your rows mix tokens (the rows of sequence 0 hold tokens {_in_rows(got, 100)}): move "
                "the heads behind the tokens (a transpose) first.", when=_mixes(100, 1),
                example=lambda x, h: x.reshape(-1, x.shape[1], h * x.shape[2])),
    ])


# --- Exercise 5: multi-head attention from projected q, k, v
def _merge(x: torch.Tensor, order: str = "right") -> torch.Tensor:
    b, h, t, dh = x.shape  # (B, H, T, Dh) -> (B, T, E); "straight": no transpose
    return {"right": x.transpose(1, 2), "straight": x}[order].reshape(b, t, h * dh)


def attend(q, k, v, h, *, split="right", merge=_merge, width="Dh", softmax_dim=-1) -> torch.Tensor:
    """Multi-head attention without projections, h heads; each keyword switches on one classic mistake."""
    to_heads = {"right": lambda x: x.reshape(len(x), x.shape[1], h, -1).transpose(1, 2),  # (B, T, E) -> (B, H, T, Dh)
                "straight": lambda x: x.reshape(len(x), h, x.shape[1], -1)}[split]  # no transpose
    qh, kh, vh = map(to_heads, (q, k, v))
    e = q.shape[-1]
    d_k = {"E": e, "Dh": e // h, "Dh^2": (e // h) ** 2, "none": 1}[width]
    scores = qh @ kh.transpose(-2, -1) / math.sqrt(d_k)  # (B, H, Tq, Tk)
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
        Mistake("Your heads are scaled by 1/sqrt(E) instead of 1/sqrt(Dh), the width of one head's queries.",
                variant(attend, width="E")),
        Mistake("Your split and your merge both reshape straight, without a transpose: the pair round-trips, but "
                "each head gets features of other tokens.",
                variant(attend, split="straight", merge=variant(_merge, order="straight"))),
        Mistake("Your split is right but the merge reshapes (B, H, T, Dh) straight to (B, T, E): transpose first.",
                variant(attend, merge=variant(_merge, order="straight"))),
        Mistake("Your split reshapes straight to (B, H, T, Dh) (no transpose): reshape to (B, T, H, Dh) first.",
                variant(attend, split="straight")),
        Mistake("Your heads are not scaled: divide each head's scores by sqrt(d_k).", variant(attend, width="none")),
        Mistake("Your softmax ran over the queries (dim=-2): run it over the keys.", variant(attend, softmax_dim=-2)),
        Mistake("Your heads divide their scores by Dh itself, not its square root.", variant(attend, width="Dh^2")),
        Mistake(VIEW_AFTER_TRANSPOSE, raises=RuntimeError, match="view|stride|contiguous",
                example=lambda q, k, v, h: attend(q, k, v, h, merge=lambda x: x.transpose(1, 2).view(
                    len(x), x.shape[2], -1))),
    ])
