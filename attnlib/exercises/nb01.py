"""Exercises of notebook 01 (Q, K and V: what goes in, and what comes out), declared as data.

An attention function answers with the pair (output, weights): a predicate gets it as ``got``."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ..attention import scaled_dot_product_attention
from . import Exercise, Mistake, Probe, Refused, matmul_shapes, plain, row_sums, shape_of, variant, watched

__all__ = ["attention", "check_attention", "check_cross_attention", "check_projection_shapes", "check_shapes",
           "cross_attention"]


def _shapes(name: str, right: dict, correct: str, advice: str, rules: list) -> Exercise:
    """A prediction of several shapes, judged together; ``rules`` are (which shape, wrong value, hint), and a
    wrong shape is quoted in its hint unless it is another shape's answer."""
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


# --- Exercise 1: the shapes for Q (5, 16), K (7, 16), V (7, 32) ------------------------------------------

SHAPES = {"scores_shape": (5, 7), "weights_shape": (5, 7), "output_shape": (5, 32)}

check_shapes = _shapes("Exercise 1", SHAPES, "Scores and weights are (Tq, Tk) = (5, 7); the output is (Tq, Ev) = "
                       "(5, 32).", "follow its row of the table of section 2.", [
    ("scores_shape", (7, 5), "is (Tk, Tq), one row per key: Q Kᵀ has one row per query and one column per key."),
    ("scores_shape", (5, 16), "keeps d_k: Q Kᵀ sums over d_k, leaving one row per query and one column per key."),
    ("scores_shape", (16, 16), "is (d_k, d_k): in Q Kᵀ = (Tq, d_k) @ (d_k, Tk) the axis d_k is summed away."),
    ("scores_shape", (5, 32), "has the values' width: the values do not enter Q Kᵀ, which has one column per key."),
    ("weights_shape", (5,), "has one number per query: softmax keeps the scores' shape, one weight per (query, key)."),
    ("weights_shape", (7, 5), "is (Tk, Tq): softmax keeps the scores' shape, one row per query."),
    Mistake(lambda got: f"Your weights_shape {got['weights_shape']} differs from your scores_shape: softmax only "
            "rescales each row, so the weights have the scores' shape.",
            when=lambda got: got["weights_shape"] != got["scores_shape"], example={**SHAPES, "weights_shape": (5, 16)}),
    ("output_shape", (5, 16), "has the width d_k: the output mixes value rows, so it takes their width, Ev."),
    ("output_shape", (7, 32), "has one row per key: weights @ V is (Tq, Tk) @ (Tk, Ev), one mixed value per query."),
    ("output_shape", (5, 7), "is the weights' shape: the output is weights @ V, and V brings its own width."),
    ("output_shape", (32, 5), "is transposed: weights @ V has one row per query, each a mix of value rows."),
])


# --- Exercise 2: the projections of section 5 (decoder 4 x 6, encoder 3 x 2, d_k = 5, Ev = 7) --------------

PROJECTIONS = {"W_q_shape": (6, 5), "W_k_shape": (2, 5), "W_v_shape": (2, 7)}
_LINEAR = ("is (output width, input width), the way nn.Linear stores its weight (it computes x @ weight.T). "
           "In X @ W the rows of W meet the columns of X.")

check_projection_shapes = _shapes(
    "Exercise 2", PROJECTIONS, "Each W takes its sequence's width to d_k (queries, keys) or Ev (values): W_q "
    "(6, 5), W_k (2, 5), W_v (2, 7). The lengths 4 and 3 play no part.",
    "(rows, columns) = (width of the sequence it multiplies, width it makes).", [
        ("W_q_shape", (5, 6), _LINEAR), ("W_k_shape", (5, 2), _LINEAR), ("W_v_shape", (7, 2), _LINEAR),
        ("W_q_shape", (2, 5), "multiplies the encoder: the queries come from the decoder, so W_q must fit its tokens."),
        ("W_k_shape", (6, 5), "multiplies the decoder: the keys come from the encoder, so W_k must fit its tokens."),
        ("W_v_shape", (6, 7), "multiplies the decoder: the values come from the encoder, like the keys."),
        ("W_q_shape", (6, 7), "makes queries of width Ev: queries are dot-multiplied with keys, so both are d_k wide."),
        ("W_k_shape", (2, 7), "makes keys of width Ev: keys are dot-multiplied with queries, so both are d_k wide."),
        ("W_v_shape", (2, 5), "makes values of width d_k: the values never meet the queries; here they are Ev wide."),
        Mistake("A sequence's length (4 or 3) is among your sizes: a W multiplies each token's vector, so its sizes "
                "are widths, and one W serves sequences of any length.", example={**PROJECTIONS, "W_q_shape": (4, 5)},
                when=lambda got: any(n in (4, 3) for shape in got.values() for n in shape)),
    ])


# --- Exercise 3: cross-attention from two sequences ---------------------------------------------------


def attention(query, key, value, *, scale=None, dim=-1, softmax=True):
    """softmax(Q Kᵀ / sqrt(d_k)) V and the weights; the keywords switch on one classic mistake each."""
    scores = query @ key.transpose(-2, -1) * (query.shape[-1] ** -0.5 if scale is None else scale)
    weights = F.softmax(scores, dim=dim) if softmax else scores  # (..., Tq, Tk)
    return weights @ value, weights  # (..., Tq, Ev), (..., Tq, Tk)


def cross_attention(decoder, encoder, W_q, W_k, W_v):
    """Queries from the decoder, keys and values from the encoder: (output, weights)."""
    return attention(decoder @ W_q, encoder @ W_k, encoder @ W_v)


def _from(sources: str, run=attention):
    """A wrong cross-attention: ``run`` on queries, keys and values from ``sources`` ("d" decoder, "e" encoder)."""
    def wrong(d, e, W_q, W_k, W_v):
        q, k, v = ({"d": d, "e": e}[s] for s in sources)
        return run(q @ W_q, k @ W_k, v @ W_v)
    return wrong


def _scaled(scale):
    """A wrong attention whose scores are multiplied by ``scale(query, key, value)``."""
    return lambda q, k, v: attention(q, k, v, scale=scale(q, k, v))


def _step_mistakes(lift) -> list[Mistake]:
    """The classic mistakes of the three steps; ``lift`` makes a wrong attention(query, key, value) a wrong answer."""
    return [
        Mistake("Your output mixes the keys, not the values: the weights multiply the values (in cross-attention, the "
                "encoder projected with W_v).", answer=lift(lambda q, k, v: attention(q, k, k))),
        Mistake(lambda got: f"Your weights' rows sum to {row_sums(got[1], 4)}: you divided after the softmax. Divide "
                "the scores by sqrt(d_k) before it, and each row of weights still sums to 1.",
                answer=lift(lambda q, k, v: tuple(t * q.shape[-1] ** -0.5 for t in attention(q, k, v, scale=1.0)))),
        Mistake(lambda got: f"Your weights' rows sum to {row_sums(got[1], 4)} and their columns to 1: softmax ran "
                "over the queries. Each query needs its own distribution over the keys, the last axis.",
                answer=lift(variant(attention, dim=-2))),
        Mistake(lambda got: f"Your weights' rows sum to {row_sums(got[1], 4)}, not 1: these are still scores. Softmax "
                "over the keys turns them into weights.", answer=lift(variant(attention, softmax=False))),
        *[Mistake(f"Your scores were {text}", answer=lift(_scaled(scale))) for text, scale in [
            ("not scaled: divide them by the square root of d_k before the softmax.", lambda q, k, v: 1.0),
            ("divided by sqrt(Ev), the values' width: the values never enter the scores. Scale by the width of the "
             "queries and keys, d_k.", lambda q, k, v: v.shape[-1] ** -0.5),
            ("divided by sqrt(Tk), the number of keys: scale by the width of the queries and keys, d_k, their last "
             "axis.", lambda q, k, v: k.shape[-2] ** -0.5),
            ("divided by d_k itself, or by its square root twice: divide once, by the square root.",
             lambda q, k, v: 1 / q.shape[-1]),
            ("multiplied by sqrt(d_k): divide by it.", lambda q, k, v: q.shape[-1] ** 0.5)]]]


def _cross_probes() -> list[Probe]:
    g = torch.Generator().manual_seed(5)

    def case(tq, tk, dec, enc, d_k, ev):
        return (torch.randn(tq, dec, generator=g), torch.randn(tk, enc, generator=g),
                torch.randn(dec, d_k, generator=g) / dec**0.5, torch.randn(enc, d_k, generator=g) / enc**0.5,
                torch.randn(enc, ev, generator=g) / enc**0.5)

    # Two sequences of one shape first, so that a wrong choice of sequence runs and is recognised by its numbers.
    return [Probe(case(3, 3, 6, 6, 4, 5), "two sequences of 3 tokens of width 6"),
            Probe(case(4, 4, 5, 5, 3, 2), "two sequences of 4 tokens of width 5"),
            Probe(case(2, 5, 6, 8, 4, 3), "a decoder of 2 tokens (width 6), an encoder of 5 (width 8)"),
            Probe(case(4, 3, 6, 2, 5, 7), "a decoder of 4 tokens (width 6), an encoder of 3 (width 2)")]


def _pair_mistakes(run) -> list[Mistake]:
    """The two ways to return other than the pair (output, weights); ``run`` is the reference."""
    return [Mistake(lambda got: f"Your function returns one tensor, of shape {tuple(got.shape)}: return the pair "
                    "(output, weights), so that the weights can be plotted.",
                    when=lambda got: isinstance(got, torch.Tensor), example=lambda *a: run(*a)[0]),
            Mistake("You return (weights, output): return them in the order (output, weights), as attnlib does.",
                    answer=lambda *a: run(*a)[::-1])]


def _factors(err) -> tuple:
    return matmul_shapes(err) or ((), ())


check_cross_attention = Exercise(
    "Exercise 3", reference=cross_attention, probes=_cross_probes,
    correct="Queries from the decoder, keys and values from the encoder: weights (Tq, Tk), output (Tq, Ev).",
    mistakes=[
        *_pair_mistakes(cross_attention),
        *[Mistake(hint, answer=_from(sources)) for sources, hint in [
            ("ddd", "Your keys and values come from the decoder, as in self-attention: here the encoder answers."),
            ("eee", "Your queries come from the encoder: in cross-attention the decoder asks."),
            ("edd", "The roles are swapped: the decoder asks (queries), the encoder answers (keys and values)."),
            ("ded", "Your values come from the decoder: each key hands over its own value, from the encoder."),
            ("dde", "Your keys come from the decoder: the keys and the values both come from the encoder.")]],
        Mistake("Your queries, keys and values are all the decoder times W_q: in cross-attention the keys and values "
                "come from the encoder, through W_k and W_v.", answer=lambda d, e, W_q, W_k, W_v: attention(
                    d @ W_q, d @ W_q, d @ W_q)),
        Mistake("Your keys are as wide as the values (Ev), so they cannot meet the queries: W_k makes the keys and "
                "W_v the values. Are the two swapped?", raises=(RuntimeError, ValueError),
                when=lambda err, args: f"key ({len(args[1])}, {args[4].shape[1]})" in str(err)
                or _factors(err)[1] == (args[4].shape[1], len(args[1])),
                example=lambda d, e, W_q, W_k, W_v: cross_attention(d, e, W_q, W_v, W_k)),
        Mistake(lambda got, args: f"Your output is as wide as the encoder ({args[1].shape[-1]}): the values were not "
                "projected. W_v gives them the width Ev.",
                when=lambda got, args: got[0].shape[-1] == args[1].shape[-1] != args[4].shape[-1],
                example=lambda d, e, W_q, W_k, W_v: attention(d @ W_q, e @ W_k, e)),
        *_step_mistakes(lambda run: _from("dee", run)),
        Mistake("Your scores were divided by the square root of a sequence's own width: the dot products run over the "
                "projected queries and keys, so the scale follows their width, d_k.",
                answer=lambda d, e, W_q, W_k, W_v: attention(d @ W_q, e @ W_k, e @ W_v, scale=d.shape[-1] ** -0.5)),
        Mistake("Your function raised RuntimeError: it uses a W transposed (W.T, or F.linear, which computes x @ "
                "weight.T as nn.Linear does). Here each W is (input width, output width), as in Exercise 2.",
                raises=RuntimeError, when=lambda err, args: _factors(err)[1][::-1] in [w.shape for w in args[2:]],
                example=lambda d, e, W_q, W_k, W_v: cross_attention(d, e, W_q.T, W_k.T, W_v.T)),
        Mistake("Your function raised RuntimeError: one matrix it multiplies is none of its inputs but a notebook "
                "variable (X, or section 5's W_q, W_k, W_v?). Work with the five tensors it is given.",
                raises=RuntimeError, example=lambda d, e, *w: cross_attention(d, torch.ones(len(e), 2), *w),
                when=lambda err, args: sum(f in [a.shape for a in args] for f in _factors(err)) == 1),
        Mistake(lambda err, args: f"Your function raised {type(err).__name__} on {len(args[0])} decoder tokens of "
                f"width {args[0].shape[-1]} and {len(args[1])} encoder tokens of width {args[1].shape[-1]}: W_q "
                "multiplies the decoder, W_k and W_v the encoder.", raises=RuntimeError,
                when=lambda err, args: args[0].shape != args[1].shape,
                example=lambda d, e, *w: _from("edd" if d.shape != e.shape else "dee")(d, e, *w)),
    ])


# --- Exercise 4: attention as a function of any leading axes, written without a ready-made one ---------------


def _scale_of(got, args) -> float | None:
    """The c with weights == softmax(c Q Kᵀ), read off the learner's weights (None when there is none)."""
    dots = (args[0] @ args[1].transpose(-2, -1)).double()
    w = got[1].detach().double()
    if w.shape != dots.shape or not bool((w > 0).all()):
        return None
    log_w, centred = w.log() - w.log().mean(-1, keepdim=True), dots - dots.mean(-1, keepdim=True)
    c = float((log_w * centred).sum() / (centred * centred).sum())
    return c if torch.allclose(F.softmax(c * dots, dim=-1), w, atol=1e-4) else None


def _attention_probes() -> list[Probe]:
    """Watched inputs: attnlib's attention and torch's SDPA are refused. d_k = 7 first: no width a learner may type
    (16, 2) is the first probe's d_k or its square root."""
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
        Mistake("Your function calls attnlib's attention: this exercise is to write the three steps yourself, with "
                "@, math.sqrt and F.softmax.", raises=Refused, match="attnlib", example=scaled_dot_product_attention),
        Mistake("Your output comes from torch's F.scaled_dot_product_attention, a ready-made attention: write all "
                "three steps yourself, the weighted sum of the values included.", raises=Refused,
                example=lambda q, k, v: (F.scaled_dot_product_attention(q, k, v), attention(q, k, v)[1])),
        *_pair_mistakes(attention),
        *_step_mistakes(lambda run: run),
        Mistake("Your scores were divided by the square root of query.shape[1]: with axes in front, axis 1 counts "
                "the queries or the heads. d_k is the last axis.", answer=_scaled(lambda q, k, v: q.shape[1] ** -0.5)),
        Mistake(lambda got, args: f"Your scores were multiplied by {_scale_of(got, args):.4g}, a scale that does not "
                f"follow this input's width d_k = {args[0].shape[-1]}: read d_k from the query, not a typed number.",
                when=lambda got, args: not math.isclose(_scale_of(got, args), args[0].shape[-1] ** -0.5, rel_tol=1e-3),
                example=_scaled(lambda q, k, v: 2 ** -0.5)),
        Mistake(lambda err, args: f"Your function raised {type(err).__name__} on {args[0].dim()}-D inputs: it numbers "
                "an axis from the front (dim=3, permute(0, 1, 3, 2)), which fits one number of axes only. Count from "
                "the back: the last two axes are the same whatever comes in front.", example=variant(attention, dim=3),
                raises=(IndexError, RuntimeError), match="out of range|number of dimensions"),
        Mistake(lambda err, args: f"Your function works on matrices but raised {type(err).__name__} on "
                f"{args[0].dim()}-D inputs: `.T` (or transpose(0, 1)) moves the batch axes too. Swap only the last "
                "two axes of the keys.", raises=RuntimeError, when=lambda err, args: args[0].dim() > 2,
                example=lambda q, k, v: attention(q, k.T.mT, v)),  # key.T where the last two axes were meant
    ])
