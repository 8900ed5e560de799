"""The checkers of notebook 04: each accepts the reference, names each known mistake, reports a stub."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnlib.exercises import nb04

NEG_INF = float("-inf")


def said(capsys: pytest.CaptureFixture[str]) -> str:
    out = capsys.readouterr().out
    assert out.count("\n") == 1, out  # exactly one line
    return out.strip()


# --- Exercise 1: predict the shape ------------------------------------------------------------


def test_combined_shape_correct_and_stub(capsys):
    nb04.check_combined_shape((3, 1, 3, 3))
    assert said(capsys).startswith("Exercise 1: correct.")
    nb04.check_combined_shape(torch.Size([3, 1, 3, 3]))
    assert said(capsys).startswith("Exercise 1: correct.")
    nb04.check_combined_shape(None)
    assert said(capsys) == "Exercise 1: not attempted yet"


@pytest.mark.parametrize(("answer", "hint"), [
    ((3, 1, 1, 3), "padding mask's own shape"),
    ((3, 3, 3), "has 3 axes"),
    ([3, 3, 3, 3], "gives the head axis 3"),
    ((3, 3), "has 2 axes"),
    ((1, 3, 3, 3), "Expected (3, 1, 3, 3), got (1, 3, 3, 3)"),
])
def test_combined_shape_mistakes(capsys, answer, hint):
    nb04.check_combined_shape(answer)
    out = said(capsys)
    assert out.startswith("Exercise 1: not yet.") and hint in out, out


# --- Exercise 2: predict example 0 ------------------------------------------------------------


def test_example0_correct_and_stub(capsys):
    nb04.check_example0_mask([[1, 0, 0], [1, 1, 0], [1, 1, 0]])
    assert said(capsys).startswith("Exercise 2: correct.")
    nb04.check_example0_mask(torch.tensor([[True, False, False], [True, True, False], [True, True, False]]))
    assert said(capsys).startswith("Exercise 2: correct.")
    nb04.check_example0_mask(None)
    assert said(capsys) == "Exercise 2: not attempted yet"


@pytest.mark.parametrize(("answer", "hint"), [
    ([[1, 1, 0], [1, 1, 0], [1, 1, 1]], "You combined with |"),
    ([[1, 0, 0], [1, 1, 0], [1, 1, 1]], "Your row 2 is [1, 1, 1]: the causal triangle alone"),
    ([[1, 1, 0], [1, 1, 0], [1, 1, 0]], "Every row of yours is [1, 1, 0]: the padding mask alone"),
    ([[1, 0, 0], [1, 1, 0], [0, 0, 0]], "Your row 2 is [0, 0, 0]: you masked the padded query"),
    ([[False, True, True], [False, False, True], [False, False, True]], "exact opposite"),
    ([[1, 1, 0], [0, 1, 0], [0, 0, 0]], "points the wrong way"),
    ([[1, 0, 0], [1, 1, 0], [1, 0, 0]],
     "Expected [[1, 0, 0], [1, 1, 0], [1, 1, 0]], got [[1, 0, 0], [1, 1, 0], [1, 0, 0]]"),
])
def test_example0_mistakes(capsys, answer, hint):
    nb04.check_example0_mask(answer)
    out = said(capsys)
    assert out.startswith("Exercise 2: not yet.") and hint in out, out


# --- Exercise 3: decoder_mask -----------------------------------------------------------------


def decoder_mask(valid_lens, T):
    real = torch.arange(T) < valid_lens[:, None]  # (B, Tk)
    return real[:, None, None, :] & torch.ones(T, T).tril().bool()


def _real(valid_lens, T):
    return torch.arange(T) < valid_lens[:, None]


def _tril(T):
    return torch.ones(T, T).tril().bool()


DECODER_MISTAKES = {
    "float": (lambda lens, T: decoder_mask(lens, T).float(), "dtype float32"),
    "no axes": (lambda lens, T: _real(lens, T) & _tril(T), "without its head and query axes"),
    "no head axis": (lambda lens, T: _real(lens, T)[:, None, :] & _tril(T), "its B axis would line up with the heads"),
    "causal only, 2-D": (lambda lens, T: _tril(T), "the causal triangle (3, 3) alone"),
    "padding only": (lambda lens, T: _real(lens, T)[:, None, None, :], "the padding mask alone"),
    "wrong shape": (lambda lens, T: decoder_mask(lens, T)[:, :, None], "expected (B, 1, Tq, Tk)"),
    "blocked polarity": (lambda lens, T: ~decoder_mask(lens, T), "True = blocked"),
    "or": (lambda lens, T: _real(lens, T)[:, None, None, :] | _tril(T), "You combined with |: your mask allows 22"),
    "padding polarity": (lambda lens, T: ~_real(lens, T)[:, None, None, :] & _tril(T),
                         "may take from keys [2], padding only"),
    "no padding": (lambda lens, T: _tril(T).expand(len(lens), 1, T, T), "no padding"),
    "no causal": (lambda lens, T: _real(lens, T)[:, None, None, :].expand(len(lens), 1, T, T), "no causal triangle"),
    "upper": (lambda lens, T: _real(lens, T)[:, None, None, :] & torch.ones(T, T).triu().bool(), "wrong way (upper)"),
    "<=": (lambda lens, T: (torch.arange(T) <= lens[:, None])[:, None, None, :] & _tril(T), "Off by one"),
    "other": (lambda lens, T: decoder_mask(lens, T).logical_xor(torch.eye(T, dtype=torch.bool)),
              "at example 0, query 0, key 0"),
}


def test_decoder_mask_correct_and_stub(capsys):
    nb04.check_decoder_mask(decoder_mask)
    assert said(capsys).startswith("Exercise 3: correct.")
    nb04.check_decoder_mask(None)
    assert said(capsys) == "Exercise 3: not attempted yet"
    nb04.check_decoder_mask(lambda valid_lens, T: None)
    assert said(capsys).startswith("Exercise 3: not attempted yet")


@pytest.mark.parametrize("mistake", list(DECODER_MISTAKES))
def test_decoder_mask_mistakes(capsys, mistake):
    function, hint = DECODER_MISTAKES[mistake]
    nb04.check_decoder_mask(function)
    out = said(capsys)
    assert out.startswith("Exercise 3: not yet.") and hint in out, out


def test_decoder_mask_error_is_one_line(capsys):
    def broken(valid_lens, T):
        raise RuntimeError("line one\nline two")

    nb04.check_decoder_mask(broken)
    assert "raised RuntimeError on inputs (3,) int64, 3: line one" in said(capsys)


# --- Exercise 4: safe_masked_softmax ----------------------------------------------------------


def safe_masked_softmax(scores, mask):
    weights = torch.softmax(scores.masked_fill(~mask, NEG_INF), dim=-1)
    return torch.where(mask.any(dim=-1, keepdim=True), weights, 0.0)


def _fill(value, dim=-1, guard=False, flip=False):
    def function(scores, mask):
        m = ~mask if flip else mask
        weights = torch.softmax(scores.masked_fill(~m, value), dim=dim)
        return torch.where(m.any(dim=-1, keepdim=True), weights, 0.0) if guard else weights
    return function


def _additive(repair):
    def function(scores, mask):
        additive = torch.zeros_like(scores).masked_fill(~mask, NEG_INF)  # 0 / -inf, added to the scores
        weights = torch.softmax(scores + additive, dim=-1)
        if repair == "nan_to_num":
            return weights.nan_to_num(0.0)
        return torch.where(mask.any(dim=-1, keepdim=True), weights, 0.0)
    return function


SOFTMAX_MISTAKES = {
    "-inf, no guard": (_fill(NEG_INF), "are NaN: softmax of a row of -inf is 0/0"),
    "-1e9": (_fill(-1e9), "put 0.25 = 1/Tk on every key"),
    "finfo.min": (lambda s, m: _fill(torch.finfo(s.dtype).min)(s, m), "put 0.25 = 1/Tk on every key"),
    "-1e9 and a guard, float16": (_fill(-1e9, guard=True), "-1e9 does not fit in float16"),
    "polarity": (_fill(NEG_INF, flip=True), "non-zero where the mask is False (query 0 puts"),
    "dim=-2": (_fill(NEG_INF, dim=-2, guard=True), "not 1: the softmax must run over the keys, dim=-1"),
    # right weights, NaN gradient: the hint blames the addition, not the repair after the softmax
    "additive -inf, nan_to_num": (_additive("nan_to_num"), "The mistake is the additive -inf mask"),
    "additive -inf, where guard": (_additive("where"), "The mistake is the additive -inf mask"),
    "wrong shape": (lambda s, m: safe_masked_softmax(s, m)[..., :1], "should have the scores' shape"),
    "other": (lambda s, m: safe_masked_softmax(s, m) * 0.5 + 0.5 * safe_masked_softmax(s, m).flip(-1),
              "On scores (1, 4, 4) float32, query 2 puts 0.5000 on key 1, expected 0.0000"),
}


def test_safe_masked_softmax_correct_and_stub(capsys):
    nb04.check_safe_masked_softmax(safe_masked_softmax)
    assert said(capsys).startswith("Exercise 4: correct.")
    nb04.check_safe_masked_softmax(lambda scores, mask: torch.where(
        mask.any(dim=-1, keepdim=True),
        torch.softmax(scores.masked_fill(~mask, torch.finfo(scores.dtype).min), dim=-1), 0.0))
    assert said(capsys).startswith("Exercise 4: correct.")  # finfo.min with the guard is right too
    nb04.check_safe_masked_softmax(None)
    assert said(capsys) == "Exercise 4: not attempted yet"
    nb04.check_safe_masked_softmax(lambda scores, mask: None)
    assert said(capsys).startswith("Exercise 4: not attempted yet")


@pytest.mark.parametrize("mistake", list(SOFTMAX_MISTAKES))
def test_safe_masked_softmax_mistakes(capsys, mistake):
    function, hint = SOFTMAX_MISTAKES[mistake]
    nb04.check_safe_masked_softmax(function)
    out = said(capsys)
    assert out.startswith("Exercise 4: not yet.") and hint in out, out


# --- Exercise 5: cache_causal_mask ------------------------------------------------------------


def cache_causal_mask(q_len, kv_len):
    return torch.ones(q_len, kv_len).tril(diagonal=kv_len - q_len).bool()


CACHE_MISTAKES = {
    "float": (lambda q, k: cache_causal_mask(q, k).float(), "dtype float32"),
    "transposed": (lambda q, k: cache_causal_mask(q, k).T, "(Tk, Tq): rows are queries"),
    "wrong shape": (lambda q, k: cache_causal_mask(k, k), "expected (Tq, Tk) = (2, 5)"),
    "top-left": (lambda q, k: torch.ones(q, k).tril().bool(), "your query 0 sees keys [0]: that is the top-left"),
    "polarity": (lambda q, k: ~cache_causal_mask(q, k), "True = blocked"),
    "diagonal excluded": (lambda q, k: torch.ones(q, k).tril(diagonal=k - q - 1).bool(), "not key 3, its own token"),
    "one too far": (lambda q, k: torch.ones(q, k).tril(diagonal=k - q + 1).bool(), "including key 4"),
    "other": (lambda q, k: cache_causal_mask(q, k).logical_xor(torch.eye(q, k, dtype=torch.bool)), "at query 0, key 0"),
}


def test_cache_causal_mask_correct_and_stub(capsys):
    nb04.check_cache_causal_mask(cache_causal_mask)
    assert said(capsys).startswith("Exercise 5: correct.")
    nb04.check_cache_causal_mask(None)
    assert said(capsys) == "Exercise 5: not attempted yet"
    nb04.check_cache_causal_mask(lambda q_len, kv_len: None)
    assert said(capsys).startswith("Exercise 5: not attempted yet")


@pytest.mark.parametrize("mistake", list(CACHE_MISTAKES))
def test_cache_causal_mask_mistakes(capsys, mistake):
    function, hint = CACHE_MISTAKES[mistake]
    nb04.check_cache_causal_mask(function)
    out = said(capsys)
    assert out.startswith("Exercise 5: not yet.") and hint in out, out


def test_not_a_function(capsys):
    nb04.check_cache_causal_mask(3)
    assert said(capsys) == "Exercise 5: not yet. Expected a function, got 3."


# --- answers written another way, and hints that once blamed another mistake --------------------------


@pytest.mark.parametrize(("check", "answer"), [
    (nb04.check_combined_shape, np.array([3, 1, 3, 3])),
    (nb04.check_example0_mask, np.array([[1, 0, 0], [1, 1, 0], [1, 1, 0]])),
    (nb04.check_example0_mask, torch.tensor([[True, False, False], [True, True, False], [True, True, False]])),
])
def test_a_right_answer_in_another_type_is_accepted(capsys, check, answer):
    check(answer)
    assert ": correct." in said(capsys)


def _guard(mask):
    return mask.any(dim=-1, keepdim=True)


@pytest.mark.parametrize("answer", [
    lambda s, m: torch.where(_guard(m), torch.softmax(s.masked_fill(~m, float("-inf")), -1, dtype=torch.float32), 0.0),
    lambda s, m: torch.where(_guard(m), torch.exp(s.float().masked_fill(~m, float("-inf"))
                                                  - torch.logsumexp(s.float().masked_fill(~m, float("-inf")), -1,
                                                                    keepdim=True)), 0.0),
    lambda s, m: torch.where(_guard(m), torch.softmax(s.double().masked_fill(~m, float("-inf")), -1), 0.0),
])
def test_float16_scores_computed_in_float32_or_with_logsumexp_are_right(capsys, answer):
    nb04.check_safe_masked_softmax(answer)
    assert said(capsys).startswith("Exercise 4: correct.")


def test_04_additive_inf_mask_then_nan_to_num_is_caught_by_its_gradient(capsys):
    def additive_then_nan_to_num(scores, mask):
        additive = torch.zeros_like(scores).masked_fill(~mask, float("-inf"))
        return torch.softmax(scores + additive, dim=-1).nan_to_num(0.0)

    nb04.check_safe_masked_softmax(additive_then_nan_to_num)
    out = said(capsys)
    assert out.startswith("Exercise 4: not yet. Your weights are right, but under P2's loss mask") and "NaN" in out

    def masked_fill_then_nan_to_num(scores, mask):  # masked_fill sends no gradient to the masked scores: right
        return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1).nan_to_num(0.0)

    nb04.check_safe_masked_softmax(masked_fill_then_nan_to_num)
    assert said(capsys).startswith("Exercise 4: correct.")
