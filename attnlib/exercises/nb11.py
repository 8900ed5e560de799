"""Exercises of notebook 11 (2026's attention): latent keys, a sliding window, a sink, QK-norm's gain, the gate."""

from __future__ import annotations

import math

import torch

from ..modern import rms_norm, softmax_with_sink
from ..positions import apply_rope
from . import Exercise, Mistake, Probe, as_number, near, variant

__all__ = ["check_gated_output", "check_mla_keys", "check_qk_gain", "check_sink_softmax", "check_window_mask"]


def _randn(seed: int):
    g = torch.Generator().manual_seed(seed)
    return lambda *shape: torch.randn(*shape, generator=g)


def mla_keys(compressed, w_uk, positions, *, rotate="rope", order="nope_first", interleaved=False, norm=False):
    """Exercise 1's keys, [c W_UK,h ; RoPE(k_R)] per head; each keyword switches on a mistake."""
    rank = w_uk.shape[1]
    if rotate == "all":  # RoPE on the whole compressed vector, latent included
        compressed = apply_rope(compressed, positions)
    latent, rope = compressed[..., :rank], compressed[..., rank:]  # (B, T, r), (B, T, dR)
    k_nope = torch.einsum("btr,hrd->bhtd", rms_norm(latent) if norm else latent, w_uk)  # (B, T, r) -> (B, H, T, dn)
    if rotate == "rope":
        rope = apply_rope(rope, positions, interleaved=interleaved)
    k_rope = rope[:, None].expand(-1, w_uk.shape[0], -1, -1)  # (B, T, dR) -> (B, H, T, dR): one for all heads
    key = torch.cat([k_nope, k_rope] if order == "nope_first" else [k_rope, k_nope], dim=-1)
    return apply_rope(key, positions) if rotate == "key" else key  # "key": the rebuilt keys rotated too


def _mla_probes() -> list[Probe]:
    r = _randn(11)
    first, decoding, wider = (r(1, 5, 8 + 4), r(2, 8, 6)), (r(2, 3, 6 + 2), r(3, 6, 4)), (r(1, 4, 10 + 6), r(4, 10, 3))
    return [Probe((*first, torch.arange(5)), "B = 1, T = 5, r = 8, dR = 4, H = 2, dn = 6"),
            Probe((*wider, torch.arange(4)), "r = 10, dR = 6, H = 4, dn = 3"),  # before r + dR = 8: an r = 8 written in
            Probe((*decoding, torch.arange(7, 10)), "a decoding step at positions 7, 8, 9 (r = 6, dR = 2, H = 3)")]


check_mla_keys = Exercise(
    "Exercise 1", reference=mla_keys, probes=_mla_probes,
    correct="The latent is up-projected per head, the RoPE part is rotated once and shared by every head: the "
            "cache needs only c and k_R.",
    mistakes=[
        Mistake("You rotate the whole compressed vector, not only the RoPE part.", variant(mla_keys, rotate="all")),
        Mistake("Your keys rotate c W_UK too: rotate only the RoPE part.", variant(mla_keys, rotate="key")),
        Mistake("Your RoPE part is not rotated: apply attnlib.apply_rope to it, with the positions given.",
                variant(mla_keys, rotate="none")),
        Mistake("Your RoPE part was rotated with interleaved pairs: use attnlib.apply_rope's default pairing.",
                variant(mla_keys, interleaved=True)),
        Mistake("Your keys put the RoPE part first: each head's key is c W_UK,h first, then the RoPE part.",
                variant(mla_keys, order="rope_first")),
        Mistake("Your latent went through RMSNorm: use c as it is given.", variant(mla_keys, norm=True)),
        Mistake("Your heads axis comes after the tokens: the keys are (B, H, T, ...), like the queries.",
                lambda c, w, p: mla_keys(c, w, p).transpose(1, 2)),
    ])


def window_mask(query_positions, key_positions, window, *, width=0, look_ahead=False):
    """True where p - window < k <= p; ``width`` moves the left edge, ``look_ahead`` drops k <= p."""
    p, k = query_positions[:, None], key_positions[None, :]  # (Tq, 1), (1, Tk)
    inside = k > p - window - width
    return inside & (k < p + window) if look_ahead else inside & (k <= p)


check_window_mask = Exercise(
    "Exercise 2", reference=window_mask,
    probes=[Probe((torch.arange(6), torch.arange(6), 3), "positions 0..5, window = 3"),
            Probe((torch.arange(6, 9), torch.arange(9), 4), "3 new queries at positions 6..8 after 6 cached keys"),
            Probe((torch.arange(5), torch.arange(5), 1), "window = 1 (each token sees only itself)"),
            Probe((torch.tensor([9]), torch.tensor([0, 1, 7, 8, 9]), 4),
                  "a query at 9, keys at 0 and 1 (kept) and 7..9, window = 4"),
            Probe((torch.arange(4), torch.arange(4), 6), "a window wider than the sequence, window = 6")],
    correct="Each query sees its own position and the window - 1 before it, whatever the positions are.",
    mistakes=[
        Mistake("Your window is one key too wide, window + 1 positions: a window of W is the query's own position "
                "and the W - 1 before it.", variant(window_mask, width=1)),
        Mistake("Your window is always 3 wide: use the window argument.", lambda q, k, w: window_mask(q, k, 3)),
        Mistake("Your window is one key too narrow, window - 1 positions: a window of W counts the query's own "
                "position.", variant(window_mask, width=-1)),
        Mistake("Your queries do not see their own position: a window of W counts it, and the W - 1 before it.",
                lambda q, k, w: window_mask(q, k, w) & (q[:, None] != k)),
        Mistake("Your mask compares the indices 0, 1, ..., not the positions given.",
                lambda q, k, w: window_mask(torch.arange(len(q)), torch.arange(len(k)), w)),
        Mistake("Your mask compares indices, the queries' at the end as in a cache, not the positions given.",
                lambda q, k, w: window_mask(torch.arange(len(k) - len(q), len(k)), torch.arange(len(k)), w)),
        Mistake("Your window looks ahead: keep k <= p beside the window's condition.",
                example=variant(window_mask, look_ahead=True), when=lambda got, args: got.dtype == torch.bool
                and torch.equal(got & (args[1] <= args[0][:, None]), window_mask(*args))),
        Mistake("Your mask is inverted: in attnlib True means 'may attend'.", lambda *a: ~window_mask(*a)),
        Mistake("Your mask is transposed: each row is a query, each column a key.", lambda *a: window_mask(*a).T),
    ])


def _sink_softmax(s, sink):
    """Exercise 3's answer in torch (attnlib's own is refused): a softmax over the Tk scores and the sink's logit."""
    return torch.cat([s, sink[:, None, None].expand(*s.shape[:-1], 1)], -1).softmax(-1)[..., :-1]


def _sink_probes() -> list[Probe]:
    r = _randn(13)
    return [Probe((r(2, 3, 4, 5), torch.tensor([0.0, 1.5, -2.0])), "B = 2, H = 3, Tq = 4, Tk = 5"),
            Probe((r(1, 2, 3, 3), torch.tensor([3.0, -1.0])), "H = 2, Tq = Tk = 3"),
            Probe((r(3, 1, 2, 6) * 100 + 900, torch.tensor([1000.0])),
                  "scores near 1000 and a sink of 1000 (exp overflows)"),
            Probe((r(1, 4, 5, 2), r(4)), "H = 4, Tq = 5, Tk = 2")]


check_sink_softmax = Exercise(
    "Exercise 3", reference=softmax_with_sink, probes=_sink_probes, solution=_sink_softmax, refuse=("attnlib.modern",),
    correct="exp(sink) joins each row's denominator only: the rows sum to less than 1, the rest goes nowhere.",
    mistakes=[
        Mistake("Your rows sum to 1: the sink is missing, or added to the scores, where it cancels from numerator and "
                "denominator; it belongs in the denominator only.", lambda s, sink: torch.softmax(s, dim=-1),
                example=lambda s, sink: torch.softmax(s + sink[:, None, None], dim=-1)),
        Mistake("Your rows sum to more than 1: exp(sink) is in the numerator too, not only in the denominator.",
                when=lambda got: bool((got.sum(-1) > 1 + 1e-4).all()), example=lambda s, sink: (
                    s.exp() + sink[:, None, None].exp()) / (s.exp().sum(-1, keepdim=True) + sink[:, None, None].exp())),
        Mistake("Your weights dropped a score's column and kept the sink's column: drop that one.",  # the wrong end cut
                lambda s, sink: torch.cat([s, sink[:, None, None].expand(*s.shape[:-1], 1)], -1).softmax(-1)[..., 1:]),
        Mistake("Your sink is one logit shared by every head: each head h has its own, sink[h].",
                lambda s, sink: _sink_softmax(s, sink.mean().expand_as(sink))),
        Mistake("Your weights are normalised over the queries: normalise each query's row, its scores and the sink.",
                lambda s, sink: _sink_softmax(s.transpose(-2, -1), sink).transpose(-2, -1)),
        Mistake("Your weights keep the sink's column (Tk + 1 of them): drop it.",
                when=lambda got, args: got.shape[-1] == args[0].shape[-1] + 1, example=lambda s, sink: torch.softmax(
                    torch.cat([s, sink[:, None, None].expand(*s.shape[:-1], 1)], dim=-1), dim=-1)),
        Mistake("Your weights hold NaN where exp overflows: subtract each row's maximum, the sink's included, first.",
                when=lambda got: bool(torch.isnan(got).any()),
                example=lambda s, sink: s.exp() / (s.exp().sum(-1, keepdim=True) + sink[:, None, None].exp())),
    ])


DH, TARGET = 8, 10.0  # Exercise 4: the gain g for a largest scaled score of 10, with QK-norm and Dh = 8
GAIN = math.sqrt(TARGET / math.sqrt(DH))

check_qk_gain = Exercise(
    "Exercise 4", expected=GAIN, decimals=2, read=as_number,
    correct="Normed, the query and the key are each g * sqrt(Dh) long, so the largest score is g^2 * sqrt(Dh): "
            "1.88^2 * 2.83 = 10. Only the gains, a few learned numbers, set how sharp a head can be.",
    mistakes=[
        Mistake("{got} puts the gain on one vector only (or is g^2): the query and the key are both multiplied by g.",
                when=near(TARGET / math.sqrt(DH)), example=3.54),
        Mistake("{got} lets q . k reach 10 before the scale: the score is q . k / sqrt(Dh).",
                when=near(math.sqrt(TARGET / DH)), example=1.12),
        Mistake("{got} takes the normed vectors to have length 1: their length is sqrt(Dh).",
                when=near(math.sqrt(TARGET * math.sqrt(DH))), example=5.32),
        Mistake("{got} is close, but with too few decimals: give g to two decimals.", example=1.9,
                when=lambda got: isinstance(got, (int, float)) and abs(got - GAIN) < 0.15 and round(got, 1) == got),
        Mistake("{got} uses the unnormed scores: with QK-norm the largest score with gains of 1 depends on Dh alone.",
                when=near(TARGET / 6.4), example=1.56),
    ])


def gated_output(heads, x, w_gate, w_out, *, where="before", gate=torch.sigmoid, source="input", merge=(0, 2, 1, 3)):
    """out = (merge(heads) * sigmoid(x @ w_gate)) @ w_out; the keywords switch on one classic mistake each."""
    b, h, t, dh = heads.shape
    merged = heads.permute(*merge).reshape(b, t, h * dh)  # (B, T, H*Dh), head 0's Dh features first
    g = gate((x if source == "input" else merged) @ w_gate)  # (B, T, H*Dh)
    if where == "after":
        return (merged @ w_out) * g  # the gate after the output projection
    return (merged * g) @ w_out  # (B, T, H*Dh) -> (B, T, E)


def _gate_probes() -> list[Probe]:
    r = _randn(19)
    return [Probe((r(1, 2, 3, 4), r(1, 3, 8), r(8, 8), r(8, 8)), "B = 1, H = 2, T = 3, Dh = 4, E = 8"),
            Probe((r(2, 3, 4, 2), r(2, 4, 6), r(6, 6), r(6, 6)), "B = 2, H = 3, T = 4, Dh = 2, E = 6"),
            Probe((r(1, 4, 2, 3), r(1, 2, 10), r(10, 12), r(12, 10)), "H * Dh = 12 features, E = 10")]


check_gated_output = Exercise(
    "Exercise 5", reference=gated_output, probes=_gate_probes,
    correct="The gate, computed from the layer's input, scales each head's features while the heads are still "
            "apart; W_O mixes them after.",
    mistakes=[
        Mistake("Your gate comes after the output projection, which mixes the heads: gate them while still apart.",
                variant(gated_output, where="after")),
        Mistake("Your gate is x @ w_gate itself: squash it with a sigmoid, between 0 (closed) and 1 (open).",
                variant(gated_output, gate=lambda z: z)),
        Mistake("Your gate is softmax(x @ w_gate): the section's gate is a sigmoid, for each feature on its own.",
                variant(gated_output, gate=lambda z: z.softmax(-1))),
        Mistake("Your gate has one value per head: it has one for each feature of each head.",
                lambda hd, x, wg, wo: gated_output(hd, x, wg, wo, gate=lambda z: z.sigmoid().unflatten(
                    -1, (hd.shape[1], -1)).mean(-1).repeat_interleave(hd.shape[-1], -1))),
        Mistake("Your gate is computed from the attention's output: compute it from the layer's input x.",
                variant(gated_output, source="heads")),
        Mistake("Your merge reshapes (B, H, T, Dh) straight to (B, T, H*Dh), mixing tokens: transpose first.",
                variant(gated_output, merge=(0, 1, 2, 3))),
        Mistake("Your output has the merged heads' width: the layer ends with the output projection, w_out.",
                lambda hd, x, wg, wo: gated_output(hd, x, wg, torch.eye(wo.shape[0]))),
    ])
