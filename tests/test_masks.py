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


# --- lengths are integers; integer masks keep their convention's polarity or are refused ----------


@pytest.mark.parametrize("lens", [[2.7], [True], [[1, 2], [2.5, 0]], [False, True]])
def test_padding_mask_refuses_float_and_bool_lengths_in_a_list(lens):
    # A forced long dtype read [2.7] as 2 and [True] as 1: lengths must be integers.
    with pytest.raises(TypeError, match="valid_lens must be an integer tensor or a list of ints"):
        padding_mask(lens, 4)


@pytest.mark.parametrize("dtype", [torch.bool, torch.float64, torch.complex64])
def test_padding_mask_refuses_non_integer_tensors(dtype):
    with pytest.raises(TypeError, match=f"got dtype {dtype}"):
        padding_mask(torch.tensor([1, 0]).to(dtype), 4)


@pytest.mark.parametrize("dtype", [torch.int8, torch.uint8, torch.int32, torch.int64])
def test_padding_mask_accepts_every_integer_dtype(dtype):
    assert padding_mask(torch.tensor([1, 3], dtype=dtype), 3).tolist() == [[True, False, False], [True] * 3]


def test_padding_mask_of_no_lengths_and_a_nested_list():
    assert padding_mask([], 4).shape == (0, 4)
    assert padding_mask(torch.tensor([], dtype=torch.long), 0).shape == (0, 0)
    assert padding_mask([[1, 0], [2, 2]], 2).tolist() == [[[True, False], [False, False]], [[True, True]] * 2]
    assert padding_mask((0, 1), 1).tolist() == [[False], [True]]
    assert padding_mask([0, 0], 0).shape == (2, 0)


@pytest.mark.parametrize("max_len", [2.0, True, None, -1])
def test_padding_mask_refuses_a_max_len_that_is_not_a_non_negative_int(max_len):
    with pytest.raises(ValueError, match=f"max_len must be a non-negative int, got {max_len!r}"):
        padding_mask([1], max_len)


def test_padding_mask_is_built_on_the_lengths_device():
    # meta is the only other device here: it holds no values, so no range is checked
    mask = padding_mask(torch.tensor([1, 2], device="meta"), 3)
    assert mask.device.type == "meta" and mask.shape == (2, 3) and mask.dtype == torch.bool


def test_padding_mask_refuses_non_tensors():
    with pytest.raises(TypeError, match="valid_lens must be a torch.Tensor, got int"):
        padding_mask(3, 4)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8])
def test_from_key_padding_mask_refuses_integer_masks_naming_both_calls(dtype):
    # torch's key_padding_mask is True (1) = padding; passing a 0/1 integer mask through
    # unchanged, then advising .bool(), attended only to the padding.
    kpm = torch.tensor([[0, 0, 1], [0, 1, 1]], dtype=dtype)
    with pytest.raises(TypeError) as info:
        from_key_padding_mask(kpm)
    message = str(info.value)
    assert f"key_padding_mask must be a bool or float tensor (as torch requires), got dtype {dtype}" in message
    assert "from_key_padding_mask(key_padding_mask.bool())" in message
    assert "from_hf_attention_mask(key_padding_mask)" in message
    # both calls the message names give the right mask for their polarity
    expected = expand_key_mask(torch.tensor([[True, True, False], [True, False, False]]))
    assert torch.equal(from_key_padding_mask(kpm.bool()), expected)
    assert torch.equal(from_hf_attention_mask(1 - kpm), expected)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int8])
def test_from_torch_attn_mask_refuses_integer_masks_naming_both_calls(dtype):
    with pytest.raises(TypeError) as info:
        from_torch_attn_mask((~causal_mask(3)).to(dtype))
    message = str(info.value)
    assert f"attn_mask must be a bool or float tensor (as torch requires), got dtype {dtype}" in message
    assert "from_torch_attn_mask(attn_mask.bool())" in message and "pass attn_mask.bool() to attnlib" in message


def test_from_key_padding_mask_float_is_reshaped_and_bool_inverted():
    additive = torch.tensor([[0.0, float("-inf"), -2.0]])
    assert torch.equal(from_key_padding_mask(additive, ndim=3), additive[:, None, :])
    assert torch.equal(from_key_padding_mask(torch.tensor([[True, False]]), ndim=3), torch.tensor([[[False, True]]]))
    with pytest.raises(ValueError, match=r"key_padding_mask must have shape \(B, Tk\), got shape \(2,\)"):
        from_key_padding_mask(torch.tensor([True, False]))
    with pytest.raises(TypeError, match="key_padding_mask must be a torch.Tensor"):
        from_key_padding_mask([[True, False]])


@pytest.mark.parametrize("dtype", [torch.int64, torch.bool, torch.float32, torch.uint8])
def test_from_hf_attention_mask_reads_1_as_attend_in_every_dtype(dtype):
    hf = torch.tensor([[1, 1, 0], [1, 0, 0]]).to(dtype)
    expected = torch.tensor([[True, True, False], [True, False, False]])
    assert torch.equal(from_hf_attention_mask(hf), expand_key_mask(expected))
    assert torch.equal(from_hf_attention_mask(hf, ndim=3), expand_key_mask(expected, ndim=3))


def test_from_hf_attention_mask_errors():
    with pytest.raises(ValueError, match=r"attention_mask must have shape \(B, Tk\), got shape \(3,\)"):
        from_hf_attention_mask(torch.tensor([1, 1, 0]))
    with pytest.raises(ValueError, match="only 0 .padding. and 1 .attend., got other values"):
        from_hf_attention_mask(torch.tensor([[1, -1]]))
    with pytest.raises(TypeError, match="attention_mask must be a torch.Tensor"):
        from_hf_attention_mask([[1, 0]])


def test_from_torch_attn_mask_shapes_and_errors():
    per_head = torch.zeros(6, 2, 3)  # float (B * H, Tq, Tk)
    assert torch.equal(from_torch_attn_mask(per_head, num_heads=3), torch.zeros(2, 3, 2, 3))
    assert from_torch_attn_mask(per_head, num_heads=1).shape == (6, 1, 2, 3)
    with pytest.raises(ValueError, match=r"needs num_heads to divide its first dimension, got shape \(6, 2, 3\)"):
        from_torch_attn_mask(per_head, num_heads=4)
    with pytest.raises(ValueError, match=r"must have shape \(Tq, Tk\) or \(B \* H, Tq, Tk\), got shape \(3,\)"):
        from_torch_attn_mask(torch.zeros(3))
    with pytest.raises(ValueError, match=r"got shape \(1, 6, 2, 3\)"):
        from_torch_attn_mask(per_head[None], num_heads=3)
    with pytest.raises(TypeError, match="attn_mask must be a torch.Tensor"):
        from_torch_attn_mask([[True]])
    blocked = torch.tensor([[[False, True]], [[True, False]]])  # (B * H = 2, 1, 2), H = 2
    assert torch.equal(from_torch_attn_mask(blocked, 2), ~blocked[None])


def test_expand_key_mask_shapes_and_errors():
    mask = torch.tensor([[1, 0, 1]])  # any dtype
    assert expand_key_mask(mask, ndim=2).shape == (1, 3)
    assert expand_key_mask(mask, ndim=5).shape == (1, 1, 1, 1, 3)
    with pytest.raises(ValueError, match=r"ndim must be an int >= 2, got 1"):
        expand_key_mask(mask, ndim=1)
    with pytest.raises(ValueError, match=r"ndim must be an int >= 2, got 3.0"):
        expand_key_mask(mask, ndim=3.0)
    with pytest.raises(ValueError, match=r"mask must have shape \(B, Tk\), got shape \(3,\)"):
        expand_key_mask(mask[0])
    with pytest.raises(TypeError, match="mask must be a torch.Tensor"):
        expand_key_mask([[True]])


def test_causal_mask_devices_lengths_and_errors():
    assert causal_mask(2, 3, device="meta").device.type == "meta"
    assert causal_mask(0).shape == (0, 0) and causal_mask(2, 0).shape == (2, 0)
    expected = torch.tensor([[False, False], [True, False], [True, True]])
    assert torch.equal(causal_mask(3, 2, align="bottom_right"), expected)
    for bad in (True, 2.0, None):
        with pytest.raises(ValueError, match=f"q_len must be a non-negative int, got {bad!r}"):
            causal_mask(bad)
    with pytest.raises(ValueError, match="kv_len must be a non-negative int, got -1"):
        causal_mask(2, -1)
    with pytest.raises(ValueError, match=r"align must be one of \('top_left', 'bottom_right'\), got 'x'"):
        causal_mask(2, align="x")
