"""attnlib: the small, tested attention helpers shared by the course's notebooks.

Shape legend used everywhere: B batch, H heads, Tq query length, Tk key/value length,
E model width, Dh = E / H head width. Masks are bool, True = may attend.
"""

from .additive import AdditiveAttention
from .attention import masked_softmax, scaled_dot_product_attention
from .flash import flash_attention
from .masks import (
    causal_mask,
    expand_key_mask,
    from_hf_attention_mask,
    from_key_padding_mask,
    from_torch_attn_mask,
    from_valid_lens,
    padding_mask,
)
from .modern import (
    CausalSelfAttention,
    KVCache,
    LatentAttention,
    hf_forward,
    rms_norm,
    sliding_window_mask,
    softmax_with_sink,
)
from .multihead import MultiHeadAttention, merge_heads, split_heads
from .plotting import show_heatmaps, show_matmul
from .positions import apply_rope, sinusoidal_positions

__version__ = "0.1.0"


def __getattr__(name: str):
    # Notebook 09's helpers need transformers, which notebooks 01-08 do not: imported on first use,
    # so `import attnlib` stays light and works without it.
    if name == "use_in_transformers":
        from .hf import use_in_transformers

        return use_in_transformers
    if name in ("hf", "pretrained"):
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "AdditiveAttention",
    "CausalSelfAttention",
    "KVCache",
    "LatentAttention",
    "MultiHeadAttention",
    "apply_rope",
    "causal_mask",
    "expand_key_mask",
    "flash_attention",
    "from_hf_attention_mask",
    "from_key_padding_mask",
    "from_torch_attn_mask",
    "from_valid_lens",
    "hf_forward",
    "masked_softmax",
    "merge_heads",
    "padding_mask",
    "rms_norm",
    "scaled_dot_product_attention",
    "show_heatmaps",
    "show_matmul",
    "sinusoidal_positions",
    "sliding_window_mask",
    "softmax_with_sink",
    "split_heads",
    "use_in_transformers",
]
