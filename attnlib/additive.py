"""Additive (Bahdanau) attention: a one-hidden-layer network scores every query-key pair.

Shape legend: B batch, Tq query length, Tk key/value length, Dq query width, Dk key
width, Ev value width, h ``num_hiddens`` (the width of the scoring network).
"""

from __future__ import annotations

import torch
from torch import nn

from ._checks import check_batch_first_inputs, check_dropout, check_key_mask, check_mask
from .attention import combine_with_key_mask, masked_softmax


class AdditiveAttention(nn.Module):
    """Attention with the additive score a(q, k) = w_v^T tanh(W_q q + W_k k).

    Queries and keys are projected to a common width ``num_hiddens``, so they may have
    different sizes (unlike dot-product attention). Scores are masked and normalised by
    :func:`attnlib.masked_softmax`, the same path as dot-product attention: masked keys
    get exactly zero weight, and a query whose keys are all masked gets zero weights and
    a zero output.

    Args:
        query_size: Dq, the last dimension of ``queries``.
        key_size: Dk, the last dimension of ``keys``.
        num_hiddens: h, the width of the scoring network.
        dropout: probability of zeroing a weight in training mode, in [0, 1).

    Shapes (``forward``):
        queries (B, Tq, Dq), keys (B, Tk, Dk), values (B, Tk, Ev), all floating with the
        same dtype and device; ``attn_mask`` bool, True = may attend, broadcastable to
        (B, Tq, Tk) without enlarging it (e.g. ``from_valid_lens(valid_lens, Tk, ndim=3)``
        gives (B, 1, Tk)), or floating (the queries' dtype), added to the scores;
        ``key_mask`` bool (B, Tk), True = a real key (not torch's True = padding).
        Returns ``(output, weights)``: output (B, Tq, Ev) and weights (B, Tq, Tk), the
        matrix that multiplied ``values`` (after dropout in training mode).

    Raises:
        TypeError: a non-floating input, inputs of different dtypes or of another dtype
            than the module's parameters, an integer ``attn_mask``, a ``key_mask`` that is
            not bool.
        ValueError: inputs that are not 3-D, a last dimension other than ``query_size``
            or ``key_size``, different batch sizes, keys and values of different lengths,
            an ``attn_mask`` that does not broadcast to (B, Tq, Tk), a ``key_mask`` that is
            not (B, Tk), a bad ``dropout``, or inputs on different devices (from each other
            or from the module's parameters).

    Source: Bahdanau, Cho, Bengio 2015, "Neural Machine Translation by Jointly Learning
    to Align and Translate", eq. (6) and appendix A.1.2, a(s, h) = v_a^T tanh(W_a s + U_a h);
    Zhang et al., "Dive into Deep Learning", sec. 11.3, "Additive Attention" (11.3.4 in the
    current online edition).
    """

    def __init__(self, query_size: int, key_size: int, num_hiddens: int, dropout: float = 0.0) -> None:
        super().__init__()
        for name, n in (("query_size", query_size), ("key_size", key_size), ("num_hiddens", num_hiddens)):
            if not isinstance(n, int) or isinstance(n, bool) or n < 1:
                raise ValueError(f"{name} must be a positive int, got {n!r}")
        check_dropout("dropout", dropout)
        self.query_size, self.key_size, self.num_hiddens = query_size, key_size, num_hiddens
        self.W_q = nn.Linear(query_size, num_hiddens, bias=False)
        self.W_k = nn.Linear(key_size, num_hiddens, bias=False)
        self.w_v = nn.Linear(num_hiddens, 1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def extra_repr(self) -> str:
        return f"query_size={self.query_size}, key_size={self.key_size}, num_hiddens={self.num_hiddens}"

    def scores(self, queries: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        """Unnormalised scores w_v^T tanh(W_q q_i + W_k k_j) for every pair: (B, Tq, Tk).

        Args:
            queries: (B, Tq, Dq).
            keys: (B, Tk, Dk).
        """
        q = self.W_q(queries)  # (B, Tq, Dq) -> (B, Tq, h)
        k = self.W_k(keys)  # (B, Tk, Dk) -> (B, Tk, h)
        features = torch.tanh(q.unsqueeze(2) + k.unsqueeze(1))  # (B, Tq, 1, h) + (B, 1, Tk, h) -> (B, Tq, Tk, h)
        return self.w_v(features).squeeze(-1)  # (B, Tq, Tk, h) -> (B, Tq, Tk, 1) -> (B, Tq, Tk)

    def forward(
        self,
        queries: torch.Tensor,
        keys: torch.Tensor,
        values: torch.Tensor,
        attn_mask: torch.Tensor | None = None,
        *,
        key_mask: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Weigh the values by the additive scores of every query against every key.

        Shape legend: B batch, Tq query length, Tk key/value length, Dq ``query_size``,
        Dk ``key_size``, Ev value width.

        Args:
            queries: floating (B, Tq, Dq), of the same dtype and device as the keys, the values
                and the module's parameters.
            keys: (B, Tk, Dk).
            values: (B, Tk, Ev), any Ev.
            attn_mask: optional, broadcastable to (B, Tq, Tk) without enlarging it: bool
                (True = may attend, e.g. ``from_valid_lens(valid_lens, Tk, ndim=3)``, which
                gives (B, 1, Tk)) or floating (the queries' dtype, added to the scores).
            key_mask: optional bool (B, Tk), True = a real key, False = padding: the common
                padding mask, in attnlib's one polarity. It is the opposite of torch's
                ``key_padding_mask`` (True = padding): convert that with ``~key_padding_mask``,
                or pass ``attn_mask=from_key_padding_mask(kpm, ndim=3)``. Combined with
                ``attn_mask`` by ``&``. Prefer it to a (B, Tk) ``attn_mask``, which is read
                as (Tq, Tk), silently when B == Tq.

        Returns:
            ``(output, weights)``: output (B, Tq, Ev) and weights (B, Tq, Tk), the matrix
            that multiplied ``values`` (after dropout in training mode), in the inputs'
            dtype. A query whose keys are all masked gets zero weights and a zero output.

        Raises:
            TypeError: a non-tensor or non-floating input or mask, inputs of different
                dtypes or of another dtype than the module's parameters, an integer
                ``attn_mask``, a ``key_mask`` that is not bool, or a float ``attn_mask``
                of another dtype.
            ValueError: inputs that are not 3-D, a last dimension other than ``query_size``
                or ``key_size``, different batch sizes, keys and values of different lengths,
                an ``attn_mask`` that does not broadcast to (B, Tq, Tk), a ``key_mask`` of a
                shape other than (B, Tk), or inputs or masks on another device.

        Source: Bahdanau, Cho, Bengio 2015, "Neural Machine Translation by Jointly Learning
        to Align and Translate", eq. (6) (the weights) and appendix A.1.2 (the score).
        """
        check_batch_first_inputs(self.W_q.weight, (
            ("queries", queries, "(B, Tq, Dq)", self.query_size, f"(B, Tq, {self.query_size})"),
            ("keys", keys, "(B, Tk, Dk)", self.key_size, f"(B, Tk, {self.key_size})"),
            ("values", values, "(B, Tk, Ev)", None, "(B, Tk, Ev)"),  # any value width Ev
        ))
        (b, tq, _), tk = queries.shape, keys.shape[1]
        if attn_mask is not None:
            check_mask("attn_mask", attn_mask, torch.Size((b, tq, tk)), layout="(B, Tq, Tk)", like=queries)
        if key_mask is not None:
            check_key_mask(key_mask, b, tk, queries)
            attn_mask = combine_with_key_mask(attn_mask, key_mask[:, None, :], False, tq, tk)  # (B, 1, Tk)

        scores = self.scores(queries, keys)  # (B, Tq, Tk)
        mask = None
        if attn_mask is not None:
            if attn_mask.dtype == torch.bool:
                mask = attn_mask
            else:
                scores = scores + attn_mask  # a float mask is added: 0 keeps, -inf blocks
        weights = self.dropout(masked_softmax(scores, mask))  # (B, Tq, Tk), rows sum to 1 (0 if all masked)
        output = weights @ values  # (B, Tq, Tk) @ (B, Tk, Ev) -> (B, Tq, Ev)
        return output, weights
