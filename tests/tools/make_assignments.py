"""Make the course's nbgrader assignments from the solved notebooks: `make assignments`.

    python tests/tools/make_assignments.py [NAME ...]    # build/nbgrader/: source/, then release/ by nbgrader
    python tests/tools/make_assignments.py --no-release  # source/ only (no nbgrader run)
    python tests/tools/make_assignments.py --points      # print the table of points per notebook (markdown)
    python tests/tools/make_assignments.py --update-page # write that table into book/teachers.md

Every solved notebook in notebooks/solutions/ becomes one assignment of an nbgrader course folder,
build/nbgrader/, named like the notebook ("02_softmax_axes"): source/02_softmax_axes/02_softmax_axes.ipynb.
Its cells carry nbgrader's metadata (schema 3):

- each exercise's answer cell (the one holding ``### BEGIN SOLUTION`` / ``### END SOLUTION``) is a
  solution cell: nbgrader replaces each block by ``# YOUR CODE HERE`` and ``pass`` in the release, so
  the untouched release runs top to bottom like the course's learner notebooks;
- the check cell after it becomes the exercise's autograded test cell (``grade: true``, its points, a
  stable ``grade_id`` such as ``nb02_ex4``): the same checker, called inside
  ``attnlib.exercises.grading()``, so a wrong answer raises an AssertionError whose message is the
  checker's one-line hint, and a right one passes silently. For a function the learner writes, the
  cell also holds ``### BEGIN HIDDEN TESTS`` / ``### END HIDDEN TESTS``: asserts on further probe
  inputs that nbgrader removes from the release and puts back when it autogrades;
- every other cell (the prose, the setup, the demonstrations) is read-only ("locked"): when
  autograding, nbgrader restores it from the source, so a submission cannot change what is graded.

Points: an exercise that asks for a value (predict, then run) is worth POINTS["predict"], one that asks
for a function POINTS["write"]; POINTS_BY_ID overrides single exercises by grade_id. Then
``nbgrader generate_assignment`` writes release/ (and the gradebook, build/nbgrader/gradebook.db).
nbgrader runs ``alembic`` from PATH, so the script puts its own interpreter's bin/ first on PATH.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = ROOT / "notebooks" / "solutions"
COURSE = ROOT / "build" / "nbgrader"
TEACHERS_PAGE = ROOT / "book" / "teachers.md"
TABLE_START = "<!-- points table: made by make_assignments.py --update-page -->"
TABLE_END = "<!-- end of points table -->"
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"

POINTS = {"predict": 1, "write": 2}
POINTS_BY_ID: dict[str, int] = {}  # e.g. {"nb02_ex4": 3}: one exercise worth more than its kind

CHECK_CALL = re.compile(r"^\s*(nb\d\d)\.(check_\w+)\((.*)\)\s*$", re.M)
EXERCISE_NUMBER = re.compile(r"^\s*Exercise (\d+)\b")

CONFIG = '''\
# nbgrader's configuration for the attention course, written by tests/tools/make_assignments.py.
c = get_config()  # noqa: F821 (nbgrader defines it)
c.CourseDirectory.course_id = "attention-course"
# The stub of a cleared answer: "pass" keeps a function body valid (it returns None, which the checker
# reads as "not attempted yet"), so the untouched release runs top to bottom like the course's notebooks.
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\\npass"}
# seconds per cell: notebook 06 trains a small model for about two minutes on a busy machine
c.Execute.timeout = 900
'''

# Asserts on probe inputs the checkers do not show, one block per function exercise, keyed by grade_id.
# Each recomputes the expected answer from the definition, independently of attnlib and of the checker.
HIDDEN_TESTS = {
    "nb01_ex3": '''\
g = torch.Generator().manual_seed(24)
dec, enc = torch.randn(3, 6, generator=g), torch.randn(4, 5, generator=g)
W_q, W_k, W_v = torch.randn(6, 4, generator=g), torch.randn(5, 4, generator=g), torch.randn(5, 2, generator=g)
out, w = my_cross_attention(dec, enc, W_q, W_k, W_v)
w_ref = torch.softmax((dec @ W_q) @ (enc @ W_k).T / 2.0, dim=-1)  # d_k = 4
assert torch.allclose(w, w_ref, atol=1e-5), "my_cross_attention: wrong weights, decoder width 6, encoder width 5"
assert torch.allclose(out, w_ref @ (enc @ W_v), atol=1e-5), "my_cross_attention: wrong output"''',
    "nb01_ex4": '''\
g = torch.Generator().manual_seed(24)
q, k = torch.randn(2, 2, 3, 16, generator=g), torch.randn(2, 2, 6, 16, generator=g)
v = torch.randn(2, 2, 6, 5, generator=g)
out, w = my_attention(q, k, v)
w_ref = torch.softmax(q @ k.transpose(-2, -1) / 4.0, dim=-1)  # sqrt(d_k) = sqrt(16) = 4
assert torch.allclose(w, w_ref, atol=1e-5), "my_attention: wrong weights on (B, H, Tq, d_k) = (2, 2, 3, 16)"
assert torch.allclose(out, w_ref @ v, atol=1e-5), "my_attention: wrong output on (2, 2, 3, 16) queries, Ev = 5"''',
    "nb02_ex2": '''\
s = torch.randn(2, 2, 3, 5, 4, generator=torch.Generator().manual_seed(24))  # five axes, (..., Tk, Tq) = (5, 4)
assert torch.allclose(key_major_weights(s), torch.softmax(s.transpose(-2, -1), dim=-1), atol=1e-6), \\
    "key_major_weights: wrong on (2, 2, 3, Tk, Tq) = (2, 2, 3, 5, 4) scores"''',
    "nb02_ex4": '''\
x = torch.tensor([[1.0e4, 0.0, -1.0e4], [-5.0e3, -5.0e3, -5.0e3]])
got = my_softmax(x)
assert torch.isfinite(got).all(), "my_softmax: NaN or inf on scores of 1e4 and -5e3"
assert torch.allclose(got, torch.tensor([[1.0, 0.0, 0.0], [1 / 3, 1 / 3, 1 / 3]]), atol=1e-6), \\
    "my_softmax: wrong on scores of 1e4 and -5e3"''',
    "nb02_ex5": '''\
s = torch.randn(2, 4, 3, 6, generator=torch.Generator().manual_seed(24))  # (B, H, Tq, Tk)
tau = torch.tensor([0.1, 0.5, 2.0, 8.0])  # (H,)
want = torch.stack([torch.softmax(s[:, h] / tau[h], dim=-1) for h in range(4)], dim=1)
assert torch.allclose(softmax_with_temperature(s, tau), want, atol=1e-6), \\
    "softmax_with_temperature: wrong for 4 heads at tau = 0.1, 0.5, 2, 8"''',
    "nb03_ex4": '''\
g = torch.Generator().manual_seed(24)
q, k = torch.randn(2, 3, 5, 8, generator=g), torch.randn(2, 3, 6, 8, generator=g)
assert torch.allclose(scaled_scores(q, k), q @ k.transpose(-2, -1) / 8 ** 0.5, atol=1e-5), \\
    "scaled_scores: wrong on (B, H, Tq, d_k) = (2, 3, 5, 8) queries and 6 keys"
q, k = torch.randn(7, 36, generator=g), torch.randn(2, 36, generator=g)
assert torch.allclose(scaled_scores(q, k), q @ k.T / 6.0, atol=1e-5), "scaled_scores: wrong on q (7, 36), k (2, 36)"''',
    "nb04_ex3": '''\
am = torch.tensor([[0, 0, 1, 1, 1], [1, 1, 1, 0, 0]])  # left and right padding, B = 2, T = 5
want = torch.tensor([[[[bool(am[b, j]) and j <= i for j in range(5)] for i in range(5)]] for b in range(2)])
got = decoder_mask(am)
assert got.dtype == torch.bool and got.shape == (2, 1, 5, 5), "decoder_mask: expected a bool (2, 1, 5, 5) mask"
assert torch.equal(got, want), "decoder_mask: wrong for a left-padded and a right-padded sequence, T = 5"''',
    "nb04_ex4": '''\
am = torch.tensor([[1, 1, 1, 0, 0], [0, 1, 1, 1, 1], [1, 1, 1, 1, 1]])
key_padding_mask, attn_mask = torch_masks(am)
assert key_padding_mask.dtype == torch.bool and torch.equal(key_padding_mask, am == 0), \\
    "torch_masks: key_padding_mask must be bool (B, Tk), True at the padding"
future = torch.tensor([[j > i for j in range(5)] for i in range(5)])
assert attn_mask.dtype == torch.bool and torch.equal(attn_mask, future), \\
    "torch_masks: attn_mask must be bool (Tq, Tk), True above the diagonal (the future)"''',
    "nb04_ex5": '''\
g = torch.Generator().manual_seed(24)
scores = torch.randn(2, 3, 4, generator=g)
mask = torch.tensor([[True, False, True, False], [False] * 4, [True] * 4])  # (Tq, Tk): query 1 sees no key
got = safe_masked_softmax(scores, mask)
assert torch.isfinite(got).all(), "safe_masked_softmax: NaN or inf where a query sees no key"
want = torch.softmax(scores.masked_fill(~mask, -1e9), dim=-1) * mask.any(dim=-1, keepdim=True)
assert torch.allclose(got, want, atol=1e-6), "safe_masked_softmax: wrong with a (Tq, Tk) mask broadcast over B = 2"''',
    "nb05_ex4": '''\
x = torch.randn(6, 5, 4, generator=torch.Generator().manual_seed(24))  # (B*H, T, Dh): B = 2, H = 3, T = 5, Dh = 4
want = torch.stack([torch.cat([x[b * 3 + h] for h in range(3)], dim=-1) for b in range(2)])  # (B, T, E)
assert torch.equal(my_merge_heads(x, 3), want), "my_merge_heads: wrong for B = 2, H = 3, T = 5, Dh = 4"''',
    "nb05_ex5": '''\
g = torch.Generator().manual_seed(24)
q, k, v = torch.randn(2, 3, 12, generator=g), torch.randn(2, 5, 12, generator=g), torch.randn(2, 5, 12, generator=g)
qh, kh, vh = (t.reshape(2, -1, 4, 3).transpose(1, 2) for t in (q, k, v))  # H = 4, Dh = 3
want = (torch.softmax(qh @ kh.transpose(-2, -1) / 3 ** 0.5, dim=-1) @ vh).transpose(1, 2).reshape(2, 3, 12)
assert torch.allclose(my_multi_head_attention(q, k, v, 4), want, atol=1e-5), \\
    "my_multi_head_attention: wrong for Tq = 3, Tk = 5, num_heads = 4"''',
    "nb06_ex2": '''\
g = torch.Generator().manual_seed(24)
queries, keys = torch.randn(2, 3, 5, generator=g), torch.randn(2, 4, 7, generator=g)
W_q, W_k, w_v = torch.randn(6, 5, generator=g), torch.randn(6, 7, generator=g), torch.randn(6, generator=g)
want = torch.tanh((queries @ W_q.T)[:, :, None, :] + (keys @ W_k.T)[:, None, :, :]) @ w_v
assert torch.allclose(pair_scores(queries, keys, W_q, W_k, w_v), want, atol=1e-5), \\
    "pair_scores: wrong for Dq = 5, Dk = 7, h = 6"''',
    "nb06_ex3": '''\
scores = torch.randn(3, 2, 5, generator=torch.Generator().manual_seed(24))
lens = torch.tensor([5, 1, 3])
keep = torch.arange(5)[None, None, :] < lens[:, None, None]
want = torch.softmax(scores.masked_fill(~keep, -1e9), dim=-1)
assert torch.allclose(masked_weights(scores, lens), want, atol=1e-6), \\
    "masked_weights: wrong for valid_lens [5, 1, 3]"''',
    "nb07_ex2": '''\
import math
angle = [[t * 10000 ** (-2 * (j // 2) / 10) for j in range(10)] for t in range(40)]  # pair j // 2's angle
pe = torch.tensor([[math.sin(a) if j % 2 == 0 else math.cos(a) for j, a in enumerate(row)] for row in angle])
M = shift_matrix(7, 10)
assert tuple(M.shape) == (10, 10), "shift_matrix: expected a (10, 10) matrix for E = 10"
assert torch.allclose(pe[:-7] @ M.T.float(), pe[7:], atol=1e-5), "shift_matrix: M_7 PE(t) is not PE(t + 7), E = 10"''',
    "nb07_ex3": '''\
import math
x = torch.randn(2, 3, 6, generator=torch.Generator().manual_seed(24))  # (B, T, D)
positions, theta = torch.tensor([0, 2, 5]), torch.tensor([0.9, 0.2, 0.01])
want = x.clone()
for t, p in enumerate(positions.tolist()):
    for i in range(3):
        angle = p * theta[i].item()
        a, b = x[:, t, i], x[:, t, i + 3]  # pair i is (i, i + D/2)
        want[:, t, i] = a * math.cos(angle) - b * math.sin(angle)
        want[:, t, i + 3] = a * math.sin(angle) + b * math.cos(angle)
assert torch.allclose(rope_rotate_half(x, positions, theta).double(), want.double(), atol=1e-5), \\
    "rope_rotate_half: wrong for B = 2, D = 6, theta [0.9, 0.2, 0.01]"''',
    "nb08_ex2": '''\
m, s, x = torch.tensor([0.0, 5.0]), torch.tensor([1.0, 2.0]), torch.tensor([3.0, -1.0])
m_new, s_new = online_update(m, s, x)
assert torch.allclose(m_new, torch.tensor([3.0, 5.0])), "online_update: wrong running maximum"
want = torch.tensor([torch.e ** -3 + 1.0, 2.0 + torch.e ** -6])
assert torch.allclose(s_new, want, atol=1e-6), "online_update: wrong running sum"''',
    "nb08_ex3": '''\
g = torch.Generator().manual_seed(24)
q, k, v = torch.randn(2, 4, 7, generator=g), torch.randn(2, 13, 7, generator=g), torch.randn(2, 13, 3, generator=g)
k = k * torch.linspace(0.5, 4.0, 13)[None, :, None]  # larger keys later: the maximum rises from block to block
want = torch.softmax(q @ k.transpose(-2, -1) / 7 ** 0.5, dim=-1) @ v
assert torch.allclose(blockwise_attention(q, k, v, 5), want, atol=1e-5), \\
    "blockwise_attention: wrong for Tq = 4, Tk = 13, blocks of 5"''',
    "nb08_ex4": '''\
for q_len, kv_len in ((2, 9), (1, 1), (6, 6), (3, 4)):
    want = torch.tensor([[j <= i + kv_len - q_len for j in range(kv_len)] for i in range(q_len)])
    got = cache_causal_mask(q_len, kv_len)
    assert got.dtype == torch.bool and torch.equal(got, want), \\
        f"cache_causal_mask: wrong for q_len = {q_len}, kv_len = {kv_len}"''',
    "nb08_ex5": '''\
g = torch.Generator().manual_seed(24)
q = torch.randn(2, 12, 3, 5, generator=g)  # Hq = 12
k, v = torch.randn(2, 3, 4, 5, generator=g), torch.randn(2, 3, 4, 5, generator=g)  # Hkv = 3: groups of 4
heads = [torch.softmax(q[:, h] @ k[:, h // 4].mT / 5 ** 0.5, dim=-1) @ v[:, h // 4] for h in range(12)]
want = torch.stack(heads, dim=1)
got = grouped_query_attention(q, k, v)
assert got.shape == (2, 12, 3, 5), "grouped_query_attention: expected shape (2, 12, 3, 5)"
assert torch.allclose(got, want, atol=1e-5), "grouped_query_attention: wrong groups for Hkv = 3, Hq = 12"''',
    "nb09_ex1": '''\
hidden = torch.arange(24, dtype=torch.float32).reshape(2, 4, 3)
attention_mask = torch.tensor([[1, 1, 0, 0], [1, 1, 1, 1]])
want = torch.stack([hidden[0, :2].mean(dim=0), hidden[1].mean(dim=0)])
assert torch.allclose(mean_pool(hidden, attention_mask), want), "mean_pool: wrong with 2 of 4 tokens padded"''',
    "nb09_ex2": '''\
weights = torch.softmax(torch.randn(3, 2, 5, 5, generator=torch.Generator().manual_seed(24)), dim=-1)
want = sum(weights[..., i, i - 1] for i in range(1, 5)) / 4  # (3, 2): every leading axis kept
assert torch.allclose(previous_token_score(weights), want, atol=1e-6), "previous_token_score: (3, 2, 5, 5)"''',
    "nb10_ex1": '''\
tokens, first, second = repeated_batch(500, 12, 3, 7, torch.Generator().manual_seed(24))
rows, j = torch.arange(500)[:, None], torch.arange(3)
assert torch.equal(tokens[rows, second[:, None] + j], tokens[rows, first[:, None] + j]), "repeated_batch: T = 12, L = 3"
assert (second >= first + 3).all() and (second + 3 <= 12).all(), "repeated_batch: copies overlap or run off, T = 12"
assert int(first.min()) == 0 and int(second.max()) == 9 and int(tokens.max()) == 6, "repeated_batch: a bound is off"''',
    "nb10_ex4": '''\
tokens = torch.tensor([[5, 5, 2, 5, 2, 9], [1, 2, 3, 1, 2, 3]])
want = [[-1, 1, -1, 2, 3, -1], [-1, -1, -1, 1, 2, 3]]
assert induction_targets(tokens).tolist() == want, "induction_targets: wrong for 5 5 2 5 2 9 and 1 2 3 1 2 3"''',
    "nb11_ex1": '''\
g = torch.Generator().manual_seed(24)
compressed = torch.randn(2, 4, 6 + 4, generator=g)  # (B, T, r + dR), r = 6, dR = 4
w_uk = torch.randn(3, 6, 5, generator=g)  # (H, r, dn)
positions = torch.arange(3, 7)
part = compressed[..., 6:].double()  # the RoPE part, rotated in rotate-half pairs (i, i + dR / 2)
angle = positions[:, None].double() * 10000.0 ** (-torch.arange(0, 4, 2).double() / 4)  # (T, dR / 2)
a, b = part[..., :2], part[..., 2:]
rope = torch.cat([a * angle.cos() - b * angle.sin(), b * angle.cos() + a * angle.sin()], dim=-1).float()
k_nope = torch.einsum("btr,hrd->bhtd", compressed[..., :6], w_uk)  # (B, H, T, dn)
want = torch.cat([k_nope, rope[:, None].expand(-1, 3, -1, -1)], dim=-1)
got = my_mla_keys(compressed, w_uk, positions)
assert got.shape == (2, 3, 4, 9) and torch.allclose(got, want, atol=1e-5), \\
    "my_mla_keys: wrong for r = 6, dR = 4, H = 3 at positions 3..6"''',
    "nb11_ex2": '''\
q, k = torch.tensor([5, 9]), torch.tensor([0, 1, 5, 6, 7, 8, 9])
want = torch.tensor([[0 <= p - j < 3 for j in k.tolist()] for p in q.tolist()])
got = my_window_mask(q, k, 3)
assert got.dtype == torch.bool and torch.equal(got, want), "my_window_mask: wrong for queries at 5 and 9, window 3"''',
    "nb11_ex3": '''\
g = torch.Generator().manual_seed(24)
scores, sink = torch.randn(2, 4, 3, 5, generator=g) * 3, torch.randn(4, generator=g)
e = torch.exp(scores.double())
want = (e / (e.sum(-1, keepdim=True) + torch.exp(sink.double()).view(1, 4, 1, 1))).float()
assert torch.allclose(my_sink_softmax(scores, sink), want, atol=1e-6), \\
    "my_sink_softmax: wrong for H = 4 heads, Tk = 5"''',
    "nb11_ex5": '''\
g = torch.Generator().manual_seed(24)
heads, x = torch.randn(2, 2, 3, 5, generator=g), torch.randn(2, 3, 7, generator=g)  # H = 2, Dh = 5, E = 7
w_gate, w_out = torch.randn(7, 10, generator=g), torch.randn(10, 7, generator=g)
merged = torch.cat([heads[:, 0], heads[:, 1]], dim=-1)  # head 0's features, then head 1's: (B, T, H * Dh)
want = (merged * torch.sigmoid(x @ w_gate)) @ w_out
assert torch.allclose(my_gated_output(heads, x, w_gate, w_out), want, atol=1e-4), \\
    "my_gated_output: wrong for H = 2, Dh = 5, E = 7"''',
}


@dataclass
class Exercise:
    """One exercise of a notebook, as nbgrader grades it."""

    module: str  # "nb02"
    number: int  # as the checker's docstring numbers it
    checker: str  # "check_stable_softmax"
    call: str  # the check cell's call, "nb02.check_stable_softmax(my_softmax)"
    kind: str  # "predict" (a value) or "write" (a function)
    answer_cell: int
    check_cell: int

    @property
    def grade_id(self) -> str:
        return f"{self.module}_ex{self.number}"

    @property
    def points(self) -> int:
        return POINTS_BY_ID.get(self.grade_id, POINTS[self.kind])


def assignment_names(names: list[str] | None = None) -> list[Path]:
    """The solved notebooks to make assignments of, by glob (a new notebook joins by itself)."""
    found = sorted(SOLUTIONS.glob("[0-9][0-9]_*.ipynb"))
    return [p for p in found if not names or any(n in p.name for n in names)]


def exercises_of(nb: nbformat.NotebookNode, name: str) -> list[Exercise]:
    """Each solution cell and the check cell after it, with the exercise's number from its checker."""
    found = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or BEGIN not in cell.source:
            continue
        check = next((i for i in range(index + 1, len(nb.cells)) if nb.cells[i].cell_type == "code"), None)
        match = CHECK_CALL.search(nb.cells[check].source) if check is not None else None
        if match is None:
            raise ValueError(f"{name} cell {index}: a solution cell not followed by a check cell nbNN.check_...(...)")
        module, checker = match.group(1), match.group(2)
        entry = getattr(importlib.import_module(f"attnlib.exercises.{module}"), checker)
        number = EXERCISE_NUMBER.match(getattr(entry, "name", None) or entry.__doc__ or "")  # an Exercise's name
        if number is None:
            raise ValueError(f"{name}: {module}.{checker} is not named 'Exercise N'")
        kind = "write" if re.search(r"^\s*def \w+\(", cell.source, re.M) else "predict"
        found.append(Exercise(module, int(number.group(1)), checker, match.group(0).strip(), kind, index, check))
    ids = [e.grade_id for e in found]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{name}: two exercises with one number: {ids}")
    return found


def _meta(grade_id: str, *, grade: bool = False, solution: bool = False, locked: bool = False,
          points: int | None = None) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3, "solution": solution,
            "task": False}
    if points is not None:
        meta["points"] = points
    return meta


def graded_cell_source(exercise: Exercise) -> str:
    """The autograded cell: the checker in grading mode, then the hidden probes (write exercises)."""
    unit = "point" if exercise.points == 1 else "points"
    lines = [
        f"# check: Exercise {exercise.number}, graded ({exercise.points} {unit}). Run it: a wrong answer stops "
        "here with the checker's hint.",
        "from attnlib.exercises import grading",
        "",
        "with grading():",
        f"    {exercise.call}",
    ]
    hidden = HIDDEN_TESTS.get(exercise.grade_id)
    if hidden:  # inside a function, so that its names (q, k, x, ...) do not replace the notebook's own
        body = textwrap.indent(f"import torch\n\n{hidden}", "    ")
        lines += ["### BEGIN HIDDEN TESTS", "def _hidden_tests():", body, "", "", "_hidden_tests()",
                  "del _hidden_tests", "### END HIDDEN TESTS"]
    return "\n".join(lines)


def assignment(solved: nbformat.NotebookNode, name: str) -> tuple[nbformat.NotebookNode, list[Exercise]]:
    """The nbgrader source notebook of one solved notebook, and its exercises."""
    nb = nbformat.from_dict(solved)
    exercises = exercises_of(nb, name)
    prefix = exercises[0].module if exercises else name[:2]
    answers = {e.answer_cell: e for e in exercises}
    checks = {e.check_cell: e for e in exercises}
    for index, cell in enumerate(nb.cells):
        if index in answers:
            cell.metadata["nbgrader"] = _meta(f"{answers[index].grade_id}_answer", solution=True)
        elif index in checks:
            exercise = checks[index]
            cell.source = graded_cell_source(exercise)
            cell.outputs, cell.execution_count = [], None
            cell.metadata["nbgrader"] = _meta(exercise.grade_id, grade=True, locked=True, points=exercise.points)
        else:
            if BEGIN in cell.source or END in cell.source:
                raise ValueError(f"{name} cell {index}: solution markers outside an exercise's answer cell")
            cell.metadata["nbgrader"] = _meta(f"{prefix}_{cell.get('id') or index}", locked=True)
    return nb, exercises


def unknown_hidden_tests(all_exercises: list[Exercise]) -> list[str]:
    """HIDDEN_TESTS keys that name no exercise (a renumbered exercise would lose its probes)."""
    ids = {e.grade_id for e in all_exercises}
    return sorted(set(HIDDEN_TESTS) - ids)


def points_table(rows: list[tuple[str, list[Exercise]]]) -> str:
    """Markdown: per notebook, its exercises' points (p = predict a value, w = write a function), and the total."""
    out = ["| assignment | exercise: points | total |", "| --- | --- | --- |"]
    for name, exercises in rows:
        parts = ", ".join(f"{e.number}: {e.points}" + (" (write)" if e.kind == "write" else "")
                          for e in sorted(exercises, key=lambda e: e.number))
        out.append(f"| {name} | {parts} | {sum(e.points for e in exercises)} |")
    total = sum(e.points for _, exercises in rows for e in exercises)
    out.append(f"| all | {sum(len(x) for _, x in rows)} exercises | {total} |")
    return "\n".join(out)


def page_with_table(page: str, table: str) -> str:
    """The teachers' page with the table between its two markers replaced by ``table``."""
    start, end = page.index(TABLE_START) + len(TABLE_START), page.index(TABLE_END)
    return page[:start] + "\n" + table + "\n" + page[end:]


def all_assignments(names: list[str] | None = None) -> list[tuple[str, nbformat.NotebookNode, list[Exercise]]]:
    made = []
    for path in assignment_names(names):
        nb, exercises = assignment(nbformat.read(path, as_version=4), path.name)
        made.append((path.stem, nb, exercises))
    return made


def nbgrader(*args: str, cwd: Path) -> None:
    """Run nbgrader's command line in the course folder, with this interpreter's bin/ first on PATH (alembic)."""
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")}
    subprocess.run([os.path.join(bin_dir, "nbgrader"), *args], cwd=cwd, env=env, check=True)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-release", action="store_true", help="write source/ only")
    parser.add_argument("--points", action="store_true", help="print the points per notebook and exit")
    parser.add_argument("--update-page", action="store_true", help="write the points table into book/teachers.md")
    parser.add_argument("--course", type=Path, default=COURSE, help="the course folder to write (build/nbgrader)")
    parser.add_argument("names", nargs="*")
    args = parser.parse_args(argv)
    made = all_assignments(args.names)
    table = points_table([(name, exercises) for name, _, exercises in made])
    if args.points:
        print(table)
        return 0
    if args.update_page:
        TEACHERS_PAGE.write_text(page_with_table(TEACHERS_PAGE.read_text(), table))
        print(f"wrote the points table into {TEACHERS_PAGE.relative_to(ROOT)}")
        return 0
    stale = unknown_hidden_tests([e for _, _, exercises in made for e in exercises]) if not args.names else []
    if stale:
        raise SystemExit(f"HIDDEN_TESTS names exercises that do not exist: {stale}")
    course = args.course.resolve()
    if not args.names and course.exists():
        shutil.rmtree(course)  # a fresh gradebook: its assignments are exactly the notebooks of today
    course.mkdir(parents=True, exist_ok=True)
    (course / "nbgrader_config.py").write_text(CONFIG)
    for name, nb, exercises in made:
        folder = course / "source" / name
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / f"{name}.ipynb")
        points = sum(e.points for e in exercises)
        print(f"source/{name}/{name}.ipynb: {len(exercises)} exercises, {points} points", flush=True)
    if not args.no_release:  # one nbgrader run for every assignment of source/ (its start takes seconds)
        nbgrader("generate_assignment", "*", "--force", "--log-level=ERROR", cwd=course)
        for name, _, _ in made:
            print(f"release/{name}/{name}.ipynb", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
