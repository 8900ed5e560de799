"""Execute the course's notebooks with nbclient, each in a fresh kernel.

    python tests/tools/run_notebooks.py course [NAME ...]    # into build/, table of seconds
    python tests/tools/run_notebooks.py refresh [NAME ...]   # in place, refresh stored outputs
    python tests/tools/run_notebooks.py metadata [NAME ...]  # in place, only the notebook metadata

`course` is the headless run of the course: it writes executed copies to build/ and exits
non-zero if any notebook fails. `refresh` rewrites notebooks/*.ipynb with new outputs and
keeps only stable metadata (no execution timestamps), so nbval can replay them.
`refresh` also refreshes the solved versions in notebooks/solutions/. NAME filters notebooks by a
substring of their path under notebooks/ (`01` is both versions of 01, `solutions/01` the solved one).

The notebook metadata written is what JupyterLab writes when it opens the notebook on the course's
kernel: the kernelspec as the kernel names itself ("Python 3 (ipykernel)") and the language_info the
kernel reports (with its Python version). Anything less and JupyterLab fills it in on opening, so every
notebook showed as modified as soon as it opened, and closing it asked to save. `metadata` rewrites just
that, without running anything (both versions, like `refresh`).
"""

from __future__ import annotations

import functools
import subprocess
import sys
import time
import traceback
from pathlib import Path

import nbformat
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import start_new_kernel
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
BUILD = ROOT / "build"
TIMEOUT_PER_CELL = 600  # seconds; the slowest cell trains a small model in about two minutes


def execute(path: Path) -> nbformat.NotebookNode:
    """Run one notebook top to bottom in a fresh python3 kernel, from the notebooks folder."""
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb, timeout=TIMEOUT_PER_CELL, kernel_name="python3", record_timing=False,
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    )
    client.execute()
    return nb


WIDGET = "application/vnd.jupyter.widget-view+json"


@functools.cache
def kernel_metadata(kernel_name: str = "python3") -> dict:
    """The notebook metadata JupyterLab writes on opening a notebook with this kernel: the kernelspec as
    the kernel's spec names it and the language_info its kernel_info reply gives (a kernel is started once)."""
    spec = KernelSpecManager().get_kernel_spec(kernel_name)
    manager, client = start_new_kernel(kernel_name=kernel_name, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        info = client.kernel_info(reply=True, timeout=120)["content"]["language_info"]
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    return {
        "kernelspec": {"display_name": spec.display_name, "language": spec.language, "name": kernel_name},
        "language_info": info,
    }


def clean_metadata(nb: nbformat.NotebookNode) -> None:
    """Keep what nbval and Jupyter need; drop what changes from run to run.

    A progress bar (tqdm.auto) is a widget: its stored output would be a view of a model that exists only
    while the kernel runs, with the text of its first frame ("0%"). It is dropped; the learner sees it live.
    The notebook's metadata is kernel_metadata(): what JupyterLab would write in on opening, so it opens
    unmodified.
    """
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        cell.metadata.pop("ExecuteTime", None)
        if cell.cell_type == "code":
            cell.outputs = [o for o in cell.outputs if WIDGET not in o.get("data", {})]
    nb.metadata = nbformat.from_dict(kernel_metadata())


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("course", "refresh", "metadata"):
        print(__doc__)
        return 2
    mode, names = argv[0], argv[1:]
    found = sorted(NOTEBOOKS.glob("*.ipynb"))  # the learner versions: what `course` runs
    if mode in ("refresh", "metadata"):
        found += sorted(NOTEBOOKS.glob("solutions/*.ipynb"))  # and the solved ones beside them
    paths = [p for p in found if not names or any(n in p.relative_to(NOTEBOOKS).as_posix() for n in names)]
    if not paths:
        print(f"no notebooks match {names}")
        return 1
    if mode == "metadata":
        for path in paths:
            nb = nbformat.read(path, as_version=4)
            before = nbformat.writes(nb)
            nb.metadata = nbformat.from_dict(kernel_metadata())
            if nbformat.writes(nb) != before:
                nbformat.write(nb, path)
                print(f"{path.relative_to(NOTEBOOKS).as_posix()}: metadata rewritten", flush=True)
        return 0
    BUILD.mkdir(exist_ok=True)
    rows, failed = [], 0
    for path in paths:
        start = time.perf_counter()
        try:
            nb = execute(path)
            status = "passed"
        except Exception:  # a failing cell: report it and go on with the others
            nb, status = None, "FAILED"
            failed += 1
            traceback.print_exc(limit=1)
        seconds = time.perf_counter() - start
        if nb is not None:
            if mode == "refresh":
                clean_metadata(nb)
                nbformat.write(nb, path)
            else:
                nbformat.write(nb, BUILD / path.name)
        name = path.relative_to(NOTEBOOKS).as_posix()
        rows.append((name, seconds, status))
        print(f"{name}: {status} in {seconds:.1f} s", flush=True)
    width = max(len(r[0]) for r in rows)
    print(f"\n{'notebook':<{width}}  {'seconds':>7}  result")
    for name, seconds, status in rows:
        print(f"{name:<{width}}  {seconds:7.1f}  {status}")
    print(f"{'total':<{width}}  {sum(r[1] for r in rows):7.1f}  {len(rows) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
