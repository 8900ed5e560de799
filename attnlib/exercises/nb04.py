"""Exercises of notebook 04 (padding and causal masks), declared as data: each ``check_*`` below is an
:class:`~attnlib.exercises.Exercise` that the notebook's check cell calls."""

from __future__ import annotations

import re

import torch

from . import Exercise, Mistake, Probe, variant

__all__ = ["check_decoder_mask", "check_head_broadcast", "check_safe_masked_softmax", "check_sequence1_mask",
           "check_torch_masks"]

ZERO_ROWS = "then give the rows of the queries with no allowed key the zeros they should hold"


def _rows(mask: torch.Tensor) -> list:
    return mask.int().tolist()


def _as_01(answer):
    """A matrix of 0/1 or booleans (lists, tuples, a tensor or an array) as a list of lists of ints; else None."""
    try:
        t = torch.as_tensor(answer.tolist() if hasattr(answer, "tolist") else answer)
    except Exception:
        return None
    ok = t.dim() == 2 and not t.dtype.is_complex and bool(((t == 0) | (t == 1)).all())
    return _rows(t) if ok else None


def _digit_rows(example) -> Mistake:
    """Rows written as strings of digits ('1010'), seen before the answer is read as numbers."""
    def digits(answer) -> bool:
        rows = answer.values() if isinstance(answer, dict) else answer if isinstance(answer, (list, tuple)) \
            else [answer]
        return any(isinstance(row, str) and row.strip() and set(row) <= set("01 ,") for row in rows)
    return Mistake("You wrote rows as strings of digits: write each row as four 0/1 values, one per key t0..t3, in a "
                   "list without quotes, such as [1, 0, 1, 0].", raw=True, when=digits, example=example)


def _tril(t: int, diagonal: int = 0) -> torch.Tensor:
    return torch.ones(t, t, dtype=torch.bool).tril(diagonal)


def _causal(attention_mask: torch.Tensor, diagonal: int = 0) -> torch.Tensor:
    return _tril(attention_mask.shape[-1], diagonal)  # (T, T) for a (B, T) attention_mask


# --- Exercise 1: sequence 1 ("dogs bark" and two pads) of pad[:, None, :] & causal --------------------

SEQ1_PAD = torch.tensor([True, True, False, False])  # "dogs bark <pad> <pad>"


def _first_cell(got, expected, args) -> str:
    """Where the learner's matrix first differs, as a question about that query and key (never the value)."""
    if len(got) != 4 or any(len(row) != 4 for row in got):
        return f"Write four rows of four 0/1 values (row = query t0..t3, column = key t0..t3); got {got}."
    i, j = next((i, j) for i in range(4) for j in range(4) if got[i][j] != expected[i][j])
    return (f"Look again at query t{i} and key t{j}: is t{j} a real token, and is it t{i} itself or in its past? "
            "Both must hold for a 1.")


check_sequence1_mask = Exercise(
    "Exercise 1", expected=_rows(_tril(4) & SEQ1_PAD), read=_as_01,
    unreadable="Write four rows of 0 and 1 (row = query, column = key), such as [[1, 1, 1, 1], ...]; got {got}.",
    correct="The causal triangle with the padded key columns t2 and t3 cut away; the padded queries keep t0 and t1.",
    diagnose=_first_cell,
    mistakes=[
        _digit_rows(["1000", "1100", "1100", "1100"]),
        Mistake("You passed a row of a computed tensor (combined[1]?): this exercise asks you to predict it. Write "
                "the rows yourself, as 0 and 1.", raw=True, example=(_tril(4) & SEQ1_PAD)[None][0],
                when=lambda a: isinstance(a, torch.Tensor) and a._base is not None),
        Mistake("You combined with |: your mask lets query t0 see t1, its future, and query t3 see the pads. With "
                "True = may attend a key must pass both masks: &.", answer=_rows(_tril(4) | SEQ1_PAD)),
        Mistake("Your queries t2 and t3 see key t2: the causal triangle alone, sequence 0's pattern. Sequence 1's "
                "two pads, keys t2 and t3, are hidden from every query.", answer=_rows(_tril(4))),
        Mistake("Every row of yours is [1, 1, 0, 0]: the padding mask alone. The causal mask also hides the future: "
                "query t0 may not see t1.", answer=_rows(SEQ1_PAD.expand(4, 4))),
        Mistake("Your rows for t2 and t3 are empty: you hid the padded queries. Padding hides keys, not queries; "
                "the loss mask drops a padded query's output.", answer=_rows(_tril(4) & SEQ1_PAD & SEQ1_PAD[:, None])),
        Mistake("Your rows read like columns: row = query, column = key (query t0 sees key t0 only).",
                answer=_rows((_tril(4) & SEQ1_PAD).T)),
        Mistake("Your triangle is above the diagonal, the future: query t0 would see t1. A query sees itself and its "
                "past.", answer=_rows(_tril(4).T & SEQ1_PAD)),
        Mistake("Your matrix is the exact opposite: 1 where a query may NOT attend. That is nn.MultiheadAttention's "
                "polarity (True = blocked); here 1 = may attend.", answer=_rows(~(_tril(4) & SEQ1_PAD))),
    ])


# --- Exercise 2: sequence 0's keys in heads 0 and 1 when ~pad[:, None, :] (B, 1, Tk) masks (B, H, Tq, Tk) ------
# B = H = 2, T = 4, pad = [[1, 1, 1, 1], [1, 1, 0, 0]]: (2, 1, 4) lines up with (H, Tq, Tk), so head h gets row h.

HEADS = {"my_head0": [1, 1, 1, 1], "my_head1": [1, 1, 0, 0]}


def _as_row(answer):
    """Four 0/1 values or booleans (a list, tuple, tensor or array) as a list of ints; else None."""
    row = _as_01([answer.tolist() if hasattr(answer, "tolist") else answer])
    return row[0] if row is not None and len(row[0]) == 4 else None


def _heads(head0, head1):
    return {"my_head0": head0, "my_head1": head1}


check_head_broadcast = Exercise(
    "Exercise 2", expected=HEADS, answers=tuple(HEADS), read=_as_row,
    unreadable="Write each head's row as four 0/1 values, key t0 to t3, such as [1, 0, 1, 0]; got {got}.",
    correct="The (B, 1, Tk) mask lines up with (H, Tq, Tk): head h gets sequence h's padding, in every sequence. It "
            "runs only because B = H, and it is wrong: a key mask needs (B, 1, 1, Tk).",
    diagnose=lambda got, expected, args: "Line the shapes up from the right, (2, 1, 4) under (2, 2, 4, 4), and "
                                         "follow which row of the mask reaches each head.",
    mistakes=[
        _digit_rows({"my_head0": "1111", "my_head1": "1100"}),
        Mistake("Both your heads get sequence 0's own padding, as a (B, 1, 1, Tk) mask would give. But this mask is "
                "(B, 1, Tk): line the shapes up from the right, (2, 1, 4) under (2, 2, 4, 4). Which axis of the "
                "scores does the mask's sequence axis meet?", answer=_heads([1, 1, 1, 1], [1, 1, 1, 1])),
        Mistake("Your two rows are the mask's two rows, each in the other head: which row of (2, 1, 4) lines up with "
                "head 0?", answer=_heads([1, 1, 0, 0], [1, 1, 1, 1])),
        Mistake("Both your heads got sequence 1's padding: the mask has two different rows, and each reaches one "
                "head.", answer=_heads([1, 1, 0, 0], [1, 1, 0, 0])),
        Mistake("You wrote 1 where a key is hidden: here 1 = may attend (masked_fill writes -inf where its mask, "
                "~pad, is True: at the padding).", when=lambda got: [0, 0, 1, 1] in got.values(),
                example=_heads([0, 0, 0, 0], [0, 0, 1, 1])),
        Mistake("Your rows look causal: there is no causal mask here, only the key mask, so every query of a head "
                "sees the same keys.", when=lambda got: any(row[0] == 1 and sum(row) == 1 for row in got.values()),
                example=_heads([1, 0, 0, 0], [1, 0, 0, 0])),
    ])


# --- Exercise 3: a decoder's mask (B, 1, T, T) from Hugging Face's attention_mask -------------------------

def decoder(attention_mask: torch.Tensor, *, keys: bool = True, queries: bool = False, join: str = "&",
            diagonal: int = 0) -> torch.Tensor:
    """The reference; the keywords switch on one classic mistake each."""
    t = attention_mask.shape[-1]
    real = attention_mask == 1  # (B, Tk)
    causal = _tril(t, diagonal)  # (Tq, Tk)
    padding = torch.ones(real.shape[0], 1, t, t, dtype=torch.bool)
    if keys:
        padding = padding & real[:, None, None, :]  # (B, 1, 1, Tk): hides padded columns
    if queries:
        padding = padding & real[:, None, :, None]  # (B, 1, Tq, 1): hides padded rows
    return padding & causal if join == "&" else (real[:, None, None, :] | causal)


def _fills(got, want) -> bool:
    """``got`` (bool) broadcasts to ``want``'s shape and then equals it."""
    return got.dtype == torch.bool and got.dim() <= want.dim() and torch.equal(got.broadcast_to(want.shape), want)


def _hf_probes():
    return [Probe((torch.tensor([[0, 0, 1, 1], [1, 1, 1, 1], [0, 1, 1, 1]]),), "left padding, B = 3, T = 4"),
            Probe((torch.tensor([[1, 1, 0], [1, 1, 1], [1, 0, 0]]),), "right padding, B = T = 3"),
            Probe((torch.tensor([[1, 1, 1, 1, 0], [1, 1, 0, 0, 0]]),), "right padding, B = 2, T = 5"),
            Probe((torch.tensor([[0, 0, 0, 1, 1, 1]]),), "left padding, B = 1, T = 6")]


def _dtype_hint(name: str, mask: torch.Tensor, polarity: str = "True = blocked", adds: str = "The module") -> str:
    """The hint for a mask that is not bool: a 0/-inf float mask, 0/1 floats, or integers."""
    if mask.is_floating_point() and bool(torch.isinf(mask).any()):
        return (f"Your {name} is a float mask of 0 and -inf, which {adds.lower()} adds to the scores: it accepts that, "
                f"but this exercise asks for the boolean form, {polarity}.")
    why = (f"{adds} adds a float mask to the scores, so 0/1 floats would block nothing."
           if mask.is_floating_point() else "Comparisons and & give booleans: keep the result bool, with no "
           "arithmetic or conversion after them.")
    return f"Your {name} has dtype {str(mask.dtype).removeprefix('torch.')}: return booleans, {polarity}. {why}"


def _causal_size(err, args) -> int | None:
    """The causal part's size in a broadcasting error whose other size is this input's T (None otherwise)."""
    sizes = {int(n) for n in re.findall(r"size of tensor \w \((\d+)\)", str(err))}
    t = args[0].shape[-1]
    return (sizes - {t}).pop() if t in sizes and len(sizes) == 2 else None


SIZE_FROM_INPUT = ("its size must follow each input (not a notebook variable, nor the batch axis). Read T from "
                   "attention_mask's key axis.")
FLOAT_LOGIC = ("Your function applied & or ~ to a float mask (torch.ones and tril give floats), and torch refuses "
               "that: build the masks as booleans, with dtype=torch.bool, .bool() or a comparison.")

check_decoder_mask = Exercise(
    "Exercise 3", reference=decoder, probes=_hf_probes,
    refuse=("attnlib.masks.from_hf_attention_mask", "attnlib.masks.causal_mask",
            "attnlib.attention.combine_with_key_mask"),
    correct="Padded keys and future keys are hidden from every head and query, whichever side the padding is on.",
    mistakes=[
        Mistake(lambda got: _dtype_hint("mask", got, "True = may attend", "torch"),
                when=lambda got: got.dtype != torch.bool, example=lambda am: decoder(am).int()),
        Mistake(FLOAT_LOGIC, raises=(RuntimeError, TypeError), match="Float|Boolean",
                example=lambda am: (am == 1)[:, None, None, :] & torch.ones(am.shape[-1], am.shape[-1]).tril()),
        Mistake(lambda err, args: f"Your causal part is ({_causal_size(err, args)}, {_causal_size(err, args)}) on "
                f"an input of T = {args[0].shape[-1]}: {SIZE_FROM_INPUT}", raises=RuntimeError,
                match="dimension [23]", when=lambda err, args: _causal_size(err, args) is not None,
                example=lambda am: (am == 1)[:, None, None, :] & _tril(4)),
        Mistake("Your (B, Tk) mask met the (Tq, Tk) causal mask without its head and query axes: broadcasting "
                "reads row b as query b, an error when B != T, silently wrong when B = T. Give it (B, 1, 1, Tk) first.",
                raises=RuntimeError, match="size", example=lambda am: (am == 1) & _causal(am)),
        Mistake("Your mask also hides the rows of padded queries (right padding leaves them no key). Padding hides "
                "keys only, (B, 1, 1, Tk): a padded query keeps its row.", answer=variant(decoder, queries=True)),
        Mistake("Your padding runs along the queries: (B, 1, Tq, 1) hides rows, so a real query still attends to "
                "the padded keys before it (left padding shows it). The padding mask must hide the keys, the "
                "columns: (B, 1, 1, Tk).", answer=variant(decoder, keys=False, queries=True)),
        Mistake("Your mask treats the first n positions as real (n = the number of 1s): right padding only. A "
                "tokenizer may pad on the left: build the key mask from attention_mask itself.",
                answer=lambda am: decoder((torch.arange(am.shape[-1]) < am.sum(-1, keepdim=True)).long())),
        Mistake("You read 1 as blocked: in Hugging Face's attention_mask 1 marks a real token, one that may be "
                "attended to, and 0 the padding.", answer=lambda am: decoder(1 - am)),
        Mistake("Your mask is True exactly where a query may NOT attend: that is nn.MultiheadAttention's polarity "
                "(True = blocked). Here True = may attend.", answer=lambda am: ~decoder(am)),
        Mistake("You combined with |: a key passes when either mask allows it, so the future and the padding leak "
                "in. It must pass both: &.", answer=variant(decoder, join="|")),
        Mistake(lambda got: f"Your mask has a batch of {got.shape[0]} whatever attention_mask holds (the notebook's "
                "pad?): build it from the argument.", example=lambda am: decoder(torch.tensor([[1, 1, 1, 1]] * 2)),
                when=lambda got, args: got.shape[0] != len(args[0]) and got.shape[1:] == (1, *args[0].shape[1:] * 2)),
        Mistake("Your batch axis comes second, (1, B, T, T): the head axis goes after the batch axis.",
                answer=lambda am: decoder(am).transpose(0, 1)),
        Mistake("Your mask is (B, Tq, Tk): against (B, H, Tq, Tk) scores its B axis would line up with the heads. "
                "Keep a singleton head axis: (B, 1, Tq, Tk).", answer=lambda am: decoder(am)[:, 0]),
        Mistake("Your mask is the causal triangle alone: & it with the key mask of the real tokens.",
                when=lambda got, args: _fills(got, _tril(args[0].shape[-1]).expand(args[0].shape[0], 1, -1, -1)),
                example=_causal),
        Mistake("Your mask has the padding but no causal triangle: query 0 may see key 1, its future.",
                when=lambda got, args: _fills(got, decoder(args[0], diagonal=args[0].shape[-1])),
                example=lambda am: (am == 1)[:, None, None, :]),
        Mistake("Your triangle points the wrong way: query 0 sees the keys after it. Query i sees keys 0..i, on and "
                "below the diagonal.", answer=lambda am: (am == 1)[:, None, None, :] & _causal(am).T),
        Mistake("Your query i may not attend to itself: the diagonal belongs in the mask (key j <= query i).",
                answer=variant(decoder, diagonal=-1)),
        Mistake("Your causal part is True above the diagonal and False on it: the future is allowed and the query "
                "itself hidden. True = may attend.", answer=lambda am: (am == 1)[:, None, None, :] & ~_causal(am)),
    ])


# --- Exercise 4: the same decoder's two masks for nn.MultiheadAttention ----------------------------------

def torch_masks(attention_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(key_padding_mask (B, Tk), attn_mask (Tq, Tk)), both bool, True = blocked."""
    return attention_mask == 0, ~_tril(attention_mask.shape[-1])


check_torch_masks = Exercise(
    "Exercise 4", reference=torch_masks, probes=lambda: [p for p in _hf_probes() if p.args[0].shape != (3, 3)] + [
        Probe((torch.ones(2, 3, dtype=torch.long),), "no padding, B = 2, T = 3")],
    correct="True marks the padding and the future: nn.MultiheadAttention hides exactly what our mask hides.",
    mistakes=[
        Mistake("Return two masks, (key_padding_mask, attn_mask): the module takes the padding and the causal part "
                "as two arguments.", when=lambda got: isinstance(got, torch.Tensor), example=lambda am: ~decoder(am)),
        Mistake("Your pair is in the other order, (attn_mask, key_padding_mask): return it in the order the "
                "exercise names, key_padding_mask first.", example=lambda am: torch_masks(am)[::-1],
                when=lambda got, args: got[1].shape == args[0].shape != got[0].shape),
        Mistake(FLOAT_LOGIC, raises=(RuntimeError, TypeError), match="Float|Boolean",
                example=lambda am: (am == 0, ~torch.ones(am.shape[-1], am.shape[-1]).tril())),
        Mistake(lambda got: _dtype_hint(*next((n, m) for n, m in zip(("key_padding_mask", "attn_mask"), got)
                                              if m.dtype != torch.bool)),
                when=lambda got: any(m.dtype != torch.bool for m in got),
                example=lambda am: (1 - am, ~_causal(am))),
        Mistake(lambda got, args: f"Your attn_mask is {tuple(got[1].shape)} on an input of T = {args[0].shape[-1]}: "
                + SIZE_FROM_INPUT, when=lambda got, args: got[1].dim() == 2 and got[1].shape[0] == got[1].shape[1]
                != args[0].shape[-1], example=lambda am: (am == 0, ~_tril(4))),
        Mistake("Your key_padding_mask must be (B, Tk): the module adds the head and query axes itself.",
                when=lambda got, args: got[0].dim() != 2 and got[0].numel() == args[0].numel(),
                example=lambda am: ((am == 0)[:, None, None, :], ~_causal(am))),
        Mistake("Both your masks are in attnlib's polarity (True = may attend). nn.MultiheadAttention reads True as "
                "blocked: True must mark the padding and the future.", answer=lambda am: (am == 1, _causal(am))),
        Mistake("Your key_padding_mask is right; your attn_mask is True on and below the diagonal, which blocks the "
                "past and shows the future. True must mark the future.", answer=lambda am: (am == 0, _causal(am))),
        Mistake("Your attn_mask is right; your key_padding_mask is True at the real tokens, which hides them and "
                "shows the padding. True must mark the padding.", answer=lambda am: (am == 1, ~_causal(am))),
        Mistake("Your attn_mask blocks the diagonal too: a query may attend to itself (key j <= query i), and query "
                "0 would be left with no key at all.", answer=lambda am: (am == 0, ~_causal(am, -1))),
        Mistake("Your attn_mask leaves the next key, j = i + 1, unblocked: a query's first future key must be blocked "
                "too.", answer=lambda am: (am == 0, ~_causal(am, 1))),
        Mistake("Your key_padding_mask blocks the last positions (from the number of 1s): right padding only. A "
                "tokenizer may pad on the left: take the padding from attention_mask itself.",
                answer=lambda am: (torch.arange(am.shape[-1]) >= am.sum(-1, keepdim=True), ~_causal(am))),
    ])


# --- Exercise 5: a masked softmax that survives a query with no keys --------------------------------------

def safe_softmax(scores: torch.Tensor, mask: torch.Tensor, *, fill: float = float("-inf"), guard: bool = True,
                 dim: int = -1, keepdim: bool = True) -> torch.Tensor:
    """The reference; the keywords switch on one classic mistake each."""
    weights = torch.softmax(scores.masked_fill(~mask, fill), dim=dim)
    return torch.where(mask.any(dim=-1, keepdim=keepdim), weights, 0.0) if guard else weights


LOSS_VALUES = torch.linspace(-1.0, 1.0, 12).reshape(4, 3)  # (Tk, Ev): the values of the loss-mask probe


def _loss_on_real_queries(weights, args) -> torch.Tensor:
    """The loss mask of "A query with no keys left": a loss on the outputs of the real queries 2 and 3 only."""
    return (weights @ LOSS_VALUES.to(weights.dtype))[..., 2:, :].sum()


NAN_GRADIENT = ("Your weights are right, but under the loss mask (a loss on the real queries 2 and 3) the scores' "
                "gradient is NaN in the rows of queries 0 and 1, which have no key. The cause is the additive -inf "
                "mask (scores + 0 or -inf): those rows' softmax is 0/0 = NaN, and the addition passes its NaN gradient "
                "on, whatever fixes the weights later. Use masked_fill: it sends the masked scores no gradient.")


def _masked_top(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The rows with an allowed key whose largest score is on a masked key, tens above the allowed ones (bool)."""
    allowed = scores.masked_fill(~mask, float("-inf")).amax(-1)
    return mask.expand(scores.shape).any(-1) & (scores.amax(-1) - allowed > 50)


def _softmax_probes():
    gen = torch.Generator().manual_seed(0)
    mask = torch.tensor([False, False, True, True]) & _tril(4)  # left padding & causal: queries 0, 1 see no key
    scores = torch.randn(1, 4, 4, generator=gen)  # (B, Tq, Tk)
    keys = torch.tensor([[True] * 5, [True, True, False, False, False]])[:, None, None, :]  # (B, 1, 1, Tk)
    first = torch.tensor([[False] * 3, [True, True, False], [True] * 3])  # query 0 has no key; key 0 is seen
    return [(scores, mask), (torch.randn(2, 2, 3, 5, generator=gen), keys), (scores.half(), mask),
            Probe((scores, mask), "the loss-mask example", NAN_GRADIENT, loss=_loss_on_real_queries),
            Probe((torch.tensor([[0.3, -1.2, 0.8], [0.0, 1.0, 1000.0], [0.5, -0.4, 1.5]]), first),
                  "(Tq, Tk) = (3, 3), query 0 with no key, query 1's masked key 2 scoring 1000")]


check_safe_masked_softmax = Exercise(
    "Exercise 5", reference=safe_softmax, probes=_softmax_probes, refuse=("attnlib.attention", "attnlib.masks"),
    correct="Masked keys get exactly 0, a query with no key a zero row, and the gradient stays finite.",
    mistakes=[
        Mistake("In float16 your rows for the queries with no key are NaN, though float32 gives zeros: a constant of "
                "yours does not survive float16. A floor such as 1e-12 rounds to 0 there (0/0), a fill such as -1e9 to "
                "-inf. Take such constants from the scores' dtype (torch.finfo), or zero those rows explicitly.",
                when=lambda got, args: args[0].dtype == torch.float16 and bool(got.isnan().any()),
                example=lambda s, m: (e := (s.masked_fill(~m, float("-inf")) - s.amax(-1, keepdim=True)).exp())
                / e.sum(-1, keepdim=True).clamp_min(1e-12)),
        Mistake("Your rows for queries 0 and 1, which have no key they may attend to, are NaN: with every key masked "
                "the weights come out as 0/0 (the softmax of a row of -inf, or a division by a row sum of 0). Keep "
                f"the masking, {ZERO_ROWS}.", answer=variant(safe_softmax, guard=False)),
        Mistake("Your rows for the queries with no key put 1/Tk on every key, padding and future included: a finite "
                f"fill such as -1e9 or finfo.min makes them uniform. Fill with float('-inf'), {ZERO_ROWS}.",
                answer=variant(safe_softmax, fill=-1e9, guard=False)),
        Mistake("Your function fails on float16 scores: your fill does not fit in float16 (its largest value is "
                "65504; -1e9 and float32's finfo.min are far beyond), so masked_fill refuses it. Take the fill from "
                f"the scores' own dtype, or use float('-inf'), which every float dtype holds; {ZERO_ROWS}.",
                raises=RuntimeError, when=lambda err, args: args[0].dtype == torch.float16,
                example=variant(safe_softmax, fill=-1e9)),
        Mistake("A masked key's large score changed the allowed keys' weights: your shift, the row's maximum, runs "
                "over the masked keys too, and the allowed scores minus it underflow in exp. Take the maximum over "
                "the allowed keys only: mask before the max.",
                when=lambda got, args: bool((_masked_top(*args) & (got == 0).all(-1)).any()),
                example=lambda s, m: (e := torch.where(m, (s - s.amax(-1, keepdim=True)).exp(), 0.0))
                / e.sum(-1, keepdim=True).clamp_min(torch.finfo(s.dtype).tiny)),
        Mistake("A masked key's large score made a row with allowed keys NaN: exp of that score overflows to inf, "
                "and inf * 0 is NaN (or a maximum taken over it made every allowed key underflow, and 0/0 is NaN). "
                "Keep the masked scores out of exp and of the max: mask the scores first.",
                when=lambda got, args: bool((_masked_top(*args) & got.isnan().any(-1)).any()),
                example=lambda s, m: (e := s.exp() * m) / e.sum(-1, keepdim=True).clamp_min(torch.finfo(s.dtype).tiny)),
        Mistake("You masked after the softmax, which counted the masked keys too: the rows do not sum to 1. Mask "
                "the scores before it, so it renormalises.", answer=lambda s, m: torch.softmax(s, dim=-1) * m),
        Mistake("Your weights are non-zero where the mask is False: True means may attend, and masked_fill writes "
                "where its own mask is True.", answer=lambda s, m: safe_softmax(s, ~m)),
        *[Mistake("Your masked keys still get weight: a masked score set to 0 (scores * mask) is not hidden, since "
                  f"e^0 = 1. A masked key needs a score that softmax turns into exactly 0; {ZERO_ROWS}.",
                  answer=variant(safe_softmax, fill=0.0, guard=guard)) for guard in (True, False)],
        *[Mistake("Your guard for the queries with no key lines up with the keys, not the queries: mask.any(-1) "
                  "without keepdim has one entry per query, and broadcasting lays them along the last axis, so query "
                  "j's empty row zeroes key j's column for every query. Keep the reduced axis.", answer=answer)
          for answer in (variant(safe_softmax, keepdim=False), lambda s, m: safe_softmax(s, m) * m.any(-1))],
        Mistake("Your rows with an allowed key do not sum to 1: the softmax must run over the keys, dim=-1.",
                when=lambda got, args: got.is_floating_point() and bool((got.float().nan_to_num(0.0).sum(-1) - 1).abs()[
                    args[1].expand(args[0].shape).any(-1)].max() > 1e-2),
                example=variant(safe_softmax, dim=-2)),
    ])
