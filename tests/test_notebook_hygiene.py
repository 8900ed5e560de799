"""Every notebook is stored executed and replayable: nbval can only check what is stored."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

# Text that torch words, not the course: an exception or warning as Python prints it ("RuntimeError: ...",
# "file.py:12: UserWarning: ..."), other than the ValueError and TypeError that attnlib raises with its own
# messages. Naming a type in the course's own sentence ("torch raised a RuntimeError") is fine.
TORCH_TEXT = re.compile(
    r"(?:^|:)\s*(?:torch\.)?(?:RuntimeError|IndexError|NotImplementedError|\w*Warning): "
    r"|\.py:\d+: \w+|^\s*warning: ", re.M)
FOLDER = Path(__file__).resolve().parents[1] / "notebooks"
NOTEBOOKS = sorted(FOLDER.glob("*.ipynb")) + sorted(FOLDER.glob("solutions/*.ipynb"))  # learner and solved


def code_cells(path: Path) -> list[dict]:
    return [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]


def test_the_course_has_notebooks():
    names = [p.name for p in NOTEBOOKS]
    assert "01_toy_qkv.ipynb" in names
    assert all(re.fullmatch(r"\d\d_[a-z0-9_]+\.ipynb", n) for n in names), names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.relative_to(FOLDER).as_posix())
def test_outputs_stored_in_order_without_errors(path: Path):
    cells = code_cells(path)
    assert cells, f"{path.name} has no code cells"
    counts = [c["execution_count"] for c in cells]
    assert counts == list(range(1, len(cells) + 1)), f"{path.name}: execution counts {counts}; run make notebooks"
    assert any(c["outputs"] for c in cells), f"{path.name} stores no outputs"
    for i, cell in enumerate(cells, 1):
        for out in cell["outputs"]:
            assert out["output_type"] != "error", f"{path.name} cell {i} stores an error: {out.get('ename')}"
            text = "".join(out.get("text", "")) + "".join(out.get("data", {}).get("text/plain", ""))
            assert not re.search(r"at 0x[0-9a-f]{6,}", text), f"{path.name} cell {i} shows an object address"
            assert "grad_fn=<" not in text, f"{path.name} cell {i} prints a grad_fn name"
            assert out.get("name") != "stderr", f"{path.name} cell {i} stores a stderr stream (a warning?)"
            torch_text = TORCH_TEXT.search(text)
            assert not torch_text, (
                f"{path.name} cell {i} stores torch's own error or warning text ({torch_text.group(0)!r}), which "
                "changes between torch releases: print a sentence of the course's and assert the exception type")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.relative_to(FOLDER).as_posix())
def test_kernelspec_setup_cell_and_no_path_hacks(path: Path):
    nb = json.loads(path.read_text())
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    cells = code_cells(path)
    first = "".join(cells[0]["source"])
    assert "nbval-ignore-output" in cells[0]["metadata"].get("tags", []), (
        f"{path.name}: the first code cell is the setup cell, its output ignored by nbval (a tag, not a comment)")
    assert first.startswith("# Setup: run this cell first"), f"{path.name}: the setup cell's first line is for learners"
    assert "google.colab" in first, f"{path.name}: the setup cell installs attnlib on Colab"
    for cell in cells:
        assert "sys.path" not in "".join(cell["source"]), f"{path.name} edits sys.path"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.relative_to(FOLDER).as_posix())
def test_ends_with_what_goes_into_attnlib_or_references(path: Path):
    text = path.read_text()
    assert "## References" in text, f"{path.name} cites its sources in a References section"
