"""Exercises of notebook 01 (Q, K and V: what goes in, and what comes out); an attention answers (output, weights)."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ..attention import scaled_dot_product_attention
from . import Exercise, Mistake, Probe, Refused, plain, row_sums, shape_of, variant, watched

__all__ = ["attention", "check_attention", "check_cross_attention", "check_projection_shapes", "check_shapes",
           "cross_attention"]


def _shapes(name: str, right: dict, correct: str, advice: str, rules: list) -> Exercise:
    """Shapes judged together; a rule (key, wrong shape, hint) quotes the shape unless it is another's answer."""
    def rule(key, wrong, text):
        quote = wrong not in right.values()
        return Mistake(lambda got: f"Your {key} " + (f"{got[key]} " if quote else "") + text,
                       when=lambda got: got[key] == wrong, example={**right, key: wrong})
    return Exercise(
        name, expected=right, answers=tuple(right), read=shape_of, correct=correct,
        unreadable="Write each shape as a tuple of ints, such as (2, 3); got {got}.",
        diagnose=lambda got, expected, args: next(f"Your {k} is not right: {advice}" for k in expected
                                                  if got[k] != expected[k]),
        mistakes=[r if isinstance(r, Mistake) else rule(*r) for r in rules])


SHAPES = {"scores_shape": (5, 7), "weights_shape": (5, 7), "output_shape": (5, 32)}  # Q (5, 16), K (7, 16), V (7, 32)
check_shapes = _shapes("Exercise 1", SHAPES, "Scores and weights are (Tq, Tk) = (5, 7); the output is (Tq, Ev) = "
                       "(5, 32).", "follow its row of the table of section 2.", [
    ("scores_shape", (7, 5), "is (Tk, Tq), one row per key: Q Kᵀ has one row per query and one column per key."),
    ("scores_shape", (5, 16), "keeps d_k: Q Kᵀ sums over d_k, leaving one row per query and one column per key."),
    ("output_shape", (5, 16), "has the width d_k: the output mixes value rows, so it takes their width, Ev."),
    ("output_shape", (5, 7), "is the weights' shape: the output is weights @ V, and V brings its own width."),
    ("output_shape", (32, 5), "is transposed: weights @ V has one row per query, each a mix of value rows."),
])

PROJECTIONS = {"W_q_shape": (6, 5), "W_k_shape": (2, 5), "W_v_shape": (2, 7)}  # decoder (4, 6), encoder (3, 2)
check_projection_shapes = _shapes(
    "Exercise 2", PROJECTIONS, "Each W takes its sequence's width to d_k (queries, keys) or Ev (values): W_q "
    "(6, 5), W_k (2, 5), W_v (2, 7). The lengths 4 and 3 play no part.",
    "(rows, columns) = (width of the sequence it multiplies, width it makes).", [
        ("W_q_shape", (5, 6), "is (output width, input width), as nn.Linear stores its weight: in X @ W the rows "
         "of W meet X's columns."),
        ("W_q_shape", (2, 5), "multiplies the encoder: the queries come from the decoder, so W_q must fit its tokens."),
        ("W_k_shape", (6, 5), "multiplies the decoder: the keys come from the encoder, so W_k must fit its tokens."),
        ("W_v_shape", (6, 7), "multiplies the decoder: the values come from the encoder, like the keys."),
        Mistake("A sequence's length (4 or 3) is among your sizes: a W's sizes are widths, whatever the length.",
                when=lambda got: any(n in (4, 3) for shape in got.values() for n in shape),
                example={**PROJECTIONS, "W_q_shape": (4, 5)}),
    ])


def attention(query, key, value, *, scale=None, dim=-1):
    """softmax(Q Kᵀ / sqrt(d_k)) V and the weights; the keywords switch on one classic mistake each."""
    scores = query @ key.transpose(-2, -1) * (query.shape[-1] ** -0.5 if scale is None else scale)
    weights = F.softmax(scores, dim=dim)  # (..., Tq, Tk)
    return weights @ value, weights  # (..., Tq, Ev), (..., Tq, Tk)


def cross_attention(decoder, encoder, W_q, W_k, W_v):
    """Queries from the decoder, keys and values from the encoder: (output, weights)."""
    return attention(decoder @ W_q, encoder @ W_k, encoder @ W_v)


def _from(sources: str):
    """A wrong cross-attention: queries, keys and values from ``sources`` ("d" decoder, "e" encoder)."""
    return lambda d, e, *w: attention(*({"d": d, "e": e}[s] @ W for s, W in zip(sources, w)))


def _scaled(scale):
    return lambda q, k, v: attention(q, k, v, scale=scale(q, k, v))


def _cross_probes() -> list[Probe]:
    """Two sequences of one shape first, so that a wrong choice of sequence runs and is recognised by its numbers."""
    g = torch.Generator().manual_seed(5)
    return [Probe((torch.randn(tq, dec, generator=g), torch.randn(tk, enc, generator=g),
                   *(torch.randn(n, m, generator=g) / n**0.5 for n, m in [(dec, d_k), (enc, d_k), (enc, ev)])), label)
            for tq, tk, dec, enc, d_k, ev, label in [
                (3, 3, 6, 6, 4, 5, "two sequences of 3 tokens of width 6"),
                (4, 4, 5, 5, 3, 2, "two sequences of 4 tokens of width 5"),
                (2, 5, 6, 8, 4, 3, "a decoder of 2 tokens (width 6), an encoder of 5 (width 8)"),
                (4, 3, 6, 2, 5, 7, "a decoder of 4 tokens (width 6), an encoder of 3 (width 2)")]]


def _pair_mistakes(run) -> list[Mistake]:
    one = Mistake(lambda got: f"Your function returns one tensor, of shape {tuple(got.shape)}: return the pair "
                  "(output, weights).", when=lambda got: isinstance(got, torch.Tensor), example=lambda *a: run(*a)[0])
    return [one, Mistake("You return (weights, output): return them as (output, weights).", lambda *a: run(*a)[::-1])]


check_cross_attention = Exercise(
    "Exercise 3", reference=cross_attention, probes=_cross_probes,
    correct="Queries from the decoder, keys and values from the encoder: weights (Tq, Tk), output (Tq, Ev).",
    mistakes=[
        *_pair_mistakes(cross_attention),
        *[Mistake(hint, _from(sources)) for sources, hint in [
            ("ddd", "Your keys and values come from the decoder, as in self-attention: here the encoder answers."),
            ("edd", "The roles are swapped: the decoder asks (queries), the encoder answers (keys and values)."),
            ("ded", "Your values come from the decoder: each key hands over its own value, from the encoder."),
            ("dde", "Your keys come from the decoder: the keys and the values both come from the encoder.")]],
        Mistake("Your function uses a W transposed (W.T or F.linear): here each W is (input width, output width).",
                raises=RuntimeError, when=lambda err, args: any(f"{w.shape[1]}x{w.shape[0]})" in str(err)
                                                                for w in args[2:]),
                example=lambda d, e, W_q, W_k, W_v: cross_attention(d, e, W_q.T, W_k.T, W_v.T)),
    ])


def _scale_of(got, args) -> float | None:
    """The c with weights == softmax(c Q Kᵀ), read off the learner's weights (None when there is none)."""
    dots, w = (args[0] @ args[1].transpose(-2, -1)).double(), got[1].detach().double()
    if w.shape != dots.shape or not bool((w > 0).all()):
        return None
    log_w, centred = w.log() - w.log().mean(-1, keepdim=True), dots - dots.mean(-1, keepdim=True)
    c = float((log_w * centred).sum() / (centred * centred).sum())
    return c if torch.allclose(F.softmax(c * dots, dim=-1), w, atol=1e-4) else None


def _attention_probes() -> list[Probe]:
    """Watched inputs; d_k = 7 first: no width a learner may type (16, 2) is its d_k or the square root of it."""
    g = torch.Generator().manual_seed(4)
    return [Probe(watched(*(torch.randn(*s, generator=g) for s in shapes)), label) for *shapes, label in [
        ((3, 7), (5, 7), (5, 6), "matrices: Tq = 3, Tk = 5, d_k = 7, Ev = 6"),
        ((2, 4, 8), (2, 6, 8), (2, 6, 5), "a batch: (B, Tq, d_k) = (2, 4, 8), Tk = 6"),
        ((2, 3, 2, 6), (2, 3, 7, 6), (2, 3, 7, 3), "(B, H, Tq, d_k) = (2, 3, 2, 6), Tk = 7"),
        ((3, 1, 5, 16), (3, 1, 4, 16), (3, 1, 4, 9), "(B, H, Tq, d_k) = (3, 1, 5, 16)")]]


check_attention = Exercise(
    "Exercise 4", reference=lambda q, k, v: attention(*plain(q, k, v)), probes=_attention_probes,
    correct="Scores, softmax over the keys, weighted sum: on matrices and on (B, H, T, d_k) tensors alike.",
    mistakes=[
        Mistake("Your function calls attnlib's attention: write the three steps yourself, with @, math.sqrt and "
                "F.softmax.", raises=Refused, match="attnlib", example=scaled_dot_product_attention),
        Mistake("Your output comes from torch's F.scaled_dot_product_attention: write all three steps yourself.",
                raises=Refused, example=lambda *a: (F.scaled_dot_product_attention(*a), attention(*a)[1])),
        *_pair_mistakes(attention),
        Mistake(lambda got: f"Your weights' rows sum to {row_sums(got[1], 4)} and their columns to 1: softmax ran "
                "over the queries, not over the keys, the last axis.", variant(attention, dim=-2)),
        *[Mistake(f"Your scores were {text}", _scaled(scale)) for text, scale in [
            ("not scaled: divide them by sqrt(d_k) before the softmax.", lambda q, k, v: 1.0),
            ("divided by sqrt(Ev), the values' width: the scale follows d_k.", lambda q, k, v: v.shape[-1] ** -0.5),
            ("divided by sqrt(Tk), the number of keys: the scale follows d_k.", lambda q, k, v: k.shape[-2] ** -0.5),
            ("divided by d_k itself, or by sqrt(d_k) twice: divide once.", lambda q, k, v: 1 / q.shape[-1]),
            ("multiplied by sqrt(d_k): divide by it.", lambda q, k, v: q.shape[-1] ** 0.5)]],
        Mistake("Your scores were divided by the square root of query.shape[1], which counts the queries or the heads: "
                "d_k is the last axis.", _scaled(lambda q, k, v: q.shape[1] ** -0.5)),
        Mistake(lambda got, args: f"Your scores were multiplied by {_scale_of(got, args):.4g}, a scale that does not "
                f"follow this input's width d_k = {args[0].shape[-1]}: read d_k from the query, not a typed number.",
                when=lambda got, args: not math.isclose(_scale_of(got, args), args[0].shape[-1] ** -0.5, rel_tol=1e-3),
                example=_scaled(lambda q, k, v: 2 ** -0.5)),
        Mistake(lambda err, args: f"Your function works on matrices but raised {type(err).__name__} on "
                f"{args[0].dim()}-D inputs: `.T` (or transpose(0, 1)) moves the batch axes too; swap only the last "
                "two axes of the keys.", raises=RuntimeError, when=lambda err, args: args[0].dim() > 2,
                example=lambda q, k, v: attention(q, k.T.mT, v)),  # key.T where the last two axes were meant
    ])
