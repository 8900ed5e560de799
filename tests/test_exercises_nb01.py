"""What is specific to notebook 01's exercises (tests/test_exercises_generic.py covers what every exercise does)."""

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


# --- Exercises 1 and 2: predicted shapes -----------------------------------------------------------------


def test_shapes_may_be_sizes_arrays_or_tensors(capsys):
    nb01.check_shapes(torch.Size([5, 7]), np.array([5, 7]), torch.tensor([5, 32]))
    assert line(capsys).startswith("Exercise 1: correct.")
    nb01.check_projection_shapes([6, 5], (2.0, 5.0), torch.Size([2, 7]))
    assert line(capsys).startswith("Exercise 2: correct.")


@pytest.mark.parametrize(("answer", "hint"), [
    (((5, 7), None, (5, 32)), "Fill in every answer: weights_shape is still None"),
    (("(5, 7)", (5, 7), (5, 32)), "write the tuple itself"),
    (((5, 7), "5x7", (5, 32)), "Write each shape as a tuple of ints"),
    (((5, 7), (5, 7), (3, 3)), "Your output_shape is not right: follow its row of the table"),
])
def test_shapes_half_done_or_misspelt(capsys, answer, hint):
    nb01.check_shapes(*answer)
    out = line(capsys)
    assert out.startswith("Exercise 1: not yet.") and hint in out, out


def test_a_wrong_shape_that_is_another_shapes_answer_is_not_quoted(capsys):
    nb01.check_shapes((5, 7), (5, 7), (5, 7))  # the output predicted as the weights' shape
    out = line(capsys)
    assert "is the weights' shape" in out and "(5, 7)" not in out, out
    nb01.check_projection_shapes((6, 5), (6, 5), (2, 7))  # W_k predicted as W_q's shape
    out = line(capsys)
    assert "W_k_shape multiplies the decoder" in out and "(6, 5)" not in out, out


@pytest.mark.parametrize("answer", [((6, 5), (6, 5), (6, 7)), ((2, 5), (2, 5), (2, 7))])
def test_a_sequence_mixed_up_is_named_without_its_width(capsys, answer):
    """The width would be the W's first size, the answer itself (learners L1, #34 and #41)."""
    nb01.check_projection_shapes(*answer)
    out = line(capsys)
    assert "multiplies the" in out and "wide" not in out, out


# --- Exercise 4: my_attention on matrices and batches, written without attnlib -----------------------


def attention_with(scale=None, transpose=lambda k: k.transpose(-2, -1)):
    def attention(query, key, value):
        scores = query @ transpose(key) / (math.sqrt(query.shape[-1]) if scale is None else scale)
        weights = F.softmax(scores, dim=-1)
        return weights @ value, weights
    return attention


def test_attention_written_otherwise_is_correct(capsys):
    nb01.check_attention(attention_with(transpose=lambda k: k.mT))
    assert line(capsys).startswith("Exercise 4: correct.")
    nb01.check_attention(lambda q, k, v: attention_with()(q.double(), k.double(), v.double()))  # wider dtype
    assert line(capsys).startswith("Exercise 4: correct.")


def test_calling_attnlib_or_torchs_sdpa_is_refused_even_with_own_weights(capsys):
    """The exercise is to write the three steps: torch's fused output is refused like attnlib's (learners L1, #89)."""
    nb01.check_attention(lambda q, k, v: attnlib.scaled_dot_product_attention(q, k, v))
    assert "calls attnlib's attention" in line(capsys)

    def torch_output(query, key, value):
        weights = F.softmax(query @ key.mT / math.sqrt(query.shape[-1]), dim=-1)
        return F.scaled_dot_product_attention(query, key, value), weights

    nb01.check_attention(torch_output)
    out = line(capsys)
    assert out.startswith("Exercise 4: not yet.") and "torch's F.scaled_dot_product_attention" in out, out


def test_key_T_works_on_matrices_and_is_named_on_batches(capsys):
    nb01.check_attention(attention_with(transpose=lambda k: k.T))
    out = line(capsys)
    assert "works on matrices but raised RuntimeError on 3-D inputs" in out and "`.T`" in out, out


def test_a_typed_scale_is_named_with_the_inputs_width(capsys):
    nb01.check_attention(attention_with(scale=math.sqrt(7)))  # right for the first probe's d_k = 7 only
    out = line(capsys)
    assert "multiplied by 0.378, a scale that does not follow this input's width d_k = 8" in out, out
    nb01.check_attention(attention_with(scale=math.sqrt(16)))  # Exercise 1's d_k, typed: not "divided by d_k"
    out = line(capsys)
    assert "multiplied by 0.25, a scale that does not follow this input's width d_k = 7" in out, out


def test_softmax_over_the_queries_quotes_the_learners_row_sums(capsys):
    def over_queries(query, key, value):
        weights = F.softmax(query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1]), dim=0)
        return weights @ value, weights

    q, k, v = nb01._attention_probes()[0].args
    sums = ", ".join(f"{s:.2f}" for s in over_queries(q, k, v)[1].sum(dim=-1).tolist())
    nb01.check_attention(over_queries)
    assert f"Your weights' rows sum to {sums} and their columns to 1" in line(capsys)


# --- Exercise 3: my_cross_attention ---------------------------------------------------------------------


def test_cross_attention_right_only_for_equal_shapes_gets_the_probe_it_raised_on(capsys):
    """An uncommon mistake (issue 31): no row of its own; the generic hint names the probe of unequal shapes."""
    def equal_shapes_only(decoder, encoder, W_q, W_k, W_v):
        both = torch.stack([decoder, encoder])  # fails when the two sequences differ in shape
        return attnlib.scaled_dot_product_attention(both[0] @ W_q, both[1] @ W_k, both[1] @ W_v)

    nb01.check_cross_attention(equal_shapes_only)
    out = line(capsys)
    assert out.startswith("Exercise 3: not yet. Your function raised RuntimeError on the probe a decoder of 2 "
                          "tokens (width 6), an encoder of 5 (width 8):"), out


def test_cross_attention_without_W_v_gets_the_output_shape(capsys):
    """An uncommon mistake (issue 31): no row of its own; the generic hint shows the output's width."""
    nb01.check_cross_attention(lambda d, e, W_q, W_k, W_v: attnlib.scaled_dot_product_attention(d @ W_q, e @ W_k, e))
    assert "expected shape (3, 5), got shape (3, 6)" in line(capsys)
