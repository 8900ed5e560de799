"""Exercises of notebook 04 (padding and causal masks): each ``check_*`` is an Exercise its check cell calls."""

from __future__ import annotations

import re

import torch

from . import Exercise, Mistake, Probe, largest_hidden, variant

__all__ = ["check_decoder_mask", "check_head_broadcast", "check_safe_masked_softmax", "check_sequence1_mask",
           "check_torch_masks"]


def _as_01(answer, dim: int = 2):
    """0/1 values or booleans (lists, tuples, a tensor or array) in ``dim`` axes as nested lists of ints; else None."""
    try:
        t = torch.as_tensor(answer.tolist() if hasattr(answer, "tolist") else answer)
    except Exception:
        return None
    return t.int().tolist() if t.dim() == dim and not t.dtype.is_complex and bool(((t == 0) | (t == 1)).all()) else None


def _digit_rows(example) -> Mistake:
    """Rows written as strings of digits ('1010'), seen before the answer is read as numbers."""
    def digits(answer) -> bool:
        rows = answer.values() if isinstance(answer, dict) else answer if isinstance(answer, list | tuple) else [answer]
        return any(isinstance(row, str) and row.strip() and set(row) <= set("01 ,") for row in rows)
    return Mistake("You wrote rows as strings of digits: write each row as four 0/1 values in a list, without "
                   "quotes, such as [1, 0, 1, 0].", raw=True, when=digits, example=example)


def _causal(t: int | torch.Tensor) -> torch.Tensor:
    """The (T, T) causal mask, True = may attend, for T or for a (B, T) attention_mask."""
    t = t if isinstance(t, int) else t.shape[-1]
    return torch.ones(t, t, dtype=torch.bool).tril()


# --- Exercise 1: sequence 1 ("dogs bark" and two pads) of pad[:, None, :] & causal
def _first_cell(got, expected, args) -> str:
    """Where the learner's matrix first differs, as a question about that query and key (never the value)."""
    if len(got) != 4 or any(len(row) != 4 for row in got):
        return f"Write four rows of four 0/1 values (row = query t0..t3, column = key t0..t3); got {got}."
    i, j = next((i, j) for i in range(4) for j in range(4) if got[i][j] != expected[i][j])
    return (f"Look again at query t{i} and key t{j}: is t{j} a real token, and is it t{i} itself or in its past? "
            "Both must hold for a 1.")


PAD1 = torch.tensor([True, True, False, False])  # "dogs bark <pad> <pad>"
SEQ1 = _causal(4) & PAD1
check_sequence1_mask = Exercise(
    "Exercise 1", expected=SEQ1.int().tolist(), read=_as_01, diagnose=_first_cell,
    unreadable="Write four rows of 0 and 1 (row = query, column = key), such as [[1, 1, 1, 1], ...]; got {got}.",
    correct="The causal triangle with the padded key columns t2 and t3 cut away; the padded queries keep t0 and t1.",
    mistakes=[
        _digit_rows(["1000", "1100", "1100", "1100"]),
        Mistake("You passed a row of a computed tensor (combined[1]?): predict it and write its rows as 0 and 1.",
                raw=True, when=lambda a: isinstance(a, torch.Tensor) and a._base is not None, example=SEQ1[None][0]),
        *[Mistake(hint, answer.int().tolist()) for answer, hint in [
            (_causal(4) | PAD1, "You combined with |, so t0 sees its future t1: a key must pass both masks, &."),
            (SEQ1 & PAD1[:, None], "Your rows for t2 and t3 are empty: padding hides keys, not queries."),
            (SEQ1.T, "Your rows read like columns: row = query, column = key."),
            (~SEQ1, "Your matrix is the opposite, nn.MultiheadAttention's polarity: here 1 = may attend."),
        ]],
    ])


# --- Exercise 2: sequence 0's keys in heads 0 and 1 when ~pad[:, None, :] (B, 1, Tk) masks (B, H, Tq, Tk)
# B = H = 2, T = 4, pad = [[1, 1, 1, 1], [1, 1, 0, 0]]: (2, 1, 4) lines up with (H, Tq, Tk), so head h gets row h.
HEADS = {"my_head0": [1, 1, 1, 1], "my_head1": [1, 1, 0, 0]}
check_head_broadcast = Exercise(
    "Exercise 2", expected=HEADS, answers=tuple(HEADS),
    read=lambda answer: row if (row := _as_01(answer, dim=1)) and len(row) == 4 else None,
    unreadable="Write each head's row as four 0/1 values, key t0 to t3, such as [1, 0, 1, 0]; got {got}.",
    correct="The (B, 1, Tk) mask lines up with (H, Tq, Tk): head h gets sequence h's padding, in every sequence. It "
            "runs only because B = H, and it is wrong: a key mask needs (B, 1, 1, Tk).",
    diagnose=lambda got, expected, args: "Line the shapes up from the right, (2, 1, 4) under (2, 2, 4, 4), and "
                                         "follow which row of the mask reaches each head.",
    mistakes=[
        _digit_rows({"my_head0": "1111", "my_head1": "1100"}),
        Mistake("Both your heads get sequence 0's padding, as a (B, 1, 1, Tk) mask would: line this (B, 1, Tk) "
                "mask up from the right.", dict(my_head0=[1, 1, 1, 1], my_head1=[1, 1, 1, 1])),
        Mistake("You wrote 1 where a key is hidden: here 1 = may attend.",
                when=lambda got: [0, 0, 1, 1] in got.values(), example=dict(my_head0=[0] * 4, my_head1=[0, 0, 1, 1])),
    ])


# --- Exercise 3: a decoder's mask (B, 1, T, T) from Hugging Face's attention_mask
def decoder(attention_mask, *, keys=True, queries=False, join="&") -> torch.Tensor:
    """The reference; each keyword switches on one classic mistake."""
    real, causal = attention_mask == 1, _causal(attention_mask)  # (B, Tk), (Tq, Tk)
    padding = torch.ones(len(real), 1, *causal.shape, dtype=torch.bool) & (real[:, None, None, :] if keys else True)
    padding = padding & (real[:, None, :, None] if queries else True)  # keys hide columns, queries hide rows
    return padding & causal if join == "&" else real[:, None, None, :] | causal


def _fills(got, want) -> bool:
    """``got`` (bool) broadcasts to ``want``'s shape and then equals it."""
    return got.dtype == torch.bool and got.dim() <= want.dim() and torch.equal(got.broadcast_to(want.shape), want)


def _dtype_hint(name: str, mask: torch.Tensor, polarity: str = "True = blocked", adds: str = "The module") -> str:
    if mask.is_floating_point() and bool(torch.isinf(mask).any()):
        return f"Your {name} is a float mask of 0 and -inf: this exercise asks for the boolean form, {polarity}."
    why = (f"{adds} adds a float mask to the scores, so 0/1 floats would block nothing." if mask.is_floating_point()
           else "Comparisons and & give booleans: keep the result bool.")
    return f"Your {name} has dtype {str(mask.dtype).removeprefix('torch.')}: return booleans, {polarity}. {why}"


def _causal_shape(err, args) -> str | None:
    """The causal part's shape "(n, n)" in a broadcasting error whose other size is this input's T; else None."""
    sizes = {int(n) for n in re.findall(r"size of tensor \w \((\d+)\)", str(err))}
    t = args[0].shape[-1]
    return f"({(n := (sizes - {t}).pop())}, {n})" if t in sizes and len(sizes) == 2 else None


HF_PROBES = [Probe((torch.tensor([[0, 0, 1, 1], [1, 1, 1, 1], [0, 1, 1, 1]]),), "left padding, B = 3, T = 4"),
             Probe((torch.tensor([[1, 1, 0], [1, 1, 1], [1, 0, 0]]),), "right padding, B = T = 3"),
             Probe((torch.tensor([[1, 1, 1, 1, 0], [1, 1, 0, 0, 0]]),), "right padding, B = 2, T = 5"),
             Probe((torch.tensor([[0, 0, 0, 1, 1, 1]]),), "left padding, B = 1, T = 6")]
check_decoder_mask = Exercise(
    "Exercise 3", reference=decoder, probes=HF_PROBES,
    refuse=("attnlib.masks.from_hf_attention_mask", "attnlib.masks.causal_mask",
            "attnlib.attention.combine_with_key_mask"),
    correct="Padded keys and future keys are hidden from every head and query, whichever side the padding is on.",
    mistakes=[
        Mistake(lambda got: _dtype_hint("mask", got, "True = may attend", "torch"),
                when=lambda got: got.dtype != torch.bool, example=lambda am: decoder(am).int()),
        Mistake(lambda err, args: f"Your causal part is {_causal_shape(err, args)} on an input of T = "
                f"{args[0].shape[-1]}: read T from attention_mask's key axis.", raises=RuntimeError,
                match="dimension [23]", when=_causal_shape, example=lambda am: (am == 1)[:, None, None] & _causal(4)),
        Mistake("Your (B, Tk) mask met the causal mask without its head and query axes: make it (B, 1, 1, Tk).",
                raises=RuntimeError, match="size", example=lambda am: (am == 1) & _causal(am)),
        Mistake("Your mask also hides the rows of padded queries: padding hides keys only, (B, 1, 1, Tk).",
                variant(decoder, queries=True)),
        Mistake("Your padding runs along the queries, (B, 1, Tq, 1): it must hide the keys, (B, 1, 1, Tk).",
                variant(decoder, keys=False, queries=True)),
        Mistake("Your mask treats the first n positions as real (n = the number of 1s), but a tokenizer may pad on "
                "the left.", lambda am: decoder((torch.arange(am.shape[-1]) < am.sum(-1, keepdim=True)).long())),
        Mistake("You read 1 as blocked: in attention_mask 1 marks a real token.", lambda am: decoder(1 - am)),
        Mistake("Your mask is in nn.MultiheadAttention's polarity (True = blocked): here True = may attend.",
                lambda am: ~decoder(am)),
        Mistake("You combined with |: a key must pass both masks, &.", variant(decoder, join="|")),
        Mistake("Your mask is (B, Tq, Tk), without a head axis: make it (B, 1, Tq, Tk).", lambda am: decoder(am)[:, 0]),
        Mistake("Your mask is the causal triangle alone: & it with the key mask of the real tokens.",
                when=lambda got, args: _fills(got, decoder(torch.ones_like(args[0]))), example=_causal),
        Mistake("Your mask has the padding but no causal triangle: query 0 may see key 1, its future.",
                when=lambda got, args: _fills(got, (args[0] == 1)[:, None, None, :].expand(
                    -1, 1, args[0].shape[-1], -1)),
                example=lambda am: (am == 1)[:, None, None, :]),
        Mistake("Your triangle points the wrong way: keep the keys on and below the diagonal.",
                lambda am: (am == 1)[:, None, None, :] & _causal(am).T),
    ])


# --- Exercise 4: the same decoder's two masks for nn.MultiheadAttention
def torch_masks(attention_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(key_padding_mask (B, Tk), attn_mask (Tq, Tk)), both bool, True = blocked."""
    return attention_mask == 0, ~_causal(attention_mask)


check_torch_masks = Exercise(
    "Exercise 4", reference=torch_masks, probes=[p for p in HF_PROBES if p.args[0].shape != (3, 3)] + [
        Probe((torch.ones(2, 3, dtype=torch.long),), "no padding, B = 2, T = 3")],
    correct="True marks the padding and the future: nn.MultiheadAttention hides exactly what our mask hides.",
    mistakes=[
        Mistake("Return two masks, (key_padding_mask, attn_mask): the module takes them separately.",
                when=lambda got: isinstance(got, torch.Tensor), example=lambda am: ~decoder(am)),
        Mistake(lambda got: _dtype_hint(*next((n, m) for n, m in zip(("key_padding_mask", "attn_mask"), got)
                                              if m.dtype != torch.bool)),
                when=lambda got: any(m.dtype != torch.bool for m in got), example=lambda am: (1 - am, ~_causal(am))),
        Mistake("Both your masks are in attnlib's polarity: nn.MultiheadAttention reads True as blocked.",
                lambda am: (am == 1, _causal(am))),
        Mistake("Your attn_mask blocks the past and shows the future: True must mark the future.",
                lambda am: (am == 0, _causal(am))),
        Mistake("Your key_padding_mask hides the real tokens: True must mark the padding.",
                lambda am: (am == 1, ~_causal(am))),
        Mistake("Your key_padding_mask blocks the last positions (from the number of 1s), but a tokenizer may pad on "
                "the left.", lambda am: (torch.arange(am.shape[-1]) >= am.sum(-1, keepdim=True), ~_causal(am))),
    ])


# --- Exercise 5: a masked softmax that survives a query with no keys
def safe_softmax(scores, mask, *, fill=float("-inf"), guard=True, dim=-1) -> torch.Tensor:
    """The reference; each keyword switches on one classic mistake."""
    weights = torch.softmax(scores.masked_fill(~mask, fill), dim=dim)
    return torch.where(mask.any(dim=-1, keepdim=True), weights, 0.0) if guard else weights


def _masked_top(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The rows with an allowed key whose largest score is on a masked key, tens above the allowed ones (bool)."""
    allowed = scores.masked_fill(~mask, float("-inf")).amax(-1)
    return mask.expand(scores.shape).any(-1) & (scores.amax(-1) - allowed > 50)


def _softmax_probes():
    gen = torch.Generator().manual_seed(0)
    mask = torch.tensor([False, False, True, True]) & _causal(4)  # left padding & causal: queries 0, 1 see no key
    scores = torch.randn(1, 4, 4, generator=gen)  # (B, Tq, Tk)
    keys = torch.tensor([[True] * 5, [True, True, False, False, False]])[:, None, None, :]  # (B, 1, 1, Tk)
    first = torch.tensor([[False] * 3, [True, True, False], [True] * 3])  # query 0 has no key; key 0 is seen
    return [(scores, mask), (torch.randn(2, 2, 3, 5, generator=gen), keys), (scores.half(), mask),
            Probe((scores, mask), "the loss-mask example", "Your weights are right, but under the loss mask the "
                  "scores' gradient is NaN, which an additive -inf mask passes on: use masked_fill.",
                  loss=lambda weights, args: (weights @ LOSS_VALUES.to(weights.dtype))[..., 2:, :].sum()),
            Probe((torch.tensor([[0.3, -1.2, 0.8], [0.0, 1.0, 1000.0], [0.5, -0.4, 1.5]]), first),
                  "(Tq, Tk) = (3, 3), query 0 with no key, query 1's masked key 2 scoring 1000")]


LOSS_VALUES = torch.linspace(-1.0, 1.0, 12).reshape(4, 3)  # (Tk, Ev): the loss mask is on real queries 2 and 3
check_safe_masked_softmax = Exercise(
    "Exercise 5", reference=safe_softmax, probes=_softmax_probes, refuse=("attnlib.attention", "attnlib.masks"),
    correct="Masked keys get exactly 0, a query with no key a zero row, and the gradient stays finite.",
    mistakes=[
        Mistake("Your rows for the queries with no key are NaN, 0/0 (a softmax of -inf only, or a row sum of 0): keep "
                "the masking, then zero those rows.", variant(safe_softmax, guard=False)),
        Mistake("Your rows with no key put 1/Tk on every key, uniform, as a finite fill such as -1e9 does: a query "
                "with no key must get a zero row.", variant(safe_softmax, fill=-1e9, guard=False)),
        Mistake("Your fill does not fit in float16: take it from the scores' dtype, or use float('-inf').",
                raises=RuntimeError, when=lambda err, args: args[0].dtype == torch.float16,
                example=variant(safe_softmax, fill=-1e9)),
        Mistake("A masked key's large score zeroed the allowed weights: take the maximum over the allowed keys only.",
                when=lambda got, args: bool((_masked_top(*args) & (got == 0).all(-1)).any()),
                example=lambda s, m: (e := torch.where(m, (s - s.amax(-1, keepdim=True)).exp(), 0.0))
                / e.sum(-1, keepdim=True).clamp_min(torch.finfo(s.dtype).tiny)),
        Mistake("A masked key's large score made a row NaN (exp overflows, inf * 0): mask the scores before exp.",
                when=lambda got, args: bool((_masked_top(*args) & got.isnan().any(-1)).any()),
                example=lambda s, m: (e := s.exp() * m) / e.sum(-1, keepdim=True).clamp_min(torch.finfo(s.dtype).tiny)),
        Mistake("You masked after the softmax: mask the scores before it, so that it renormalises.",
                lambda s, m: torch.softmax(s, dim=-1) * m),
        Mistake("Your weights are non-zero where the mask is False: True means may attend.",
                lambda s, m: safe_softmax(s, ~m)),
        Mistake("Your masked keys still get weight, as a score of 0 gives e^0 = 1: give them a score that softmax "
                "turns into 0, then zero the rows with no key.", variant(safe_softmax, fill=0.0)),
        Mistake("Your guard lines up with the keys, not the queries: mask.any(-1) needs keepdim.",
                lambda s, m: safe_softmax(s, m) * m.any(-1)),
        Mistake("Your rows with an allowed key do not sum to 1: the softmax must run over the keys, dim=-1.",
                when=lambda got, args: got.is_floating_point() and bool((got.float().nan_to_num(0.0).sum(-1) - 1).abs()[
                    args[1].expand(args[0].shape).any(-1)].max() > 1e-2),
                example=variant(safe_softmax, dim=-2)),
        Mistake(lambda got, args: f"Your masked keys get weights up to {largest_hidden(got, args[1]):.1e}, not 0: "
                "a finite fill leaves exp(fill - max) to them; take one whose exp is 0.", always=True,
                when=lambda got, args: 1e-30 < largest_hidden(got, args[1]) < 1e-3,
                example=variant(safe_softmax, fill=-15.0)),
    ])
