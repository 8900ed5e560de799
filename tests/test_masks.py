"""Masks: one polarity (True = may attend), checked against PyTorch's own definitions."""

from __future__ import annotations

import pytest
import torch
from torch.nn.attention.bias import causal_lower_right, causal_upper_left

from attnlib import (
    causal_mask,
    expand_key_mask,
    from_hf_attention_mask,
    from_key_padding_mask,
    from_torch_attn_mask,
    from_valid_lens,
    padding_mask,
)

SIZES = [(1, 1), (4, 4), (2, 5), (5, 2), (3, 7), (0, 3)]


def test_causal_mask_is_a_lower_triangle():
    expected = torch.tensor(
        [[True, False, False, False], [True, True, False, False], [True, True, True, False], [True, True, True, True]]
    )
    assert torch.equal(causal_mask(4), expected)
    assert causal_mask(4).dtype == torch.bool


@pytest.mark.parametrize("tq,tk", SIZES)
def test_causal_mask_top_left_matches_torch(tq, tk):
    assert torch.equal(causal_mask(tq, tk, align="top_left"), causal_upper_left(tq, tk)._materialize())


@pytest.mark.filterwarnings("ignore:Lower right causal bias")  # torch warns that Tq > Tk leaves rows empty
@pytest.mark.parametrize("tq,tk", SIZES)
def test_causal_mask_bottom_right_matches_torch(tq, tk):
    assert torch.equal(causal_mask(tq, tk, align="bottom_right"), causal_lower_right(tq, tk)._materialize())


def test_causal_alignments_differ_when_lengths_differ():
    top_left, bottom_right = causal_mask(2, 4), causal_mask(2, 4, align="bottom_right")
    assert torch.equal(top_left, torch.tensor([[True, False, False, False], [True, True, False, False]]))
    assert torch.equal(bottom_right, torch.tensor([[True, True, True, False], [True, True, True, True]]))


def test_causal_mask_rejects_unknown_alignment_and_negative_lengths():
    with pytest.raises(ValueError, match="align must be one of"):
        causal_mask(3, align="lower_right")
    with pytest.raises(ValueError, match="q_len must be a non-negative int"):
        causal_mask(-1)


def test_padding_mask_on_lengths_2_3_1():
    expected = torch.tensor([[True, True, False], [True, True, True], [True, False, False]])
    assert torch.equal(padding_mask(torch.tensor([2, 3, 1]), 3), expected)
    assert torch.equal(padding_mask([2, 3, 1], 3), expected)


def test_padding_mask_longer_than_every_sequence_and_per_query_lengths():
    assert torch.equal(padding_mask([0, 2], 4), torch.tensor([[False] * 4, [True, True, False, False]]))
    per_query = padding_mask(torch.tensor([[1, 2], [2, 0]]), 2)  # (B, Tq) -> (B, Tq, Tk)
    assert per_query.shape == (2, 2, 2)
    assert torch.equal(per_query[0], torch.tensor([[True, False], [True, True]]))


@pytest.mark.parametrize("lens", [[-1, 2], [2, 4]])
def test_padding_mask_rejects_lengths_outside_zero_to_max_len(lens):
    with pytest.raises(ValueError, match=r"valid_lens must lie in \[0, max_len=3\]"):
        padding_mask(torch.tensor(lens), 3)


def test_padding_mask_rejects_float_lengths():
    with pytest.raises(TypeError, match="valid_lens must be an integer tensor"):
        padding_mask(torch.tensor([1.0, 2.0]), 3)


def test_expand_key_mask_puts_batch_first_and_keys_last():
    mask = torch.tensor([[True, False, True], [False, True, True]])
    four, three = expand_key_mask(mask), expand_key_mask(mask, ndim=3)
    assert four.shape == (2, 1, 1, 3) and three.shape == (2, 1, 3)
    assert torch.equal(four[1, 0, 0], mask[1]) and torch.equal(three[0, 0], mask[0])


def test_converters_agree_on_one_padding_pattern():
    valid_lens = torch.tensor([2, 3, 1])
    ours = expand_key_mask(padding_mask(valid_lens, 3))
    torch_blocked = torch.tensor([[False, False, True], [False, False, False], [False, True, True]])
    hf = torch.tensor([[1, 1, 0], [1, 1, 1], [1, 0, 0]])
    assert torch.equal(from_valid_lens(valid_lens, 3), ours)
    assert torch.equal(from_key_padding_mask(torch_blocked), ours)
    assert torch.equal(from_hf_attention_mask(hf), ours)


def test_from_torch_attn_mask_inverts_bool_keeps_float_and_unflattens_heads():
    blocked = ~causal_mask(3)  # torch's nn.MultiheadAttention: True = blocked
    assert torch.equal(from_torch_attn_mask(blocked), causal_mask(3))
    additive = torch.zeros(3, 3).masked_fill(blocked, float("-inf"))
    assert torch.equal(from_torch_attn_mask(additive), additive)
    per_head = blocked.expand(2 * 4, 3, 3)  # (B * H, Tq, Tk)
    assert from_torch_attn_mask(per_head, num_heads=4).shape == (2, 4, 3, 3)
    with pytest.raises(ValueError, match="needs num_heads"):
        from_torch_attn_mask(per_head)


def test_from_hf_attention_mask_rejects_values_other_than_0_and_1():
    with pytest.raises(ValueError, match="only 0"):
        from_hf_attention_mask(torch.tensor([[1, 2]]))
