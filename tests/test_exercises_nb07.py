"""The checkers of notebook 07: each accepts the reference, names each known mistake, reports a stub.

The right answers and the wrong ones are written here independently of the checkers' own references.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from attnlib.exercises import nb07


def said(capsys: pytest.CaptureFixture[str]) -> str:
    out = capsys.readouterr().out
    assert out.count("\n") == 1, out  # exactly one line
    return out.strip()


# --- Exercise 1: the rows of "man bites dog" --------------------------------------------------


@pytest.mark.parametrize("answer", [[2, 1, 0], (2, 1, 0), torch.tensor([2, 1, 0])])
def test_rows_correct(capsys, answer):
    nb07.check_permuted_rows(answer)
    assert said(capsys).startswith("Exercise 1: correct.")


def test_rows_stub(capsys):
    nb07.check_permuted_rows(None)
    assert said(capsys) == "Exercise 1: not attempted yet"


@pytest.mark.parametrize(("answer", "hint"), [
    ([0, 1, 2], "each position keeps its output"),
    ("new", "you expect new vectors"),
    ([1, 0, 2], "is a permutation, but not the one of the words"),
    ([2, 1], "has 2 entries"),
    ([5, 5, 5], "Expected (2, 1, 0), got (5, 5, 5)"),
])
def test_rows_mistakes(capsys, answer, hint):
    nb07.check_permuted_rows(answer)
    out = said(capsys)
    assert out.startswith("Exercise 1: not yet.") and hint in out, out


# --- Exercise 2: the sinusoidal table ---------------------------------------------------------


def table(T, E, even, odd, angle):  # PE[t, j] = even(angle(t, j)) at even j, odd(angle(t, j)) at odd j
    return torch.tensor([[(even if j % 2 == 0 else odd)(angle(t, j)) for j in range(E)] for t in range(T)])


def paper(T, E, base=10000.0):
    return table(T, E, math.sin, math.cos, lambda t, j: t / base ** (2 * (j // 2) / E))


def colleagues(T, E, base=10000.0):  # the notebook's buggy version: feature index and sin/cos swapped
    j = torch.arange(E)
    angle = torch.arange(T)[:, None] / base ** (2 * j / E)
    pe = torch.cos(angle)
    pe[:, 1::2] = torch.sin(angle[:, 1::2])
    return pe


def swapped(T, E, base=10000.0):
    return table(T, E, math.cos, math.sin, lambda t, j: t / base ** (2 * (j // 2) / E))


def feature_index(T, E, base=10000.0):
    return table(T, E, math.sin, math.cos, lambda t, j: t / base ** (2 * j / E))


def feature_index_no_two(T, E, base=10000.0):
    return table(T, E, math.sin, math.cos, lambda t, j: t / base ** (j / E))


def halves(T, E, base=10000.0):
    return torch.tensor([[math.sin(t / base ** (2 * j / E)) for j in range(E // 2)]
                         + [math.cos(t / base ** (2 * j / E)) for j in range(E // 2)] for t in range(T)])


def from_one(T, E, base=10000.0):
    return paper(T + 1, E, base)[1:]


def multiplied(T, E, base=10000.0):
    return table(T, E, math.sin, math.cos, lambda t, j: t * base ** (2 * (j // 2) / E))


def transposed(T, E, base=10000.0):
    return paper(T, E, base).T


def test_sinusoidal_correct_stub_and_exception(capsys):
    nb07.check_sinusoidal(paper)
    assert said(capsys).startswith("Exercise 2: correct.")
    nb07.check_sinusoidal(None)
    assert said(capsys) == "Exercise 2: not attempted yet"

    def stub(T, E, base=10000.0):
        pass
    nb07.check_sinusoidal(stub)
    assert said(capsys).startswith("Exercise 2: not attempted yet")

    def broken(T, E, base=10000.0):
        raise ZeroDivisionError("x")
    nb07.check_sinusoidal(broken)
    assert "raised ZeroDivisionError" in said(capsys)


@pytest.mark.parametrize(("function", "hint"), [
    (colleagues, "both mistakes of your colleague remain"),
    (swapped, "sin and cos are swapped"),
    (feature_index, "your exponent uses the feature index"),
    (feature_index_no_two, "your exponent is j/E"),
    (halves, "all the sines first"),
    (from_one, "your first row is position 1"),
    (multiplied, "you multiplied t"),
    (transposed, "your table is (E, T)"),
])
def test_sinusoidal_mistakes(capsys, function, hint):
    nb07.check_sinusoidal(function)
    out = said(capsys)
    assert out.startswith("Exercise 2: not yet.") and hint in out, out


# --- Exercise 3: rotate-half RoPE -------------------------------------------------------------


def rope_loop(x, positions, pairing="half", direction=1.0, two=2.0, swap=False):
    T, D = x.shape
    out = x.double().clone()
    for t in range(T):
        for i in range(D // 2):
            a, b = (i, i + D // 2) if pairing == "half" else (2 * i, 2 * i + 1)
            angle = direction * float(positions[t]) * 10000.0 ** (-two * i / D)
            c, s = (math.sin(angle), math.cos(angle)) if swap else (math.cos(angle), math.sin(angle))
            out[t, a] = x[t, a] * c - x[t, b] * s
            out[t, b] = x[t, a] * s + x[t, b] * c
    return out


def test_rope_correct_and_stub(capsys):
    nb07.check_rope_rotate_half(rope_loop)
    assert said(capsys).startswith("Exercise 3: correct.")
    nb07.check_rope_rotate_half(None)
    assert said(capsys) == "Exercise 3: not attempted yet"


@pytest.mark.parametrize(("function", "hint"), [
    (lambda x, p: rope_loop(x, p, pairing="interleaved"), "the paper's interleaved pairing"),
    (lambda x, p: rope_loop(x, p, direction=-1.0), "turns the wrong way"),
    (lambda x, p: rope_loop(x, torch.arange(len(x))), "uses arange(T), not the positions"),
    (lambda x, p: rope_loop(x, p, two=1.0), "10000^(-i/D)"),
    (lambda x, p: rope_loop(x, p, swap=True), "sin and cos are swapped"),
    (lambda x, p: x, "at index (0, 0) expected 0.8355, got -0.8201"),
])
def test_rope_mistakes(capsys, function, hint):
    nb07.check_rope_rotate_half(function)
    out = said(capsys)
    assert out.startswith("Exercise 3: not yet.") and hint in out, out


# --- Exercise 4: the wrong lines of decode_step -----------------------------------------------


@pytest.mark.parametrize("answer", [{"A", "C"}, ["c", "a"], "AC", "a, c", frozenset("AC")])
def test_decode_correct(capsys, answer):
    nb07.check_decode_bugs(answer)
    assert said(capsys).startswith("Exercise 4: correct.")


def test_decode_stub(capsys):
    nb07.check_decode_bugs(None)
    assert said(capsys) == "Exercise 4: not attempted yet"


@pytest.mark.parametrize(("answer", "present", "absent"), [
    ({"A"}, ["Line C is wrong"], ["Line A", "Line B", "Line D"]),
    ({"C"}, ["Line A is wrong"], ["Line B", "Line C", "Line D"]),
    ({"A", "B"}, ["Line C is wrong", "Line B is right"], ["Line A", "Line D"]),
    ({"A", "C", "D"}, ["Line D is right"], ["Line A", "Line B", "Line C"]),
    (set(), ["Line A is wrong", "Line C is wrong"], ["Line B", "Line D"]),
    ({"B", "D"}, ["Line A is wrong", "Line C is wrong", "Line B is right", "Line D is right"], []),
])
def test_decode_names_every_line_it_gets_wrong(capsys, answer, present, absent):
    nb07.check_decode_bugs(answer)
    out = said(capsys)
    assert out.startswith("Exercise 4: not yet.")
    assert all(p in out for p in present) and not any(a in out for a in absent), out


@pytest.mark.parametrize(("answer", "hint"), [
    ({"A", "E"}, "E is not one of them"),
    (3, "Give the wrong lines as a set of letters"),
])
def test_decode_bad_answers(capsys, answer, hint):
    nb07.check_decode_bugs(answer)
    out = said(capsys)
    assert out.startswith("Exercise 4: not yet.") and hint in out, out


def test_the_lines_really_are_wrong_and_right():
    """Line A and line C change the attention of a decoding step; the fixed step equals full causal attention."""
    from attnlib import apply_rope, scaled_dot_product_attention

    torch.manual_seed(0)
    q, k, v = torch.randn(6, 8), torch.randn(6, 8), torch.randn(6, 8)  # (T, Dh)
    full = scaled_dot_product_attention(apply_rope(q), apply_rope(k), v, is_causal=True)[0]
    t = 5
    cached_keys = apply_rope(k[:t])  # rotated at 0..t-1

    def step(query_at_t, rotate_value):
        q_new = apply_rope(q[t:], torch.tensor([t])) if query_at_t else apply_rope(q[t:])
        k_new = apply_rope(k[t:], torch.tensor([t]))
        v_new = apply_rope(v[t:], torch.tensor([t])) if rotate_value else v[t:]
        keys, values = torch.cat([cached_keys, k_new]), torch.cat([v[:t], v_new])
        return scaled_dot_product_attention(q_new, keys, values)[0]

    torch.testing.assert_close(step(True, False), full[t:])
    assert not torch.allclose(step(False, False), full[t:], atol=1e-3)  # line A
    assert not torch.allclose(step(True, True), full[t:], atol=1e-3)  # line C


# --- answers written another way, and hints that once blamed another mistake --------------------------


@pytest.mark.parametrize(("check", "answer"), [
    (nb07.check_permuted_rows, torch.tensor([2, 1, 0])),
    (nb07.check_permuted_rows, np.array([2, 1, 0])),
    (nb07.check_permuted_rows, (2, 1, 0)),
    (nb07.check_decode_bugs, "A and C"),
    (nb07.check_decode_bugs, "lines A, C"),
    (nb07.check_decode_bugs, ["A", "C"]),
])
def test_a_right_answer_in_another_type_is_accepted(capsys, check, answer):
    check(answer)
    assert ": correct." in said(capsys)


@pytest.mark.parametrize("answer", ["A and C", "a and c", "A, C"])
def test_07_an_and_between_letters_is_not_a_line_called_n(capsys, answer):
    nb07.check_decode_bugs(answer)
    assert "N is not one of them" not in said(capsys)
    nb07.check_decode_bugs("A and B")
    out = said(capsys)
    assert "Line B is right" in out and "Line C is wrong" in out


def test_07_a_wrong_exponent_is_not_told_about_its_dtype(capsys):
    def pair_index_without_two(T, E):
        i = torch.arange(E // 2)
        angle = torch.arange(T)[:, None] / 10000 ** (i / E)
        pe = torch.zeros(T, E)
        pe[:, 0::2], pe[:, 1::2] = angle.sin(), angle.cos()
        return pe

    def some_other_exponent(T, E):
        i = torch.arange(E // 2)
        angle = torch.arange(T)[:, None] / 10000 ** (3 * i / E)
        pe = torch.zeros(T, E)
        pe[:, 0::2], pe[:, 1::2] = angle.sin(), angle.cos()
        return pe

    nb07.check_sinusoidal(pair_index_without_two)
    assert "your exponent is i/E with i the pair index" in said(capsys)
    nb07.check_sinusoidal(some_other_exponent)
    out = said(capsys)
    assert out == "Exercise 2: not yet. On inputs 6, 4, at index (1, 2) expected 0.01, got 0.001.", out
