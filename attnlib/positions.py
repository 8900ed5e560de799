"""Positions for attention: sinusoidal encodings (added to the tokens) and RoPE (rotating queries and keys).

Attention without positions is permutation-equivariant: it cannot tell "dog bites man" from "man
bites dog" (notebook 07). Two ways to tell it the order:

- :func:`sinusoidal_positions` builds the (T, E) table of Vaswani et al. (2017, sec. 3.5), which a
  model *adds* to its token embeddings before the first layer.
- :func:`apply_rope` rotates each pair of query (or key) features by an angle proportional to the
  token's position (Su et al. 2021, "RoFormer", eq. 13-16), so that a query-key score depends on the
  two positions only through their distance. Values are not rotated.

Shape legend: T sequence length (Tq or Tk), E model width, D the width being rotated (a head's Dh).
"""

from __future__ import annotations

import math

import torch

from ._checks import check_floating, check_min_dims, check_tensor, is_real_number, shape_str

__all__ = ["apply_rope", "sinusoidal_positions"]


def _check_base(base: object) -> float:
    """Return ``base`` as a float; ValueError unless it is a real number (not a bool), finite and > 0."""
    if not is_real_number(base) or not math.isfinite(base) or base <= 0:
        raise ValueError(f"base must be a finite float > 0 (the papers use 10000.0), got {base!r}")
    return float(base)


def sinusoidal_positions(
    num_positions: int,
    embed_dim: int,
    base: float = 10000.0,
    *,
    dtype: torch.dtype = torch.float32,
    device: torch.device | str | None = None,
) -> torch.Tensor:
    """The sinusoidal position encodings of "Attention Is All You Need": one row per position.

    For position ``t`` and pair index ``i`` (``0 <= i < E / 2``)::

        PE[t, 2i]     = sin(t / base ** (2i / E))
        PE[t, 2i + 1] = cos(t / base ** (2i / E))

    Even features hold the sines, odd features the cosines; the pair ``(2i, 2i + 1)`` turns with
    frequency ``base ** (-2i / E)``, from 1 radian per position (``i = 0``) down to nearly ``1 / base``.
    The table is computed in float64 and then cast to ``dtype``, so every entry is the formula's
    value rounded once.

    Args:
        num_positions: T, the number of positions (rows), ``t = 0 .. T - 1``; an int >= 0.
        embed_dim: E, the model width (columns); a positive even int.
        base: the wavelength scale, 10000.0 in the paper; a finite float > 0.
        dtype: the floating dtype of the result (default float32).
        device: where to build the table.

    Returns:
        (T, E) tensor of ``dtype``, to be added to token embeddings of shape (..., T, E).

    Raises:
        ValueError: ``num_positions`` not an int >= 0, ``embed_dim`` not a positive even int, or
            ``base`` not a finite float > 0.
        TypeError: ``dtype`` not a floating-point dtype.

    Source: Vaswani et al. 2017, "Attention Is All You Need", sec. 3.5 (Positional Encoding).
    """
    if not isinstance(num_positions, int) or isinstance(num_positions, bool) or num_positions < 0:
        raise ValueError(f"num_positions must be a non-negative int, got {num_positions!r}")
    if not isinstance(embed_dim, int) or isinstance(embed_dim, bool) or embed_dim <= 0 or embed_dim % 2:
        raise ValueError(
            f"embed_dim must be a positive even int (each sine has its cosine beside it), got {embed_dim!r}"
        )
    base = _check_base(base)
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise TypeError(f"dtype must be a floating-point torch.dtype, got {dtype!r}")
    pair = torch.arange(embed_dim // 2, dtype=torch.float64, device=device)  # (E/2,): i
    frequency = base ** (-2.0 * pair / embed_dim)  # (E/2,): 1 / base^(2i/E)
    position = torch.arange(num_positions, dtype=torch.float64, device=device)  # (T,)
    angle = position[:, None] * frequency[None, :]  # (T, 1) * (1, E/2) -> (T, E/2)
    table = torch.stack((angle.sin(), angle.cos()), dim=-1)  # (T, E/2, 2): [sin, cos] per pair
    return table.flatten(-2).to(dtype)  # (T, E/2, 2) -> (T, E): sin at 2i, cos at 2i + 1


def apply_rope(
    x: torch.Tensor,
    positions: torch.Tensor | None = None,
    *,
    base: float = 10000.0,
    interleaved: bool = False,
) -> torch.Tensor:
    """Rotary position embedding (RoPE): rotate each pair of features of ``x`` by its position's angle.

    Row ``t`` of ``x`` (the query or key of the token at ``positions[t]``) has its ``D / 2`` feature
    pairs rotated, pair ``i`` by the angle ``positions[t] * base ** (-2i / D)``::

        (a, b) -> (a cos - b sin, a sin + b cos)

    Apply it to the queries and the keys (never the values) before their dot product: the score of
    query ``m`` and key ``n`` then depends on the positions only through ``m - n``.

    Two pairings are in use, and they differ only by a fixed permutation of the D features:

    - ``interleaved=False`` ("rotate half", GPT-NeoX, Llama, Hugging Face's
      ``apply_rotary_pos_emb``): pair ``i`` is features ``(i, i + D/2)``.
    - ``interleaved=True`` (the RoFormer paper, eq. 15): pair ``i`` is features ``(2i, 2i + 1)``.

    The angles are computed in float32 (float64 for float64 input), the rotation in the same
    dtype, and the result cast back to ``x.dtype``, so float16 and bfloat16 inputs lose no accuracy
    to their short mantissa in the angle.

    Args:
        x: (..., T, D) floating tensor, D even; for attention (B, H, T, Dh) queries or keys.
        positions: (T,) integer or floating tensor on ``x``'s device, the position of each row;
            None means ``arange(T)``. A key/value cache passes the positions of the new tokens.
        base: the wavelength scale, 10000.0 in the paper and in Llama 2; a finite float > 0.
        interleaved: the pairing (see above); False by default, as Hugging Face's Llama.

    Returns:
        A new (..., T, D) tensor of ``x``'s dtype and device. ``x`` itself is not modified.

    Raises:
        TypeError: ``x`` not a floating tensor, ``positions`` not an integer or floating tensor,
            ``interleaved`` not a bool.
        ValueError: ``x`` with fewer than 2 dimensions or an odd last dimension D, ``positions``
            not of shape (T,) or on another device, ``base`` not a finite float > 0.

    Source: Su et al. 2021, "RoFormer: Enhanced Transformer with Rotary Position Embedding",
    sec. 3.2 (eq. 13-16) and sec. 3.4.2 (the element-wise form); the rotate-half pairing is that of
    EleutherAI's GPT-NeoX and of Hugging Face transformers' Llama (``rotate_half``).
    """
    check_floating("x", x)
    check_min_dims("x", x, 2, "(..., T, D)")
    T, D = x.shape[-2], x.shape[-1]
    if D % 2:
        raise ValueError(
            f"x must have an even last dimension D (its features are rotated in pairs), got shape {shape_str(x)}"
        )
    base = _check_base(base)
    if not isinstance(interleaved, bool):
        raise TypeError(f"interleaved must be a bool, got {type(interleaved).__name__}")
    compute = torch.float64 if x.dtype == torch.float64 else torch.float32
    if positions is None:
        positions = torch.arange(T, device=x.device)
    else:
        check_tensor("positions", positions)
        if positions.dtype == torch.bool or positions.dtype.is_complex:
            raise TypeError(f"positions must be an integer or floating-point tensor (T,), got dtype {positions.dtype}")
        if positions.shape != (T,):
            raise ValueError(
                f"positions must have shape (T,) = ({T},), one position per row of x {shape_str(x)}, "
                f"got shape {shape_str(positions)}"
            )
        if positions.device != x.device:
            raise ValueError(f"positions must be on x's device {x.device}, got {positions.device}")
    # the frequencies as Hugging Face's LlamaRotaryEmbedding computes them (same dtype, same operations)
    pair_start = torch.arange(0, D, 2, dtype=torch.int64, device=x.device).to(compute)  # (D/2,): 2i
    frequency = 1.0 / (base ** (pair_start / D))  # (D/2,)
    angle = positions.to(compute)[:, None] * frequency[None, :]  # (T, 1) * (1, D/2) -> (T, D/2)
    cos, sin = angle.cos(), angle.sin()  # (T, D/2) each, broadcast over the leading dimensions of x
    xc = x.to(compute)
    if interleaved:
        a, b = xc[..., 0::2], xc[..., 1::2]  # (..., T, D) -> (..., T, D/2): features 2i and 2i + 1
        rotated = torch.stack((a * cos - b * sin, b * cos + a * sin), dim=-1)  # (..., T, D/2, 2)
        return rotated.flatten(-2).to(x.dtype)  # (..., T, D/2, 2) -> (..., T, D), pairs back in place
    a, b = xc[..., : D // 2], xc[..., D // 2 :]  # (..., T, D) -> (..., T, D/2): features i and i + D/2
    return torch.cat((a * cos - b * sin, b * cos + a * sin), dim=-1).to(x.dtype)  # (..., T, D)
