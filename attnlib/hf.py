"""attnlib's attention inside Hugging Face transformers, registered the ecosystem's way.

transformers (version 5) looks a model's attention up by name in two registries: its
``AttentionInterface`` holds the function every attention layer calls, its ``AttentionMaskInterface``
the function that builds the mask that layer receives. :func:`use_in_transformers` registers
attnlib's in both under the name ``"attnlib"``; a model loaded (or switched, with
``model.set_attn_implementation``) with ``attn_implementation="attnlib"`` then runs every attention
layer through :func:`attnlib.scaled_dot_product_attention`.

Both registrations matter. For a name without a mask function, transformers builds no mask at all: the
attention function receives ``None``, and a padded batch is then computed as if the padding were real
tokens, without any error. And transformers' own boolean mask function, ``sdpa_mask``, returns ``None``
for an unpadded causal batch, counting on torch's ``is_causal=True`` instead. attnlib's mask function is
``sdpa_mask`` with both shortcuts off, so the attention always receives the mask it must apply.

Shape legend: B batch, Hq query heads, Hkv key/value heads, Tq queries, Tk keys, Dh head width.
"""

from __future__ import annotations

from typing import Any

import torch

from .attention import scaled_dot_product_attention

NAME = "attnlib"
UNSUPPORTED = ("sliding_window", "softcap", "s_aux")  # keyword arguments attnlib's attention has no part for


def attention_forward(
    module: torch.nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    scaling: float | None = None,
    dropout: float = 0.0,
    **kwargs: Any,
) -> tuple[torch.Tensor, torch.Tensor]:
    """One attention layer of a transformers model, computed by :func:`attnlib.scaled_dot_product_attention`.

    The signature is transformers' for an ``AttentionInterface`` function.

    Args:
        module: the calling attention layer (its ``is_causal`` and ``training`` are read).
        query: (B, Hq, Tq, Dh).
        key, value: (B, Hkv, Tk, Dh); Hq a multiple of Hkv (grouped-query attention when they differ).
        attention_mask: bool (B, 1, Tq, Tk), True = may attend, from attnlib's mask function; or a
            float mask added to the scores; or None (attend to every key).
        scaling: multiplies the scores; None for 1 / sqrt(Dh).
        dropout: dropout on the weights, applied only when ``module.training``.
        **kwargs: the rest of what transformers passes (ignored), except ``sliding_window``,
            ``softcap`` and ``s_aux``, which raise when given a value.

    Returns:
        ``(output, weights)``: output (B, Tq, Hq, Dh), the layout transformers expects back;
        weights (B, Hq, Tq, Tk).

    Raises:
        NotImplementedError: ``sliding_window``, ``softcap`` or ``s_aux`` given.
        ValueError: a causal layer received no mask for more than one query: the mask function was
            not registered, or transformers skipped the causal mask (see :func:`use_in_transformers`).

    Source: Vaswani et al. 2017, "Attention Is All You Need", eq. 1; Ainslie et al. 2023, "GQA".
    """
    for name in UNSUPPORTED:
        if kwargs.get(name) is not None:
            raise NotImplementedError(
                f"attnlib's attention has no {name}; load this model with another attn_implementation"
            )
    if attention_mask is None and getattr(module, "is_causal", False) and query.shape[-2] > 1:
        raise ValueError(
            "a causal attention layer received no attention mask, so attnlib would let every token see the "
            "future; call attnlib.use_in_transformers() before loading the model, which registers the mask "
            "function too"
        )
    gqa = query.shape[1] != key.shape[1]  # Hq != Hkv: each key/value head serves Hq / Hkv query heads
    output, weights = scaled_dot_product_attention(
        query, key, value, attn_mask=attention_mask, dropout_p=dropout if module.training else 0.0,
        scale=scaling, enable_gqa=gqa,
    )  # (B, Hq, Tq, Dh), (B, Hq, Tq, Tk)
    return output.transpose(1, 2).contiguous(), weights  # (B, Hq, Tq, Dh) -> (B, Tq, Hq, Dh)


def mask_function(*args: Any, **kwargs: Any) -> torch.Tensor | None:
    """transformers' ``sdpa_mask`` (bool, True = may attend, (B, 1, Tq, Tk)) that never skips the mask.

    ``sdpa_mask`` returns None where torch's ``is_causal=True`` (or no mask at all) would do; attnlib's
    attention is told everything by its mask, so both shortcuts are turned off here.
    """
    from transformers.masking_utils import sdpa_mask

    kwargs["allow_is_causal_skip"] = False
    kwargs["allow_is_bidirectional_skip"] = False
    return sdpa_mask(*args, **kwargs)


def use_in_transformers() -> str:
    """Register attnlib's attention and mask function with transformers under the name ``"attnlib"``.

    Afterwards ``AutoModel.from_pretrained(..., attn_implementation="attnlib")`` (or
    ``model.set_attn_implementation("attnlib")``) runs every attention layer of a model that uses
    transformers' ``AttentionInterface`` (BERT, Llama and most recent models) through
    :func:`attnlib.scaled_dot_product_attention`. Calling it again changes nothing.

    Returns:
        ``"attnlib"``, the name to pass as ``attn_implementation``.

    Source: transformers' documentation, "Attention Interface" (custom attention and mask functions).
    """
    import warnings

    with warnings.catch_warnings():  # tqdm.auto warns in a notebook without ipywidgets when transformers imports it
        warnings.simplefilter("ignore")
        from transformers import AttentionInterface
        from transformers.masking_utils import AttentionMaskInterface

    AttentionInterface.register(NAME, attention_forward)
    AttentionMaskInterface.register(NAME, mask_function)
    return NAME
