"""The checkers of notebook 09: the right answer passes, each named mistake gets its hint, a stub is not attempted."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnlib.exercises import nb09


def said(capsys) -> str:
    out = capsys.readouterr().out.strip()
    assert "\n" not in out  # one line
    return out


@pytest.mark.parametrize("check", [nb09.check_group_size, nb09.check_mean_pool,
                                   nb09.check_previous_token_score, nb09.check_cache_bytes])
def test_a_stub_is_not_attempted(check, capsys):
    check(None)
    assert said(capsys).endswith(": not attempted yet")


def test_group_size(capsys):
    nb09.check_group_size(3)
    assert said(capsys).startswith("Exercise 1: correct.")
    for wrong, words in ((9, "9 is the number of query heads"), (1, "ordinary multi-head attention"),
                         (1 / 3, "fraction of key/value heads")):
        nb09.check_group_size(wrong)
        out = said(capsys)
        assert out.startswith("Exercise 1: not yet.") and words in out
    nb09.check_group_size(4)
    assert said(capsys) == "Exercise 1: not yet. Expected 3, got 4."


def test_mean_pool(capsys):
    def right(hidden, mask):
        real = mask[..., None].float()
        return (hidden * real).sum(1) / real.sum(1)

    nb09.check_mean_pool(right)
    assert said(capsys).startswith("Exercise 2: correct.")
    wrongs = {
        "includes the padded positions": lambda h, m: h.mean(dim=1),
        "still divided by T": lambda h, m: (h * m[..., None]).sum(1) / h.shape[1],
        "summed over the features": lambda h, m: (h * m[..., None]).sum(-1),
    }
    for words, wrong in wrongs.items():
        nb09.check_mean_pool(wrong)
        out = said(capsys)
        assert out.startswith("Exercise 2: not yet.") and words in out, out
    nb09.check_mean_pool(lambda h, m: None)
    assert said(capsys).startswith("Exercise 2: not attempted yet")


def test_previous_token_score(capsys):
    nb09.check_previous_token_score(lambda w: torch.stack([w[:, i, i - 1] for i in range(1, w.shape[-1])], -1).mean(-1))
    assert said(capsys).startswith("Exercise 3: correct.")
    wrongs = {
        "the diagonal": lambda w: w.diagonal(dim1=-2, dim2=-1).mean(-1),
        "weights[h, i, i + 1]": lambda w: w.diagonal(offset=1, dim1=-2, dim2=-1).mean(-1),
        "counting query 0": lambda w: w.diagonal(offset=-1, dim1=-2, dim2=-1).sum(-1) / w.shape[-1],
    }
    for words, wrong in wrongs.items():
        nb09.check_previous_token_score(wrong)
        out = said(capsys)
        assert out.startswith("Exercise 3: not yet.") and words in out, out


def test_cache_bytes(capsys):
    nb09.check_cache_bytes(46080)
    assert said(capsys).startswith("Exercise 4: correct.")
    for wrong, words in ((23040, "only the keys"), (138240, "the 9 query heads"), (11520, "count of numbers"),
                         (1536, "one layer")):
        nb09.check_cache_bytes(wrong)
        out = said(capsys)
        assert out.startswith("Exercise 4: not yet.") and words in out, out


# --- answers written another way, and hints that once blamed another mistake --------------------------


@pytest.mark.parametrize(("check", "answer"), [
    (nb09.check_group_size, torch.tensor(9) // 3),
    (nb09.check_group_size, np.float64(3.0)),
    (nb09.check_cache_bytes, torch.tensor(2 * 30 * 3 * 64 * 4)),
])
def test_a_right_answer_in_another_type_is_accepted(capsys, check, answer):
    check(answer)
    assert ": correct." in said(capsys)


def test_09_diagonal_with_swapped_dims_is_told_about_the_dims(capsys):
    nb09.check_previous_token_score(lambda w: w.diagonal(offset=-1, dim1=-1, dim2=-2).mean(-1))
    out = said(capsys)
    assert "dims swapped (dim1=-1, dim2=-2)" in out and "NEXT token" in out


def test_09_the_mean_pool_hint_can_be_followed_as_written(capsys):
    nb09.check_mean_pool(lambda hidden, mask: hidden.mean(dim=1))
    assert "attention_mask.sum(dim=1, keepdim=True)" in said(capsys)

    def as_the_hint_says(hidden, attention_mask):
        summed = (hidden * attention_mask[..., None]).sum(dim=1)
        return summed / attention_mask.sum(dim=1, keepdim=True)

    nb09.check_mean_pool(as_the_hint_says)
    assert said(capsys).startswith("Exercise 2: correct.")


def test_09_checkers_leave_the_global_generator_alone(capsys):
    torch.manual_seed(123)
    before = torch.get_rng_state()
    nb09.check_mean_pool(lambda h, m: h.mean(dim=1))
    nb09.check_previous_token_score(lambda w: w.diagonal(dim1=-2, dim2=-1).mean(-1))
    capsys.readouterr()
    assert torch.equal(torch.get_rng_state(), before)


def test_a_number_in_a_string_is_told_to_drop_the_quotes(capsys):
    nb09.check_cache_bytes("46080")
    assert "You wrote the string '46080': write the number itself" in said(capsys)
