"""Checkers for the exercises of notebook 05 (multi-head attention: split, attend, merge).

Five exercises, from predicting a shape to writing multi-head attention:

- :func:`check_split_shape`: the shape that ``split_heads`` returns for B = 2, T = 7, E = 12, H = 3.
- :func:`check_head_scale`: the number each head divides its scores by when E = 512 and H = 8.
- :func:`check_parameter_count`: the parameters of a multi-head layer with E = 8 and H = 4.
- :func:`check_merge_heads`: a ``merge_heads`` whose last step is ``.view``.
- :func:`check_multi_head_attention`: split, scaled dot-product attention in every head, merge.

Each prints one line (see :mod:`attnlib.exercises`) and names the classic mistakes of the notebook:
a split or merge without its transpose, ``view`` after ``transpose``, scaling by sqrt(E) instead of
sqrt(Dh), softmax over the queries, and parameter counts that leave out the biases or W^O or grow
with H. The framework has no hint for a learner's function that raises, so :func:`_raised` (a
helper of this module) runs the function first and names ``view`` after ``transpose`` when that
is what raised.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import torch

from . import Mistake, check_function, check_value, read_value, report
from . import shape_of as _shape_of

__all__ = [
    "check_head_scale",
    "check_merge_heads",
    "check_multi_head_attention",
    "check_parameter_count",
    "check_split_shape",
]


# ---------------------------------------------------------------------------------------------
# Helpers


def _close_to(value: float, rel: float = 0.01) -> Callable[[Any], bool]:
    """A predicate: the answer is a number within ``rel`` of ``value`` (a prediction written to 2 decimals)."""
    def near(answer: Any) -> bool:
        return (isinstance(answer, (int, float)) and not isinstance(answer, bool)
                and abs(answer - value) <= rel * abs(value))
    return near


def _num(answer: Any) -> str:
    """A number as a hint quotes it (4 significant digits), anything else as its repr."""
    if isinstance(answer, (int, float)) and not isinstance(answer, bool):
        return f"{answer:.4g}"
    return repr(answer)


def _shapes(args: tuple) -> str:
    return ", ".join(str(tuple(a.shape)) if isinstance(a, torch.Tensor) else repr(a) for a in args)


def _raised(name: str, function: Any, inputs: Sequence[tuple]) -> bool:
    """Run the learner's function on every input; if it raises the error of ``view`` after
    ``transpose``, print the hint that names the fix and return True. Anything else (a stub, a
    function that runs, another exception) returns False and is left to ``check_function``."""
    if function is None or function is Ellipsis or not callable(function):
        return False
    for args in inputs:
        try:
            function(*(a.clone() if isinstance(a, torch.Tensor) else a for a in args))
        except RuntimeError as err:
            text = str(err).lower()
            if "view" in text or "stride" in text or "contiguous" in text:
                report(name, "not yet", f"Your function raised a RuntimeError on inputs {_shapes(args)}: `view` "
                       "cannot merge axes that `transpose` has only relabelled (the memory is still in "
                       "(B, H, T, Dh) order). Copy first with .contiguous().view(...), or use .reshape(...), "
                       "which copies when it must.")
                return True
            return False
        except Exception:
            return False
    return False


def _labelled_heads(b: int, h: int, t: int, dh: int) -> torch.Tensor:
    """(B, H, T, Dh) heads of a (B, T, E) tensor whose entry is 10 * token + feature, stored head by head."""
    tokens = (10 * torch.arange(t)[:, None] + torch.arange(h * dh)).float().expand(b, t, h * dh)
    return tokens.reshape(b, t, h, dh).transpose(1, 2).contiguous()


def _reference_merge(x: torch.Tensor) -> torch.Tensor:
    b, h, t, dh = x.shape
    return x.transpose(1, 2).reshape(b, t, h * dh)


def _merge_without_transpose(x: torch.Tensor) -> torch.Tensor:
    b, h, t, dh = x.shape
    return x.reshape(b, t, h * dh)


def _split(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    b, t, e = x.shape
    return x.reshape(b, t, num_heads, e // num_heads).transpose(1, 2)


def _split_without_transpose(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    b, t, e = x.shape
    return x.reshape(b, num_heads, t, e // num_heads)


def _attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, num_heads: int, *,
            split: Callable = _split, merge: Callable = _reference_merge,
            scale_width: str = "Dh", softmax_dim: int = -1) -> torch.Tensor:
    """Multi-head attention without projections, with one of the classic mistakes switched on."""
    e = q.shape[-1]
    qh, kh, vh = (split(p, num_heads) for p in (q, k, v))  # (B, T, E) -> (B, H, T, Dh)
    d_k = {"E": e, "Dh": e // num_heads, "none": 1}[scale_width]
    weights = (qh @ kh.transpose(-2, -1) / math.sqrt(d_k)).softmax(dim=softmax_dim)  # (B, H, Tq, Tk)
    return merge(weights @ vh)  # (B, H, Tq, Dh) -> (B, Tq, E)


# ---------------------------------------------------------------------------------------------
# Exercise 1: predict the shape after split_heads


def check_split_shape(answer: Any) -> None:
    """Exercise 1: the shape of ``split_heads(x, 3)`` for x of shape (B, T, E) = (2, 7, 12).

    Expected (B, H, T, Dh) = (2, 3, 7, 4). Named mistakes: (2, 7, 3, 4), the reshape without the
    transpose (B, T, H, Dh); (2, 3, 7, 12), every head given all E features; (2, 4, 7, 3), H and Dh
    swapped (4 heads of width 3); (2, 7, 12), the input's shape (nothing split).
    """
    name = "Exercise 1"
    shape = _shape_of(answer)
    mistakes = [
        Mistake("(2, 7, 3, 4) is (B, T, H, Dh): the reshape that cuts E = 12 into 3 x 4 is only the first "
                "step. split_heads then swaps T and H, so that each head holds a (T, Dh) = (7, 4) matrix "
                "behind the batch and head axes.", answer=(2, 7, 3, 4)),
        Mistake("(2, 3, 7, 12) gives each of the 3 heads all E = 12 features. The heads share the width: "
                "Dh = E / H = 12 / 3 = 4.", answer=(2, 3, 7, 12)),
        Mistake("(2, 4, 7, 3) has 4 heads of width 3: H and Dh are swapped. H = 3 is what you pass, "
                "Dh = E / H = 4 is what each head gets: (B, H, T, Dh).", answer=(2, 4, 7, 3)),
        Mistake("(2, 7, 12) is the input's shape (B, T, E). split_heads returns 4 axes: (B, H, T, Dh).",
                answer=(2, 7, 12)),
    ]
    if shape is None and answer is not None and answer is not Ellipsis:
        report(name, "not yet", f"Write the shape as a tuple of ints, such as (1, 2, 3, 3); got {answer!r}.")
        return
    check_value(name, shape if shape is not None else answer, (2, 3, 7, 4), mistakes,
                correct="(B, H, T, Dh) = (2, 3, 7, 4): 3 heads, each a (7, 4) matrix per sequence.")


# ---------------------------------------------------------------------------------------------
# Exercise 2: predict the scale of each head


def check_head_scale(answer: Any) -> None:
    """Exercise 2: the number each head divides its scores by, for E = 512 and H = 8.

    Expected sqrt(Dh) = sqrt(64) = 8 (to 2 decimals, as the prompt asks). Named mistakes: sqrt(E) =
    22.63 (the full width's scale, the notebook's "sqrt(E) instead of sqrt(Dh)"); 64 = Dh without the
    square root; 512 = E; sqrt(H) = 2.83; 1/8 = 0.125 (the factor the scores are multiplied by, not
    divided by).
    """
    answer = read_value(answer, 8.0)  # a 0-d tensor, NumPy number or Fraction is read as its number
    shown = _num(answer)
    mistakes = [
        Mistake(f"{shown} is sqrt(E) = sqrt(512) = 22.63, the scale of one head of full width. Each head's "
                "queries and keys are Dh = E / H = 64 wide, so d_k = 64: dividing by sqrt(E) makes every "
                "head's scores sqrt(8) = 2.8 times too small and its weights too flat.",
                when=_close_to(math.sqrt(512))),
        Mistake(f"{shown} is Dh itself. The scores are divided by the square root of d_k = Dh = 64.",
                when=_close_to(64.0)),
        Mistake(f"{shown} is E. The scores are divided by the square root of the head's width, "
                "d_k = Dh = E / H = 64, not by E.", when=_close_to(512.0)),
        Mistake(f"{shown} is sqrt(H) = sqrt(8), the factor by which sqrt(E) overshoots. d_k is the head's "
                "width Dh = 512 / 8 = 64: take its square root.", when=_close_to(math.sqrt(8))),
        Mistake(f"{shown} = 1/8 is what the scores are multiplied by. The question asks for the divisor, "
                "sqrt(d_k).", when=_close_to(1 / 8)),
    ]
    check_value("Exercise 2", answer, 8.0, mistakes, decimals=2,
                correct="Each head divides by sqrt(Dh) = sqrt(512 / 8) = 8, not by sqrt(E) = 22.63.")


# ---------------------------------------------------------------------------------------------
# Exercise 4: merge_heads with view


def _merge_inputs() -> list[tuple]:
    return [(_labelled_heads(1, 2, 3, 3),), (_labelled_heads(2, 3, 4, 2),)]


def _tokens_in_row(out: torch.Tensor) -> list[list[int]]:
    """For a merge of labelled heads: which tokens (tens digits) each row of sequence 0 holds."""
    return [sorted({int(v) // 10 for v in out[0, t].tolist()}) for t in range(out.shape[1])]


def _own_token_other_order(got: Any) -> bool:
    """For a merge of labelled heads: every row holds only its own token's values (tens digit), in a wrong order."""
    if not isinstance(got, torch.Tensor) or got.dim() != 3:
        return False
    tokens = torch.arange(got.shape[1]).view(1, -1, 1)
    return bool((torch.div(got, 10, rounding_mode="floor") == tokens).all())


def check_merge_heads(function: Any) -> None:
    """Exercise 4: ``my_merge_heads(x)``, (B, H, T, Dh) -> (B, T, E), ending in ``.view``.

    A checker sees values only: ``.reshape`` gives the same values and passes too, and the prompt
    says so (``view`` never copies and raises on this input without ``.contiguous()``; ``reshape``
    copies when it must).

    Run on contiguous (B, H, T, Dh) heads of a labelled input (entry = 10 * token + feature), so that
    ``view`` straight after ``transpose`` raises. Named mistakes: the RuntimeError of ``view`` after
    ``transpose`` (hint: .contiguous() or .reshape); a merge without the transpose (the hint lists the
    tokens each of the learner's rows holds); rows that hold their own token's features in another
    order (a permute that puts Dh before H); the transpose without the final reshape (4 axes back).
    """
    name = "Exercise 4"
    inputs = _merge_inputs()
    if _raised(name, function, inputs):
        return
    rows = ""
    try:
        out = function(inputs[0][0].clone())
        if isinstance(out, torch.Tensor) and out.shape == (1, 3, 6):
            rows = f" (your rows hold tokens {_tokens_in_row(out)}, not [[0], [1], [2]])"
    except Exception:
        pass
    mistakes = [
        Mistake("Your merge reshapes (B, H, T, Dh) straight to (B, T, E), so each row mixes tokens" + rows
                + ". Move the heads back behind the tokens first: x.transpose(1, 2), then "
                ".contiguous().view(B, T, E).", answer=_merge_without_transpose),
        Mistake("Each of your rows holds its own token's features, but in another order: the merge must put head 0's "
                "Dh features first, then head 1's, side by side. Transpose to (B, T, H, Dh) with x.transpose(1, 2) "
                "and merge the last two axes; a permute that puts Dh before H interleaves the heads.",
                when=_own_token_other_order),
        Mistake("Your result has 4 axes, (B, T, H, Dh): the transpose is right, now merge the last two "
                "axes into E = H * Dh with .contiguous().view(B, T, H * Dh).",
                when=lambda got: isinstance(got, torch.Tensor) and got.dim() == 4),
    ]
    check_function(name, function, inputs, _reference_merge, mistakes,
                   correct="Transpose, then merge the last two axes (.contiguous().view, or .reshape, which "
                   "copies when it must): row t holds token t's heads side by side.")


# ---------------------------------------------------------------------------------------------
# Exercise 5: multi-head attention from projected q, k, v


def _attention_inputs() -> list[tuple]:
    generator = torch.Generator().manual_seed(5)
    self_q = torch.randn(2, 4, 12, generator=generator)  # (B, T, E), self-attention
    cross_q = torch.randn(2, 3, 12, generator=generator)  # (B, Tq, E)
    cross_kv = torch.randn(2, 5, 12, generator=generator)  # (B, Tk, E)
    return [(self_q, self_q, self_q, 3), (cross_q, cross_kv, cross_kv, 3)]


def _reference_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, num_heads: int) -> torch.Tensor:
    return _attend(q, k, v, num_heads)


def check_multi_head_attention(function: Any) -> None:
    """Exercise 5: ``my_multi_head_attention(q, k, v, num_heads)`` on projected (B, T, E) q, k and v.

    Expected: split into heads, softmax(q k^T / sqrt(Dh)) over the keys in every head, weights @ v,
    merge back to (B, Tq, E). Run on self-attention (T = 4) and cross-attention (Tq = 3, Tk = 5)
    inputs with E = 12 and H = 3. Named mistakes: scaling by sqrt(E) instead of sqrt(Dh); splitting
    with a reshape straight to (B, H, T, Dh) (no transpose: heads get other tokens' features);
    merging without the transpose back; no scaling; num_heads ignored (one head of width E); softmax
    over the queries (dim=-2); keys and values reshaped with Tq (fails on cross-attention); and the
    RuntimeError of ``view`` after ``transpose``.
    """
    name = "Exercise 5"
    inputs = _attention_inputs()
    if _raised(name, function, inputs):
        return
    mistakes = [
        Mistake("Your heads are scaled by 1/sqrt(E) = 1/sqrt(12) instead of 1/sqrt(Dh) = 1/sqrt(4) = 1/2: "
                "d_k is the width of one head's queries, q_heads.shape[-1] after the split, not the "
                "width before it.", answer=lambda q, k, v, h: _attend(q, k, v, h, scale_width="E")),
        Mistake("Your split reshapes (B, T, E) straight to (B, H, T, Dh): head h then holds consecutive "
                "chunks of several tokens instead of features h*Dh to (h+1)*Dh - 1 of every token. "
                "Reshape to (B, T, H, Dh) first, then .transpose(1, 2).",
                answer=lambda q, k, v, h: _attend(q, k, v, h, split=_split_without_transpose,
                                                  merge=_merge_without_transpose)),
        Mistake("Your split is right but the merge reshapes (B, H, T, Dh) straight to (B, T, E), so each "
                "output row mixes tokens. Transpose back first: .transpose(1, 2), then reshape.",
                answer=lambda q, k, v, h: _attend(q, k, v, h, merge=_merge_without_transpose)),
        Mistake("Your split reshapes straight to (B, H, T, Dh) (no transpose), so the heads hold the wrong "
                "features. Reshape to (B, T, H, Dh) first, then .transpose(1, 2).",
                answer=lambda q, k, v, h: _attend(q, k, v, h, split=_split_without_transpose)),
        Mistake("Your heads are not scaled: each head's scores must be divided by sqrt(d_k) = sqrt(Dh) = sqrt(4) = 2, "
                "the width of one head's queries.", answer=lambda q, k, v, h: _attend(q, k, v, h, scale_width="none")),
        Mistake("Your function ignores num_heads: it computes one head of width E = 12. Split q, k and v into H = 3 "
                "heads of Dh = E / H = 4 features, (B, T, E) -> (B, H, T, Dh), attend in every head, then merge.",
                answer=lambda q, k, v, h: _attend(q, k, v, 1)),
        Mistake("Your softmax ran over the queries (dim=-2): each key's weights sum to 1 instead of each "
                "query's. Use softmax(dim=-1), the keys' axis of (B, H, Tq, Tk).",
                answer=lambda q, k, v, h: _attend(q, k, v, h, softmax_dim=-2)),
    ]
    def on_error(err: Exception, args: tuple) -> str | None:
        q, k, _, _ = args
        if q.shape[1] != k.shape[1] and isinstance(err, RuntimeError):
            return (f"Your function raised RuntimeError on cross-attention, Tq = {q.shape[1]} queries and Tk = "
                    f"{k.shape[1]} keys (self-attention passed): reshape k and v with their own length, "
                    "k.shape[1] (or -1), not the queries' Tq.")
        return None

    check_function(name, function, inputs, _reference_attention, mistakes, on_error=on_error,
                   correct="Split, scale by 1/sqrt(Dh), softmax over the keys, weights @ v, merge: "
                           "all heads in one batched call.")


# ---------------------------------------------------------------------------------------------
# Exercise 3: predict the number of parameters


def check_parameter_count(answer: Any) -> None:
    """Exercise 3: the parameters of a multi-head layer with E = 8, H = 4 and biases (section 10's layer).

    Expected 4 E^2 + 4 E = 288. Named mistakes: 256 = 4 E^2 (biases left out); 216 = 3 (E^2 + E)
    (W^O left out); 1152 = H (4 E^2 + 4 E) (the count multiplied by H); 96 = 4 H (Dh^2 + Dh) (heads
    as Dh x Dh matrices); 1128 = 3 H (E^2 + E) + H E^2 + E (full-width heads, as in section 2).
    """
    e, h, dh = 8, 4, 2
    answer = read_value(answer, 4 * e * e + 4 * e)  # e.g. a 0-d tensor from summing p.numel()
    mistakes = [
        Mistake(f"{answer} = 4 * {e}^2 counts the four (E, E) matrices but not their biases: "
                f"four vectors of length E = {e} add {4 * e}.", answer=4 * e * e),
        Mistake(f"{answer} = 3 * ({e}^2 + {e}) counts W_Q, W_K and W_V with their biases but leaves out "
                f"the output projection W^O, another {e}^2 + {e}.", answer=3 * (e * e + e)),
        Mistake(f"{answer} = {h} * 288 multiplies by the number of heads. The H heads share the E x E "
                "matrices: head h owns Dh of their E rows, so the count does not depend on H.",
                answer=h * (4 * e * e + 4 * e)),
        Mistake(f"{answer} = 4 * {h} * ({dh}^2 + {dh}) treats each head's matrices as (Dh, Dh). A head's "
                "projection reads all E features and writes Dh: (Dh, E), and H of them make (E, E).",
                answer=4 * h * (dh * dh + dh)),
        Mistake(f"{answer} counts {h} full-width heads (each E -> E) and a W^O from H*E back to E, as the "
                "listing of section 2 does. With Dh = E / H the heads together are one E -> E projection "
                "each.", answer=3 * h * (e * e + e) + h * e * e + e),
    ]
    check_value("Exercise 3", answer, 4 * e * e + 4 * e, mistakes,
                correct="4 E^2 + 4 E = 4 * 64 + 4 * 8 = 288, whatever the number of heads.")

