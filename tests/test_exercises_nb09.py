"""What is specific to notebook 09's exercises (tests/test_exercises_generic.py covers what every exercise must do)."""

from __future__ import annotations

import pytest
import torch

from attnlib.exercises import nb09


def said(capsys) -> str:
    out = capsys.readouterr().out.strip()
    assert "\n" not in out  # one line
    return out


def test_the_mean_pool_hint_names_the_padding_without_the_recipe(capsys):
    nb09.check_mean_pool(lambda hidden, mask: hidden.mean(dim=1))
    out = said(capsys)
    assert "includes the padded positions" in out and "real tokens only" in out, out
    assert "sum" not in out and "divide" not in out, out  # the steps of the answer are the learner's to find

    def real_tokens_only(hidden, attention_mask):
        summed = (hidden * attention_mask[..., None]).sum(dim=1)
        return summed / attention_mask.sum(dim=1, keepdim=True)

    nb09.check_mean_pool(real_tokens_only)
    assert said(capsys).startswith("Exercise 1: correct.")


def test_previous_token_score_is_attnlibs_meaning_for_any_leading_axes(capsys):
    """One name, one meaning across notebooks 09 and 10: (..., T, T) -> (...), attnlib.induction's."""
    only_three_axes = lambda w: torch.stack([w[h].diagonal(-1).mean() for h in range(w.shape[0])])  # noqa: E731
    nb09.check_previous_token_score(only_three_axes)
    out = said(capsys)
    assert out.startswith("Exercise 2: not yet.") and "leading axis" in out, out
    assert nb09.check_previous_token_score.reference.__module__ == "attnlib.induction"


def test_the_next_token_hint_explains_swapped_dims(capsys):
    nb09.check_previous_token_score(lambda w: w.diagonal(offset=-1, dim1=-1, dim2=-2).mean(-1))
    out = said(capsys)
    assert "NEXT token" in out and "which of dim1 and dim2 is the queries' axis" in out, out
    assert "offset=-1" not in out, out  # the hint names the mistake, not the line to write


@pytest.mark.parametrize(("check", "answer"), [(nb09.check_group_size, 4), (nb09.check_cache_bytes, 40000)])
def test_an_unknown_wrong_number_gets_a_hint_without_the_answer(capsys, check, answer):
    check(answer)
    out = said(capsys)
    assert ": not yet." in out and "xpected" not in out and "46080" not in out, out


def test_the_checkers_leave_the_global_generator_alone(capsys):
    torch.manual_seed(123)
    before = torch.get_rng_state()
    nb09.check_mean_pool(lambda h, m: h.mean(dim=1))
    nb09.check_previous_token_score(lambda w: w.diagonal(dim1=-2, dim2=-1).mean(-1))
    capsys.readouterr()
    assert torch.equal(torch.get_rng_state(), before)
