"""attnlib.flash.largest_tensor: the largest tensor torch's functions return inside a with block."""

from __future__ import annotations

import torch

from attnlib import flash_attention, scaled_dot_product_attention
from attnlib.flash import largest_tensor


def _qkv(t: int, dh: int = 8):
    g = torch.Generator().manual_seed(0)
    return tuple(torch.randn(1, 2, t, dh, generator=g) for _ in range(3))  # (B, H, T, Dh)


def test_plain_attention_makes_the_whole_weights():
    q, k, v = _qkv(96)
    with torch.no_grad(), largest_tensor() as seen:
        scaled_dot_product_attention(q, k, v)
    assert seen.nbytes == 1 * 2 * 96 * 96 * 4  # the (B, H, T, T) float32 weights


def test_flash_attention_makes_nothing_as_large_as_the_weights():
    q, k, v = _qkv(96)
    with torch.no_grad(), largest_tensor() as seen:
        flash_attention(q, k, v, block_size_q=32, block_size_k=16)
    assert seen.nbytes == q.nbytes  # its (B, H, T, Dh) output; a (32, 16) tile is smaller
    assert seen.nbytes < 1 * 2 * 96 * 96 * 4


def test_only_what_is_returned_inside_the_block_counts():
    big = torch.zeros(1000)  # made before the block: not counted
    with largest_tensor() as seen:
        small = torch.ones(3) + 1  # results of 12 bytes
        # a tuple (values, indices): 2 int8 values, 2 int64 indices of 16 bytes, the largest
        pair = torch.zeros(3, 2, dtype=torch.int8).max(dim=0)
    assert seen.nbytes == 16 and big.numel() == 1000 and small.numel() == 3 and len(pair) == 2
    after = torch.zeros(10_000)  # after the block: the mode no longer records
    assert seen.nbytes == 16 and after.numel() == 10_000


def test_a_fresh_mode_starts_at_zero():
    with largest_tensor() as seen:
        pass
    assert seen.nbytes == 0
