"""Multi-head attention: split the width into heads, attend on all heads at once, merge.

Shape legend: B batch, H heads, Tq query length, Tk key/value length, E model width
(``embed_dim``), Dh = E / H head width. Batch first everywhere: (B, T, E), never (T, B, E).
Masks are bool, True = may attend, broadcastable to (B, H, Tq, Tk).
"""

from __future__ import annotations

import torch
from torch import nn

from ._checks import (
    check_batch_first_inputs,
    check_bool,
    check_dropout,
    check_key_mask,
    check_mask,
    check_ndim,
    check_tensor,
    shape_str,
)
from .attention import combine_with_key_mask, scaled_dot_product_attention


def _check_positive_int(name: str, n: object) -> None:
    if not isinstance(n, int) or isinstance(n, bool) or n <= 0:
        raise ValueError(f"{name} must be a positive int, got {n!r}")


def _check_divisible(width_name: str, width: int, num_heads: int) -> None:
    if width % num_heads:
        raise ValueError(
            f"{width_name}={width} must be divisible by num_heads={num_heads}: each head gets "
            f"Dh = {width_name} / num_heads features"
        )


def split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    """Cut the last axis into ``num_heads`` heads and move the heads before the tokens.

    Head h gets features ``h * Dh`` to ``(h + 1) * Dh - 1``: ``split_heads(x, H)[:, h]``
    equals ``x[..., h * Dh:(h + 1) * Dh]``.

    Args:
        x: (B, T, E), any dtype. Not modified (the result may be a view of it).
        num_heads: H, a positive int dividing E.

    Returns:
        (B, H, T, Dh) with Dh = E / H.

    Raises:
        TypeError: ``x`` is not a tensor.
        ValueError: ``x`` is not 3-D, or ``num_heads`` is not a positive divisor of E.

    Source: Vaswani et al. 2017, "Attention Is All You Need", sec. 3.2.2.
    """
    check_tensor("x", x)
    check_ndim("x", x, 3, "(B, T, E)")
    _check_positive_int("num_heads", num_heads)
    b, t, e = x.shape
    _check_divisible("E (x.shape[-1])", e, num_heads)
    x = x.reshape(b, t, num_heads, e // num_heads)  # (B, T, E) -> (B, T, H, Dh)
    return x.transpose(1, 2)  # (B, T, H, Dh) -> (B, H, T, Dh)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """Put the heads back side by side: the inverse of :func:`split_heads`.

    The transpose comes first. Reshaping (B, H, T, Dh) straight to (B, T, E) keeps the
    shape but hands token t the features of other tokens.

    Args:
        x: (B, H, T, Dh), any dtype. Not modified (the result may be a view of it).

    Returns:
        (B, T, E) with E = H * Dh; ``merge_heads(split_heads(x, H))`` equals ``x``.

    Raises:
        TypeError: ``x`` is not a tensor.
        ValueError: ``x`` is not 4-D.

    Source: Vaswani et al. 2017, "Attention Is All You Need", sec. 3.2.2 (Concat(head_1, ..., head_h)).
    """
    check_tensor("x", x)
    check_ndim("x", x, 4, "(B, H, T, Dh)")
    b, h, t, dh = x.shape
    x = x.transpose(1, 2)  # (B, H, T, Dh) -> (B, T, H, Dh)
    return x.reshape(b, t, h * dh)  # (B, T, H, Dh) -> (B, T, E)


class MultiHeadAttention(nn.Module):
    """Multi-head attention, batch first, returning the output and every head's weights.

    Each head attends with its own Dh-wide slice of the Q, K and V projections; the heads'
    outputs are concatenated and projected back to E. The projections are one
    ``nn.Linear`` each (the H heads' matrices stacked), so there is no loop over heads.

    Args:
        embed_dim: E, the width of the queries and of the output.
        num_heads: H, must divide E (Dh = E / H).
        kdim: width of the keys (default E).
        vdim: width of the values (default E).
        bias: give the four projections a bias.
        dropout: probability of dropping an attention weight, in training mode only.

    Attributes:
        q_proj: ``nn.Linear`` from E to E (the queries' projection).
        k_proj: ``nn.Linear`` from kdim to E (the keys' projection).
        v_proj: ``nn.Linear`` from vdim to E (the values' projection).
        out_proj: ``nn.Linear`` from E to E (the merged heads' projection). With
            kdim = vdim = E and bias there are 4 E^2 + 4 E parameters.

    Raises:
        ValueError: ``num_heads`` does not divide ``embed_dim``, a width is not a
            positive int, or ``dropout`` is outside [0, 1).

    Source: Vaswani et al. 2017, "Attention Is All You Need", sec. 3.2.2.
    """

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        *,
        kdim: int | None = None,
        vdim: int | None = None,
        bias: bool = True,
        dropout: float = 0.0,
    ) -> None:
        super().__init__()
        kdim = embed_dim if kdim is None else kdim
        vdim = embed_dim if vdim is None else vdim
        for name, n in (("embed_dim", embed_dim), ("num_heads", num_heads), ("kdim", kdim), ("vdim", vdim)):
            _check_positive_int(name, n)
        _check_divisible("embed_dim", embed_dim, num_heads)
        dropout = check_dropout("dropout", dropout)
        self.embed_dim, self.num_heads, self.head_dim = embed_dim, num_heads, embed_dim // num_heads
        self.kdim, self.vdim, self.dropout = kdim, vdim, dropout
        self.q_proj = nn.Linear(embed_dim, embed_dim, bias=bias)  # H query matrices (E, Dh), stacked
        self.k_proj = nn.Linear(kdim, embed_dim, bias=bias)
        self.v_proj = nn.Linear(vdim, embed_dim, bias=bias)
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=bias)  # W^O

    def extra_repr(self) -> str:
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, head_dim={self.head_dim}"

    def forward(
        self,
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        attn_mask: torch.Tensor | None = None,
        is_causal: bool = False,
        *,
        key_mask: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Attend from every query to the keys, in every head.

        Shape legend: B batch, H heads (``num_heads``), Tq query length, Tk key/value
        length, E ``embed_dim``, Dh = E / H.

        Args:
            query: floating (B, Tq, E), of the same dtype and device as the key, the value and
                the module's parameters.
            key: (B, Tk, kdim).
            value: (B, Tk, vdim).
            attn_mask: optional, 2-D (Tq, Tk) or 4-D, broadcastable to (B, H, Tq, Tk)
                without enlarging it: bool (True = may attend) or floating (the inputs'
                dtype, added to the scores). A 3-D mask raises: (B, Tq, Tk) would be read
                as (H, Tq, Tk).
            is_causal: query i sees keys 0..i only (top-left aligned); not together
                with ``attn_mask`` (combine the masks with ``&`` instead).
            key_mask: optional bool (B, Tk), True = a real key, False = padding: the
                common padding mask, in attnlib's one polarity. It is the opposite of
                torch's ``key_padding_mask`` (True = padding): convert that with
                ``~key_padding_mask``, or pass ``attn_mask=from_key_padding_mask(kpm)``.
                Combined with ``attn_mask`` (and ``is_causal``) by ``&``: a pair is attended
                only if every mask allows it. Prefer it to a (B, Tk) mask in ``attn_mask``,
                which a 2-D ``attn_mask`` would read as (Tq, Tk), silently when B == Tq.

        Returns:
            ``(output, weights)``: output (B, Tq, E); weights (B, H, Tq, Tk), each head's
            attention weights (after dropout in training mode), in the inputs' dtype (float16
            and bfloat16 attention is computed in float32 and rounded at the end, as in
            :func:`scaled_dot_product_attention`; the projections run in the inputs' dtype).
            A query whose keys are all masked gets zero weights.

        Raises:
            TypeError: a non-tensor or non-floating input or mask, inputs whose dtype
                differs from each other's or from the module's parameters', an integer
                ``attn_mask``, a ``key_mask`` that is not bool, a float ``attn_mask``
                of another dtype, or ``is_causal`` not a bool.
            ValueError: an input that is not 3-D or has the wrong last dimension,
                different batch sizes, key and value of different lengths, inputs or masks
                on another device, a 3-D ``attn_mask`` or one that does not broadcast to
                (B, H, Tq, Tk), a ``key_mask`` of a shape other than (B, Tk), or
                ``attn_mask`` together with ``is_causal``.

        Source: Vaswani et al. 2017, "Attention Is All You Need", sec. 3.2.2 (MultiHead(Q, K, V)
        = Concat(head_1, ..., head_h) W^O) and sec. 3.2.3 (masking).
        """
        self._check_inputs(query, key, value)
        check_bool("is_causal", is_causal)
        (b, tq, _), tk = query.shape, key.shape[1]
        if attn_mask is not None:
            check_tensor("attn_mask", attn_mask)
            if attn_mask.dim() == 3:
                raise ValueError(
                    f"attn_mask must be 2-D (Tq, Tk) or 4-D (B, H or 1, Tq, Tk), got shape {shape_str(attn_mask)}: "
                    "a 3-D mask would be read as (H, Tq, Tk), so a (B, 1, Tk) or (B, Tq, Tk) mask gives a wrong "
                    "answer when B equals H. Add the head axis: attn_mask[:, None], or pass a (B, Tk) padding "
                    "mask as key_mask"
                )
            check_mask("attn_mask", attn_mask, torch.Size((b, self.num_heads, tq, tk)), layout="(B, H, Tq, Tk)",
                       like=query)
        if key_mask is not None:
            check_key_mask(key_mask, b, tk, query)
            attn_mask = combine_with_key_mask(attn_mask, key_mask[:, None, None, :], is_causal, tq, tk)  # (B, 1, 1, Tk)
            is_causal = False  # now inside attn_mask
        q = split_heads(self.q_proj(query), self.num_heads)  # (B, Tq, E) -> (B, H, Tq, Dh)
        k = split_heads(self.k_proj(key), self.num_heads)  # (B, Tk, kdim) -> (B, Tk, E) -> (B, H, Tk, Dh)
        v = split_heads(self.v_proj(value), self.num_heads)  # (B, Tk, vdim) -> (B, Tk, E) -> (B, H, Tk, Dh)
        heads, weights = scaled_dot_product_attention(  # heads (B, H, Tq, Dh), weights (B, H, Tq, Tk)
            q, k, v, attn_mask=attn_mask, dropout_p=self.dropout if self.training else 0.0, is_causal=is_causal
        )
        output = self.out_proj(merge_heads(heads))  # (B, H, Tq, Dh) -> (B, Tq, E) -> (B, Tq, E)
        return output, weights

    def _check_inputs(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor) -> None:
        layouts = ("(B, Tq, E={})", "(B, Tk, kdim={})", "(B, Tk, vdim={})")
        widths = (self.embed_dim, self.kdim, self.vdim)
        check_batch_first_inputs(self.q_proj.weight, tuple(
            (name, x, layout.format(width), width, layout.format(width))
            for name, x, layout, width in zip(("query", "key", "value"), (query, key, value), layouts, widths)
        ))

    @classmethod
    def from_torch(cls, m: nn.MultiheadAttention) -> MultiHeadAttention:
        """A copy of ``torch.nn.MultiheadAttention`` ``m`` that gives the same output.

        The copy has ``m``'s sizes, dropout, dtype and device, and its weights:
        ``in_proj_weight`` (3E, E) is cut into q_proj, k_proj, v_proj when Q, K and V
        share width E, else ``q_proj_weight``, ``k_proj_weight``, ``v_proj_weight`` are
        used; ``in_proj_bias`` (3E,) is cut likewise; ``out_proj`` is copied. The copy
        is batch first whatever ``m.batch_first`` says: for ``m`` built with
        ``batch_first=False`` pass ``x.transpose(0, 1)``, (T, B, E) -> (B, T, E).
        torch's masks mean True = blocked; convert them with ``from_key_padding_mask``
        and ``from_torch_attn_mask``, or pass ``key_mask=~key_padding_mask``. The copy
        shares no storage with ``m``, and making it draws nothing from the global random
        generator (the copy is built on the meta device, then filled from ``m``).

        Args:
            m: the ``torch.nn.MultiheadAttention`` to copy (not modified).

        Raises:
            TypeError: ``m`` is not an ``nn.MultiheadAttention``.
            ValueError: ``m`` uses ``add_bias_kv`` or ``add_zero_attn``, which append an
                extra key and value that this module does not have.
        """
        if not isinstance(m, nn.MultiheadAttention):
            raise TypeError(f"m must be a torch.nn.MultiheadAttention, got {type(m).__name__}")
        if m.bias_k is not None or m.bias_v is not None:
            raise ValueError("m was built with add_bias_kv=True (a learned extra key and value); unsupported")
        if m.add_zero_attn:
            raise ValueError("m was built with add_zero_attn=True (an extra all-zero key and value); unsupported")
        ref = m.out_proj.weight
        with torch.device("meta"):  # no initialisation to draw: every parameter is copied from m below
            new = cls(
                m.embed_dim, m.num_heads, kdim=m.kdim, vdim=m.vdim, bias=m.in_proj_bias is not None, dropout=m.dropout
            )
        new = new.to_empty(device=ref.device).to(dtype=ref.dtype)
        if m._qkv_same_embed_dim:
            w_q, w_k, w_v = m.in_proj_weight.chunk(3)  # (3E, E) -> 3 x (E, E)
        else:
            w_q, w_k, w_v = m.q_proj_weight, m.k_proj_weight, m.v_proj_weight  # (E, E), (E, kdim), (E, vdim)
        with torch.no_grad():
            for proj, w in ((new.q_proj, w_q), (new.k_proj, w_k), (new.v_proj, w_v), (new.out_proj, ref)):
                proj.weight.copy_(w)
            if m.in_proj_bias is not None:
                for proj, b in zip((new.q_proj, new.k_proj, new.v_proj), m.in_proj_bias.chunk(3)):  # (3E,) -> 3 x (E,)
                    proj.bias.copy_(b)
                new.out_proj.bias.copy_(m.out_proj.bias)
        return new.train(m.training)
