"""Exercises of notebook 07 (positional encodings). Exercises 2 and 3 ask for what attnlib does not provide (the
matrix that moves a sinusoidal encoding, RoPE with any frequencies), so calling attnlib does not solve them."""

from __future__ import annotations

import math
import re
from typing import Any

import torch

from . import Exercise, Mistake, Probe, read_value, variant

__all__ = ["check_decode_bugs", "check_permuted_rows", "check_rope_rotate_half", "check_shift_matrix"]


def _as_rows(answer: Any) -> Any:
    """A list of ints from a sequence, tensor or array of whole numbers (-1 is row 2); anything else unchanged."""
    answer = list(answer) if isinstance(answer, range) else answer
    rows = read_value(answer, [0]) if not isinstance(answer, str) else answer
    whole = isinstance(rows, list) and all(isinstance(r, (int, float)) and not isinstance(r, bool)
                                           and float(r).is_integer() for r in rows)
    return [int(r) + 3 if -3 <= r < 0 else int(r) for r in rows] if whole else answer


def _is_rows(got: Any) -> bool:
    return isinstance(got, list) and all(isinstance(r, int) for r in got)


check_permuted_rows = Exercise(
    "Exercise 1", expected=[2, 1, 0], read=_as_rows,
    diagnose=lambda *_: "Give three row indices, one per word of \"man bites dog\", as a list such as [0, 1, 2].",
    correct="Each word keeps its output wherever it stands: self-attention without positions is "
            "permutation-equivariant.", mistakes=[
        Mistake("[0, 1, 2] keeps each position's output, as if attention saw positions: follow the words.", [0, 1, 2]),
        Mistake("You expect new vectors, but attention sees the same words in another order: every output is one of "
                "the rows above.", when=lambda got: isinstance(got, str), example="new"),
        Mistake("{got} is a permutation, but not the words': row t of the new output is the old output of the word "
                "now at t.", when=lambda got: _is_rows(got) and sorted(got) == [0, 1, 2], example=[1, 0, 2]),
    ])


def shift_matrix(k: int, E: int, base: float = 10000.0, *, feature: bool = False, sign: float = 1.0,
                 cos_first: bool = False, minus: float = -1.0) -> torch.Tensor:
    """(E, E): M_k with PE(t + k) = M_k PE(t), a 2 x 2 rotation per pair (2i, 2i + 1); each keyword a mistake."""
    M = torch.zeros(E, E, dtype=torch.float64)
    for i in range(E // 2):
        omega = base ** (-2.0 * (2 * i if feature else i) / E)
        c, s = math.cos(k * omega), sign * math.sin(k * omega)
        a, b = 2 * i, 2 * i + 1
        M[a, a], M[a, b], M[b, a], M[b, b] = (s, c, c, -s) if cos_first else (c, s, minus * s, c)  # sin(x + y) = ...
    return M


check_shift_matrix = Exercise(
    "Exercise 2", reference=shift_matrix,
    probes=[*(Probe((k, E), f"k = {k}, E = {E}") for k, E in ((5, 32), (1, 6), (3, 4), (12, 8))),
            Probe((2, 10, 500.0), "k = 2, E = 10, base = 500")],
    correct="One 2 x 2 rotation by k·ω_i per pair, the same matrix for every t: a fixed offset is a linear map.",
    mistakes=[
        Mistake("Your blocks turn the wrong way, k positions back: expand sin(ω(t + k)) and cos(ω(t + k)) with the "
                "angle-addition formulas.", variant(shift_matrix, sign=-1.0)),
        Mistake("Your frequency of pair i uses the feature index 2i: ω_i = 10000^(-2i/E), i the pair index.",
                variant(shift_matrix, feature=True)),
        Mistake("Your blocks read cos first: the table's pair is sine first.", variant(shift_matrix, cos_first=True)),
        Mistake("Your blocks write the new pair cos first: like the old pair, it is (sin, cos), sine first.",
                lambda k, E, *base: shift_matrix(k, E, *base)[torch.arange(E).view(-1, 2).flip(-1).flatten()]),
        Mistake("Your blocks are not rotations, their off-diagonal entries have the same sign: one sine takes a minus.",
                variant(shift_matrix, minus=1.0)),
    ])


def rope_rotate_half(x: torch.Tensor, positions: torch.Tensor, theta: torch.Tensor, *, pairing: str = "half",
                     sign: float = 1.0, flip: float = 1.0) -> torch.Tensor:
    """x (..., T, D), positions (T,), theta (D/2,) -> (..., T, D): the reference; each keyword is a mistake."""
    angle = positions.double()[:, None] * theta.double()  # (T, 1) * (D/2,) -> (T, D/2)
    cos, sin, D, xd = angle.cos(), angle.sin(), x.shape[-1], x.double()
    a, b = (xd[..., : D // 2], xd[..., D // 2:]) if pairing == "half" else (xd[..., 0::2], xd[..., 1::2])
    first, second = a * cos - sign * b * sin, flip * sign * a * sin + b * cos  # flip=-1: one sign wrong
    return torch.cat([first, second], -1) if pairing == "half" else torch.stack([first, second], -1).flatten(-2)


def _rope_probes() -> list[Probe]:  # theta in x's dtype, float32 but for the last
    g = torch.Generator().manual_seed(7)
    return [Probe((torch.randn(5, 8, generator=g), torch.arange(3, 8), 10000.0 ** (-2 * torch.arange(4.0) / 8)),
                  "x (5, 8) at positions 3..7, base 10000"),
            Probe((torch.randn(2, 3, 4, 6, generator=g), torch.arange(4), 100.0 ** (-2 * torch.arange(3.0) / 6)),
                  "x (B, H, T, D) = (2, 3, 4, 6), base 100"),
            Probe((torch.randn(3, 2, generator=g), torch.tensor([0, 5, 2]), torch.tensor([0.5])),
                  "x (3, 2) at positions [0, 5, 2], theta [0.5]"),
            Probe((torch.randn(1, 6, 4, generator=g), torch.arange(10, 16), torch.tensor([0.7, 0.05])),
                  "x (1, 6, 4) at positions 10..15, theta [0.7, 0.05] (of no single base)"),
            Probe((torch.randn(2, 7, 10, generator=g, dtype=torch.float64), torch.arange(2, 9),
                   torch.linspace(1.0, 0.01, 5, dtype=torch.float64)), "x (2, 7, 10) in float64, theta in float64")]


check_rope_rotate_half = Exercise(
    "Exercise 3", reference=rope_rotate_half, probes=_rope_probes,
    correct="Feature i turns with feature i + D/2, by positions[t] · theta[i]: Hugging Face's Llama rotate_half, "
            "for any frequencies.", mistakes=[
        Mistake("You paired (2i, 2i + 1), the interleaved pairing: rotate-half pairs feature i with i + D/2.",
                variant(rope_rotate_half, pairing="interleaved")),
        Mistake("Your rotation turns the wrong way, by minus the angle: check the signs of your two sin terms "
                "against a rotation by +angle.", variant(rope_rotate_half, sign=-1.0)),
        Mistake("Your function ignores theta and turns pair i by 10000^(-2i/D), as attnlib.apply_rope does: use the "
                "frequencies given.",
                lambda x, p, t: rope_rotate_half(x, p, 1e4 ** (-torch.arange(0, x.shape[-1], 2) / x.shape[-1]))),
        *[Mistake("One of your sin terms has the wrong sign, so the pair's length changes with the angle: check both "
                  "halves against the 2 x 2 rotation.", variant(rope_rotate_half, sign=sign, flip=-1.0))
          for sign in (1.0, -1.0)],
    ])


def _as_letters(answer: Any) -> frozenset | None:
    """Line letters of a set, list, tuple or string ({"A", "C"}, "AC", "a, c", "A and C", ignoring "and"), or None."""
    if isinstance(answer, str):
        words = re.findall(r"[A-Za-z]+", answer)
        letters = {c for w in words if len(w) == 1 or (w.isupper() and set(w) <= set("ABCD")) for c in w.upper()}
        return frozenset(letters) or None
    if isinstance(answer, (set, frozenset, list, tuple)) and answer and all(isinstance(c, str) for c in answer):
        parts = [_as_letters(c) for c in answer]
        return None if None in parts else frozenset().union(*parts)
    return None


check_decode_bugs = Exercise(
    "Exercise 4", expected=frozenset({"A", "C"}), read=_as_letters,
    unreadable="Give the wrong lines as a set of letters, such as {'A', 'B'}; got {got}.",
    correct="The query turns at its own position t (A), and the values are never rotated (C).", mistakes=[
        Mistake(lambda got: f"The lines are A, B, C and D; {', '.join(sorted(got - set('ABCD')))} is not one of them.",
                when=lambda got: bool(got - set("ABCD")), example={"A", "E"}),
        Mistake("Line B is right: the new key of token t turns once, by t, and goes into the cache as it is.",
                when=lambda got: "B" in got, example={"A", "B", "C"}),
        Mistake("Line D is right: the cached keys were rotated at their own positions; rotating them again turns "
                "them twice.", when=lambda got: "D" in got, example={"A", "C", "D"}),
        Mistake("A wrong line is still unmarked: check at which position each apply_rope call turns its row.",
                when=lambda got: "A" not in got, example={"C"}),
        Mistake("A wrong line is still unmarked: ask which of the query, the key and the value RoPE turns at all.",
                when=lambda got: "C" not in got, example={"A"}),
    ])
