"""What is specific to notebook 07's exercises (the generic tests cover every exercise's table and strange inputs)."""

from __future__ import annotations

import re

import pytest
import torch

from attnlib import apply_rope, sinusoidal_positions
from attnlib.exercises import nb07


def test_the_shift_matrix_moves_the_sinusoidal_table():
    """Exercise 2's reference is M_k with PE(t + k) = M_k PE(t), on attnlib's table, for every probe's k and E."""
    for probe in nb07.check_shift_matrix.probe_list():
        k, E, *base = probe.args  # a probe of another base passes it
        pe = sinusoidal_positions(64, E, *base, dtype=torch.float64)  # (T, E)
        torch.testing.assert_close(pe[:-k] @ nb07.shift_matrix(k, E, *base).T, pe[k:])


def test_the_rope_reference_is_attnlibs_rotate_half_for_a_base():
    """Exercise 3's convention: with theta = base^(-2i/D) it is attnlib's apply_rope (interleaved=False)."""
    x, positions = torch.randn(2, 3, 5, 8, dtype=torch.float64), torch.tensor([4, 0, 7, 2, 9])
    theta = 500.0 ** (-2 * torch.arange(4, dtype=torch.float64) / 8)
    torch.testing.assert_close(nb07.rope_rotate_half(x, positions, theta), apply_rope(x, positions, base=500.0))


def test_calling_attnlib_does_not_solve_exercise_3():
    """apply_rope takes a base, not frequencies: it fails the probes of other frequencies, and is told so."""
    for function in (lambda x, p, t: apply_rope(x, p), lambda x, p, t: apply_rope(x, p, base=100.0)):
        verdict = nb07.check_rope_rotate_half.judge(function)
        assert verdict.verdict == "not yet", verdict.text
    assert "ignores theta" in nb07.check_rope_rotate_half.judge(lambda x, p, t: apply_rope(x, p)).text


def test_the_rope_probes_vary_every_dimension():
    probes = [p.args for p in nb07.check_rope_rotate_half.probe_list()]
    assert len({x.shape[-2] for x, _, _ in probes}) == len(probes)  # T
    assert len({x.shape[-1] for x, _, _ in probes}) > 2  # D
    assert len({x.dim() for x, _, _ in probes}) == 3  # (T, D), (B, T, D), (B, H, T, D)
    assert any(not torch.equal(p, torch.arange(len(p))) for _, p, _ in probes)  # positions other than 0..T-1
    assert any(t[0].item() != 1.0 for _, _, t in probes)  # frequencies of no base (theta_0 = 1 for every base)


def test_the_shift_probes_vary_k_and_E():
    probes = [p.args for p in nb07.check_shift_matrix.probe_list()]
    assert len({k for k, *_ in probes}) == len(probes) and len({E for _, E, *_ in probes}) == len(probes)
    assert len({(*base, 10000.0)[0] for _, _, *base in probes}) > 1  # a function that ignores base fails


@pytest.mark.parametrize("answer", [[0, 1, 2], [1, 0, 2], [0, 2, 1], [1, 2, 0], [3, 2, 1], [2, 2, 0], "new", {0}])
def test_no_hint_of_exercise_1_states_the_answer(answer):
    verdict = nb07.check_permuted_rows.judge(answer)
    assert verdict.verdict == "not yet" and "2, 1, 0" not in verdict.text and "row 2" not in verdict.text


@pytest.mark.parametrize("answer", [{"A"}, {"C"}, {"B"}, {"D"}, {"B", "D"}, {"A", "B"}, {"C", "D"}, set("ABCD")])
def test_no_hint_of_exercise_4_names_a_wrong_line_the_learner_missed(answer):
    """A hint explains a line the learner marked, or says that a wrong line is still unmarked, never which."""
    text = nb07.check_decode_bugs.judge(answer).text
    for line in {"A", "C"} - answer:
        assert not re.search(rf"\b[Ll]ine {line}\b|\({line}\)", text), (answer, text)


@pytest.mark.parametrize("answer", ["A and C", "AC", "a, c", "lines A and C", ["a", "C"], ("C", "A")])
def test_the_letters_are_read_however_written(answer):
    assert nb07.check_decode_bugs.judge(answer).verdict == "correct"
