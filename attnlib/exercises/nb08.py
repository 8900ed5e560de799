"""Checkers for the exercises of notebook 08, efficient attention.

One function per exercise; each prints one line ("correct", "not yet. <hint>" or "not attempted
yet") and returns None. The hints name the classic mistakes: the weights' memory counted in
elements instead of bytes, without the heads or as the size of the queries; an online-softmax
update that forgets to rescale the running sum (or rescales it the wrong way, or never subtracts
the maximum); a key/value cache read with the top-left causal diagonal; key/value heads tiled with
``repeat`` instead of ``repeat_interleave``.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from . import Mistake, Probe, check_function, check_value, number_in_string, read_value, report

__all__ = ["check_cache_keys_seen", "check_expand_kv", "check_online_update", "check_weights_memory"]


# --- Exercise 1: predict the weights' memory at T = 8192 ----------------------------------------


def check_weights_memory(answer: Any) -> None:
    """Exercise 1 (predict, then run): MiB of the float32 (B, H, T, T) weights at B=1, H=8, T=8192.

    8 * 8192 * 8192 * 4 bytes = 2048 MiB. Names: the bytes themselves; MB of 10^6 bytes (2147.5);
    GiB (2); elements instead of bytes (512); one head (256); float64's 8 bytes (4096); the size of
    Q (B, H, T, Dh=64), which is linear in T (16). A 0-d tensor or NumPy number is read as its value.
    """
    if (hint := number_in_string(answer)) is not None:
        report("Exercise 1", "not yet", hint)
        return
    answer = read_value(answer, 2048.0)  # a 0-d tensor or NumPy number is read as its number
    mistakes = [
        Mistake(f"{answer} MiB counts elements, not bytes: 8 x 8192 x 8192 = 512 Mi numbers, and a float32 "
                "takes 4 bytes each.", answer=512.0),
        Mistake(f"{answer} MiB is one head's weights: every one of the H = 8 heads has its own (T, T) matrix.",
                answer=256.0),
        Mistake(f"{answer} MiB counts 8 bytes per number, float64's; float32 takes 4.", answer=4096.0),
        Mistake(f"{answer} is the number of bytes: a MiB is 2**20 = 1048576 bytes, so divide by 2**20.",
                answer=8 * 8192 * 8192 * 4.0),
        Mistake(f"{answer} is in MB of 10**6 bytes: a MiB is 2**20 = 1048576 bytes, so divide the bytes by 2**20.",
                answer=8 * 8192 * 8192 * 4 / 1e6),
        Mistake(f"{answer} is in GiB: the question asks MiB, and a GiB is 1024 MiB.", answer=2.0),
        Mistake(f"{answer} MiB is the size of Q (B, H, T, Dh) with Dh = 64: that grows like T. The weights are "
                "(B, H, T, T): the last axis is T, not Dh.", answer=16.0),
    ]
    check_value("Exercise 1", answer, 2048.0, mistakes, rtol=0.01,
                correct="2 GiB for one layer's weights, 16 MiB for Q: the T x T matrix is what grows.")


# --- Exercise 2: the online-softmax update -------------------------------------------------------


def _update(m: torch.Tensor, s: torch.Tensor, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    m_new = torch.maximum(m, x)
    return m_new, s * torch.exp(m - m_new) + torch.exp(x - m_new)


def _no_rescale(m, s, x):
    m_new = torch.maximum(m, x)
    return m_new, s + torch.exp(x - m_new)


def _rescale_inverted(m, s, x):
    m_new = torch.maximum(m, x)
    return m_new, s * torch.exp(m_new - m) + torch.exp(x - m_new)


def _new_term_old_max(m, s, x):
    m_new = torch.maximum(m, x)
    return m_new, s * torch.exp(m - m_new) + torch.exp(x - m)


def _max_is_x(m, s, x):
    return x, s * torch.exp(m - x) + 1.0


def _swapped_return(m, s, x):
    m_new, s_new = _update(m, s, x)
    return s_new, m_new


def _no_max(m, s, x):
    return torch.maximum(m, x), s + torch.exp(x)


def _as_tensors(result: Any) -> Any:
    """(m, s) as float64 tensors, so an answer in Python floats compares like one in tensors."""
    if isinstance(result, (tuple, list)) and len(result) == 2:
        try:
            return tuple(torch.as_tensor(r, dtype=torch.float64) for r in result)
        except (TypeError, ValueError, RuntimeError):
            return result
    return result


def _scalars(*values: float) -> tuple[torch.Tensor, ...]:
    return tuple(torch.tensor(v, dtype=torch.float64) for v in values)


def _divided_late(m, s, x):
    m_new = torch.maximum(m, x)
    return m_new, (s * torch.exp(m) + torch.exp(x)) / torch.exp(m_new)


OVERFLOW_HINT = ("On the probe m = 100, s = 1, x = 101 in float32 your s_new is not finite: exp(101) overflows "
                 "float32 (anything above exp(88.7) is inf) before anything divides it back. Never take exp of a raw "
                 "score: multiply the old s by exp(m - m_new) and add exp(x - m_new), two exponents of at most 0.")


def _overflow_hint(got: Any, expected: Any, args: tuple) -> str | None:
    s_new = got[1] if isinstance(got, (tuple, list)) and len(got) == 2 else None
    return OVERFLOW_HINT if isinstance(s_new, torch.Tensor) and not bool(torch.isfinite(s_new).all()) else None


UPDATE_INPUTS = [_scalars(1.0, 1.0, 3.0), _scalars(3.0, 1.5, 2.0), _scalars(-math.inf, 0.0, 1.0),  # (m, s, x)
                 Probe(tuple(torch.tensor(v) for v in (100.0, 1.0, 101.0)), "m = 100, s = 1, x = 101 in float32",
                       _overflow_hint)]


def check_online_update(function: Any) -> None:
    """Exercise 2: ``online_update(m, s, x) -> (m_new, s_new)``, one step of the online softmax.

    m is the running maximum, s the running sum of exp(score - m); a new score x arrives. Tried
    on a larger score (m=1, s=1, x=3), a smaller one, and the first score (m=-inf, s=0), then on the
    float32 probe m=100, s=1, x=101, where exp of a raw score overflows. Names: the old sum not
    rescaled, rescaled the wrong way, exp(x) without the maximum, exp(x - m) with the old maximum,
    x taken as the new maximum, (s_new, m_new) returned in the wrong order, and exp(m), exp(x)
    taken before dividing by exp(m_new) (inf / inf on the probe).
    """
    learner = None if function is None or function is Ellipsis else (
        function if not callable(function) else (lambda m, s, x: _as_tensors(function(m, s, x))))
    mistakes = [
        Mistake("When a larger score arrives (m = 1, s = 1, x = 3), your s_new adds exp(x - m_new) to s as it "
                "was: but s was summed as exp(score - 1), and the new terms are exp(score - 3). Multiply the old "
                "s by exp(m - m_new) first.", answer=_no_rescale),
        Mistake("Your rescaling points the wrong way: the old terms exp(score - m) must shrink to exp(score - "
                "m_new), so multiply s by exp(m - m_new), which is at most 1, not exp(m_new - m).",
                answer=_rescale_inverted),
        Mistake("Your sum adds exp(x) itself: the running sum keeps exp(score - m), shifted by the running "
                "maximum, so that no exp overflows. Subtract m_new, and rescale the old s by exp(m - m_new).",
                answer=_no_max),
        Mistake("Your new term is exp(x - m), shifted by the old maximum: every term of the running sum must be "
                "shifted by the same, new maximum, so add exp(x - m_new).", answer=_new_term_old_max),
        Mistake("Your m_new is x itself: when the new score is smaller than the running maximum (m = 3, x = 2) the "
                "maximum stays m. Take m_new = torch.maximum(m, x).", answer=_max_is_x),
        Mistake("You return (s_new, m_new): return them in the order (m_new, s_new), the maximum first.",
                answer=_swapped_return),
    ]
    check_function("Exercise 2", learner, UPDATE_INPUTS, _update, mistakes,
                   correct="max first, then rescale what was summed under the old maximum by exp(m - m_new).")


# --- Exercise 3: the key/value cache's mask --------------------------------------------------------


def check_cache_keys_seen(answer: Any) -> None:
    """Exercise 3 (predict, then run): 5 cached tokens, 3 new queries; keys the first new query sees.

    It is token 5 (counting from 0), so it sees keys 0..5: 6. Names: the top-left diagonal (1),
    no mask at all (8), the cache without the token itself (5). A 0-d tensor such as
    ``causal_mask(3, 8, align="bottom_right")[0].sum()`` is read as its number.
    """
    if (hint := number_in_string(answer)) is not None:
        report("Exercise 3", "not yet", hint)
        return
    answer = read_value(answer, 6)
    mistakes = [
        Mistake(f"{answer} is what the top-left diagonal gives: it treats the first new query as token 0. "
                "It is token 5, after the 5 cached ones: the diagonal sits bottom-right.", answer=1),
        Mistake(f"{answer} keys are all of them: the first new query would see the two new tokens after it, "
                "its future.", answer=8),
        Mistake(f"{answer} keys are the cache alone: a query also sees its own key (the diagonal is allowed).",
                answer=5),
    ]
    check_value("Exercise 3", answer, 6, mistakes,
                correct="causal_mask(3, 8, align='bottom_right')[0] has 6 Trues: the 5 cached keys and its own.")


# --- Exercise 4: key/value heads for groups of query heads -----------------------------------------


def _expand_kv(kv: torch.Tensor, num_query_heads: int) -> torch.Tensor:
    return kv.repeat_interleave(num_query_heads // kv.shape[1], dim=1)  # (B, Hkv, T, Dh) -> (B, Hq, T, Dh)


def _tiled(kv: torch.Tensor, num_query_heads: int) -> torch.Tensor:
    return kv.repeat(1, num_query_heads // kv.shape[1], 1, 1)


def _kv_inputs() -> list[tuple]:
    gen = torch.Generator().manual_seed(8)
    return [(torch.randn(1, 2, 3, 4, generator=gen), 6), (torch.randn(2, 3, 2, 2, generator=gen), 6),
            (torch.randn(1, 1, 3, 4, generator=gen), 4)]


def check_expand_kv(function: Any) -> None:
    """Exercise 4: ``expand_kv(kv, num_query_heads)``, (B, Hkv, T, Dh) -> (B, Hq, T, Dh), torch's grouping.

    Query head h uses key/value head h // (Hq / Hkv): heads 0, 1, 2 share key/value head 0 when
    Hq = 6 and Hkv = 2. Names: ``repeat`` (tiles, 0, 1, 0, 1, ...).
    """
    mistakes = [
        Mistake("Your heads come out tiled, key/value head order 0, 1, 0, 1, 0, 1 (what .repeat does): then query "
                "head 1 reads key/value head 1, but in torch's enable_gqa (and Ainslie et al.'s groups) query heads "
                "0, 1, 2 share key/value head 0. Use repeat_interleave(Hq // Hkv, dim=1).", answer=_tiled),
    ]
    check_function("Exercise 4", function, _kv_inputs(), _expand_kv, mistakes,
                   correct="repeat_interleave: consecutive query heads form a group that shares one key/value head.")
