"""The checkers of notebook 08: each accepts the reference, names each known mistake, reports a stub."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from attnlib import causal_mask
from attnlib.exercises import nb08


def said(capsys: pytest.CaptureFixture[str]) -> str:
    out = capsys.readouterr().out
    assert out.count("\n") == 1, out  # exactly one line
    return out.strip()


# --- Exercise 1: the weights' memory ----------------------------------------------------------


@pytest.mark.parametrize("answer", [2048, 2048.0, 8 * 8192 * 8192 * 4 / 2**20])
def test_weights_memory_correct(capsys, answer):
    nb08.check_weights_memory(answer)
    assert said(capsys).startswith("Exercise 1: correct.")


@pytest.mark.parametrize(("answer", "hint"), [
    (512, "counts elements, not bytes"),
    (256, "one head's weights"),
    (4096, "float64's"),
    (16, "the size of Q"),
    (1000, "Expected 2048.0, got 1000"),
])
def test_weights_memory_mistakes(capsys, answer, hint):
    nb08.check_weights_memory(answer)
    out = said(capsys)
    assert out.startswith("Exercise 1: not yet.") and hint in out


def test_weights_memory_stub(capsys):
    nb08.check_weights_memory(None)
    assert said(capsys) == "Exercise 1: not attempted yet"


# --- Exercise 2: the online-softmax update ----------------------------------------------------


def right_torch(m, s, x):
    m_new = torch.maximum(m, x)
    return m_new, s * torch.exp(m - m_new) + torch.exp(x - m_new)


def right_floats(m, s, x):
    m, s, x = float(m), float(s), float(x)
    m_new = max(m, x)
    return m_new, s * math.exp(m - m_new) + math.exp(x - m_new)


@pytest.mark.parametrize("function", [right_torch, right_floats])
def test_online_update_correct(capsys, function):
    nb08.check_online_update(function)
    assert said(capsys).startswith("Exercise 2: correct.")


def test_online_update_result_equals_softmax_normaliser():
    """The reference itself is right: run over a row, s is sum(exp(x - max)) as torch computes it."""
    row = torch.tensor([1.0, 3.0, 2.0, 5.0, 0.5], dtype=torch.float64)
    m, s = torch.tensor(-math.inf, dtype=torch.float64), torch.tensor(0.0, dtype=torch.float64)
    for x in row:
        m, s = nb08._update(m, s, x)
    assert m == row.max()
    torch.testing.assert_close(torch.exp(row - m) / s, torch.softmax(row, dim=0))


@pytest.mark.parametrize(("function", "hint"), [
    (nb08._no_rescale, "Multiply the old s by exp(m - m_new) first"),
    (nb08._rescale_inverted, "rescaling points the wrong way"),
    (nb08._no_max, "adds exp(x) itself"),
    (lambda m, s, x: (m, s), "expected"),
])
def test_online_update_mistakes(capsys, function, hint):
    nb08.check_online_update(function)
    out = said(capsys)
    assert out.startswith("Exercise 2: not yet.") and hint in out


@pytest.mark.parametrize("stub", [None, lambda m, s, x: None])
def test_online_update_stub(capsys, stub):
    nb08.check_online_update(stub)
    assert said(capsys).startswith("Exercise 2: not attempted yet")


# --- Exercise 3: the cache's mask -------------------------------------------------------------


def test_cache_keys_seen(capsys):
    nb08.check_cache_keys_seen(6)
    assert said(capsys).startswith("Exercise 3: correct.")
    nb08.check_cache_keys_seen(None)
    assert said(capsys) == "Exercise 3: not attempted yet"


@pytest.mark.parametrize(("answer", "hint"), [(1, "top-left diagonal"), (8, "its future"), (5, "its own key"),
                                              (3, "Expected 6, got 3")])
def test_cache_keys_seen_mistakes(capsys, answer, hint):
    nb08.check_cache_keys_seen(answer)
    out = said(capsys)
    assert out.startswith("Exercise 3: not yet.") and hint in out


# --- Exercise 4: grouped key/value heads ------------------------------------------------------


def test_expand_kv_correct_is_torchs_grouping(capsys):
    nb08.check_expand_kv(lambda kv, hq: kv.repeat_interleave(hq // kv.shape[1], dim=1))
    assert said(capsys).startswith("Exercise 4: correct.")
    gen = torch.Generator().manual_seed(0)
    q = torch.randn(1, 6, 3, 4, generator=gen)  # (B, Hq, Tq, Dh)
    k, v = torch.randn(1, 2, 5, 4, generator=gen), torch.randn(1, 2, 5, 4, generator=gen)  # (B, Hkv, Tk, Dh)
    expected = torch.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    expanded = torch.nn.functional.scaled_dot_product_attention(q, nb08._expand_kv(k, 6), nb08._expand_kv(v, 6))
    torch.testing.assert_close(expanded, expected)


@pytest.mark.parametrize(("function", "hint"), [
    (lambda kv, hq: kv.repeat(1, hq // kv.shape[1], 1, 1), "what .repeat does"),
    (lambda kv, hq: kv.repeat_interleave(hq // kv.shape[1], dim=0),
     "expected shape (1, 6, 3, 4), got shape (3, 2, 3, 4)"),
])
def test_expand_kv_mistakes(capsys, function, hint):
    nb08.check_expand_kv(function)
    out = said(capsys)
    assert out.startswith("Exercise 4: not yet.") and hint in out


def test_expand_kv_stub(capsys):
    nb08.check_expand_kv(lambda kv, hq: None)
    assert said(capsys).startswith("Exercise 4: not attempted yet")


# --- answers written another way, and hints that once blamed another mistake --------------------------


@pytest.mark.parametrize(("check", "answer"), [
    (nb08.check_cache_keys_seen, causal_mask(3, 8, align="bottom_right")[0].sum()),  # a 0-d tensor
    (nb08.check_cache_keys_seen, np.int64(6)),
    (nb08.check_weights_memory, torch.tensor(8 * 8192 * 8192 * 4 / 2**20)),
])
def test_a_right_answer_in_another_type_is_accepted(capsys, check, answer):
    check(answer)
    assert ": correct." in said(capsys)


def test_08_online_update_with_raw_exponentials_is_caught_in_float32(capsys):
    def late(m, s, x):
        m_new = torch.maximum(m, x)
        return m_new, (s * torch.exp(m) + torch.exp(x)) / torch.exp(m_new)

    nb08.check_online_update(late)
    out = said(capsys)
    assert out.startswith("Exercise 2: not yet. On the probe m = 100, s = 1, x = 101 in float32") and "exp(101)" in out


def test_a_number_in_a_string_is_told_to_drop_the_quotes(capsys):
    nb08.check_cache_keys_seen("6")
    assert "You wrote the string '6': write the number itself" in said(capsys)
