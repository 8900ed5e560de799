"""attnlib.induction: the repeated-token batch and the two head scores, on cases with known answers."""

from __future__ import annotations

import pytest
import torch

from attnlib import induction


def one_hot_weights(targets: list[int], t: int) -> torch.Tensor:
    """(T, T) weights where query i puts all its weight on key targets[i]."""
    w = torch.zeros(t, t)
    w[torch.arange(t), torch.tensor(targets)] = 1.0
    return w


def test_repeated_tokens_holds_two_copies_at_random_places():
    tokens, first, second = induction.repeated_tokens(4096, 32, 10, 64, generator=torch.Generator().manual_seed(0))
    assert tokens.shape == (4096, 32) and tokens.dtype == torch.int64
    assert first.shape == second.shape == (4096,)
    assert int(tokens.min()) == 0 and int(tokens.max()) == 63
    j, rows = torch.arange(10), torch.arange(4096)[:, None]
    assert torch.equal(tokens[rows, second[:, None] + j], tokens[rows, first[:, None] + j])
    assert (second >= first + 10).all() and (second + 10 <= 32).all() and (first >= 0).all()
    assert int(first.min()) == 0 and int(first.max()) == 12 and int(second.max()) == 22  # every start reachable
    assert (second - first).unique().numel() == 13  # distances 10 .. 22: not a fixed offset


def test_repeated_tokens_same_seed_same_batch_and_tight_fit():
    a = induction.repeated_tokens(8, 20, 10, 5, generator=torch.Generator().manual_seed(3))
    b = induction.repeated_tokens(8, 20, 10, 5, generator=torch.Generator().manual_seed(3))
    assert all(torch.equal(x, y) for x, y in zip(a, b))
    tokens, first, second = a  # T = 2L: the only place is 0 and L
    assert first.tolist() == [0] * 8 and second.tolist() == [10] * 8
    assert torch.equal(tokens[:, :10], tokens[:, 10:])


@pytest.mark.parametrize("args", [(0, 32, 10, 64), (4, 19, 10, 64), (4, 32, 0, 64), (4, 32, 10, True),
                                  (4.0, 32, 10, 64)])
def test_repeated_tokens_refuses_bad_sizes(args):
    with pytest.raises(ValueError):
        induction.repeated_tokens(*args)


def test_previous_token_score_on_known_heads():
    t = 6
    previous = one_hot_weights([0, 0, 1, 2, 3, 4], t)  # every query i >= 1 on key i - 1: score 1
    itself = one_hot_weights(list(range(t)), t)  # on the diagonal: score 0
    half = (previous + itself) / 2  # half on each: 0.5
    scores = induction.previous_token_score(torch.stack([previous, itself, half])[None])  # (1, 3, T, T)
    assert scores.shape == (1, 3)
    assert scores.tolist() == [[1.0, 0.0, 0.5]]


def test_an_even_causal_spread_scores_the_mean_of_one_over_the_keys_seen_not_one_over_t():
    """Query i of a causal head sees i + 1 keys: an even spread gives key i - 1 the weight 1 / (i + 1)."""
    t = 32
    even = induction.previous_token_score(torch.tril(torch.ones(t, t)) / torch.arange(1, t + 1)[:, None])
    assert even.item() == pytest.approx(sum(1 / (i + 1) for i in range(1, t)) / (t - 1))
    assert 0.09 < even.item() < 0.11 and even.item() > 3 * (1 / t)  # about 0.1, not 1/T = 0.031
    unmasked = induction.previous_token_score(torch.full((t, t), 1 / t))  # no mask: every key seen
    assert unmasked.item() == pytest.approx(1 / t)


def test_prefix_matching_score_reads_the_token_after_the_earlier_occurrence():
    t, first, second, n = 12, 1, 6, 4  # copies at 1..4 and 6..9
    induction_head = list(range(t))
    for j in range(n):
        induction_head[second + j] = first + j + 1  # query 6 -> key 2, 7 -> 3, 8 -> 4, 9 -> 5
    same_token = list(range(t))
    for j in range(n):
        same_token[second + j] = first + j  # the earlier occurrence itself: no score
    w = torch.stack([one_hot_weights(induction_head, t), one_hot_weights(same_token, t)])[None]  # (1, 2, T, T)
    assert induction.prefix_matching_score(w, first, second, n).tolist() == [[1.0, 0.0]]
    per_row = induction.prefix_matching_score(w.expand(3, 2, t, t), torch.tensor([1, 1, 1]), torch.tensor([6, 6, 6]), n)
    assert per_row.tolist() == [[1.0, 0.0]] * 3


def test_prefix_matching_score_only_counts_the_second_copy():
    t, n = 8, 4  # two copies: 0..3 and 4..7
    w = torch.zeros(1, 1, t, t)
    w[0, 0, 3, 0] = 1.0  # the first copy's last query on key 0: not a second-copy query, must not count
    w[0, 0, 4, 1] = 1.0  # query 4 (second copy, j = 0) on key 1: counts
    assert induction.prefix_matching_score(w, 0, n, n).item() == pytest.approx(0.25)


def test_scores_refuse_bad_input():
    with pytest.raises(ValueError, match=r"\(\.\.\., T, T\)"):
        induction.previous_token_score(torch.rand(2, 3, 4))
    with pytest.raises(TypeError, match="floating"):
        induction.previous_token_score(torch.ones(4, 4, dtype=torch.long))
    with pytest.raises(ValueError, match="second"):
        induction.prefix_matching_score(torch.rand(1, 2, 8, 8), 2, 2, 4)  # second copy must come after the first
    with pytest.raises(ValueError, match="second"):
        induction.prefix_matching_score(torch.rand(1, 2, 8, 8), 0, 5, 4)  # runs past T
    with pytest.raises(ValueError, match=r"\(B,\)"):
        induction.prefix_matching_score(torch.rand(2, 2, 8, 8), torch.tensor([0, 0, 0]), 4, 4)


def test_scores_leave_their_input_unchanged():
    w = torch.rand(2, 3, 8, 8)
    before = w.clone()
    induction.previous_token_score(w)
    induction.prefix_matching_score(w, 0, 4, 4)
    assert torch.equal(w, before)
