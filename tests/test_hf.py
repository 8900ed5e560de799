# ruff: noqa: E501  (messages are pinned whole, one line each)
"""hf.attention_forward's extras and refusals, against transformers' own eager functions.

Each extra attnlib implements (T5's position_bias, Gemma 2's softcap, GPT-OSS's attention sinks) must
give the numbers of the eager function of the model that uses it, with a padding mask; every keyword
that attnlib does not implement must be refused by name. The whole models are in test_hf_matrix.py.
"""

from __future__ import annotations

import pytest
import torch

pytest.importorskip("transformers")

from transformers.models.gemma2.modeling_gemma2 import eager_attention_forward as gemma2_eager  # noqa: E402
from transformers.models.gpt_oss.modeling_gpt_oss import eager_attention_forward as gpt_oss_eager  # noqa: E402
from transformers.models.t5.modeling_t5 import eager_attention_forward as t5_eager  # noqa: E402

import attnlib  # noqa: E402
from attnlib import hf  # noqa: E402

B, HQ, HKV, TQ, TK, DH = 2, 4, 2, 5, 6, 8


def layer(hq=HQ, hkv=HKV):
    module = torch.nn.Module().eval()
    module.is_causal, module.num_key_value_groups, module.head_dim = False, hq // hkv, DH
    return module


def inputs(seed=0, hkv=HKV):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(B, HQ, TQ, DH, generator=g)
    k, v = (torch.randn(B, hkv, TK, DH, generator=g) for _ in range(2))
    keep = torch.ones(B, 1, TQ, TK, dtype=torch.bool)
    keep[1, ..., -2:] = False  # the second sequence's last two keys are padding
    float_mask = torch.zeros(B, 1, TQ, TK).masked_fill(~keep, torch.finfo(torch.float32).min)  # eager's mask
    return q, k, v, keep, float_mask


def test_position_bias_is_added_to_the_scores_as_t5_does():
    q, k, v, keep, float_mask = inputs(hkv=HQ)
    bias = torch.randn(1, HQ, TQ, TK, generator=torch.Generator().manual_seed(1)) * 3  # T5's (1, H, Tq, Tk)
    module = layer(HQ, HQ)
    ours, weights = hf.attention_forward(module, q, k, v, keep, scaling=1.0, position_bias=bias)
    expected, expected_weights = t5_eager(module, q, k, v, float_mask, scaling=1.0, position_bias=bias)
    torch.testing.assert_close(ours, expected)
    torch.testing.assert_close(weights, expected_weights)
    without, _ = hf.attention_forward(module, q, k, v, keep, scaling=1.0)
    assert (without - expected).abs().max() > 0.1  # the bias matters: ignoring it is caught


def test_softcap_caps_the_scaled_scores_as_gemma2_does():
    q, k, v, keep, float_mask = inputs()
    q = q * 4  # large scores, so that the cap bites
    module = layer()
    ours, _ = hf.attention_forward(module, q, k, v, keep, scaling=0.5, softcap=1.5)
    expected, _ = gemma2_eager(module, q, k, v, float_mask, scaling=0.5, softcap=1.5)
    torch.testing.assert_close(ours, expected)
    uncapped, _ = hf.attention_forward(module, q, k, v, keep, scaling=0.5)
    assert (uncapped - expected).abs().max() > 0.1


def test_attention_sinks_take_a_share_of_each_softmax_as_gpt_oss_does():
    q, k, v, keep, float_mask = inputs()
    module = layer()
    module.sinks = torch.nn.Parameter(torch.tensor([2.0, -1.0, 0.5, 3.0]))  # one logit per query head
    ours, weights = hf.attention_forward(module, q, k, v, keep, scaling=0.3, s_aux=module.sinks)
    expected, expected_weights = gpt_oss_eager(module, q, k, v, float_mask, scaling=0.3)
    torch.testing.assert_close(ours, expected)
    torch.testing.assert_close(weights, expected_weights)
    assert (weights.sum(-1) < 1).all()  # the sink took its share of every row
    ours_sinks, _ = hf.attention_forward(module, q, k, v, keep, scaling=0.3,
                                         sinks=module.sinks.reshape(1, HQ, 1, 1).expand(B, HQ, TQ, 1))
    torch.testing.assert_close(ours_sinks, expected)  # Inkling's per-query layout, the same sink


def test_extras_in_half_precision_are_computed_in_float32():
    q, k, v, keep, _ = inputs()
    module = layer()
    bias = torch.randn(1, HQ, TQ, TK)
    ours, weights = hf.attention_forward(module, q.half(), k.half(), v.half(), keep, position_bias=bias.half(), softcap=2.0)
    reference, _ = hf.attention_forward(module, q.half().double(), k.half().double(), v.half().double(), keep,
                                        position_bias=bias.half().double(), softcap=2.0)
    assert ours.dtype == weights.dtype == torch.float16
    assert (ours.double() - reference).abs().max() < 2e-3


def test_sliding_window_and_bookkeeping_keywords_are_ignored_as_eager_ignores_them():
    q, k, v, keep, _ = inputs()
    module = layer()
    plain, _ = hf.attention_forward(module, q, k, v, keep)
    same, _ = hf.attention_forward(module, q, k, v, keep, sliding_window=2, position_ids=torch.arange(TQ)[None],
                                   use_cache=True, output_attentions=False, cu_seq_lens_q=None, anything_else=None)
    assert torch.equal(plain, same)


REFUSALS = {
    "indices": (dict(indices=torch.zeros(B, TQ, 2, dtype=torch.long)),
                "Module passes indices= to its attention function (the top-k key indices of DeepSeek's sparse attention, which select a few keys per query); attnlib's attention does not implement it and would compute other numbers than the model's own attention: load the model with attn_implementation=\"eager\" instead"),
    "unknown": (dict(alibi_slopes=torch.ones(HQ)),
                "Module passes alibi_slopes= to its attention function (a keyword attnlib does not know); attnlib's attention does not implement it and would compute other numbers than the model's own attention: load the model with attn_implementation=\"eager\" instead"),
    "softcap_type": (dict(softcap="2"),
                     "Module passes softcap= to its attention function (expected a positive float, got '2'); attnlib's attention does not implement it and would compute other numbers than the model's own attention: load the model with attn_implementation=\"eager\" instead"),
    "sinks_shape": (dict(s_aux=torch.ones(3)),
                    "Module passes s_aux= to its attention function (attention sinks of a shape other than (Hq,) or (B, Hq, Tq, 1)); attnlib's attention does not implement it and would compute other numbers than the model's own attention: load the model with attn_implementation=\"eager\" instead"),
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_what_attnlib_cannot_honour_is_refused_by_name(case):
    kwargs, message = REFUSALS[case]
    q, k, v, keep, _ = inputs()
    with pytest.raises(hf.UnsupportedAttentionError) as err:
        hf.attention_forward(layer(), q, k, v, keep, **kwargs)
    assert str(err.value) == message
    assert isinstance(err.value, NotImplementedError)


def test_a_layer_with_a_config_is_named_with_its_model_type():
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaAttention

    module = LlamaAttention(LlamaConfig(hidden_size=16, num_attention_heads=4, num_key_value_heads=2), 0)
    q, k, v, keep, _ = inputs()
    with pytest.raises(hf.UnsupportedAttentionError, match=r"^LlamaAttention \(model_type 'llama'\) passes indices= "):
        hf.attention_forward(module, q, k, v, keep, indices=torch.zeros(1))


def test_the_mask_function_refuses_a_model_that_would_misread_its_bool_mask():
    # BLOOM adds the mask it gets to the scores; a bool True (= may attend) would become +1 and the
    # future would be visible. The load guard refuses BLOOM first; the mask function refuses it too.
    from transformers import BloomConfig, LlamaConfig

    attnlib.use_in_transformers()
    with pytest.raises(hf.UnsupportedAttentionError) as err:
        hf.mask_function(batch_size=1, q_length=3, kv_length=3, config=BloomConfig())
    assert str(err.value) == (
        "attnlib's attention cannot run inside a 'bloom' model: its attention layers (BloomAttention) compute their own attention and never call transformers' attention interface, so attn_implementation=\"attnlib\" would not use attnlib at all (or misread its mask): load the model with attn_implementation=\"eager\" instead"
    )
    mask = hf.mask_function(batch_size=1, q_length=3, kv_length=3, config=LlamaConfig())
    assert mask.dtype == torch.bool and torch.equal(mask[0, 0], torch.ones(3, 3, dtype=torch.bool).tril())


def test_the_load_guard_passes_other_names_through_and_is_installed_once():
    from transformers import PreTrainedModel

    attnlib.use_in_transformers()
    guarded = PreTrainedModel.get_correct_attn_implementation
    attnlib.use_in_transformers()
    assert PreTrainedModel.get_correct_attn_implementation is guarded
    from transformers import BloomConfig, BloomModel

    model = BloomModel._from_config(BloomConfig(hidden_size=16, n_layer=1, n_head=4, vocab_size=32), attn_implementation="eager")
    assert model.config._attn_implementation == "eager"


def test_a_subclass_written_elsewhere_is_judged_by_its_transformers_model():
    from transformers import BertConfig, BertModel, BloomConfig, BloomModel

    attnlib.use_in_transformers()

    class MyBloom(BloomModel):  # defined in this test module, which has no attention of its own
        pass

    class MyBertAttentionProbe(BertModel):  # its name says Attention; its model routes through the interface
        pass

    with pytest.raises(hf.UnsupportedAttentionError, match="^attnlib's attention cannot run inside MyBloom: "):
        MyBloom._from_config(BloomConfig(hidden_size=16, n_layer=1, n_head=4, vocab_size=32), attn_implementation="attnlib")
    model = MyBertAttentionProbe._from_config(
        BertConfig(hidden_size=16, num_hidden_layers=1, num_attention_heads=4, intermediate_size=32, vocab_size=32),
        attn_implementation="attnlib")
    assert model.config._attn_implementation == "attnlib"
