"""The causal mask that is_causal builds lives on the inputs' device.

On a CPU-only machine a mask left on the CPU goes unnoticed (even meta tensors accept it), while
on a GPU the same call would fail or copy the mask on every call. So these tests watch the
device that attention asks `causal_mask` for, on CPU and on meta tensors.
"""

from __future__ import annotations

import pytest
import torch

import attnlib.attention
from attnlib import MultiHeadAttention, scaled_dot_product_attention


@pytest.fixture
def asked(monkeypatch) -> list:
    devices = []
    real = attnlib.attention.causal_mask

    def recording(q_len, kv_len=None, *, align="top_left", device=None):
        devices.append(None if device is None else torch.device(device))
        return real(q_len, kv_len, align=align, device=device)

    monkeypatch.setattr(attnlib.attention, "causal_mask", recording)
    return devices


@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_sdpa_builds_its_causal_mask_on_the_query_device(asked, device):
    q = torch.randn(2, 3, 4, device=device)
    scaled_dot_product_attention(q, q, q, is_causal=True)
    assert asked == [torch.device(device)]


@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_a_key_mask_with_is_causal_builds_the_causal_mask_on_the_keys_device(asked, device):
    attention = MultiHeadAttention(4, 2).to(device)
    x = torch.randn(2, 3, 4, device=device)  # (B, T, E)
    key_mask = torch.ones(2, 3, dtype=torch.bool, device=device)
    attention(x, x, x, is_causal=True, key_mask=key_mask)
    assert asked == [torch.device(device)]
