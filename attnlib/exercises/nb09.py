"""Exercises of notebook 09 (pretrained transformers); no checker draws from torch's global random generator."""

from __future__ import annotations

import math
import re

import torch

from ..induction import previous_token_score
from . import Exercise, Mistake, Probe, as_number

__all__ = ["check_cache_bytes", "check_group_size", "check_mean_pool", "check_previous_token_score"]

# SmolLM2-135M: 30 layers, 9 query heads, 3 key/value heads of width 64, float32 (4 bytes)
LAYERS, HQ, HKV, DH, BYTES = 30, 9, 3, 64, 4
CACHE = 2 * LAYERS * HKV * DH * BYTES  # bytes per token: a key and a value per layer and key/value head


def _mean_pool(hidden, attention_mask):
    """(B, T, E), (B, T) -> (B, E): the mean of each sentence's real tokens."""
    real = attention_mask[..., None].to(hidden.dtype)  # (B, T, 1): 1 for a real token
    return (hidden * real).sum(dim=1) / real.sum(dim=1)  # (B, E)


def _pool_probes():
    g = torch.Generator().manual_seed(9)  # a private generator: the notebook's own draws stay as they were
    mask = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [1, 0, 0, 0, 0]])  # Hugging Face's 1 = real token
    return [Probe((torch.randn(3, 5, 4, generator=g), mask), "3 sentences of 3, 5 and 1 real tokens, E = 4"),
            Probe((torch.randn(2, 3, 6, generator=g), torch.ones(2, 3, dtype=torch.long)), "no padding, E = 6"),
            Probe((torch.randn(4, 6, 3, generator=g).double(), (torch.arange(6) < torch.tensor([[6], [2], [4], [1]]))
                   .long()), "4 sentences in float64, E = 3"),
            Probe((torch.randn(3, 5, 4, generator=g), mask.flip(-1)), "3 sentences padded on the left, E = 4")]


def _sizes(err) -> set[int]:
    """The sizes a broadcasting error names ("The size of tensor a (4) must match the size of tensor b (3) ...")."""
    return {int(n) for n in re.findall(r"\((\d+)\)", str(err))}


def _padding_mean(got, args):
    """The mean of each sentence's padding instead of its real tokens (the mask inverted)."""
    hidden, mask = args
    pad = (1 - mask)[..., None].to(hidden.dtype)
    padded, means = pad.sum(dim=(1, 2)) > 0, (hidden * pad).sum(dim=1) / pad.sum(dim=1).clamp_min(1)
    return bool(padded.any()) and bool(torch.allclose(got[padded].double(), means[padded].double(), atol=1e-5))


check_mean_pool = Exercise(
    "Exercise 1", reference=_mean_pool, probes=_pool_probes,
    correct="Padding changes nothing: the sentence's vector averages its real tokens only.", mistakes=[
        Mistake("Your mean includes the padded positions: average each sentence's real tokens only, as the mask "
                "marks them.", lambda h, m: h.mean(1)),
        Mistake("You zeroed the padding but divided by T: divide by each sentence's number of real tokens.",
                lambda h, m: (h * m[..., None]).sum(1) / h.shape[1]),
        Mistake("You summed the features E, not the tokens T (dim=1).", lambda h, m: (h * m[..., None]).sum(-1)),
        Mistake("Your result has one number per token, (B, T): you averaged the features E, not the tokens (dim=1).",
                when=lambda got, args: got.shape == args[1].shape, example=lambda h, m: h.mean(-1) * m),
        Mistake("You averaged the padding: attention_mask is 1 for a real token; use it as it is (no 1 - mask, no ~).",
                when=_padding_mean, example=lambda h, m: _mean_pool(h, 1 - m)),
        Mistake("A (B, E) sum divided by a (B,) count broadcasts the count along E: keep its axis with keepdim=True.",
                raises=RuntimeError, match="size of tensor",
                when=lambda err, args: _sizes(err) == {args[0].shape[0], args[0].shape[2]},
                example=lambda h, m: (h * m[..., None]).sum(1) / m.sum(1)),
    ])


def _weight_probes():
    g, g_causal = torch.Generator().manual_seed(10), torch.Generator().manual_seed(11)
    causal = (torch.randn(2, 3, 5, 5, generator=g_causal) * 2).masked_fill(torch.ones(5, 5).triu(1).bool(), -math.inf)
    return [Probe((torch.randn(4, 6, 6, generator=g).softmax(dim=-1),), "(H, T, T) = (4, 6, 6), an encoder's weights"),
            Probe((causal.softmax(dim=-1),), "(B, H, T, T) = (2, 3, 5, 5), causal"),
            Probe((torch.randn(6, 12, 3, 3, generator=g).softmax(dim=-1),), "(layers, H, T, T) = (6, 12, 3, 3)")]


check_previous_token_score = Exercise(
    "Exercise 2", reference=previous_token_score, probes=_weight_probes, refuse=("attnlib.induction",),
    solution=lambda w: w.diagonal(offset=-1, dim1=-2, dim2=-1).mean(dim=-1),  # the reference is attnlib's, refused
    correct="One score per head (and per whatever axes lead): 1 when every query puts all its weight on the token "
            "before it.", mistakes=[
        Mistake("You averaged the main diagonal, the weight each token gives itself: the previous token is one column "
                "to its left.", lambda w: w.diagonal(dim1=-2, dim2=-1).mean(dim=-1)),
        Mistake("You averaged the weight on the NEXT token, the diagonal on the other side: the sign of offset "
                "depends on which of dim1 and dim2 is the queries' axis.",
                lambda w: w.diagonal(offset=1, dim1=-2, dim2=-1).mean(dim=-1)),
        Mistake("You divided by T, counting query 0, which has no previous token: average the T - 1 entries.",
                lambda w: w.diagonal(offset=-1, dim1=-2, dim2=-1).sum(dim=-1) / w.shape[-1]),
        Mistake("Tensor.diagonal takes the first two axes unless told otherwise: the queries and keys are the last "
                "two, dim1=-2 and dim2=-1.", lambda w: w.diagonal(offset=-1).mean(dim=-1)),
        Mistake(lambda got, args: f"Your result has shape {tuple(got.shape)}; keep every leading axis of the "
                f"weights, {tuple(args[0].shape[:-2])}, and average only the T - 1 queries.",
                when=lambda got, args: isinstance(got, torch.Tensor) and got.shape != args[0].shape[:-2],
                example=lambda w: w.diagonal(offset=-1, dim1=-2, dim2=-1).mean()),
    ])


check_group_size = Exercise(
    "Exercise 3", expected=HQ // HKV, read=as_number,
    correct="Query heads 0-2 read key/value head 0, 3-5 head 1, 6-8 head 2.",
    diagnose=lambda got, want, args: "Count the key/value heads first, from the width of the key projection and "
                                     "of one head; then share the query heads among them.", mistakes=[
        Mistake("9 is the number of query heads; each key/value head is read by a share of them.", 9),
        Mistake("{got} is inverted: it counts key/value heads per query head, not the reverse.", 1 / 3),
    ])


check_cache_bytes = Exercise(
    "Exercise 4", expected=CACHE, read=as_number,
    correct="2 (K and V) x 30 layers x 3 heads x 64 numbers x 4 bytes = 46080 bytes, 45 KiB per token.",
    diagnose=lambda got, want, args: "Count per token: a key and a value, in every layer, for every key/value head, "
                                     "Dh numbers of 4 bytes each.", mistakes=[
        Mistake("{got} is half: only the keys (or the values) counted, or 2 bytes a number; the cache holds both, in "
                "float32.", CACHE // 2),
        Mistake("{got} uses the 9 query heads: grouped-query attention caches only the 3 key/value heads.",
                CACHE // HKV * HQ),
        Mistake("{got} counts numbers, not bytes: each float32 number takes 4 bytes.", CACHE // BYTES),
        Mistake("{got} is one layer's cache: every layer keeps its own keys and values.", CACHE // LAYERS),
        Mistake("{got} counts half a byte a number, the file's 4-bit weights: the cache holds float32.", CACHE // 8),
    ])
