"""Attention masks in one polarity: boolean, True = may attend.

Every mask attnlib builds or accepts is a bool tensor that broadcasts to the scores'
shape (B, H, Tq, Tk): ``mask[b, h, i, j]`` is True when query i may take from key j.
Masks combine with ``&`` (a key must be allowed by every mask). Other libraries' and
papers' conventions are converted here, at the boundary, by named functions:

==============================================  =================  =========================
convention                                      meaning of True/1  converter
==============================================  =================  =========================
attnlib, ``F.scaled_dot_product_attention``     may attend         (none needed)
``nn.MultiheadAttention`` ``key_padding_mask``  blocked            :func:`from_key_padding_mask`
``nn.MultiheadAttention`` ``attn_mask``         blocked            :func:`from_torch_attn_mask`
Hugging Face ``attention_mask`` (0/1 ints)      may attend         :func:`from_hf_attention_mask`
d2l ``valid_lens``                              (lengths)          :func:`from_valid_lens`
==============================================  =================  =========================

Shape legend: B batch, H heads, Tq query length, Tk key/value length.
"""

from __future__ import annotations

import torch

from ._checks import check_tensor, shape_str

ALIGNMENTS = ("top_left", "bottom_right")


def causal_mask(
    q_len: int,
    kv_len: int | None = None,
    *,
    align: str = "top_left",
    device: torch.device | str | None = None,
) -> torch.Tensor:
    """Look-ahead mask: query i may attend to key j only if j is not in its future.

    Args:
        q_len: Tq, the number of queries (>= 0).
        kv_len: Tk, the number of keys; defaults to ``q_len``.
        align: where the diagonal sits when Tq != Tk.
            ``"top_left"``: query i sees keys 0..i (what ``is_causal=True`` does in
            ``F.scaled_dot_product_attention``; ``torch.nn.attention.bias.causal_upper_left``).
            ``"bottom_right"``: the last query sees every key, query i sees keys
            0..i + (Tk - Tq); the alignment for decoding with a key/value cache, where the
            Tq new queries come after Tk - Tq cached keys
            (``torch.nn.attention.bias.causal_lower_right``).
        device: where to build the mask.

    Returns:
        bool (Tq, Tk), True on and below the aligned diagonal. Broadcasts over B and H.

    Raises:
        ValueError: a negative length, or an ``align`` other than the two above.

    Source: Vaswani et al. 2017, "Attention Is All You Need", sec. 3.2.3 (masking out
    illegal connections in the decoder).
    """
    kv_len = q_len if kv_len is None else kv_len
    for name, n in (("q_len", q_len), ("kv_len", kv_len)):
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise ValueError(f"{name} must be a non-negative int, got {n!r}")
    if align not in ALIGNMENTS:
        raise ValueError(f"align must be one of {ALIGNMENTS}, got {align!r}")
    offset = 0 if align == "top_left" else kv_len - q_len
    rows = torch.arange(q_len, device=device)[:, None]  # (Tq, 1)
    cols = torch.arange(kv_len, device=device)[None, :]  # (1, Tk)
    return cols <= rows + offset  # (Tq, 1) vs (1, Tk) -> (Tq, Tk)


def padding_mask(valid_lens: torch.Tensor | list[int], max_len: int) -> torch.Tensor:
    """Padding mask from sequence lengths: position t is real when t < valid_lens[b].

    Args:
        valid_lens: integer (B,) lengths, a tensor of an integer dtype or a (nested) list
            of ints; each in [0, max_len]. Any leading shape works: (B, Tq) gives one
            length per query. Lengths are counts: floats (2.7) and bools (True) are
            refused, never truncated or counted as 1.
        max_len: T, the padded length.

    Returns:
        bool (B, max_len) (``valid_lens.shape + (max_len,)``), True for real tokens.
        As a key mask it must be given its query and head axes before it broadcasts
        against (B, H, Tq, Tk): see :func:`expand_key_mask`.

    Raises:
        TypeError: ``valid_lens`` is neither an integer tensor nor a list of ints (a
            float, bool or complex tensor, or a list holding a float or a bool).
        ValueError: a length below 0 or above ``max_len``, or a ``max_len`` that is not
            a non-negative int.

    Source: the ``valid_lens`` masked softmax of Zhang et al., "Dive into Deep
    Learning", sec. 11.3 (attention scoring functions).
    """
    if isinstance(valid_lens, (list, tuple)):
        # Let torch infer the dtype: [2.7] gives float and [True] bool, both refused below
        # (a forced long dtype would truncate 2.7 to 2 and count True as 1).
        valid_lens = torch.tensor(valid_lens)
        if valid_lens.numel() == 0:
            valid_lens = valid_lens.long()  # torch reads [] as float; no length, nothing to refuse
    check_tensor("valid_lens", valid_lens)
    if valid_lens.is_floating_point() or valid_lens.dtype == torch.bool or valid_lens.is_complex():
        raise TypeError(
            f"valid_lens must be an integer tensor or a list of ints (lengths), got dtype {valid_lens.dtype}"
        )
    if not isinstance(max_len, int) or isinstance(max_len, bool) or max_len < 0:
        raise ValueError(f"max_len must be a non-negative int, got {max_len!r}")
    if not valid_lens.is_meta and valid_lens.numel() and (valid_lens.min() < 0 or valid_lens.max() > max_len):
        raise ValueError(
            f"valid_lens must lie in [0, max_len={max_len}], got values from "
            f"{int(valid_lens.min())} to {int(valid_lens.max())} in shape {shape_str(valid_lens)}"
        )
    positions = torch.arange(max_len, device=valid_lens.device)  # (T,)
    return positions < valid_lens[..., None]  # (..., 1) vs (T,) -> (..., T)


def expand_key_mask(mask: torch.Tensor, ndim: int = 4) -> torch.Tensor:
    """Give a (B, Tk) key mask the axes it needs to broadcast against the scores.

    A (B, Tk) mask passed as ``attn_mask`` with 3-D inputs would be read as (Tq, Tk):
    when B == Tq nothing complains and the answer is wrong. This puts B first and Tk
    last, with singleton axes between for the heads and the queries.

    Args:
        mask: (B, Tk), any dtype.
        ndim: the number of dimensions of the scores: 3 for (B, Tq, Tk), 4 for
            (B, H, Tq, Tk).

    Returns:
        A view of ``mask``: (B, 1, Tk) for ndim=3, (B, 1, 1, Tk) for ndim=4.
        ``out[b, ..., j]`` applies key j of example b to every head and query.

    Raises:
        ValueError: ``mask`` is not 2-D, or ``ndim`` < 2.
    """
    check_tensor("mask", mask)
    if mask.dim() != 2:
        raise ValueError(f"mask must have shape (B, Tk), got shape {shape_str(mask)}")
    if not isinstance(ndim, int) or ndim < 2:
        raise ValueError(f"ndim must be an int >= 2, got {ndim!r}")
    b, tk = mask.shape
    return mask.view(b, *([1] * (ndim - 2)), tk)  # (B, Tk) -> (B, 1, ..., 1, Tk)


def from_valid_lens(
    valid_lens: torch.Tensor | list[int] | list[list[int]], max_len: int, ndim: int = 4
) -> torch.Tensor:
    """d2l's ``valid_lens`` to a mask: one length per example (B,) or per query (B, Tq).

    d2l's masked softmax takes either shape. With (B,) every query of example b sees
    keys 0..valid_lens[b] - 1 (a key padding mask). With (B, Tq) query i of example b
    sees keys 0..valid_lens[b, i] - 1: each query has its own length, so the result
    has a query axis.

    Args:
        valid_lens: int (B,) or (B, Tq) lengths, each in [0, max_len] (nested lists of
            ints are accepted).
        max_len: Tk, the padded number of keys.
        ndim: the number of dimensions of the scores: 3 for (B, Tq, Tk), 4 for
            (B, H, Tq, Tk).

    Returns:
        bool, True = may attend. From (B,): (B, 1, 1, Tk) for ndim=4, (B, 1, Tk) for
        ndim=3. From (B, Tq): (B, 1, Tq, Tk) for ndim=4, (B, Tq, Tk) for ndim=3, with
        ``out[b, ..., i, j]`` True when ``j < valid_lens[b, i]``.

    Raises:
        TypeError: ``valid_lens`` is not an integer tensor or (nested) list of ints.
        ValueError: ``valid_lens`` is neither (B,) nor (B, Tq); ``ndim`` is below 2
            for (B,) or below 3 for (B, Tq); a length outside [0, max_len].

    Source: the ``valid_lens`` masked softmax of Zhang et al., "Dive into Deep
    Learning", sec. 11.3 (attention scoring functions).
    """
    if isinstance(valid_lens, (list, tuple)):
        valid_lens = torch.tensor(valid_lens, dtype=torch.long)
    check_tensor("valid_lens", valid_lens)
    if valid_lens.dim() not in (1, 2):
        raise ValueError(
            f"valid_lens must have shape (B,) (one length per example) or (B, Tq) (one length "
            f"per query), got shape {shape_str(valid_lens)}"
        )
    per_query = valid_lens.dim() == 2
    if not isinstance(ndim, int) or isinstance(ndim, bool) or ndim < 2 + per_query:
        layouts = "the scores' dimensions: 3 for (B, Tq, Tk), 4 for (B, H, Tq, Tk)"
        raise ValueError(
            f"ndim must be an int >= {2 + per_query} ({layouts}) for valid_lens of shape "
            f"{shape_str(valid_lens)}, got {ndim!r}"
        )
    mask = padding_mask(valid_lens, max_len)  # (B, Tk), or (B, Tq, Tk) per query
    if not per_query:
        return expand_key_mask(mask, ndim)  # (B, Tk) -> (B, 1, ..., 1, Tk)
    b, tq, tk = mask.shape
    return mask.view(b, *([1] * (ndim - 3)), tq, tk)  # (B, Tq, Tk) -> (B, 1, ..., 1, Tq, Tk)


def from_key_padding_mask(key_padding_mask: torch.Tensor, ndim: int = 4) -> torch.Tensor:
    """``nn.MultiheadAttention``'s ``key_padding_mask`` (B, Tk) to an attnlib mask.

    torch's module reads a bool ``key_padding_mask`` as True = blocked (a padding key);
    attnlib reads True = may attend, so a bool mask is inverted. A float mask is added
    to the scores in both, so it is only reshaped. torch accepts no integer mask here,
    and a 0/1 integer mask may mean either polarity, so it is refused.

    Args:
        key_padding_mask: bool or floating (B, Tk).
        ndim: 4 for (B, H, Tq, Tk) scores, 3 for (B, Tq, Tk).

    Returns:
        (B, 1, 1, Tk) for ndim=4, (B, 1, Tk) for ndim=3: bool (True = may attend) for a
        bool input, the float mask reshaped for a float input.

    Raises:
        TypeError: ``key_padding_mask`` is not a tensor, or is an integer tensor (the
            message names the call for each polarity).
        ValueError: ``key_padding_mask`` is not 2-D.

    Source: ``torch.nn.MultiheadAttention.forward`` (torch 2.13 documentation), argument
    ``key_padding_mask``.
    """
    check_tensor("key_padding_mask", key_padding_mask)
    _refuse_integer_mask("key_padding_mask", key_padding_mask, "from_key_padding_mask(key_padding_mask.bool())",
                         "from_hf_attention_mask(key_padding_mask)")
    if key_padding_mask.dim() != 2:
        raise ValueError(
            f"key_padding_mask must have shape (B, Tk), got shape {shape_str(key_padding_mask)}"
        )
    converted = ~key_padding_mask if key_padding_mask.dtype == torch.bool else key_padding_mask
    return expand_key_mask(converted, ndim)


def _refuse_integer_mask(name: str, mask: torch.Tensor, if_one_blocks: str, if_one_attends: str) -> None:
    """Raise TypeError for an integer (non-bool, non-float) mask, naming the right call for each polarity."""
    if mask.dtype != torch.bool and not mask.is_floating_point():
        raise TypeError(
            f"{name} must be a bool or float tensor (as torch requires), got dtype {mask.dtype}. A 0/1 integer "
            f"mask says nothing about its polarity: if 1 means padding or blocked (torch's convention), call "
            f"{if_one_blocks}; if 1 means 'may attend' (attnlib's and Hugging Face's), call {if_one_attends}"
        )


def from_torch_attn_mask(attn_mask: torch.Tensor, num_heads: int | None = None) -> torch.Tensor:
    """``nn.MultiheadAttention``'s ``attn_mask`` to an attnlib mask.

    torch's module reads a bool ``attn_mask`` as True = blocked; attnlib reads True =
    may attend, so a bool mask is inverted (a float mask is kept: it is added in both).
    torch accepts no integer mask here, and a 0/1 integer mask may mean either polarity,
    so it is refused.

    Args:
        attn_mask: bool or floating (Tq, Tk), or (B * H, Tq, Tk) with ``num_heads`` given.
        num_heads: H, a positive int, needed to unflatten a 3-D mask.

    Returns:
        (Tq, Tk), or (B, H, Tq, Tk) for a 3-D input: bool (True = may attend) for a bool
        input, the float mask for a float input.

    Raises:
        TypeError: ``attn_mask`` is not a tensor, or is an integer tensor (the message
            names the call for each polarity).
        ValueError: a 3-D mask without ``num_heads``, a ``num_heads`` that is not a
            positive int, a first dimension that is not a multiple of ``num_heads``, or
            a mask that is neither 2-D nor 3-D.

    Source: ``torch.nn.MultiheadAttention.forward`` (torch 2.13 documentation), argument
    ``attn_mask``.
    """
    check_tensor("attn_mask", attn_mask)
    _refuse_integer_mask("attn_mask", attn_mask, "from_torch_attn_mask(attn_mask.bool())",
                         "nothing: pass attn_mask.bool() to attnlib as it is")
    converted = ~attn_mask if attn_mask.dtype == torch.bool else attn_mask
    if attn_mask.dim() == 2:
        return converted
    if attn_mask.dim() == 3:
        if not isinstance(num_heads, int) or isinstance(num_heads, bool) or num_heads < 1:
            raise ValueError(
                f"a 3-D attn_mask has shape (B * num_heads, Tq, Tk) and needs num_heads, a positive int, "
                f"got shape {shape_str(attn_mask)} and num_heads={num_heads!r}"
            )
        if attn_mask.shape[0] % num_heads:
            raise ValueError(
                f"a 3-D attn_mask has shape (B * num_heads, Tq, Tk) and needs num_heads to divide its first "
                f"dimension, got shape {shape_str(attn_mask)} and num_heads={num_heads}"
            )
        bh, tq, tk = attn_mask.shape
        return converted.view(bh // num_heads, num_heads, tq, tk)  # (B*H, Tq, Tk) -> (B, H, Tq, Tk)
    raise ValueError(f"attn_mask must have shape (Tq, Tk) or (B * H, Tq, Tk), got shape {shape_str(attn_mask)}")


def from_hf_attention_mask(attention_mask: torch.Tensor, ndim: int = 4) -> torch.Tensor:
    """Hugging Face's ``attention_mask`` (B, Tk) of 1 = attend, 0 = padding, to a key mask.

    Hugging Face's polarity is attnlib's, so nothing is inverted: integer, bool and
    float masks of 0s and 1s are all read as 1 (True) = attend.

    Args:
        attention_mask: (B, Tk) of 0s and 1s, any dtype (usually int64).
        ndim: 4 for (B, H, Tq, Tk) scores, 3 for (B, Tq, Tk).

    Returns:
        bool (B, 1, 1, Tk) for ndim=4, (B, 1, Tk) for ndim=3.

    Raises:
        TypeError: ``attention_mask`` is not a tensor.
        ValueError: ``attention_mask`` is not 2-D or holds values other than 0 and 1.

    Source: Hugging Face Transformers documentation, glossary entry "attention mask".
    """
    check_tensor("attention_mask", attention_mask)
    if attention_mask.dim() != 2:
        raise ValueError(f"attention_mask must have shape (B, Tk), got shape {shape_str(attention_mask)}")
    if not bool(((attention_mask == 0) | (attention_mask == 1)).all()):
        raise ValueError(
            "attention_mask must hold only 0 (padding) and 1 (attend), got other values; for lengths "
            "use from_valid_lens"
        )
    return expand_key_mask(attention_mask == 1, ndim)
