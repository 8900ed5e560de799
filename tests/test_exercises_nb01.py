"""Notebook 01's checkers: each accepts the reference, names each listed mistake, and reports a stub."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import attnlib
from attnlib.exercises import nb01


def line(capsys) -> str:
    out = capsys.readouterr().out
    assert out.count("\n") == 1, out  # exactly one line
    return out.strip()


# Exercise 1: predict the shapes for Tq=5, Tk=7, d_k=16, Ev=32.

def test_shapes_correct_and_stub(capsys):
    nb01.check_shapes((5, 7), [5, 7], torch.Size([5, 32]))
    assert line(capsys).startswith("Exercise 1: correct.")
    nb01.check_shapes(None, None, None)
    assert line(capsys) == "Exercise 1: not attempted yet"
    nb01.check_shapes((5, 7), None, (5, 32))
    assert "weights_shape is still None" in line(capsys)
    nb01.check_shapes("5x7", (5, 7), (5, 32))
    assert "tuple of numbers" in line(capsys)


@pytest.mark.parametrize(("answer", "hint"), [
    (((7, 5), (5, 7), (5, 32)), "Your scores_shape (7, 5) is (Tk, Tq), one row per key"),
    (((5, 16), (5, 16), (5, 32)), "Your scores_shape (5, 16) keeps d_k = 16"),
    (((16, 16), (16, 16), (5, 32)), "Your scores_shape (16, 16) is (d_k, d_k)"),
    (((5, 7), (5,), (5, 32)), "Your weights_shape (5,) has one number per query"),
    (((5, 7), (7, 5), (5, 32)), "Your weights_shape (7, 5) is (Tk, Tq)"),
    (((5, 7), (5, 1), (5, 32)), "Your weights_shape (5, 1) differs from your scores_shape (5, 7)"),
    (((5, 7), (5, 1), (5, 16)), "Your weights_shape (5, 1) differs from your scores_shape (5, 7)"),
    (((5, 7), (5, 7), (5, 16)), "Your output_shape (5, 16) has the width d_k = 16"),
    (((5, 7), (5, 7), (7, 32)), "Your output_shape (7, 32) has one row per key"),
    (((5, 7), (5, 7), (5, 7)), "Your output_shape (5, 7) is the weights' shape"),
    (((5, 7), (5, 7), (3, 3)), "Expected"),
])
def test_shapes_mistakes(capsys, answer, hint):
    nb01.check_shapes(*answer)
    out = line(capsys)
    assert out.startswith("Exercise 1: not yet. ") and hint in out, out


# Exercise 2: predict the cross-attention shapes of section 6.

def test_cross_shapes_correct_and_stub(capsys):
    nb01.check_cross_shapes((2, 5), (2, 3))
    assert line(capsys).startswith("Exercise 2: correct.")
    nb01.check_cross_shapes(None, None)
    assert line(capsys) == "Exercise 2: not attempted yet"


@pytest.mark.parametrize(("answer", "hint"), [
    (((5, 2), (2, 3)), "Your weights (5, 2) have one row per encoder token"),
    (((2, 2), (2, 3)), "Your weights (2, 2) are square, as in self-attention: here the keys come from the encoder"),
    (((5, 5), (5, 3)), "Your weights (5, 5) are square, as in self-attention: here the queries come from the decoder"),
    (((2, 5), (5, 3)), "Your output (5, 3) has one row per encoder token"),
    (((2, 5), (2, 4)), "Your output (2, 4) has the width d_k = 4"),
    (((2, 5), (2, 8)), "Your output (2, 8) has the encoder's width 8"),
    (((2, 5), (2, 6)), "Your output (2, 6) has the decoder's width 6"),
    (((2, 5), (4, 4)), "Expected"),
])
def test_cross_shapes_mistakes(capsys, answer, hint):
    nb01.check_cross_shapes(*answer)
    out = line(capsys)
    assert out.startswith("Exercise 2: not yet. ") and hint in out, out


# Exercise 3: the weights for q (3, 4), k (5, 4), v (5, 9).

def test_weights_correct_and_stub(capsys):
    q, k, v = nb01.exercise_3_inputs()
    nb01.check_weights(F.softmax(q @ k.T / math.sqrt(q.shape[-1]), dim=-1))
    assert line(capsys).startswith("Exercise 3: correct.")
    nb01.check_weights(attnlib.scaled_dot_product_attention(q, k, v)[1])
    assert line(capsys).startswith("Exercise 3: correct.")
    nb01.check_weights(None)
    assert line(capsys) == "Exercise 3: not attempted yet"


def weights_mistakes():
    q, k, _ = nb01.exercise_3_inputs()
    dots = q @ k.T
    return [
        (F.softmax(dots / 2, dim=0), "and your columns to 1: softmax ran over the queries (dim=0); use dim=-1"),
        (F.softmax(dots / 3, dim=0), "softmax ran over the queries"),
        (F.softmax(k @ q.T / 2, dim=-1), "Your weights are (5, 3), one row per key"),
        (dots / 2, "These are the scaled scores, not weights"),
        (dots, "These are the raw scores"),
        (F.softmax(dots / 3, dim=-1), "divided by sqrt(Ev) = sqrt(9) = 3"),
        (F.softmax(dots / 4, dim=-1), "divided by d_k = 4"),
        (F.softmax(dots, dim=-1), "were not scaled"),
        (torch.zeros(3, 5), "At index (0, 0) expected 0.2323, got 0.0."),
    ]


@pytest.mark.parametrize(("answer", "hint"), weights_mistakes())
def test_weights_mistakes(capsys, answer, hint):
    nb01.check_weights(answer)
    out = line(capsys)
    assert out.startswith("Exercise 3: not yet. ") and hint in out, out


def test_weights_wrong_axis_quotes_the_row_sums(capsys):
    q, k, _ = nb01.exercise_3_inputs()
    wrong = F.softmax(q @ k.T / 2, dim=0)
    nb01.check_weights(wrong)
    sums = ", ".join(f"{s:.2f}" for s in wrong.sum(dim=-1).tolist())
    assert f"Your rows sum to {sums}" in line(capsys)


# Exercise 4: my_attention(query, key, value) -> (output, weights).

def attention_right(query, key, value):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    weights = F.softmax(scores, dim=-1)
    return weights @ value, weights


def attention_with(scale=None, dim=-1, order="ow", transpose=lambda k: k.transpose(-2, -1), softmax=True):
    def attention(query, key, value):
        scores = query @ transpose(key)
        scores = scores / (math.sqrt(query.shape[-1]) if scale is None else scale(query, value))
        weights = F.softmax(scores, dim=dim) if softmax else scores
        output = weights @ value
        return {"ow": (output, weights), "wo": (weights, output), "o": output}[order]
    return attention


def test_attention_correct_and_stub(capsys):
    nb01.check_attention(attention_right)
    assert line(capsys).startswith("Exercise 4: correct.")
    nb01.check_attention(attnlib.scaled_dot_product_attention)
    assert line(capsys).startswith("Exercise 4: correct.")

    def stub(query, key, value):
        pass

    nb01.check_attention(stub)
    assert line(capsys).startswith("Exercise 4: not attempted yet")
    nb01.check_attention(None)
    assert line(capsys) == "Exercise 4: not attempted yet"


@pytest.mark.parametrize(("wrong", "hint"), [
    (attention_with(order="o"), "Your function returns one tensor, of shape (3, 9)"),
    (attention_with(order="wo"), "You return (weights, output)"),
    (attention_with(dim=0), "Your weights' rows sum to"),
    (attention_with(dim=-2), "softmax ran over the queries; use dim=-1"),
    (attention_with(scale=lambda q, v: math.sqrt(v.shape[-1])), "divided by sqrt(Ev) = sqrt(9) = 3.00"),
    (attention_with(scale=lambda q, v: q.shape[-1]), "divided by d_k = 4: divide by its square root, sqrt(d_k) = 2.00"),
    (attention_with(scale=lambda q, v: 1.0), "Your scores were not scaled"),
    (attention_with(softmax=False), "not 1: apply softmax"),
    (attention_with(transpose=lambda k: k.T), "key.transpose(-2, -1), instead of key.T"),
    (lambda q, k, v: (torch.zeros(3, 9), torch.full((3, 5), 0.2)),
     "in your output: at index (0, 0) expected -0.5371, got 0.0"),
])
def test_attention_mistakes(capsys, wrong, hint):
    nb01.check_attention(wrong)
    out = line(capsys)
    assert out.startswith("Exercise 4: not yet. ") and hint in out, out


def test_attention_wrong_axis_quotes_the_row_sums(capsys):
    q, k, v = nb01._attention_inputs()[0]
    sums = ", ".join(f"{s:.2f}" for s in attention_with(dim=0)(q, k, v)[1].sum(dim=-1).tolist())
    nb01.check_attention(attention_with(dim=0))
    assert f"Your weights' rows sum to {sums} and their columns to 1" in line(capsys)


# Exercise 5: my_cross_attention(decoder, encoder, W_q, W_k, W_v) -> (output, weights).

def cross_from(q_from, k_from, v_from, order="ow"):
    def cross(decoder, encoder, W_q, W_k, W_v):
        pick = {"d": decoder, "e": encoder}
        query, key, value = pick[q_from] @ W_q, pick[k_from] @ W_k, pick[v_from] @ W_v
        output, weights = attnlib.scaled_dot_product_attention(query, key, value)
        return {"ow": (output, weights), "wo": (weights, output), "o": output}[order]
    return cross


def test_cross_attention_correct_and_stub(capsys):
    nb01.check_cross_attention(cross_from("d", "e", "e"))
    assert line(capsys).startswith("Exercise 5: correct.")
    nb01.check_cross_attention(lambda d, e, q, k, v: None)
    assert line(capsys).startswith("Exercise 5: not attempted yet")
    nb01.check_cross_attention(None)
    assert line(capsys) == "Exercise 5: not attempted yet"


@pytest.mark.parametrize(("wrong", "hint"), [
    (cross_from("d", "d", "d"), "Your keys and values come from the decoder, as in self-attention"),
    (cross_from("e", "e", "e"), "Your queries come from the encoder"),
    (cross_from("e", "d", "d"), "The roles are swapped"),
    (cross_from("d", "e", "d"), "Your values come from the decoder"),
    (cross_from("d", "d", "e"), "Your keys come from the decoder"),
    (cross_from("d", "e", "e", order="o"), "Your function returns one tensor, of shape (3, 5)"),
    (cross_from("d", "e", "e", order="wo"), "You return (weights, output)"),
])
def test_cross_attention_mistakes(capsys, wrong, hint):
    nb01.check_cross_attention(wrong)
    out = line(capsys)
    assert out.startswith("Exercise 5: not yet. ") and hint in out, out


def test_cross_attention_error_on_unequal_sequences(capsys):
    def equal_shapes_only(decoder, encoder, W_q, W_k, W_v):  # right only while the two sequences have one shape
        both = torch.stack([decoder, encoder])
        return attnlib.scaled_dot_product_attention(both[0] @ W_q, both[1] @ W_k, both[1] @ W_v)

    nb01.check_cross_attention(equal_shapes_only)
    out = line(capsys)
    assert out.startswith("Exercise 5: not yet. ") and "W_q multiplies the decoder, W_k and W_v the encoder" in out, out


# --- answers written another way, and hints that once blamed another mistake --------------------------


def said(capsys) -> str:
    out = capsys.readouterr().out
    assert out.count("\n") == 1, f"a checker prints exactly one line, got {out!r}"
    return out.rstrip("\n")


def test_shapes_of_notebook_01_may_be_sizes_arrays_or_tensors(capsys):
    nb01.check_shapes(torch.Size([5, 7]), np.array([5, 7]), torch.tensor([5, 32]))
    assert said(capsys).startswith("Exercise 1: correct.")
    nb01.check_shapes("(5, 7)", (5, 7), (5, 32))
    assert said(capsys).startswith("Exercise 1: not yet. Write scores_shape as a tuple of numbers")


def test_weights_of_notebook_01_may_be_an_array(capsys):
    q, k, _ = nb01.exercise_3_inputs()
    weights = torch.softmax(q @ k.T / 2, dim=-1)
    nb01.check_weights(weights.numpy())
    assert said(capsys).startswith("Exercise 3: correct.")
    nb01.check_weights(weights.double())
    assert said(capsys).startswith("Exercise 3: correct.")
