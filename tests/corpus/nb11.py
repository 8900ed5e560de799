"""Notebook 11 (the attention of 2026's open models): learner answers to its five exercises."""

import math

import numpy as np
import torch
import torch.nn.functional as F

import attnlib

from . import right, wrong

EXERCISES = {"check_mla_keys": 1, "check_window_mask": 2, "check_sink_softmax": 3, "check_qk_gain": 4,
             "check_gated_output": 5}

EX1 = "nb11.check_mla_keys"  # my_mla_keys(compressed, w_uk, positions) -> (B, H, T, dn + dR)
EX2 = "nb11.check_window_mask"  # my_window_mask(query_positions, key_positions, window) -> bool (Tq, Tk)
EX3 = "nb11.check_sink_softmax"  # my_sink_softmax(scores, sink) -> (B, H, Tq, Tk)
EX4 = "nb11.check_qk_gain"  # my_gain: the gain g that lets a normed head (Dh = 8) score 10
EX5 = "nb11.check_gated_output"  # my_gated_output(heads, x, w_gate, w_out) -> (B, T, E)


# Exercise 1
def keys_split(compressed, w_uk, positions):
    r = w_uk.shape[1]
    latent, rope = compressed.split([r, compressed.shape[-1] - r], dim=-1)
    k_nope = torch.einsum("btr,hrd->bhtd", latent, w_uk)
    k_rope = attnlib.apply_rope(rope, positions).unsqueeze(1).expand(-1, w_uk.shape[0], -1, -1)
    return torch.cat([k_nope, k_rope], dim=-1)


def keys_matmul(compressed, w_uk, positions):  # latent (B, 1, T, r) @ (H, r, dn) broadcasts over heads
    r = w_uk.shape[1]
    k_nope = compressed[:, None, :, :r] @ w_uk
    k_rope = attnlib.apply_rope(compressed[..., r:], positions)
    return torch.cat([k_nope, k_rope[:, None].repeat(1, w_uk.shape[0], 1, 1)], dim=-1)


def keys_loop(compressed, w_uk, positions):  # one head at a time
    r = w_uk.shape[1]
    rope = attnlib.apply_rope(compressed[..., r:], positions)
    heads = [torch.cat([compressed[..., :r] @ w_uk[h], rope], dim=-1) for h in range(w_uk.shape[0])]
    return torch.stack(heads, dim=1)


def keys_rope_on_4d(compressed, w_uk, positions):  # RoPE after adding the head axis: same rotation
    r = w_uk.shape[1]
    rope = attnlib.apply_rope(compressed[..., r:].unsqueeze(1), positions)
    k_nope = torch.einsum("btr,hrd->bhtd", compressed[..., :r], w_uk)
    return torch.cat([k_nope, rope.expand(-1, k_nope.shape[1], -1, -1)], dim=-1)


def keys_rotate_everything(compressed, w_uk, positions):  # RoPE on the whole compressed vector
    compressed = attnlib.apply_rope(compressed, positions)
    return keys_split(compressed, w_uk, torch.zeros_like(positions))


def keys_rotate_rebuilt(compressed, w_uk, positions):  # RoPE on the full key, rebuilt part included
    r = w_uk.shape[1]
    k_nope = torch.einsum("btr,hrd->bhtd", compressed[..., :r], w_uk)
    key = torch.cat([k_nope, compressed[..., r:][:, None].expand(-1, w_uk.shape[0], -1, -1)], dim=-1)
    return attnlib.apply_rope(key, positions)


def keys_unrotated(compressed, w_uk, positions):
    r = w_uk.shape[1]
    k_nope = torch.einsum("btr,hrd->bhtd", compressed[..., :r], w_uk)
    return torch.cat([k_nope, compressed[..., r:][:, None].expand(-1, w_uk.shape[0], -1, -1)], dim=-1)


def keys_whole_latent(compressed, w_uk, positions):  # all r + dR features through W_UK
    return torch.einsum("btr,hrd->bhtd", compressed, w_uk)


def keys_rope_first(compressed, w_uk, positions):
    r = w_uk.shape[1]
    k_nope = torch.einsum("btr,hrd->bhtd", compressed[..., :r], w_uk)
    k_rope = attnlib.apply_rope(compressed[..., r:], positions)[:, None].expand(-1, w_uk.shape[0], -1, -1)
    return torch.cat([k_rope, k_nope], dim=-1)


def keys_r_written_in(compressed, w_uk, positions):  # r = 8, the tiny config's kv_lora_rank (L3)
    k_nope = torch.einsum("btr,hrd->bhtd", compressed[..., :8], w_uk)
    k_rope = attnlib.apply_rope(compressed[..., 8:], positions)[:, None].expand(-1, w_uk.shape[0], -1, -1)
    return torch.cat([k_nope, k_rope], dim=-1)


def keys_dr_written_in(compressed, w_uk, positions):  # dR = 64, DeepSeek-V3's RoPE width (L3)
    k_nope = torch.einsum("btr,hrd->bhtd", compressed[..., :-64], w_uk)
    k_rope = attnlib.apply_rope(compressed[..., -64:], positions)[:, None].expand(-1, w_uk.shape[0], -1, -1)
    return torch.cat([k_nope, k_rope], dim=-1)


def keys_normed_latent(compressed, w_uk, positions):  # RMSNorm on c, which the exercise leaves out (L3)
    r = w_uk.shape[1]
    return keys_split(torch.cat([attnlib.rms_norm(compressed[..., :r]), compressed[..., r:]], dim=-1), w_uk, positions)


def keys_rotate_nope_only(compressed, w_uk, positions):  # c W_UK rotated, the RoPE part left as it is (L3)
    r = w_uk.shape[1]
    k_nope = attnlib.apply_rope(torch.einsum("btr,hrd->bhtd", compressed[..., :r], w_uk), positions)
    return torch.cat([k_nope, compressed[..., r:][:, None].expand(-1, w_uk.shape[0], -1, -1)], dim=-1)


def keys_summed_heads(compressed, w_uk, positions):  # one rebuilt key for all heads (L3)
    H, r = w_uk.shape[:2]
    k_nope = torch.einsum("btr,hrd->btd", compressed[..., :r], w_uk)[:, None].expand(-1, H, -1, -1)
    k_rope = attnlib.apply_rope(compressed[..., r:], positions)[:, None].expand(-1, H, -1, -1)
    return torch.cat([k_nope, k_rope], dim=-1)


# Exercise 2
def window_where(query_positions, key_positions, window):
    gap = query_positions[:, None] - key_positions[None, :]
    return (gap >= 0) & (gap < window)


def window_loops(query_positions, key_positions, window):
    rows = [[0 <= int(p) - int(k) <= window - 1 for k in key_positions] for p in query_positions]
    return torch.tensor(rows, dtype=torch.bool)


def window_unsqueeze(query_positions, key_positions, window):
    p, k = query_positions.unsqueeze(-1), key_positions.unsqueeze(0)
    return torch.logical_and(k <= p, k >= p - window + 1)


def window_ge(query_positions, key_positions, window):
    p, k = query_positions[:, None], key_positions[None, :]
    return (p >= k) & (p - k < window)


def window_one_too_wide(query_positions, key_positions, window):  # k >= p - window
    p, k = query_positions[:, None], key_positions[None, :]
    return (k <= p) & (k >= p - window)


def window_one_too_narrow(query_positions, key_positions, window):
    p, k = query_positions[:, None], key_positions[None, :]
    return (k <= p) & (k > p - window + 1)


def window_indices(query_positions, key_positions, window):  # arange instead of the positions
    p, k = torch.arange(len(query_positions))[:, None], torch.arange(len(key_positions))[None, :]
    return (k <= p) & (k > p - window)


def window_two_sided(query_positions, key_positions, window):
    return (query_positions[:, None] - key_positions[None, :]).abs() < window


def window_blocked(query_positions, key_positions, window):  # True = blocked
    return ~window_where(query_positions, key_positions, window)


def window_of_3(query_positions, key_positions, window):  # the section's printed window (L3)
    p, k = query_positions[:, None], key_positions[None, :]
    return (k <= p) & (k > p - 3)


def window_without_self(query_positions, key_positions, window):  # k < p (L3)
    p, k = query_positions[:, None], key_positions[None, :]
    return (k < p) & (k > p - window)


def window_no_causal(query_positions, key_positions, window):  # the lower bound only (L3)
    return key_positions[None, :] > query_positions[:, None] - window


def window_transposed(query_positions, key_positions, window):  # rows are the keys (L3)
    p, k = query_positions[None, :], key_positions[:, None]
    return (k <= p) & (k > p - window)


# Exercise 3
def sink_cat(scores, sink):
    column = sink[None, :, None, None].expand(scores.shape[0], -1, scores.shape[2], 1)
    return torch.cat([scores, column], dim=-1).softmax(dim=-1)[..., :-1]


def sink_logsumexp(scores, sink):
    column = sink.view(1, -1, 1, 1).expand(*scores.shape[:-1], 1)
    lse = torch.logsumexp(torch.cat([scores, column], dim=-1), dim=-1, keepdim=True)
    return torch.exp(scores - lse)


def sink_max_subtracted(scores, sink):
    s = sink.view(1, -1, 1, 1)
    m = torch.maximum(scores.amax(dim=-1, keepdim=True), s)
    e = torch.exp(scores - m)
    return e / (e.sum(dim=-1, keepdim=True) + torch.exp(s - m))


def sink_rescale(scores, sink):  # softmax, then shrink each row by its share without the sink
    lse = scores.logsumexp(dim=-1, keepdim=True)
    return scores.softmax(dim=-1) * torch.sigmoid(lse - sink.view(1, -1, 1, 1))


def sink_added_to_scores(scores, sink):
    return F.softmax(scores + sink.view(1, -1, 1, 1), dim=-1)


def sink_in_numerator(scores, sink):
    s = sink.view(1, -1, 1, 1)
    m = torch.maximum(scores.amax(dim=-1, keepdim=True), s)
    e = torch.exp(scores - m)
    return (e + torch.exp(s - m)) / (e.sum(dim=-1, keepdim=True) + torch.exp(s - m))


def sink_naive_exp(scores, sink):  # overflows at scores of 1000
    e = scores.exp()
    return e / (e.sum(-1, keepdim=True) + sink.view(1, -1, 1, 1).exp())


def sink_plain_softmax(scores, sink):
    return torch.softmax(scores, dim=-1)


def sink_keeps_column(scores, sink):
    column = sink.view(1, -1, 1, 1).expand(*scores.shape[:-1], 1)
    return torch.cat([scores, column], dim=-1).softmax(dim=-1)


def sink_attnlib(scores, sink):  # attnlib's own, shown in the cell above the exercise (L3)
    return attnlib.softmax_with_sink(scores, sink)


def sink_negated(scores, sink):  # exp(-sink) in the denominator (L3)
    column = -sink.view(1, -1, 1, 1).expand(*scores.shape[:-1], 1)
    return torch.cat([scores, column], dim=-1).softmax(dim=-1)[..., :-1]


def sink_not_exponentiated(scores, sink):  # the sink itself added to the sum of exp (L3)
    m = scores.amax(-1, keepdim=True)
    e = torch.exp(scores - m)
    return e / (e.sum(-1, keepdim=True) + sink.view(-1, 1, 1) * torch.exp(-m))


# Exercise 5
def gate_reshape(heads, x, w_gate, w_out):
    b, h, t, dh = heads.shape
    merged = heads.transpose(1, 2).reshape(b, t, h * dh)
    return (merged * torch.sigmoid(x @ w_gate)) @ w_out


def gate_on_heads(heads, x, w_gate, w_out):  # gate reshaped to the heads' layout
    b, h, t, dh = heads.shape
    gate = torch.sigmoid(x @ w_gate).view(b, t, h, dh).transpose(1, 2)
    return (heads * gate).transpose(1, 2).flatten(2) @ w_out


def gate_einsum(heads, x, w_gate, w_out):
    merged = torch.einsum("bhtd->bthd", heads).flatten(2)
    return torch.einsum("bti,ie->bte", merged * F.sigmoid(torch.einsum("bte,ei->bti", x, w_gate)), w_out)


def gate_merge_heads(heads, x, w_gate, w_out):
    return (attnlib.merge_heads(heads) * (x @ w_gate).sigmoid()) @ w_out


def gate_after_projection(heads, x, w_gate, w_out):
    out = attnlib.merge_heads(heads) @ w_out
    return out * torch.sigmoid(x @ w_gate)


def gate_without_sigmoid(heads, x, w_gate, w_out):
    return (attnlib.merge_heads(heads) * (x @ w_gate)) @ w_out


def gate_from_output(heads, x, w_gate, w_out):
    merged = attnlib.merge_heads(heads)
    return (merged * torch.sigmoid(merged @ w_gate)) @ w_out


def gate_merge_no_transpose(heads, x, w_gate, w_out):
    b, h, t, dh = heads.shape
    return (heads.reshape(b, t, h * dh) * torch.sigmoid(x @ w_gate)) @ w_out


def gate_no_projection(heads, x, w_gate, w_out):
    return attnlib.merge_heads(heads) * torch.sigmoid(x @ w_gate)


def gate_squashed_by(squash):  # another function than the sigmoid, or the sigmoid inverted (L3)
    return lambda heads, x, w_gate, w_out: (attnlib.merge_heads(heads) * squash(x @ w_gate)) @ w_out


def gate_added(heads, x, w_gate, w_out):  # the gate added, not multiplied (L3)
    return (attnlib.merge_heads(heads) + torch.sigmoid(x @ w_gate)) @ w_out


def gate_dh_major_merge(heads, x, w_gate, w_out):  # features ordered (Dh, H) (L3)
    B, H, T, Dh = heads.shape
    return (heads.permute(0, 2, 3, 1).reshape(B, T, H * Dh) * torch.sigmoid(x @ w_gate)) @ w_out


def gate_per_head(heads, x, w_gate, w_out):  # the gate averaged over each head's features (L3)
    B, H, T, Dh = heads.shape
    g = torch.sigmoid(x @ w_gate).view(B, T, H, Dh).mean(-1, keepdim=True)
    return (heads.transpose(1, 2) * g).reshape(B, T, H * Dh) @ w_out


def keys_rope_cut_from_whole(compressed, w_uk, positions):  # L6: the whole vector rotated, then split
    r = w_uk.shape[1]
    rot = attnlib.apply_rope(compressed, positions)
    nope = torch.einsum("btr,hrn->bhtn", compressed[..., :r], w_uk)
    return torch.cat([nope, rot[..., r:][:, None].expand(-1, w_uk.shape[0], -1, -1)], -1)


def keys_heads_after_tokens(compressed, w_uk, positions):  # L6: (B, T, H, d)
    r = w_uk.shape[1]
    nope = torch.einsum("btr,hrn->bthn", compressed[..., :r], w_uk)
    rope = attnlib.apply_rope(compressed[..., r:], positions)[:, :, None].expand(-1, -1, w_uk.shape[0], -1)
    return torch.cat([nope, rope], -1)


def keys_split_at_dn(compressed, w_uk, positions):  # L6: the RoPE part cut after dn features
    r, dn = w_uk.shape[1], w_uk.shape[2]
    nope = torch.einsum("btr,hrn->bhtn", compressed[..., :r], w_uk)
    rope = attnlib.apply_rope(compressed[..., dn:], positions)[:, None].expand(-1, w_uk.shape[0], -1, -1)
    return torch.cat([nope, rope], -1)


def keys_w_uk_transposed(compressed, w_uk, positions):  # L6: the latent contracted with W_UK's last axis
    r = w_uk.shape[1]
    nope = torch.einsum("btr,hnr->bhtn", compressed[..., :r], w_uk)
    rope = attnlib.apply_rope(compressed[..., r:], positions)[:, None].expand(-1, w_uk.shape[0], -1, -1)
    return torch.cat([nope, rope], -1)


def sink_first_column_dropped(scores, sink):  # L6: the sink's column kept, a score's dropped
    col = sink[:, None, None].expand(*scores.shape[:-1], 1)
    return torch.softmax(torch.cat([scores, col], -1), -1)[..., 1:]


def sink_over_queries(scores, sink):  # L6: the softmax over the query axis
    col = sink[:, None, None].expand(scores.shape[0], -1, 1, scores.shape[-1])
    return torch.softmax(torch.cat([scores, col], -2), -2)[..., :-1, :]


def sink_once_per_key(scores, sink):  # L6: exp(sink) counted Tk times
    m = torch.maximum(scores.amax(-1, keepdim=True), sink[:, None, None])
    e = (scores - m).exp()
    return e / (scores.shape[-1] * (sink[:, None, None] - m).exp() + e.sum(-1, keepdim=True))


def sink_log_weights(scores, sink):  # L6: log_softmax
    col = sink[:, None, None].expand(*scores.shape[:-1], 1)
    return torch.log_softmax(torch.cat([scores, col], -1), -1)[..., :-1]


def sink_averaged_over_heads(scores, sink):  # L6: one sink for every head
    col = sink.mean().expand(*scores.shape[:-1], 1)
    return torch.softmax(torch.cat([scores, col], -1), -1)[..., :-1]


def gate_read_dh_major(heads, x, w_gate, w_out):  # L6: the gate's features read as (Dh, H)
    B, H, T, Dh = heads.shape
    g = torch.sigmoid(x @ w_gate).view(B, T, Dh, H).permute(0, 3, 1, 2)
    return (heads * g).transpose(1, 2).reshape(B, T, H * Dh) @ w_out


ANSWERS = [
    # Exercise 1
    right(EX1, "split-einsum", lambda: keys_split),
    right(EX1, "matmul-broadcast", lambda: keys_matmul),
    right(EX1, "loop-over-heads", lambda: keys_loop),
    right(EX1, "rope-on-4d", lambda: keys_rope_on_4d),
    wrong(EX1, "rotate-everything", lambda: keys_rotate_everything, ("latent", "compressed", "rotate")),
    wrong(EX1, "rotate-rebuilt-keys", lambda: keys_rotate_rebuilt, ("rebuilt", "compressed", "W_UK")),
    wrong(EX1, "unrotated", lambda: keys_unrotated, ("not rotated", "apply_rope")),
    wrong(EX1, "whole-vector-through-w-uk", lambda: keys_whole_latent),
    wrong(EX1, "rope-first", lambda: keys_rope_first, ("first", "order")),
    wrong(EX1, "r-written-in", lambda: keys_r_written_in),
    wrong(EX1, "dR-written-in", lambda: keys_dr_written_in),
    wrong(EX1, "rms-normed-latent", lambda: keys_normed_latent, ("RMSNorm",)),
    wrong(EX1, "rebuilt-part-rotated-instead", lambda: keys_rotate_nope_only),
    wrong(EX1, "heads-summed", lambda: keys_summed_heads),
    # Exercise 2
    right(EX2, "gap", lambda: window_where),
    right(EX2, "python-loops", lambda: window_loops),
    right(EX2, "logical-and", lambda: window_unsqueeze),
    right(EX2, "p-minus-k", lambda: window_ge),
    wrong(EX2, "one-too-wide", lambda: window_one_too_wide, ("too wide", "window + 1")),
    wrong(EX2, "one-too-narrow", lambda: window_one_too_narrow, ("too narrow", "window - 1")),
    wrong(EX2, "indices-not-positions", lambda: window_indices, ("positions", "indices")),
    wrong(EX2, "two-sided", lambda: window_two_sided, ("looks ahead", "later")),
    wrong(EX2, "true-blocks", lambda: window_blocked, ("inverted", "True")),
    wrong(EX2, "window-of-3-written-in", lambda: window_of_3, ("always 3",)),
    wrong(EX2, "query-not-itself", lambda: window_without_self, ("own position",)),
    wrong(EX2, "no-causal-bound", lambda: window_no_causal, ("looks ahead",)),
    wrong(EX2, "transposed", lambda: window_transposed, ("transposed",)),
    # Exercise 3
    right(EX3, "cat-and-drop", lambda: sink_cat),
    right(EX3, "logsumexp", lambda: sink_logsumexp),
    right(EX3, "max-subtracted", lambda: sink_max_subtracted),
    right(EX3, "softmax-times-share", lambda: sink_rescale),
    wrong(EX3, "added-to-scores", lambda: sink_added_to_scores, ("numerator", "cancels")),
    wrong(EX3, "sink-in-numerator", lambda: sink_in_numerator, ("numerator",)),
    wrong(EX3, "overflows", lambda: sink_naive_exp, ("overflow", "maximum")),
    wrong(EX3, "plain-softmax", lambda: sink_plain_softmax, ("sink is missing", "denominator")),
    wrong(EX3, "keeps-sink-column", lambda: sink_keeps_column, ("column", "drop")),
    wrong(EX3, "attnlib-softmax-with-sink", lambda: sink_attnlib, ("attnlib's softmax_with_sink", "yourself")),
    wrong(EX3, "exp-of-minus-sink", lambda: sink_negated),
    wrong(EX3, "sink-not-exponentiated", lambda: sink_not_exponentiated),
    # Exercise 4
    right(EX4, "two-decimals", lambda: 1.88),
    right(EX4, "formula", lambda: (10 / 8**0.5) ** 0.5),
    right(EX4, "math-sqrt", lambda: math.sqrt(10 / math.sqrt(8))),
    right(EX4, "fourth-root", lambda: 10**0.5 / 8**0.25, note="sqrt(10) / Dh^(1/4): the same number"),
    right(EX4, "numpy", lambda: np.sqrt(10 / np.sqrt(8))),
    right(EX4, "tensor", lambda: torch.tensor(10.0 / 8**0.5).sqrt()),
    wrong(EX4, "one-side-only", lambda: 10 / 8**0.5, ("both", "one of the two")),
    wrong(EX4, "g-squared", lambda: 3.54, ("g^2", "both")),
    wrong(EX4, "unscaled-dot-product", lambda: (10 / 8) ** 0.5, ("sqrt(Dh)", "scale")),
    wrong(EX4, "unit-vectors", lambda: (10 * 8**0.5) ** 0.5, ("length",)),
    wrong(EX4, "the-bound-itself", lambda: 8**0.5),
    wrong(EX4, "bound-taken-as-one", lambda: 10**0.5),
    wrong(EX4, "string", lambda: "1.88", ("number itself", "without quotes")),
    wrong(EX4, "one-decimal", lambda: 1.9, ("two decimals",), note="rounded too far; the exercise asks two decimals"),
    wrong(EX4, "truncated-one-decimal", lambda: 1.8, ("two decimals",)),
    wrong(EX4, "squared", lambda: 10 / 8**0.5 * 10 / 8**0.5),
    wrong(EX4, "ten-over-Dh", lambda: 10 / 8),
    wrong(EX4, "inverse", lambda: 1 / 1.8803),
    # Exercise 5
    right(EX5, "transpose-reshape", lambda: gate_reshape),
    right(EX5, "gate-in-heads-layout", lambda: gate_on_heads),
    right(EX5, "einsum", lambda: gate_einsum),
    right(EX5, "attnlib-merge", lambda: gate_merge_heads),
    wrong(EX5, "after-projection", lambda: gate_after_projection, ("after the output projection",)),
    wrong(EX5, "no-sigmoid", lambda: gate_without_sigmoid, ("sigmoid",)),
    wrong(EX5, "gate-from-output", lambda: gate_from_output, ("input", "x")),
    wrong(EX5, "merge-without-transpose", lambda: gate_merge_no_transpose, ("transpose", "merge")),
    wrong(EX5, "no-output-projection", lambda: gate_no_projection, ("w_out", "output projection")),
    wrong(EX5, "softmax-gate", lambda: gate_squashed_by(lambda z: torch.softmax(z, -1)), ("softmax(x @ w_gate)",)),
    wrong(EX5, "tanh-gate", lambda: gate_squashed_by(torch.tanh)),
    wrong(EX5, "silu-gate", lambda: gate_squashed_by(F.silu)),
    wrong(EX5, "one-minus-sigmoid", lambda: gate_squashed_by(lambda z: 1 - torch.sigmoid(z))),
    wrong(EX5, "gate-added", lambda: gate_added),
    wrong(EX5, "features-dh-major", lambda: gate_dh_major_merge),
    wrong(EX5, "one-gate-per-head", lambda: gate_per_head, ("one value per head",)),
    # population L6
    wrong(EX1, "rope-cut-from-whole", lambda: keys_rope_cut_from_whole),
    wrong(EX1, "heads-after-tokens", lambda: keys_heads_after_tokens, ("after the tokens",)),
    wrong(EX1, "split-at-dn", lambda: keys_split_at_dn),
    wrong(EX1, "w_uk-transposed", lambda: keys_w_uk_transposed),
    wrong(EX3, "first-column-dropped", lambda: sink_first_column_dropped, ("sink's column",)),
    wrong(EX3, "over-queries", lambda: sink_over_queries, ("over the queries",)),
    wrong(EX3, "sink-once-per-key", lambda: sink_once_per_key),
    wrong(EX3, "log-weights", lambda: sink_log_weights),
    wrong(EX3, "sink-averaged-over-heads", lambda: sink_averaged_over_heads, ("shared by every head",)),
    wrong(EX4, "ratio-to-unnormed", lambda: 10 / 6.4, ("unnormed",)),
    wrong(EX4, "factor-halved", lambda: 10 / 8**0.5 / 2),
    wrong(EX5, "gate-read-dh-major", lambda: gate_read_dh_major),
    # reader r39: indices aligned to the last key, as a cache's mask is, not the positions given
    wrong(EX2, "indices-aligned-to-the-cache", lambda: lambda qp, kp, w: torch.ones(len(qp), len(kp), dtype=torch.bool)
          .tril(len(kp) - len(qp)) & ~torch.ones(len(qp), len(kp), dtype=torch.bool).tril(len(kp) - len(qp) - w),
          ("indices", "positions given")),
]
