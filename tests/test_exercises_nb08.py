"""What is specific to notebook 08's exercises (tests/test_exercises_generic.py covers what every exercise does)."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from attnlib import causal_mask
from attnlib.exercises import nb08


def test_the_online_update_run_over_a_row_gives_softmax():
    row = torch.tensor([1.0, 3.0, 2.0, 5.0, 0.5], dtype=torch.float64)
    m, s = torch.tensor(-math.inf, dtype=torch.float64), torch.tensor(0.0, dtype=torch.float64)
    for x in row:
        m, s = nb08.online_update(m, s, x)
    torch.testing.assert_close(torch.exp(row - m) / s, torch.softmax(row, dim=0))


@pytest.mark.parametrize("block_size", [1, 3, 7, 64])
def test_the_blockwise_loop_is_torchs_attention(block_size):
    g = torch.Generator().manual_seed(0)
    q, k, v = torch.randn(2, 3, 9, 8, generator=g), torch.randn(2, 3, 20, 8, generator=g), torch.randn(2, 3, 20, 5,
                                                                                                         generator=g)
    torch.testing.assert_close(nb08.blockwise(q, k, v, block_size), F.scaled_dot_product_attention(q, k, v))


def test_the_guard_can_tell_the_whole_matrix_from_every_other_tensor():
    """The probes refuse a (Tq, Tk) result: Tq, Tk, Dh and Ev must then all differ, or a key transposed to
    (Dh, Tk) would be taken for the scores; a probe with one block (Tk <= block_size) is not guarded."""
    guarded = 0
    for probe in nb08.check_blockwise_attention.probe_list():
        q, k, v, block_size = probe.args
        whole = torch.zeros(*q.shape[:-1], k.shape[-2])  # (..., Tq, Tk)
        if type(q).forbid(whole):
            guarded += 1
            sizes = (q.shape[-2], k.shape[-2], q.shape[-1], v.shape[-1])
            assert len(set(sizes)) == 4, (probe.label, sizes)
            assert not any(type(q).forbid(t) for t in (q, k, v, k.mT, v.mT)), probe.label
        else:
            assert k.shape[-2] <= block_size, probe.label
    assert guarded >= 3


def test_the_untouched_stub_is_not_attempted_and_a_loop_that_builds_no_matrix_passes(capsys):
    def running_start(q, value):
        rows = q.shape[:-1]
        return q.new_full((*rows, 1), -math.inf), q.new_zeros(*rows, 1), q.new_zeros(*rows, value.shape[-1])

    def stub(query, key, value, block_size):  # the lines the stub gives; the learner's block is empty
        q = query / math.sqrt(query.shape[-1])
        m, s, acc = running_start(q, value)

    nb08.check_blockwise_attention(stub)
    assert capsys.readouterr().out.startswith("Exercise 3: not attempted yet")
    nb08.check_blockwise_attention(nb08.blockwise)
    assert capsys.readouterr().out.startswith("Exercise 3: correct.")


def test_the_mistakes_of_the_blockwise_loop_show_on_the_probes_the_issue_names():
    """A missing acc rescale shows where a block raises the maximum; a missing maximum only in float32."""
    probes = nb08.check_blockwise_attention.probe_list()
    rising, large = probes[0].args, probes[1].args
    assert not torch.allclose(nb08.blockwise(*rising, rescale=("s",)), nb08._reference(*rising))
    assert torch.allclose(nb08.blockwise(*rising, raw_exp=True), nb08._reference(*rising))  # float64: exact
    assert large[0].dtype == torch.float32 and not torch.isfinite(nb08.blockwise(*large, raw_exp=True)).all()


def test_the_cache_mask_is_probed_with_one_new_query_and_without_a_cache():
    probes = [p.args for p in nb08.check_cache_causal_mask.probe_list()]
    assert any(q_len == 1 for q_len, _ in probes) and any(q_len == kv_len for q_len, kv_len in probes)
    for q_len, kv_len in probes:
        assert torch.equal(nb08.cache_causal_mask(q_len, kv_len), causal_mask(q_len, kv_len, align="bottom_right"))


def test_grouped_attention_is_torchs_enable_gqa():
    g = torch.Generator().manual_seed(0)
    q = torch.randn(1, 6, 3, 4, generator=g)  # (B, Hq, Tq, Dh)
    k, v = torch.randn(1, 2, 5, 4, generator=g), torch.randn(1, 2, 5, 4, generator=g)  # (B, Hkv, Tk, Dh)
    torch.testing.assert_close(nb08.gqa(q, k, v), F.scaled_dot_product_attention(q, k, v, enable_gqa=True))


def test_the_copy_guard_refuses_copies_and_lets_broadcast_views_and_the_queries_pass():
    """Each guarded probe has Tq, Tk and Dh all different, so no tensor made from q looks like a copy of k."""
    guarded = 0
    for probe in nb08.check_grouped_attention.probe_list():
        q, k, v = probe.args
        forbid = type(q).forbid
        b, hq, tq, dh = q.shape
        hkv, tk = k.shape[1], k.shape[2]
        if hq == hkv:
            continue
        guarded += 1
        assert len({tq, tk, dh}) == 3, probe.label
        plain_k = k.as_subclass(torch.Tensor)
        assert forbid(plain_k.repeat_interleave(hq // hkv, dim=1))  # a stored copy
        assert forbid(plain_k.repeat_interleave(hq // hkv, dim=1).mT)
        view = plain_k.unsqueeze(2).expand(b, hkv, hq // hkv, tk, dh)  # broadcasting, no copy
        assert not forbid(view) and not forbid(view.mT)
        if hkv == 1:  # multi-query: k expanded to Hq heads is a view, not a copy
            assert not forbid(plain_k.expand(b, hq, tk, dh))
        assert not any(forbid(t) for t in (q, q.reshape(b, hkv, -1, tq, dh), torch.zeros(b, hq, tq, tk)))
    assert guarded >= 3 and any(p.args[1].shape[1] == 1 for p in nb08.check_grouped_attention.probe_list())
