"""FlashAttention in plain PyTorch: attention in blocks with an online softmax, O(T) memory.

The (..., Tq, Tk) scores and weights are never stored whole. The keys and values are read in
blocks of ``block_size_k``; for each block of ``block_size_q`` queries a running maximum ``m``,
a running sum ``row_sum`` and an output accumulator ``acc`` are rescaled whenever a larger score
arrives, so that after the last block ``acc / row_sum`` is exactly softmax(scores) @ value.

:func:`largest_tensor` measures the point: inside its ``with`` block it records the largest tensor
torch's functions return, the (Tq, Tk) weights for plain attention, a tile or the output here.

Shape legend: B batch, H heads, Tq query length, Tk key/value length, E query/key width,
Ev value width, bq and bk the block sizes (the last block may be shorter). ``...`` is any
batch shape, e.g. (B,) or (B, H), shared by query, key and value (or broadcastable).
"""

from __future__ import annotations

import numbers

import torch
from torch.overrides import TorchFunctionMode

from ._checks import broadcast_batch, check_bool
from .attention import HALF, _check_heads_without_gqa, _repeat_kv_heads, check_query_key_value, check_scale_and_mask

NEG_INF = float("-inf")
# Block sizes measured (B=1, H=8, Dh=64, float32, T=2048, 1 thread, a busy machine), time over torch's
# fused kernel: (bq, bk) = (256, 512) 1.05, (256, 1024) 1.29, (512, 512) 1.40, (128, 512) 1.44, (128, 1024)
# 1.72. A (256, 512) tile of scores is 8 x 256 x 512 float32 = 4 MiB: large enough for fast matmuls, small
# enough for the allocator to reuse (tiles above about 8 MiB get fresh pages on every call).
BLOCK_SIZE_Q = 256
BLOCK_SIZE_K = 512


def _check_block_size(name: str, size: object) -> int:
    """Return ``size`` as an int: any integral number (a NumPy int too), not a bool, at least 1."""
    if isinstance(size, bool) or not isinstance(size, numbers.Integral) or size < 1:
        raise ValueError(f"{name} must be a positive int, got {size!r}")
    return int(size)


def _tile_mask(mask, is_causal, i0, i1, j0, j1, device):
    """The boolean or float mask of one (bq, bk) tile of scores, or None when nothing is masked."""
    if is_causal:  # top-left aligned: query i sees keys 0..i
        if j1 - 1 <= i0:
            return None  # the whole tile is in the past: nothing to mask
        rows = torch.arange(i0, i1, device=device)[:, None]  # (bq, 1)
        return torch.arange(j0, j1, device=device)[None, :] <= rows  # (bq, bk), True = may attend
    return None if mask is None else mask[..., i0:i1, j0:j1]  # (..., bq, bk)


def _apply_tile_mask(scores: torch.Tensor, tile: torch.Tensor | None) -> torch.Tensor:
    """Mask one tile of scores in place: a bool tile puts -inf where False, a float tile is added.

    A float16 or bfloat16 tile is added to the float32 scores as it is read (``add_`` casts it):
    the mask itself is never copied to float32 at its full (..., Tq, Tk) size.
    """
    if tile is None:
        return scores
    if tile.dtype == torch.bool:
        return scores.masked_fill_(~tile, NEG_INF)
    return scores.add_(tile)


def _tile_is_all_masked(tile: torch.Tensor | None, is_causal: bool) -> bool:
    """True when a user's bool tile blocks every score (the tile is skipped). A causal tile always
    lets something through (wholly future tiles are never visited); a meta tile has no values to read."""
    return tile is not None and not is_causal and tile.dtype == torch.bool and not tile.is_meta and not tile.any()


def _flash_forward(q, k, v, mask, is_causal, bq, bk):
    """The forward pass (Dao et al. 2022, Algorithm 1): q already scaled; returns output and LSE."""
    *batch, tq, _ = q.shape
    tk, ev = k.shape[-2], v.shape[-1]
    out = q.new_empty(*batch, tq, ev)  # (..., Tq, Ev)
    lse = q.new_empty(*batch, tq)  # (..., Tq): log of the sum of exp(scores) per query
    for i0 in range(0, tq, bq):
        i1 = min(i0 + bq, tq)
        q_blk = q[..., i0:i1, :]  # (..., bq, E)
        m = q.new_full((*batch, i1 - i0, 1), NEG_INF)  # (..., bq, 1) running maximum
        row_sum = q.new_zeros(*batch, i1 - i0, 1)  # (..., bq, 1) running sum of exp(score - m)
        acc = q.new_zeros(*batch, i1 - i0, ev)  # (..., bq, Ev) running sum of exp(score - m) * value
        for j0 in range(0, min(i1, tk) if is_causal else tk, bk):  # causal: blocks wholly in the future are skipped
            j1 = min(j0 + bk, tk)
            tile = _tile_mask(mask, is_causal, i0, i1, j0, j1, q.device)
            if _tile_is_all_masked(tile, is_causal):
                continue  # every score of this tile is masked: it adds nothing
            s = _apply_tile_mask(q_blk @ k[..., j0:j1, :].mT, tile)  # (..., bq, E) @ (..., E, bk) -> (..., bq, bk)
            m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))  # (..., bq, 1)
            m_safe = m_new.masked_fill(m_new == NEG_INF, 0.0)  # a row masked so far: exp(-inf - 0) = 0, not NaN
            p = s.sub_(m_safe).exp_()  # (..., bq, bk) exp(score - m_new), in the scores' memory
            alpha = (m - m_safe).exp_()  # (..., bq, 1) rescales what was summed under the old maximum
            row_sum.mul_(alpha).add_(p.sum(dim=-1, keepdim=True))  # (..., bq, 1)
            acc.mul_(alpha).add_(p @ v[..., j0:j1, :])  # (..., bq, bk) @ (..., bk, Ev) -> (..., bq, Ev)
            m = m_new
        out[..., i0:i1, :] = acc / row_sum.clamp_min(torch.finfo(row_sum.dtype).tiny)  # fully masked row: 0 / tiny
        lse[..., i0:i1] = (m + row_sum.log()).squeeze(-1)  # (..., bq); -inf for a fully masked row
    return out, lse


def _flash_backward(q, k, v, mask, is_causal, bq, bk, out, lse, d_out):
    """The backward pass (Dao 2023, FlashAttention-2, Algorithm 2): recompute each tile's weights."""
    tq, tk = q.shape[-2], k.shape[-2]
    delta = (d_out * out).sum(dim=-1, keepdim=True)  # (..., Tq, 1): rowsum(dO * O) = rowsum(P * dP)
    lse = lse.masked_fill(lse == NEG_INF, float("inf")).unsqueeze(-1)  # (..., Tq, 1); fully masked: P = 0
    dq, dk, dv = torch.zeros_like(q), torch.zeros_like(k), torch.zeros_like(v)  # (..., T, E or Ev)
    for j0 in range(0, tk, bk):
        j1 = min(j0 + bk, tk)
        k_blk, v_blk = k[..., j0:j1, :], v[..., j0:j1, :]  # (..., bk, E), (..., bk, Ev)
        for i0 in range(j0 if is_causal else 0, tq, bq):  # causal: query blocks wholly before the keys skipped
            i1 = min(i0 + bq, tq)
            tile = _tile_mask(mask, is_causal, i0, i1, j0, j1, q.device)
            if _tile_is_all_masked(tile, is_causal):
                continue
            q_blk, do_blk = q[..., i0:i1, :], d_out[..., i0:i1, :]  # (..., bq, E), (..., bq, Ev)
            s = _apply_tile_mask(q_blk @ k_blk.mT, tile)  # (..., bq, bk)
            p = s.sub_(lse[..., i0:i1, :]).exp_()  # (..., bq, bk) the weights, recomputed
            dv[..., j0:j1, :] += p.mT @ do_blk  # (..., bk, bq) @ (..., bq, Ev) -> (..., bk, Ev)
            dp = do_blk @ v_blk.mT  # (..., bq, Ev) @ (..., Ev, bk) -> (..., bq, bk)
            ds = p.mul_(dp.sub_(delta[..., i0:i1, :]))  # (..., bq, bk) dL/dscores = P * (dP - delta)
            dq[..., i0:i1, :] += ds @ k_blk  # (..., bq, bk) @ (..., bk, E) -> (..., bq, E)
            dk[..., j0:j1, :] += ds.mT @ q_blk  # (..., bk, bq) @ (..., bq, E) -> (..., bk, E)
    return dq, dk, dv


class _FlashAttention(torch.autograd.Function):
    """Blockwise forward and FlashAttention-2 backward; saves output and LSE, never the weights."""

    @staticmethod
    def forward(ctx, query, key, value, mask, is_causal, scale, bq, bk):
        q = query * scale  # (..., Tq, E): scale the queries, not the (larger) scores
        out, lse = _flash_forward(q, key, value, mask, is_causal, bq, bk)
        ctx.save_for_backward(q, key, value, out, lse)
        ctx.mask, ctx.args = mask, (is_causal, scale, bq, bk)
        ctx.mark_non_differentiable(lse)
        return out, lse

    @staticmethod
    def backward(ctx, d_out, _d_lse):
        if torch.is_grad_enabled():  # backward with create_graph=True: a second derivative was asked for
            raise RuntimeError(
                "flash_attention has no double backward (create_graph=True): its gradients are computed tile "
                "by tile without a graph to differentiate; use attnlib.scaled_dot_product_attention for "
                "second derivatives"
            )
        q, key, value, out, lse = ctx.saved_tensors
        is_causal, scale, bq, bk = ctx.args
        dq, dk, dv = _flash_backward(q, key, value, ctx.mask, is_causal, bq, bk, out, lse, d_out.contiguous())
        return dq * scale, dk, dv, None, None, None, None, None  # d(q * scale)/dq = scale


def flash_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attn_mask: torch.Tensor | None = None,
    is_causal: bool = False,
    scale: float | None = None,
    *,
    enable_gqa: bool = False,
    block_size_q: int = BLOCK_SIZE_Q,
    block_size_k: int = BLOCK_SIZE_K,
    return_lse: bool = False,
) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """softmax(Q K^T * scale + mask) V computed in blocks, without storing the (..., Tq, Tk) weights.

    Same arguments and result as ``torch.nn.functional.scaled_dot_product_attention`` (and the
    output of attnlib's :func:`scaled_dot_product_attention`), without dropout. Memory beyond
    the inputs and output is O(Tq + Tk) per batch element, forward and backward: one (bq, bk)
    tile of scores at a time, never the (Tq, Tk) matrix.

    Args:
        query: (..., Tq, E) floating; float16 and bfloat16 are computed in float32 and the
            output cast back.
        key: (..., Tk, E), same dtype and device as ``query``.
        value: (..., Tk, Ev), same dtype and device.
        attn_mask: optional, broadcastable to the scores' shape (..., Tq, Tk) without enlarging
            it. bool: True = may attend. floating (``query``'s dtype): added to the scores (0 =
            attend, -inf = blocked). Cut into (bq, bk) tiles with the scores; a tile the mask
            blocks wholly is skipped. It gets no gradient. It is kept at its own (broadcast)
            shape: a (Tk,) bias stays (Tk,), and a float16 one is cast tile by tile.
        is_causal: query i sees keys 0..i (aligned top-left, as torch's ``is_causal``); key
            blocks wholly in the future are skipped. For the bottom-right alignment of decoding
            with a cache pass ``attn_mask=causal_mask(Tq, Tk, align="bottom_right")``. Cannot be
            combined with ``attn_mask``.
        scale: multiplies the scores, a finite float; defaults to 1 / sqrt(E).
        enable_gqa: grouped-query attention, as in :func:`scaled_dot_product_attention`: query
            (..., Hq, Tq, E), key and value (..., Hkv, Tk, E), Hq a multiple of Hkv.
        block_size_q, block_size_k: queries and keys per block (bq, bk), positive integers
            (Python or NumPy); any lengths work, the last block is shorter. The defaults were
            measured on CPU.
        return_lse: also return the log-sum-exp of each query's scores.

    Returns:
        output (..., Tq, Ev), ``query``'s dtype; a query whose keys are all masked gets a zero
        output (and zero gradients). With ``return_lse=True``, ``(output, lse)``: lse (..., Tq),
        float32 for float16/bfloat16 inputs, log sum_j exp(score_ij) (-inf for a fully masked
        query), so that ``exp(scores - lse[..., None])`` are the softmax weights.

    Raises:
        TypeError: a non-tensor or non-floating input, inputs of different dtypes, an integer
            mask, a float mask of another dtype, a ``scale`` that is not a number, ``is_causal``,
            ``enable_gqa`` or ``return_lse`` not a bool.
        RuntimeError: (in backward) a second derivative, ``create_graph=True``.
        ValueError: query and key widths differ, key and value lengths differ, batch dimensions
            do not broadcast, a mask that does not broadcast to (..., Tq, Tk) or would enlarge
            it (or a float mask of only 0s and 1s, or holding NaN or +inf), ``attn_mask``
            together with ``is_causal``, a ``scale`` that is NaN or infinite, E = 0 without a
            ``scale``, inputs on different devices, a block size that is not a positive int, and
            with ``enable_gqa`` the head counts :func:`scaled_dot_product_attention` refuses.

    Sources: Milakov & Gimelshein 2018, "Online normalizer calculation for softmax"; Dao et al.
    2022, "FlashAttention: Fast and Memory-Efficient Exact Attention with IO-Awareness",
    Algorithm 1 (forward); Dao 2023, "FlashAttention-2: Faster Attention with Better Parallelism
    and Work Partitioning", Algorithm 2 (backward).
    """
    check_query_key_value(query, key, value)
    for name, flag in (("is_causal", is_causal), ("enable_gqa", enable_gqa), ("return_lse", return_lse)):
        check_bool(name, flag)
    if enable_gqa:
        key, value = _repeat_kv_heads(query, key, value)  # (..., Hkv, Tk, E) -> (..., Hq, Tk, E)
    else:
        _check_heads_without_gqa(query, key, value)
    batch = broadcast_batch(query=query, key=key, value=value)
    scale = check_scale_and_mask(query, key, attn_mask, is_causal, scale)
    bq = _check_block_size("block_size_q", block_size_q)
    bk = _check_block_size("block_size_k", block_size_k)
    tq, tk = query.shape[-2], key.shape[-2]
    mask = None
    if attn_mask is not None:
        mask = attn_mask.reshape((1,) * (2 - attn_mask.dim()) + attn_mask.shape)  # at least (1, 1)
        mask = mask.expand(*mask.shape[:-2], tq, tk)  # (..., Tq, Tk), a view: tiles can be sliced

    compute = torch.float32 if query.dtype in HALF else query.dtype
    # Every input gets the full batch shape (views, no copies), so gradients come out in it too.
    q, k, v = (x.to(compute).expand(*batch, *x.shape[-2:]) for x in (query, key, value))
    out, lse = _FlashAttention.apply(q, k, v, mask, is_causal, scale, bq, bk)
    out = out.to(query.dtype)
    return (out, lse) if return_lse else out


class LargestTensor(TorchFunctionMode):
    """The mode :func:`largest_tensor` returns: ``nbytes`` is the largest result seen so far."""

    def __init__(self) -> None:
        super().__init__()
        self.nbytes = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        for out in result if isinstance(result, (tuple, list)) else (result,):
            if isinstance(out, torch.Tensor):
                self.nbytes = max(self.nbytes, out.nbytes)
        return result


def largest_tensor() -> LargestTensor:
    """Record the bytes of the largest tensor any torch function returns inside a ``with`` block.

    A :class:`torch.overrides.TorchFunctionMode`: while the block runs, every call of a torch
    function or tensor method made from Python passes through it, and the size of each tensor it
    returns (alone or in a tuple or list) is compared with the largest so far. Notebook 08 uses it
    to show that plain attention makes the (..., Tq, Tk) weights while :func:`flash_attention`
    never makes anything larger than a tile or its output.

    It sees what Python code receives, not what one torch call allocates and frees inside itself
    (a fused kernel's buffers), nor what the memory allocator keeps: a count of tensors, not a
    measurement of the process's memory. Tensors that exist before the block are not counted.

    Returns:
        the mode, to use as ``with largest_tensor() as seen:``; after the block ``seen.nbytes`` is
        the size in bytes of the largest tensor returned inside it (0 when none was).

    Raises:
        Nothing itself; an exception raised inside the block leaves the block as usual, with
        ``nbytes`` counting what was returned before it.

    Example::

        with torch.no_grad(), largest_tensor() as seen:
            scaled_dot_product_attention(q, k, v)  # q, k, v (1, 1, 2048, 64)
        seen.nbytes  # 2048 * 2048 * 4: the float32 weights
    """
    return LargestTensor()
