# ruff: noqa: E501  (the messages are pinned whole, one line each)
"""sinusoidal_positions and apply_rope: against their formulas written out element by element.

The expected values here never come from attnlib: they are the papers' formulas in plain Python
(math.sin, math.cos, loops over positions and features), Hugging Face's own Llama rotary embedding
when transformers is installed, or properties a wrong implementation breaks (the score depends only
on the distance; the two pairings differ by a permutation; a rotation keeps lengths).
"""

from __future__ import annotations

import math

import pytest
import torch

import attnlib as A
from attnlib import apply_rope, sinusoidal_positions

# --- the formulas, element by element -----------------------------------------------------------


def sinusoid_loop(T: int, E: int, base: float = 10000.0) -> list[list[float]]:
    """Vaswani et al. 2017, sec. 3.5: PE(t, 2i) = sin(t / base^(2i/E)), PE(t, 2i+1) = cos(t / base^(2i/E))."""
    table = [[0.0] * E for _ in range(T)]
    for t in range(T):
        for i in range(E // 2):
            angle = t / base ** (2 * i / E)
            table[t][2 * i] = math.sin(angle)
            table[t][2 * i + 1] = math.cos(angle)
    return table


def rope_loop(x: torch.Tensor, positions: list[float], base: float = 10000.0, interleaved: bool = False) -> torch.Tensor:
    """RoPE on a (..., T, D) tensor, one pair at a time: pair i turns by positions[t] * base^(-2i/D).

    interleaved=True pairs features (2i, 2i+1) (Su et al. 2021, eq. 15); False pairs (i, i + D/2)
    (Hugging Face's Llama rotate_half).
    """
    rows = x.detach().double().reshape(-1, *x.shape[-2:]).tolist()  # (N, T, D) as lists
    D = x.shape[-1]
    out = []
    for row in rows:
        rotated = []
        for t, features in enumerate(row):
            new = list(features)
            for i in range(D // 2):
                a, b = (2 * i, 2 * i + 1) if interleaved else (i, i + D // 2)
                angle = positions[t] * base ** (-2 * i / D)
                new[a] = features[a] * math.cos(angle) - features[b] * math.sin(angle)
                new[b] = features[a] * math.sin(angle) + features[b] * math.cos(angle)
            rotated.append(new)
        out.append(rotated)
    return torch.tensor(out, dtype=torch.float64).reshape(x.shape)


def interleave_permutation(D: int) -> torch.Tensor:
    """The rotate-half layout's features in interleaved order: [0, D/2, 1, D/2 + 1, ...]."""
    return torch.tensor([j for i in range(D // 2) for j in (i, i + D // 2)])


def scores(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    return q @ k.transpose(-2, -1)  # (..., Tq, D) @ (..., D, Tk) -> (..., Tq, Tk)


# --- sinusoidal_positions -----------------------------------------------------------------------


@pytest.mark.parametrize(("T", "E", "base"), [(7, 6, 10000.0), (50, 16, 10000.0), (5, 4, 100.0), (3, 2, 10000.0)])
def test_sinusoidal_equals_the_formula_element_by_element(T, E, base):
    expected = torch.tensor(sinusoid_loop(T, E, base), dtype=torch.float64)
    table = sinusoidal_positions(T, E, base, dtype=torch.float64)
    assert table.shape == (T, E) and table.dtype == torch.float64
    torch.testing.assert_close(table, expected, atol=1e-12, rtol=0)
    table32 = sinusoidal_positions(T, E, base)
    assert table32.dtype == torch.float32
    torch.testing.assert_close(table32, expected.float(), atol=0, rtol=0)  # the formula's value rounded once


def test_sinusoidal_known_values_sin_at_even_cos_at_odd():
    pe = sinusoidal_positions(3, 4, dtype=torch.float64)
    assert pe[0].tolist() == [0.0, 1.0, 0.0, 1.0]  # position 0: sin 0 = 0, cos 0 = 1
    assert pe[1, 0].item() == pytest.approx(0.8414709848078965)  # sin(1): frequency 1 in pair 0
    assert pe[1, 1].item() == pytest.approx(0.5403023058681398)  # cos(1)
    assert pe[2, 2].item() == pytest.approx(math.sin(2 / 100.0))  # pair 1 of E = 4: 10000^(2/4) = 100
    assert pe[2, 3].item() == pytest.approx(math.cos(2 / 100.0))


def test_sinusoidal_dtype_device_and_empty():
    assert sinusoidal_positions(0, 4).shape == (0, 4)
    half = sinusoidal_positions(20, 8, dtype=torch.float16)
    assert half.dtype == torch.float16
    assert torch.equal(half, torch.tensor(sinusoid_loop(20, 8), dtype=torch.float64).half())
    assert sinusoidal_positions(2, 4, device="meta").device.type == "meta"


def test_sinusoidal_shift_is_one_rotation_per_pair_whatever_the_position():
    """PE(t + k) = M_k PE(t) with M_k block-diagonal: one 2x2 rotation per pair, the same for every t."""
    T, E, k = 40, 8, 3
    pe = sinusoidal_positions(T + k, E, dtype=torch.float64)
    frequency = [10000.0 ** (-2 * i / E) for i in range(E // 2)]
    M = torch.zeros(E, E, dtype=torch.float64)
    for i, w in enumerate(frequency):
        c, s = math.cos(k * w), math.sin(k * w)
        M[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = torch.tensor([[c, s], [-s, c]], dtype=torch.float64)  # acts on (sin, cos)
    torch.testing.assert_close(pe[:T] @ M.T, pe[k:], atol=1e-12, rtol=0)


def test_sinusoidal_dot_product_depends_only_on_the_distance():
    T, E = 30, 16
    pe = sinusoidal_positions(T, E, dtype=torch.float64)
    gram = pe @ pe.T  # (T, T)
    for t in range(T):
        for u in range(T):
            expected = sum(math.cos((u - t) * 10000.0 ** (-2 * i / E)) for i in range(E // 2))
            assert gram[t, u].item() == pytest.approx(expected, abs=1e-12)


# --- apply_rope against the formula -------------------------------------------------------------


@pytest.mark.parametrize("interleaved", [False, True])
@pytest.mark.parametrize(("shape", "positions"), [
    ((5, 4), None),
    ((2, 3, 6, 8), None),
    ((2, 4, 6), [3, 4, 5, 6]),  # a key/value cache: the new tokens sit at 3..6
    ((3, 6), [0.5, 2.0, 7.25]),  # float positions
    ((1, 10, 4), [100, 0, 4096, 1, 7, 7, 2, 9, 3, 5]),  # any order, large positions
])
def test_rope_equals_the_formula_pair_by_pair(shape, positions, interleaved):
    torch.manual_seed(0)
    x = torch.randn(shape, dtype=torch.float64)
    T = shape[-2]
    pos = list(range(T)) if positions is None else positions
    expected = rope_loop(x, pos, interleaved=interleaved)
    arg = None if positions is None else torch.tensor(positions)
    got = apply_rope(x, arg, interleaved=interleaved)
    assert got.shape == x.shape and got.dtype == torch.float64
    torch.testing.assert_close(got, expected, atol=1e-10, rtol=1e-10)
    got32 = apply_rope(x.float(), arg, interleaved=interleaved)
    assert got32.dtype == torch.float32
    torch.testing.assert_close(got32, expected.float(), atol=2e-4 if positions and max(positions) > 1000 else 1e-5, rtol=1e-5)


@pytest.mark.parametrize("interleaved", [False, True])
def test_rope_other_base(interleaved):
    x = torch.randn(2, 5, 6, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    torch.testing.assert_close(apply_rope(x, base=500000.0, interleaved=interleaved),
                               rope_loop(x, list(range(5)), base=500000.0, interleaved=interleaved))
    assert not torch.allclose(apply_rope(x, base=500000.0, interleaved=interleaved), apply_rope(x, interleaved=interleaved))


def test_rope_rotates_a_unit_pair_by_the_position_in_radians():
    """D = 2: one pair, frequency 1, so position t turns (1, 0) to (cos t, sin t) in both pairings."""
    x = torch.tensor([[1.0, 0.0]] * 4, dtype=torch.float64)  # (T, D) = (4, 2)
    for interleaved in (False, True):
        got = apply_rope(x, interleaved=interleaved)
        expected = torch.tensor([[math.cos(t), math.sin(t)] for t in range(4)], dtype=torch.float64)
        torch.testing.assert_close(got, expected)


def test_rope_default_positions_int_and_float_positions_agree():
    x = torch.randn(2, 7, 8, generator=torch.Generator().manual_seed(2))
    ref = apply_rope(x)
    assert torch.equal(ref, apply_rope(x, torch.arange(7)))
    assert torch.equal(ref, apply_rope(x, torch.arange(7, dtype=torch.int32)))
    torch.testing.assert_close(ref, apply_rope(x, torch.arange(7.0, dtype=torch.float64)), atol=0, rtol=0)
    torch.testing.assert_close(apply_rope(x[:, :1]), x[:, :1], atol=0, rtol=0)  # position 0: the identity


def test_rope_keeps_the_length_of_every_row():
    x = torch.randn(3, 2, 9, 16, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    for interleaved in (False, True):
        torch.testing.assert_close(apply_rope(x, interleaved=interleaved).norm(dim=-1), x.norm(dim=-1))


def test_rope_never_modifies_its_input_and_returns_a_new_tensor():
    x = torch.randn(2, 5, 8, generator=torch.Generator().manual_seed(4))
    positions = torch.arange(5) + 3
    x_before, positions_before = x.clone(), positions.clone()
    for interleaved in (False, True):
        out = apply_rope(x, positions, interleaved=interleaved)
        assert torch.equal(x, x_before) and torch.equal(positions, positions_before)
        assert out.data_ptr() != x.data_ptr()
        out.zero_()
        assert torch.equal(x, x_before)


def test_rope_empty_sequence_and_meta():
    assert apply_rope(torch.randn(2, 0, 4)).shape == (2, 0, 4)
    assert apply_rope(torch.randn(2, 3, 0)).shape == (2, 3, 0)
    out = apply_rope(torch.empty(2, 3, 4, device="meta"))
    assert out.shape == (2, 3, 4) and out.device.type == "meta"


# --- the property RoPE exists for: scores depend only on the distance ---------------------------


@pytest.mark.parametrize("interleaved", [False, True])
@pytest.mark.parametrize(("dtype", "tol"), [(torch.float64, 1e-10), (torch.float32, 2e-4)])
def test_shifting_every_position_by_one_offset_leaves_every_score_unchanged(interleaved, dtype, tol):
    torch.manual_seed(5)
    q, k = torch.randn(2, 3, 6, 16, dtype=dtype), torch.randn(2, 3, 6, 16, dtype=dtype)  # (B, H, T, Dh)
    pos = torch.tensor([0, 1, 2, 5, 9, 10])
    ref = scores(apply_rope(q, pos, interleaved=interleaved), apply_rope(k, pos, interleaved=interleaved))
    for offset in (1, 7, 100, 1000):
        shifted = scores(apply_rope(q, pos + offset, interleaved=interleaved),
                         apply_rope(k, pos + offset, interleaved=interleaved))
        torch.testing.assert_close(shifted, ref, atol=tol, rtol=tol)
    # and the positions do matter: rotating only the keys changes the scores
    assert not torch.allclose(scores(q, apply_rope(k, pos + 1, interleaved=interleaved)), ref, atol=1e-2)


def test_score_is_a_function_of_the_distance_only():
    """q at m and k at n: the score equals q at m - n and k at 0, for every pair (m, n)."""
    q, k = torch.randn(2, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(6))
    for m in range(6):
        for n in range(6):
            score = apply_rope(q[None], torch.tensor([m])) @ apply_rope(k[None], torch.tensor([n])).T
            relative = apply_rope(q[None], torch.tensor([m - n])) @ k[None].T
            torch.testing.assert_close(score, relative)


def test_values_are_not_rotated_so_shifting_the_positions_leaves_the_output_unchanged():
    """Attention with rotated queries and keys and plain values gives the same output after a shift;
    rotating the values as well makes the output depend on the absolute positions."""
    torch.manual_seed(7)
    q, k, v = (torch.randn(1, 2, 5, 8, dtype=torch.float64) for _ in range(3))
    pos = torch.arange(5)

    def attend(offset, rotate_values):
        qr, kr = apply_rope(q, pos + offset), apply_rope(k, pos + offset)
        vr = apply_rope(v, pos + offset) if rotate_values else v
        return A.scaled_dot_product_attention(qr, kr, vr, is_causal=True)[0]

    torch.testing.assert_close(attend(10, False), attend(0, False))
    assert not torch.allclose(attend(10, True), attend(0, True), atol=1e-3)


# --- the two pairings ---------------------------------------------------------------------------


@pytest.mark.parametrize("D", [2, 4, 8, 64])
def test_the_two_pairings_are_the_same_up_to_a_permutation_of_features(D):
    x = torch.randn(2, 7, D, dtype=torch.float64, generator=torch.Generator().manual_seed(D))
    perm = interleave_permutation(D)
    half = apply_rope(x)
    interleaved = apply_rope(x[..., perm], interleaved=True)
    torch.testing.assert_close(interleaved, half[..., perm])  # same rotation, features listed in another order
    torch.testing.assert_close(interleaved[..., torch.argsort(perm)], half)  # and back
    if D > 2:  # the pairings differ on the same features: mixing them up is a real mistake
        assert not torch.allclose(apply_rope(x, interleaved=True), half, atol=1e-3)


def test_scores_agree_when_queries_and_keys_are_permuted_the_same_way():
    torch.manual_seed(8)
    q, k = torch.randn(2, 6, 16, dtype=torch.float64), torch.randn(2, 6, 16, dtype=torch.float64)
    perm = interleave_permutation(16)
    torch.testing.assert_close(scores(apply_rope(q), apply_rope(k)),
                               scores(apply_rope(q[..., perm], interleaved=True), apply_rope(k[..., perm], interleaved=True)))


# --- float16, bfloat16 and gradients ------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("interleaved", [False, True])
def test_half_precision_computes_the_angles_in_float32(dtype, interleaved):
    x = torch.randn(2, 6, 32, generator=torch.Generator().manual_seed(9))
    positions = torch.tensor([0, 1, 2, 1000, 2000, 3000])  # angles a 16-bit float cannot hold to 1 radian
    low = x.to(dtype)
    got = apply_rope(low, positions, interleaved=interleaved)
    assert got.dtype == dtype and got.shape == x.shape
    expected = rope_loop(low, positions.tolist(), interleaved=interleaved)  # the exact rotation of the rounded input
    eps = torch.finfo(dtype).eps
    torch.testing.assert_close(got.double(), expected, atol=4 * eps * x.abs().max().item(), rtol=0)


@pytest.mark.parametrize("interleaved", [False, True])
def test_rope_gradcheck_float64(interleaved):
    x = torch.randn(2, 5, 6, dtype=torch.float64, requires_grad=True, generator=torch.Generator().manual_seed(10))
    positions = torch.tensor([0.0, 1.5, 2.0, 7.0, 3.25], dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda a, p: apply_rope(a, p, interleaved=interleaved), (x, positions))
    assert torch.autograd.gradgradcheck(lambda a: apply_rope(a, positions.detach(), interleaved=interleaved), (x,))


def test_the_gradient_is_the_inverse_rotation():
    """RoPE is linear and orthogonal in x, so the gradient of <g, rope(x)> is rope^-1(g) = rope(g, -positions)."""
    x = torch.randn(3, 4, 8, dtype=torch.float64, requires_grad=True, generator=torch.Generator().manual_seed(11))
    g = torch.randn(3, 4, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(12))
    positions = torch.tensor([2, 5, 9, 11])
    (apply_rope(x, positions) * g).sum().backward()
    torch.testing.assert_close(x.grad, apply_rope(g, -positions))


# --- equality with Hugging Face's Llama ---------------------------------------------------------


@pytest.mark.parametrize("theta", [10000.0, 100000.0])
def test_rope_equals_transformers_llama_rotary_embedding(theta):
    transformers = pytest.importorskip(
        "transformers", reason="transformers is not installed: the comparison with Hugging Face's Llama RoPE is skipped")
    from transformers.models.llama import modeling_llama

    B, H, T, Dh = 2, 3, 11, 16
    fields = {"hidden_size": H * Dh, "num_attention_heads": H, "num_key_value_heads": H, "head_dim": Dh,
              "max_position_embeddings": 64}
    # transformers >= 5 groups the RoPE settings in rope_parameters, older releases read rope_theta (and may
    # keep an unknown keyword silently): use the spelling whose frequencies are theta's, 1 / theta^(2i/Dh)
    frequencies = 1.0 / theta ** (torch.arange(0, Dh, 2, dtype=torch.float64) / Dh)
    spellings = [{"rope_parameters": {"rope_type": "default", "rope_theta": theta}}, {"rope_theta": theta}]
    for spelling in spellings:
        try:
            rotary = modeling_llama.LlamaRotaryEmbedding(transformers.LlamaConfig(**fields, **spelling))
        except (TypeError, ValueError, KeyError):
            continue
        if torch.allclose(rotary.inv_freq.double(), frequencies, rtol=1e-6, atol=0):
            break
    else:
        pytest.fail(f"no LlamaConfig spelling gave the RoPE base {theta} in transformers {transformers.__version__}")
    torch.manual_seed(13)
    q, k = torch.randn(B, H, T, Dh), torch.randn(B, H, T, Dh)
    position_ids = (torch.arange(T) + 5)[None].expand(B, T)  # (B, T): decoding after 5 cached tokens
    cos, sin = rotary(q, position_ids)  # (B, T, Dh) each
    hf_q, hf_k = modeling_llama.apply_rotary_pos_emb(q, k, cos, sin)
    ours_q, ours_k = apply_rope(q, position_ids[0], base=theta), apply_rope(k, position_ids[0], base=theta)
    torch.testing.assert_close(ours_q, hf_q)
    torch.testing.assert_close(ours_k, hf_k)
    assert not torch.allclose(apply_rope(q, position_ids[0], base=theta, interleaved=True), hf_q, atol=1e-3)


# --- errors, named and pinned -------------------------------------------------------------------


def error_cases():
    x = torch.randn(2, 5, 8)
    return {
        "sin_num_positions": lambda: sinusoidal_positions(-1, 4),
        "sin_num_positions_float": lambda: sinusoidal_positions(3.0, 4),
        "sin_embed_dim_odd": lambda: sinusoidal_positions(3, 5),
        "sin_embed_dim_zero": lambda: sinusoidal_positions(3, 0),
        "sin_base": lambda: sinusoidal_positions(3, 4, base=0.0),
        "sin_base_bool": lambda: sinusoidal_positions(3, 4, base=True),
        "sin_dtype": lambda: sinusoidal_positions(3, 4, dtype=torch.int64),
        "rope_tensor": lambda: apply_rope([[1.0, 2.0]]),
        "rope_floating": lambda: apply_rope(x.long()),
        "rope_ndim": lambda: apply_rope(x[0, 0]),
        "rope_odd": lambda: apply_rope(x[..., :7]),
        "rope_positions_len": lambda: apply_rope(x, torch.arange(4)),
        "rope_positions_2d": lambda: apply_rope(x, torch.arange(5)[None]),
        "rope_positions_tensor": lambda: apply_rope(x, [0, 1, 2, 3, 4]),
        "rope_positions_bool": lambda: apply_rope(x, torch.ones(5, dtype=torch.bool)),
        "rope_positions_device": lambda: apply_rope(x, torch.arange(5, device="meta")),
        "rope_base": lambda: apply_rope(x, base=float("inf")),
        "rope_interleaved": lambda: apply_rope(x, interleaved=1),
    }


MESSAGES = [
    ("sin_num_positions", ValueError, "num_positions must be a non-negative int, got -1"),
    ("sin_num_positions_float", ValueError, "num_positions must be a non-negative int, got 3.0"),
    ("sin_embed_dim_odd", ValueError, "embed_dim must be a positive even int (each sine has its cosine beside it), got 5"),
    ("sin_embed_dim_zero", ValueError, "embed_dim must be a positive even int (each sine has its cosine beside it), got 0"),
    ("sin_base", ValueError, "base must be a finite float > 0 (the papers use 10000.0), got 0.0"),
    ("sin_base_bool", ValueError, "base must be a finite float > 0 (the papers use 10000.0), got True"),
    ("sin_dtype", TypeError, "dtype must be a floating-point torch.dtype, got torch.int64"),
    ("rope_tensor", TypeError, "x must be a torch.Tensor, got list"),
    (
        "rope_floating",
        TypeError,
        "x must be a floating-point tensor (float16, bfloat16, float32 or float64), got dtype torch.int64; convert it with x.float()",
    ),
    ("rope_ndim", ValueError, "x must have at least 2 dimensions (..., T, D), got shape (8,)"),
    ("rope_odd", ValueError, "x must have an even last dimension D (its features are rotated in pairs), got shape (2, 5, 7)"),
    ("rope_positions_len", ValueError, "positions must have shape (T,) = (5,), one position per row of x (2, 5, 8), got shape (4,)"),
    ("rope_positions_2d", ValueError, "positions must have shape (T,) = (5,), one position per row of x (2, 5, 8), got shape (1, 5)"),
    ("rope_positions_tensor", TypeError, "positions must be a torch.Tensor, got list"),
    ("rope_positions_bool", TypeError, "positions must be an integer or floating-point tensor (T,), got dtype torch.bool"),
    ("rope_positions_device", ValueError, "positions must be on x's device cpu, got meta"),
    ("rope_base", ValueError, "base must be a finite float > 0 (the papers use 10000.0), got inf"),
    ("rope_interleaved", TypeError, "interleaved must be a bool, got int"),
]


@pytest.mark.parametrize("case,error,message", MESSAGES, ids=[row[0] for row in MESSAGES])
def test_error_message_word_for_word(case, error, message):
    with pytest.raises(error) as info:
        error_cases()[case]()
    assert type(info.value) is error
    assert str(info.value) == message


def test_exported_from_the_package_top_level():
    assert "apply_rope" in A.__all__ and "sinusoidal_positions" in A.__all__
    assert A.apply_rope is apply_rope and A.sinusoidal_positions is sinusoidal_positions
