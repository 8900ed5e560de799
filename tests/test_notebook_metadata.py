"""The notebooks' metadata is what JupyterLab writes when it opens them, so they open unmodified.

JupyterLab, on opening a notebook, writes the kernel's own name for itself into its kernelspec
("Python 3 (ipykernel)") and the kernel's language_info (its Python version, mimetype, lexer, ...). The
notebooks were stored with "Python 3" and `{"name": "python"}`, so every notebook was modified the moment
it opened and closing it asked to save (found in Chromium with Playwright; tests/e2e/test_lab.py checks it
in JupyterLab). tests/tools/run_notebooks.py writes the full metadata whenever it stores a notebook
(`make notebooks`, `make exercises`) and `run_notebooks.py metadata` rewrites only the metadata.
"""

from __future__ import annotations

import json
import platform
import shutil
import sys
from pathlib import Path

import nbformat
from jupyter_client.kernelspec import KernelSpecManager

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "tools"))
import run_notebooks  # noqa: E402

OLD = {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
       "language_info": {"name": "python"}}


def expected_kernelspec() -> dict:
    spec = KernelSpecManager().get_kernel_spec("python3")
    return {"display_name": spec.display_name, "language": spec.language, "name": "python3"}


def test_clean_metadata_writes_the_kernelspec_and_language_info_jupyterlab_would_write():
    nb = nbformat.v4.new_notebook(metadata=OLD)
    nb.cells.append(nbformat.v4.new_code_cell("1 + 1"))
    run_notebooks.clean_metadata(nb)
    assert nb.metadata["kernelspec"] == expected_kernelspec()
    assert nb.metadata["kernelspec"]["display_name"] != "Python 3"  # ipykernel's spec says "Python 3 (ipykernel)"
    info = nb.metadata["language_info"]
    assert info["name"] == "python" and info["version"] == platform.python_version()
    assert info["mimetype"] == "text/x-python" and info["file_extension"] == ".py"
    assert info["codemirror_mode"] == {"name": "ipython", "version": 3} and info["pygments_lexer"] == "ipython3"


def test_the_metadata_mode_rewrites_only_the_metadata_of_both_versions(tmp_path, monkeypatch):
    folder = tmp_path / "notebooks"
    (folder / "solutions").mkdir(parents=True)
    for rel in ("01_toy_qkv.ipynb", "solutions/01_toy_qkv.ipynb"):
        shutil.copy(ROOT / "notebooks" / rel, folder / rel)
        nb = json.loads((folder / rel).read_text(encoding="utf-8"))
        nb["metadata"] = OLD
        (folder / rel).write_text(json.dumps(nb, indent=1), encoding="utf-8")
    before = {rel: json.loads((folder / rel).read_text(encoding="utf-8"))["cells"]
              for rel in ("01_toy_qkv.ipynb", "solutions/01_toy_qkv.ipynb")}
    monkeypatch.setattr(run_notebooks, "NOTEBOOKS", folder)
    assert run_notebooks.main(["metadata"]) == 0
    for rel, cells in before.items():
        nb = json.loads((folder / rel).read_text(encoding="utf-8"))
        assert nb["metadata"] == run_notebooks.kernel_metadata(), rel
        assert nb["metadata"]["kernelspec"] == expected_kernelspec()
        assert nb["cells"] == cells, f"{rel}: a cell changed"


def test_every_stored_notebook_carries_the_metadata_jupyterlab_writes():
    """A notebook stored by another tool (or edited by hand) keeps the short metadata and opens modified."""
    stale = []
    for path in sorted((ROOT / "notebooks").glob("**/[0-9][0-9]_*.ipynb")):
        meta = json.loads(path.read_text(encoding="utf-8"))["metadata"]
        info = meta.get("language_info", {})
        # the Python version is the one the outputs were made with (3.11), not necessarily the one running
        if meta.get("kernelspec") != expected_kernelspec() or not info.get("version") \
                or info.get("mimetype") != "text/x-python" or "codemirror_mode" not in info:
            stale.append(path.relative_to(ROOT).as_posix())
    assert not stale, f"run `python tests/tools/run_notebooks.py metadata`: {stale}"
