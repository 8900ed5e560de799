"""Notebook 10 holds for the seeds a learner may try: the phase change comes, and every check after it passes.

The most natural experiment in notebook 10 is to change its `SEED`. This test runs the solved notebook's own
code cells up to section 6 (SmolLM2 trains nothing), with `SEED = 0` replaced by another seed and the progress
bars off, and fails if any cell raises: its checks after the training, of the heads and of the ablations, and
every cell that reads the step of the drop. Seeds 3 and 4 are the ones that failed when the notebook trained
a fixed 1000 steps: seed 4 had no drop within them (its check failed, and a later cell raised IndexError), and
seed 3 learned only weakly. With the stopping rule (500 steps after the drop) every seed from 0 to 9 passes;
this test runs the two that did not, about a minute each on one core.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib
import nbformat
import pytest
import torch

matplotlib.use("Agg")  # the notebook's plots are drawn and closed, never shown

import matplotlib.pyplot as plt  # noqa: E402

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "solutions" / "10_induction_heads.ipynb"


def code_before_smollm2() -> list[str]:
    """The notebook's code cells up to section 6, without the setup cell and the exercises' check calls."""
    sources = []
    for cell in nbformat.read(NOTEBOOK, as_version=4).cells:
        if cell.cell_type == "markdown" and cell.source.startswith("## 6."):
            break
        if cell.cell_type == "code" and "google.colab" not in cell.source and not cell.source.startswith("nb10."):
            sources.append(cell.source)
    return sources


@pytest.mark.parametrize("seed", [3, 4])
def test_the_notebook_runs_and_its_checks_pass_for_the_seed(seed, monkeypatch):
    monkeypatch.setenv("TQDM_DISABLE", "1")  # tqdm reads it when a bar is made
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    sources = code_before_smollm2()
    assert sum("SEED = 0" in source for source in sources) == 1, "the notebook sets SEED = 0 in one cell"
    namespace: dict = {}
    try:
        for index, source in enumerate(sources):
            try:
                exec(compile(source.replace("SEED = 0", f"SEED = {seed}"), f"cell {index}", "exec"), namespace)
            except Exception as error:  # name the cell, so that a failure says which check did not hold
                raise AssertionError(f"seed {seed}: code cell {index} raised {error!r}:\n{source[:300]}") from error
    finally:
        torch.set_num_threads(threads)
        plt.close("all")
    assert namespace["drop"] is not None and len(namespace["history"]) == namespace["drop"] + namespace["AFTER_DROP"]
    assert namespace["trained_second"] < 1.0
