"""Exercises of notebook 05 (multi-head attention: split, attend, merge), declared as data: each ``check_*``
below is an :class:`~attnlib.exercises.Exercise` that the notebook's check cell calls."""

from __future__ import annotations

import math

import torch

from . import Exercise, Mistake, Probe, as_number, near, same, shape_of, variant

__all__ = ["check_head_scale", "check_merge_heads", "check_multi_head_attention", "check_parameter_count",
           "check_split_index"]


# --- Exercise 1: the parameters of a multi-head layer, E = 8, H = 4, with biases --------------------------

E, H, DH = 8, 4, 2

check_parameter_count = Exercise(
    "Exercise 1", expected=4 * E * E + 4 * E, read=as_number,
    correct="4 E^2 + 4 E, whatever the number of heads.",
    mistakes=[
        Mistake("{got} counts the four (E, E) matrices but not their biases (four of length E).", answer=4 * E * E),
        Mistake("{got} counts W_Q, W_K and W_V with their biases but leaves out the output projection W^O.",
                answer=3 * (E * E + E)),
        Mistake("{got} multiplies by the number of heads. The H heads share the (E, E) matrices: head h owns Dh of "
                "their E rows, so the count does not depend on H.", answer=H * (4 * E * E + 4 * E)),
        Mistake("{got} treats each head's matrices as (Dh, Dh). A head's projection reads all E features and "
                "writes Dh: (Dh, E), and H of them make (E, E).", answer=4 * H * (DH * DH + DH)),
        Mistake("{got} counts H full-width heads (E -> E) and a W^O from H*E to E, as StatQuest's listing does. "
                "With Dh = E / H each projection's heads make one E -> E.", answer=3 * H * (E * E + E) + H * E * E + E),
    ])


# --- Exercise 2: where x[1, 5, 7] lands after split_heads(x, 3), x of shape (B, T, E) = (2, 7, 12) -------

check_split_index = Exercise(
    "Exercise 2", expected=(1, 1, 5, 3), read=shape_of,
    unreadable="Write the index as a tuple of four ints (b, h, t, d), such as (0, 2, 6, 1); got {got}.",
    correct="The sequence and the token stay; head 1 holds features 4 to 7, so feature 7 is its feature 3.",
    mistakes=[
        Mistake("{got} is where the number sits after the reshape to (B, T, H, Dh) only: split_heads then swaps "
                "T and H, so the head index comes before the token's.", answer=(1, 5, 1, 3)),
        Mistake("{got} keeps the feature's number 7, but a head numbers its own Dh features from 0: count from "
                "the first feature of its head.", answer=(1, 1, 5, 7)),
        Mistake("{got} cuts E into heads of 3 features, but 3 is the number of heads H: each head gets "
                "Dh = E / H features.", answer=(1, 2, 5, 1)),
        Mistake("{got} deals the features out to the heads in turn (feature f to head f % H), but split_heads "
                "gives each head a block of consecutive features.", answer=(1, 1, 5, 2)),
        Mistake("{got} is where a straight reshape of (B, T, E) to (B, H, T, Dh) puts it, with the number moved "
                "to another token: split_heads reshapes to (B, T, H, Dh) first.", answer=(1, 2, 2, 3)),
        Mistake("{got} counts from 1; PyTorch indexes from 0, as x[1, 5, 7] does.", answer=(2, 2, 6, 4)),
        Mistake("{got} is the shape of the heads, (B, H, T, Dh); the question asks at which index one number "
                "lands.", answer=(2, 3, 7, 4)),
    ])


# --- Exercise 3: the divisor of each head's scores, E = 512, H = 8 ---------------------------------------

check_head_scale = Exercise(
    "Exercise 3", expected=8.0, decimals=2, read=as_number,
    correct="Each head divides by sqrt(Dh) = sqrt(512 / 8), not by sqrt(E) = 22.63.",
    mistakes=[
        Mistake("{got} is sqrt(E), the scale of one head of full width. A head's queries and keys are only Dh = E / H "
                "wide: sqrt(E) makes its scores sqrt(H) times too small.", when=near(math.sqrt(512)), example=22.63),
        Mistake("{got} is Dh itself: the scores are divided by the square root of the head's width.",
                when=near(64.0), example=64),
        Mistake("{got} is E. The scores are divided by the square root of the head's width, not of the model's.",
                when=near(512.0), example=512),
        Mistake("{got} is sqrt(H), the factor by which sqrt(E) overshoots. d_k is the head width Dh: take the "
                "square root of that.", when=near(math.sqrt(8)), example=2.83),
        Mistake("{got} is a factor the scores are multiplied by; the question asks for the divisor, sqrt(d_k).",
                when=near(1 / 8), example=0.125),
    ])


# --- Exercise 4: heads kept in the batch axis, (B*H, T, Dh) -> (B, T, E) ---------------------------------

def _batched_heads(b: int, h: int, t: int, dh: int) -> torch.Tensor:
    """(B*H, T, Dh) heads, row b*H + h = head h of sequence b, each entry naming itself: 1000b + 100t + 10h + d."""
    names = (1000 * torch.arange(b).view(b, 1, 1, 1) + 100 * torch.arange(t).view(t, 1)
             + 10 * torch.arange(h).view(h, 1, 1) + torch.arange(dh))  # (B, H, T, Dh)
    return names.float().reshape(b * h, t, dh)


def _unflat(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    return x.reshape(-1, num_heads, *x.shape[1:])  # (B*H, T, Dh) -> (B, H, T, Dh), sequence by sequence


def merge(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    """(B*H, T, Dh) -> (B, T, E): the reference."""
    return _unflat(x, num_heads).transpose(1, 2).flatten(2)


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


VIEW_AFTER_TRANSPOSE = ("`view` cannot merge axes that `transpose` has only relabelled (the memory is still in "
                        "(B, H, T, Dh) order). Copy first with .contiguous(), or use .reshape(...), which copies "
                        "when it must.")

check_merge_heads = Exercise(
    "Exercise 4", reference=merge,
    probes=lambda: [Probe((_batched_heads(*shape), shape[1]), "B, H, T, Dh = {}, {}, {}, {}".format(*shape))
                    for shape in ((2, 3, 4, 2), (3, 2, 3, 3), (2, 4, 2, 3), (1, 5, 3, 1))],
    correct="B*H splits into (B, H), the heads move behind the tokens, the last two axes merge.",
    mistakes=[
        Mistake("Your function takes another number of arguments: the check calls my_merge_heads(x, num_heads).",
                raises=TypeError, match=r"takes \d+ positional arguments? but|missing \d+ required positional",
                example=lambda x: x),
        Mistake("A reshape asked for a shape that does not hold x's values: x's first axis is B*H, so it holds "
                "x.shape[0] // num_heads sequences.", raises=RuntimeError, match="invalid for input of size",
                example=lambda x, h: x.reshape(x.shape[0], h, x.shape[1], -1)),
        Mistake(VIEW_AFTER_TRANSPOSE, raises=RuntimeError, match="stride|contiguous",
                example=lambda x, h: _unflat(x, h).transpose(1, 2).view(-1, x.shape[1], h * x.shape[2])),
        Mistake("Your merge uses another number of heads than num_heads: read H from the argument, not from the "
                "notebook's variables.", when=lambda got, args: any(same(got, merge(args[0], h)) for h in range(1, 7)
                                                                   if h != args[1] and args[0].shape[0] % h == 0),
                example=lambda x, h: merge(x, 2 if h != 2 else 1)),
        Mistake(lambda got: f"Your rows mix sequences (the rows of sequence 0 hold sequences {_in_rows(got, 1000)}): "
                "row b*H + h of x is head h of sequence b, so B*H splits into (B, H), the batch first.",
                when=_mixes(1000, 0), example=lambda x, h: x.reshape(h, -1, *x.shape[1:]).permute(1, 2, 0, 3)
                .flatten(2)),
        Mistake(lambda got: f"Your rows mix tokens (the rows of sequence 0 hold tokens {_in_rows(got, 100)}): the "
                "heads must move behind the tokens (a transpose) before the last two axes merge.",
                when=_mixes(100, 1), example=lambda x, h: x.reshape(-1, x.shape[1], h * x.shape[2])),
        Mistake("Each of your rows holds its own token's features, but in another order: head 0's Dh features "
                "first, then head 1's, side by side. A permute that puts Dh before H interleaves the heads.",
                when=lambda got, args: _rearranged(got, args) and torch.equal(got.sort()[0], merge(*args).sort()[0]),
                example=lambda x, h: _unflat(x, h).permute(0, 2, 3, 1).flatten(2)),
    ])


# --- Exercise 5: multi-head attention from projected q, k, v ------------------------------------------------

def _split(x: torch.Tensor, num_heads: int, transpose: bool = True) -> torch.Tensor:
    b, t, e = x.shape  # (B, T, E) -> (B, H, T, Dh); without the transpose, a straight reshape
    return x.reshape(b, t, num_heads, -1).transpose(1, 2) if transpose else x.reshape(b, num_heads, t, -1)


def _merge(x: torch.Tensor, transpose: bool = True) -> torch.Tensor:
    b, h, t, dh = x.shape  # (B, H, T, Dh) -> (B, T, E); without the transpose, a straight reshape
    return (x.transpose(1, 2) if transpose else x).reshape(b, t, h * dh)


_straight = variant(_merge, transpose=False)


def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, num_heads: int, *, split: bool = True,
           merge=_merge, width: str = "Dh", softmax_dim: int = -1) -> torch.Tensor:
    """Multi-head attention without projections; each keyword switches on one classic mistake."""
    qh, kh, vh = (_split(p, num_heads, split) for p in (q, k, v))  # (B, T, E) -> (B, H, T, Dh)
    d_k = {"E": q.shape[-1], "Dh": q.shape[-1] // num_heads, "none": 1}[width]
    weights = (qh @ kh.transpose(-2, -1) / math.sqrt(d_k)).softmax(dim=softmax_dim)  # (B, H, Tq, Tk)
    return merge(weights @ vh)  # (B, H, Tq, Dh) -> (B, Tq, E)


def _attention_probes() -> list[Probe]:
    g = torch.Generator().manual_seed(5)
    x = torch.randn(2, 4, 12, generator=g)  # (B, T, E) = (2, 4, 12): self-attention
    q, kv = torch.randn(1, 3, 12, generator=g), torch.randn(1, 5, 12, generator=g)  # cross: Tq = 3, Tk = 5
    wide = torch.randn(3, 2, 12, generator=g), torch.randn(3, 6, 12, generator=g)  # B = 3
    return [Probe((x, x, x, 3), "self-attention, E = 12, H = 3"),
            Probe((q, kv, kv, 3), "cross-attention, Tq = 3, Tk = 5"),
            Probe((x, x, x, 2), "E = 12, H = 2 heads of width 6"),
            Probe((wide[0], wide[1], wide[1], 4), "cross-attention, B = 3, E = 12, H = 4 heads of width 3"),
            Probe((torch.randn(2, 3, 10, generator=g),) * 3 + (5,), "E = 10, H = 5 heads of width 2")]


check_multi_head_attention = Exercise(
    "Exercise 5", reference=attend, probes=_attention_probes,
    correct="Split, scale by 1/sqrt(Dh), softmax over the keys, weights @ v, merge: all heads in one batched call.",
    mistakes=[
        Mistake("Your heads are scaled by 1/sqrt(E) instead of 1/sqrt(Dh): d_k is the width of one head's queries, "
                "the last axis after the split, not the width before it.", answer=variant(attend, width="E")),
        Mistake("Your split reshapes (B, T, E) straight to (B, H, T, Dh): head h then holds consecutive chunks of "
                "several tokens instead of its own Dh features of every token. Reshape to (B, T, H, Dh) first, "
                "then move the head axis forward.", answer=variant(attend, split=False, merge=_straight)),
        Mistake("Your split is right but the merge reshapes (B, H, T, Dh) straight to (B, T, E), so each row mixes "
                "tokens. Move the head axis back behind the tokens first.", answer=variant(attend, merge=_straight)),
        Mistake("Your split reshapes straight to (B, H, T, Dh) (no transpose), so the heads hold the wrong features. "
                "Reshape to (B, T, H, Dh), then move the head axis forward.", answer=variant(attend, split=False)),
        Mistake("Your heads are not scaled: each head's scores must be divided by sqrt(d_k), the width of one "
                "head's queries.", answer=variant(attend, width="none")),
        Mistake("Your function ignores num_heads: it computes one head of width E. Split q, k and v into "
                "num_heads heads, attend in every head, then merge.", answer=lambda q, k, v, h: attend(q, k, v, 1)),
        Mistake("Your softmax ran over the queries (dim=-2): each key's weights sum to 1 instead of each query's. "
                "Softmax over the keys' axis of (B, H, Tq, Tk).", answer=variant(attend, softmax_dim=-2)),
        Mistake("Your function works for 3 heads of width 4 only. Read H from num_heads and Dh from the input "
                "(E // num_heads), not from the notebook's variables.", example=lambda q, k, v, h: attend(q, k, v, 3),
                when=lambda got, args: args[3] != 3 or args[0].shape[-1] != 12),
        Mistake("Your function raised on cross-attention, where the keys are longer than the queries: reshape k "
                "and v with their own length, k.shape[1] (or -1), not the queries' Tq.",
                raises=RuntimeError, when=lambda err, args: args[0].shape[1] != args[1].shape[1],
                example=lambda q, k, v, h: attend(q, k.reshape(q.shape[0], q.shape[1], -1), v, h)),
        Mistake(VIEW_AFTER_TRANSPOSE, raises=RuntimeError, match="view|stride|contiguous",
                example=lambda q, k, v, h: attend(q, k, v, h, merge=lambda x: x.transpose(1, 2).view(
                    x.shape[0], x.shape[2], -1))),
    ])
