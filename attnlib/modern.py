"""The attention of 2025-26's open models: four small changes to notebook 08's layer, each checked against the
model's own module in transformers (notebook 11).

- :class:`LatentAttention`: multi-head latent attention (DeepSeek-V2 and V3). Keys and values are rebuilt from
  one low-rank latent per token; a separate, narrow RoPE key is shared by all heads; the cache holds only the
  latent and the RoPE key, and decoding may absorb the keys' up-projection into the query.
- :func:`sliding_window_mask` and :class:`KVCache` with a ``window``: a query sees only the last ``window``
  tokens, and the cache keeps only what a later query can still see (gpt-oss; Gemma 2 and 3; Mistral 7B).
- :func:`softmax_with_sink`: a learned logit per head that joins each softmax's denominator (gpt-oss).
- :func:`rms_norm` on each head's queries and keys (QK-norm: OLMo 2, Qwen3, Gemma 3), and a sigmoid gate on
  the attention's output computed from the layer's input (Qwen3-Next): both are switches of
  :class:`CausalSelfAttention`, which also takes grouped key/value heads, a window and sinks.

Shape legend: B batch, H query heads, Hkv key/value heads, Tq query length, Tk key/value length, E model
width (``embed_dim``), Dh head width. Masks are bool, True = may attend.
"""

from __future__ import annotations

import torch
from torch import nn

from ._checks import check_floating, check_matches_parameters, check_ndim, check_tensor, shape_str
from .attention import _masked_softmax, _repeat_kv_heads
from .masks import causal_mask
from .multihead import merge_heads
from .positions import apply_rope

__all__ = ["CausalSelfAttention", "KVCache", "LatentAttention", "hf_forward", "rms_norm", "sliding_window_mask",
           "softmax_with_sink"]


def _check_positive_int(name: str, n: object, *, allow_none: bool = False) -> None:
    if not (n is None and allow_none) and (not isinstance(n, int) or isinstance(n, bool) or n <= 0):
        raise ValueError(f"{name} must be a positive int{' or None' if allow_none else ''}, got {n!r}")


def rms_norm(x: torch.Tensor, weight: torch.Tensor | None = None, eps: float = 1e-6) -> torch.Tensor:
    """RMSNorm over the last axis: ``x / sqrt(mean(x**2) + eps) * weight``.

    For QK-norm, ``x`` is the queries or keys (B, H, T, Dh) and each head's Dh features of each token are
    normalised on their own (Qwen3, Gemma 3; OLMo 2 normalises all H * Dh features of a token together,
    before the heads are split). The mean is computed in float32 (float64 for float64 input) and the result
    cast back to ``x``'s dtype before the weight multiplies it, as transformers' Llama-family norms do.

    Args:
        x: floating (..., D). Not modified.
        weight: optional (D,), the learned gain; None for 1.
        eps: added to the mean square, a float >= 0.

    Returns:
        (..., D) of ``x``'s dtype; without ``weight`` the root mean square of each row is 1 (up to ``eps``).

    Raises:
        TypeError: ``x`` or ``weight`` is not a floating tensor.
        ValueError: ``weight`` is not (D,), or ``eps`` is negative.

    Source: Zhang and Sennrich 2019, "Root Mean Square Layer Normalization"; QK-norm: Dehghani et al. 2023,
    "Scaling Vision Transformers to 22 Billion Parameters" (normalising queries and keys against the growth of
    the attention logits).
    """
    check_floating("x", x)
    if weight is not None:
        check_floating("weight", weight)
        if weight.shape != x.shape[-1:]:
            raise ValueError(f"weight must have shape (D,) = ({x.shape[-1]},), the last dimension of x "
                             f"{shape_str(x)}, got shape {shape_str(weight)}")
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not eps >= 0:
        raise ValueError(f"eps must be a float >= 0, got {eps!r}")
    compute = torch.float64 if x.dtype == torch.float64 else torch.float32
    xc = x.to(compute)
    normed = (xc * torch.rsqrt(xc.pow(2).mean(dim=-1, keepdim=True) + eps)).to(x.dtype)  # (..., D)
    return normed if weight is None else weight * normed


def sliding_window_mask(
    q_len: int, kv_len: int | None = None, *, window: int, device: torch.device | str | None = None
) -> torch.Tensor:
    """Causal mask with a sliding window: each query sees itself and the ``window - 1`` keys before it.

    Aligned bottom-right, as :func:`causal_mask` with ``align="bottom_right"``: the Tq queries are the last
    Tq of the Tk keys' tokens (decoding with a cache), so query i sits at position ``p = Tk - Tq + i`` and
    may attend to key j when ``p - window < j <= p``: exactly ``window`` keys once ``p >= window - 1``.
    transformers' ``sliding_window`` means the same (``kv_idx > q_idx - sliding_window``).

    Args:
        q_len: Tq, the number of queries (>= 0).
        kv_len: Tk, the number of keys (>= Tq); defaults to ``q_len``.
        window: W, the number of keys a query sees (itself included), a positive int.
        device: where to build the mask.

    Returns:
        bool (Tq, Tk), True = may attend. Broadcasts over B and H.

    Raises:
        ValueError: a negative length, ``kv_len`` < ``q_len``, or ``window`` not a positive int.

    Source: Beltagy et al. 2020, "Longformer", sec. 3.1 (sliding window); Jiang et al. 2023, "Mistral 7B",
    sec. 2 (a causal window in a decoder); OpenAI 2025, "gpt-oss-120b & gpt-oss-20b Model Card" (128 tokens).
    """
    _check_positive_int("window", window)
    mask = causal_mask(q_len, kv_len, align="bottom_right", device=device)  # checks the lengths
    if mask.shape[1] < mask.shape[0]:
        raise ValueError(f"kv_len must be >= q_len (the queries are the last Tq of the keys' tokens), "
                         f"got q_len={q_len} and kv_len={kv_len}")
    tq, tk = mask.shape
    position = torch.arange(tq, device=device)[:, None] + (tk - tq)  # (Tq, 1): each query's position
    key = torch.arange(tk, device=device)[None, :]  # (1, Tk)
    return mask & (key > position - window)  # (Tq, Tk): within the last `window` positions


def softmax_with_sink(scores: torch.Tensor, sink: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Softmax over the keys with one more logit per head in the denominator: the sink, which has no value.

    ``weights[..., h, i, j] = exp(s_ij) / (exp(sink_h) + sum_j' exp(s_ij'))``: a row sums to less than 1, and
    the rest (``exp(sink_h) / (...)``) is attention paid to nothing. A head with nothing to take from a row
    puts its weight there instead of on a real token. Computed as a softmax over Tk + 1 logits whose last
    column is dropped (what gpt-oss's reference code and transformers do), so it is stable for any scores.

    Args:
        scores: floating (..., H, Tq, Tk), already scaled. Not modified.
        sink: floating (H,), one logit per head, in ``scores``' dtype.
        mask: optional bool broadcastable to ``scores``' shape, True = may attend. The sink is never masked:
            a row whose keys are all masked puts all its weight on the sink (zero weights, zero output).

    Returns:
        weights of ``scores``' shape and dtype, each row summing to 1 minus the sink's share.

    Raises:
        TypeError: ``scores`` or ``sink`` not floating, of different dtypes, or ``mask`` not bool.
        ValueError: ``scores`` under 3-D, ``sink`` not (H,) with H = ``scores.shape[-3]``, or a ``mask``
            that does not broadcast to ``scores``' shape.

    Source: OpenAI 2025, "gpt-oss-120b & gpt-oss-20b Model Card" (a learned bias in each head's softmax
    denominator); Xiao et al. 2023, "Efficient Streaming Language Models with Attention Sinks" (the sink, and a
    learnable sink token); Miller 2023, "Attention Is Off By One" (a fixed logit 0).
    """
    check_floating("scores", scores)
    check_floating("sink", sink)
    if scores.dim() < 3:
        raise ValueError(f"scores must have at least 3 dimensions (..., H, Tq, Tk), got shape {shape_str(scores)}")
    if sink.shape != scores.shape[-3:-2]:
        raise ValueError(f"sink must have shape (H,) = ({scores.shape[-3]},), one logit per head of scores "
                         f"{shape_str(scores)} (..., H, Tq, Tk), got shape {shape_str(sink)}")
    if sink.dtype != scores.dtype:
        raise TypeError(f"sink must have scores' dtype {scores.dtype}, got {sink.dtype}")
    if mask is not None:
        check_tensor("mask", mask)
        if mask.dtype != torch.bool:
            raise TypeError(f"mask must be a bool tensor (True = may attend), got dtype {mask.dtype}")
        try:
            ok = torch.broadcast_shapes(mask.shape, scores.shape) == scores.shape
        except RuntimeError:
            ok = False
        if not ok:
            raise ValueError(f"mask must broadcast to scores' shape {shape_str(scores)}, got shape {shape_str(mask)}")
    rows = scores.shape[:-1]  # (..., H, Tq)
    sink_column = sink[:, None, None].expand(*rows, 1)  # (H,) -> (..., H, Tq, 1): the same logit in every row
    logits = torch.cat([scores, sink_column], dim=-1)  # (..., H, Tq, Tk + 1)
    if mask is not None:
        mask = torch.cat([mask.expand(scores.shape), mask.new_ones(*rows, 1)], dim=-1)  # the sink: always True
    return _masked_softmax(logits, mask)[..., :-1]  # the sink's column dropped: (..., H, Tq, Tk)


class KVCache:
    """What one attention layer keeps of the tokens it has seen, for decoding a chunk of tokens at a time.

    ``update`` appends the new tokens' tensors (for :class:`CausalSelfAttention` its keys and values, for
    :class:`LatentAttention` its latents and RoPE keys) along the token axis, dim -2, and returns everything
    the new queries may see. Without a window every token is kept (notebook 08's cache: its memory grows with
    every token). With ``window`` = W a query sees at most the W - 1 tokens before it, so after each update the
    cache keeps only the last W - 1 tokens: its memory stops growing (``nbytes``), and the outputs stay the
    same as with the full cache (the window's mask hides the dropped tokens anyway).

    Args:
        window: W (a positive int) for a sliding-window layer, None to keep every token.

    Attributes:
        seen: the number of tokens seen so far: the position of the next token (for RoPE).
        tensors: the kept tensors, each (B, heads, kept tokens, width); empty before the first update.

    Source: notebook 08's key/value cache; the window: Jiang et al. 2023, "Mistral 7B", sec. 2 (the rolling
    buffer cache).
    """

    def __init__(self, window: int | None = None) -> None:
        _check_positive_int("window", window, allow_none=True)
        self.window = window
        self.seen = 0
        self.tensors: tuple[torch.Tensor, ...] = ()

    def update(self, *new: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """Append the new tokens' tensors, each (B, heads, T_new, width); return the kept ones with them.

        Raises:
            TypeError: a tensor is not floating.
            ValueError: tensors not 4-D, of different lengths T_new, or whose count, batch, heads or width
                differ from the earlier updates'.
        """
        for i, x in enumerate(new):
            check_floating(f"tensor {i}", x)
            check_ndim(f"tensor {i}", x, 4, "(B, heads, T_new, width)")
        if not new or len({x.shape[-2] for x in new}) != 1:
            raise ValueError(f"update needs one or more tensors of the same length T_new (dim -2), got shapes "
                             f"{[shape_str(x) for x in new]}")
        self.seen += new[0].shape[-2]
        if self.tensors:
            if len(new) != len(self.tensors) or any(
                    x.shape[:2] != old.shape[:2] or x.shape[-1] != old.shape[-1] for x, old in zip(new, self.tensors)):
                raise ValueError(f"update must get tensors like the earlier ones, (B, heads, T_new, width) with "
                                 f"{[shape_str(old) for old in self.tensors]} kept, got {[shape_str(x) for x in new]}")
            new = tuple(torch.cat([old, x], dim=-2) for old, x in zip(self.tensors, new))  # (B, ., kept + T_new, .)
        if self.window is None:
            self.tensors = new
        else:  # a later query sees at most window - 1 earlier tokens
            self.tensors = tuple(x[..., x.shape[-2] - min(self.window - 1, x.shape[-2]):, :] for x in new)
        return new

    @property
    def nbytes(self) -> int:
        """The bytes the cache holds now: the sum over its tensors of elements times bytes per element."""
        return sum(x.numel() * x.element_size() for x in self.tensors)


def _rope_part(x: torch.Tensor, positions: torch.Tensor, base: float, rope_dim: int, interleaved: bool = False):
    """RoPE on the first ``rope_dim`` features of the last axis; the rest passes unrotated (partial RoPE)."""
    if rope_dim == x.shape[-1]:
        return apply_rope(x, positions, base=base, interleaved=interleaved)
    rotated, passed = x[..., :rope_dim], x[..., rope_dim:]
    return torch.cat([apply_rope(rotated, positions, base=base, interleaved=interleaved), passed], dim=-1)


def _check_input(x: object, embed_dim: int, parameter: torch.Tensor, cache: object) -> None:
    check_floating("x", x)
    check_ndim("x", x, 3, f"(B, T, E={embed_dim})")
    if x.shape[-1] != embed_dim:
        raise ValueError(f"x must have shape (B, T, E={embed_dim}), got shape {shape_str(x)}")
    check_matches_parameters("x", x, parameter)
    if cache is not None and not isinstance(cache, KVCache):
        raise TypeError(f"cache must be an attnlib KVCache or None, got {type(cache).__name__}")


def _rope_base(module: nn.Module) -> tuple[float, float]:
    """(rope_theta, partial_rotary_factor) of a transformers attention module's config; YaRN and others refused."""
    params = dict(getattr(module.config, "rope_parameters", None) or {})
    if params.get("rope_type", "default") != "default":
        raise ValueError(f"{type(module).__name__} uses rope_type {params['rope_type']!r}; attnlib applies plain "
                         "RoPE only: build the config with rope_parameters={'rope_type': 'default', ...}")
    factor = params.get("partial_rotary_factor", getattr(module.config, "partial_rotary_factor", 1.0))
    return float(params.get("rope_theta", 10000.0)), float(factor)


class CausalSelfAttention(nn.Module):
    """Causal self-attention with RoPE and grouped key/value heads, and four switches of recent models.

    Without the switches it is notebook 08's layer (Llama's attention). ``window`` limits each query to the
    last ``window`` tokens (gpt-oss's and Gemma's local layers); ``sink`` adds a learned logit per head to each
    softmax's denominator (gpt-oss); ``qk_norm`` puts an RMSNorm with a learned (Dh,) gain on each head's
    queries and keys, before RoPE (Qwen3, Gemma 3); ``gate`` multiplies the merged heads by
    ``sigmoid(gate_proj(x))``, computed from the layer's input, before the output projection (Qwen3-Next).

    Args:
        embed_dim: E, the width of the input and the output.
        num_heads: H, the query heads.
        num_kv_heads: Hkv, the key/value heads, dividing H (default H; 1 is multi-query attention).
        head_dim: Dh (default E / H).
        bias: give the four projections (and the gate's) a bias.
        rope_base: RoPE's base (``rope_theta``).
        rope_dim: how many of each head's first features RoPE rotates, even (default Dh; Qwen3-Next: Dh / 4).
        window: W, each query sees itself and the W - 1 tokens before it; None for full causal attention.
        sink: a learned sink logit per head (``self.sink``, (H,), zeros at first).
        qk_norm: RMSNorm on each head's queries and keys (``self.q_norm``, ``self.k_norm``, (Dh,) gains).
        gate: an output gate (``self.gate_proj``, E -> H * Dh).
        eps: the RMSNorm's epsilon.

    Raises:
        ValueError: a size that is not a positive int, H not a multiple of Hkv, E not a multiple of H without
            ``head_dim``, or ``rope_dim`` odd or larger than Dh.

    Source: Vaswani et al. 2017, sec. 3.2; Su et al. 2021 (RoPE); Ainslie et al. 2023 (GQA); the switches:
    OpenAI 2025, gpt-oss model card (window and sinks); Dehghani et al. 2023 and Team OLMo 2024, "2 OLMo 2
    Furious" (QK-norm); Qiu et al. 2025, "Gated Attention for Large Language Models" (a sigmoid gate after
    the attention, elementwise and head-specific, computed from the layer's input).
    """

    def __init__(self, embed_dim: int, num_heads: int, *, num_kv_heads: int | None = None,
                 head_dim: int | None = None, bias: bool = False, rope_base: float = 10000.0,
                 rope_dim: int | None = None, window: int | None = None, sink: bool = False,
                 qk_norm: bool = False, gate: bool = False, eps: float = 1e-6) -> None:
        super().__init__()
        num_kv_heads = num_heads if num_kv_heads is None else num_kv_heads
        for name, n in (("embed_dim", embed_dim), ("num_heads", num_heads), ("num_kv_heads", num_kv_heads)):
            _check_positive_int(name, n)
        _check_positive_int("head_dim", head_dim, allow_none=True)
        _check_positive_int("window", window, allow_none=True)
        if num_heads % num_kv_heads:
            raise ValueError(f"num_heads={num_heads} must be a multiple of num_kv_heads={num_kv_heads}")
        if head_dim is None:
            if embed_dim % num_heads:
                raise ValueError(f"embed_dim={embed_dim} must be divisible by num_heads={num_heads}, or give head_dim")
            head_dim = embed_dim // num_heads
        rope_dim = head_dim if rope_dim is None else rope_dim
        if not isinstance(rope_dim, int) or isinstance(rope_dim, bool) or rope_dim % 2 or not 0 < rope_dim <= head_dim:
            raise ValueError(f"rope_dim must be an even int in (0, head_dim={head_dim}], got {rope_dim!r}")
        self.embed_dim, self.num_heads, self.num_kv_heads, self.head_dim = embed_dim, num_heads, num_kv_heads, head_dim
        self.rope_base, self.rope_dim, self.window, self.eps = float(rope_base), rope_dim, window, eps
        self.q_proj = nn.Linear(embed_dim, num_heads * head_dim, bias=bias)
        self.k_proj = nn.Linear(embed_dim, num_kv_heads * head_dim, bias=bias)
        self.v_proj = nn.Linear(embed_dim, num_kv_heads * head_dim, bias=bias)
        self.out_proj = nn.Linear(num_heads * head_dim, embed_dim, bias=bias)
        self.sink = nn.Parameter(torch.zeros(num_heads)) if sink else None
        self.q_norm = nn.Parameter(torch.ones(head_dim)) if qk_norm else None
        self.k_norm = nn.Parameter(torch.ones(head_dim)) if qk_norm else None
        self.gate_proj = nn.Linear(embed_dim, num_heads * head_dim, bias=bias) if gate else None

    def extra_repr(self) -> str:
        switches = [f"window={self.window}"] if self.window else []
        switches += [name for name, on in (("sink", self.sink is not None), ("qk_norm", self.q_norm is not None),
                                           ("gate", self.gate_proj is not None)) if on]
        return (f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, num_kv_heads={self.num_kv_heads}, "
                f"head_dim={self.head_dim}" + "".join(f", {s}" for s in switches))

    def forward(self, x: torch.Tensor, cache: KVCache | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Attend from every token of ``x`` to itself and the tokens before it (and those in ``cache``).

        Args:
            x: floating (B, T, E), the module's dtype and device: the new tokens.
            cache: optional :class:`KVCache` holding the earlier tokens' keys and values (Hkv heads, after
                QK-norm and RoPE); updated in place. Give it ``window`` = this layer's window to keep only
                what a later query can see. Without it, ``x`` is the whole sequence.

        Returns:
            ``(output, weights)``: output (B, T, E); weights (B, H, T, Tk), Tk the keys seen (T without a
            cache), each row summing to 1 (less with a sink).

        Raises:
            TypeError: ``x`` not floating or not of the module's dtype, ``cache`` not a KVCache.
            ValueError: ``x`` not (B, T, E), on another device, or a cache filled by another layer's shapes.
        """
        _check_input(x, self.embed_dim, self.q_proj.weight, cache)
        b, t, _ = x.shape
        start = cache.seen if cache is not None else 0
        positions = torch.arange(start, start + t, device=x.device)  # (T,): the new tokens' positions
        q = self.q_proj(x).view(b, t, self.num_heads, self.head_dim).transpose(1, 2)  # (B, T, H*Dh) -> (B, H, T, Dh)
        k = self.k_proj(x).view(b, t, self.num_kv_heads, self.head_dim).transpose(1, 2)  # -> (B, Hkv, T, Dh)
        v = self.v_proj(x).view(b, t, self.num_kv_heads, self.head_dim).transpose(1, 2)  # -> (B, Hkv, T, Dh)
        if self.q_norm is not None:  # QK-norm: each head's Dh features of each token, on their own
            q, k = rms_norm(q, self.q_norm, self.eps), rms_norm(k, self.k_norm, self.eps)
        q = _rope_part(q, positions, self.rope_base, self.rope_dim)
        k = _rope_part(k, positions, self.rope_base, self.rope_dim)
        if cache is not None:
            k, v = cache.update(k, v)  # (B, Hkv, Tk, Dh): the kept tokens and the new ones
        tk = k.shape[-2]
        mask = (causal_mask(t, tk, align="bottom_right", device=x.device) if self.window is None
                else sliding_window_mask(t, tk, window=self.window, device=x.device))  # (T, Tk)
        k, v = _repeat_kv_heads(q, k, v)  # (B, Hkv, Tk, Dh) -> (B, H, Tk, Dh): each shared by H / Hkv query heads
        scores = (q @ k.transpose(-2, -1)) * self.head_dim ** -0.5  # (B, H, T, Dh) @ (B, H, Dh, Tk) -> (B, H, T, Tk)
        weights = (_masked_softmax(scores, mask) if self.sink is None
                   else softmax_with_sink(scores, self.sink.to(scores.dtype), mask))  # (B, H, T, Tk)
        heads = merge_heads(weights @ v)  # (B, H, T, Tk) @ (B, H, Tk, Dh) -> (B, H, T, Dh) -> (B, T, H*Dh)
        if self.gate_proj is not None:
            heads = heads * torch.sigmoid(self.gate_proj(x))  # (B, T, H*Dh): a gate per head and feature
        return self.out_proj(heads), weights  # (B, T, H*Dh) -> (B, T, E)

    @classmethod
    def from_hf(cls, module: nn.Module) -> CausalSelfAttention:
        """A copy of a transformers attention module that gives the same output, built from its weights.

        Reads ``GptOssAttention`` (window on its sliding layers, sinks), ``Qwen3Attention`` (QK-norm, window
        when the layer slides), ``Qwen3NextAttention`` (QK-norm with gains stored as ``1 + weight``, partial
        RoPE, and a gate whose rows sit after each head's query rows in ``q_proj``) and ``LlamaAttention``.
        The copy has the module's dtype and device and shares no storage with it.

        Args:
            module: the transformers attention module to copy (built from its config, weights loaded).

        Raises:
            TypeError: another kind of module.
            ValueError: a config whose RoPE is not plain (YaRN and other scalings are not implemented).
        """
        kind = type(module).__name__
        if kind not in ("GptOssAttention", "Qwen3Attention", "Qwen3NextAttention", "LlamaAttention"):
            raise TypeError("module must be transformers' GptOssAttention, Qwen3Attention, Qwen3NextAttention or "
                            f"LlamaAttention, got {kind}")
        config, head_dim = module.config, module.head_dim
        num_heads, num_kv_heads = config.num_attention_heads, config.num_key_value_heads
        base, factor = _rope_base(module)
        gated = kind == "Qwen3NextAttention"
        ref = module.o_proj.weight
        with torch.device("meta"):  # nothing to initialise: every parameter is copied below
            new = cls(config.hidden_size, num_heads, num_kv_heads=num_kv_heads, head_dim=head_dim,
                      bias=module.o_proj.bias is not None, rope_base=base, rope_dim=int(head_dim * factor),
                      window=getattr(module, "sliding_window", None), sink=hasattr(module, "sinks"),
                      qk_norm=hasattr(module, "q_norm"), gate=gated, eps=getattr(config, "rms_norm_eps", 1e-6))
        new = new.to_empty(device=ref.device).to(dtype=ref.dtype)
        q_weight, q_bias = module.q_proj.weight, module.q_proj.bias
        with torch.no_grad():
            if gated:  # q_proj's rows, head by head: Dh query rows, then Dh gate rows
                rows = q_weight.view(num_heads, 2, head_dim, -1)  # (H * 2Dh, E) -> (H, 2, Dh, E)
                q_weight, gate_weight = rows[:, 0].reshape(-1, rows.shape[-1]), rows[:, 1].reshape(-1, rows.shape[-1])
                new.gate_proj.weight.copy_(gate_weight)
                if q_bias is not None:
                    halves = q_bias.view(num_heads, 2, head_dim)
                    q_bias = halves[:, 0].reshape(-1)
                    new.gate_proj.bias.copy_(halves[:, 1].reshape(-1))
            weights = ((new.q_proj, q_weight, q_bias), (new.k_proj, module.k_proj.weight, module.k_proj.bias),
                       (new.v_proj, module.v_proj.weight, module.v_proj.bias),
                       (new.out_proj, module.o_proj.weight, module.o_proj.bias))
            for mine, weight, bias in weights:
                mine.weight.copy_(weight)
                if bias is not None:
                    mine.bias.copy_(bias)
            if new.sink is not None:
                new.sink.copy_(module.sinks)
            if new.q_norm is not None:
                offset = 1.0 if gated else 0.0  # Qwen3-Next's norm multiplies by (1 + weight)
                new.q_norm.copy_(module.q_norm.weight + offset)
                new.k_norm.copy_(module.k_norm.weight + offset)
        return new.train(module.training)


class LatentAttention(nn.Module):
    """Multi-head latent attention (MLA): keys and values rebuilt from one low-rank latent per token.

    Per token, one down-projection gives a latent c (width r = ``kv_lora_rank``, then RMSNorm) and a narrow
    key k_R (width dR = ``qk_rope_head_dim``) that alone carries RoPE and is shared by all H heads. Head h's key
    is ``[W_UK_h c ; k_R]`` (width dn + dR) and its value ``W_UV_h c`` (width dv); the queries are
    ``[q_nope ; RoPE(q_rope)]`` per head, from the input directly or through a latent of their own
    (``q_lora_rank``). The cache holds only c and k_R: r + dR numbers per token, whatever H is.

    RoPE sits outside the latent so that decoding can skip rebuilding the keys: q_nope . (W_UK c) =
    (W_UK^T q_nope) . c, and weights @ (W_UV c) = W_UV (weights @ c). With ``absorbed=True`` every head attends
    straight to the cached latents (as multi-query attention with one key/value head of width r + dR), which
    equals the explicit form up to rounding. Rotating the keys rebuilt from c would put a position-dependent
    rotation between W_UK and the query, and nothing could be absorbed. With ``expanded=True`` the cache holds
    every head's rebuilt keys and values instead (multi-head attention's cache, H (dn + dR + dv) numbers per
    token): a decoding step then does the fewest operations and reads the most bytes.

    Args:
        embed_dim: E, the width of the input and the output.
        num_heads: H.
        kv_lora_rank: r, the latent's width.
        qk_nope_head_dim: dn, the width of each head's key and query part without RoPE.
        qk_rope_head_dim: dR (even), the width of the RoPE part, one key part shared by all heads.
        v_head_dim: dv, each head's value width.
        q_lora_rank: the queries' latent width, or None for one projection E -> H (dn + dR).
        bias: biases on the down-projections and the output projection (transformers' ``attention_bias``).
        rope_base: RoPE's base.
        interleaved: RoPE's pairing (DeepSeek's checkpoints: True, adjacent pairs).
        eps: the RMSNorms' epsilon.

    Attributes:
        kv_down: E -> r + dR (latent, then k_R). kv_norm: (r,) gain. kv_up: r -> H (dn + dv), head by head
        (dn key rows, then dv value rows). q_proj, or q_down, q_norm and q_up. out_proj: H dv -> E.

    Raises:
        ValueError: a size that is not a positive int, or an odd ``qk_rope_head_dim``.

    Source: DeepSeek-AI 2024, "DeepSeek-V2: A Strong, Economical, and Efficient Mixture-of-Experts Language
    Model", sec. 2.1.2 (eq. 9-13, low-rank key-value joint compression), sec. 2.1.3 (eq. 14-19, decoupled
    RoPE); DeepSeek-AI 2024, "DeepSeek-V3 Technical Report", sec. 2.1.1.
    """

    def __init__(self, embed_dim: int, num_heads: int, *, kv_lora_rank: int, qk_nope_head_dim: int,
                 qk_rope_head_dim: int, v_head_dim: int, q_lora_rank: int | None = None, bias: bool = False,
                 rope_base: float = 10000.0, interleaved: bool = True, eps: float = 1e-6) -> None:
        super().__init__()
        for name, n in (("embed_dim", embed_dim), ("num_heads", num_heads), ("kv_lora_rank", kv_lora_rank),
                        ("qk_nope_head_dim", qk_nope_head_dim), ("qk_rope_head_dim", qk_rope_head_dim),
                        ("v_head_dim", v_head_dim)):
            _check_positive_int(name, n)
        _check_positive_int("q_lora_rank", q_lora_rank, allow_none=True)
        if qk_rope_head_dim % 2:
            raise ValueError(f"qk_rope_head_dim must be even (RoPE rotates pairs), got {qk_rope_head_dim}")
        self.embed_dim, self.num_heads, self.rank = embed_dim, num_heads, kv_lora_rank
        self.nope_dim, self.rope_dim, self.v_dim = qk_nope_head_dim, qk_rope_head_dim, v_head_dim
        self.rope_base, self.interleaved, self.eps = float(rope_base), interleaved, eps
        self.scale = (qk_nope_head_dim + qk_rope_head_dim) ** -0.5
        q_width = num_heads * (qk_nope_head_dim + qk_rope_head_dim)
        if q_lora_rank is None:
            self.q_proj = nn.Linear(embed_dim, q_width, bias=False)
        else:
            self.q_down = nn.Linear(embed_dim, q_lora_rank, bias=bias)
            self.q_norm = nn.Parameter(torch.ones(q_lora_rank))
            self.q_up = nn.Linear(q_lora_rank, q_width, bias=False)
        self.kv_down = nn.Linear(embed_dim, kv_lora_rank + qk_rope_head_dim, bias=bias)  # W_DKV and W_KR stacked
        self.kv_norm = nn.Parameter(torch.ones(kv_lora_rank))
        self.kv_up = nn.Linear(kv_lora_rank, num_heads * (qk_nope_head_dim + v_head_dim), bias=False)  # W_UK, W_UV
        self.out_proj = nn.Linear(num_heads * v_head_dim, embed_dim, bias=bias)

    def extra_repr(self) -> str:
        return (f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, kv_lora_rank={self.rank}, "
                f"qk_nope_head_dim={self.nope_dim}, qk_rope_head_dim={self.rope_dim}, v_head_dim={self.v_dim}")

    def up_weights(self) -> tuple[torch.Tensor, torch.Tensor]:
        """W_UK (H, dn, r) and W_UV (H, dv, r): ``kv_up``'s rows, head by head."""
        w = self.kv_up.weight.view(self.num_heads, self.nope_dim + self.v_dim, self.rank)  # (H, dn + dv, r)
        return w[:, : self.nope_dim], w[:, self.nope_dim:]

    def expand(self, latent: torch.Tensor, k_rope: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Every head's keys and values rebuilt from latents (B, 1, Tk, r) and rotated RoPE keys (B, 1, Tk, dR).

        Args:
            latent: (B, 1, Tk, r), the normalised latents c, one per token (the cache's first half).
            k_rope: (B, 1, Tk, dR), the RoPE keys k_R, already rotated (the cache's second half).

        Returns:
            keys (B, H, Tk, dn + dR), ``[W_UK_h c ; k_R]``, and values (B, H, Tk, dv), ``W_UV_h c``.
        """
        w_uk, w_uv = self.up_weights()  # (H, dn, r), (H, dv, r)
        k_nope = torch.einsum("bxkr,hdr->bhkd", latent, w_uk)  # (B, 1, Tk, r) -> (B, H, Tk, dn)
        value = torch.einsum("bxkr,hvr->bhkv", latent, w_uv)  # (B, 1, Tk, r) -> (B, H, Tk, dv)
        key = torch.cat([k_nope, k_rope.expand(-1, self.num_heads, -1, -1)], dim=-1)  # (B, H, Tk, dn + dR)
        return key, value

    def forward(self, x: torch.Tensor, cache: KVCache | None = None, *, absorbed: bool = False,
                expanded: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
        """Causal latent attention from every token of ``x`` (and the tokens in ``cache``).

        Three ways to decode, with the same outputs up to rounding: by default the cache holds the latents
        and every step rebuilds every head's keys and values from them (transformers' DeepseekV3Attention);
        ``absorbed`` attends to the latents directly; ``expanded`` caches the rebuilt keys and values instead
        of the latents (multi-head attention's cache, H (dn + dR + dv) numbers per token).

        Args:
            x: floating (B, T, E), the module's dtype and device.
            cache: optional :class:`KVCache`, updated in place with the latents (B, 1, T, r) and the rotated
                RoPE keys (B, 1, T, dR): the whole cache of this layer; with ``expanded``, with every head's
                keys (B, H, T, dn + dR) and values (B, H, T, dv).
            absorbed: attend to the latents directly, W_UK absorbed into the queries and W_UV applied after
                the weighted sum, instead of rebuilding every head's keys and values.
            expanded: rebuild each token's keys and values once, when it arrives, and cache those.

        Returns:
            ``(output, weights)``: output (B, T, E); weights (B, H, T, Tk), Tk the tokens seen.

        Raises:
            TypeError: ``x`` not floating or not of the module's dtype, ``cache`` not a KVCache.
            ValueError: ``x`` not (B, T, E), or on another device; ``absorbed`` and ``expanded`` both set.
        """
        _check_input(x, self.embed_dim, self.kv_up.weight, cache)
        if absorbed and expanded:
            raise ValueError("absorbed and expanded exclude each other: absorbed attends to cached latents, "
                             "expanded caches every head's keys and values instead")
        b, t, _ = x.shape
        start = cache.seen if cache is not None else 0
        positions = torch.arange(start, start + t, device=x.device)  # (T,)
        q = self.q_proj(x) if hasattr(self, "q_proj") else self.q_up(rms_norm(self.q_down(x), self.q_norm, self.eps))
        q = q.view(b, t, self.num_heads, -1).transpose(1, 2)  # (B, T, H (dn + dR)) -> (B, H, T, dn + dR)
        q_nope, q_rope = q.split([self.nope_dim, self.rope_dim], dim=-1)  # (B, H, T, dn), (B, H, T, dR)
        latent, k_rope = self.kv_down(x).split([self.rank, self.rope_dim], dim=-1)  # (B, T, r), (B, T, dR)
        latent = rms_norm(latent, self.kv_norm, self.eps)[:, None]  # (B, T, r) -> (B, 1, T, r)
        q_rope = apply_rope(q_rope, positions, base=self.rope_base, interleaved=self.interleaved)
        k_rope = apply_rope(k_rope[:, None], positions, base=self.rope_base, interleaved=self.interleaved)  # (B,1,T,dR)
        if expanded:  # the new tokens' keys and values, rebuilt once: (B, H, T, dn + dR), (B, H, T, dv)
            key, value = self.expand(latent, k_rope)
            if cache is not None:
                key, value = cache.update(key, value)  # (B, H, Tk, dn + dR), (B, H, Tk, dv)
        elif cache is not None:
            latent, k_rope = cache.update(latent, k_rope)  # (B, 1, Tk, r), (B, 1, Tk, dR)
        mask = causal_mask(t, (key if expanded else latent).shape[-2], align="bottom_right", device=x.device)
        if absorbed:
            w_uk, w_uv = self.up_weights()  # (H, dn, r), (H, dv, r)
            q_latent = torch.einsum("bhtd,hdr->bhtr", q_nope, w_uk)  # (B, H, T, dn) -> (B, H, T, r): W_UK^T q
            scores = q_latent @ latent.transpose(-2, -1) + q_rope @ k_rope.transpose(-2, -1)  # (B, H, T, Tk)
            weights = _masked_softmax(scores * self.scale, mask)
            context = weights @ latent  # (B, H, T, Tk) @ (B, 1, Tk, r) -> (B, H, T, r)
            heads = torch.einsum("bhtr,hvr->bhtv", context, w_uv)  # (B, H, T, r) -> (B, H, T, dv): W_UV after
        else:
            if not expanded:  # every head's keys and values rebuilt from every cached latent
                key, value = self.expand(latent, k_rope)  # (B, H, Tk, dn + dR), (B, H, Tk, dv)
            query = torch.cat([q_nope, q_rope], dim=-1)  # (B, H, T, dn + dR)
            weights = _masked_softmax((query @ key.transpose(-2, -1)) * self.scale, mask)  # (B, H, T, Tk)
            heads = weights @ value  # (B, H, T, Tk) @ (B, H, Tk, dv) -> (B, H, T, dv)
        return self.out_proj(merge_heads(heads)), weights  # (B, H, T, dv) -> (B, T, H dv) -> (B, T, E)

    @classmethod
    def from_hf(cls, module: nn.Module) -> LatentAttention:
        """A copy of transformers' ``DeepseekV3Attention`` that gives the same output.

        The copy has the module's dtype and device and shares no storage with it.

        Args:
            module: a transformers ``DeepseekV3Attention`` (built from its config, weights loaded).

        Raises:
            TypeError: another kind of module.
            ValueError: a config whose RoPE is not plain (DeepSeek-V3's checkpoints use YaRN, not implemented
                here).
        """
        kind = type(module).__name__
        if kind != "DeepseekV3Attention":
            raise TypeError(f"module must be transformers' DeepseekV3Attention, got {kind}")
        config = module.config
        base, _ = _rope_base(module)
        ref = module.o_proj.weight
        with torch.device("meta"):
            new = cls(config.hidden_size, config.num_attention_heads, kv_lora_rank=config.kv_lora_rank,
                      qk_nope_head_dim=config.qk_nope_head_dim, qk_rope_head_dim=config.qk_rope_head_dim,
                      v_head_dim=config.v_head_dim, q_lora_rank=config.q_lora_rank,
                      bias=module.kv_a_proj_with_mqa.bias is not None, rope_base=base,
                      interleaved=bool(getattr(config, "rope_interleave", False)), eps=config.rms_norm_eps)
        new = new.to_empty(device=ref.device).to(dtype=ref.dtype)
        pairs = [(new.kv_down, module.kv_a_proj_with_mqa), (new.kv_up, module.kv_b_proj), (new.out_proj, module.o_proj)]
        if config.q_lora_rank is None:
            pairs.append((new.q_proj, module.q_proj))
        else:
            pairs += [(new.q_down, module.q_a_proj), (new.q_up, module.q_b_proj)]
        with torch.no_grad():
            for mine, theirs in pairs:
                mine.weight.copy_(theirs.weight)
                if theirs.bias is not None:
                    mine.bias.copy_(theirs.bias)
            new.kv_norm.copy_(module.kv_a_layernorm.weight)
            if config.q_lora_rank is not None:
                new.q_norm.copy_(module.q_a_layernorm.weight)
        return new.train(module.training)


def hf_forward(module: nn.Module, x: torch.Tensor, past_key_values: object = None) -> torch.Tensor:
    """Run a transformers attention module on ``x`` as its decoder layer would, and return its output.

    The module's own model code supplies everything around it: the rotary embedding of its model
    (``<Model>RotaryEmbedding``, from the module's config), the positions (continuing after the tokens in
    ``past_key_values``) and the mask, built by transformers' ``create_causal_mask``, or
    ``create_sliding_window_causal_mask`` when the layer slides. Nothing of attnlib is used, so the result is a
    reference to hold attnlib's modules against.

    Args:
        module: a transformers attention module (``DeepseekV3Attention``, ``GptOssAttention``,
            ``Qwen3Attention``, ``Qwen3NextAttention``, ``LlamaAttention``, ...) whose config asks for
            ``attn_implementation="eager"``.
        x: (B, T, E), the module's dtype and device (the meta device too: shapes only).
        past_key_values: optional transformers ``Cache`` (``DynamicCache(config=config)``), updated in place.

    Returns:
        The module's output (B, T, E).

    Raises:
        TypeError: a module whose model has no rotary embedding class.
    """
    import sys

    from transformers.masking_utils import create_causal_mask, create_sliding_window_causal_mask

    name = type(module).__name__.replace("Attention", "RotaryEmbedding")
    rotary = getattr(sys.modules[type(module).__module__], name, None)
    if rotary is None:
        raise TypeError(f"{type(module).__name__}'s model has no {name}: hf_forward runs RoPE models only")
    b, t, _ = x.shape
    start = past_key_values.get_seq_length(module.layer_idx) if past_key_values is not None else 0
    positions = torch.arange(start, start + t, device=x.device)[None].expand(b, t)  # (B, T)
    with torch.device(x.device):
        cos, sin = rotary(module.config)(x, positions)  # (B, T, rotary width) each
    sliding = getattr(module, "sliding_window", None) is not None
    make_mask = create_sliding_window_causal_mask if sliding else create_causal_mask
    mask = make_mask(config=module.config, inputs_embeds=x, attention_mask=None, past_key_values=past_key_values,
                     position_ids=positions, layer_idx=module.layer_idx)
    return module(x, position_embeddings=(cos, sin), attention_mask=mask, past_key_values=past_key_values)[0]
