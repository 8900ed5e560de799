"""Every learner notebook keeps DESIGN.md's structure and the main line's budget (tests/tools/notebook_parts.py).

The main line (up to "What you now know") holds at most 55 cells and 2,000 words of prose, in numbered
sections of 3-6 cells besides their exercises, each with at most one `# check:` cell; then come a short
summary, a self-check of at most 5 questions, the optional "Going deeper", the appendix and the references.
"""

from __future__ import annotations

import copy
import json

import pytest

from tests.tools import notebook_parts as parts

NOTEBOOKS = parts.learner_notebooks()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_structure_and_budget(path):
    found = parts.problems(parts.read(path))
    assert not found, f"{path.name}:\n  - " + "\n  - ".join(found)


def _notebook(tmp_path, cells):
    path = tmp_path / "00_test.ipynb"
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return parts.read(path)


def md(text):
    return {"cell_type": "markdown", "source": text, "metadata": {}}


def code(text):
    return {"cell_type": "code", "source": text, "metadata": {}, "outputs": [], "execution_count": None}


GOOD = [md("# 00 · A title\n\nYou should know first: matrices."), code("import torch"),
        md("## 1. One idea\n\nA sentence:"), code("x = 1"), code("# check: x is one\nassert x == 1"),
        md("**Exercise 1.** Predict x."), code("my_x = None\n# YOUR CODE HERE"), code("nb00.check_x(my_x)"),
        md("## What you now know\n\n- one thing"), md("## Self-check\n\n<details>1</details>"),
        md("## Going deeper\n\n### A detour"), md("## Appendix"), code("# check: more\nassert True"),
        md("## References\n\n- a paper")]


def test_a_notebook_that_keeps_the_structure_passes(tmp_path):
    found = _notebook(tmp_path, GOOD)
    assert parts.problems(found) == []
    assert len(found.sections()) == 1 and found.sections()[0].lesson_cells == 3
    assert found.words == 18 and found.code_cells == 5
    assert found.minutes == pytest.approx(18 / 100 + 5 / 2)


@pytest.mark.parametrize(("change", "problem"), [
    (lambda c: [c.insert(3, code(f"y = {n}")) for n in range(4)], "cells besides its exercises"),
    (lambda c: c.insert(4, code("# check: again\nassert True")), "'# check:' cells"),
    (lambda c: c.insert(3, md("word " * 2000)), "words of prose"),
    (lambda c: c.__setitem__(9, md("## Self-check\n\n" + "<details>q</details>" * 6)), "questions"),
    (lambda c: c.__setitem__(8, md("## What you now know\n\n" + "- a line\n" * 6)), "lines"),
    (lambda c: c.pop(11), "## Appendix"),
    (lambda c: c.insert(2, md("## Self-check\n\n<details>1</details>")) or c.pop(10), "order"),
    (lambda c: [c.insert(11, code("x")) for _ in range(40)], "Going deeper"),
    (lambda c: c.__setitem__(2, md("## One idea, unnumbered")), "no numbered section"),
])
def test_each_departure_is_named(tmp_path, change, problem):
    cells = copy.deepcopy(GOOD)
    change(cells)
    found = parts.problems(_notebook(tmp_path, cells))
    assert any(problem in p for p in found), found


def test_a_main_line_over_55_cells_fails(tmp_path):
    cells = copy.deepcopy(GOOD)
    for n in range(2, 20):
        cells[8:8] = [md(f"## {n}. Idea {n}"), code("x"), code("y")]
    assert any("cells (budget 55)" in p for p in parts.problems(_notebook(tmp_path, cells)))
