"""The checkers of notebook 05 accept the reference, name each known mistake, and report a stub."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import attnlib
from attnlib.exercises import nb05


def line(capsys) -> str:
    out = capsys.readouterr().out
    assert out.count("\n") == 1, out  # exactly one line
    return out.strip()


# --- Exercise 1: the parameter count ------------------------------------------------------------


def test_parameter_count_accepts_the_reference(capsys):
    nb05.check_parameter_count(288)
    assert line(capsys).startswith("Exercise 1: correct.")


@pytest.mark.parametrize(("answer", "hint"), [
    (256, "not their biases"),
    (216, "leaves out the output projection W^O"),
    (1152, "multiplies by the number of heads"),
    (96, "96 is too small. Work it out again"),  # less common mistakes: the generic hint
    (1128, "1128 is too large. Work it out again"),
    (300, "300 is too large."),
])
def test_parameter_count_names_each_mistake(capsys, answer, hint):
    nb05.check_parameter_count(answer)
    out = line(capsys)
    assert out.startswith("Exercise 1: not yet.") and hint in out, out


def test_parameter_count_stub(capsys):
    nb05.check_parameter_count(None)
    assert line(capsys) == "Exercise 1: not attempted yet"


# --- Exercise 2: where x[1, 5, 7] lands after split_heads(x, 3) ----------------------------------


@pytest.mark.parametrize("answer", [(1, 1, 5, 3), [1, 1, 5, 3], torch.tensor([1, 1, 5, 3]), (1.0, 1, 5, 3)])
def test_split_index_accepts_the_reference(capsys, answer):
    nb05.check_split_index(answer)
    assert line(capsys).startswith("Exercise 2: correct.")


def test_split_index_is_where_split_heads_puts_the_number():
    x = torch.zeros(2, 7, 12)
    x[1, 5, 7] = 1.0
    heads = attnlib.split_heads(x, 3)  # (B, H, T, Dh)
    assert tuple(heads.nonzero()[0].tolist()) == nb05.check_split_index.expected_value()


@pytest.mark.parametrize(("answer", "hint"), [
    ((1, 5, 1, 3), "after the reshape to (B, T, H, Dh) only"),
    # the other mistakes get the parts of the index that are wrong, by their meaning
    ((1, 1, 5, 7), "Your number for the feature within the head (7) is not right: a head numbers its own Dh"),
    ((1, 2, 5, 1), "Your numbers for the head and the feature within the head (2, 1) are not right"),
    ((1, 1, 5, 2), "Your number for the feature within the head (2) is not right"),
    ((1, 2, 2, 3), "Your numbers for the head and the token (2, 2) are not right"),
    ((2, 2, 6, 4), "Your numbers for the sequence, the head, the token and the feature within the head (2, 2, 6, 4)"),
    ((1, 1, 5), "Your answer has 3 entries; the answer has 4."),
    ("1, 1, 5, 3", "as a tuple of four ints"),
])
def test_split_index_names_each_mistake(capsys, answer, hint):
    nb05.check_split_index(answer)
    out = line(capsys)
    assert out.startswith("Exercise 2: not yet.") and hint in out, out


def test_split_index_stub(capsys):
    nb05.check_split_index(None)
    assert line(capsys) == "Exercise 2: not attempted yet"


# --- Exercise 3: the scale of each head ---------------------------------------------------------


@pytest.mark.parametrize("answer", [8, 8.0, 8.01, math.sqrt(64)])
def test_head_scale_accepts_the_reference(capsys, answer):
    nb05.check_head_scale(answer)
    assert line(capsys).startswith("Exercise 3: correct.")


@pytest.mark.parametrize(("answer", "hint"), [
    (math.sqrt(512), "22.63 is sqrt(E)"),
    (64, "64 is Dh itself"),
    (512, "512 is too large. Work it out again"),
    (2.83, "sqrt(H)"),
    (22.63, "is sqrt(E), the scale of one head of full width"),
    (0.125, "multiplied by"),
    (7, "7 is too small."),
])
def test_head_scale_names_each_mistake(capsys, answer, hint):
    nb05.check_head_scale(answer)
    out = line(capsys)
    assert out.startswith("Exercise 3: not yet.") and hint in out, out


def test_head_scale_stub(capsys):
    nb05.check_head_scale(None)
    assert line(capsys) == "Exercise 3: not attempted yet"


# --- Exercise 4: merge heads kept in the batch axis, (B*H, T, Dh) -> (B, T, E) ---------------------


def merge_right(x, num_heads):
    bh, t, dh = x.shape
    return x.view(bh // num_heads, num_heads, t, dh).transpose(1, 2).contiguous().view(bh // num_heads, t, -1)


def merge_cat(x, num_heads):  # also right: head h of every sequence is rows h, h + H, h + 2H, ...
    return torch.cat([x[h::num_heads] for h in range(num_heads)], dim=-1)


def merge_head_major(x, num_heads):  # reads row h*B + b as head h of sequence b
    bh, t, dh = x.shape
    return x.reshape(num_heads, bh // num_heads, t, dh).permute(1, 2, 0, 3).reshape(bh // num_heads, t, -1)


def merge_no_transpose(x, num_heads):
    bh, t, dh = x.shape
    return x.reshape(bh // num_heads, t, num_heads * dh)


def merge_view_after_transpose(x, num_heads):
    bh, t, dh = x.shape
    return x.view(bh // num_heads, num_heads, t, dh).transpose(1, 2).view(bh // num_heads, t, -1)


def merge_old_signature(x):  # the merge of section 4, which takes (B, H, T, Dh)
    b, h, t, dh = x.shape
    return x.transpose(1, 2).reshape(b, t, h * dh)


@pytest.mark.parametrize("function", [merge_right, merge_cat])
def test_merge_heads_accepts_the_reference(capsys, function):
    nb05.check_merge_heads(function)
    assert line(capsys).startswith("Exercise 4: correct.")


@pytest.mark.parametrize(("function", "hints"), [
    # the first probe is B, H = 5, 6 (so that no H a learner may type equals its B: the (H, B) split shows)
    (merge_head_major, ["mix sequences", "hold sequences [[0, 1, 2, 3, 4], [0, 1, 2, 3, 4],", "the batch first"]),
    (merge_no_transpose, ["mix tokens", "hold tokens [[0, 1, 2, 3], [0, 1, 2, 3],", "transpose"]),
    (merge_view_after_transpose, ["`view` cannot merge", ".contiguous()", ".reshape(...)"]),
    (merge_old_signature, ["my_merge_heads(x, num_heads)"]),
    (lambda x, num_heads: merge_right(x, 2), ["On the probe B, H, T, Dh = 5, 6, 4, 2, expected shape (5, 4, 12), "
                                              "got shape (15, 4, 4)."]),
    (lambda x, num_heads: merge_right(x, num_heads).transpose(1, 2), ["On the probe B, H, T, Dh = 5, 6, 4, 2"]),
    (lambda x, num_heads: merge_right(x, len(x) // num_heads), ["On the probe B, H, T, Dh = 5, 6, 4, 2, expected "
                                                                "shape (5, 4, 12), got shape (6, 4, 10)."]),
])
def test_merge_heads_names_each_mistake(capsys, function, hints):
    nb05.check_merge_heads(function)
    out = line(capsys)
    assert out.startswith("Exercise 4: not yet."), out
    assert all(hint in out for hint in hints), out


def test_merge_heads_probes_vary_every_dimension():
    """A merge that hard-codes B, H, T or Dh fails on some probe; the first probe separates every mistake."""
    shapes = [(x.shape[0] // h, h, x.shape[1], x.shape[2]) for x, h in (p.args for p in
                                                                      nb05.check_merge_heads.probe_list())]
    for axis in range(4):
        assert len({s[axis] for s in shapes}) >= 3, (axis, shapes)
    b, h, t, dh = shapes[0]
    assert b > 1 and h > 1 and t > 1 and dh > 1, shapes[0]  # batch order, transpose and head order all show


@pytest.mark.parametrize("function", [None, lambda x, num_heads: None])
def test_merge_heads_stub(capsys, function):
    nb05.check_merge_heads(function)
    assert line(capsys).startswith("Exercise 4: not attempted yet")


# --- Exercise 5: multi-head attention -------------------------------------------------------------


def attention(q, k, v, num_heads, *, split_transpose=True, merge_transpose=True, width="Dh", dim=-1,
              view_after_transpose=False):
    """The learner's function, right by default, with one classic mistake switched on by a keyword."""
    b, tq, e = q.shape
    dh = e // num_heads

    def split(x):
        if split_transpose:
            return x.reshape(b, x.shape[1], num_heads, dh).transpose(1, 2)
        return x.reshape(b, num_heads, x.shape[1], dh)

    scores = split(q) @ split(k).transpose(-2, -1) / math.sqrt(dh if width == "Dh" else e)
    heads = scores.softmax(dim=dim) @ split(v)  # (B, H, Tq, Dh)
    if view_after_transpose:
        return heads.transpose(1, 2).view(b, tq, e)
    if merge_transpose:
        return heads.transpose(1, 2).reshape(b, tq, e)
    return heads.reshape(b, tq, e)


def test_multi_head_attention_accepts_the_reference(capsys):
    nb05.check_multi_head_attention(attention)
    assert line(capsys).startswith("Exercise 5: correct.")


def test_multi_head_attention_refuses_a_ready_made_attention(capsys):
    """The prompt asks for softmax(QK^T / sqrt(d_k)) V written out: torch's SDPA and attnlib's helpers are refused."""
    def with_torch(q, k, v, num_heads):
        b, tq, e = q.shape
        split = [x.reshape(b, x.shape[1], num_heads, e // num_heads).transpose(1, 2) for x in (q, k, v)]
        heads = torch.nn.functional.scaled_dot_product_attention(*split)
        return heads.transpose(1, 2).reshape(b, tq, e)

    nb05.check_multi_head_attention(with_torch)
    out = line(capsys)
    assert out.startswith("Exercise 5: not yet.") and "torch's scaled_dot_product_attention" in out, out
    nb05.check_multi_head_attention(lambda q, k, v, h: attnlib.merge_heads(attnlib.split_heads(q, h)))
    assert "Your function calls attnlib's split_heads" in line(capsys)


@pytest.mark.parametrize(("options", "hint"), [
    ({"width": "E"}, "scaled by 1/sqrt(E) instead of 1/sqrt(Dh)"),
    ({"split_transpose": False, "merge_transpose": False}, "both reshape straight, without a transpose"),  # section 7
    ({"merge_transpose": False}, "Your split is right but the merge reshapes"),
    ({"split_transpose": False}, "Your split reshapes straight to (B, H, T, Dh) (no transpose)"),
    ({"dim": -2}, "softmax ran over the queries (dim=-2)"),
    ({"view_after_transpose": True}, "`view` cannot merge axes that `transpose` only relabelled"),  # section 8
])
def test_multi_head_attention_names_each_mistake(capsys, options, hint):
    nb05.check_multi_head_attention(lambda q, k, v, h: attention(q, k, v, h, **options))
    out = line(capsys)
    assert out.startswith("Exercise 5: not yet.") and hint in out, out


def test_multi_head_attention_general_hint(capsys):
    nb05.check_multi_head_attention(lambda q, k, v, h: q)
    out = line(capsys)
    assert out.startswith("Exercise 5: not yet. On the probe self-attention, E = 12, H = 3, at index (0, 0, 0)"), out


@pytest.mark.parametrize("function", [None, lambda q, k, v, h: None])
def test_multi_head_attention_stub(capsys, function):
    nb05.check_multi_head_attention(function)
    assert line(capsys).startswith("Exercise 5: not attempted yet")


# --- answers written another way, and hints that once blamed another mistake --------------------------


def said(capsys) -> str:
    out = capsys.readouterr().out
    assert out.count("\n") == 1, f"a checker prints exactly one line, got {out!r}"
    return out.rstrip("\n")


@pytest.mark.parametrize(("check", "answer"), [
    (nb05.check_split_index, np.array([1, 1, 5, 3])),
    (nb05.check_split_index, tuple(np.int64(n) for n in (1, 1, 5, 3))),
    (nb05.check_head_scale, torch.tensor(64.0).sqrt()),
    (nb05.check_head_scale, np.sqrt(64)),
    (nb05.check_parameter_count, torch.tensor(288)),
])
def test_a_right_answer_in_another_type_is_accepted(capsys, check, answer):
    check(answer)
    assert ": correct." in said(capsys)
