"""Exercises of notebook 05 (multi-head attention: split, attend, merge), declared as data: each ``check_*``
below is an :class:`~attnlib.exercises.Exercise` that the notebook's check cell calls."""

from __future__ import annotations

import math

import torch

from ..multihead import split_heads
from . import Exercise, Mistake, Probe, Refused, as_number, near, plain, raised_in, same, shape_of, variant, watched

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
        Mistake("{got} gives each bias H numbers: a bias adds one number to each of the E features its projection "
                "writes.", answer=4 * E * E + 4 * H),
        Mistake("{got} counts the four (E, E) matrices but one bias: each of the four projections has its own bias "
                "of length E.", answer=4 * E * E + E),
        Mistake("{got} counts one projection, an (E, E) matrix and its bias (or one head's Dh rows of all four): the "
                "layer has four projections, W_Q, W_K, W_V and W^O, and its H heads share them.", answer=E * E + E),
        Mistake("{got} is the count for the running example's E = 4: the layer asked about has embed_dim=8.",
                answer=4 * 4 * 4 + 4 * 4),
    ])


# --- Exercise 2: where x[1, 5, 7] lands after split_heads(x, 3), x of shape (B, T, E) = (2, 7, 12) -------

PARTS = {"sequence": "the split never moves a number to another sequence",
         "head": "head h holds features h*Dh to (h+1)*Dh - 1",
         "token": "the split never moves a number to another token",
         "feature within the head": "a head numbers its own Dh features from 0"}


def _wrong_parts(got: tuple, expected: tuple, args: tuple) -> str | None:
    """Exercise 2's diagnosis: the parts of the index that are wrong, named by their meaning, or the axis order."""
    parts = [part for part, g, e in zip(PARTS, got, expected) if g != e] if len(got) == 4 else []
    if not parts:
        return None
    listed = " and ".join(", ".join(f"the {p}" for p in parts).rsplit(", ", 1))
    if sorted(got) == sorted(expected):
        return (f"Your four numbers are the right ones in another order ({listed} out of place): heads is indexed "
                "[b, h, t, d], the sequence, the head, the token, then the feature within the head.")
    values = ", ".join(str(g) for g, e in zip(got, expected) if g != e)
    return (f"Your {'numbers' if len(parts) > 1 else 'number'} for {listed} ({values}) "
            f"{'are' if len(parts) > 1 else 'is'} not right: {'; '.join(PARTS[p] for p in parts)}.")


check_split_index = Exercise(
    "Exercise 2", expected=(1, 1, 5, 3), read=shape_of,
    unreadable="Write the index as a tuple of four ints (b, h, t, d), such as (0, 2, 6, 1); got {got}.",
    correct="The sequence and the token stay; head 1 holds features 4 to 7, so feature 7 is its feature 3.",
    diagnose=_wrong_parts,
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
                "square root of that.", when=near(math.sqrt(8), tol=0.05), example=2.8),
        Mistake("{got} is a factor the scores are multiplied by; the question asks for the divisor, sqrt(d_k).",
                when=near(1 / 8), example=0.125),
        Mistake("{got} is 1/sqrt(E): a factor the scores are multiplied by, and for the full width E. The question "
                "asks for the divisor, and a head's queries are only Dh = E / H wide.",
                when=near(1 / math.sqrt(512), tol=0.005), example=0.0442),
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
                    for shape in ((5, 6, 4, 2), (2, 3, 4, 2), (3, 2, 3, 3), (2, 4, 2, 3), (1, 5, 3, 1))],
    correct="B*H splits into (B, H), the heads move behind the tokens, the last two axes merge.",
    refuse=("attnlib.multihead.merge_heads",),  # B, H = 5, 6 first: no H a learner may type is that probe's B
    mistakes=[
        Mistake("Your function takes another number of arguments: the check calls my_merge_heads(x, num_heads).",
                raises=TypeError, match=r"takes \d+ positional arguments? but|missing \d+ required positional",
                example=lambda x: x),
        Mistake("Your function calls split_heads, which goes the other way, from (B, T, E) to the heads: merging "
                "is its inverse.", raises=(RuntimeError, ValueError), example=split_heads,
                when=lambda err, args: raised_in(err, "split_heads")),
        Mistake("Your last reshape asks for rows of Dh features: a merged row holds all H heads' features side by "
                "side.", raises=RuntimeError, match="invalid for input of size",
                when=lambda err, args: f"[{args[0].shape[0] // args[1]}, {args[0].shape[1]}, {args[0].shape[2]}]'"
                in str(err), example=lambda x, h: merge(x, h).reshape(len(x) // h, x.shape[1], x.shape[2])),
        Mistake("A reshape asked for a shape that does not hold x's values: x's first axis is B*H, so it holds "
                "x.shape[0] // num_heads sequences.", raises=RuntimeError, match="invalid for input of size",
                example=lambda x, h: x.reshape(x.shape[0], h, x.shape[1], -1)),
        Mistake(VIEW_AFTER_TRANSPOSE, raises=RuntimeError, match="stride|contiguous",
                example=lambda x, h: _unflat(x, h).transpose(1, 2).view(-1, x.shape[1], h * x.shape[2])),
        Mistake("Your merge splits B*H into (H, B), the heads first, and keeps H in front: row b*H + h of x is head "
                "h of sequence b, so B*H splits into (B, H), the batch first.",
                answer=lambda x, h: merge(x, x.shape[0] // h)),
        Mistake("Your function reads all B*H rows of x as the heads of one sequence: x holds B sequences of H heads "
                "each, so its first axis splits into (B, H) first.", example=lambda x, h: x.transpose(0, 1).flatten(1),
                when=lambda got, args: same(got.squeeze(0), args[0].transpose(0, 1).flatten(1))),
        Mistake("Your merge sums the heads: a token's H heads go side by side, each keeping its own Dh features.",
                answer=lambda x, h: _unflat(x, h).sum(1)),
        Mistake("Your merge uses another number of heads than num_heads: read H from the argument, not from the "
                "notebook's variables.", when=lambda got, args: any(same(got, merge(args[0], h)) for h in range(1, 7)
                                                                   if h != args[1] and args[0].shape[0] % h == 0),
                example=lambda x, h: merge(x, 2 if h != 2 else 1)),
        Mistake(lambda got: f"Your rows mix sequences (the rows of sequence 0 hold sequences {_in_rows(got, 1000)}): "
                "row b*H + h of x is head h of sequence b, so B*H splits into (B, H), the batch first.",
                when=_mixes(1000, 0), example=lambda x, h: x.reshape(h, -1, *x.shape[1:]).permute(1, 2, 0, 3)
                .flatten(2)),
        Mistake("Your heads are behind the tokens, (B, T, H, Dh), but not merged yet: each token's H heads must "
                "become one row of E features.", answer=lambda x, h: _unflat(x, h).transpose(1, 2)),
        Mistake("Your transpose swaps the tokens with the features (T and Dh), so rows mix tokens: it is the heads "
                "that must move behind the tokens before the last two axes merge.",
                answer=lambda x, h: _unflat(x, h).transpose(2, 3).reshape(x.shape[0] // h, x.shape[1], -1)),
        Mistake(lambda got: f"Your rows mix tokens (the rows of sequence 0 hold tokens {_in_rows(got, 100)}): the "
                "heads must move behind the tokens (a transpose) before the last two axes merge.",
                when=_mixes(100, 1), example=lambda x, h: x.reshape(-1, x.shape[1], h * x.shape[2])),
        Mistake("Each of your rows holds its own token's features, but its heads come in reverse order: head 0's Dh "
                "features come first, then head 1's.",
                answer=lambda x, h: _unflat(x, h).flip(1).transpose(1, 2).flatten(2)),
        Mistake("Each of your rows holds its own token's features, but in another order: head 0's Dh features "
                "first, then head 1's, side by side. A permute that puts Dh before H interleaves the heads.",
                answer=lambda x, h: _unflat(x, h).permute(0, 2, 3, 1).flatten(2)),
        Mistake("Each of your rows holds its own token's features, but in another order: head 0's Dh features "
                "first, then head 1's, side by side, each head's features in their own order.",
                when=lambda got, args: _rearranged(got, args) and torch.equal(got.sort()[0], merge(*args).sort()[0]),
                example=lambda x, h: merge(x.flip(-1), h)),
    ])


# --- Exercise 5: multi-head attention from projected q, k, v ------------------------------------------------

def _split(x: torch.Tensor, num_heads: int, order: str = "right") -> torch.Tensor:
    b, t, e = x.shape  # (B, T, E) -> (B, H, T, Dh); "straight": no transpose; "dealt": feature d*H + h to head h
    if order == "dealt":
        return x.reshape(b, t, -1, num_heads).permute(0, 3, 1, 2)
    return x.reshape(b, num_heads, t, -1) if order == "straight" else x.reshape(b, t, num_heads, -1).transpose(1, 2)


def _merge(x: torch.Tensor, order: str = "right") -> torch.Tensor:
    b, h, t, dh = x.shape  # (B, H, T, Dh) -> (B, T, E); "straight": no transpose; "dealt": feature d*H + h
    return {"right": x.transpose(1, 2), "straight": x, "dealt": x.permute(0, 2, 3, 1)}[order].reshape(b, t, h * dh)


_straight, _dealt = variant(_merge, order="straight"), variant(_merge, order="dealt")


def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, num_heads: int, *, split: str = "right",
           merge=_merge, width: str | int = "Dh", softmax_dim: int = -1, keys_t: bool = True) -> torch.Tensor:
    """Multi-head attention without projections; each keyword switches on one classic mistake."""
    qh, kh, vh = (_split(p, num_heads, split) for p in (q, k, v))  # (B, T, E) -> (B, H, T, Dh)
    e, h = q.shape[-1], num_heads
    d_k = width if isinstance(width, int) else {"E": e, "Dh": e // h, "H": h, "Dh^2": (e // h) ** 2, "none": 1}[width]
    scores = qh @ (kh.transpose(-2, -1) if keys_t else kh) / math.sqrt(d_k)  # (B, H, Tq, Tk)
    return merge(scores.softmax(dim=softmax_dim) @ vh)  # (B, H, Tq, Dh) -> (B, Tq, E)


def _attention_probes() -> list[Probe]:
    g = torch.Generator().manual_seed(5)
    x = torch.randn(2, 4, 12, generator=g)  # (B, T, E) = (2, 4, 12): self-attention
    q, kv = torch.randn(1, 3, 12, generator=g), torch.randn(1, 5, 12, generator=g)  # cross: Tq = 3, Tk = 5
    wide = torch.randn(3, 2, 12, generator=g), torch.randn(3, 6, 12, generator=g)  # B = 3
    small = torch.randn(2, 3, 10, generator=g)
    three = torch.randn(3, 2, 4, 12, generator=g)  # q, k and v all different: values and keys no longer agree
    x, q, kv, wq, wkv, small, *three = watched(x, q, kv, *wide, small, *three,
                                               functions=("scaled_dot_product_attention",))
    return [Probe((x, x, x, 3), "self-attention, E = 12, H = 3"),  # every probe refuses torch's SDPA
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
        Mistake("Your function calls torch's scaled_dot_product_attention: this exercise asks you to write "
                "softmax(QK^T / sqrt(d_k)) V yourself, with @ and .softmax.", raises=Refused, match="ready-made",
                example=lambda q, k, v, h: _merge(torch.nn.functional.scaled_dot_product_attention(
                    *(_split(p, h) for p in (q, k, v))))),
        *[Mistake(f"Your output mixes the {what}, not the values: the weights, made from the queries and the keys, "
                  "multiply the values' heads.", answer=lambda q, k, v, h, pick=pick: attend(*pick(q, k, v), h),
                  example=lambda q, k, v, h, pick=pick: attend(*pick(q, k, v) if q.shape == k.shape else (q, k, v), h))
          for what, pick in [("keys", lambda q, k, v: (q, k, k)), ("queries", lambda q, k, v: (q, k, q)),
                             ("keys (and the scores use the values)", lambda q, k, v: (q, v, k))]],
        Mistake("Your function returns the heads, (B, H, Tq, Dh), not merged yet: merge them back into one row of E "
                "features per token, as in Exercise 4.", answer=variant(attend, merge=lambda x: x)),
        Mistake("Your heads are scaled by 1/sqrt(E) instead of 1/sqrt(Dh): d_k is the width of one head's queries, "
                "the last axis after the split, not the width before it.", answer=variant(attend, width="E")),
        Mistake("Your split reshapes (B, T, E) straight to (B, H, T, Dh): head h then holds consecutive chunks of "
                "several tokens instead of its own Dh features of every token. Reshape to (B, T, H, Dh) first, "
                "then move the head axis forward.", answer=variant(attend, split="straight", merge=_straight)),
        Mistake("Your split is right but the merge reshapes (B, H, T, Dh) straight to (B, T, E), so each row mixes "
                "tokens. Move the head axis back behind the tokens first.", answer=variant(attend, merge=_straight)),
        Mistake("Your split reshapes straight to (B, H, T, Dh) (no transpose), so the heads hold the wrong features. "
                "Reshape to (B, T, H, Dh), then move the head axis forward.", answer=variant(attend, split="straight")),
        Mistake("Your heads are not scaled: each head's scores must be divided by sqrt(d_k), the width of one "
                "head's queries.", answer=variant(attend, width="none")),
        Mistake("Your function ignores num_heads: it computes one head of width E. Split q, k and v into "
                "num_heads heads, attend in every head, then merge.", example=lambda q, k, v, h: attend(q, k, v, 1),
                when=lambda got, args: any(same(got, attend(*args[:3], 1, width=w))  # scaled by sqrt(E) or sqrt(Dh)
                                           for w in ("Dh", args[0].shape[-1] // args[3]))),
        Mistake("Your softmax ran over the queries (dim=-2): each key's weights sum to 1 instead of each query's. "
                "Softmax over the keys' axis of (B, H, Tq, Tk).", answer=variant(attend, softmax_dim=-2)),
        Mistake("Your function works for 3 heads of width 4 only. Read H from num_heads and Dh from the input "
                "(E // num_heads), not from the notebook's variables.", example=lambda q, k, v, h: attend(q, k, v, 3),
                when=lambda got, args: args[3] != 3 or args[0].shape[-1] != 12),
        Mistake("Your function splits into another number of heads than num_heads: read H from num_heads, not from "
                "the notebook's variables.", example=lambda q, k, v, h: attend(q, k, v, 6 // h),
                when=lambda got, args: any(same(got, attend(*args[:3], h)) for h in range(2, args[0].shape[-1] + 1)
                                           if args[0].shape[-1] % h == 0 and h != args[3])),
        Mistake("Your heads divide their scores by Dh itself: the scale is the square root of one head's width, "
                "sqrt(d_k).", answer=variant(attend, width="Dh^2")),
        Mistake("Your heads divide their scores by sqrt(H), the number of heads (section 6's ratio of sqrt(E) to "
                "sqrt(Dh)): d_k is the width of one head's queries.", answer=variant(attend, width="H")),
        Mistake("Your scores multiply the queries by the keys as they are, not by their transpose: each query must "
                "meet every key across the Dh features. It runs only where Dh equals Tk.",
                answer=variant(attend, keys_t=False)),
        Mistake("Your heads take every H-th feature (feature f to head f % H), in the split and the merge alike: "
                "head h holds the block of features h*Dh to (h+1)*Dh - 1.",
                answer=variant(attend, split="dealt", merge=_dealt)),
        Mistake("Your function raised on cross-attention, where the keys are longer than the queries: reshape k "
                "and v with their own length, k.shape[1] (or -1), not the queries' Tq.",
                raises=RuntimeError, match="invalid for input",
                when=lambda err, args: args[0].shape[1] != args[1].shape[1],
                example=lambda q, k, v, h: attend(q, k.reshape(q.shape[0], q.shape[1], -1), v, h)),
        Mistake(VIEW_AFTER_TRANSPOSE, raises=RuntimeError, match="view|stride|contiguous",
                example=lambda q, k, v, h: attend(q, k, v, h, merge=lambda x: x.transpose(1, 2).view(
                    x.shape[0], x.shape[2], -1))),
    ])
