"""attnlib inside tiny transformers models of many architectures: eager's numbers, or a clear refusal.

The population (tests/hf_population.py) holds each architecture's tiny config and what attnlib must do with it.
For every one, the model is built with eager attention (seeded), run on a right-padded batch, then run with SDPA
and built a second time with ``attn_implementation="attnlib"`` on the same weights:

- ``"equal"``: attnlib matches eager within twice SDPA's own difference from eager (at least 1e-6), on the real
  tokens, and it is called in every layer SDPA is called in (no layer quietly left to another implementation);
- ``"refused"``: loading it with "attnlib" raises :class:`attnlib.hf.UnsupportedAttentionError`, naming the
  layer or part and why, and ending with what to load instead; switching the eager model to "attnlib" raises
  the same and leaves the model as it was.

Causal models are also probed: changing only the last token changes no earlier output (beyond what eager's own
rounding changes); a few decoders generate past their sliding window, token for token as eager does.

    make test-hf                                         # this matrix, on the pinned transformers
    make test-hf-next                                    # the same on the newest transformers, in .venv-hf-next
"""

from __future__ import annotations

import collections
import contextlib

import pytest
import torch

pytest.importorskip("transformers")

import transformers as T  # noqa: E402
from transformers import AttentionInterface  # noqa: E402
from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS  # noqa: E402

import attnlib  # noqa: E402
from attnlib import hf  # noqa: E402
from tests import hf_population as pop  # noqa: E402

attnlib.use_in_transformers()

POPULATION = pop.population(T.__version__)
HINT = 'load the model with attn_implementation="eager" instead'


def build(spec: pop.Tiny, implementation: str) -> torch.nn.Module:
    torch.manual_seed(0)
    config = pop.tiny_config(getattr(T, spec.config), spec.overrides)
    return getattr(T, spec.model)._from_config(config, attn_implementation=implementation).eval()


@contextlib.contextmanager
def counted(name: str):
    """Count the calls of the attention function registered under ``name``, per layer (by id)."""
    original = ALL_ATTENTION_FUNCTIONS[name]
    calls: collections.Counter = collections.Counter()

    def counting(module, *args, **kwargs):
        calls[id(module)] += 1
        return original(module, *args, **kwargs)

    AttentionInterface.register(name, counting)
    try:
        yield calls
    finally:
        AttentionInterface.register(name, original)


def run(model: torch.nn.Module, inputs: dict) -> torch.Tensor:
    with torch.no_grad():
        return pop.output(model(**inputs))


def layers(model: torch.nn.Module, calls: collections.Counter) -> set[str]:
    return {name or "(the model)" for name, module in model.named_modules() if calls[id(module)]}


def real_tokens(difference: torch.Tensor, inputs: dict) -> torch.Tensor:
    """The rows of real tokens. A padded query whose keys are all padding (a sliding window past the end) has
    no defined output: attnlib gives it zero weights, eager a uniform average of padding."""
    mask = inputs.get("attention_mask")
    if "decoder_input_ids" in inputs or mask is None or difference.shape[:2] != mask.shape:
        return difference
    return difference[mask.bool()]


def assert_clear(message: str, name: str) -> None:
    """A refusal names a class (a layer or a model part), says why, and what to load instead."""
    assert message.endswith(HINT), f"{name}: {message}"
    first = message.split()[0]
    assert first[:1].isupper() or message.startswith("attnlib's attention cannot run inside"), f"{name}: {message}"
    assert "Error" not in message and "Traceback" not in message, f"{name}: {message}"


@pytest.mark.parametrize("name", sorted(POPULATION))
def test_attnlib_gives_eager_numbers_or_refuses_by_name(name, record_property):
    spec = POPULATION[name]
    try:
        ours = build(spec, "attnlib")
    except hf.UnsupportedAttentionError as refusal:
        record_property("refused", str(refusal))
        assert spec.expect == "refused", f"{name}: refused, but the population expects it equal: {refusal}"
        assert_clear(str(refusal), name)
        eager = build(spec, "eager")
        with pytest.raises(hf.UnsupportedAttentionError):
            eager.set_attn_implementation("attnlib")
        assert eager.config._attn_implementation == "eager", f"{name}: a refused switch left the model changed"
        return
    eager = build(spec, "eager")
    inputs = pop.inputs(pop.kind_of(spec, eager), eager, eager.config)
    expected = run(eager, inputs)
    sdpa_diff, sdpa_layers = 1e-6, set()
    try:
        eager.set_attn_implementation("sdpa")
        with counted("sdpa") as calls:
            sdpa_diff = max(real_tokens(run(eager, inputs) - expected, inputs).abs().max().item(), 1e-6)
        sdpa_layers = layers(eager, calls)
    except ValueError:  # transformers refuses SDPA for this model (softcap, sinks)
        pass
    ours.load_state_dict(eager.state_dict())
    try:
        with counted("attnlib") as calls:
            got = run(ours, inputs)
    except hf.UnsupportedAttentionError as refusal:  # a keyword it cannot honour, refused at the first call
        record_property("refused", str(refusal))
        assert spec.expect == "refused", f"{name}: refused, but the population expects it equal: {refusal}"
        assert_clear(str(refusal), name)
        return
    assert spec.expect == "equal", f"{name}: attnlib ran it, but the population expects a refusal"
    diff = real_tokens(got - expected, inputs).abs().max().item()
    record_property("max_diff", diff)
    record_property("calls", sum(calls.values()))
    assert diff <= 2 * sdpa_diff, f"{name}: attnlib differs from eager by {diff:.3g} (sdpa {sdpa_diff:.3g})"
    assert calls, f"{name}: attnlib was never called"
    missing = sdpa_layers - layers(ours, calls)
    assert not missing, f"{name}: SDPA ran in {sorted(missing)[:3]}, attnlib did not"


CAUSAL = sorted(name for name, spec in POPULATION.items() if spec.expect == "equal" and (
    "CausalLM" in spec.model or "LMHead" in spec.model or spec.family == "encoder-decoder"))


def last_token_probe(model: torch.nn.Module, inputs: dict) -> tuple[float, float]:
    """How much changing only the last (decoder) token changes (the last output, every earlier output)."""
    inputs = {k: v for k, v in inputs.items() if k != "attention_mask"}
    field = "decoder_input_ids" if "decoder_input_ids" in inputs else "input_ids"
    changed = dict(inputs, **{field: inputs[field].clone()})
    changed[field][:, -1] = (changed[field][:, -1] + 1 - 3) % (pop.V - 3) + 3  # another token, never a special one
    before, after = run(model, inputs), run(model, changed)
    return (after[:, -1] - before[:, -1]).abs().max().item(), (after[:, :-1] - before[:, :-1]).abs().max().item()


@pytest.mark.parametrize("name", CAUSAL)
def test_changing_the_last_token_changes_no_earlier_output(name):
    spec = POPULATION[name]
    model = build(spec, "eager")
    inputs = pop.inputs(pop.kind_of(spec, model), model, model.config)
    _, eager_leak = last_token_probe(model, inputs)
    model.set_attn_implementation("attnlib")
    last, leak = last_token_probe(model, inputs)
    assert last > 0  # the probe changed something
    # Nothing before the last token may change, beyond eager's own rounding (a mixture of experts computes its
    # experts over the whole batch, so another token can move an earlier output in the last bit, in eager too).
    assert leak <= max(2 * eager_leak, 1e-6), f"{name}: an earlier output moved by {leak:.3g} (eager {eager_leak:.3g})"


GENERATORS = ["llama", "gemma", "mistral_window", "gemma2_softcap_window", "gpt_oss_sinks_window", "t5_generation",
              "qwen3_moe", "deepseek_v3_mla"]


@pytest.mark.parametrize("name", [g for g in GENERATORS if g in POPULATION])
def test_greedy_generation_with_a_cache_is_eager_s(name):
    spec = POPULATION[name]
    model = build(spec, "eager")
    model.generation_config.pad_token_id = 0
    if model.config.is_encoder_decoder and model.generation_config.decoder_start_token_id is None:
        model.generation_config.decoder_start_token_id = 0  # T5's: the decoder starts from the pad token
    kind = pop.kind_of(spec, model)
    inputs = pop.inputs(kind, model, model.config)
    inputs.pop("decoder_input_ids", None)
    if kind == "causal":  # a decoder generates after left padding
        inputs["attention_mask"] = inputs["attention_mask"].flip(-1)
    out = {}
    for implementation in ("eager", "attnlib"):
        model.set_attn_implementation(implementation)
        with torch.no_grad():
            out[implementation] = model.generate(**inputs, max_new_tokens=8, do_sample=False, min_new_tokens=8)
    assert out["attnlib"].shape[-1] >= 8
    assert torch.equal(out["attnlib"], out["eager"])


WINDOWS = {name: spec for name, spec in POPULATION.items() if spec.expect == "equal" and (
    "sliding_window" in spec.overrides or "local_attention" in spec.overrides)}


@pytest.mark.parametrize("name", sorted(WINDOWS))
def test_the_sliding_window_reaches_attnlib_through_the_mask(name):
    # The matrix compares with eager; this shows that a window shorter than the text (4 of 12) was in force:
    # the same weights with a window longer than the text give other numbers.
    spec = WINDOWS[name]
    key = "sliding_window" if "sliding_window" in spec.overrides else "local_attention"
    outputs = []
    for window in (spec.overrides[key], 128):
        model = build(spec._replace(overrides={**spec.overrides, key: window}), "attnlib")
        inputs = pop.inputs(pop.kind_of(spec, model), model, model.config)
        outputs.append(real_tokens(run(model, inputs), inputs))
    assert (outputs[0] - outputs[1]).abs().max() > 1e-3


def test_a_keyword_that_changes_the_result_is_refused_by_name_at_the_first_call():
    # DeepSeek-V3.2 selects index_topk keys per query and passes their indices; with index_topk < T eager
    # attends to fewer keys than the mask allows, and attnlib would silently attend to all of them.
    spec = pop.Tiny("DeepseekV32Config", "DeepseekV32ForCausalLM", "causal", "equal", "moe decoder", dict(
        num_key_value_heads=4, index_topk=4, kv_lora_rank=8, q_lora_rank=8, qk_rope_head_dim=4, qk_nope_head_dim=4,
        v_head_dim=4, index_head_dim=8, index_n_heads=2, first_k_dense_replace=2, n_group=1, topk_group=1))
    model = build(spec, "attnlib")
    with pytest.raises(hf.UnsupportedAttentionError) as err:
        run(model, pop.inputs("causal", model, model.config))
    assert str(err.value) == (
        "DeepseekV32Attention (model_type 'deepseek_v32') passes indices= to its attention function (the top-k key "
        "indices of DeepSeek's sparse attention, which select a few keys per query); attnlib's attention does not "
        'implement it and would compute other numbers than the model\'s own attention: load the model with '
        'attn_implementation="eager" instead'
    )


def test_gpt_neo_switched_to_attnlib_raises_instead_of_keeping_eager():
    # transformers cannot switch GPT-Neo's attention (its layers compute it themselves) and only logs a warning.
    config = pop.tiny_config(T.GPTNeoConfig, dict(attention_types=[[["global", "local"], 1]], window_size=4))
    model = T.GPTNeoForCausalLM._from_config(config, attn_implementation="eager")
    with pytest.raises(hf.UnsupportedAttentionError, match=r"^GPTNeoForCausalLM .* kept attn_implementation='eager'"):
        model.set_attn_implementation("attnlib")
    assert model.config._attn_implementation == "eager"
