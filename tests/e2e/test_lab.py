"""Every learner notebook, run in JupyterLab in a real browser, as a learner would run it.

For each notebook, first what a learner meets on opening it (issue 33):
- it opens unmodified: once the kernel has started and JupyterLab has written the kernel's name and
  language into the notebook, the notebook is still not marked modified (closing it asks nothing);
- its setup cell, collapsed, shows the line written for the learner ("# Setup: run this cell first ...").
Then Kernel > Restart Kernel and Run All Cells, wait until every cell has run and the kernel is idle,
then assert that
- no cell gave an error output (read from the notebook's model in the page), and none shows tqdm's red
  "TqdmWarning: IProgress not found" (ipywidgets missing: a progress bar printed as text, not drawn),
- every figure rendered: as many <img> elements with a nonzero size as the stored notebook has
  image outputs,
- the check cells (`# check:`) and the setup cell show their code collapsed and their output,
- the self-check answers are hidden until clicked: a <details> shows only "Answer" until its
  summary is clicked, then the answer's text.
One screenshot per notebook goes to build/e2e/NN_name.png (also when an assertion fails).
`E2E_SOLVED=1 make e2e` runs the solved versions too.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(os.environ.get("E2E_OUT") or ROOT / "build" / "e2e").resolve()  # as in conftest.py

NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
if os.environ.get("E2E_SOLVED"):
    NOTEBOOKS += sorted((ROOT / "notebooks" / "solutions").glob("[0-9][0-9]_*.ipynb"))
RUN_TIMEOUT_MS = 15 * 60 * 1000  # the slowest notebook (06) trains two small models: ~2 minutes idle, more when busy

# The open notebook's model, read through the app JupyterLab exposes (--LabApp.expose_app_in_browser).
CELLS_JS = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const cells = panel.content.widgets.map(w => w.model.toJSON());
  return cells.map(c => ({type: c.cell_type, source: Array.isArray(c.source) ? c.source.join('') : c.source,
                          count: c.execution_count ?? null, outputs: c.outputs || []}));
}"""
# Once the kernel has started, JupyterLab writes its kernelspec and language_info into the notebook (kernel.info
# and kernel.spec resolved); read the model's dirty flag for 2 s after that.
OPENED_JS = """async () => {
  const panel = window.jupyterapp.shell.currentWidget;
  const kernel = panel.sessionContext.session.kernel;
  await kernel.info;
  await kernel.spec;
  let dirty = false;
  for (let i = 0; i < 10; i++) {
    await new Promise(resolve => setTimeout(resolve, 200));
    dirty = dirty || panel.content.model.dirty;
  }
  return {dirty, metadata: panel.content.model.toJSON().metadata};
}"""
SETUP_LINE = "# Setup: run this cell first"
KERNEL_JS = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const kernel = panel && panel.sessionContext.session && panel.sessionContext.session.kernel;
  return kernel ? kernel.status : 'none';
}"""


def stored(path):
    """The stored notebook: its cells, image-output count, hidden-code cells and <details> count."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    images = sum(
        1 for c in code for o in c.get("outputs", []) if any(k.startswith("image/") for k in o.get("data", {}))
    )
    hidden = [i for i, c in enumerate(nb["cells"]) if c.get("metadata", {}).get("jupyter", {}).get("source_hidden")]
    checks = [
        i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code" and "".join(c["source"]).startswith("# check:")
    ]
    details = sum("".join(c["source"]).count("<details>") for c in nb["cells"] if c["cell_type"] == "markdown")
    return nb, images, hidden, checks, details


def output_text(output: dict) -> str:
    """The text an output shows: a stream's text, a result's text/plain, an error's traceback."""
    def joined(value):
        return "".join(value) if isinstance(value, list) else (value or "")

    return joined(output.get("text")) + joined(output.get("data", {}).get("text/plain")) + joined(
        output.get("traceback"))


def run_all(page):
    """Kernel menu > Restart Kernel and Run All Cells..., confirmed in the dialog."""
    page.locator("#jp-MainMenu").get_by_text("Kernel", exact=True).click()
    page.get_by_role("menuitem", name="Restart Kernel and Run All Cells…").click()
    page.locator(".jp-Dialog .jp-Dialog-button.jp-mod-accept").click()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.relative_to(ROOT / "notebooks").as_posix() for p in NOTEBOOKS])
def test_notebook_runs_in_jupyterlab(lab, browser, path):
    base, token, _ = lab
    nb, n_images, hidden, checks, n_details = stored(path)
    rel = path.relative_to(ROOT / "notebooks").as_posix()
    shot = OUT / (rel.replace("/", "_").removesuffix(".ipynb") + ".png")
    page = browser.new_page()
    try:
        page.goto(f"{base}/lab/tree/{rel}?token={token}&reset")
        page.wait_for_function(f"() => ({KERNEL_JS})() === 'idle'", timeout=180_000)
        page.locator(".jp-Notebook .jp-Cell").first.wait_for()
        opened = page.evaluate(OPENED_JS)
        assert not opened["dirty"], (
            f"{rel} shows as modified as soon as it opens: JupyterLab rewrote its metadata {nb['metadata']} "
            f"as {opened['metadata']} (python tests/tools/run_notebooks.py metadata stores what it writes)")
        setup = next(i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code")
        first_line = page.locator(".jp-Notebook .jp-Cell").nth(setup).locator(".jp-InputPlaceholder").inner_text()
        assert first_line.strip().startswith(SETUP_LINE), f"{rel}: the collapsed setup cell shows {first_line!r}"
        # Close the file browser: room for the notebook in the screenshot.
        page.evaluate("() => window.jupyterapp.commands.execute('application:toggle-left-area')")
        run_all(page)
        n_code = sum(c["cell_type"] == "code" for c in nb["cells"])
        # Done when the kernel is idle and every code cell has an execution count from this run, or a cell
        # gave an error (Run All stops there; the assertion below reports it).
        page.wait_for_function(
            f"""() => {{
              const cells = ({CELLS_JS})().filter(c => c.type === 'code');
              const failed = cells.some(c => c.outputs.some(o => o.output_type === 'error'));
              const done = cells.length === {n_code} && cells.every(c => c.count !== null)
                           && cells[cells.length - 1].count === {n_code};
              return (done || failed) && ({KERNEL_JS})() === 'idle';
            }}""",
            timeout=RUN_TIMEOUT_MS, polling=1000,
        )
        cells = page.evaluate(CELLS_JS)

        errors = [(i, o.get("ename"), o.get("evalue")) for i, c in enumerate(cells) for o in c["outputs"]
                  if o.get("output_type") == "error"]
        assert errors == [], f"{rel}: cells raised {errors}"
        tqdm = [(i, text[:200]) for i, c in enumerate(cells) for o in c["outputs"] for text in [output_text(o)]
                if "TqdmWarning" in text or "IProgress not found" in text]
        assert tqdm == [], f"{rel}: tqdm prints a warning instead of a progress bar: {tqdm}"
        assert [c["count"] for c in cells if c["type"] == "code"] == list(range(1, n_code + 1))

        # Every figure: an <img> with a nonzero size per stored image output.
        imgs = page.locator(".jp-Notebook .jp-OutputArea-output img")
        assert imgs.count() == n_images, f"{rel}: {imgs.count()} images in the page, {n_images} stored"
        for k in range(imgs.count()):
            img = imgs.nth(k)
            img.scroll_into_view_if_needed()
            size = img.evaluate("i => [i.complete, i.naturalWidth, i.getBoundingClientRect().width, "
                                "i.getBoundingClientRect().height]")
            assert size[0] and size[1] > 0 and size[2] > 0 and size[3] > 0, f"{rel}: figure {k + 1} not drawn: {size}"

        # Check cells (and the setup cell): code collapsed behind a placeholder, output shown.
        dom_cells = page.locator(".jp-Notebook .jp-Cell")  # in notebook order (windowingMode none: all of them)
        assert dom_cells.count() == len(cells)
        assert set(checks) <= set(hidden), f"{rel}: a check cell is stored with its code shown"
        for i in hidden:
            cell = dom_cells.nth(i)
            assert cell.locator(".jp-InputPlaceholder").count() == 1, f"{rel}: cell {i} is not collapsed"
            assert not cell.locator(".jp-InputArea-editor").is_visible(), f"{rel}: cell {i} shows its code"
            assert cell.locator(".jp-OutputPlaceholder").count() == 0, f"{rel}: cell {i} hides its output"
        for i in checks:
            outputs = dom_cells.nth(i).locator(".jp-OutputArea-output")
            assert outputs.count() == len(cells[i]["outputs"])

        # Self-check answers: hidden until the summary is clicked.
        details = page.locator(".jp-RenderedMarkdown details")
        assert details.count() == n_details, f"{rel}: {details.count()} <details> in the page, {n_details} stored"
        closed = details.evaluate_all("ds => ds.filter(d => !d.open).length")
        assert closed == n_details, f"{rel}: {n_details - closed} self-check answers open before a click"
        if n_details:
            first = details.first
            first.scroll_into_view_if_needed()
            summary = first.locator("summary").inner_text().strip()
            assert first.inner_text().strip() == summary, f"{rel}: the first answer shows before a click"
            first.locator("summary").click()
            page.wait_for_function("d => d.open", arg=first.element_handle())
            shown = first.inner_text().strip()
            assert len(shown) > len(summary) + 10, f"{rel}: the first answer stays hidden after a click"

        # The screenshot: the first figure in view (or the top of the notebook).
        if n_images:
            imgs.first.scroll_into_view_if_needed()
    finally:
        OUT.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(shot))
        page.close()
