"""What is specific to notebook 10's exercises (tests/test_exercises_generic.py covers what every exercise must do)."""

from __future__ import annotations

import math

import pytest
import torch

from attnlib.exercises import nb10


def said(capsys) -> str:
    out = capsys.readouterr().out.strip()
    assert "\n" not in out  # one line
    return out


def batch(first_low=0, first_high_short=0, vocab_short=0):
    """repeated_batch with a bound changed: the classic off-by-ones of randint."""
    def make(batch_size, seq_len, repeat_len, vocab_size, generator):
        tokens = torch.randint(vocab_size - vocab_short, (batch_size, seq_len), generator=generator)
        first = torch.randint(first_low, seq_len - 2 * repeat_len + 1 - first_high_short, (batch_size,),
                              generator=generator)
        room = seq_len - 2 * repeat_len - first + 1
        second = first + repeat_len + (torch.rand(batch_size, generator=generator) * room).long()
        rows, j = torch.arange(batch_size)[:, None], torch.arange(repeat_len)
        tokens[rows, second[:, None] + j] = tokens[rows, first[:, None] + j]
        return tokens, first, second
    return make


@pytest.mark.parametrize(("wrong", "words", "not_words"), [
    (batch(first_low=1), "never starts at position 0", "exclusive"),  # the low bound, not the high bound's hint
    # the first copy's high bound one short has no row of its own: the placements' row, true of it too
    (batch(first_high_short=1), "Some placements of the two copies never come up", "position 0"),
    (batch(vocab_short=1), "the last of the vocabulary, never appears", "position 0"),
])
def test_each_bound_of_the_batch_gets_a_true_hint(capsys, wrong, words, not_words):
    nb10.check_repeated_batch(wrong)
    out = said(capsys)
    assert out.startswith("Exercise 1: not yet.") and words in out and not_words not in out, out


def test_a_second_copy_at_two_distances_is_refused(capsys):
    def two_distances(batch_size, seq_len, repeat_len, vocab_size, generator):
        tokens, first, second = batch(first_high_short=1)(batch_size, seq_len, repeat_len, vocab_size, generator)
        second = first + repeat_len + torch.randint(2, (batch_size,), generator=generator)
        rows, j = torch.arange(batch_size)[:, None], torch.arange(repeat_len)
        tokens[rows, second[:, None] + j] = tokens[rows, first[:, None] + j]
        return tokens, first, second

    nb10.check_repeated_batch(two_distances)
    assert "only 2 distance(s)" in said(capsys)


@pytest.mark.parametrize("printed", [4.2, 4.16, 4.1, "4.2"])
def test_the_untrained_loss_is_accepted_at_the_precision_the_notebook_prints(capsys, printed):
    nb10.check_untrained_loss(printed)
    out = said(capsys)
    assert out.startswith("Exercise 2: correct.") if not isinstance(printed, str) else "string" in out, out


def test_the_even_spread_is_not_one_over_t(capsys):
    """Under the causal mask query i sees i + 1 keys: the mean of 1/(i + 1) over i = 1..31, about 0.0987."""
    weights = attnlib_even_spread(32)
    assert abs(nb10.EVEN_SPREAD - float(weights)) < 1e-6 and abs(nb10.EVEN_SPREAD - 1 / 32) > 0.06
    nb10.check_even_spread_score(1 / 32)
    out = said(capsys)
    assert "causal mask" in out and "0.09" not in out, out
    nb10.check_even_spread_score(nb10.EVEN_SPREAD)
    assert "1 / (i + 1)" in said(capsys)


def attnlib_even_spread(t: int) -> torch.Tensor:
    from attnlib import causal_mask, induction

    return induction.previous_token_score(causal_mask(t) / torch.arange(1, t + 1)[:, None])


def test_the_induction_targets_probes_tell_the_latest_from_the_first_occurrence():
    """A token that comes up three times or more, in some probe: else "the first occurrence" would pass."""
    for probe in nb10.check_induction_targets.probe_list():
        tokens = probe.args[0]
        if any(torch.bincount(row).max() >= 3 for row in tokens):
            return
    pytest.fail("no probe has a token three times")


def test_a_prediction_off_the_mark_is_told_which_way_without_the_answer(capsys):
    nb10.check_ablation_loss(3.0)
    out = said(capsys)
    assert out.startswith("Exercise 5: not yet. Lower") and f"{math.log(64):.2f}" not in out, out
