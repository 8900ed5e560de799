"""from_valid_lens against a d2l-style reference: lengths per example (B,) or per query (B, Tq).

The reference below is written the way Dive into Deep Learning builds its masked softmax:
flatten the scores to one row per query, give every row its own length (one length per
example is repeated over that example's queries; one length per query is flattened), mark
position j of a row as real when j < its length, and reshape back. It shares no code with
attnlib, so a wrong axis or polarity in attnlib shows up here.
"""

from __future__ import annotations

import pytest
import torch

from attnlib import from_valid_lens, masked_softmax


def d2l_style_mask(valid_lens: torch.Tensor, tq: int, tk: int) -> torch.Tensor:
    """bool (B, Tq, Tk), True where query i of example b may see key j (the reference)."""
    if valid_lens.dim() == 1:
        row_lens = torch.repeat_interleave(valid_lens, tq)  # (B,) -> (B * Tq,)
    else:
        row_lens = valid_lens.reshape(-1)  # (B, Tq) -> (B * Tq,)
    keep = torch.arange(tk, dtype=torch.float32)[None, :] < row_lens[:, None]  # (B * Tq, Tk)
    return keep.reshape(-1, tq, tk)  # (B * Tq, Tk) -> (B, Tq, Tk)


def d2l_style_masked_softmax(scores: torch.Tensor, valid_lens: torch.Tensor) -> torch.Tensor:
    """d2l's recipe: masked scores replaced by -1e6, then a plain softmax (B, Tq, Tk)."""
    keep = d2l_style_mask(valid_lens, scores.shape[1], scores.shape[2])
    return torch.softmax(torch.where(keep, scores, torch.tensor(-1e6)), dim=-1)


def test_the_notes_example_is_three_queries_of_one_example():
    """The [2, 3, 1] of the d2l notes: query 0 sees 2 keys, query 1 all 3, query 2 one."""
    mask = from_valid_lens(torch.tensor([[2, 3, 1]]), 3, ndim=3)  # (B=1, Tq=3) -> (1, Tq, Tk)
    assert mask.shape == (1, 3, 3)
    assert mask[0].int().tolist() == [[1, 1, 0], [1, 1, 1], [1, 0, 0]]
    assert torch.equal(mask, d2l_style_mask(torch.tensor([[2, 3, 1]]), 3, 3))


@pytest.mark.parametrize("b,tq,tk", [(1, 1, 1), (2, 3, 5), (4, 5, 2), (3, 3, 3)])
def test_per_query_lengths_match_the_reference(b, tq, tk):
    gen = torch.Generator().manual_seed(b * 100 + tq * 10 + tk)
    valid_lens = torch.randint(0, tk + 1, (b, tq), generator=gen)  # (B, Tq), zeros included
    expected = d2l_style_mask(valid_lens, tq, tk)  # (B, Tq, Tk)
    three = from_valid_lens(valid_lens, tk, ndim=3)
    four = from_valid_lens(valid_lens, tk, ndim=4)
    assert three.dtype == four.dtype == torch.bool
    assert three.shape == (b, tq, tk) and four.shape == (b, 1, tq, tk)
    assert torch.equal(three, expected)
    assert torch.equal(four[:, 0], expected)


@pytest.mark.parametrize("b,tq,tk", [(1, 1, 1), (2, 3, 5), (4, 5, 2), (3, 3, 3)])
def test_per_example_lengths_are_unchanged_and_match_the_reference(b, tq, tk):
    gen = torch.Generator().manual_seed(b * 100 + tq * 10 + tk + 1)
    valid_lens = torch.randint(0, tk + 1, (b,), generator=gen)  # (B,)
    expected = d2l_style_mask(valid_lens, tq, tk)  # (B, Tq, Tk), the same row for every query
    three = from_valid_lens(valid_lens, tk, ndim=3)
    four = from_valid_lens(valid_lens, tk)  # ndim=4 is the default
    assert three.shape == (b, 1, tk) and four.shape == (b, 1, 1, tk)
    assert torch.equal(three.expand(b, tq, tk), expected)
    assert torch.equal(four.expand(b, 1, tq, tk)[:, 0], expected)


def test_nested_lists_are_accepted():
    assert torch.equal(from_valid_lens([[2, 3, 1]], 3, ndim=3), from_valid_lens(torch.tensor([[2, 3, 1]]), 3, ndim=3))
    assert torch.equal(from_valid_lens([2, 3, 1], 3), from_valid_lens(torch.tensor([2, 3, 1]), 3))


def test_weights_match_the_reference_softmax_where_a_query_has_a_key():
    """On rows with at least one key, attnlib's -inf masking and d2l's -1e6 agree."""
    gen = torch.Generator().manual_seed(7)
    valid_lens = torch.randint(1, 6, (3, 4), generator=gen)  # (B, Tq), every query sees >= 1 key
    scores = torch.randn(3, 4, 5, generator=gen)  # (B, Tq, Tk)
    ours = masked_softmax(scores, from_valid_lens(valid_lens, 5, ndim=3))
    torch.testing.assert_close(ours, d2l_style_masked_softmax(scores, valid_lens))


def test_a_query_with_length_zero_gets_zero_weights_not_uniform_ones():
    """Where they differ: d2l's -1e6 spreads a length-0 row evenly, attnlib gives zeros."""
    valid_lens = torch.tensor([[2, 0]])  # (B=1, Tq=2): query 1 sees no key
    scores = torch.tensor([[[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]])  # (1, Tq, Tk)
    ours = masked_softmax(scores, from_valid_lens(valid_lens, 3, ndim=3))
    reference = d2l_style_masked_softmax(scores, valid_lens)
    torch.testing.assert_close(ours[0, 0], reference[0, 0])
    assert (ours[0, 1] == 0).all()
    torch.testing.assert_close(reference[0, 1], torch.full((3,), 1 / 3))


def test_valid_lens_is_not_modified():
    valid_lens = torch.tensor([[2, 3, 1]])
    copy = valid_lens.clone()
    from_valid_lens(valid_lens, 3, ndim=3)
    assert torch.equal(valid_lens, copy)


@pytest.mark.parametrize("shape", [(), (2, 3, 4)])
def test_a_valid_lens_that_is_neither_b_nor_b_tq_names_both_shapes(shape):
    valid_lens = torch.ones(shape, dtype=torch.long)
    with pytest.raises(ValueError) as err:
        from_valid_lens(valid_lens, 5)
    message = str(err.value)
    assert "valid_lens" in message and "(B,)" in message and "(B, Tq)" in message
    got = "()" if not shape else "(" + ", ".join(map(str, shape)) + ")"
    assert f"got shape {got}" in message


@pytest.mark.parametrize("ndim", [2, 1, 0])
def test_per_query_lengths_need_ndim_3_or_more(ndim):
    with pytest.raises(ValueError) as err:
        from_valid_lens(torch.tensor([[2, 3, 1]]), 3, ndim=ndim)
    message = str(err.value)
    assert "ndim must be an int >= 3" in message and "(1, 3)" in message and f"got {ndim}" in message


def test_per_example_lengths_need_ndim_2_or_more():
    with pytest.raises(ValueError, match=r"ndim must be an int >= 2 .* got 1"):
        from_valid_lens(torch.tensor([2, 3]), 3, ndim=1)


def test_bad_lengths_and_dtypes_raise_as_padding_mask_does():
    with pytest.raises(ValueError, match="valid_lens"):
        from_valid_lens(torch.tensor([[2, 4]]), 3, ndim=3)  # a length above max_len
    with pytest.raises(TypeError, match="valid_lens"):
        from_valid_lens(torch.tensor([[2.0, 1.0]]), 3, ndim=3)  # float lengths
    with pytest.raises(TypeError, match="valid_lens"):
        from_valid_lens("2, 3", 3)
