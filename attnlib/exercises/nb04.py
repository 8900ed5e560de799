"""Checkers for the exercises of notebook 04, padding and causal masks.

One function per exercise; each prints one line ("correct", "not yet. <hint>" or "not attempted
yet") and returns None. The hints name the classic masking mistakes: a combined mask made with
``|`` instead of ``&``; a padding mask of the wrong polarity (True = padding, the convention of
``nn.MultiheadAttention``'s ``key_padding_mask``); a (B, Tk) padding mask used without its head and
query axes; a finite fill such as minus 10^9 (uniform rows over padding, float16 overflow) or ``-inf``
without a guard (NaN rows); and a top-left causal diagonal when decoding with a key/value cache.

The hints quote numbers from the learner's own answer: the function exercises give
:func:`~attnlib.exercises.check_function` a ``diagnose`` function that writes the hint.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

from . import Mistake, Probe, check_function, check_value, describe, same, shape_of

__all__ = [
    "check_cache_causal_mask",
    "check_combined_shape",
    "check_decoder_mask",
    "check_example0_mask",
    "check_safe_masked_softmax",
]

GUARD = "torch.where(mask.any(dim=-1, keepdim=True), weights, 0.0)"


# --- shared helpers --------------------------------------------------------------------------


def _judge_function(name: str, function: Any, inputs: Sequence[tuple], reference: Callable[..., Any],
                    diagnose: Callable[[torch.Tensor, torch.Tensor, tuple], str | None], **kwargs: Any) -> None:
    """:func:`~attnlib.exercises.check_function` with ``diagnose``, after telling a non-tensor result apart."""
    def tensor_first(got: Any, expected: torch.Tensor, args: tuple) -> str | None:
        if not isinstance(got, torch.Tensor):
            return f"Your function returned {describe(got)}; it should return a tensor."
        return diagnose(got, expected, args)

    check_function(name, function, inputs, reference, diagnose=tensor_first, **kwargs)


def _as_01(answer: Any) -> Any:
    """A 0/1 or bool matrix (nested lists or a tensor) as a list of lists of ints; anything else unchanged."""
    try:
        t = torch.as_tensor(answer)
    except Exception:
        return answer
    if t.dim() != 2 or t.dtype.is_complex or not bool(((t == 0) | (t == 1)).all()):
        return answer
    return t.int().tolist()


def _bool_mask_hint(got: torch.Tensor, expected: torch.Tensor) -> str | None:
    """The hint for a mask that is not boolean (None when it is)."""
    if got.dtype == torch.bool:
        return None
    return (f"Your mask has dtype {str(got.dtype).removeprefix('torch.')}; return booleans (True = may "
            "attend). A float mask is added to the scores, so 0/1 floats would mask nothing: use a "
            "comparison such as j <= i, or .bool().")


def _first_difference(got: torch.Tensor, expected: torch.Tensor, axes: Sequence[str]) -> str:
    where = (got != expected).nonzero()[0].tolist()
    at = ", ".join(f"{axis} {i}" for axis, i in zip(axes, where) if axis)
    return f"at {at} your mask says {bool(got[tuple(where)])}, expected {bool(expected[tuple(where)])}"


# --- Exercise 1: predict the shape of padding & causal ----------------------------------------


def check_combined_shape(answer: Any) -> None:
    """Exercise 1 (predict, then run): the shape of ``expand_key_mask(pad) & causal_mask(3)``.

    (3, 1, 1, 3) & (3, 3) broadcasts to (3, 1, 3, 3). Names: the padding mask's own shape
    (3, 1, 1, 3), as if ``&`` kept its left operand; a lost head axis (3, 3, 3); a head axis
    filled in (3, 3, 3, 3); too few axes (3, 3).
    """
    shape = shape_of(answer)  # a tuple, list, torch.Size, 1-d tensor or array of ints
    got = shape if shape is not None else answer
    mistakes = [
        Mistake(f"{got} is the padding mask's own shape: & broadcasts both masks, so on axis 2 the padding "
                "mask's 1 meets the causal mask's Tq = 3 and becomes 3.", answer=(3, 1, 1, 3)),
        Mistake(f"{got} has 3 axes: a broadcast result has as many axes as its larger operand, 4 here, "
                "and the head axis is 1 in the padding mask and absent from the causal mask, so it stays 1.",
                answer=(3, 3, 3)),
        Mistake(f"{got} gives the head axis 3: it is 1 in the padding mask and absent from the causal "
                "mask (read as 1), so it stays 1. Only B, Tq and Tk have size 3.", answer=(3, 3, 3, 3)),
        Mistake(f"{got} has 2 axes: a broadcast result has as many axes as its larger operand, the "
                "padding mask's 4.", answer=(3, 3)),
    ]
    check_value("Exercise 1", got, (3, 1, 3, 3), mistakes,
                correct="(B, 1, 1, Tk) & (Tq, Tk) -> (B, 1, Tq, Tk): one (Tq, Tk) pattern per example.")


# --- Exercise 2: predict example 0 of padding & causal ----------------------------------------


def check_example0_mask(answer: Any) -> None:
    """Exercise 2 (predict, then run): example 0 (length 2) of padding & causal, a 3 x 3 of 0/1.

    Expected [[1, 0, 0], [1, 1, 0], [1, 1, 0]]. Names: ``|`` instead of ``&``; the causal mask alone
    (padding forgotten); the padding mask alone (causal forgotten); the padded query's row masked
    too (a padding mask is a key mask); the polarity flipped (True = blocked); the upper triangle.
    """
    got = _as_01(answer)
    rows = got if isinstance(got, list) and len(got) == 3 else None
    mistakes = [
        Mistake(f"You combined with |: your {rows} lets query 0 take from key 1 (the future) and query 2 "
                "from key 2 (padding). With True = may attend, a key must pass both masks: &.",
                answer=[[1, 1, 0], [1, 1, 0], [1, 1, 1]]),
        Mistake(f"Your row 2 is {rows[2] if rows else ''}: the causal triangle alone. Example 0 has "
                "length 2, so key t2 is padding and its column is 0 in every row.",
                answer=[[1, 0, 0], [1, 1, 0], [1, 1, 1]]),
        Mistake(f"Every row of yours is {rows[0] if rows else ''}: the padding mask alone. The causal "
                "mask also hides the future: query 0 may take only from key 0.",
                answer=[[1, 1, 0], [1, 1, 0], [1, 1, 0]]),
        Mistake(f"Your row 2 is {rows[2] if rows else ''}: you masked the padded query t2 as well. The "
                "padding mask is a key mask (B, 1, 1, Tk): it hides the padded column, not the row; query "
                "t2 still sees t0 and t1, and the loss mask drops its output.",
                answer=[[1, 0, 0], [1, 1, 0], [0, 0, 0]]),
        Mistake(f"Your {rows} is the exact opposite: 1 where a query may NOT attend. That is torch's "
                "nn.MultiheadAttention convention (True = blocked); here True = may attend.",
                answer=[[0, 1, 1], [0, 0, 1], [0, 0, 1]]),
        Mistake(f"Your triangle points the wrong way ({rows}): query 0 would see key 1, its future. "
                "Query i sees keys 0..i, the lower triangle.",
                answer=[[1, 1, 0], [0, 1, 0], [0, 0, 0]]),
    ]
    check_value("Exercise 2", got, [[1, 0, 0], [1, 1, 0], [1, 1, 0]], mistakes,
                correct="Causal triangle, padded key column t2 cut away; the padded query t2 keeps t0, t1.")


# --- Exercise 3: write the decoder's self-attention mask --------------------------------------


def _decoder_reference(valid_lens: torch.Tensor, T: int) -> torch.Tensor:
    real = torch.arange(T) < valid_lens[:, None]  # (B, Tk)
    return real[:, None, None, :] & torch.ones(T, T).tril().bool()  # (B, 1, 1, Tk) & (Tq, Tk) -> (B, 1, Tq, Tk)


DECODER_INPUTS = [(torch.tensor([2, 3, 1]), 3), (torch.tensor([4, 2]), 5)]


def _diagnose_decoder(got: torch.Tensor, expected: torch.Tensor, args: tuple) -> str | None:
    valid_lens, T = args
    B = len(valid_lens)
    shape = tuple(got.shape)
    if (hint := _bool_mask_hint(got, expected)) is not None:
        return hint
    real = torch.arange(T) < valid_lens[:, None]  # (B, Tk)
    tril = torch.ones(T, T).tril().bool()
    if shape == (T, T) and torch.equal(got, tril):
        return f"Your mask is the causal triangle {shape} alone: & it with the padding mask of the keys."
    if shape == (T, T):
        return (f"Your mask is {shape}: the (B, Tk) padding mask met the (Tq, Tk) causal mask without its "
                f"head and query axes, so row b of the padding mask was read as query b (it broadcast only "
                f"because B = Tq = {T}). Give it (B, 1, 1, Tk) first: real[:, None, None, :].")
    if shape == (B, T, T):
        return (f"Your mask is {shape}, (B, Tq, Tk): against (B, H, Tq, Tk) scores its B axis would line "
                "up with the heads. Keep a singleton head axis: real[:, None, None, :] gives (B, 1, 1, Tk).")
    if shape == (B, 1, 1, T):
        return (f"Your mask is {shape}: the padding mask alone, with no query axis. & it with the causal "
                "mask (Tq, Tk) to hide the future.")
    if shape != tuple(expected.shape):
        return f"Your mask has shape {shape}; expected (B, 1, Tq, Tk) = {tuple(expected.shape)}."
    keys = real[:, None, None, :]
    if torch.equal(got, keys & real[:, None, :, None] & tril):
        return ("You hid the padded queries' rows as well: a padding mask is a key mask, (B, 1, 1, Tk), that hides "
                "padded columns; a padded query may keep its row (the loss mask drops its output). Use "
                "real[:, None, None, :] & tril only.")
    if torch.equal(got, real[:, None, :, None] & tril):
        return ("Your padding mask runs along the queries: real[:, None, :, None] is (B, 1, Tq, 1) and hides rows. "
                "It must hide the padded keys, the columns: real[:, None, None, :], (B, 1, 1, Tk).")
    if torch.equal(got, keys & torch.ones(T, T).tril(-1).bool()):
        return ("Your query i may not attend to itself: tril(-1) leaves out the diagonal. Query i sees keys 0..i, "
                "its own included: tril() (or j <= i).")
    n_got, n_exp = int(got.sum()), int(expected.sum())
    if torch.equal(got, ~expected):
        return ("Your mask is True exactly where a query may NOT attend: that is nn.MultiheadAttention's "
                "polarity (True = blocked). Here True = may attend: invert it.")
    if torch.equal(got, keys | tril):
        return (f"You combined with |: your mask allows {n_got} (query, key) pairs, the right one {n_exp}. "
                "| lets a key through when either mask allows it; it must pass both: &.")
    if torch.equal(got, ~keys & tril):
        n = int(valid_lens[0])
        return (f"Your padding part has the wrong polarity: in example 0 (length {n}) your query {T - 1} may "
                f"take from keys {got[0, 0, T - 1].nonzero().flatten().tolist()}, padding only. Position t is "
                "real when t < valid_lens[b] (True = real token), not the other way round.")
    if torch.equal(got, tril.expand_as(got)):
        return "Your mask has the causal triangle but no padding: & it with the key mask of the real tokens."
    if torch.equal(got, keys.expand_as(got)):
        return "Your mask has the padding but no causal triangle: query 0 may see key 1. & it with tril."
    if torch.equal(got, keys & torch.ones(T, T).triu().bool()):
        return ("Your triangle points the wrong way (upper): query 0 sees the future keys. Query i sees "
                "keys 0..i: the lower triangle, tril.")
    if torch.equal(got, (torch.arange(T) <= valid_lens[:, None])[:, None, None, :] & tril):
        return (f"Off by one: your example 0 (length {int(valid_lens[0])}) lets its last queries take from key "
                f"{int(valid_lens[0])}, a padding key. Positions 0..n-1 are real: t < valid_lens, not <=.")
    return (f"On lengths {valid_lens.tolist()} and T = {T}, "
            + _first_difference(got, expected, ("example", "", "query", "key")) + ".")


def check_decoder_mask(function: Any) -> None:
    """Exercise 3: ``decoder_mask(valid_lens, T)`` -> bool (B, 1, T, T), padded keys & future keys hidden.

    Run on lengths [2, 3, 1] with T = 3 (B = T, where a missing axis broadcasts silently) and on
    [4, 2] with T = 5. Names: a float mask; the (B, Tk) padding mask without its head and query
    axes (a (T, T) result); no head axis ((B, T, T)); no causal part; whole-mask polarity (True =
    blocked); ``|`` instead of ``&``; padding polarity (True = padding); no padding; the upper
    triangle; ``<=`` instead of ``<`` for the lengths.
    """
    _judge_function("Exercise 3", function, DECODER_INPUTS, _decoder_reference, _diagnose_decoder,
                    correct="Padded keys and future keys are hidden from every head and query.")


# --- Exercise 4: a masked softmax that survives a query with no keys --------------------------


def _safe_reference(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
    return torch.where(mask.any(dim=-1, keepdim=True), weights, 0.0)


LOSS_VALUES = torch.linspace(-1.0, 1.0, 12).reshape(4, 3)  # (Tk, Ev): the values of the loss-mask probe


def _loss_on_real_queries(weights: Any, args: tuple) -> torch.Tensor:
    """P2's loss mask: a loss on the outputs of the real queries 2 and 3 only (weights (1, 4, 4) @ values (4, 3))."""
    return (weights @ LOSS_VALUES.to(weights.dtype))[..., 2:, :].sum()


NAN_GRADIENT = ("Your weights are right, but under P2's loss mask (a loss on the real queries 2 and 3 only) the "
                "gradient of the scores is NaN in the rows of queries 0 and 1, which have no key. The mistake is "
                "the additive -inf mask (scores + a tensor of 0 and -inf): the softmax of those rows is 0/0 = NaN, "
                "its gradient there is NaN too, and the addition passes that gradient on to the scores unchanged, "
                "whatever repairs the weights afterwards (nan_to_num or a where on the weights). Fill instead: "
                "scores.masked_fill(~mask, float('-inf')) sends no gradient to the masked scores; then zero the "
                f"empty rows: {GUARD}.")


def _softmax_inputs() -> list[tuple | Probe]:
    gen = torch.Generator().manual_seed(0)
    left = torch.tensor([False, False, True, True])  # left padding: two pads, two real tokens
    mask = left & torch.ones(4, 4).tril().bool()  # (Tq, Tk): queries 0 and 1 have no key
    scores = torch.randn(1, 4, 4, generator=gen)  # (B, Tq, Tk)
    keys = torch.tensor([[True] * 5, [True, True, False, False, False]])[:, None, None, :]  # (B, 1, 1, Tk)
    scores4 = torch.randn(2, 2, 3, 5, generator=gen)  # (B, H, Tq, Tk)
    return [(scores, mask), (scores4, keys), (scores.half(), mask),
            Probe((scores, mask), "P2's loss-mask example", NAN_GRADIENT, loss=_loss_on_real_queries)]


def _diagnose_softmax(got: torch.Tensor, expected: torch.Tensor, args: tuple) -> str | None:
    scores, mask = args
    if tuple(got.shape) != tuple(scores.shape):
        return f"Your weights have shape {tuple(got.shape)}; they should have the scores' shape {tuple(scores.shape)}."
    got = got.float()
    empty = ~mask.expand(scores.shape).any(dim=-1)  # (..., Tq): rows with no key to attend to
    queries = sorted({int(i) for i in empty.nonzero()[:, -1]})
    nan_rows = torch.isnan(got).any(dim=-1)
    if nan_rows.any() and torch.equal(nan_rows, empty):
        return (f"Your rows for queries {queries}, which have no key they may attend to, are NaN: softmax of a "
                f"row of -inf is 0/0. Keep the -inf fill, then zero those rows: {GUARD}.")
    tk = scores.shape[-1]
    if empty.any() and torch.allclose(got[empty], torch.full_like(got[empty], 1 / tk), atol=1e-3):
        return (f"Your rows for queries {queries}, which have no key they may attend to, put {1 / tk:.4g} = 1/Tk "
                "on every key, padding and future included: a finite fill such as -1e9 or finfo.min makes "
                f"them uniform. Fill with float('-inf'), then zero those rows: {GUARD}.")
    after = torch.softmax(scores.float(), dim=-1) * mask
    if same(got, after, atol=1e-3, rtol=1e-3):
        sums = [round(float(x), 2) for x in got[~empty].sum(dim=-1).flatten()[:4]]
        return (f"Your weights are 0 on the masked keys, but your rows with an allowed key sum to {sums}, not 1: you "
                "masked after the softmax, so the allowed keys keep only their share of a softmax that counted the "
                "masked ones too. Mask the scores before it, scores.masked_fill(~mask, float('-inf')), so that the "
                f"softmax renormalises over the allowed keys; then zero the empty rows: {GUARD}.")
    flipped = _safe_reference(scores, ~mask).float()
    if same(got, flipped, atol=1e-3, rtol=1e-3):
        blocked = (~mask.expand(scores.shape)) & (got > 0)
        where = blocked.nonzero()[0].tolist()
        return (f"Your weights are non-zero where the mask is False (query {where[-2]} puts "
                f"{float(got[tuple(where)]):.4f} on key {where[-1]}): True means may attend, so fill where "
                "~mask: scores.masked_fill(~mask, ...).")
    sums = got[~empty].nansum(dim=-1)
    if not torch.allclose(sums, torch.ones_like(sums), atol=1e-2):
        shown = [round(float(s), 2) for s in sums.flatten()[:4]]
        return (f"Your rows with an allowed key sum to {shown}, not 1: the softmax must run over the keys, "
                "dim=-1.")
    gap = (got - expected.float()).abs().nan_to_num(nan=float("inf"))
    where = tuple(torch.nonzero(gap == gap.max())[0].tolist())
    return (f"On scores {tuple(scores.shape)} {str(scores.dtype).removeprefix('torch.')}, query {where[-2]} "
            f"puts {float(got[where]):.4f} on key {where[-1]}, expected {float(expected[where]):.4f}.")


def _softmax_error(err: Exception, args: tuple) -> str | None:
    scores, _ = args
    if scores.dtype == torch.float16 and isinstance(err, RuntimeError):
        return ("Your function fails on float16 scores: -1e9 does not fit in float16 (its largest value is "
                "65504), so masked_fill refuses it. Fill with float('-inf'), which every float dtype holds, "
                f"and zero the rows with no allowed key: {GUARD}.")
    return None


def check_safe_masked_softmax(function: Any) -> None:
    """Exercise 4: ``safe_masked_softmax(scores, mask)``: masked weights, all-zero rows where no key is allowed.

    Run on left padding & causal (1, 4, 4), where queries 0 and 1 have no key; on (2, 2, 3, 5)
    scores with a (B, 1, 1, Tk) key mask; on the first case in float16 (compared at float16's
    tolerance against a float64 reference, so weights computed in float32 pass); then a backward pass
    under P2's loss mask (a loss on the real queries only), whose gradient must be finite. Names: NaN
    rows (-inf without a guard); uniform rows (a finite fill such as minus 10^9); the polarity
    flipped; rows that do not sum to 1 (softmax over the wrong axis); a failure on float16 (minus
    10^9 overflows); a NaN gradient (an additive -inf mask repaired after the softmax).
    """
    _judge_function("Exercise 4", function, _softmax_inputs(), _safe_reference, _diagnose_softmax,
                    on_error=_softmax_error,
                    correct="Masked keys get exactly 0, and a query with no key gets a zero row, not NaN.")


# --- Exercise 5: the causal mask for decoding with a key/value cache --------------------------


def _cache_reference(q_len: int, kv_len: int) -> torch.Tensor:
    return torch.ones(q_len, kv_len).tril(diagonal=kv_len - q_len).bool()


CACHE_INPUTS = [(2, 5), (1, 4), (3, 3), (3, 7)]


def _diagnose_cache(got: torch.Tensor, expected: torch.Tensor, args: tuple) -> str | None:
    q_len, kv_len = args
    cached = kv_len - q_len
    if (hint := _bool_mask_hint(got, expected)) is not None:
        return hint
    if tuple(got.shape) == (kv_len, q_len) and q_len != kv_len:
        return (f"Your mask is {tuple(got.shape)}, (Tk, Tq): rows are queries, so it should be (Tq, Tk) = "
                f"{(q_len, kv_len)}.")
    if tuple(got.shape) != (q_len, kv_len):
        return f"Your mask has shape {tuple(got.shape)}; expected (Tq, Tk) = {(q_len, kv_len)}."
    row0 = got[0].nonzero().flatten().tolist()
    if torch.equal(got, torch.ones(q_len, kv_len).tril().bool()):
        return (f"With Tq = {q_len} new queries and Tk = {kv_len} keys, your query 0 sees keys {row0}: that is "
                f"the top-left diagonal (is_causal=True). The new queries come after {cached} cached tokens, so "
                f"query 0 is token {cached} and sees keys 0..{cached}: shift the diagonal by kv_len - q_len, "
                "tril(diagonal=kv_len - q_len).")
    if torch.equal(got, ~expected):
        return ("Your mask is True exactly where a query may NOT attend (True = blocked, torch's "
                "nn.MultiheadAttention convention). Here True = may attend: invert it.")
    if torch.equal(got, torch.ones(q_len, kv_len).tril(diagonal=cached - 1).bool()):
        return (f"Your query 0 sees keys {row0} but not key {cached}, its own token: the diagonal belongs in "
                "the mask. Use tril(diagonal=kv_len - q_len).")
    if torch.equal(got, torch.ones(q_len, kv_len).tril(diagonal=cached + 1).bool()):
        return (f"Your query 0 sees keys {row0}, including key {cached + 1}, the token after it: the diagonal "
                "sits one too far right. Use tril(diagonal=kv_len - q_len).")
    return f"On (q_len, kv_len) = {(q_len, kv_len)}, " + _first_difference(got, expected, ("query", "key")) + "."


def check_cache_causal_mask(function: Any) -> None:
    """Exercise 5: ``cache_causal_mask(q_len, kv_len)`` -> bool (Tq, Tk), the bottom-right diagonal.

    Run on (2, 5) first, where top-left and bottom-right differ, then (1, 4), (3, 3), (3, 7).
    Names: a float mask; (Tk, Tq) instead of (Tq, Tk); the top-left diagonal (``is_causal=True``,
    wrong with a cache); the polarity flipped; the diagonal excluded; the diagonal one key too far.
    """
    _judge_function("Exercise 5", function, CACHE_INPUTS, _cache_reference, _diagnose_cache,
                    correct="The last query sees every key; query i sees keys 0..i + (Tk - Tq).")
