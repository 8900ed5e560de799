# ruff: noqa: E501  (configs and pinned messages, one line each)
"""attnlib.modern against transformers' own modules: the four changes of notebook 11, each equal to the model's code.

Every equality of the notebook's check cells is asserted here too, on other sizes, with and without the caches:
LatentAttention == DeepseekV3Attention (rebuilt, absorbed and expanded), CausalSelfAttention == GptOssAttention (sliding
and full layers), Qwen3Attention, Qwen3NextAttention and LlamaAttention. The reference runs are transformers'
code only (hf_forward builds their rotary embedding and mask with transformers' functions). The helpers are held
against definitions written out here, and wrong variants are shown to break the equalities.
"""

from __future__ import annotations

import pytest
import torch

pytest.importorskip("transformers")

from transformers import (  # noqa: E402
    DeepseekV3Config,
    DynamicCache,
    GptOssConfig,
    LlamaConfig,
    Qwen3Config,
    Qwen3NextConfig,
)
from transformers.masking_utils import sliding_window_causal_mask_function  # noqa: E402
from transformers.models.deepseek_v3.modeling_deepseek_v3 import DeepseekV3Attention  # noqa: E402
from transformers.models.gpt_oss.modeling_gpt_oss import GptOssAttention  # noqa: E402
from transformers.models.llama.modeling_llama import LlamaAttention  # noqa: E402
from transformers.models.qwen3.modeling_qwen3 import Qwen3Attention  # noqa: E402
from transformers.models.qwen3_next.modeling_qwen3_next import Qwen3NextAttention  # noqa: E402

import attnlib  # noqa: E402
from attnlib import (  # noqa: E402
    CausalSelfAttention,
    KVCache,
    LatentAttention,
    causal_mask,
    hf_forward,
    rms_norm,
    sliding_window_mask,
    softmax_with_sink,
)

DEFAULT_ROPE = {"rope_type": "default", "rope_theta": 10000.0}


def tiny(attention_class, config, layer_idx=0, seed=0):
    """A transformers attention module with random weights: projections N(0, 0.2), 1-D parameters in [0.5, 1.5]."""
    torch.manual_seed(seed)
    module = attention_class(config, layer_idx=layer_idx).eval()
    with torch.no_grad():
        for p in module.parameters():
            p.normal_(0.0, 0.2) if p.dim() > 1 else p.uniform_(0.5, 1.5)
    return module


def inputs(b=2, t=9, e=24, seed=1):
    return torch.randn(b, t, e, generator=torch.Generator().manual_seed(seed))


def decode(mine, theirs, config, x, chunks, window=None, **kwargs):
    """Both modules fed the same chunks with their caches; the outputs concatenated, and the caches."""
    my_cache, their_cache = KVCache(window=window), DynamicCache(config=config)
    ours, refs, start = [], [], 0
    with torch.no_grad():
        for size in chunks:
            piece = x[:, start : start + size]
            ours.append(mine(piece, my_cache, **kwargs)[0])
            refs.append(hf_forward(theirs, piece, their_cache))
            start += size
    return torch.cat(ours, dim=1), torch.cat(refs, dim=1), my_cache, their_cache


# ----------------------------------------------------------------------------- rms_norm


def test_rms_norm_equals_torch_and_the_definition():
    x, w = torch.randn(2, 3, 4, 8), torch.rand(8) + 0.5
    torch.testing.assert_close(rms_norm(x, w, 1e-5), torch.nn.functional.rms_norm(x, (8,), w, eps=1e-5))
    by_hand = w * x / torch.sqrt((x**2).mean(-1, keepdim=True) + 1e-5)
    torch.testing.assert_close(rms_norm(x, w, 1e-5), by_hand)
    assert torch.allclose(rms_norm(x).pow(2).mean(-1), torch.ones(2, 3, 4), atol=1e-4)  # unit RMS per row


def test_rms_norm_is_scale_invariant_and_computes_half_in_float32():
    x = torch.randn(3, 16)
    torch.testing.assert_close(rms_norm(100 * x, eps=0.0), rms_norm(x, eps=0.0))
    half = (x * 300).half()  # x**2 overflows float16; the norm must not
    got = rms_norm(half)
    assert got.dtype == torch.float16 and torch.isfinite(got).all()
    torch.testing.assert_close(got.float(), rms_norm(half.float()), atol=1e-3, rtol=1e-3)


@pytest.mark.parametrize(("call", "error", "words"), [
    (lambda: rms_norm(torch.ones(2, 4), torch.ones(3)), ValueError, "weight must have shape (D,) = (4,)"),
    (lambda: rms_norm(torch.ones(2, 4), eps=-1.0), ValueError, "eps must be a float >= 0"),
    (lambda: rms_norm(torch.ones(2, 4, dtype=torch.long)), TypeError, "x must be a floating-point tensor"),
])
def test_rms_norm_errors(call, error, words):
    with pytest.raises(error, match=words.replace("(", r"\(").replace(")", r"\)")):
        call()


# ----------------------------------------------------------------------------- sliding_window_mask


@pytest.mark.parametrize(("q_len", "kv_len", "window"), [(6, 6, 3), (3, 9, 4), (5, 5, 1), (1, 7, 5), (4, 4, 9)])
def test_window_mask_is_transformers_sliding_window(q_len, kv_len, window):
    rule = sliding_window_causal_mask_function(window)
    offset = kv_len - q_len  # the queries are the last q_len tokens
    want = torch.tensor([[bool(rule(0, 0, torch.tensor(i + offset), torch.tensor(j))) for j in range(kv_len)]
                         for i in range(q_len)])
    got = sliding_window_mask(q_len, kv_len, window=window)
    assert got.dtype == torch.bool and torch.equal(got, want)
    assert got.sum(-1).tolist() == [min(window, i + offset + 1) for i in range(q_len)]  # W keys once p >= W - 1


def test_a_window_as_wide_as_the_sequence_is_the_causal_mask():
    assert torch.equal(sliding_window_mask(4, 9, window=9), causal_mask(4, 9, align="bottom_right"))


@pytest.mark.parametrize(("kwargs", "words"), [
    ({"q_len": 3, "kv_len": 3, "window": 0}, "window must be a positive int"),
    ({"q_len": 3, "kv_len": 3, "window": 2.0}, "window must be a positive int"),
    ({"q_len": 4, "kv_len": 2, "window": 2}, "kv_len must be >= q_len"),
    ({"q_len": -1, "kv_len": 2, "window": 2}, "q_len must be a non-negative int"),
])
def test_window_mask_errors(kwargs, words):
    with pytest.raises(ValueError, match=words):
        sliding_window_mask(kwargs.pop("q_len"), kwargs.pop("kv_len"), **kwargs)


# ----------------------------------------------------------------------------- softmax_with_sink


def test_sink_softmax_equals_gpt_oss_combined_logits():
    scores, sink = torch.randn(2, 3, 4, 5), torch.randn(3)
    combined = torch.cat([scores, sink.reshape(1, -1, 1, 1).expand(2, -1, 4, -1)], dim=-1)  # gpt-oss's eager code
    want = torch.softmax(combined - combined.max(-1, keepdim=True).values, dim=-1)[..., :-1]
    got = softmax_with_sink(scores, sink)
    torch.testing.assert_close(got, want)
    torch.testing.assert_close(got.sum(-1), 1 - torch.sigmoid(sink[:, None] - scores.logsumexp(-1)))  # sink's share


def test_sink_softmax_small_case_stability_and_masks():
    row = torch.zeros(1, 1, 1, 2)
    torch.testing.assert_close(softmax_with_sink(row, torch.zeros(1)), torch.full((1, 1, 1, 2), 1 / 3))
    big = softmax_with_sink(torch.full((1, 2, 1, 3), 1000.0), torch.tensor([1000.0, -1000.0]))
    torch.testing.assert_close(big, torch.tensor([[[[0.25] * 3], [[1 / 3] * 3]]]))  # sink as large, sink negligible
    torch.testing.assert_close(softmax_with_sink(torch.randn(2, 3, 4, 5), torch.full((3,), float("-inf"))).sum(-1),
                               torch.ones(2, 3, 4))
    mask = torch.tensor([[True, False, True], [False, False, False]])  # (Tq, Tk): query 1 sees no key
    got = softmax_with_sink(torch.randn(1, 2, 2, 3), torch.zeros(2), mask)
    assert torch.equal(got[..., 1, :], torch.zeros(1, 2, 3)) and torch.equal(got[..., 0, 1], torch.zeros(1, 2))


def test_sink_softmax_gradient_is_finite_for_a_fully_masked_row():
    scores = torch.randn(1, 1, 2, 3, requires_grad=True)
    mask = torch.tensor([[True, True, False], [False, False, False]])
    softmax_with_sink(scores, torch.zeros(1), mask).sum().backward()
    assert torch.isfinite(scores.grad).all()


@pytest.mark.parametrize(("call", "error", "words"), [
    (lambda: softmax_with_sink(torch.zeros(2, 3, 4, 5), torch.zeros(4)), ValueError, r"sink must have shape \(H,\) = \(3,\)"),
    (lambda: softmax_with_sink(torch.zeros(4, 5), torch.zeros(4)), ValueError, "at least 3 dimensions"),
    (lambda: softmax_with_sink(torch.zeros(1, 2, 3, 4), torch.zeros(2).double()), TypeError, "sink must have scores' dtype"),
    (lambda: softmax_with_sink(torch.zeros(1, 2, 3, 4), torch.zeros(2), torch.ones(3, 4)), TypeError, "mask must be a bool"),
    (lambda: softmax_with_sink(torch.zeros(1, 2, 3, 4), torch.zeros(2), torch.ones(5, 4, dtype=torch.bool)), ValueError,
     "mask must broadcast"),
])
def test_sink_softmax_errors(call, error, words):
    with pytest.raises(error, match=words):
        call()


# ----------------------------------------------------------------------------- KVCache


def test_cache_without_window_keeps_everything_and_counts_bytes():
    cache = KVCache()
    k, v = torch.randn(2, 3, 4, 5), torch.randn(2, 3, 4, 6)
    keys, values = cache.update(k, v)
    assert torch.equal(keys, k) and torch.equal(values, v) and cache.seen == 4
    keys, values = cache.update(k[:, :, :1], v[:, :, :1])
    assert keys.shape == (2, 3, 5, 5) and cache.seen == 5
    assert cache.nbytes == 2 * 3 * 5 * (5 + 6) * 4


@pytest.mark.parametrize("window", [1, 2, 4])
def test_window_cache_keeps_window_minus_one_and_returns_what_the_queries_see(window):
    cache, full = KVCache(window=window), torch.randn(1, 2, 10, 3)
    seen = []
    for t in range(10):
        (keys,) = cache.update(full[:, :, t : t + 1])
        seen.append(keys.shape[-2])
        assert torch.equal(keys, full[:, :, max(0, t - window + 1) : t + 1])  # the window's keys, itself last
    assert seen[-1] == window and cache.seen == 10
    assert cache.tensors[0].shape[-2] == window - 1 and cache.nbytes == (window - 1) * 2 * 3 * 4


def test_window_cache_with_a_chunk_returns_every_new_token():
    cache = KVCache(window=3)
    cache.update(torch.randn(1, 1, 5, 2))
    (keys,) = cache.update(torch.randn(1, 1, 4, 2))
    assert keys.shape[-2] == 2 + 4 and cache.tensors[0].shape[-2] == 2 and cache.seen == 9


@pytest.mark.parametrize(("first", "second", "words"), [
    ((torch.zeros(1, 2, 3, 4),), (torch.zeros(1, 3, 1, 4),), "update must get tensors like the earlier ones"),
    ((torch.zeros(1, 2, 3, 4),), (torch.zeros(1, 2, 1, 4), torch.zeros(1, 2, 1, 4)), "like the earlier ones"),
    ((torch.zeros(1, 2, 3, 4), torch.zeros(1, 2, 2, 4)), None, "of the same length T_new"),
    ((torch.zeros(2, 3, 4),), None, r"tensor 0 must have shape \(B, heads, T_new, width\)"),
])
def test_cache_errors(first, second, words):
    cache = KVCache()
    with pytest.raises(ValueError, match=words):
        cache.update(*first)
        cache.update(*second)


def test_cache_window_must_be_positive():
    with pytest.raises(ValueError, match="window must be a positive int or None"):
        KVCache(window=0)


# ----------------------------------------------------------------------------- CausalSelfAttention vs transformers


def gpt_oss_config(window=3, layer_type="sliding_attention", bias=True):
    return GptOssConfig(hidden_size=24, num_attention_heads=6, num_key_value_heads=2, head_dim=4, sliding_window=window,
                        layer_types=[layer_type], num_hidden_layers=1, attention_bias=bias,
                        rope_parameters=DEFAULT_ROPE, attn_implementation="eager")


@pytest.mark.parametrize("layer_type", ["sliding_attention", "full_attention"])
@pytest.mark.parametrize("bias", [True, False])
def test_gpt_oss_attention_one_pass(layer_type, bias):
    config = gpt_oss_config(layer_type=layer_type, bias=bias)
    theirs = tiny(GptOssAttention, config)
    mine = CausalSelfAttention.from_hf(theirs)
    assert mine.window == (3 if layer_type == "sliding_attention" else None) and mine.sink is not None
    x = inputs()
    with torch.no_grad():
        torch.testing.assert_close(mine(x)[0], hf_forward(theirs, x))


@pytest.mark.parametrize("chunks", [[1] * 9, [4, 1, 1, 3], [9]])
def test_gpt_oss_sliding_layer_decoding_with_the_window_cache(chunks):
    config = gpt_oss_config(window=3)
    theirs = tiny(GptOssAttention, config)
    mine = CausalSelfAttention.from_hf(theirs)
    x = inputs()
    ours, refs, my_cache, their_cache = decode(mine, theirs, config, x, chunks, window=3)
    torch.testing.assert_close(ours, refs)
    with torch.no_grad():
        torch.testing.assert_close(ours, mine(x)[0])
    assert my_cache.tensors[0].shape == their_cache.layers[0].keys.shape == (2, 2, 2, 4)  # W - 1 tokens kept


def test_gpt_oss_equality_needs_the_sink_and_the_right_window():
    config = gpt_oss_config(window=3)
    theirs = tiny(GptOssAttention, config)
    x = inputs()
    with torch.no_grad():
        ref = hf_forward(theirs, x)
        no_sink = CausalSelfAttention.from_hf(theirs)
        no_sink.sink = None
        assert not torch.allclose(no_sink(x)[0], ref, atol=1e-4)
        wider = CausalSelfAttention.from_hf(theirs)
        wider.window = 4  # the window off by one
        assert not torch.allclose(wider(x)[0], ref, atol=1e-4)


def test_qwen3_attention_with_qk_norm_and_a_sliding_layer():
    config = Qwen3Config(hidden_size=24, num_attention_heads=6, num_key_value_heads=3, head_dim=4, attn_implementation="eager")
    theirs = tiny(Qwen3Attention, config)
    mine = CausalSelfAttention.from_hf(theirs)
    x = inputs()
    with torch.no_grad():
        torch.testing.assert_close(mine(x)[0], hf_forward(theirs, x))
        mine.q_norm.fill_(1.0)  # the learned gains matter
        assert not torch.allclose(mine(x)[0], hf_forward(theirs, x), atol=1e-4)
    sliding = Qwen3Config(hidden_size=24, num_attention_heads=6, num_key_value_heads=3, head_dim=4, use_sliding_window=True,
                          sliding_window=4, layer_types=["sliding_attention"], num_hidden_layers=1,
                          attn_implementation="eager")
    theirs = tiny(Qwen3Attention, sliding)
    mine = CausalSelfAttention.from_hf(theirs)
    assert mine.window == 4
    ours, refs, _, _ = decode(mine, theirs, sliding, x, [5, 1, 1, 1, 1], window=4)
    torch.testing.assert_close(ours, refs)


def test_qk_norm_over_the_whole_width_would_differ():
    config = Qwen3Config(hidden_size=24, num_attention_heads=6, num_key_value_heads=6, head_dim=4, attn_implementation="eager")
    theirs = tiny(Qwen3Attention, config)
    mine = CausalSelfAttention.from_hf(theirs)
    x = inputs()
    q = mine.q_proj(x).view(2, 9, 6, 4)
    per_head = rms_norm(q, mine.q_norm)
    whole = rms_norm(q.reshape(2, 9, 24)).view(2, 9, 6, 4) * mine.q_norm  # OLMo 2's axis
    assert not torch.allclose(per_head, whole, atol=1e-3)


def test_qwen3_next_attention_with_gate_partial_rope_and_offset_norms():
    config = Qwen3NextConfig(hidden_size=24, num_attention_heads=6, num_key_value_heads=2, head_dim=8, num_hidden_layers=1,
                             layer_types=["full_attention"], attn_implementation="eager")
    theirs = tiny(Qwen3NextAttention, config)
    mine = CausalSelfAttention.from_hf(theirs)
    assert mine.gate_proj is not None and mine.rope_dim == 2
    torch.testing.assert_close(mine.q_norm, 1 + theirs.q_norm.weight)
    x = inputs()
    with torch.no_grad():
        torch.testing.assert_close(mine(x)[0], hf_forward(theirs, x))
    ours, refs, _, _ = decode(mine, theirs, config, x, [3, 1, 2, 3])
    torch.testing.assert_close(ours, refs)


def test_qwen3_next_gate_after_the_output_projection_would_differ():
    config = Qwen3NextConfig(hidden_size=32, num_attention_heads=4, num_key_value_heads=2, head_dim=8, attn_implementation="eager")
    theirs = tiny(Qwen3NextAttention, config)
    mine = CausalSelfAttention.from_hf(theirs)
    x = inputs(e=32)
    with torch.no_grad():
        gate = torch.sigmoid(mine.gate_proj(x))
        mine.gate_proj = None
        after = mine(x)[0] * gate  # H * Dh = E here, so the mistake runs
        assert not torch.allclose(after, hf_forward(theirs, x), atol=1e-4)


def test_llama_attention_is_the_layer_without_switches():
    config = LlamaConfig(hidden_size=24, num_attention_heads=6, num_key_value_heads=2, attn_implementation="eager")
    theirs = tiny(LlamaAttention, config)
    mine = CausalSelfAttention.from_hf(theirs)
    assert mine.sink is None and mine.q_norm is None and mine.gate_proj is None and mine.window is None
    x = inputs()
    ours, refs, _, _ = decode(mine, theirs, config, x, [4, 5])
    torch.testing.assert_close(ours, refs)


def test_from_hf_copies_and_refuses():
    config = gpt_oss_config()
    theirs = tiny(GptOssAttention, config)
    mine = CausalSelfAttention.from_hf(theirs)
    with torch.no_grad():
        theirs.q_proj.weight.zero_()
    assert mine.q_proj.weight.abs().sum() > 0  # a copy, not shared storage
    with pytest.raises(TypeError, match="module must be transformers' GptOssAttention"):
        CausalSelfAttention.from_hf(torch.nn.Linear(2, 2))
    yarn = GptOssConfig(hidden_size=24, num_attention_heads=6, num_key_value_heads=2, head_dim=4, num_hidden_layers=2,
                        attn_implementation="eager")  # gpt-oss's own config: YaRN
    with pytest.raises(ValueError, match="rope_type 'yarn'"):
        CausalSelfAttention.from_hf(GptOssAttention(yarn, layer_idx=0))


def test_causal_self_attention_shapes_weights_and_errors():
    layer = CausalSelfAttention(16, 4, num_kv_heads=2, window=3, sink=True)
    x = inputs(1, 6, 16)
    out, weights = layer(x)
    assert out.shape == (1, 6, 16) and weights.shape == (1, 4, 6, 6)
    assert torch.equal(weights > 0, sliding_window_mask(6, window=3).expand(1, 4, 6, 6))
    assert (weights.sum(-1) < 1).all()  # the sink takes its share
    with pytest.raises(ValueError, match=r"x must have shape \(B, T, E=16\), got shape \(1, 6, 8\)"):
        layer(torch.zeros(1, 6, 8))
    with pytest.raises(TypeError, match="x must have the module's dtype torch.float32"):
        layer(x.double())
    with pytest.raises(TypeError, match="cache must be an attnlib KVCache"):
        layer(x, cache={})
    with pytest.raises(ValueError, match="num_heads=4 must be a multiple of num_kv_heads=3"):
        CausalSelfAttention(16, 4, num_kv_heads=3)
    with pytest.raises(ValueError, match=r"rope_dim must be an even int in \(0, head_dim=4\]"):
        CausalSelfAttention(16, 4, rope_dim=3)


# ----------------------------------------------------------------------------- LatentAttention vs transformers


def deepseek_config(q_lora_rank=12, interleave=True, bias=False):
    return DeepseekV3Config(hidden_size=24, num_attention_heads=3, num_key_value_heads=3, q_lora_rank=q_lora_rank,
                            kv_lora_rank=6, qk_nope_head_dim=4, qk_rope_head_dim=4, v_head_dim=5,
                            rope_interleave=interleave, attention_bias=bias, attn_implementation="eager")


@pytest.mark.parametrize(("q_lora_rank", "interleave", "bias"), [(12, True, False), (None, True, False),
                                                                  (12, False, True)])
def test_latent_attention_equals_deepseek_v3(q_lora_rank, interleave, bias):
    config = deepseek_config(q_lora_rank, interleave, bias)
    theirs = tiny(DeepseekV3Attention, config)
    mine = LatentAttention.from_hf(theirs)
    x = inputs()
    with torch.no_grad():
        ref = hf_forward(theirs, x)
        torch.testing.assert_close(mine(x)[0], ref)
        torch.testing.assert_close(mine(x, absorbed=True)[0], ref)


@pytest.mark.parametrize("absorbed", [False, True])
def test_latent_attention_decoding_caches_the_latent_and_the_rope_key(absorbed):
    config = deepseek_config()
    theirs = tiny(DeepseekV3Attention, config)
    mine = LatentAttention.from_hf(theirs)
    ours, refs, my_cache, their_cache = decode(mine, theirs, config, inputs(), [4, 1, 1, 3], absorbed=absorbed)
    torch.testing.assert_close(ours, refs)
    assert [t.shape for t in my_cache.tensors] == [their_cache.layers[0].keys.shape,
                                                   their_cache.layers[0].values.shape] == [(2, 1, 9, 6), (2, 1, 9, 4)]


def test_latent_attention_expanded_caches_every_heads_keys_and_values_with_the_same_outputs():
    config = deepseek_config()
    theirs = tiny(DeepseekV3Attention, config)
    mine = LatentAttention.from_hf(theirs)
    ours, refs, my_cache, _ = decode(mine, theirs, config, inputs(), [4, 1, 1, 3], expanded=True)
    torch.testing.assert_close(ours, refs)
    assert [t.shape for t in my_cache.tensors] == [(2, 3, 9, 4 + 4), (2, 3, 9, 5)]  # (B, H, T, dn + dR), dv
    with pytest.raises(ValueError, match="absorbed and expanded exclude each other"):
        mine(inputs(), absorbed=True, expanded=True)


def test_latent_attention_decoding_costs_at_deepseek_v3s_sizes():
    """The notebook's table: absorbed does about twice the operations of an expanded cache and 90 times fewer
    than transformers' module, which rebuilds every cached key and value; it reads 71 times fewer bytes."""
    from torch.utils.flop_counter import FlopCounterMode

    config = DeepseekV3Config(attn_implementation="eager")

    def meta(*shape):
        return torch.empty(*shape, dtype=torch.bfloat16, device="meta")

    with torch.device("meta"):
        layer = DeepseekV3Attention(config, layer_idx=0).to(torch.bfloat16)
    mine = LatentAttention.from_hf(layer)
    theirs, per_head, latents = DynamicCache(config=config), KVCache(), KVCache()
    theirs.update(meta(1, 1, 4095, 512), meta(1, 1, 4095, 64), 0)
    per_head.update(meta(1, 128, 4095, 192), meta(1, 128, 4095, 128))
    latents.update(meta(1, 1, 4095, 512), meta(1, 1, 4095, 64))
    token, ops = meta(1, 1, config.hidden_size), []
    for step in (lambda: hf_forward(layer, token, theirs), lambda: mine(token, per_head, expanded=True),
                 lambda: mine(token, latents, absorbed=True)):
        with FlopCounterMode(display=False) as counter:
            step()
        ops.append(counter.get_total_flops())
    rebuilt, expanded, absorbed = ops
    rebuild = 2 * 4095 * 512 * 128 * (128 + 128)  # W_UK and W_UV applied to every cached latent
    assert rebuilt - expanded == rebuild and 1.5 < absorbed / expanded < 2.5 and 85 < rebuilt / absorbed < 95
    assert per_head.nbytes == 4096 * 128 * (192 + 128) * 2 and latents.nbytes == 4096 * (512 + 64) * 2


def test_latent_attention_needs_rope_on_its_rope_part_and_the_pairing():
    config = deepseek_config()
    theirs = tiny(DeepseekV3Attention, config)
    x = inputs()
    with torch.no_grad():
        ref = hf_forward(theirs, x)
        unrotated = LatentAttention.from_hf(theirs)
        unrotated.rope_base = 1e30  # every angle ~0: the RoPE part left unrotated
        assert not torch.allclose(unrotated(x)[0], ref, atol=1e-4)
        halves = LatentAttention.from_hf(theirs)
        halves.interleaved = False  # DeepSeek's checkpoints rotate adjacent pairs
        assert not torch.allclose(halves(x)[0], ref, atol=1e-4)


def test_absorbed_and_explicit_agree_in_float64():
    mine = LatentAttention(16, 4, kv_lora_rank=6, qk_nope_head_dim=3, qk_rope_head_dim=2, v_head_dim=5).double()
    x = inputs(2, 7, 16).double()
    with torch.no_grad():
        (a, wa), (b, wb) = mine(x), mine(x, absorbed=True)
    assert (a - b).abs().max() < 1e-12 and (wa - wb).abs().max() < 1e-12
    assert torch.equal(wa > 0, causal_mask(7).expand(2, 4, 7, 7))


def test_latent_attention_on_the_meta_device_counts_deepseek_v3s_cache():
    config = DeepseekV3Config(attn_implementation="eager")
    with torch.device("meta"):
        layer = DeepseekV3Attention(config, layer_idx=0).to(torch.bfloat16)
        cache = DynamicCache(config=config)
        hf_forward(layer, torch.empty(1, 1, config.hidden_size, dtype=torch.bfloat16), cache)
        mine, my_cache = LatentAttention.from_hf(layer), KVCache()
        mine(torch.empty(1, 1, config.hidden_size, dtype=torch.bfloat16), my_cache)
    theirs = cache.layers[0].keys.numel() * 2 + cache.layers[0].values.numel() * 2
    assert my_cache.nbytes == theirs == (512 + 64) * 2


def test_latent_attention_errors():
    with pytest.raises(ValueError, match="qk_rope_head_dim must be even"):
        LatentAttention(16, 4, kv_lora_rank=6, qk_nope_head_dim=3, qk_rope_head_dim=3, v_head_dim=5)
    with pytest.raises(ValueError, match="kv_lora_rank must be a positive int"):
        LatentAttention(16, 4, kv_lora_rank=0, qk_nope_head_dim=3, qk_rope_head_dim=2, v_head_dim=5)
    with pytest.raises(TypeError, match="module must be transformers' DeepseekV3Attention"):
        LatentAttention.from_hf(LlamaAttention(LlamaConfig(hidden_size=8, num_attention_heads=2), layer_idx=0))
    mine = LatentAttention(16, 4, kv_lora_rank=6, qk_nope_head_dim=3, qk_rope_head_dim=2, v_head_dim=5)
    with pytest.raises(ValueError, match=r"x must have shape \(B, T, E=16\)"):
        mine(torch.zeros(2, 16))


def test_hf_forward_refuses_a_module_without_rotary_embedding():
    from transformers import BertConfig
    from transformers.models.bert.modeling_bert import BertSelfAttention

    with pytest.raises(TypeError, match="runs RoPE models only"):
        hf_forward(BertSelfAttention(BertConfig(hidden_size=8, num_attention_heads=2), layer_idx=0), torch.zeros(1, 2, 8))


def test_exports():
    for name in ("CausalSelfAttention", "KVCache", "LatentAttention", "hf_forward", "rms_norm", "sliding_window_mask",
                 "softmax_with_sink"):
        assert getattr(attnlib, name) is getattr(attnlib.modern, name) and name in attnlib.__all__
