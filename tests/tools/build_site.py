"""Build the course's website with Jupyter Book 1.x from the notebooks' stored outputs.

    python tests/tools/build_site.py            # stage build/book/, then sphinx-build into build/site/

Nothing is re-executed (execute_notebooks: off in book/_config.yml): the site shows the outputs
that nbval replays. The book's sources are staged into build/book/ on every run, from what is in
the repository now, so a new notebook gets its page without an edit here:

- the landing page: the course map, one row per notebook in notebooks/ (its question from the
  README's course-map row when it has one, else the notebook's own title);
- one page per learner notebook (notebooks/NN_*.ipynb, in course order), then the solved versions
  (notebooks/solutions/) in their own part of the table of contents;
- an API page: the README's attnlib section as its introduction, then autodoc of every public name;
- the sources page: the README's Sources section.

The build runs Sphinx with -W --keep-going: every warning is listed, then the build fails. The
warnings also go to build/site-warnings.txt, which tests/site/test_site.py checks is empty.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
BOOK_CONFIG = ROOT / "book" / "_config.yml"
STAGE = ROOT / "build" / "book"
SITE = ROOT / "build" / "site"
WARNINGS = ROOT / "build" / "site-warnings.txt"
BADGE = re.compile(r"\[!\[[^\]]*\]\([^)]*\)\]\(([^)]*)\)")  # [![alt](img)](target)


def readme_section(title: str) -> str:
    """The body of the README's `## title` section, up to the next `## ` heading."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, flags=re.M | re.S)
    if match is None:
        raise SystemExit(f"README.md has no '## {title}' section")
    return match.group(1).strip() + "\n"


def course_map_questions() -> dict[str, str]:
    """Notebook stem -> the question its README course-map row asks."""
    questions = {}
    for line in readme_section("Course map").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3:
            match = re.search(r"\(notebooks/([^)/]+)\.ipynb\)", cells[1])
            if match:
                questions[match.group(1)] = cells[2]
    return questions


def notebook_title(path: Path) -> str:
    """The first markdown heading of a notebook, without its #s."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            for line in "".join(cell["source"]).splitlines():
                if line.startswith("#"):
                    return line.lstrip("#").strip()
    return path.stem


def colab_badges(stem: str) -> tuple[str, str]:
    """The Colab addresses of the learner and solved versions, from the README's badges."""
    for line in readme_section("Course map").splitlines():
        if f"(notebooks/{stem}.ipynb)" in line:
            targets = BADGE.findall(line)
            if len(targets) == 2:
                return targets[0], targets[1]
    return "", ""


def stage_notebook(src: Path, dst: Path) -> None:
    """Copy a notebook, tagging the cells JupyterLab shows collapsed (check cells, setup) hide-input.

    Jupyter's own `source_hidden` metadata means nothing to myst-nb; its `hide-input` tag gives
    the same: the code folded behind a click, the output shown.
    """
    nb = json.loads(src.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell["cell_type"] == "code" and cell.get("metadata", {}).get("jupyter", {}).get("source_hidden"):
            tags = cell["metadata"].setdefault("tags", [])
            if "hide-input" not in tags:
                tags.append("hide-input")
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def landing_page(learner: list[Path], solved: set[str]) -> str:
    questions = course_map_questions()
    intro = (ROOT / "README.md").read_text(encoding="utf-8").split("\n## ", 1)[0]
    intro = intro.split("\n", 1)[1]  # drop the README's title line: the page has its own
    intro = "\n".join(line for line in intro.splitlines() if "badge" not in line and "(Colab:" not in line)
    rows = []
    for path in learner:
        stem = path.stem
        number = stem.split("_", 1)[0]
        question = questions.get(stem) or notebook_title(path)
        colab, colab_solved = colab_badges(stem)
        solved_link = f"[solved](notebooks/solutions/{stem}.ipynb)" if stem in solved else ""
        colab_links = " ".join(
            f"[{label}]({url})" for label, url in (("learner", colab), ("solved", colab_solved)) if url
        )
        rows.append(f"| {number} | [{stem}](notebooks/{stem}.ipynb) | {question} | {solved_link} | {colab_links} |")
    return (
        "# Attention, from the matrices up\n\n"
        + intro.strip()
        + "\n\n## Course map\n\n"
        + "Open the notebooks in order. Each page shows the notebook as it was last run, outputs and all.\n\n"
        + "| # | notebook | the question it answers | solved (for teachers) | open in Colab |\n"
        + "|---|---|---|---|---|\n"
        + "\n".join(rows)
        + "\n\nThe [attnlib API](api.md) and the course's [sources](sources.md) close the book.\n"
    )


def api_page() -> str:
    names = __import__("attnlib").__all__
    body = readme_section("attnlib")
    # eval-rst: autodoc writes reStructuredText, which a MyST page would read as Markdown.
    directives = "```{eval-rst}\n" + "\n".join(
        f".. autoclass:: attnlib.{name}\n   :members:\n" if name[0].isupper() else f".. autofunction:: attnlib.{name}\n"
        for name in names
    ) + "```\n"
    return (
        "# attnlib API\n\n"
        + "The helpers every notebook imports. The table is the README's; the entries below are made from\n"
        + "the docstrings (shapes in the course's legend: B, H, Tq, Tk, E, Dh).\n\n"
        + body
        + "\n## Reference\n\n"
        + directives
    )


def sources_page() -> str:
    return "# Sources\n\n" + readme_section("Sources")


def toc(learner: list[Path], solved: list[Path]) -> str:
    lines = ["format: jb-book", "root: intro", "parts:", "  - caption: The course", "    chapters:"]
    lines += [f"      - file: notebooks/{p.stem}" for p in learner]
    if solved:
        lines += ["  - caption: Solved notebooks (for teachers)", "    chapters:"]
        lines += [f"      - file: notebooks/solutions/{p.stem}" for p in solved]
    lines += ["  - caption: Reference", "    chapters:", "      - file: api", "      - file: sources"]
    return "\n".join(lines) + "\n"


def stage() -> None:
    learner = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
    solved = sorted(NOTEBOOKS.glob("solutions/[0-9][0-9]_*.ipynb"))
    if not learner:
        raise SystemExit("no notebooks in notebooks/")
    shutil.rmtree(STAGE, ignore_errors=True)
    STAGE.mkdir(parents=True)
    for path in learner + solved:
        stage_notebook(path, STAGE / path.relative_to(ROOT))
    shutil.copy(BOOK_CONFIG, STAGE / "_config.yml")
    shutil.copytree(ROOT / "images", STAGE / "images")
    (STAGE / "_toc.yml").write_text(toc(learner, solved), encoding="utf-8")
    (STAGE / "intro.md").write_text(landing_page(learner, {p.stem for p in solved}), encoding="utf-8")
    (STAGE / "api.md").write_text(api_page(), encoding="utf-8")
    (STAGE / "sources.md").write_text(sources_page(), encoding="utf-8")


def build() -> int:
    bindir = Path(sys.executable).parent
    subprocess.run([bindir / "jupyter-book", "config", "sphinx", str(STAGE)], check=True, stdout=subprocess.DEVNULL)
    shutil.rmtree(SITE, ignore_errors=True)
    WARNINGS.unlink(missing_ok=True)
    command = [
        sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", "-w", str(WARNINGS),
        "-d", str(STAGE / "_doctrees"), str(STAGE), str(SITE),
    ]
    return subprocess.run(command).returncode


if __name__ == "__main__":
    stage()
    sys.exit(build())
