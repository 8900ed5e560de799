"""Checkers for the exercises of notebook 09, attention inside pretrained transformers.

One function per exercise; each prints one line ("correct", "not yet. <hint>" or "not attempted
yet") and returns None. The hints name the classic mistakes: a mean over every position, padding
included, instead of the real tokens; the weight a token gives itself (the diagonal) or the next
token instead of the previous one; the key/value cache counted without one of K and V, with the 9
query heads instead of the 3 key/value heads, or in numbers instead of bytes; and the group size of
grouped-query attention read the wrong way round. None of the checkers draws from torch's global
random generator (each has its own seeded ``torch.Generator``), so a check cell does not change a
later random draw of the notebook.
"""

from __future__ import annotations

from typing import Any

import torch

from . import Mistake, check_function, check_value, number_in_string, read_value, report

__all__ = ["check_cache_bytes", "check_group_size", "check_mean_pool", "check_previous_token_score"]

# SmolLM2-135M: 30 layers, 9 query heads, 3 key/value heads of width 64, float32 (4 bytes)
LAYERS, HQ, HKV, DH, BYTES = 30, 9, 3, 64, 4


# --- Exercise 1 (predict, then run): how many query heads share one key/value head? ----------


def check_group_size(answer: Any) -> None:
    """Exercise 1: SmolLM2's 9 query heads share 3 key/value heads, so each key/value head serves 3."""
    if (hint := number_in_string(answer)) is not None:
        report("Exercise 1", "not yet", hint)
        return
    answer = read_value(answer, 3)  # 9 // 3, 9 / 3, a 0-d tensor or a NumPy number
    mistakes = [
        Mistake("9 is the number of query heads; each of the 3 key/value heads serves 9 / 3 of them.", answer=9),
        Mistake("1 would be ordinary multi-head attention (one key/value head per query head); SmolLM2 has 3 "
                "key/value heads for 9 query heads.", answer=1),
        Mistake("1/3 is the fraction of key/value heads; the question asks how many query heads share one "
                "key/value head: 9 / 3.", answer=1 / 3),
    ]
    check_value("Exercise 1", answer, 3, mistakes,
                correct="Query heads 0-2 read key/value head 0, 3-5 head 1, 6-8 head 2.")


# --- Exercise 2: mean pooling over the real tokens ---------------------------------------------


def _mean_pool(hidden: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    real = attention_mask[..., None].to(hidden.dtype)  # (B, T, 1)
    return (hidden * real).sum(dim=1) / real.sum(dim=1)  # (B, E)


def _mean_pool_inputs() -> list[tuple]:
    g = torch.Generator().manual_seed(9)  # a private generator: the notebook's own draws stay as they were
    hidden = torch.randn(3, 5, 4, generator=g)  # (B, T, E)
    mask = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [1, 0, 0, 0, 0]])  # Hugging Face's 1 = real
    return [(hidden, mask), (hidden[:2, :3], torch.ones(2, 3, dtype=torch.long))]


def _is_padding_mean(got: Any) -> bool:
    """True when ``got`` is, on the first input, the mean of each sentence's padding (a sentence without any: 0)."""
    hidden, mask = _mean_pool_inputs()[0]
    pad = (1 - mask)[..., None].to(hidden.dtype)
    means = (hidden * pad).sum(dim=1) / pad.sum(dim=1).clamp_min(1)
    with_pad = pad.sum(dim=(1, 2)) > 0
    return (isinstance(got, torch.Tensor) and got.shape == means.shape
            and bool(torch.allclose(got[with_pad].double(), means[with_pad].double(), atol=1e-5)))


def check_mean_pool(function: Any) -> None:
    """Exercise 2: ``mean_pool(hidden (B, T, E), attention_mask (B, T)) -> (B, E)``, the real tokens' mean.

    Names: the padding averaged in (hidden.mean(dim=1)); the padding zeroed but the sum divided by T;
    a sum over the features; a division by the batch's total count; the padding's own mean (the mask
    inverted); a sum without the division; a (B,) count without keepdim (raises unless B = E).
    """
    mistakes = [
        Mistake("Your mean includes the padded positions: hidden.mean(dim=1) divides by T. Multiply by the "
                "mask first, sum over the tokens and divide by the number of real tokens, "
                "attention_mask.sum(dim=1, keepdim=True), shape (B, 1), so that it divides every feature.",
                answer=lambda hidden, mask: hidden.mean(dim=1)),
        Mistake("You zeroed the padding but still divided by T: divide by the number of real tokens per sentence, "
                "attention_mask.sum(dim=1, keepdim=True).",
                answer=lambda hidden, mask: (hidden * mask[..., None]).sum(dim=1) / hidden.shape[1]),
        Mistake("You summed over the features E instead of the tokens T: pool over dim=1.",
                answer=lambda hidden, mask: (hidden * mask[..., None]).sum(dim=-1)),
        Mistake("You divided by the number of real tokens of the whole batch, attention_mask.sum(): each sentence "
                "is divided by its own count, attention_mask.sum(dim=1, keepdim=True), shape (B, 1).",
                answer=lambda hidden, mask: (hidden * mask[..., None]).sum(dim=1) / mask.sum()),
        Mistake("You averaged the padding: Hugging Face's attention_mask is 1 for a real token and 0 for padding, so "
                "multiply by the mask as it is (no 1 - mask, no ~).",
                when=lambda got: _is_padding_mean(got)),
        Mistake("You summed the real tokens but did not divide: the mean divides each sentence's sum by its count "
                "of real tokens, attention_mask.sum(dim=1, keepdim=True).",
                answer=lambda hidden, mask: (hidden * mask[..., None]).sum(dim=1)),
    ]

    def on_error(err: Exception, args: tuple) -> str | None:
        hidden, mask = args
        try:  # does dividing by a count without keepdim fail here too? (B, E) / (B,) only runs when B == E
            (hidden * mask[..., None]).sum(dim=1) / mask.sum(dim=1)
        except RuntimeError:
            if isinstance(err, RuntimeError):
                return (f"Your function raised RuntimeError on hidden {tuple(hidden.shape)} and a mask "
                        f"{tuple(mask.shape)}: a (B, E) sum divided by a (B,) count broadcasts the count along E, "
                        "not along B. Keep the count's axis: attention_mask.sum(dim=1, keepdim=True), shape (B, 1).")
        return None
    check_function("Exercise 2", function, _mean_pool_inputs(), _mean_pool, mistakes, on_error=on_error,
                   correct="Padding changes nothing: the sentence embedding averages its real tokens only.")


# --- Exercise 3: a previous-token score per head -------------------------------------------------


def _previous_token_score(weights: torch.Tensor) -> torch.Tensor:
    return weights.diagonal(offset=-1, dim1=-2, dim2=-1).mean(dim=-1)  # (H, T-1) -> (H,)


def _weights_inputs() -> list[tuple]:
    g = torch.Generator().manual_seed(10)  # a private generator: the notebook's own draws stay as they were
    weights = torch.randn(4, 6, 6, generator=g).softmax(dim=-1)  # (H, Tq, Tk)
    return [(weights,), (weights[:2, :3, :3],)]


def check_previous_token_score(function: Any) -> None:
    """Exercise 3: ``previous_token_score(weights (H, T, T)) -> (H,)``: mean of weights[h, i, i - 1] over i >= 1.

    Names: the main diagonal; the next token (offset=+1, or offset=-1 with dim1 and dim2 swapped);
    the sum divided by T; the sum without the mean.
    """
    mistakes = [
        Mistake("You averaged the diagonal, the weight each token gives itself: the previous token is one column "
                "to the left, weights.diagonal(offset=-1, dim1=-2, dim2=-1).",
                answer=lambda w: w.diagonal(dim1=-2, dim2=-1).mean(dim=-1)),
        Mistake("You averaged the weight each query gives the NEXT token, weights[h, i, i + 1]: either offset=+1 "
                "with dim1=-2, dim2=-1, or offset=-1 with the dims swapped (dim1=-1, dim2=-2), which counts the "
                "offset from the keys' side. With dim1=-2 (queries) and dim2=-1 (keys), the previous token is "
                "offset=-1: weights.diagonal(offset=-1, dim1=-2, dim2=-1).",
                answer=lambda w: w.diagonal(offset=1, dim1=-2, dim2=-1).mean(dim=-1)),
        Mistake("You divided by T, counting query 0 (which has no previous token): average over the T - 1 "
                "entries of the diagonal.",
                answer=lambda w: w.diagonal(offset=-1, dim1=-2, dim2=-1).sum(dim=-1) / w.shape[-1]),
        Mistake("You summed the T - 1 weights of the diagonal: the score is their mean, so that a perfect "
                "previous-token head scores 1 whatever T is. Average them: .mean(dim=-1).",
                answer=lambda w: w.diagonal(offset=-1, dim1=-2, dim2=-1).sum(dim=-1)),
    ]
    check_function("Exercise 3", function, _weights_inputs(), _previous_token_score, mistakes,
                   correct="A head scores 1 when every token puts all its weight on the token before it.")


# --- Exercise 4 (predict, then run): the cache's bytes per token --------------------------------


def check_cache_bytes(answer: Any) -> None:
    """Exercise 4: bytes of SmolLM2's float32 key/value cache per token: 2 * 30 * 3 * 64 * 4 = 46080.

    Names: keys only; the 9 query heads; numbers instead of bytes; one layer; KiB instead of bytes.
    """
    if (hint := number_in_string(answer)) is not None:
        report("Exercise 4", "not yet", hint)
        return
    expected = 2 * LAYERS * HKV * DH * BYTES
    answer = read_value(answer, expected)
    mistakes = [
        Mistake(f"{answer} counts only the keys (or only the values): the cache holds both, so twice as much.",
                answer=LAYERS * HKV * DH * BYTES),
        Mistake(f"{answer} uses the 9 query heads: only the 3 key/value heads are cached, that is what grouped-query "
                "attention saves.", answer=2 * LAYERS * HQ * DH * BYTES),
        Mistake(f"{answer} is a count of numbers, not bytes: each float32 number takes 4 bytes.",
                answer=2 * LAYERS * HKV * DH),
        Mistake(f"{answer} is one layer: every one of the 30 layers keeps its own keys and values.",
                answer=2 * HKV * DH * BYTES),
        Mistake(f"{answer} is in KiB (46080 / 1024 = 45): the question asks bytes.", answer=expected / 1024),
    ]
    check_value("Exercise 4", answer, expected, mistakes,
                correct="2 (K and V) x 30 layers x 3 heads x 64 numbers x 4 bytes = 46080 bytes, 45 KiB per token.")
