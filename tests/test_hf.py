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


def test_the_mask_function_never_skips_a_causal_mask_and_skips_a_bidirectional_one_as_sdpa_does():
    from transformers import LlamaConfig
    from transformers.masking_utils import bidirectional_mask_function, causal_mask_function, sdpa_mask

    causal = hf.mask_function(batch_size=1, q_length=3, kv_length=3, config=LlamaConfig())
    assert causal.dtype == torch.bool and torch.equal(causal[0, 0], torch.ones(3, 3, dtype=torch.bool).tril())
    assert sdpa_mask(batch_size=1, q_length=3, kv_length=3) is None  # what SDPA gets: is_causal instead
    full = torch.ones(2, 3, dtype=torch.bool)
    unpadded = dict(batch_size=2, q_length=3, kv_length=3, mask_function=bidirectional_mask_function,
                    attention_mask=full, allow_is_bidirectional_skip=True)
    assert hf.mask_function(**unpadded) is None  # no mask, as SDPA gets: every key is attended
    padded = dict(unpadded, attention_mask=torch.tensor([[True, True, False], [True, True, True]]))
    mask = hf.mask_function(**padded)
    assert torch.equal(mask, sdpa_mask(**padded)) and not mask[0, 0, :, 2].any()
    assert causal_mask_function  # imported for the reader: the default of mask_function= above


class RouterWithSoftmax(torch.nn.Module):  # a mixture of experts' router: a softmax, but no attention
    def forward(self, x):
        return x.softmax(-1)


class HandAttention(torch.nn.Module):  # an attention layer that computes its own softmax
    def forward(self, q, k, attention_mask=None):
        return (q @ k.transpose(-2, -1)).softmax(-1)


class SdpaBlock(torch.nn.Module):  # any name: it calls torch's SDPA itself
    def forward(self, q, k, v):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v)


class RoutedAttention(torch.nn.Module):  # the interface's pattern (never run here)
    def forward(self, q, k, v):
        from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

        return ALL_ATTENTION_FUNCTIONS["sdpa"](self, q, k, v, None)


def test_a_layer_computes_its_own_attention_when_its_methods_say_so():
    assert hf.own_attention(HandAttention) == "computes its own softmax of the scores"
    assert hf.own_attention(SdpaBlock) == "calls torch's scaled_dot_product_attention itself"
    assert hf.own_attention(torch.nn.MultiheadAttention) == "is torch's nn.MultiheadAttention"
    assert hf.own_attention(RouterWithSoftmax) is None  # a softmax outside an attention layer
    assert hf.own_attention(RoutedAttention) is None and hf.routes(RoutedAttention)
    assert not hf.routes(HandAttention) and not hf.routes(torch.nn.MultiheadAttention)


def tiny_llama(implementation="attnlib"):
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(hidden_size=16, num_hidden_layers=1, num_attention_heads=4, num_key_value_heads=2,
                         intermediate_size=32, vocab_size=32)
    return LlamaForCausalLM._from_config(config, attn_implementation=implementation)


def test_one_layer_computing_its_own_attention_refuses_the_model_instance_by_its_path():
    attnlib.use_in_transformers()
    model = tiny_llama()
    hf.check_model(model)  # every layer routes: accepted
    model.model.pool = torch.nn.MultiheadAttention(16, 4, batch_first=True)  # a head added to this instance
    with pytest.raises(hf.UnsupportedAttentionError) as err:
        hf.check_model(model)
    assert str(err.value) == (
        "MultiheadAttention at model.pool is torch's nn.MultiheadAttention: attn_implementation=\"attnlib\" would "
        "not reach it (or it would misread attnlib's mask): load the model with attn_implementation=\"eager\" instead")
    eager = tiny_llama("eager")
    eager.model.pool = torch.nn.MultiheadAttention(16, 4, batch_first=True)
    hf.check_model(eager)  # layers under eager are not attnlib's business


def test_a_refused_switch_gives_every_part_its_implementation_back():
    attnlib.use_in_transformers()
    model = tiny_llama("eager")
    model.model.pool = torch.nn.MultiheadAttention(16, 4, batch_first=True)
    with pytest.raises(hf.UnsupportedAttentionError, match="at model.pool"):
        model.set_attn_implementation("attnlib")
    assert model.config._attn_implementation == "eager"
    del model.model.pool
    model.set_attn_implementation("attnlib")
    assert model.config._attn_implementation == "attnlib"


def test_a_model_with_no_attention_layer_is_refused_rather_than_run_without_attnlib():
    from transformers import ResNetConfig, ResNetModel

    attnlib.use_in_transformers()
    with pytest.raises(hf.UnsupportedAttentionError, match=r"^ResNetModel \(model_type 'resnet'\) has no layer that"):
        ResNetModel._from_config(ResNetConfig(hidden_sizes=[8, 16], depths=[1, 1], embedding_size=8),
                                 attn_implementation="attnlib")


def test_a_part_transformers_declares_unfit_for_sdpa_and_the_backend_is_refused_unless_proven():
    from transformers import SwitchTransformersConfig, SwitchTransformersModel

    from tests.hf_population import tiny_config

    attnlib.use_in_transformers()
    config = tiny_config(SwitchTransformersConfig, dict(num_experts=2, num_sparse_encoder_layers=1,
                                                        num_sparse_decoder_layers=1))
    assert not SwitchTransformersModel._supports_sdpa and not SwitchTransformersModel._supports_attention_backend
    SwitchTransformersModel._from_config(config, attn_implementation="attnlib")  # proven: tests/test_hf_matrix.py
    try:
        hf.PROVEN_EQUAL = frozenset()
        with pytest.raises(hf.UnsupportedAttentionError, match="declared by transformers fit for neither"):
            SwitchTransformersModel._from_config(config, attn_implementation="attnlib")
    finally:
        hf.PROVEN_EQUAL = frozenset({"longt5", "switch_transformers"})


def test_a_table_of_layer_classes_per_implementation_is_refused_at_load_before_its_key_error():
    assert hf.implementation_tables("transformers.models.git.modeling_git") == ("GIT_SELF_ATTENTION_CLASSES",)
    assert hf.implementation_tables("transformers.models.llama.modeling_llama") == ()
    from transformers import GitConfig, GitModel

    attnlib.use_in_transformers()
    with pytest.raises(hf.UnsupportedAttentionError, match="GIT_SELF_ATTENTION_CLASSES"):
        GitModel._from_config(GitConfig(hidden_size=16, num_hidden_layers=1, num_attention_heads=4,
                                        intermediate_size=32, vocab_size=32), attn_implementation="attnlib")


def test_the_guards_pass_other_names_through_and_are_installed_once():
    from transformers import PreTrainedModel

    attnlib.use_in_transformers()
    guards = (PreTrainedModel.get_correct_attn_implementation, PreTrainedModel.post_init,
              PreTrainedModel.set_attn_implementation)
    attnlib.use_in_transformers()
    assert (PreTrainedModel.get_correct_attn_implementation, PreTrainedModel.post_init,
            PreTrainedModel.set_attn_implementation) == guards
    from transformers import BloomConfig, BloomModel

    model = BloomModel._from_config(BloomConfig(hidden_size=16, n_layer=1, n_head=4, vocab_size=32),
                                    attn_implementation="eager")
    assert model.config._attn_implementation == "eager"
    model.set_attn_implementation("eager")


def test_a_subclass_written_elsewhere_is_judged_by_its_layers():
    from transformers import BertConfig, BertModel, BloomConfig, BloomModel

    attnlib.use_in_transformers()

    class MyBloom(BloomModel):  # defined in this test module; its layers are BLOOM's
        pass

    class MyBertAttentionProbe(BertModel):  # its name says Attention; its layers route through the interface
        pass

    with pytest.raises(hf.UnsupportedAttentionError, match=r"^BloomAttention at h\.0\.self_attention computes its own"):
        MyBloom._from_config(BloomConfig(hidden_size=16, n_layer=1, n_head=4, vocab_size=32), attn_implementation="attnlib")
    model = MyBertAttentionProbe._from_config(
        BertConfig(hidden_size=16, num_hidden_layers=1, num_attention_heads=4, intermediate_size=32, vocab_size=32),
        attn_implementation="attnlib")
    assert model.config._attn_implementation == "attnlib"
