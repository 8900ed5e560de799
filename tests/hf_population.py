"""The population of tests/test_hf_matrix.py: tiny randomly initialised models of many transformers architectures.

Every architecture is built from its config class with the sizes shrunk (:data:`SHRINK`: width 16, 2 layers,
4 heads, a vocabulary of 96, images of 16 x 16, ...), seeded, nothing downloaded: a few thousand parameters,
a second or two each on a laptop. Its entry in :data:`POPULATION` says how to build and feed it and what attnlib
does with it: ``"equal"`` (eager's numbers, attnlib called in every layer SDPA is called in) or ``"refused"``
(:class:`attnlib.hf.UnsupportedAttentionError` at load, naming the layer or part and why).

The families: encoders, decoders (dense, grouped-query, sliding windows, softcap, sinks, MoE routers, hybrids
with state-space or linear-attention layers), encoder-decoders, vision and audio encoders, multimodal models and
their towers, time series, and models with no attention at all.
"""

from __future__ import annotations

import inspect
from typing import Any, NamedTuple

import torch

V = 96  # vocabulary
B, T = 2, 12  # batch, tokens: the second sequence is right-padded (its last 4 tokens)

SHRINK = dict(
    hidden_size=16, d_model=16, n_embd=16, embed_dim=16, num_hidden_layers=2, n_layer=2, num_layers=2, n_layers=2,
    encoder_layers=2, decoder_layers=2, num_decoder_layers=2, num_attention_heads=4, n_head=4, n_heads=4,
    num_heads=4, encoder_attention_heads=4, decoder_attention_heads=4, num_key_value_heads=2, intermediate_size=32,
    ffn_dim=32, encoder_ffn_dim=32, decoder_ffn_dim=32, d_ff=32, n_inner=32, vocab_size=V, head_dim=4, d_kv=4,
    max_position_embeddings=64, n_positions=64, pad_token_id=0, bos_token_id=1, eos_token_id=2,
    decoder_start_token_id=1, image_size=16, patch_size=4, num_channels=3, moe_intermediate_size=16, num_experts=4,
    num_local_experts=4, n_routed_experts=4, num_experts_per_tok=2, embedding_size=16, hidden_dim=32,
)


class Tiny(NamedTuple):
    config: str  # the config class, e.g. "LlamaConfig"
    model: str  # the model class, e.g. "LlamaForCausalLM"
    kind: str  # the inputs: "auto" (from the model), or text, causal, seq2seq, image, audio, features, series, patches
    expect: str  # "equal" or "refused"
    family: str
    overrides: dict[str, Any] = {}


def _parameters(cls: type) -> set[str]:
    try:
        return set(inspect.signature(cls.__init__).parameters)
    except (TypeError, ValueError):
        return set()


def _shrink(config_class: type) -> dict[str, Any]:
    """The sizes of :data:`SHRINK` that ``config_class`` takes, where its default is a number too (not a list)."""
    taken = _parameters(config_class)
    try:
        default = config_class()
    except Exception:  # noqa: BLE001 - a config that needs arguments: shrink what it takes
        default = None
    def number_or_unset(key: str) -> bool:
        try:
            value = getattr(default, key, None)
        except Exception:  # noqa: BLE001 - an attribute that varies per layer: not a single number to shrink
            return False
        return value is None or isinstance(value, int)

    return {k: v for k, v in SHRINK.items() if k in taken and (default is None or number_or_unset(k))}


def tiny_config(config_class: type, overrides: dict[str, Any] | None = None) -> Any:
    """``config_class`` with every size it takes shrunk, then ``overrides``; its sub-configs shrunk likewise."""
    config = config_class(**{**_shrink(config_class), **(overrides or {})})
    for key in getattr(config, "sub_configs", None) or {}:
        sub = getattr(config, key, None)
        if sub is not None and hasattr(sub, "to_dict"):
            try:
                setattr(config, key, type(sub)(**_shrink(type(sub))))
            except Exception:  # noqa: BLE001 - a sub-config that will not shrink keeps its own (small) defaults
                pass
    return config


def kind_of(spec: Tiny, model: torch.nn.Module) -> str:
    """The entry's input kind; "auto" is read off the model: its main input, and causal or encoder-decoder."""
    if spec.kind != "auto":
        return spec.kind
    main = getattr(model, "main_input_name", "input_ids")
    if main == "pixel_values":
        return "image"
    if main == "input_values":
        return "audio"
    if main == "input_features":
        return "features"
    if "CausalLM" in spec.model or "LMHead" in spec.model:  # a decoder alone, also of an encoder-decoder's config
        return "causal"
    return "seq2seq" if getattr(model.config, "is_encoder_decoder", False) else "text"


def inputs(kind: str, model: torch.nn.Module, config: Any) -> dict[str, torch.Tensor]:
    """Seeded inputs; a text batch's second sequence is right-padded (its last 4 tokens)."""
    g = torch.Generator().manual_seed(1)
    if kind in ("text", "causal", "seq2seq"):
        vocab = min(getattr(config, "vocab_size", None) or V, V)
        ids = torch.randint(3, vocab, (B, T), generator=g)
        mask = torch.ones(B, T, dtype=torch.long)
        mask[1, -4:] = 0
        out = dict(input_ids=ids, attention_mask=mask)
        if kind == "seq2seq":
            out["decoder_input_ids"] = torch.randint(3, vocab, (B, 7), generator=g)
        return out
    if kind == "image":
        size = getattr(config, "image_size", 16)
        size = size[0] if isinstance(size, (list, tuple)) else size
        return dict(pixel_values=torch.randn(B, getattr(config, "num_channels", 3), size, size, generator=g))
    if kind == "audio":
        return dict(input_values=torch.randn(B, 400, generator=g))
    if kind == "features":
        return dict(input_features=torch.randn(B, getattr(config, "num_mel_bins", 80), 16, generator=g))
    if kind == "series":
        length = config.context_length + max(getattr(config, "lags_sequence", None) or [0])
        features = getattr(config, "num_time_features", 0)
        out = dict(past_values=torch.randn(B, length, generator=g))
        if features:
            out["past_time_features"] = torch.randn(B, length, features, generator=g)
            out["past_observed_mask"] = torch.ones(B, length)
            out["future_values"] = torch.randn(B, config.prediction_length, generator=g)
            out["future_time_features"] = torch.randn(B, config.prediction_length, features, generator=g)
        return out
    if kind == "patches":  # PatchTST and its kin: (B, context, channels)
        return dict(past_values=torch.randn(B, config.context_length, config.num_input_channels, generator=g))
    raise ValueError(f"unknown input kind {kind!r}")


def output(out: Any) -> torch.Tensor:
    """The tensor a model's output is compared by: its logits, else its last hidden state, else its first item."""
    for key in ("logits", "last_hidden_state", "prediction_outputs", "sequences"):
        value = out.get(key) if hasattr(out, "get") else None
        if isinstance(value, torch.Tensor):
            return value
    return out[0]


WINDOW = dict(sliding_window=4)  # shorter than the text (12 tokens): the window is in force
MLA = dict(num_key_value_heads=4, kv_lora_rank=8, q_lora_rank=8, qk_rope_head_dim=4, qk_nope_head_dim=4, v_head_dim=4,
           first_k_dense_replace=1, n_group=1, topk_group=1)
SERIES = dict(prediction_length=4, context_length=8, lags_sequence=[1, 2], num_time_features=1, d_model=16,
              encoder_layers=2, decoder_layers=2, encoder_attention_heads=4, decoder_attention_heads=4,
              encoder_ffn_dim=32, decoder_ffn_dim=32)
PATCHES = dict(context_length=32, patch_length=8, patch_stride=8, num_input_channels=3)

# Built by hand: a feature switched on (a window, a softcap, sinks, a relative position bias, latent attention,
# block-sparse attention), or a config the generic shrinking cannot satisfy.
VARIANTS = {
    "mistral_window": Tiny("MistralConfig", "MistralForCausalLM", "auto", "equal", "decoder", WINDOW),
    "qwen2_window": Tiny("Qwen2Config", "Qwen2ForCausalLM", "auto", "equal", "decoder",
                         dict(use_sliding_window=True, sliding_window=4, max_window_layers=0)),
    "starcoder2_window": Tiny("Starcoder2Config", "Starcoder2ForCausalLM", "auto", "equal", "decoder", WINDOW),
    "gemma2_softcap_window": Tiny("Gemma2Config", "Gemma2ForCausalLM", "auto", "equal", "decoder",
                                  dict(sliding_window=4, attn_logit_softcapping=2.0, initializer_range=0.3)),
    "gemma3_window": Tiny("Gemma3TextConfig", "Gemma3ForCausalLM", "auto", "equal", "decoder",
                          dict(sliding_window=4, sliding_window_pattern=2)),
    "gpt_oss_sinks_window": Tiny("GptOssConfig", "GptOssForCausalLM", "auto", "equal", "moe decoder", WINDOW),
    "modernbert_local": Tiny("ModernBertConfig", "ModernBertModel", "auto", "equal", "encoder",
                             dict(local_attention=4, global_attn_every_n_layers=2)),
    "t5_generation": Tiny("T5Config", "T5ForConditionalGeneration", "auto", "equal", "encoder-decoder"),
    "deepseek_v3_mla": Tiny("DeepseekV3Config", "DeepseekV3ForCausalLM", "auto", "equal", "moe decoder", MLA),
    "deepseek_v2_mla": Tiny("DeepseekV2Config", "DeepseekV2ForCausalLM", "auto", "equal", "moe decoder", MLA),
    "beit_relative_bias": Tiny("BeitConfig", "BeitModel", "auto", "equal", "vision",
                               dict(use_relative_position_bias=True, use_shared_relative_position_bias=False)),
    "bigbird_pegasus_full": Tiny("BigBirdPegasusConfig", "BigBirdPegasusModel", "auto", "refused", "encoder-decoder",
                                 dict(attention_type="original_full")),
    "wav2vec2_conformer_relative": Tiny("Wav2Vec2ConformerConfig", "Wav2Vec2ConformerModel", "auto", "equal",
                                        "audio", dict(position_embeddings_type="relative", do_stable_layer_norm=False,
                                                      conv_dim=(8, 8), conv_stride=(4, 4), conv_kernel=(8, 8),
                                                      num_conv_pos_embeddings=4, num_conv_pos_embedding_groups=2)),
    "sam_full": Tiny("SamConfig", "SamModel", "auto", "refused", "vision"),
    "sam_hq_full": Tiny("SamHQConfig", "SamHQModel", "auto", "refused", "vision"),
    "clap_audio": Tiny("ClapAudioConfig", "ClapAudioModel", "auto", "refused", "audio",
                       dict(depths=[1, 1], num_attention_heads=[2, 2], patch_embeds_hidden_size=16)),
    "gpt_neo_local": Tiny("GPTNeoConfig", "GPTNeoForCausalLM", "auto", "refused", "decoder",
                          dict(attention_types=[[["global", "local"], 1]], window_size=4)),
    "codegen": Tiny("CodeGenConfig", "CodeGenForCausalLM", "auto", "refused", "decoder", dict(rotary_dim=4)),
    "gptj": Tiny("GPTJConfig", "GPTJForCausalLM", "auto", "refused", "decoder", dict(rotary_dim=4)),
    "time_series_transformer": Tiny("TimeSeriesTransformerConfig", "TimeSeriesTransformerModel", "series", "refused",
                                    "time series", SERIES),
    "informer": Tiny("InformerConfig", "InformerModel", "series", "refused", "time series", SERIES),
    "patchtst": Tiny("PatchTSTConfig", "PatchTSTModel", "patches", "equal", "time series",
                     dict(PATCHES, ffn_dim=32)),
    "patchtsmixer": Tiny("PatchTSMixerConfig", "PatchTSMixerModel", "patches", "refused", "time series", PATCHES),
}

# Every architecture the generic shrinking builds, with its verdict under the pinned transformers.
GENERIC = {
    "afmoe": Tiny("AfmoeConfig", "AfmoeForCausalLM", "auto", "equal", "moe decoder"),
    "aimv2_vision_model": Tiny("Aimv2VisionConfig", "Aimv2VisionModel", "auto", "refused", "vision"),
    "albert": Tiny("AlbertConfig", "AlbertModel", "auto", "equal", "encoder"),
    "apertus": Tiny("ApertusConfig", "ApertusForCausalLM", "auto", "equal", "decoder"),
    "arcee": Tiny("ArceeConfig", "ArceeForCausalLM", "auto", "equal", "decoder"),
    "aria": Tiny("AriaConfig", "AriaModel", "auto", "refused", "multimodal"),
    "aria_text": Tiny("AriaTextConfig", "AriaTextForCausalLM", "auto", "equal", "moe decoder"),
    "audioflamingo3": Tiny("AudioFlamingo3Config", "AudioFlamingo3Model", "auto", "equal", "multimodal"),
    "aya_vision": Tiny("AyaVisionConfig", "AyaVisionModel", "auto", "refused", "multimodal"),
    "bart": Tiny("BartConfig", "BartForCausalLM", "auto", "equal", "encoder-decoder"),
    "beam": Tiny("BeamConfig", "BeamForCausalLM", "auto", "equal", "moe decoder"),
    "beit": Tiny("BeitConfig", "BeitModel", "auto", "equal", "vision"),
    "bert": Tiny("BertConfig", "BertLMHeadModel", "auto", "equal", "decoder"),
    "bert-generation": Tiny("BertGenerationConfig", "BertGenerationDecoder", "auto", "equal", "encoder"),
    "big_bird": Tiny("BigBirdConfig", "BigBirdForCausalLM", "auto", "refused", "decoder"),
    "bigbird_pegasus": Tiny("BigBirdPegasusConfig", "BigBirdPegasusForCausalLM", "auto", "refused", "encoder-decoder"),
    "biogpt": Tiny("BioGptConfig", "BioGptForCausalLM", "auto", "equal", "decoder"),
    "bitnet": Tiny("BitNetConfig", "BitNetForCausalLM", "auto", "equal", "decoder"),
    "blenderbot": Tiny("BlenderbotConfig", "BlenderbotForCausalLM", "auto", "equal", "encoder-decoder"),
    "blenderbot-small": Tiny("BlenderbotSmallConfig", "BlenderbotSmallForCausalLM", "auto", "equal", "encoder-decoder"),
    "bloom": Tiny("BloomConfig", "BloomForCausalLM", "auto", "refused", "decoder"),
    "camembert": Tiny("CamembertConfig", "CamembertForCausalLM", "auto", "equal", "decoder"),
    "canine": Tiny("CanineConfig", "CanineModel", "auto", "refused", "encoder"),
    "chinese_clip_vision_model": Tiny("ChineseCLIPVisionConfig", "ChineseCLIPVisionModel", "auto", "equal", "vision"),
    "clip_text_model": Tiny("CLIPTextConfig", "CLIPTextModel", "auto", "equal", "encoder"),
    "clip_vision_model": Tiny("CLIPVisionConfig", "CLIPVisionModel", "auto", "equal", "vision"),
    "cohere": Tiny("CohereConfig", "CohereForCausalLM", "auto", "equal", "decoder"),
    "cohere2": Tiny("Cohere2Config", "Cohere2ForCausalLM", "auto", "equal", "decoder"),
    "cohere2_moe": Tiny("Cohere2MoeConfig", "Cohere2MoeForCausalLM", "auto", "equal", "moe decoder"),
    "cohere2_vision": Tiny("Cohere2VisionConfig", "Cohere2VisionModel", "auto", "refused", "multimodal"),
    "convbert": Tiny("ConvBertConfig", "ConvBertModel", "auto", "refused", "encoder"),
    "cosmos3_omni": Tiny("Cosmos3OmniConfig", "Cosmos3OmniModel", "auto", "equal", "multimodal"),
    "cpmant": Tiny("CpmAntConfig", "CpmAntForCausalLM", "auto", "refused", "decoder"),
    "ctrl": Tiny("CTRLConfig", "CTRLLMHeadModel", "auto", "equal", "decoder"),
    "cwm": Tiny("CwmConfig", "CwmForCausalLM", "auto", "equal", "decoder"),
    "data2vec-audio": Tiny("Data2VecAudioConfig", "Data2VecAudioModel", "auto", "equal", "audio"),
    "data2vec-text": Tiny("Data2VecTextConfig", "Data2VecTextForCausalLM", "auto", "equal", "decoder"),
    "data2vec-vision": Tiny("Data2VecVisionConfig", "Data2VecVisionModel", "auto", "refused", "vision"),
    "deberta": Tiny("DebertaConfig", "DebertaModel", "auto", "refused", "encoder"),
    "deberta-v2": Tiny("DebertaV2Config", "DebertaV2Model", "auto", "refused", "encoder"),
    "deepseek_vl": Tiny("DeepseekVLConfig", "DeepseekVLModel", "auto", "refused", "multimodal"),
    "deepseek_vl_hybrid": Tiny("DeepseekVLHybridConfig", "DeepseekVLHybridModel", "auto", "refused", "multimodal"),
    "deit": Tiny("DeiTConfig", "DeiTModel", "auto", "equal", "vision"),
    "diffllama": Tiny("DiffLlamaConfig", "DiffLlamaForCausalLM", "auto", "equal", "decoder"),
    "dinov2": Tiny("Dinov2Config", "Dinov2Model", "auto", "equal", "vision"),
    "dinov2_with_registers": Tiny("Dinov2WithRegistersConfig", "Dinov2WithRegistersModel", "auto", "equal", "vision"),
    "dinov3_vit": Tiny("DINOv3ViTConfig", "DINOv3ViTModel", "auto", "equal", "vision"),
    "distilbert": Tiny("DistilBertConfig", "DistilBertModel", "auto", "equal", "encoder"),
    "doge": Tiny("DogeConfig", "DogeForCausalLM", "auto", "equal", "moe decoder"),
    "dpr": Tiny("DPRConfig", "DPRQuestionEncoder", "auto", "equal", "encoder"),
    "dpt": Tiny("DPTConfig", "DPTModel", "auto", "equal", "vision"),
    "electra": Tiny("ElectraConfig", "ElectraForCausalLM", "auto", "equal", "decoder"),
    "embedding_gemma2": Tiny("EmbeddingGemma2Config", "EmbeddingGemma2Model", "auto", "equal", "multimodal"),
    "embedding_gemma2_text": Tiny("EmbeddingGemma2TextConfig", "EmbeddingGemma2TextModel", "auto", "equal", "encoder"),
    "ernie": Tiny("ErnieConfig", "ErnieForCausalLM", "auto", "equal", "decoder"),
    "ernie4_5": Tiny("Ernie4_5Config", "Ernie4_5ForCausalLM", "auto", "equal", "decoder"),
    "ernie4_5_moe": Tiny("Ernie4_5_MoeConfig", "Ernie4_5_MoeForCausalLM", "auto", "equal", "moe decoder"),
    "esm": Tiny("EsmConfig", "EsmModel", "auto", "equal", "encoder"),
    "eurobert": Tiny("EuroBertConfig", "EuroBertModel", "auto", "equal", "encoder"),
    "evolla": Tiny("EvollaConfig", "EvollaModel", "auto", "refused", "encoder"),
    "exaone4": Tiny("Exaone4Config", "Exaone4ForCausalLM", "auto", "equal", "decoder"),
    "exaone4_5": Tiny("Exaone4_5_Config", "Exaone4_5_Model", "auto", "equal", "multimodal"),
    "exaone_moe": Tiny("ExaoneMoeConfig", "ExaoneMoeForCausalLM", "auto", "equal", "moe decoder"),
    "falcon": Tiny("FalconConfig", "FalconForCausalLM", "auto", "refused", "decoder"),
    "falcon_mamba": Tiny("FalconMambaConfig", "FalconMambaForCausalLM", "auto", "refused", "no attention"),
    "fastspeech2_conformer": Tiny("FastSpeech2ConformerConfig", "FastSpeech2ConformerModel", "auto", "refused", "encoder-decoder"),
    "flaubert": Tiny("FlaubertConfig", "FlaubertModel", "auto", "refused", "encoder"),
    "flava": Tiny("FlavaConfig", "FlavaModel", "auto", "refused", "encoder"),
    "flex_olmo": Tiny("FlexOlmoConfig", "FlexOlmoForCausalLM", "auto", "equal", "moe decoder"),
    "flint": Tiny("FlintConfig", "FlintForCausalLM", "auto", "equal", "moe decoder"),
    "florence2": Tiny("Florence2Config", "Florence2Model", "auto", "equal", "multimodal"),
    "fnet": Tiny("FNetConfig", "FNetModel", "auto", "refused", "no attention"),
    "focalnet": Tiny("FocalNetConfig", "FocalNetModel", "auto", "refused", "no attention"),
    "fsmt": Tiny("FSMTConfig", "FSMTModel", "auto", "refused", "encoder-decoder"),
    "fun_asr_nano": Tiny("FunAsrNanoConfig", "FunAsrNanoModel", "auto", "equal", "multimodal"),
    "funnel": Tiny("FunnelConfig", "FunnelModel", "auto", "refused", "encoder"),
    "fuyu": Tiny("FuyuConfig", "FuyuForCausalLM", "auto", "equal", "decoder"),
    "gemma": Tiny("GemmaConfig", "GemmaForCausalLM", "auto", "equal", "decoder"),
    "gemma2": Tiny("Gemma2Config", "Gemma2ForCausalLM", "auto", "equal", "decoder"),
    "gemma3": Tiny("Gemma3Config", "Gemma3ForConditionalGeneration", "auto", "refused", "multimodal"),
    "gemma3_text": Tiny("Gemma3TextConfig", "Gemma3ForCausalLM", "auto", "equal", "decoder"),
    "gemma4_unified_text": Tiny("Gemma4UnifiedTextConfig", "Gemma4UnifiedForCausalLM", "auto", "equal", "decoder"),
    "git": Tiny("GitConfig", "GitForCausalLM", "auto", "refused", "decoder"),
    "glm": Tiny("GlmConfig", "GlmForCausalLM", "auto", "equal", "decoder"),
    "glm4": Tiny("Glm4Config", "Glm4ForCausalLM", "auto", "equal", "decoder"),
    "glm4_moe": Tiny("Glm4MoeConfig", "Glm4MoeForCausalLM", "auto", "equal", "moe decoder"),
    "glmasr": Tiny("GlmAsrConfig", "GlmAsrModel", "auto", "equal", "multimodal"),
    "glmasr_encoder": Tiny("GlmAsrEncoderConfig", "GlmAsrEncoder", "auto", "equal", "audio"),
    "got_ocr2": Tiny("GotOcr2Config", "GotOcr2ForConditionalGeneration", "auto", "refused", "multimodal"),
    "gpt-sw3": Tiny("GPT2Config", "GPT2LMHeadModel", "auto", "equal", "decoder"),
    "gpt2": Tiny("GPT2Config", "GPT2LMHeadModel", "auto", "equal", "decoder"),
    "gpt_bigcode": Tiny("GPTBigCodeConfig", "GPTBigCodeForCausalLM", "auto", "equal", "decoder"),
    "gpt_neox": Tiny("GPTNeoXConfig", "GPTNeoXForCausalLM", "auto", "equal", "decoder"),
    "gpt_neox_japanese": Tiny("GPTNeoXJapaneseConfig", "GPTNeoXJapaneseForCausalLM", "auto", "refused", "decoder"),
    "gpt_oss": Tiny("GptOssConfig", "GptOssForCausalLM", "auto", "equal", "moe decoder"),
    "granite": Tiny("GraniteConfig", "GraniteForCausalLM", "auto", "equal", "decoder"),
    "granite_docling": Tiny("GraniteDoclingConfig", "GraniteDoclingModel", "auto", "equal", "multimodal"),
    "granite_docling_text": Tiny("GraniteDoclingTextConfig", "GraniteDoclingTextModel", "auto", "equal", "encoder"),
    "granite_speech": Tiny("GraniteSpeechConfig", "GraniteSpeechModel", "auto", "refused", "multimodal"),
    "granite_speech_plus": Tiny("GraniteSpeechPlusConfig", "GraniteSpeechPlusModel", "auto", "refused", "multimodal"),
    "granite_swa": Tiny("GraniteSWAConfig", "GraniteSWAForCausalLM", "auto", "equal", "decoder"),
    "granitemoe": Tiny("GraniteMoeConfig", "GraniteMoeForCausalLM", "auto", "equal", "moe decoder"),
    "granitemoe_swa": Tiny("GraniteMoeSWAConfig", "GraniteMoeSWAForCausalLM", "auto", "equal", "moe decoder"),
    "granitemoeshared": Tiny("GraniteMoeSharedConfig", "GraniteMoeSharedForCausalLM", "auto", "equal", "moe decoder"),
    "gte": Tiny("GteConfig", "GteModel", "auto", "equal", "encoder"),
    "helium": Tiny("HeliumConfig", "HeliumForCausalLM", "auto", "equal", "decoder"),
    "hgnet_v2": Tiny("HGNetV2Config", "HGNetV2Backbone", "auto", "refused", "no attention"),
    "higgs_audio_v2": Tiny("HiggsAudioV2Config", "HiggsAudioV2ForConditionalGeneration", "auto", "equal", "encoder"),
    "hrm_text": Tiny("HrmTextConfig", "HrmTextForCausalLM", "auto", "equal", "decoder"),
    "hubert": Tiny("HubertConfig", "HubertModel", "auto", "equal", "audio"),
    "hunyuan_v1_dense": Tiny("HunYuanDenseV1Config", "HunYuanDenseV1ForCausalLM", "auto", "equal", "decoder"),
    "hunyuan_v1_moe": Tiny("HunYuanMoEV1Config", "HunYuanMoEV1ForCausalLM", "auto", "equal", "moe decoder"),
    "hy_v3": Tiny("HYV3Config", "HYV3ForCausalLM", "auto", "equal", "moe decoder"),
    "hy_v4": Tiny("HYV4Config", "HYV4ForCausalLM", "auto", "refused", "hybrid"),
    "hyperclovax": Tiny("HyperCLOVAXConfig", "HyperCLOVAXForCausalLM", "auto", "equal", "decoder"),
    "hyperclovax_vision_v2": Tiny("HyperCLOVAXVisionV2Config", "HyperCLOVAXVisionV2Model", "auto", "equal", "multimodal"),
    "ibert": Tiny("IBertConfig", "IBertModel", "auto", "refused", "encoder"),
    "idefics2": Tiny("Idefics2Config", "Idefics2Model", "auto", "equal", "multimodal"),
    "idefics3": Tiny("Idefics3Config", "Idefics3Model", "auto", "equal", "multimodal"),
    "ijepa": Tiny("IJepaConfig", "IJepaModel", "auto", "equal", "vision"),
    "imagegpt": Tiny("ImageGPTConfig", "ImageGPTModel", "auto", "refused", "encoder"),
    "inkling2": Tiny("Inkling2Config", "Inkling2Model", "auto", "refused", "multimodal"),
    "inkling2_text": Tiny("Inkling2TextConfig", "Inkling2ForCausalLM", "auto", "refused", "hybrid"),
    "inkling_text": Tiny("InklingTextConfig", "InklingForCausalLM", "auto", "equal", "hybrid"),
    "internlm3": Tiny("InternLM3Config", "LlamaForCausalLM", "auto", "equal", "decoder"),
    "internvl": Tiny("InternVLConfig", "InternVLModel", "auto", "equal", "multimodal"),
    "internvl_vision": Tiny("InternVLVisionConfig", "InternVLVisionModel", "auto", "equal", "vision"),
    "iquestcoder": Tiny("IQuestCoderConfig", "LlamaForCausalLM", "auto", "equal", "decoder"),
    "jais2": Tiny("Jais2Config", "Jais2ForCausalLM", "auto", "equal", "decoder"),
    "janus": Tiny("JanusConfig", "JanusModel", "auto", "refused", "multimodal"),
    "jetmoe": Tiny("JetMoeConfig", "JetMoeForCausalLM", "auto", "equal", "moe decoder"),
    "jina_embeddings_v3": Tiny("JinaEmbeddingsV3Config", "JinaEmbeddingsV3Model", "auto", "equal", "encoder"),
    "kolibri1": Tiny("Kolibri1Config", "Kolibri1ForCausalLM", "auto", "equal", "moe decoder"),
    "kosmos-2.5": Tiny("Kosmos2_5Config", "Kosmos2_5Model", "auto", "equal", "multimodal"),
    "laguna": Tiny("LagunaConfig", "LagunaForCausalLM", "auto", "equal", "moe decoder"),
    "layoutlm": Tiny("LayoutLMConfig", "LayoutLMModel", "auto", "equal", "encoder"),
    "led": Tiny("LEDConfig", "LEDModel", "auto", "refused", "encoder-decoder"),
    "lfm2": Tiny("Lfm2Config", "Lfm2ForCausalLM", "auto", "equal", "decoder"),
    "lfm2_vl": Tiny("Lfm2VlConfig", "Lfm2VlModel", "auto", "refused", "multimodal"),
    "lighton_ocr": Tiny("LightOnOcrConfig", "LightOnOcrModel", "auto", "equal", "multimodal"),
    "llama": Tiny("LlamaConfig", "LlamaForCausalLM", "auto", "equal", "decoder"),
    "llama4_text": Tiny("Llama4TextConfig", "Llama4ForCausalLM", "auto", "equal", "moe decoder"),
    "llava": Tiny("LlavaConfig", "LlavaModel", "auto", "equal", "multimodal"),
    "llava_next": Tiny("LlavaNextConfig", "LlavaNextModel", "auto", "equal", "multimodal"),
    "llava_next_video": Tiny("LlavaNextVideoConfig", "LlavaNextVideoModel", "auto", "equal", "multimodal"),
    "llava_onevision": Tiny("LlavaOnevisionConfig", "LlavaOnevisionModel", "auto", "refused", "multimodal"),
    "longformer": Tiny("LongformerConfig", "LongformerModel", "auto", "refused", "encoder"),
    "longt5": Tiny("LongT5Config", "LongT5Model", "auto", "refused", "encoder-decoder"),
    "m2m_100": Tiny("M2M100Config", "M2M100Model", "auto", "equal", "encoder-decoder"),
    "mamba": Tiny("MambaConfig", "MambaForCausalLM", "auto", "refused", "no attention"),
    "marian": Tiny("MarianConfig", "MarianForCausalLM", "auto", "equal", "encoder-decoder"),
    "markuplm": Tiny("MarkupLMConfig", "MarkupLMModel", "auto", "refused", "encoder"),
    "mbart": Tiny("MBartConfig", "MBartForCausalLM", "auto", "equal", "encoder-decoder"),
    "megatron-bert": Tiny("MegatronBertConfig", "MegatronBertForCausalLM", "auto", "refused", "decoder"),
    "mellum": Tiny("MellumConfig", "MellumForCausalLM", "auto", "equal", "moe decoder"),
    "mimo_v2_flash": Tiny("MiMoV2FlashConfig", "MiMoV2FlashForCausalLM", "auto", "equal", "moe decoder"),
    "minimax": Tiny("MiniMaxConfig", "MiniMaxForCausalLM", "auto", "equal", "hybrid"),
    "minimax_m2": Tiny("MiniMaxM2Config", "MiniMaxM2ForCausalLM", "auto", "equal", "moe decoder"),
    "minimax_m3_vl_text": Tiny("MiniMaxM3VLTextConfig", "MiniMaxM3VLForCausalLM", "auto", "equal", "moe decoder"),
    "ministral": Tiny("MinistralConfig", "MinistralForCausalLM", "auto", "equal", "decoder"),
    "ministral3": Tiny("Ministral3Config", "Ministral3ForCausalLM", "auto", "equal", "decoder"),
    "mistral": Tiny("MistralConfig", "MistralForCausalLM", "auto", "equal", "decoder"),
    "mistral3": Tiny("Mistral3Config", "Mistral3Model", "auto", "equal", "multimodal"),
    "mixtral": Tiny("MixtralConfig", "MixtralForCausalLM", "auto", "equal", "moe decoder"),
    "mlcd": Tiny("MLCDVisionConfig", "MLCDVisionModel", "auto", "equal", "vision"),
    "mlcd_vision_model": Tiny("MLCDVisionConfig", "MLCDVisionModel", "auto", "equal", "vision"),
    "mllama": Tiny("MllamaConfig", "MllamaForCausalLM", "auto", "equal", "multimodal"),
    "mobilebert": Tiny("MobileBertConfig", "MobileBertModel", "auto", "equal", "encoder"),
    "mobilenet_v1": Tiny("MobileNetV1Config", "MobileNetV1Model", "auto", "refused", "no attention"),
    "mobilenet_v2": Tiny("MobileNetV2Config", "MobileNetV2Model", "auto", "refused", "no attention"),
    "mobilevit": Tiny("MobileViTConfig", "MobileViTModel", "auto", "refused", "vision"),
    "modernbert": Tiny("ModernBertConfig", "ModernBertModel", "auto", "equal", "encoder"),
    "modernbert-decoder": Tiny("ModernBertDecoderConfig", "ModernBertDecoderForCausalLM", "auto", "equal", "decoder"),
    "modernvbert": Tiny("ModernVBertConfig", "ModernVBertModel", "auto", "refused", "multimodal"),
    "molmo2_text": Tiny("Molmo2TextConfig", "Molmo2TextModel", "auto", "equal", "encoder"),
    "moshi": Tiny("MoshiConfig", "MoshiForCausalLM", "auto", "equal", "decoder"),
    "moss_transcribe_diarize": Tiny("MossTranscribeDiarizeConfig", "MossTranscribeDiarizeForConditionalGeneration", "auto", "equal", "multimodal"),
    "mpnet": Tiny("MPNetConfig", "MPNetModel", "auto", "refused", "encoder"),
    "mpt": Tiny("MptConfig", "MptForCausalLM", "auto", "refused", "decoder"),
    "mra": Tiny("MraConfig", "MraModel", "auto", "refused", "no attention"),
    "mt5": Tiny("MT5Config", "MT5Model", "auto", "equal", "encoder-decoder"),
    "muse_glimmer": Tiny("MuseGlimmerConfig", "MuseGlimmerModel", "auto", "equal", "multimodal"),
    "muse_glimmer_text": Tiny("MuseGlimmerTextConfig", "MuseGlimmerTextModel", "auto", "equal", "encoder"),
    "musicflamingo": Tiny("MusicFlamingoConfig", "MusicFlamingoModel", "auto", "equal", "multimodal"),
    "mvp": Tiny("MvpConfig", "MvpForCausalLM", "auto", "refused", "encoder-decoder"),
    "nanochat": Tiny("NanoChatConfig", "NanoChatForCausalLM", "auto", "equal", "decoder"),
    "nemotron": Tiny("NemotronConfig", "NemotronForCausalLM", "auto", "equal", "decoder"),
    "nemotron_h": Tiny("NemotronHConfig", "NemotronHForCausalLM", "auto", "equal", "hybrid"),
    "nllb-moe": Tiny("NllbMoeConfig", "NllbMoeModel", "auto", "refused", "encoder-decoder"),
    "nomic_bert": Tiny("NomicBertConfig", "NomicBertModel", "auto", "equal", "encoder"),
    "nystromformer": Tiny("NystromformerConfig", "NystromformerModel", "auto", "refused", "encoder"),
    "olmo": Tiny("OlmoConfig", "OlmoForCausalLM", "auto", "equal", "decoder"),
    "olmo2": Tiny("Olmo2Config", "Olmo2ForCausalLM", "auto", "equal", "decoder"),
    "olmo3": Tiny("Olmo3Config", "Olmo3ForCausalLM", "auto", "equal", "decoder"),
    "olmo_hybrid": Tiny("OlmoHybridConfig", "OlmoHybridForCausalLM", "auto", "equal", "hybrid"),
    "olmoe": Tiny("OlmoeConfig", "OlmoeForCausalLM", "auto", "equal", "moe decoder"),
    "openai-gpt": Tiny("OpenAIGPTConfig", "OpenAIGPTLMHeadModel", "auto", "refused", "decoder"),
    "openai_privacy_filter": Tiny("OpenAIPrivacyFilterConfig", "OpenAIPrivacyFilterModel", "auto", "equal", "encoder"),
    "opt": Tiny("OPTConfig", "OPTForCausalLM", "auto", "equal", "decoder"),
    "ovis2": Tiny("Ovis2Config", "Ovis2Model", "auto", "equal", "multimodal"),
    "pegasus": Tiny("PegasusConfig", "PegasusForCausalLM", "auto", "equal", "decoder"),
    "pegasus_x": Tiny("PegasusXConfig", "PegasusXModel", "auto", "refused", "encoder-decoder"),
    "persimmon": Tiny("PersimmonConfig", "PersimmonForCausalLM", "auto", "equal", "decoder"),
    "phi": Tiny("PhiConfig", "PhiForCausalLM", "auto", "equal", "decoder"),
    "phi3": Tiny("Phi3Config", "Phi3ForCausalLM", "auto", "equal", "decoder"),
    "phi4_multimodal": Tiny("Phi4MultimodalConfig", "Phi4MultimodalForCausalLM", "auto", "refused", "decoder"),
    "phimoe": Tiny("PhimoeConfig", "PhimoeForCausalLM", "auto", "equal", "moe decoder"),
    "pixio": Tiny("PixioConfig", "PixioModel", "auto", "equal", "vision"),
    "pixtral": Tiny("PixtralVisionConfig", "PixtralVisionModel", "auto", "equal", "vision"),
    "plbart": Tiny("PLBartConfig", "PLBartForCausalLM", "auto", "equal", "encoder-decoder"),
    "poolformer": Tiny("PoolFormerConfig", "PoolFormerModel", "auto", "refused", "no attention"),
    "prophetnet": Tiny("ProphetNetConfig", "ProphetNetForCausalLM", "auto", "refused", "encoder-decoder"),
    "qianfan_ocr": Tiny("QianfanOCRConfig", "QianfanOCRModel", "auto", "equal", "multimodal"),
    "qianfan_ocr_vision": Tiny("QianfanOCRVisionConfig", "QianfanOCRVisionModel", "auto", "equal", "vision"),
    "qwen2": Tiny("Qwen2Config", "Qwen2ForCausalLM", "auto", "equal", "decoder"),
    "qwen2_audio": Tiny("Qwen2AudioConfig", "Qwen2AudioModel", "auto", "equal", "multimodal"),
    "qwen2_moe": Tiny("Qwen2MoeConfig", "Qwen2MoeForCausalLM", "auto", "equal", "moe decoder"),
    "qwen3": Tiny("Qwen3Config", "Qwen3ForCausalLM", "auto", "equal", "decoder"),
    "qwen3_asr": Tiny("Qwen3ASRConfig", "Qwen3ASRModel", "auto", "equal", "multimodal"),
    "qwen3_moe": Tiny("Qwen3MoeConfig", "Qwen3MoeForCausalLM", "auto", "equal", "moe decoder"),
    "qwen3_vl": Tiny("Qwen3VLConfig", "Qwen3VLModel", "auto", "equal", "multimodal"),
    "qwen3_vl_moe": Tiny("Qwen3VLMoeConfig", "Qwen3VLMoeModel", "auto", "equal", "multimodal"),
    "qwen3_vl_moe_text": Tiny("Qwen3VLMoeTextConfig", "Qwen3VLMoeTextModel", "auto", "equal", "encoder"),
    "qwen3_vl_text": Tiny("Qwen3VLTextConfig", "Qwen3VLTextModel", "auto", "equal", "encoder"),
    "radio": Tiny("RadioConfig", "RadioModel", "auto", "equal", "vision"),
    "regnet": Tiny("RegNetConfig", "RegNetModel", "auto", "refused", "no attention"),
    "rembert": Tiny("RemBertConfig", "RemBertForCausalLM", "auto", "refused", "decoder"),
    "resnet": Tiny("ResNetConfig", "ResNetModel", "auto", "refused", "no attention"),
    "roberta": Tiny("RobertaConfig", "RobertaForCausalLM", "auto", "equal", "decoder"),
    "roberta-prelayernorm": Tiny("RobertaPreLayerNormConfig", "RobertaPreLayerNormForCausalLM", "auto", "equal", "decoder"),
    "roc_bert": Tiny("RoCBertConfig", "RoCBertForCausalLM", "auto", "equal", "decoder"),
    "roformer": Tiny("RoFormerConfig", "RoFormerForCausalLM", "auto", "refused", "decoder"),
    "rwkv": Tiny("RwkvConfig", "RwkvForCausalLM", "auto", "refused", "no attention"),
    "sam3_vision_model": Tiny("Sam3VisionConfig", "Sam3VisionModel", "auto", "equal", "vision"),
    "sam3_vit_model": Tiny("Sam3ViTConfig", "Sam3ViTModel", "auto", "equal", "vision"),
    "sam_hq_vision_model": Tiny("SamHQVisionConfig", "SamHQVisionModel", "auto", "refused", "vision"),
    "sam_vision_model": Tiny("SamVisionConfig", "SamVisionModel", "auto", "refused", "vision"),
    "sapiens2": Tiny("Sapiens2Config", "Sapiens2Model", "auto", "equal", "vision"),
    "seamless_m4t": Tiny("SeamlessM4TConfig", "SeamlessM4TModel", "auto", "equal", "multimodal"),
    "seamless_m4t_v2": Tiny("SeamlessM4Tv2Config", "SeamlessM4Tv2Model", "auto", "equal", "multimodal"),
    "seed_oss": Tiny("SeedOssConfig", "SeedOssForCausalLM", "auto", "equal", "decoder"),
    "siglip_vision_model": Tiny("SiglipVisionConfig", "SiglipVisionModel", "auto", "refused", "vision"),
    "smollm3": Tiny("SmolLM3Config", "SmolLM3ForCausalLM", "auto", "equal", "decoder"),
    "smolvlm": Tiny("SmolVLMConfig", "SmolVLMModel", "auto", "equal", "multimodal"),
    "solar_open": Tiny("SolarOpenConfig", "SolarOpenForCausalLM", "auto", "equal", "moe decoder"),
    "splinter": Tiny("SplinterConfig", "SplinterModel", "auto", "refused", "encoder"),
    "squeezebert": Tiny("SqueezeBertConfig", "SqueezeBertModel", "auto", "refused", "encoder"),
    "stablelm": Tiny("StableLmConfig", "StableLmForCausalLM", "auto", "equal", "decoder"),
    "starcoder2": Tiny("Starcoder2Config", "Starcoder2ForCausalLM", "auto", "equal", "decoder"),
    "swiftformer": Tiny("SwiftFormerConfig", "SwiftFormerModel", "auto", "refused", "vision"),
    "switch_transformers": Tiny("SwitchTransformersConfig", "SwitchTransformersModel", "auto", "equal", "encoder-decoder"),
    "t5": Tiny("T5Config", "T5Model", "auto", "equal", "encoder-decoder"),
    "tapas": Tiny("TapasConfig", "TapasModel", "auto", "refused", "encoder"),
    "textnet": Tiny("TextNetConfig", "TextNetModel", "auto", "refused", "no attention"),
    "tipsv2": Tiny("Tipsv2Config", "Tipsv2Model", "auto", "equal", "multimodal"),
    "tipsv2_text_model": Tiny("Tipsv2TextConfig", "Tipsv2TextModel", "auto", "equal", "encoder"),
    "tipsv2_vision_model": Tiny("Tipsv2VisionConfig", "Tipsv2VisionModel", "auto", "equal", "vision"),
    "ultrabert": Tiny("UltrabertConfig", "UltrabertModel", "auto", "equal", "encoder"),
    "ultravbert": Tiny("UltraVBertConfig", "UltraVBertModel", "auto", "refused", "multimodal"),
    "umt5": Tiny("UMT5Config", "UMT5Model", "auto", "equal", "encoder-decoder"),
    "unispeech": Tiny("UniSpeechConfig", "UniSpeechModel", "auto", "equal", "audio"),
    "unispeech-sat": Tiny("UniSpeechSatConfig", "UniSpeechSatModel", "auto", "equal", "audio"),
    "vaultgemma": Tiny("VaultGemmaConfig", "VaultGemmaForCausalLM", "auto", "equal", "decoder"),
    "video_llama_3": Tiny("VideoLlama3Config", "VideoLlama3Model", "auto", "equal", "multimodal"),
    "video_llava": Tiny("VideoLlavaConfig", "VideoLlavaModel", "auto", "equal", "multimodal"),
    "vipllava": Tiny("VipLlavaConfig", "VipLlavaModel", "auto", "equal", "multimodal"),
    "visual_bert": Tiny("VisualBertConfig", "VisualBertModel", "auto", "refused", "encoder"),
    "vit": Tiny("ViTConfig", "ViTModel", "auto", "equal", "vision"),
    "vit_mae": Tiny("ViTMAEConfig", "ViTMAEModel", "auto", "equal", "vision"),
    "vit_msn": Tiny("ViTMSNConfig", "ViTMSNModel", "auto", "equal", "vision"),
    "vitdet": Tiny("VitDetConfig", "VitDetModel", "auto", "refused", "vision"),
    "voxtral": Tiny("VoxtralConfig", "VoxtralModel", "auto", "equal", "multimodal"),
    "voxtral_realtime_encoder": Tiny("VoxtralRealtimeEncoderConfig", "VoxtralRealtimeEncoder", "auto", "equal", "audio"),
    "wav2vec2": Tiny("Wav2Vec2Config", "Wav2Vec2Model", "auto", "equal", "audio"),
    "wav2vec2-conformer": Tiny("Wav2Vec2ConformerConfig", "Wav2Vec2ConformerModel", "auto", "equal", "audio"),
    "wavlm": Tiny("WavLMConfig", "WavLMModel", "auto", "refused", "no attention"),
    "whisper": Tiny("WhisperConfig", "WhisperForCausalLM", "auto", "equal", "encoder-decoder"),
    "xglm": Tiny("XGLMConfig", "XGLMForCausalLM", "auto", "refused", "decoder"),
    "xlm": Tiny("XLMConfig", "XLMWithLMHeadModel", "auto", "refused", "decoder"),
    "xlm-roberta": Tiny("XLMRobertaConfig", "XLMRobertaForCausalLM", "auto", "equal", "decoder"),
    "xlm-roberta-xl": Tiny("XLMRobertaXLConfig", "XLMRobertaXLForCausalLM", "auto", "equal", "decoder"),
    "xlnet": Tiny("XLNetConfig", "XLNetLMHeadModel", "auto", "refused", "decoder"),
    "yoso": Tiny("YosoConfig", "YosoModel", "auto", "refused", "no attention"),
}

POPULATION: dict[str, Tiny] = {**GENERIC, **VARIANTS}

# What a newer transformers release changes: architectures it routes through the attention interface.
NEWER: dict[str, dict[str, str]] = {
    "5.24.0": {"codegen": "equal", "gptj": "equal"},  # 5.24 routes CodeGen and GPT-J through the interface
}


def population(version: str) -> dict[str, Tiny]:
    """The population with each verdict as of the transformers release ``version`` (pinned: requirements-models.txt)."""
    from packaging.version import Version

    table = dict(POPULATION)
    for release, changes in NEWER.items():
        if Version(version) >= Version(release):
            table.update({name: table[name]._replace(expect=expect) for name, expect in changes.items()})
    return table
