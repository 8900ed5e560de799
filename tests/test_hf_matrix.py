"""attnlib inside tiny randomly initialised transformers models: eager's numbers, or a clear refusal.

Each architecture is built from its config class (a few thousand parameters, seeded, nothing
downloaded), once with transformers' eager attention, and run on a right-padded batch with eager,
torch's SDPA and attnlib on the same weights. attnlib must match eager within twice SDPA's own
difference from eager (at least 1e-6): a silently different answer (a dropped position bias, a
flipped mask, an ignored sparse selection) is far larger. Causal models are also probed: changing
only the last token must change no earlier output. Models that attnlib cannot run must refuse by
name when they are loaded with attn_implementation="attnlib".
"""

from __future__ import annotations

import pytest
import torch

pytest.importorskip("transformers")

import transformers as T  # noqa: E402

import attnlib  # noqa: E402
from attnlib import hf  # noqa: E402

attnlib.use_in_transformers()

B, TT, V = 2, 12, 64  # batch, tokens, vocabulary
SMALL = dict(hidden_size=16, num_hidden_layers=2, num_attention_heads=4, intermediate_size=32, vocab_size=V)
DECODER = dict(SMALL, num_key_value_heads=2, max_position_embeddings=64, pad_token_id=0)
BERTLIKE = dict(SMALL, max_position_embeddings=64, pad_token_id=0)
SEQ2SEQ = dict(vocab_size=V, d_model=16, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
               decoder_attention_heads=4, encoder_ffn_dim=32, decoder_ffn_dim=32, max_position_embeddings=64,
               pad_token_id=0, decoder_start_token_id=2, eos_token_id=1, bos_token_id=2)
T5LIKE = dict(vocab_size=V, d_model=16, d_kv=4, d_ff=32, num_layers=2, num_decoder_layers=2, num_heads=4,
              relative_attention_num_buckets=8, relative_attention_max_distance=16, decoder_start_token_id=0)
VISION = dict(hidden_size=16, num_hidden_layers=2, num_attention_heads=4, intermediate_size=32, image_size=16,
              patch_size=4, num_channels=3)
AUDIO = dict(hidden_size=16, num_hidden_layers=2, num_attention_heads=4, intermediate_size=32, conv_dim=(8, 8),
             conv_stride=(4, 4), conv_kernel=(8, 8), num_conv_pos_embeddings=4, num_conv_pos_embedding_groups=2,
             vocab_size=V, do_stable_layer_norm=True)

# name: (config class, model class, config keywords, kind). Kinds: "text" (input_ids, attention_mask),
# "causal" (text, and the causality probe), "seq2seq" (text and decoder_input_ids), "image", "audio".
MODELS = {
    # encoders
    "bert": ("BertConfig", "BertModel", BERTLIKE, "text"),
    "roberta": ("RobertaConfig", "RobertaModel", dict(BERTLIKE, pad_token_id=1), "text"),
    "electra": ("ElectraConfig", "ElectraModel", dict(BERTLIKE, embedding_size=16), "text"),
    "albert": ("AlbertConfig", "AlbertModel", dict(BERTLIKE, embedding_size=16), "text"),
    "distilbert": ("DistilBertConfig", "DistilBertModel", dict(vocab_size=V, dim=16, n_layers=2, n_heads=4,
                                                                hidden_dim=32, max_position_embeddings=64), "text"),
    "xlm_roberta": ("XLMRobertaConfig", "XLMRobertaModel", dict(BERTLIKE, pad_token_id=1), "text"),
    "modernbert": ("ModernBertConfig", "ModernBertModel", dict(BERTLIKE, local_attention=4,
                                                               global_attn_every_n_layers=2), "text"),
    # decoders: grouped-query (Hkv = 2 of 4), multi-query (Hkv = 1), sliding windows shorter than T (Gemma 2's
    # weights are drawn larger, so that its scores reach the softcap: with the default 0.02 they stay far below)
    "llama": ("LlamaConfig", "LlamaForCausalLM", DECODER, "causal"),
    "qwen3": ("Qwen3Config", "Qwen3ForCausalLM", dict(DECODER, head_dim=4), "causal"),
    "smollm3": ("SmolLM3Config", "SmolLM3ForCausalLM", DECODER, "causal"),
    "olmo": ("OlmoConfig", "OlmoForCausalLM", DECODER, "causal"),
    "phi": ("PhiConfig", "PhiForCausalLM", DECODER, "causal"),
    "gemma_mqa": ("GemmaConfig", "GemmaForCausalLM", dict(DECODER, num_key_value_heads=1, head_dim=4), "causal"),
    "gpt2": ("GPT2Config", "GPT2LMHeadModel", dict(vocab_size=V, n_embd=16, n_layer=2, n_head=4, n_positions=64),
             "causal"),
    "gpt_neox": ("GPTNeoXConfig", "GPTNeoXForCausalLM", DECODER, "causal"),
    "opt": ("OPTConfig", "OPTForCausalLM", dict(SMALL, ffn_dim=32, word_embed_proj_dim=16, max_position_embeddings=64,
                                                 pad_token_id=0), "causal"),
    "mistral_window": ("MistralConfig", "MistralForCausalLM", dict(DECODER, sliding_window=4), "causal"),
    "qwen2_window": ("Qwen2Config", "Qwen2ForCausalLM", dict(DECODER, use_sliding_window=True, sliding_window=4,
                                                             max_window_layers=0), "causal"),
    "starcoder2_window": ("Starcoder2Config", "Starcoder2ForCausalLM", dict(DECODER, sliding_window=4), "causal"),
    "gemma2_softcap_window": ("Gemma2Config", "Gemma2ForCausalLM", dict(DECODER, head_dim=4, sliding_window=4,
                                                                        attn_logit_softcapping=2.0,
                                                                        initializer_range=0.3), "causal"),
    "gemma3_window": ("Gemma3TextConfig", "Gemma3ForCausalLM", dict(DECODER, head_dim=4, sliding_window=4,
                                                                    sliding_window_pattern=2), "causal"),
    "gpt_oss_sinks_window": ("GptOssConfig", "GptOssForCausalLM", dict(DECODER, head_dim=4, sliding_window=4,
                                                                       num_local_experts=2, num_experts_per_tok=1),
                             "causal"),
    # encoder-decoders with cross-attention; T5's family adds a relative position bias to the scores
    "bart": ("BartConfig", "BartModel", SEQ2SEQ, "seq2seq"),
    "marian": ("MarianConfig", "MarianMTModel", SEQ2SEQ, "seq2seq"),
    "pegasus": ("PegasusConfig", "PegasusModel", SEQ2SEQ, "seq2seq"),
    "t5_bias": ("T5Config", "T5ForConditionalGeneration", T5LIKE, "seq2seq"),
    "mt5_bias": ("MT5Config", "MT5Model", T5LIKE, "seq2seq"),
    "umt5_bias": ("UMT5Config", "UMT5Model", T5LIKE, "seq2seq"),
    "switch_transformers_bias": ("SwitchTransformersConfig", "SwitchTransformersModel",
                                 dict(T5LIKE, num_experts=2, num_sparse_encoder_layers=1,
                                      num_sparse_decoder_layers=1), "seq2seq"),
    "longt5_local_bias": ("LongT5Config", "LongT5Model", dict(T5LIKE, local_radius=2, encoder_attention_type="local"),
                          "seq2seq"),
    # vision and audio encoders
    "vit": ("ViTConfig", "ViTModel", VISION, "image"),
    "deit": ("DeiTConfig", "DeiTModel", VISION, "image"),
    "clip_vision": ("CLIPVisionConfig", "CLIPVisionModel", VISION, "image"),
    "siglip_vision": ("SiglipVisionConfig", "SiglipVisionModel", VISION, "image"),
    "dinov2": ("Dinov2Config", "Dinov2Model", VISION, "image"),
    "wav2vec2": ("Wav2Vec2Config", "Wav2Vec2Model", AUDIO, "audio"),
    "hubert": ("HubertConfig", "HubertModel", AUDIO, "audio"),
    "wav2vec2_conformer_relative_bias": ("Wav2Vec2ConformerConfig", "Wav2Vec2ConformerModel",
                                         dict(AUDIO, position_embeddings_type="relative", do_stable_layer_norm=False),
                                         "audio"),
    "whisper": ("WhisperConfig", "WhisperModel", dict(SEQ2SEQ, num_mel_bins=8, max_source_positions=8,
                                                      max_target_positions=32), "whisper"),
}

# Models whose layers compute their own attention: refused when loaded, by name.
REFUSED_MODELS = {
    "bloom_alibi": ("BloomConfig", "BloomForCausalLM", dict(vocab_size=V, hidden_size=16, n_layer=2, n_head=4),
                    "BloomAttention"),
    "mpt_alibi": ("MptConfig", "MptForCausalLM", dict(vocab_size=V, d_model=16, n_layers=2, n_heads=4),
                  "MptAttention"),
    "falcon": ("FalconConfig", "FalconForCausalLM", dict(vocab_size=V, hidden_size=16, num_hidden_layers=2,
                                                           num_attention_heads=4), "FalconAttention"),
    "gptj": ("GPTJConfig", "GPTJForCausalLM", dict(vocab_size=V, n_embd=16, n_layer=2, n_head=4, rotary_dim=4),
             "GPTJAttention"),
    "deberta_v2": ("DebertaV2Config", "DebertaV2Model", BERTLIKE, "DisentangledSelfAttention"),
}


def build(config_name, model_name, kwargs, implementation="eager"):
    torch.manual_seed(0)
    config = getattr(T, config_name)(**kwargs)
    model = getattr(T, model_name)._from_config(config, attn_implementation=implementation)
    return model.eval()


def make_inputs(kind, model):
    """Seeded inputs; the second sequence of a text batch is right-padded (its last 4 tokens)."""
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(3, V, (B, TT), generator=g)
    mask = torch.ones(B, TT, dtype=torch.long)
    mask[1, -4:] = 0
    if kind in ("text", "causal"):
        return dict(input_ids=ids, attention_mask=mask)
    if kind == "seq2seq":
        return dict(input_ids=ids, attention_mask=mask, decoder_input_ids=torch.randint(3, V, (B, 7), generator=g))
    if kind == "image":
        return dict(pixel_values=torch.randn(B, 3, 16, 16, generator=g))
    if kind == "audio":
        return dict(input_values=torch.randn(B, 400, generator=g))
    if kind == "whisper":
        return dict(input_features=torch.randn(B, 8, 16, generator=g),
                    decoder_input_ids=torch.randint(3, V, (B, 7), generator=g))
    raise ValueError(kind)


def run(model, inputs, implementation):
    model.set_attn_implementation(implementation)
    with torch.no_grad():
        out = model(**inputs)
    return out.logits if "logits" in out else out.last_hidden_state


def real_positions(difference, inputs):
    """The rows of real tokens. A padding query whose keys are all padding (a sliding window past the
    end) has no defined output: attnlib gives it zero weights, eager a uniform average of padding."""
    if "decoder_input_ids" in inputs or "attention_mask" not in inputs:
        return difference
    return difference[inputs["attention_mask"].bool()]  # (real tokens, features)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_attnlib_gives_eager_numbers(name, record_property):
    config_name, model_name, kwargs, kind = MODELS[name]
    model = build(config_name, model_name, kwargs)
    inputs = make_inputs(kind, model)
    eager = run(model, inputs, "eager")
    try:
        sdpa_diff = real_positions(run(model, inputs, "sdpa") - eager, inputs).abs().max().item()
    except ValueError:  # SDPA refuses Gemma 2's softcap (as it must) and some models (LongT5, Switch)
        sdpa_diff = 1e-6
    ours = run(model, inputs, "attnlib")
    diff = real_positions(ours - eager, inputs).abs().max().item()
    record_property("max_diff", diff)
    assert diff <= max(2 * sdpa_diff, 1e-6), f"{name}: attnlib differs from eager by {diff:.3g} (sdpa {sdpa_diff:.3g})"


CAUSAL = sorted(name for name, spec in MODELS.items() if spec[3] in ("causal", "seq2seq", "whisper"))


def last_token_probe(model, inputs):
    """How much changing only the last (decoder) token changes (last output, every earlier output)."""
    inputs = {k: v for k, v in inputs.items() if k != "attention_mask"}
    field = "decoder_input_ids" if "decoder_input_ids" in inputs else "input_ids"
    changed = dict(inputs, **{field: inputs[field].clone()})
    changed[field][:, -1] = (changed[field][:, -1] + 1 - 3) % (V - 3) + 3  # another token, never a special one
    with torch.no_grad():
        before, after = (model(**x) for x in (inputs, changed))
    before, after = ((x.logits if "logits" in x else x.last_hidden_state) for x in (before, after))
    return (after[:, -1] - before[:, -1]).abs().max().item(), (after[:, :-1] - before[:, :-1]).abs().max().item()


@pytest.mark.parametrize("name", CAUSAL)
def test_changing_the_last_token_changes_no_earlier_output(name):
    config_name, model_name, kwargs, kind = MODELS[name]
    model = build(config_name, model_name, kwargs)
    inputs = make_inputs(kind, model)
    _, eager_leak = last_token_probe(model, inputs)
    model.set_attn_implementation("attnlib")
    last, leak = last_token_probe(model, inputs)
    assert last > 0  # the probe changed something
    # Nothing before the last token may change. Switch Transformers' router is the one exception, in eager
    # too: its experts have a capacity that tokens of the whole batch compete for (not attention's doing).
    assert leak == 0.0 if name != "switch_transformers_bias" else leak <= eager_leak


@pytest.mark.parametrize("name", sorted(REFUSED_MODELS))
def test_models_computing_their_own_attention_are_refused_by_name(name):
    config_name, model_name, kwargs, layer = REFUSED_MODELS[name]
    with pytest.raises(hf.UnsupportedAttentionError) as err:
        build(config_name, model_name, kwargs, "attnlib")
    message = str(err.value)
    assert message.startswith(f"attnlib's attention cannot run inside {model_name}: its attention layers ({layer}")
    assert message.endswith('load the model with attn_implementation="eager" instead')


def test_a_keyword_that_changes_the_result_is_refused_by_name_at_the_first_call():
    # DeepSeek-V3.2 selects index_topk keys per query and passes their indices; with index_topk < T eager
    # attends to fewer keys than the mask allows, and attnlib would silently attend to all of them.
    kwargs = dict(DECODER, num_key_value_heads=4, head_dim=4, index_topk=4, kv_lora_rank=8, q_lora_rank=8,
                  qk_rope_head_dim=4, qk_nope_head_dim=4, v_head_dim=4, index_head_dim=8, index_n_heads=2,
                  n_routed_experts=2, num_experts_per_tok=1, moe_intermediate_size=8, first_k_dense_replace=2,
                  n_group=1, topk_group=1)
    model = build("DeepseekV32Config", "DeepseekV32ForCausalLM", kwargs)
    inputs = make_inputs("causal", model)
    run(model, inputs, "eager")
    with pytest.raises(hf.UnsupportedAttentionError) as err:
        run(model, inputs, "attnlib")
    assert str(err.value) == (
        "DeepseekV32Attention (model_type 'deepseek_v32') passes indices= to its attention function (the top-k key "
        "indices of DeepSeek's sparse attention, which select a few keys per query); attnlib's attention does not "
        'implement it and would compute other numbers than the model\'s own attention: load the model with '
        'attn_implementation="eager" instead'
    )


GENERATORS = ["llama", "gemma_mqa", "mistral_window", "gemma2_softcap_window", "gpt_oss_sinks_window", "t5_bias"]


@pytest.mark.parametrize("name", GENERATORS)
def test_greedy_generation_past_the_window_is_eager_s(name):
    config_name, model_name, kwargs, kind = MODELS[name]
    model = build(config_name, model_name, kwargs)
    model.generation_config.pad_token_id = 0
    inputs = make_inputs(kind, model)
    inputs.pop("decoder_input_ids", None)
    if kind == "causal":  # a decoder generates after left padding
        inputs["attention_mask"] = inputs["attention_mask"].flip(-1)
    out = {}
    for implementation in ("eager", "attnlib"):
        model.set_attn_implementation(implementation)
        with torch.no_grad():
            out[implementation] = model.generate(**inputs, max_new_tokens=8, do_sample=False, min_new_tokens=8)
    assert out["attnlib"].shape[-1] >= 8  # 8 new tokens after 12: the decoders' window of 4 is long passed
    assert torch.equal(out["attnlib"], out["eager"])


WINDOWS = {"mistral_window": "sliding_window", "qwen2_window": "sliding_window", "starcoder2_window": "sliding_window",
           "gemma2_softcap_window": "sliding_window", "gemma3_window": "sliding_window",
           "gpt_oss_sinks_window": "sliding_window", "modernbert": "local_attention"}


@pytest.mark.parametrize("name", sorted(WINDOWS))
def test_the_sliding_window_reaches_attnlib_through_the_mask(name):
    # The matrix above compares with eager; this shows that its window of 4 (T = 12) was in force: the same
    # weights with a window longer than the text give other numbers.
    config_name, model_name, kwargs, kind = MODELS[name]
    outputs = []
    for window in (kwargs.get(WINDOWS[name], 4), 128):
        model = build(config_name, model_name, dict(kwargs, **{WINDOWS[name]: window}), "attnlib")
        inputs = make_inputs(kind, model)
        with torch.no_grad():
            out = model(**inputs)
        outputs.append(real_positions(out.logits if "logits" in out else out.last_hidden_state, inputs))
    assert (outputs[0] - outputs[1]).abs().max() > 1e-3
