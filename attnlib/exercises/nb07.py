"""Checkers for the exercises of notebook 07, positional encodings.

Four exercises, from a prediction to spotting the mistakes in a decoding step:

- :func:`check_permuted_rows`: which rows of the output for "dog bites man" make the output for
  "man bites dog" (self-attention without positions): [2, 1, 0], each word keeps its own output.
- :func:`check_sinusoidal`: ``sinusoidal(T, E)``, the (T, E) table of Vaswani et al. 2017, sec. 3.5.
- :func:`check_rope_rotate_half`: ``rope_rotate_half(x, positions)`` for x (T, D), the pairing of
  GPT-NeoX and Llama (feature i with feature i + D/2).
- :func:`check_decode_bugs`: which lines of a decoding step with a key/value cache are wrong.

Each prints one line (see :mod:`attnlib.exercises`) and names the mistakes this notebook is about:
outputs that stay with their position (as if attention saw order); sin and cos swapped; the exponent
2i/E taken with i the feature index instead of the pair index; all sines before all cosines; positions
counted from 1; the interleaved (paper) pairing where rotate-half is asked; a rotation the wrong way;
``arange(T)`` in place of the given positions; the exponent without its factor 2; a query rotated at
position 0 instead of its own; a rotated value. None of the checkers draws from torch's global random
generator, so a check cell does not change a later random draw of the notebook.
"""

from __future__ import annotations

import re
from typing import Any

import torch

from . import Mistake, check_function, check_value, read_value, report

__all__ = ["check_decode_bugs", "check_permuted_rows", "check_rope_rotate_half", "check_sinusoidal"]

BASE = 10000.0


def _generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


# ---------------------------------------------------------------------------------------------
# Exercise 1: predict the rows


def _as_rows(answer: Any) -> Any:
    """A list of ints from a list, tuple, tensor or array holding whole numbers; anything else unchanged."""
    if isinstance(answer, str):
        return answer
    rows = read_value(answer, [0])
    if isinstance(rows, list) and all(isinstance(r, (int, float)) and not isinstance(r, bool) and float(r).is_integer()
                                      for r in rows):
        return [int(r) for r in rows]
    return answer


def check_permuted_rows(answer: Any) -> None:
    """Exercise 1 (predict, then run): the output for "man bites dog" is rows [2, 1, 0] of the one for "dog bites man".

    Names: [0, 1, 2] (each position keeps its output, as if attention saw positions); an answer that
    says the outputs are new vectors (a string such as "none" or "new"); another permutation (each
    word keeps its own output, so the rows follow the words); a list of the wrong length.
    """
    rows = _as_rows(answer)
    mistakes = [
        Mistake("[0, 1, 2] says each position keeps its output, as if attention knew where a word sits. It "
                "does not: row t of the output depends only on the word at t and on the set of words, so "
                "each output follows its word. \"man\" moved from position 2 to position 0.", answer=[0, 1, 2]),
        Mistake(f"{answer!r}: you expect new vectors. But the score of two words depends only on their two "
                "vectors, and the softmax and the weighted sum run over the same set of words in another "
                "order, so every output is one of the first sentence's, moved with its word.",
                when=lambda a: isinstance(a, str)),
        Mistake(f"{rows} is a permutation, but not the one of the words: row t of the new output is the old "
                "output of the word now at position t. \"man\" (old row 2) is now first, \"bites\" stays in "
                "the middle, \"dog\" (old row 0) is last.",
                when=lambda a: isinstance(a, list) and sorted(a) == [0, 1, 2]),
        Mistake(f"{rows} has {len(rows) if isinstance(rows, list) else '?'} entries: give one row index per "
                "word of \"man bites dog\", three in all.", when=lambda a: isinstance(a, list) and len(a) != 3),
    ]
    check_value("Exercise 1", rows, [2, 1, 0], mistakes,
                correct="each word keeps its output wherever it stands: self-attention without positions is "
                        "permutation-equivariant.")


# ---------------------------------------------------------------------------------------------
# Exercise 2: the sinusoidal table


def _angles(T: int, E: int, exponent: torch.Tensor, start: int = 0) -> torch.Tensor:
    position = torch.arange(start, start + T, dtype=torch.float64)[:, None]  # (T, 1)
    return position / BASE**exponent  # (T, 1) / (n,) -> (T, n)


def _reference_sinusoidal(T: int, E: int) -> torch.Tensor:
    angle = _angles(T, E, 2 * torch.arange(E // 2, dtype=torch.float64) / E)  # (T, E/2)
    table = torch.zeros(T, E, dtype=torch.float64)
    table[:, 0::2], table[:, 1::2] = angle.sin(), angle.cos()
    return table


def _sin_cos_swapped(T: int, E: int) -> torch.Tensor:
    table = _reference_sinusoidal(T, E)
    return table[:, [j ^ 1 for j in range(E)]]  # cos at even features, sin at odd


def _feature_index(T: int, E: int) -> torch.Tensor:
    angle = _angles(T, E, 2 * torch.arange(E, dtype=torch.float64) / E)  # (T, E): i = the feature index j
    table = angle.sin()
    table[:, 1::2] = angle[:, 1::2].cos()
    return table


def _feature_index_no_two(T: int, E: int) -> torch.Tensor:
    angle = _angles(T, E, torch.arange(E, dtype=torch.float64) / E)  # base^(j/E): right for even j only
    table = angle.sin()
    table[:, 1::2] = angle[:, 1::2].cos()
    return table


def _colleagues(T: int, E: int) -> torch.Tensor:
    angle = _angles(T, E, 2 * torch.arange(E, dtype=torch.float64) / E)  # (T, E): the feature index j
    table = angle.cos()  # cos at even features
    table[:, 1::2] = angle[:, 1::2].sin()  # sin at odd ones
    return table


def _pair_index_no_two(T: int, E: int) -> torch.Tensor:
    angle = _angles(T, E, torch.arange(E // 2, dtype=torch.float64) / E)  # base^(i/E) with the pair index i
    table = torch.zeros(T, E, dtype=torch.float64)
    table[:, 0::2], table[:, 1::2] = angle.sin(), angle.cos()
    return table


def _floor_division(T: int, E: int) -> torch.Tensor:
    angle = _angles(T, E, (2 * torch.arange(E // 2) // E).double())  # 2i // E is 0 for every pair
    table = torch.zeros(T, E, dtype=torch.float64)
    table[:, 0::2], table[:, 1::2] = angle.sin(), angle.cos()
    return table


def _halves(T: int, E: int) -> torch.Tensor:
    angle = _angles(T, E, 2 * torch.arange(E // 2, dtype=torch.float64) / E)
    return torch.cat([angle.sin(), angle.cos()], dim=-1)  # all sines, then all cosines


def _from_one(T: int, E: int) -> torch.Tensor:
    return _reference_sinusoidal(T + 1, E)[1:]


def _times_instead_of_divided(T: int, E: int) -> torch.Tensor:
    angle = torch.arange(T, dtype=torch.float64)[:, None] * BASE ** (2 * torch.arange(E // 2, dtype=torch.float64) / E)
    table = torch.zeros(T, E, dtype=torch.float64)
    table[:, 0::2], table[:, 1::2] = angle.sin(), angle.cos()
    return table


SINUSOIDAL_INPUTS = [(6, 4), (10, 8), (3, 6)]


def check_sinusoidal(function: Any) -> None:
    """Exercise 2: ``sinusoidal(T, E)`` -> (T, E), PE[t, 2i] = sin(t / 10000^(2i/E)), PE[t, 2i+1] = cos(...).

    Run on (T, E) = (6, 4), (10, 8), (3, 6). Names: the colleague's function unchanged (both of the
    next two mistakes); sin and cos swapped; the exponent 2j/E with j the
    feature index instead of the pair index i = j // 2 (and j/E, right only at even features); all
    sines first, then all cosines (a layout some libraries use, not the paper's); the exponent i/E
    with the pair index (no 2); 2 * i // E (floor division: every exponent 0); positions counted
    from 1; t multiplied by 10000^(2i/E) instead of divided; the table transposed (E, T).
    """
    mistakes = [
        Mistake("this is what your colleague's function returns: both mistakes of your colleague remain. Features "
                "2i and 2i + 1 share one frequency, 1 / 10000^(2i/E) with i the pair index, and the even feature "
                "holds the sine, the odd one the cosine.", answer=_colleagues),
        Mistake("sin and cos are swapped: feature 2i (even) holds the sine, feature 2i + 1 (odd) the cosine, "
                "so row 0 is [0, 1, 0, 1, ...].", answer=_sin_cos_swapped),
        Mistake("your exponent uses the feature index: features 2i and 2i + 1 are one pair and share one "
                "frequency, 1 / 10000^(2i/E) with i the PAIR index (j // 2 for feature j), so they hold the sine "
                "and cosine of the same angle.", answer=_feature_index),
        Mistake("your exponent is j/E with j the feature index: right at the even features, but the odd feature "
                "2i + 1 must use the same frequency as its partner 2i, 10000^(2i/E).",
                answer=_feature_index_no_two),
        Mistake("your exponent is i/E with i the pair index: it is 2i/E, so the frequencies 1 / 10000^(2i/E) fall "
                "all the way to nearly 1/10000 at the last pair (with i/E they stop near 1/100).",
                answer=_pair_index_no_two),
        Mistake("your exponent is 0 for every pair: 2 * i // E is floor division, which rounds 2i/E down to 0. "
                "Use true division, 2 * i / E, so that each pair gets its own frequency.", answer=_floor_division),
        Mistake("you put all the sines first and all the cosines after them. Some libraries do (it is a "
                "permutation of the features), but the paper interleaves them: sin at 2i, cos at 2i + 1.",
                answer=_halves),
        Mistake("your first row is position 1: positions start at 0, and row 0 is [0, 1, 0, 1, ...] "
                "(sin 0, cos 0).", answer=_from_one),
        Mistake("you multiplied t by 10000^(2i/E): the angle is t DIVIDED by it, so the frequencies fall from 1 "
                "to nearly 1/10000 along the features (the wavelengths grow).", answer=_times_instead_of_divided),
        Mistake("your table is (E, T): one row per position, one column per feature, (T, E).",
                when=lambda g: isinstance(g, torch.Tensor) and g.dim() == 2 and g.shape == (4, 6)),
    ]
    check_function("Exercise 2", function, SINUSOIDAL_INPUTS, _reference_sinusoidal, mistakes,
                   correct="sin at the even features, cos at the odd ones, one frequency per pair.")


# ---------------------------------------------------------------------------------------------
# Exercise 3: rotate-half RoPE


def _rotate(x: torch.Tensor, angle: torch.Tensor, pairs: str = "half", sign: float = 1.0, swap: bool = False):
    D = x.shape[-1]
    a, b = (x[:, : D // 2], x[:, D // 2 :]) if pairs == "half" else (x[:, 0::2], x[:, 1::2])
    cos, sin = (angle.sin(), angle.cos()) if swap else (angle.cos(), angle.sin())
    first, second = a * cos - sign * b * sin, sign * a * sin + b * cos
    if pairs == "half":
        return torch.cat([first, second], dim=-1)
    return torch.stack([first, second], dim=-1).flatten(-2)


def _rope_angle(x: torch.Tensor, positions: torch.Tensor, two: float = 2.0) -> torch.Tensor:
    D = x.shape[-1]
    frequency = BASE ** (-two * torch.arange(D // 2, dtype=torch.float64) / D)  # (D/2,)
    return positions.double()[:, None] * frequency  # (T, D/2)


def _reference_rope(x, positions):
    return _rotate(x.double(), _rope_angle(x, positions))


def _interleaved(x, positions):
    return _rotate(x.double(), _rope_angle(x, positions), pairs="interleaved")


def _other_way(x, positions):
    return _rotate(x.double(), _rope_angle(x, positions), sign=-1.0)


def _ignores_positions(x, positions):
    return _reference_rope(x, torch.arange(x.shape[0]))


def _no_two(x, positions):
    return _rotate(x.double(), _rope_angle(x, positions, two=1.0))


def _swapped(x, positions):
    return _rotate(x.double(), _rope_angle(x, positions), swap=True)


def _halves_swapped(x, positions):
    rotated = _reference_rope(x, positions)
    D = x.shape[-1]
    return torch.cat([rotated[:, D // 2:], rotated[:, : D // 2]], dim=-1)


def _rope_inputs() -> list[tuple]:
    g = _generator(7)
    return [(torch.randn(5, 8, generator=g), torch.tensor([3, 4, 5, 6, 7])),  # after 3 cached tokens
            (torch.randn(4, 4, generator=g), torch.arange(4)),
            (torch.randn(3, 2, generator=g), torch.tensor([0, 5, 2]))]


def check_rope_rotate_half(function: Any) -> None:
    """Exercise 3: ``rope_rotate_half(x, positions)``, x (T, D) and positions (T,), pair i = (i, i + D/2).

    Run first on x (5, 8) at positions 3..7 (tokens after a cache of 3), then (4, 4) at 0..3 and (3, 2)
    at [0, 5, 2]. Names: the interleaved pairing (2i, 2i + 1) of the paper; the rotation the wrong
    way (the sign of sin flipped); ``arange(T)`` instead of the given positions; the exponent i/D
    without its 2; sin and cos swapped; the two halves of the result in the wrong order.
    """
    mistakes = [
        Mistake("you paired features (2i, 2i + 1): that is the paper's interleaved pairing. Rotate-half (GPT-NeoX, "
                "Llama) pairs feature i with feature i + D/2: a, b = x[:, :D // 2], x[:, D // 2:].",
                answer=_interleaved),
        Mistake("your rotation turns the wrong way: (a, b) -> (a cos + b sin, -a sin + b cos) is the rotation by "
                "minus the angle. It is (a cos - b sin, a sin + b cos).", answer=_other_way),
        Mistake("your function uses arange(T), not the positions it is given: on the first input the tokens sit at "
                "3..7 (after a cache of 3), and each must turn by its own position.", answer=_ignores_positions),
        Mistake("your frequencies are 10000^(-i/D): the exponent is 2i/D (pair i, out of D/2 pairs), so the "
                "lowest frequency is nearly 1/10000.", answer=_no_two),
        Mistake("sin and cos are swapped: the first part of each pair is a cos - b sin.", answer=_swapped),
        Mistake("the two halves of your result are in the wrong order: torch.cat puts a cos - b sin (the new first "
                "half) before a sin + b cos (the new second half).", answer=_halves_swapped),
    ]
    check_function("Exercise 3", function, _rope_inputs(), _reference_rope, mistakes,
                   correct="feature i turns with feature i + D/2, by positions[t] / 10000^(2i/D): "
                           "Hugging Face's Llama rotate_half.")


# ---------------------------------------------------------------------------------------------
# Exercise 4: spot the mistakes in a decoding step


WRONG_LINES = frozenset({"A", "C"})
LINE_HINTS = {
    "A": ("line A is wrong: apply_rope without positions uses arange(1) = [0] for the single new row, so the query "
          "turns as if it were token 0 while its key turns at t; every distance is off by t. Pass torch.tensor([t])."),
    "B": ("line B is right: the new key belongs to token t and turns by t, once; it then goes into the cache "
          "as it is."),
    "C": ("line C is wrong: values carry what is mixed into the output and are never rotated; rotating them "
          "makes the output depend on the absolute position."),
    "D": ("line D is right: the cached keys were rotated at their own positions when they were cached; "
          "rotating them again would turn them twice."),
}


def _as_letters(answer: Any) -> frozenset | None:
    """A set of line letters from a set, list, tuple or string ("AC", "a, c", "A and C", "lines A, C").

    Words in a string are read as letters only when they are one letter, or a run of the letters A-D
    that is not an English word ("AC", "bd"); other words ("and", "line") are skipped. None when the
    answer holds no letter at all, or is not a string or a collection of strings.
    """
    if isinstance(answer, str):
        letters: set[str] = set()
        for word in re.findall(r"[A-Za-z]+", answer):
            if len(word) == 1:
                letters.add(word.upper())
            elif set(word.upper()) <= set(LINE_HINTS) and word.lower() not in _WORDS_OF_ABCD:
                letters.update(word.upper())
        return frozenset(letters) or None
    if isinstance(answer, (set, frozenset, list, tuple)) and all(isinstance(c, str) for c in answer):
        parts = [_as_letters(c) for c in answer]
        return None if any(p is None for p in parts) else frozenset().union(*parts)
    return None


_WORDS_OF_ABCD = frozenset({"ab", "ad", "add", "bad", "bade", "cab", "cad", "dab", "dad", "abba", "baa", "dace",
                            "bead"})


def check_decode_bugs(answer: Any) -> None:
    """Exercise 4 (spot the mistakes): the wrong lines of ``decode_step`` are {"A", "C"}.

    A rotates the new query at position 0 (``apply_rope`` without positions) instead of its position t;
    C rotates the value. B (the new key at t) and D (the cached keys not rotated again) are right. The
    hint names every line the answer gets wrong, missed or wrongly accused, in one line.
    """
    if answer is None or answer is Ellipsis:
        report("Exercise 4", "not attempted")
        return
    letters = _as_letters(answer)
    if letters is None:
        report("Exercise 4", "not yet", f"Give the wrong lines as a set of letters, e.g. {{'A', 'B'}}, got {answer!r}.")
        return
    unknown = sorted(letters - set(LINE_HINTS))
    if unknown:
        report("Exercise 4", "not yet", f"The lines are A, B, C and D; {', '.join(unknown)} is not one of them.")
        return
    if letters == WRONG_LINES:
        report("Exercise 4", "correct", "The query turns at its own position t (A), and the values are never "
               "rotated (C).")
        return
    missed, accused = sorted(WRONG_LINES - letters), sorted(letters - WRONG_LINES)
    hints = [LINE_HINTS[c] for c in missed + accused]
    report("Exercise 4", "not yet", " ".join(h[0].upper() + h[1:] for h in hints))
