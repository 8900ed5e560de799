"""Scaled dot-product attention, written out as matmul, mask, softmax, matmul.

Shape legend: B batch, H heads, Tq query length, Tk key/value length, E query/key width
(Ev value width). Leading dimensions written ``...`` are any batch dimensions, e.g. (B,)
or (B, H), shared by query, key and value (or broadcastable between them).
"""

from __future__ import annotations

import math

import torch
import torch.autograd.forward_ad as fwAD
import torch.nn.functional as F

from ._checks import (
    broadcast_batch,
    check_bool,
    check_dropout,
    check_floating,
    check_mask,
    check_min_dims,
    check_same_dtype_device,
    check_scale,
    shape_str,
)
from .masks import causal_mask

NEG_INF = float("-inf")
HALF = (torch.float16, torch.bfloat16)  # computed in float32, returned in their own dtype


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None = None, dim: int = -1) -> torch.Tensor:
    """Softmax over keys that leaves masked positions at exactly zero weight.

    A position is masked when ``mask`` is False there or when its score is ``-inf``.
    Masked scores are set to ``-inf`` (never a finite sentinel such as minus 10^9, which gives
    padding uniform weight in a fully masked row and overflows float16). A row whose
    positions are all masked gets all-zero weights instead of the NaN that
    ``softmax([-inf, -inf])`` gives, and its gradient is zero, not NaN; this is what
    ``F.scaled_dot_product_attention`` does in torch 2.13.

    Args:
        scores: floating (..., Tq, Tk), any floating dtype. Not modified.
        mask: optional bool, True = may attend, broadcastable to ``scores``' shape
            without enlarging it (e.g. (Tq, Tk), (B, 1, 1, Tk), (B, H, Tq, Tk)).
        dim: the axis to normalise over; -1, the keys, for attention.

    Returns:
        weights of ``scores``' shape and dtype: each row along ``dim`` sums to 1, or
        is all zeros when every position in it is masked.

    Raises:
        TypeError: ``scores`` is not floating, or ``mask`` is not bool.
        ValueError: ``mask`` does not broadcast to ``scores``' shape.

    Source: Vaswani et al. 2017, "Attention Is All You Need", eq. 1 (the softmax) and
    sec. 3.2.3 (masking by setting illegal connections to -inf).
    """
    check_floating("scores", scores)
    if mask is not None:
        check_mask("mask", mask, scores.shape, layout="scores' shape", like=scores, allow_float=False)
    return _masked_softmax(scores, mask, dim)


def _masked_softmax(
    scores: torch.Tensor, mask: torch.Tensor | None, dim: int = -1, *, overwrite: bool = False
) -> torch.Tensor:
    """:func:`masked_softmax` without the input checks.

    ``overwrite=True`` computes the weights in ``scores``' memory instead of new tensors
    of the same size: allocating a fresh (..., Tq, Tk) tensor costs about as much time as
    the softmax itself. Only for scores the caller made and autograd does not need.
    """
    if scores.numel() == 0:
        return torch.softmax(scores, dim=dim)  # nothing to normalise (and amax needs an element)
    fill = torch.Tensor.masked_fill_ if overwrite else torch.Tensor.masked_fill
    if mask is not None:
        scores = fill(scores, ~mask, NEG_INF)  # masked -> -inf, so that exp gives exactly 0
    # A row whose keys are all masked would give 0 / 0 = NaN: softmax a row of zeros instead,
    # then zero its weights, so that its weights and its gradient are 0, not NaN. A row
    # holding NaN or +inf has a NaN or +inf maximum and stays NaN. Rows are rarely fully
    # masked, so the two extra full-size passes run only when one is (meta tensors hold no
    # values to test: they take them always).
    all_masked = scores.amax(dim=dim, keepdim=True) == NEG_INF  # (..., 1): every key masked
    some_row_all_masked = scores.is_meta or bool(all_masked.any())
    if some_row_all_masked:
        scores = fill(scores, all_masked, 0.0)
    weights = torch.softmax(scores, dim=dim, out=scores if overwrite else None)
    return fill(weights, all_masked, 0.0) if some_row_all_masked else weights


def scaled_dot_product_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attn_mask: torch.Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Attention(Q, K, V) = softmax(Q K^T * scale + mask) V, returning output and weights.

    The arguments mean what they mean in ``torch.nn.functional.scaled_dot_product_attention``
    (torch 2.13), which returns only the output; this returns the weights too, so every
    result can be plotted.

    Args:
        query: (..., Tq, E) floating.
        key: (..., Tk, E), same dtype and device as ``query``.
        value: (..., Tk, Ev), same dtype and device.
        attn_mask: optional, broadcastable to the scores' shape (..., Tq, Tk) without
            enlarging it (``...`` = the batch shape of query and key). bool: True = may
            attend. floating (``query``'s dtype): added to the scores (0 = attend, -inf =
            blocked; a -inf key stays blocked even where its score overflowed to +inf in
            float16). Integer masks raise, and so do float masks of only 0s and 1s (a bool
            mask of the wrong dtype: use ``.bool()``). A (B, Tk) padding mask with 3-D
            inputs is read as (Tq, Tk), and no check can tell when B == Tq: give it its
            query axis (``mask[:, None, :]``, :func:`expand_key_mask`), or use the modules'
            ``key_mask`` argument.
        dropout_p: probability of zeroing a weight, a float in [0, 1) (a NumPy float is
            fine, a bool is not). Like torch's function, it is applied whenever > 0
            (there is no training flag); pass 0.0 to evaluate.
        is_causal: apply ``causal_mask(Tq, Tk)`` aligned top-left (query i sees keys
            0..i). Cannot be combined with ``attn_mask``.
        scale: multiplies the scores, a finite float (a NumPy float is fine, a bool is
            not); defaults to 1 / sqrt(E). The queries are scaled before the product, so
            in float16 it is the scaled score that must stay below 65504, as in torch.
        enable_gqa: grouped-query attention, as in torch: query (..., Hq, Tq, E) and
            key, value (..., Hkv, Tk, E) with Hq a multiple of Hkv; query head h attends
            with key/value head h // (Hq / Hkv) (each key/value head is repeated
            Hq / Hkv times along dim -3). Multi-query attention is Hkv = 1.

    Returns:
        ``(output, weights)``: output (..., Tq, Ev); weights (..., Tq, Tk), the matrix
        that multiplied ``value``, so ``output == weights @ value`` holds (float32 and
        float64). float16 and bfloat16 inputs are computed in float32 (scores, softmax and
        weighted sum, as torch's CPU kernels do) and both results are rounded to the input
        dtype once, at the end: there ``output`` equals ``weights @ value`` to the dtype's
        rounding only, since it was computed from the unrounded weights. With
        dropout the weights are returned after dropout (zeroed entries, the rest scaled
        by 1 / (1 - dropout_p)), as ``nn.MultiheadAttention`` returns them. A query
        whose keys are all masked gets zero weights and a zero output.

    Raises:
        TypeError: a non-tensor or non-floating input, inputs of different dtypes, an
            integer mask, a float mask of another dtype, a ``scale`` that is not a
            number (or is a bool), or ``is_causal`` or ``enable_gqa`` not a bool.
        ValueError: query and key widths differ, key and value lengths differ, with
            ``enable_gqa`` inputs under 3-D, key and value with different head counts, or
            query heads not a multiple of the key/value heads (without it, 4-D or larger inputs
            whose head counts differ that way raise and suggest ``enable_gqa=True``), batch
            dimensions do not broadcast, a mask does not broadcast to (..., Tq, Tk) or
            would enlarge it, a float mask of only 0s and 1s or holding NaN or +inf,
            ``attn_mask`` together with ``is_causal``, ``dropout_p`` outside [0, 1) or not
            a number, a ``scale`` that is NaN or infinite, E = 0 without a ``scale``, or
            inputs (or the mask) on different devices.

    Source: Vaswani et al. 2017, "Attention Is All You Need", sec. 3.2.1, eq. 1; grouped-query
    attention: Ainslie et al. 2023, "GQA", sec. 2.2 (multi-query: Shazeer 2019).
    """
    check_query_key_value(query, key, value)
    check_bool("enable_gqa", enable_gqa)
    if enable_gqa:
        key, value = _repeat_kv_heads(query, key, value)  # (..., Hkv, Tk, E) -> (..., Hq, Tk, E)
    else:
        _check_heads_without_gqa(query, key, value)
    broadcast_batch(query=query, key=key, value=value)  # raises unless the batch dimensions broadcast
    dropout_p = check_dropout("dropout_p", dropout_p)
    scale = check_scale_and_mask(query, key, attn_mask, is_causal, scale)

    mask = None
    if is_causal:
        mask = causal_mask(query.shape[-2], key.shape[-2], device=query.device)  # (Tq, Tk), top-left aligned
    elif attn_mask is not None:
        mask = attn_mask if attn_mask.dtype == torch.bool else attn_mask != NEG_INF  # True = may attend

    # float16 and bfloat16 are computed in float32 (scores, softmax and weighted sum), as torch's CPU
    # kernels do: a float16 score rounds to 3 significant digits and its sum of exp can overflow.
    dtype = query.dtype
    if dtype in HALF:
        query, key, value = query.float(), key.float(), value.float()
    # Scale the queries, not the scores: what must fit in the dtype is the scaled score (in
    # float16, |q . k| can pass 65504 where |q . k| * scale does not); (..., Tq, E) is also
    # smaller than (..., Tq, Tk).
    scores = (query * scale) @ key.transpose(-2, -1)  # (..., Tq, E) @ (..., E, Tk) -> (..., Tq, Tk)
    if attn_mask is not None and attn_mask.is_floating_point():
        scores = scores + attn_mask.to(scores.dtype)  # a float mask is added: 0 keeps, -inf blocks
    # The weights may overwrite the scores (saves a (..., Tq, Tk) tensor) unless autograd needs
    # them: backward mode (requires_grad) or forward mode (a dual tensor carries a tangent).
    overwrite = not (torch.is_grad_enabled() and scores.requires_grad) and fwAD.unpack_dual(scores).tangent is None
    weights = _masked_softmax(scores, mask, overwrite=overwrite)  # (..., Tq, Tk), rows sum to 1 (or 0)
    if dropout_p > 0.0:
        weights = F.dropout(weights, p=dropout_p)
    output = weights @ value  # (..., Tq, Tk) @ (..., Tk, Ev) -> (..., Tq, Ev)
    if dtype in HALF:
        return output.to(dtype), weights.to(dtype)  # rounded once, at the end
    return output, weights


def combine_with_key_mask(
    attn_mask: torch.Tensor | None, keys: torch.Tensor, is_causal: bool, tq: int, tk: int
) -> torch.Tensor:
    """One mask from a checked ``attn_mask`` (or ``is_causal``) and a key mask ``keys``.

    ``keys`` is a checked bool key mask with its query (and head) axes, e.g. (B, 1, 1, Tk).
    A bool ``attn_mask`` is combined with ``&``; a float one gets -inf where ``keys`` is
    False; ``is_causal`` becomes ``causal_mask(tq, tk) & keys``.
    """
    if is_causal:
        if attn_mask is not None:
            raise ValueError("attn_mask and is_causal=True cannot be combined; put the causal mask in attn_mask with &")
        attn_mask = causal_mask(tq, tk, device=keys.device)  # (Tq, Tk)
    if attn_mask is None:
        return keys
    if attn_mask.dtype == torch.bool:
        return attn_mask & keys
    return torch.where(keys, attn_mask, NEG_INF)  # a float mask: -inf blocks a padding key


def _repeat_kv_heads(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Repeat each key/value head Hq / Hkv times along dim -3 (torch's ``enable_gqa=True`` rule)."""
    for name, x in (("query", query), ("key", key), ("value", value)):
        check_min_dims(name, x, 3, "(..., H, T, features) with enable_gqa=True")
    hq, hkv = query.shape[-3], key.shape[-3]
    if value.shape[-3] != hkv:
        raise ValueError(
            "with enable_gqa=True key and value must have the same number of heads Hkv (dim -3), "
            f"got key {shape_str(key)} and value {shape_str(value)}"
        )
    if hkv == 0 or hq % hkv != 0:
        raise ValueError(
            "with enable_gqa=True the query heads Hq (dim -3) must be a multiple of the key/value heads Hkv, "
            f"got query {shape_str(query)} (Hq = {hq}) and key {shape_str(key)} (Hkv = {hkv})"
        )
    groups = hq // hkv  # query heads per key/value head
    # (..., Hkv, Tk, E) -> (..., Hq, Tk, E): heads 0..groups-1 of the query share key/value head 0, and so on
    return key.repeat_interleave(groups, dim=-3), value.repeat_interleave(groups, dim=-3)


def _check_heads_without_gqa(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor) -> None:
    """Name enable_gqa when the head axes differ the way grouped-query attention's do."""
    if min(query.dim(), key.dim(), value.dim()) < 4:
        return  # (B, T, E) inputs: dim -3 is the batch, and broadcast_batch names the mismatch
    hq, hk, hv = query.shape[-3], key.shape[-3], value.shape[-3]
    if hk == hv and 1 < hk < hq and hq % hk == 0:
        raise ValueError(
            f"query has {hq} heads (dim -3) and key and value have {hk}: pass enable_gqa=True for "
            f"grouped-query attention (each key/value head shared by {hq // hk} query heads), "
            f"got query {shape_str(query)} and key {shape_str(key)}"
        )


def check_query_key_value(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor) -> None:
    """The checks every attention function of attnlib makes of its three inputs.

    Each is a floating tensor of at least 2 dimensions (..., T, features); all share one dtype and
    device; query and key have the same width E; key and value the same length Tk. Raises the
    TypeError or ValueError that :func:`scaled_dot_product_attention` documents.
    """
    for name, x in (("query", query), ("key", key), ("value", value)):
        check_floating(name, x)
        check_min_dims(name, x, 2, "(..., T, features)")
    check_same_dtype_device(query=query, key=key, value=value)
    if query.shape[-1] != key.shape[-1]:
        raise ValueError(
            "query and key must have the same last dimension E (the dot product runs over it), "
            f"got query {shape_str(query)} and key {shape_str(key)}"
        )
    if key.shape[-2] != value.shape[-2]:
        raise ValueError(
            "key and value must have the same length Tk (one value per key), "
            f"got key {shape_str(key)} and value {shape_str(value)}"
        )


def check_scale_and_mask(
    query: torch.Tensor, key: torch.Tensor, attn_mask: torch.Tensor | None, is_causal: bool, scale: object
) -> float:
    """Check ``attn_mask``, ``is_causal`` and ``scale`` as :func:`scaled_dot_product_attention` does; return the scale.

    ``attn_mask`` must broadcast to the scores' shape (..., Tq, Tk) and cannot come with
    ``is_causal``; ``scale`` defaults to 1 / sqrt(E), which needs E >= 1.
    """
    check_bool("is_causal", is_causal)
    if is_causal and attn_mask is not None:
        raise ValueError("attn_mask and is_causal=True cannot be combined; put the causal mask in attn_mask with &")
    scale = check_scale(scale)
    tq, e, tk = query.shape[-2], query.shape[-1], key.shape[-2]
    if scale is None:
        if e == 0:
            raise ValueError(
                "query and key must have a last dimension E of at least 1 for the default scale 1 / sqrt(E), "
                f"got query {shape_str(query)} and key {shape_str(key)}; pass scale= to attend with E = 0"
            )
        scale = 1.0 / math.sqrt(e)
    if attn_mask is not None:
        target = torch.Size((*broadcast_batch(query=query, key=key), tq, tk))  # the scores' shape
        check_mask("attn_mask", attn_mask, target, layout="(..., Tq, Tk)", like=query)
    return scale
