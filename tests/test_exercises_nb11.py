"""What is specific to notebook 11's checkers: their references are the course's modules, and the classic mistakes
the notebook names get their own hints, also in grading mode (the generic test and the corpus cover the rest)."""

from __future__ import annotations

import pytest
import torch

import attnlib
from attnlib.exercises import grading, nb11


def line(capsys) -> str:
    out = capsys.readouterr().out
    assert out.count("\n") == 1, out
    return out.strip()


@pytest.mark.parametrize("name", sorted(set(nb11.__all__) - {"check_qk_gain"}))
def test_a_stub_is_not_attempted(capsys, name):
    getattr(nb11, name)(lambda *args: None)
    assert line(capsys).endswith("not attempted yet (your function returns None: finish it with a return)")


def test_the_gain_is_the_one_that_reaches_a_score_of_10_and_no_smaller_one_does():
    torch.manual_seed(0)
    q, k = torch.randn(8), torch.randn(8)
    for g, reaches in ((nb11.check_qk_gain.expected, True), (1.87, False)):
        aligned = g * attnlib.rms_norm(q) @ (g * attnlib.rms_norm(q)) / 8**0.5  # the key along the query
        assert (aligned.item() >= 10 - 1e-4) == reaches
        assert (g * attnlib.rms_norm(q)) @ (g * attnlib.rms_norm(k)) / 8**0.5 <= aligned + 1e-5


def test_the_mla_reference_builds_the_keys_latent_attention_attends_with():
    torch.manual_seed(0)
    layer = attnlib.LatentAttention(16, 3, kv_lora_rank=5, qk_nope_head_dim=4, qk_rope_head_dim=2, v_head_dim=3,
                                    interleaved=False)
    x = torch.randn(1, 6, 16)
    with torch.no_grad():
        compressed = layer.kv_down(x)
        latent = attnlib.rms_norm(compressed[..., :5], layer.kv_norm)
        w_uk = layer.up_weights()[0].transpose(1, 2)  # (H, dn, r) -> (H, r, dn)
        keys = nb11.mla_keys(torch.cat([latent, compressed[..., 5:]], dim=-1), w_uk, torch.arange(6))
        q = layer.q_proj(x).view(1, 6, 3, 6).transpose(1, 2)
        q = torch.cat([q[..., :4], attnlib.apply_rope(q[..., 4:], torch.arange(6))], dim=-1)
        scores = q @ keys.transpose(-2, -1) * layer.scale
        weights = torch.softmax(scores.masked_fill(~attnlib.causal_mask(6), float("-inf")), dim=-1)
        torch.testing.assert_close(weights, layer(x)[1])


def test_the_window_reference_is_sliding_window_mask_for_consecutive_positions():
    for q_len, kv_len, window in ((5, 5, 2), (2, 7, 3), (1, 4, 9)):
        got = nb11.window_mask(torch.arange(kv_len - q_len, kv_len), torch.arange(kv_len), window)
        assert torch.equal(got, attnlib.sliding_window_mask(q_len, kv_len, window=window))


def test_the_gate_reference_is_the_gated_layer_of_causal_self_attention():
    torch.manual_seed(0)
    layer = attnlib.CausalSelfAttention(12, 3, gate=True)
    x = torch.randn(2, 5, 12)
    with torch.no_grad():
        out, weights = layer(x)
        v = layer.v_proj(x).view(2, 5, 3, 4).transpose(1, 2)
        got = nb11.gated_output(weights @ v, x, layer.gate_proj.weight.T, layer.out_proj.weight.T)
    torch.testing.assert_close(got, out)


@pytest.mark.parametrize(("checker", "answer", "words"), [
    (nb11.check_mla_keys, lambda c, w, p: nb11.mla_keys(c, w, p, rotate="all"), "whole compressed vector"),
    (nb11.check_window_mask, lambda q, k, w: nb11.window_mask(q, k, w, width=1), "one key too wide"),
    (nb11.check_sink_softmax, lambda s, sink: torch.softmax(s + sink[:, None, None], dim=-1), "numerator"),
    (nb11.check_qk_gain, 10 / 8**0.5, "both multiplied by g"),
    (nb11.check_gated_output, lambda h, x, wg, wo: nb11.gated_output(h, x, wg, wo, where="after"),
     "after the output projection"),
])
def test_the_notebooks_classic_mistakes_in_grading_mode(checker, answer, words):
    with grading(), pytest.raises(AssertionError, match=words.replace("(", r"\(").replace(")", r"\)")):
        checker(answer)
