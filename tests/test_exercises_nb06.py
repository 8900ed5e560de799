"""What is specific to notebook 06's exercises (tests/test_exercises_generic.py covers what every exercise does)."""

from __future__ import annotations

import pytest
import torch

from attnlib import masked_softmax
from attnlib.exercises import nb06


def said(capsys) -> str:
    out = capsys.readouterr().out
    assert out.count("\n") == 1, f"a checker prints exactly one line, got {out!r}"
    return out.rstrip("\n")


# --- Exercise 3: a mask on the queries' axis is named as such, not as a missing mask -------------------------


def lengths_against_queries_fill(scores, valid_lens):  # compares the lengths with the query positions
    mask = torch.arange(scores.shape[1])[None, :, None] < valid_lens[:, None, None]  # (B, Tq, 1)
    return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1).nan_to_num(0.0)


def lengths_against_queries_masked_softmax(scores, valid_lens):
    mask = (torch.arange(scores.shape[1]) < valid_lens[:, None]).unsqueeze(-1)  # (B, Tq, 1)
    return masked_softmax(scores, mask)


def lengths_against_queries_nan(scores, valid_lens):  # NaN rows where a query is "masked"
    mask = torch.arange(scores.shape[-2]).view(1, -1, 1) < valid_lens.view(-1, 1, 1)
    return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)


@pytest.mark.parametrize("wrong", [lengths_against_queries_fill, lengths_against_queries_masked_softmax,
                                   lengths_against_queries_nan])
def test_a_mask_on_the_queries_axis_is_named_as_the_wrong_axis(capsys, wrong):
    nb06.check_masked_weights(wrong)
    out = said(capsys)
    assert out.startswith("Exercise 3: not yet.") and "queries' axis" in out and "missing" not in out


def test_a_mask_that_does_not_line_up_is_named(capsys):
    def keys_as_rows(scores, valid_lens):  # (B, Tk, 1): the keys' axis where the queries are
        return masked_softmax(scores, (torch.arange(scores.shape[-1]) < valid_lens[:, None]).unsqueeze(-1))

    nb06.check_masked_weights(keys_as_rows)
    out = said(capsys)
    assert "does not line up" in out and "(B, 1, Tk)" in out


def test_masked_weights_hints_quote_the_learners_numbers(capsys):
    scores, valid_lens = nb06.check_masked_weights.probe_list()[0].args
    padding = ~(torch.arange(scores.shape[-1]) < valid_lens[:, None, None])
    share = (scores.softmax(dim=-1) * padding).sum(-1).max()
    nb06.check_masked_weights(lambda s, v: s.softmax(dim=-1))
    assert f"up to {share:.2f} of a row" in said(capsys)


@pytest.mark.parametrize("fill", [float("-inf"), -1e9, torch.finfo(torch.float32).min])
def test_masked_weights_accepts_any_fill_that_vanishes(capsys, fill):
    def masked_fill(scores, valid_lens):
        mask = torch.arange(scores.shape[-1]) < valid_lens[:, None, None]
        return scores.masked_fill(~mask, fill).softmax(dim=-1)

    nb06.check_masked_weights(masked_fill)
    assert said(capsys).startswith("Exercise 3: correct.")


# --- Exercise 2: the probes vary every size, so the running example's sizes cannot be hard-coded ------------


@pytest.mark.parametrize(("exercise", "wrong"), [
    (nb06.check_pair_scores, lambda q, k, W_q, W_k, w_v: torch.tanh((q @ W_q).unsqueeze(2) + (k @ W_k).unsqueeze(1))
     @ w_v),
    (nb06.check_pair_scores, lambda q, k, W_q, W_k, w_v: torch.tanh((q @ W_q.T).unsqueeze(1) + (k @ W_k.T).unsqueeze(2))
     @ w_v),
    (nb06.check_masked_weights, lambda s, v: masked_softmax(s, torch.arange(s.shape[-1]) >= v[:, None, None])),
    (nb06.check_masked_weights, lambda s, v: masked_softmax(s, torch.arange(s.shape[-1])[:, None] < v[:, None, None])),
], ids=["W-not-transposed", "unsqueeze-swapped", "mask-flipped", "mask-not-lined-up"])
def test_no_hint_writes_the_line_to_write(exercise, wrong):
    text = exercise.judge(wrong).text
    assert text and not any(code in text for code in ("W_q.T", "unsqueeze(", "< valid_lens", "[:, None, None]")), text


@pytest.mark.parametrize("hard_coded", [
    lambda q, k, W_q, W_k, w_v: torch.tanh((q @ W_q.T).unsqueeze(2) + (k @ W_k.T).unsqueeze(1)) @ torch.ones(6),
    lambda q, k, W_q, W_k, w_v: (torch.tanh((q @ W_q.T).unsqueeze(2) + (k @ W_k.T).unsqueeze(1)) @ w_v)[:2],
    lambda q, k, W_q, W_k, w_v: (torch.tanh((q @ W_q.T).unsqueeze(2) + (k @ W_k.T).unsqueeze(1)) @ w_v)[:, :3, :3],
])
def test_pair_scores_refuses_an_answer_fitted_to_one_size(capsys, hard_coded):
    nb06.check_pair_scores(hard_coded)
    assert said(capsys).startswith("Exercise 2: not yet.")


# --- Exercise 4: the precision the notebook prints ---------------------------------------------------------


@pytest.mark.parametrize(("answer", "verdict"), [(1 / 15, "correct"), (0.067, "correct"), (0.0667, "correct"),
                                                 (0.07, "not yet"), (0.065, "not yet")])
def test_largest_weight_is_read_at_three_decimals(capsys, answer, verdict):
    nb06.check_largest_weight(answer)
    out = said(capsys)
    assert out.startswith(f"Exercise 4: {verdict}") and "1/15" not in out and "0.0666" not in out
