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
``sdpa_mask`` with both shortcuts off, so the attention always receives the mask it must apply. That mask
already carries a model's sliding window (Mistral, Gemma 2 and 3, Starcoder2, ModernBERT, GPT-OSS), so the
``sliding_window`` keyword needs no work of its own.

What attnlib cannot honour it refuses, by name, never ignores: a keyword argument that changes the
attention's result and that attnlib does not implement (``indices``, DeepSeek's sparse key selection, and
any other non-None keyword it does not know) raises :class:`UnsupportedAttentionError`, and so does loading
a model whose layers compute their own attention instead of calling the interface (BLOOM, MPT, Falcon,
GPT-J, DeBERTa-v2, ...). Three extras are one line of attention each and are implemented, each equal to
transformers' eager attention: ``position_bias`` (T5's relative position bias, added to the scores),
``softcap`` (Gemma 2: scores -> softcap * tanh(scores / softcap)) and attention sinks (``s_aux``, GPT-OSS:
one learned logit per head that joins each softmax's denominator and receives no value).

Shape legend: B batch, Hq query heads, Hkv key/value heads, Tq queries, Tk keys, Dh head width.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import re
import sys
import textwrap
from typing import Any

import torch
import torch.nn.functional as F

from .attention import HALF, _masked_softmax, _repeat_kv_heads, scaled_dot_product_attention

NAME = "attnlib"
EAGER_HINT = 'load the model with attn_implementation="eager" instead'

# Keywords transformers passes that eager attention ignores too, so attnlib may ignore them: the mask
# already carries the sliding window; the others are bookkeeping (caches, outputs) or serve only the
# flash-attention kernels (packed sequences), for which eager reads the mask as attnlib does.
IGNORED = frozenset({
    "sliding_window", "position_ids", "cache_position", "past_key_values", "past_key_value", "use_cache",
    "output_attentions", "output_hidden_states", "return_dict", "cu_seq_lens_q", "cu_seq_lens_k",
    "max_length_q", "max_length_k", "deterministic", "layer_idx", "position_embeddings", "is_causal",
    "token_type_ids", "head_mask", "layer_head_mask", "encoder_hidden_states", "encoder_attention_mask",
    "output_router_logits", "num_items_in_batch", "seq_idx", "max_seqlen_q", "max_seqlen_k",
})
# Keywords that change the result and that attnlib refuses, with what they do (for the message).
REFUSED = {
    "indices": "the top-k key indices of DeepSeek's sparse attention, which select a few keys per query",
    "block_indices": "the indices of block-sparse attention, which select blocks of keys per query",
}


class UnsupportedAttentionError(NotImplementedError):
    """attnlib's attention cannot give this model's numbers: a keyword it does not implement, or a model
    whose layers never call transformers' attention interface."""


def _model_name(module: torch.nn.Module) -> str:
    """``'T5Attention (model_type t5)'``: the layer's class and, when it has a config, the model type."""
    config = getattr(module, "config", None)
    model_type = getattr(config, "model_type", None)
    name = type(module).__name__
    return f"{name} (model_type {model_type!r})" if model_type else name


def _refuse(module: torch.nn.Module, keyword: str, what: str) -> UnsupportedAttentionError:
    return UnsupportedAttentionError(
        f"{_model_name(module)} passes {keyword}= to its attention function ({what}); attnlib's attention "
        f"does not implement it and would compute other numbers than the model's own attention: {EAGER_HINT}"
    )


def _read_extras(module: torch.nn.Module, query: torch.Tensor, kwargs: dict[str, Any]) -> dict[str, Any]:
    """Check every keyword transformers passed; return the extras attnlib implements (None when absent).

    ``position_bias`` float (B or 1, Hq or 1, Tq, Tk) added to the scores; ``softcap`` a positive float;
    ``sink`` a float broadcastable to (B, Hq, Tq, 1), from ``s_aux`` (Hq,) or ``sinks`` (B, Hq, Tq, 1).
    """
    extras = {"position_bias": None, "softcap": None, "sink": None}
    for keyword, value in kwargs.items():
        if value is None or keyword in IGNORED:
            continue
        if keyword == "position_bias":
            if not (isinstance(value, torch.Tensor) and value.is_floating_point()):
                got = type(value).__name__ if not isinstance(value, torch.Tensor) else f"dtype {value.dtype}"
                raise _refuse(module, keyword, f"expected a float tensor added to the scores, got {got}")
            extras["position_bias"] = value
        elif keyword == "softcap":
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise _refuse(module, keyword, f"expected a positive float, got {value!r}")
            extras["softcap"] = float(value)
        elif keyword in ("s_aux", "sinks"):
            hq = query.shape[1]
            if not (isinstance(value, torch.Tensor) and value.is_floating_point()):
                raise _refuse(module, keyword, f"attention sinks must be a float tensor, got {type(value).__name__}")
            sink = value.reshape(1, hq, 1, 1) if value.dim() == 1 and value.numel() == hq else value
            if sink.dim() != 4 or sink.shape[-1] != 1:
                raise _refuse(module, keyword, "attention sinks of a shape other than (Hq,) or (B, Hq, Tq, 1)")
            extras["sink"] = sink
        elif keyword in REFUSED:
            raise _refuse(module, keyword, REFUSED[keyword])
        else:
            raise _refuse(module, keyword, "a keyword attnlib does not know")
    return extras


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
        **kwargs: the rest of what transformers passes. Implemented: ``position_bias`` (float
            (B or 1, Hq or 1, Tq, Tk), added to the scores), ``softcap`` (scores -> softcap *
            tanh(scores / softcap), before the mask and the bias), ``s_aux`` (Hq,) or ``sinks``
            (B, Hq, Tq, 1) (one more logit in each softmax's denominator, with no value).
            Ignored, as eager attention ignores them: None values and the names in :data:`IGNORED`
            (``sliding_window``, which the mask carries, caches, flash-attention packing). Any
            other keyword raises.

    Returns:
        ``(output, weights)``: output (B, Tq, Hq, Dh), the layout transformers expects back;
        weights (B, Hq, Tq, Tk) (without the sink's share, so a row sums to 1 minus it).

    Raises:
        UnsupportedAttentionError (a NotImplementedError): a keyword attnlib does not implement
            (``indices``, ...), named with the layer's class and the model type.
        ValueError: a causal layer received no mask for more than one query: the mask function was
            not registered, or transformers skipped the causal mask (see :func:`use_in_transformers`).

    Source: Vaswani et al. 2017, "Attention Is All You Need", eq. 1; Ainslie et al. 2023, "GQA";
    Raffel et al. 2020, "Exploring the Limits of Transfer Learning with a Unified Text-to-Text
    Transformer" (T5), sec. 2.1 (relative position bias); Gemma Team 2024, "Gemma 2", sec. 2 (logit
    soft-capping); Xiao et al. 2024, "Efficient Streaming Language Models with Attention Sinks";
    OpenAI 2025, "gpt-oss-120b & gpt-oss-20b Model Card" (a learned sink logit per head).
    """
    extras = _read_extras(module, query, kwargs)
    causal = kwargs.get("is_causal")
    causal = getattr(module, "is_causal", False) if causal is None else causal
    if attention_mask is None and causal and query.shape[-2] > 1:
        raise ValueError(
            "a causal attention layer received no attention mask, so attnlib would let every token see the "
            "future; call attnlib.use_in_transformers() before loading the model, which registers the mask "
            "function too"
        )
    dropout_p = dropout if module.training else 0.0
    if all(x is None for x in extras.values()):
        gqa = query.shape[1] != key.shape[1]  # Hq != Hkv: each key/value head serves Hq / Hkv query heads
        output, weights = scaled_dot_product_attention(
            query, key, value, attn_mask=attention_mask, dropout_p=dropout_p, scale=scaling, enable_gqa=gqa,
        )  # (B, Hq, Tq, Dh), (B, Hq, Tq, Tk)
    else:
        output, weights = _attention_with_extras(query, key, value, attention_mask, scaling, dropout_p, **extras)
    return output.transpose(1, 2).contiguous(), weights  # (B, Hq, Tq, Dh) -> (B, Tq, Hq, Dh)


def _attention_with_extras(query, key, value, attention_mask, scaling, dropout_p, position_bias, softcap, sink):
    """softmax(softcap(Q K^T * scale) + position_bias + mask, with a sink logit) V, written out.

    Half precision is computed in float32, as :func:`attnlib.scaled_dot_product_attention` does.
    """
    dtype = query.dtype
    compute = torch.float32 if dtype in HALF else dtype
    if query.shape[1] != key.shape[1]:
        key, value = _repeat_kv_heads(query, key, value)  # (B, Hkv, Tk, Dh) -> (B, Hq, Tk, Dh)
    query, key, value = query.to(compute), key.to(compute), value.to(compute)
    scale = query.shape[-1] ** -0.5 if scaling is None else scaling
    scores = (query * scale) @ key.transpose(-2, -1)  # (B, Hq, Tq, Dh) @ (B, Hq, Dh, Tk) -> (B, Hq, Tq, Tk)
    if softcap is not None:
        scores = softcap * torch.tanh(scores / softcap)  # Gemma 2: every score into (-softcap, softcap)
    if position_bias is not None:
        scores = scores + position_bias.to(compute)  # T5: a learned bias per head and relative distance
    mask = None
    if attention_mask is not None:
        if attention_mask.dtype == torch.bool:
            mask = attention_mask  # True = may attend
        else:
            scores = scores + attention_mask.to(compute)  # a float mask is added
    if sink is not None:  # one more column: the sink's logit, which may always be attended and has no value
        sink = sink.to(compute).expand(*scores.shape[:-1], 1)  # (B, Hq, Tq, 1)
        scores = torch.cat([scores, sink], dim=-1)  # (B, Hq, Tq, Tk + 1)
        if mask is not None:
            rows = scores.shape[:-1]  # (B, Hq, Tq)
            mask = torch.cat([mask.expand(*rows, mask.shape[-1]), mask.new_ones(*rows, 1)], dim=-1)  # sink: True
    weights = _masked_softmax(scores, mask)  # (B, Hq, Tq, Tk [+ 1])
    if sink is not None:
        weights = weights[..., :-1]  # the sink's share is dropped: (B, Hq, Tq, Tk)
    if dropout_p > 0.0:
        weights = F.dropout(weights, p=dropout_p)
    output = weights @ value  # (B, Hq, Tq, Tk) @ (B, Hq, Tk, Dh) -> (B, Hq, Tq, Dh)
    return output.to(dtype), weights.to(dtype)


# ----------------------------------------------------------------------------------------------- the model, per layer


# Model types that transformers runs with neither SDPA nor its attention backend, whose every attention layer calls
# the attention interface with the mask attnlib's mask function builds; tests/test_hf_matrix.py proves each equal to
# eager (padded batch, causality probe, cached generation where it decodes).
PROVEN_EQUAL = frozenset({"longt5", "switch_transformers"})


def _sources(cls: type) -> list[ast.AST]:
    """The parsed methods of ``cls`` and its bases up to torch's Module (each parsed once)."""
    trees = []
    for klass in cls.__mro__:
        module = klass.__module__
        if module.startswith("torch") or (module.startswith("transformers.") and not module.startswith(
                "transformers.models.")):
            continue  # torch's Module, transformers' PreTrainedModel and mixins: machinery, not this layer's code
        trees += _class_trees(klass)
    return trees


@functools.cache
def _class_trees(klass: type) -> tuple[ast.AST, ...]:
    trees = []
    for value in vars(klass).values():
        function = getattr(value, "__func__", value)
        if not inspect.isfunction(function):
            continue
        try:
            trees.append(ast.parse(textwrap.dedent(inspect.getsource(function))))
        except (OSError, TypeError, SyntaxError):  # no source (built in a notebook cell): nothing to read
            continue
    return tuple(trees)


def _names(trees: list[ast.AST]) -> set[str]:
    """Every name and attribute the methods use: ``F.softmax`` gives "F" and "softmax"."""
    found = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Name):
                found.add(node.id)
            elif isinstance(node, ast.Attribute):
                found.add(node.attr)
    return found


@functools.cache
def own_attention(cls: type) -> str | None:
    """Why a layer of class ``cls`` computes attention itself instead of calling transformers' interface; None if not.

    Read from the class's own methods (and its bases'), not from its file: a layer calls the interface when its
    methods use ``ALL_ATTENTION_FUNCTIONS``. It computes attention itself when it is torch's own
    ``nn.MultiheadAttention``, calls torch's ``scaled_dot_product_attention``, or is an attention layer (its class
    name says so, as transformers' classes do) that takes a softmax of its own.
    """
    if issubclass(cls, torch.nn.MultiheadAttention):
        return "is torch's nn.MultiheadAttention"
    names = _names(_sources(cls))
    if "ALL_ATTENTION_FUNCTIONS" in names:
        return None
    if "scaled_dot_product_attention" in names:
        return "calls torch's scaled_dot_product_attention itself"
    if re.search(r"Attention|Attn", cls.__name__) and names & {"softmax", "log_softmax", "Softmax"}:
        return "computes its own softmax of the scores"
    return None


def routes(cls: type) -> bool:
    """True when a layer of class ``cls`` calls transformers' attention interface (``ALL_ATTENTION_FUNCTIONS``)."""
    return not issubclass(cls, torch.nn.MultiheadAttention) and "ALL_ATTENTION_FUNCTIONS" in _names(_sources(cls))


def _layers(model: torch.nn.Module):
    """(path, module, the attention implementation it runs under) for every submodule of ``model``.

    A module runs under the implementation of the nearest config above it (its own ``config`` first), which is
    how transformers' layers read it (``self.config._attn_implementation``).
    """
    from transformers import PretrainedConfig

    stack = [("", model, None)]
    while stack:
        path, module, implementation = stack.pop()
        config = getattr(module, "config", None)
        if isinstance(config, PretrainedConfig):
            implementation = config._attn_implementation
        yield path, module, implementation
        for name, child in reversed(list(module.named_children())):
            stack.append((f"{path}.{name}" if path else name, child, implementation))


def check_model(model: torch.nn.Module, *, whole: bool = True) -> None:
    """Refuse, by name, a model instance that attnlib cannot run in every layer that uses it.

    Decided per layer of this instance, for the layers that run under ``attn_implementation="attnlib"``:

    - a layer that computes attention itself (:func:`own_attention`) would leave attnlib unused, or misread the
      mask it builds: refused, naming the layer and where it sits;
    - a model part (a ``PreTrainedModel``) whose layers call the interface, but which transformers declares fit for
      neither SDPA nor its attention backend (``_supports_sdpa``, ``_supports_attention_backend``), is refused
      unless its model type is in :data:`PROVEN_EQUAL`: transformers does not vouch that its code handles a
      boolean mask, and it is the same mask SDPA receives;
    - a model in which no layer calls the interface would not use attnlib at all: refused (``whole=True``, the
      default: as a model is loaded or switched; a part being built, such as a vocoder inside a speech model, may
      well have no attention of its own).

    A part that transformers declares fit for SDPA reads the boolean mask right: transformers tests it against
    eager with that very mask, the one attnlib's mask function builds (:func:`mask_function`).

    Raises:
        UnsupportedAttentionError: naming the layer's class, its path in the model, the model type, why, and what
            to load instead.
    """
    from transformers import PreTrainedModel

    layers = [(path, module) for path, module, implementation in _layers(model) if implementation == NAME]
    for path, module in layers:  # the layers first: their refusal names the very layer
        reason = own_attention(type(module))
        if reason is not None:
            where = f" at {path}" if path else ""
            raise UnsupportedAttentionError(
                f"{_model_name(module)}{where} {reason}: attn_implementation=\"attnlib\" would not reach it (or it "
                f"would misread attnlib's mask): {EAGER_HINT}")
    for _, module in layers:
        if isinstance(module, PreTrainedModel) and (refusal := _undeclared(module)) is not None:
            raise refusal
    if whole and layers and not any(routes(type(module)) for _, module in layers):
        raise UnsupportedAttentionError(
            f"{_model_name(model)} has no layer that calls transformers' attention interface, so "
            f"attn_implementation=\"attnlib\" would not use attnlib at all: {EAGER_HINT}")


def _undeclared(part: torch.nn.Module) -> UnsupportedAttentionError | None:
    """The refusal of a model part that transformers runs with neither SDPA nor its attention backend, if it has
    layers calling the interface and is not proven equal; else None."""
    cls = type(part)
    if getattr(cls, "_supports_sdpa", False) or getattr(cls, "_supports_attention_backend", False):
        return None
    if getattr(part.config, "model_type", None) in PROVEN_EQUAL:
        return None
    if not any(routes(type(m)) for m in part.modules()):
        return None
    return UnsupportedAttentionError(
        f"{_model_name(part)} is declared by transformers fit for neither torch's SDPA nor its attention backend "
        f"(_supports_sdpa and _supports_attention_backend are False): its code is not known to read a boolean mask "
        f"right, and attnlib's is one: {EAGER_HINT}")


@functools.cache
def implementation_tables(module_name: str) -> tuple[str, ...]:
    """The module-level tables of a modeling module that pick a layer class by attention implementation.

    ``GIT_SELF_ATTENTION_CLASSES = {"eager": ..., "sdpa": ...}`` and the like (SAM, GPT-Neo, Falcon, ...): a model
    built with another implementation's name looks it up and fails with a ``KeyError``.
    """
    module = sys.modules.get(module_name)
    if module is None:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            return ()
    try:
        tree = ast.parse(inspect.getsource(module))
    except (OSError, TypeError, SyntaxError):
        return ()
    tables = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict):
            keys = {k.value for k in node.value.keys if isinstance(k, ast.Constant)}
            if "eager" in keys:
                tables += [t.id for t in node.targets if isinstance(t, ast.Name)]
    return tuple(tables)


def _guard_load(get_correct_attn_implementation):
    """Wrap ``PreTrainedModel.get_correct_attn_implementation`` (run as each model part is built) to refuse
    "attnlib" for a part whose modeling module picks its layers from a table keyed by implementation."""
    if getattr(get_correct_attn_implementation, "_attnlib_guard", False):
        return get_correct_attn_implementation

    @functools.wraps(get_correct_attn_implementation)
    def guarded(self, requested_attention, *args, **kwargs):
        if requested_attention == NAME:
            defining = next((c for c in type(self).__mro__ if c.__module__.startswith("transformers")), type(self))
            tables = implementation_tables(defining.__module__)
            if tables:
                raise UnsupportedAttentionError(
                    f"attnlib's attention cannot run inside {type(self).__name__}: it builds its attention layers from "
                    f"a table with one class per attention implementation ({', '.join(tables)}), and attnlib is not "
                    f"one of them: {EAGER_HINT}")
        return get_correct_attn_implementation(self, requested_attention, *args, **kwargs)

    guarded._attnlib_guard = True
    return guarded


def _guard_post_init(post_init):
    """Wrap ``PreTrainedModel.post_init`` (run when a model part is complete) to check the instance."""
    if getattr(post_init, "_attnlib_guard", False):
        return post_init

    @functools.wraps(post_init)
    def checked(self, *args, **kwargs):
        result = post_init(self, *args, **kwargs)
        if any(implementation == NAME for _, _, implementation in _layers(self)):
            check_model(self, whole=False)  # each part as it is built; the whole model once it is loaded
        return result

    checked._attnlib_guard = True
    return checked


def _guard_build(build):
    """Wrap a classmethod that returns a model (``from_pretrained``, ``_from_config``) to check the whole model."""
    function = getattr(build, "__func__", build)
    if getattr(function, "_attnlib_guard", False):
        return build

    @functools.wraps(function)
    def built(cls, *args, **kwargs):
        model = function(cls, *args, **kwargs)
        if isinstance(model, torch.nn.Module) and any(impl == NAME for _, _, impl in _layers(model)):
            check_model(model)
        return model

    built._attnlib_guard = True
    return classmethod(built)


def _guard_switch(set_attn_implementation):
    """Wrap ``PreTrainedModel.set_attn_implementation``: a part asked for "attnlib" that kept its implementation
    raises, and the instance is checked; on a refusal every part gets its implementation back."""
    if getattr(set_attn_implementation, "_attnlib_guard", False):
        return set_attn_implementation

    @functools.wraps(set_attn_implementation)
    def switched(self, attn_implementation, *args, **kwargs):
        configs = {id(m.config): m.config for m in self.modules() if hasattr(m, "config") and
                   hasattr(m.config, "_attn_implementation_internal")}
        before = {key: config._attn_implementation_internal for key, config in configs.items()}
        if NAME not in (attn_implementation, *_values(attn_implementation)):
            return set_attn_implementation(self, attn_implementation, *args, **kwargs)
        try:
            result = set_attn_implementation(self, attn_implementation, *args, **kwargs)  # may refuse a part midway
            if attn_implementation == NAME and self.config._attn_implementation != NAME:
                raise UnsupportedAttentionError(
                    f"{_model_name(self)} kept attn_implementation={self.config._attn_implementation!r}: transformers "
                    f"cannot switch this model's attention, whose layers compute it themselves, so attnlib would not "
                    f"be used: {EAGER_HINT}")
            check_model(self)
        except UnsupportedAttentionError:
            for key, config in configs.items():
                config._attn_implementation_internal = before[key]
            raise
        return result

    switched._attnlib_guard = True
    return switched


def _values(request: Any) -> list[Any]:
    """The implementations a (nested) ``set_attn_implementation`` dict asks for."""
    if not isinstance(request, dict):
        return []
    return [v for value in request.values() for v in ([value] if not isinstance(value, dict) else _values(value))]


def mask_function(*args: Any, **kwargs: Any) -> torch.Tensor | None:
    """transformers' ``sdpa_mask`` (bool, True = may attend, (B, 1, Tq, Tk)) that never skips a causal mask.

    ``sdpa_mask`` returns None for a causal batch without padding, counting on torch's ``is_causal=True``;
    attnlib's attention is told everything by its mask, so that shortcut is turned off here. The mask
    carries the model's sliding window (``local_size``), when it has one. Where SDPA gets no mask at all (a
    bidirectional batch without padding), attnlib gets none either: a model's layers then see what they see
    under SDPA, the very mask transformers tests them with.
    """
    from transformers.masking_utils import sdpa_mask

    kwargs["allow_is_causal_skip"] = False
    return sdpa_mask(*args, **kwargs)


def use_in_transformers() -> str:
    """Register attnlib's attention and mask function with transformers under the name ``"attnlib"``.

    Afterwards ``AutoModel.from_pretrained(..., attn_implementation="attnlib")`` (or
    ``model.set_attn_implementation("attnlib")``) runs every attention layer of a model that uses
    transformers' ``AttentionInterface`` (BERT, Llama and most recent models) through
    :func:`attnlib.scaled_dot_product_attention`. Loading a model whose layers compute their own
    attention (BLOOM, MPT, Falcon, GPT-J, DeBERTa-v2, ...) with "attnlib" raises
    :class:`UnsupportedAttentionError` instead of running without attnlib: transformers' check of the
    requested implementation (``PreTrainedModel.get_correct_attn_implementation``) is wrapped for that,
    and passes every other name through unchanged. Calling it again changes nothing.

    Returns:
        ``"attnlib"``, the name to pass as ``attn_implementation``.

    Source: transformers' documentation, "Attention Interface" (custom attention and mask functions).
    """
    import warnings

    with warnings.catch_warnings():  # tqdm.auto warns in a notebook without ipywidgets when transformers imports it
        warnings.simplefilter("ignore")
        from transformers import AttentionInterface, PreTrainedModel
        from transformers.masking_utils import AttentionMaskInterface

    AttentionInterface.register(NAME, attention_forward)
    AttentionMaskInterface.register(NAME, mask_function)
    PreTrainedModel.get_correct_attn_implementation = _guard_load(PreTrainedModel.get_correct_attn_implementation)
    PreTrainedModel.post_init = _guard_post_init(PreTrainedModel.post_init)
    for name in ("from_pretrained", "_from_config"):
        setattr(PreTrainedModel, name, _guard_build(vars(PreTrainedModel)[name]))
    PreTrainedModel.set_attn_implementation = _guard_switch(PreTrainedModel.set_attn_implementation)
    return NAME
