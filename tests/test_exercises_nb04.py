"""What is specific to notebook 04's exercises (tests/test_exercises_generic.py covers every mistake's own hint).

- Exercise 3 tells the padding laid along the queries from the padding laid along both axes: the first
  lets a real query see the padded keys of a left-padded sequence, the second empties a right-padded
  sequence's padded rows, and each gets its own hint (a learner once got the other one's).
- The probes of Exercises 3 and 4 vary the side of the padding, B, T and B = T against B != T, so that a
  mask read from lengths, or a (B, Tk) mask that broadcasts only when B = T, is caught.
- Exercise 5's float16 probe accepts weights computed in float32, and its loss-mask probe catches an
  additive -inf mask repaired after the softmax (right weights, NaN gradient).
"""

from __future__ import annotations

import pytest
import torch

import attnlib
from attnlib.exercises import nb04


def said(capsys: pytest.CaptureFixture[str]) -> str:
    out = capsys.readouterr().out
    assert out.count("\n") == 1, out  # exactly one line
    return out.strip()


def tril(t: int) -> torch.Tensor:
    return torch.ones(t, t, dtype=torch.bool).tril()


# --- Exercise 2: a (B, 1, Tk) key mask against (B, H, Tq, Tk) scores ------------------------------------


def test_exercise_2_expects_what_torch_broadcasts():
    """Sequence 0's rows in heads 0 and 1 are the rows of the (B, Tk) mask, not sequence 0's own padding."""
    pad = torch.tensor([[True] * 4, [True, True, False, False]])  # the running example, B = H = 2
    masked = torch.zeros(2, 2, 4, 4).masked_fill(~pad[:, None, :], float("-inf"))  # (B, H, Tq, Tk)
    assert masked[0, :, 0].isfinite().int().tolist() == list(nb04.HEADS.values())
    assert (masked[0].isfinite() == masked[1].isfinite()).all()  # both sequences get the same two rows


# --- Exercise 3: which axis the padding hides ------------------------------------------------------------


def padding_on_queries(attention_mask):
    real = attention_mask == 1
    return real[:, None, :, None] & tril(attention_mask.shape[-1])


def padding_on_both_axes(attention_mask):
    real = attention_mask == 1
    return real[:, None, :, None] & real[:, None, None, :] & tril(attention_mask.shape[-1])


def test_padding_on_the_queries_is_named_as_such(capsys):
    nb04.check_decoder_mask(padding_on_queries)
    out = said(capsys)
    assert "Your padding runs along the queries" in out and "also hides" not in out and "as well" not in out, out


def test_padding_on_both_axes_is_named_as_such(capsys):
    nb04.check_decoder_mask(padding_on_both_axes)
    out = said(capsys)
    assert "also hides the rows of padded queries" in out and "runs along the queries" not in out, out


def test_the_two_differ_only_on_the_side_of_the_padding():
    """Under right padding the two mistakes give the same mask; under left padding only the keys' version is right."""
    right_padded, left_padded = torch.tensor([[1, 1, 0, 0]]), torch.tensor([[0, 0, 1, 1]])
    assert torch.equal(padding_on_queries(right_padded), padding_on_both_axes(right_padded))
    assert torch.equal(padding_on_both_axes(left_padded), nb04.decoder(left_padded))
    assert not torch.equal(padding_on_queries(left_padded), nb04.decoder(left_padded))


def test_probes_vary_the_padding_side_and_the_shapes():
    masks = [p.args[0] for p in nb04.check_decoder_mask.probe_list()]
    assert any(m.shape[0] == m.shape[1] for m in masks) and any(m.shape[0] != m.shape[1] for m in masks)
    assert any((m[:, 0] == 0).any() for m in masks) and any((m[:, -1] == 0).any() for m in masks)  # left, right
    assert len({m.shape for m in masks}) == len(masks)


def test_a_mask_from_the_lengths_is_caught_by_left_padding(capsys):
    def from_lengths(attention_mask):
        t = attention_mask.shape[-1]
        return (torch.arange(t) < attention_mask.sum(-1, keepdim=True))[:, None, None, :] & tril(t)

    nb04.check_decoder_mask(from_lengths)
    assert "the first n positions as real" in said(capsys)


def test_a_square_mask_without_axes_is_named_where_it_raises(capsys):
    nb04.check_decoder_mask(lambda am: (am == 1) & tril(am.shape[-1]))
    out = said(capsys)
    assert "without its head and query axes" in out and "(B, 1, 1, Tk)" in out, out


@pytest.mark.parametrize(("convert", "named"), [(lambda m: m.long(), "int64"), (lambda m: m.byte(), "uint8"),
                                               (lambda m: m.float(), "0/1 floats"),
                                               (lambda m: torch.zeros(m.shape).masked_fill(~m, float("-inf")),
                                                "0 and -inf")])
def test_a_mask_that_is_not_bool_is_named_without_the_code(capsys, convert, named):
    """Integers, 0/1 floats and a 0/-inf float mask each get their own reason, and no hint writes the comparison."""
    nb04.check_decoder_mask(lambda am: convert(nb04.decoder(am)))
    out = said(capsys)
    assert named in out and "== 1" not in out, out


def test_a_causal_part_of_another_size_is_named(capsys):
    """The notebook's 4 x 4 causal mask, or T read from the batch axis: the causal part's size, not the key axes."""
    nb04.check_decoder_mask(lambda am: (am == 1)[:, None, None, :] & tril(4))
    out = said(capsys)
    assert "causal part is (4, 4) on an input of T = 3" in out and "without its head" not in out, out
    nb04.check_decoder_mask(lambda am: (am == 1)[:, None, None, :] & tril(am.shape[0]))
    assert "causal part is (3, 3) on an input of T = 4" in said(capsys)


def test_attnlibs_own_mask_builders_are_refused(capsys):
    nb04.check_decoder_mask(lambda am: attnlib.from_hf_attention_mask(am) & attnlib.causal_mask(am.shape[-1]))
    assert "calls attnlib's from_hf_attention_mask" in said(capsys)
    nb04.check_safe_masked_softmax(attnlib.masked_softmax)
    assert "calls attnlib's masked_softmax" in said(capsys)


# --- Exercise 4: the module's polarity -------------------------------------------------------------------


def test_an_additive_float_attn_mask_is_told_apart_from_zeros_and_ones(capsys):
    def additive(attention_mask):
        t = attention_mask.shape[-1]
        return attention_mask == 0, torch.zeros(t, t).masked_fill(~tril(t), float("-inf"))

    nb04.check_torch_masks(additive)
    assert "a float mask of 0 and -inf" in said(capsys)
    nb04.check_torch_masks(lambda am: (am == 0, torch.ones(am.shape[-1], am.shape[-1]).triu(1)))
    assert "0/1 floats would block nothing" in said(capsys)


def test_the_module_hides_what_exercise_3_hides():
    """The reference pair, given to nn.MultiheadAttention, leaves non-zero weights exactly where Exercise 3 allows."""
    am = torch.tensor([[0, 1, 1, 1], [1, 1, 1, 0]])  # left and right padding
    x = torch.randn(2, 4, 4, generator=torch.Generator().manual_seed(0))
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(4, 1, batch_first=True).eval()
    key_padding_mask, attn_mask = nb04.torch_masks(am)
    with torch.no_grad():
        _, weights = mha(x, x, x, key_padding_mask=key_padding_mask, attn_mask=attn_mask)  # (B, Tq, Tk)
    assert torch.equal(weights > 0, nb04.decoder(am)[:, 0])  # an empty row is NaN, which is not > 0


# --- Exercise 5: dtypes and the loss-mask gradient -------------------------------------------------------


def _guard(mask):
    return mask.any(dim=-1, keepdim=True)


@pytest.mark.parametrize("answer", [
    lambda s, m: torch.where(_guard(m), torch.softmax(s.masked_fill(~m, float("-inf")), -1, dtype=torch.float32), 0.0),
    lambda s, m: torch.where(_guard(m), torch.exp(s.float().masked_fill(~m, float("-inf"))
                                                  - torch.logsumexp(s.float().masked_fill(~m, float("-inf")), -1,
                                                                    keepdim=True)), 0.0),
    lambda s, m: torch.where(_guard(m), torch.softmax(s.double().masked_fill(~m, float("-inf")), -1), 0.0),
])
def test_float16_scores_computed_in_float32_or_with_logsumexp_are_right(capsys, answer):
    nb04.check_safe_masked_softmax(answer)
    assert said(capsys).startswith("Exercise 5: correct.")


def test_an_additive_inf_mask_then_nan_to_num_is_caught_by_its_gradient(capsys):
    def additive_then_nan_to_num(scores, mask):
        additive = torch.zeros_like(scores).masked_fill(~mask, float("-inf"))
        return torch.softmax(scores + additive, dim=-1).nan_to_num(0.0)

    nb04.check_safe_masked_softmax(additive_then_nan_to_num)
    out = said(capsys)
    assert out.startswith("Exercise 5: not yet. Your weights are right, but under the loss mask") and "NaN" in out

    def masked_fill_then_nan_to_num(scores, mask):  # masked_fill sends no gradient to the masked scores: right
        return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1).nan_to_num(0.0)

    nb04.check_safe_masked_softmax(masked_fill_then_nan_to_num)
    assert said(capsys).startswith("Exercise 5: correct.")


def test_the_last_probe_has_an_empty_query_whose_key_others_see_and_a_large_masked_score():
    """An empty query j whose key j is allowed to others (a guard without keepdim zeroes that column), and a masked
    key scoring far above the allowed ones (a maximum over every key makes the allowed ones underflow)."""
    scores, mask = nb04.check_safe_masked_softmax.probe_list()[-1].args
    empty = ~mask.any(-1)
    assert any(mask[:, j].any() for j in empty.nonzero()[:, 0].tolist() if j < mask.shape[-1])
    assert (scores.masked_fill(mask, float("-inf")).amax(-1) - scores.masked_fill(~mask, float("-inf")).amax(-1)
            > 100).any()


def test_finfo_min_with_the_guard_is_right_and_without_it_is_uniform(capsys):
    def finfo_min(scores, mask, guard):
        weights = torch.softmax(scores.masked_fill(~mask, torch.finfo(scores.dtype).min), dim=-1)
        return torch.where(_guard(mask), weights, 0.0) if guard else weights

    nb04.check_safe_masked_softmax(lambda s, m: finfo_min(s, m, True))
    assert said(capsys).startswith("Exercise 5: correct.")
    nb04.check_safe_masked_softmax(lambda s, m: finfo_min(s, m, False))
    assert "1/Tk on every key" in said(capsys)
