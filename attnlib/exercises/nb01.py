"""Exercises of notebook 01 (Q, K and V: what goes in, and what comes out), declared as data.

Each name below is an :class:`~attnlib.exercises.Exercise` that the notebook's check cell calls. The
tables name the notebook's classic mistakes: keys and queries swapped, d_k left in the scores, softmax
over the queries, the output taking d_k or an encoding's width instead of Ev, scaling by the wrong width,
``key.T`` on batched inputs, (weights, output) in the wrong order, and cross-attention fed from the
wrong sequence. An attention function answers with the pair (output, weights): a predicate gets it as ``got``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from . import Exercise, Mistake, Probe, shape_of

__all__ = ["attention", "check_attention", "check_cross_attention", "check_cross_shapes", "check_shapes",
           "cross_attention"]


def _shape(key: str, wrong: tuple, text: str, right: dict) -> Mistake:
    """A predicted shape that is wrong in a known way; the hint quotes it unless it is another shape's answer."""
    quote = wrong not in right.values()
    return Mistake(lambda got: f"Your {key} " + (f"{got[key]} " if quote else "") + text,
                   when=lambda got: got[key] == wrong, example={**right, key: wrong})


def _shapes(name: str, right: dict, correct: str, rules: list) -> Exercise:
    """A prediction of several shapes, judged together; ``rules`` are (which shape, wrong value, hint)."""
    return Exercise(
        name, expected=right, answers=tuple(right), read=shape_of, correct=correct,
        unreadable="Write each shape as a tuple of ints, such as (2, 3); got {got}.",
        diagnose=lambda got, expected, args: next(f"Your {k} is not right: follow its row of the table of section 2."
                                                  for k in expected if got[k] != expected[k]),
        mistakes=[r if isinstance(r, Mistake) else _shape(*r, right) for r in rules])


# --- Exercise 1: the shapes for Tq = 5, Tk = 7, d_k = 16, Ev = 32 -------------------------------------

SHAPES = {"scores_shape": (5, 7), "weights_shape": (5, 7), "output_shape": (5, 32)}

check_shapes = _shapes("Exercise 1", SHAPES, "Scores and weights are (Tq, Tk) = (5, 7); the output is (Tq, Ev) = "
                       "(5, 32).", [
    ("scores_shape", (7, 5), "is (Tk, Tq), one row per key: Q Kᵀ has one row per query and one column per key."),
    ("scores_shape", (5, 16), "keeps d_k: Q Kᵀ sums over d_k, leaving one row per query and one column per key."),
    ("scores_shape", (16, 16), "is (d_k, d_k): in Q Kᵀ = (Tq, d_k) @ (d_k, Tk) the axis d_k is summed away."),
    ("weights_shape", (5,), "has one number per query: softmax keeps the scores' shape, one weight per (query, key)."),
    ("weights_shape", (7, 5), "is (Tk, Tq): softmax keeps the scores' shape, one row per query."),
    Mistake(lambda got: f"Your weights_shape {got['weights_shape']} differs from your scores_shape: softmax only "
            "rescales each row, so the weights have the scores' shape.",
            when=lambda got: got["weights_shape"] != got["scores_shape"], example={**SHAPES, "weights_shape": (5, 16)}),
    ("output_shape", (5, 16), "has the width d_k: the output mixes value rows, so it takes their width, Ev."),
    ("output_shape", (7, 32), "has one row per key: weights @ V is (Tq, Tk) @ (Tk, Ev), one mixed value per query."),
    ("output_shape", (5, 7), "is the weights' shape: the output is weights @ V, and V brings its own width."),
])


# --- Exercise 2: attention as a function of any leading axes ----------------------------------------


def attention(query, key, value, *, scale=None, dim=-1, softmax=True):
    """softmax(Q Kᵀ / sqrt(d_k)) V and the weights; the keywords switch on one classic mistake each."""
    scores = query @ key.transpose(-2, -1) * (query.shape[-1] ** -0.5 if scale is None else scale)
    weights = F.softmax(scores, dim=dim) if softmax else scores  # (..., Tq, Tk)
    return weights @ value, weights  # (..., Tq, Ev), (..., Tq, Tk)


def _scaled(scale):
    """A wrong attention whose scores are multiplied by ``scale(query, key, value)``."""
    return lambda q, k, v: attention(q, k, v, scale=scale(q, k, v))


def _row_sums(got) -> str:
    sums = got[1].detach().double().sum(dim=-1).flatten().tolist()
    return ", ".join(f"{s:.2f}" for s in sums[:4]) + (", ..." if len(sums) > 4 else "")


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
    g = torch.Generator().manual_seed(4)

    def draw(*shape):
        return torch.randn(*shape, generator=g)

    return [Probe((draw(3, 4), draw(5, 4), draw(5, 6)), "matrices: Tq = 3, Tk = 5, d_k = 4, Ev = 6"),
            Probe((draw(2, 4, 8), draw(2, 6, 8), draw(2, 6, 5)), "a batch: (B, Tq, d_k) = (2, 4, 8), Tk = 6"),
            Probe((draw(2, 3, 2, 6), draw(2, 3, 7, 6), draw(2, 3, 7, 3)), "(B, H, Tq, d_k) = (2, 3, 2, 6), Tk = 7"),
            Probe((draw(3, 1, 5, 16), draw(3, 1, 4, 16), draw(3, 1, 4, 9)), "(B, H, Tq, d_k) = (3, 1, 5, 16)")]


check_attention = Exercise(
    "Exercise 2", reference=attention, probes=_attention_probes,
    correct="Scores, softmax over the keys, weighted sum: on matrices and on (B, H, T, d_k) tensors alike.",
    mistakes=[
        Mistake(lambda got: f"Your function returns one tensor, of shape {tuple(got.shape)}: return the pair "
                "(output, weights), so that the weights can be plotted.",
                when=lambda got: isinstance(got, torch.Tensor), example=lambda q, k, v: attention(q, k, v)[0]),
        Mistake("You return (weights, output): return them in the order (output, weights), as attnlib does.",
                answer=lambda q, k, v: attention(q, k, v)[::-1]),
        Mistake(lambda got: f"Your weights' rows sum to {_row_sums(got)} and their columns to 1: softmax ran over the "
                "queries. Each query needs its own distribution over the keys, the last axis.",
                answer=lambda q, k, v: attention(q, k, v, dim=-2)),
        Mistake(lambda got: f"Your weights' rows sum to {_row_sums(got)}, not 1: these are still scores. Softmax "
                "over the keys turns them into weights.", answer=lambda q, k, v: attention(q, k, v, softmax=False)),
        *[Mistake(f"Your scores were {text}", answer=_scaled(scale)) for text, scale in [
            ("not scaled: divide them by the square root of d_k before the softmax.", lambda q, k, v: 1.0),
            ("divided by sqrt(Ev), the values' width: the values never enter the scores. Scale by the width of the "
             "queries and keys, d_k.", lambda q, k, v: v.shape[-1] ** -0.5),
            ("divided by sqrt(Tk), the number of keys: scale by the width of the queries and keys, d_k, their last "
             "axis.", lambda q, k, v: k.shape[-2] ** -0.5),
            ("divided by d_k itself: divide by its square root.", lambda q, k, v: 1 / q.shape[-1]),
            ("multiplied by sqrt(d_k): divide by it.", lambda q, k, v: q.shape[-1] ** 0.5)]],
        Mistake(lambda got, args: f"Your scores were multiplied by {_scale_of(got, args):.4g}, a scale that does not "
                f"follow this input's width d_k = {args[0].shape[-1]}: read d_k from the query, not from a number "
                "you typed.", when=lambda got, args: _scale_of(got, args) is not None,
                example=_scaled(lambda q, k, v: 2 ** -0.5)),
        Mistake(lambda err, args: f"Your function works on matrices but raised {type(err).__name__} on "
                f"{args[0].dim()}-D inputs: `.T` (or transpose(0, 1)) moves the batch axes too. Swap only the last "
                "two axes of the keys.", raises=RuntimeError, when=lambda err, args: args[0].dim() > 2,
                example=lambda q, k, v: attention(q, k.T.mT, v)),  # key.T where the last two axes were meant
    ])


# --- Exercise 3: the shapes of section 5's cross-attention ---------------------------------------------
# 4 decoder tokens of width 6 attend over the 3 encoder tokens of width 2; d_k = 5, Ev = 7.

CROSS = {"cross_weights_shape": (4, 3), "cross_output_shape": (4, 7)}

check_cross_shapes = _shapes("Exercise 3", CROSS, "One row per decoder token: weights (Tq, Tk) = (4, 3), output "
                             "(Tq, Ev) = (4, 7).", [
    ("cross_weights_shape", (3, 4), "has one row per encoder token: the rows are the queries, which come from the "
                                    "decoder."),
    ("cross_weights_shape", (4, 4), "is square, as in self-attention: here the keys come from the encoder."),
    ("cross_weights_shape", (3, 3), "is square, as in self-attention: here the queries come from the decoder."),
    ("cross_output_shape", (3, 7), "has one row per encoder token: each decoder token (query) gets one mixed value."),
    ("cross_output_shape", (4, 5), "has the width d_k: the output mixes value rows, of width Ev."),
    ("cross_output_shape", (4, 2), "has the encoder's width: the values are projected (by W_v) before they mix."),
    ("cross_output_shape", (4, 6), "has the decoder's width: the output takes the values' width."),
    ("cross_output_shape", (4, 3), "is the weights' shape: the output is weights @ V, and V brings its own width."),
])


# --- Exercise 4: cross-attention from two sequences ---------------------------------------------------


def cross_attention(decoder, encoder, W_q, W_k, W_v):
    """Queries from the decoder, keys and values from the encoder: (output, weights)."""
    return attention(decoder @ W_q, encoder @ W_k, encoder @ W_v)


def _from(sources: str):
    """A wrong cross-attention taking the queries, keys and values from ``sources`` ("d" decoder, "e" encoder)."""
    def wrong(d, e, W_q, W_k, W_v):
        q, k, v = ({"d": d, "e": e}[s] for s in sources)
        return attention(q @ W_q, k @ W_k, v @ W_v)
    return wrong


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


check_cross_attention = Exercise(
    "Exercise 4", reference=cross_attention, probes=_cross_probes,
    correct="Queries from the decoder, keys and values from the encoder: weights (Tq, Tk), output (Tq, Ev).",
    mistakes=[
        Mistake(lambda got: f"Your function returns one tensor, of shape {tuple(got.shape)}: return the pair "
                "(output, weights).", when=lambda got: isinstance(got, torch.Tensor),
                example=lambda *a: cross_attention(*a)[0]),
        Mistake("You return (weights, output): return them in the order (output, weights).",
                answer=lambda *a: cross_attention(*a)[::-1]),
        *[Mistake(hint, answer=_from(sources)) for sources, hint in [
            ("ddd", "Your keys and values come from the decoder, as in self-attention: in cross-attention the "
                    "encoder answers."),
            ("eee", "Your queries come from the encoder: in cross-attention the decoder asks."),
            ("edd", "The roles are swapped: the decoder asks (queries), the encoder answers (keys and values)."),
            ("ded", "Your values come from the decoder: each key hands over its own value, from the encoder."),
            ("dde", "Your keys come from the decoder: the keys and the values both come from the encoder.")]],
        Mistake(lambda got, args: f"Your output is as wide as the encoder ({args[1].shape[-1]}): the values were not "
                "projected. W_v gives them the width Ev.",
                when=lambda got, args: got[0].shape[-1] == args[1].shape[-1] != args[4].shape[-1],
                example=lambda d, e, W_q, W_k, W_v: attention(d @ W_q, e @ W_k, e)),
        Mistake("Your scores were not scaled: divide them by the square root of d_k before the softmax.",
                answer=lambda d, e, W_q, W_k, W_v: attention(d @ W_q, e @ W_k, e @ W_v, scale=1.0)),
        Mistake(lambda err, args: f"Your function raised {type(err).__name__} on {len(args[0])} decoder tokens of "
                f"width {args[0].shape[-1]} and {len(args[1])} encoder tokens of width {args[1].shape[-1]}: W_q "
                "multiplies the decoder, W_k and W_v the encoder.", raises=RuntimeError,
                when=lambda err, args: args[0].shape != args[1].shape,
                example=lambda d, e, *w: _from("edd" if d.shape != e.shape else "dee")(d, e, *w)),
    ])
