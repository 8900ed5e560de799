"""Induction heads: the repeated-token task and the two scores that find the heads (notebook 10).

An induction head completes a pattern seen earlier in the context: at a token A it attends to the
token that followed an earlier A, and copies it. It needs a second head in an earlier layer, a
previous-token head, that writes into every position which token came before it. Both are found
by measurement on sequences of random tokens in which a segment appears twice: only the context
can predict the second copy.

Shape legend: B batch, H heads, T sequence length (queries and keys), L the repeated segment's length.
"""

from __future__ import annotations

import torch

__all__ = ["prefix_matching_score", "previous_token_score", "repeated_tokens"]


def _check_int(name: str, n: object, low: int) -> int:
    if not isinstance(n, int) or isinstance(n, bool) or n < low:
        raise ValueError(f"{name} must be an int >= {low}, got {n!r}")
    return n


def repeated_tokens(
    batch_size: int, seq_len: int, repeat_len: int, vocab_size: int, *, generator: torch.Generator | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Random tokens in which one segment of ``repeat_len`` tokens appears twice, at random places.

    Every token is drawn uniformly from ``0 .. vocab_size - 1``; then, in each row, the segment that
    starts at ``first`` is copied to ``second``, with ``first`` drawn uniformly from the starts that
    leave room for both copies, and ``second`` uniformly from ``first + L .. T - L`` (the copies never
    overlap and may touch). Both starts change from row to row: with a fixed distance between the
    copies a model could find the earlier copy by its position instead of by its tokens.

    Args:
        batch_size: B, an int >= 1.
        seq_len: T, an int >= 2 * repeat_len.
        repeat_len: L, an int >= 1.
        vocab_size: the number of token ids, an int >= 1.
        generator: the random generator to draw from (None: torch's global one).

    Returns:
        ``(tokens, first, second)``: tokens int64 (B, T); first and second int64 (B,), the start of
        each row's first and second copy, so ``tokens[b, second[b] + j] == tokens[b, first[b] + j]``
        for ``0 <= j < L``.

    Raises:
        ValueError: a size that is not an int in range, or ``seq_len < 2 * repeat_len``.

    Source: Olsson et al. 2022, "In-context Learning and Induction Heads" (repeated random tokens).
    """
    for name, n in (("batch_size", batch_size), ("seq_len", seq_len), ("repeat_len", repeat_len),
                    ("vocab_size", vocab_size)):
        _check_int(name, n, 1)
    if seq_len < 2 * repeat_len:
        raise ValueError(f"seq_len must be at least 2 * repeat_len = {2 * repeat_len} to hold two copies, "
                         f"got seq_len={seq_len}")
    tokens = torch.randint(vocab_size, (batch_size, seq_len), generator=generator)  # (B, T)
    first = torch.randint(seq_len - 2 * repeat_len + 1, (batch_size,), generator=generator)  # 0 .. T - 2L
    room = seq_len - repeat_len - (first + repeat_len) + 1  # (B,): how many starts the second copy has
    second = first + repeat_len + (torch.rand(batch_size, generator=generator) * room).long()  # first + L .. T - L
    rows, j = torch.arange(batch_size)[:, None], torch.arange(repeat_len)  # (B, 1), (L,)
    tokens[rows, second[:, None] + j] = tokens[rows, first[:, None] + j]  # (B, L) copied
    return tokens, first, second


def _check_weights(weights: torch.Tensor) -> None:
    if not isinstance(weights, torch.Tensor) or not weights.is_floating_point():
        raise TypeError(f"weights must be a floating tensor, got {type(weights).__name__}"
                        + (f" of dtype {weights.dtype}" if isinstance(weights, torch.Tensor) else ""))
    if weights.dim() < 2 or weights.shape[-1] != weights.shape[-2]:
        raise ValueError(f"weights must be (..., T, T), self-attention weights, got shape {tuple(weights.shape)}")


def previous_token_score(weights: torch.Tensor) -> torch.Tensor:
    """The weight each query gives the token right before it, averaged over queries ``1 .. T - 1``.

    Args:
        weights: (..., T, T) floating, e.g. (B, H, T, T) attention weights (rows: queries).

    Returns:
        (...): e.g. (B, H); 1 for a head that puts all its weight on the previous token. A head that
        spreads it evenly over all T keys scores 1 / T; under a causal mask query i sees only i + 1 keys,
        and an even spread scores the mean of 1 / (i + 1), about 0.1 at T = 32. Query 0 has no previous
        token and is left out.

    Raises:
        TypeError: weights not a floating tensor. ValueError: weights not (..., T, T) with T >= 2.

    Source: Elhage et al. 2021, "A Mathematical Framework for Transformer Circuits" (previous-token heads).
    """
    _check_weights(weights)
    if weights.shape[-1] < 2:
        raise ValueError(f"weights must have T >= 2 (query 0 has no previous token), got shape {tuple(weights.shape)}")
    return weights.diagonal(offset=-1, dim1=-2, dim2=-1).mean(dim=-1)  # (..., T - 1) -> (...)


def prefix_matching_score(
    weights: torch.Tensor, first: torch.Tensor | int, second: torch.Tensor | int, repeat_len: int,
) -> torch.Tensor:
    """The weight the second copy's tokens give the token right after their earlier occurrence.

    Query ``second + j`` (token A, ``0 <= j < L``) scores the weight it gives key ``first + j + 1``,
    the token that followed A in the first copy: what an induction head attends to. The earlier
    occurrence itself (key ``first + j``) does not count, nor do the first copy's queries.

    Args:
        weights: (B, ..., T, T) floating, e.g. (B, H, T, T) attention weights of B sequences.
        first, second: the starts of the two copies, (B,) int tensors or ints (the same for every row),
            with ``first + 1 <= second`` and ``second + repeat_len <= T``.
        repeat_len: L, the length of the repeated segment, an int >= 1.

    Returns:
        (B, ...): e.g. (B, H), the mean over the L queries of the second copy.

    Raises:
        TypeError: weights not a floating tensor. ValueError: weights not (B, ..., T, T), starts out of range.

    Source: Olsson et al. 2022, "In-context Learning and Induction Heads" (the prefix-matching score).
    """
    _check_weights(weights)
    _check_int("repeat_len", repeat_len, 1)
    b, t = weights.shape[0], weights.shape[-1]
    first = torch.as_tensor(first).expand(b) if not isinstance(first, torch.Tensor) or first.dim() == 0 else first
    second = torch.as_tensor(second).expand(b) if not isinstance(second, torch.Tensor) or second.dim() == 0 else second
    if weights.dim() < 3 or first.shape != (b,) or second.shape != (b,):
        raise ValueError(f"weights must be (B, ..., T, T) and first, second ints or (B,) tensors, got weights "
                         f"{tuple(weights.shape)}, first {tuple(first.shape)}, second {tuple(second.shape)}")
    if (first < 0).any() or (second < first + 1).any() or (second + repeat_len > t).any():
        raise ValueError(f"need 0 <= first < second and second + repeat_len <= T = {t}")
    j = torch.arange(repeat_len)  # (L,)
    queries, keys = second[:, None] + j, first[:, None] + j + 1  # (B, L) each
    w = weights.movedim(0, -3)  # (B, ..., T, T) -> (..., B, T, T)
    picked = w[..., torch.arange(b)[:, None], queries, keys]  # (..., B, L)
    return picked.mean(dim=-1).movedim(-1, 0)  # (..., B) -> (B, ...)
