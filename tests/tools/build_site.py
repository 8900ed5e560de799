"""Build the course's website with Jupyter Book 1.x from the notebooks' stored outputs.

    python tests/tools/build_site.py            # stage build/book/, then sphinx-build into build/site/

Nothing is re-executed (execute_notebooks: off in book/_config.yml): the site shows the outputs
that nbval replays. The book's sources are staged into build/book/ on every run, from what is in
the repository now, so a new notebook or a new page under book/ gets its place without an edit here:

- the landing page: the README's introduction under the title image (images/title.png), then the
  course map as one card per notebook in notebooks/ (its question from the README's course-map row
  when it has one, else the notebook's own title; one of its stored figures, its alt text what the
  notebook's prose says the figure shows; its Colab link), then the solved versions in a collapsed list;
- one page per learner notebook (notebooks/NN_*.ipynb, in course order); the solved versions
  (notebooks/solutions/), titled "... (solved)", under the "Teaching" part of the table of contents,
  folded under their own page so the sidebar does not list every title twice;
- every book/*.md page (the README's reference parts moved there: conventions, API, common errors,
  sources, install, commands, testing, benchmarks, publishing, and any page added later, such as
  teachers.md), with links written for GitHub (../images/, ../notebooks/) rewritten for the site;
  book/api.md gets the autodoc of every public name of attnlib appended.

What the notebooks' pages change from the notebooks (in the staged copies only, never in notebooks/):
- under the title, a line with the notebook's "Open in Colab" link (from pyproject.toml's Repository,
  as `make colab-links` writes the README's badges) and the versions its outputs were made with; the
  setup cell those versions come from (it installs attnlib on Colab) is left out of the page;
- `# NBVAL_...` markers (nbval's, for the replay) are dropped from the code cells;
- check cells JupyterLab shows collapsed get myst-nb's `hide-input` tag;
- the self-check answers, `<details><summary>Answer</summary> ... </details>` in HTML, become MyST
  dropdowns, so the Markdown and the math inside them are rendered;
- every figure's alt text is what the notebook says it shows: the last paragraph of the prose before
  it (the sentence that leads into the cell), as plain text, else the first of the prose after it;
- every figure links to its full-size file (a click, or a tap on a phone, opens it to zoom into); a
  figure wider than the text column is given the column's width, and one much wider (e.g. the 6 x 12
  grid of heads in 09) the full width of the page.

The site's footer names the course, its licence and its repository (pyproject.toml's address).

The build runs Sphinx with -W --keep-going: every warning is listed, then the build fails. The
warnings also go to build/site-warnings.txt, which tests/site/test_site.py checks is empty.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
BOOK = ROOT / "book"
STAGE = ROOT / "build" / "book"
SITE = ROOT / "build" / "site"
WARNINGS = ROOT / "build" / "site-warnings.txt"
BADGE = re.compile(r"\[!\[[^\]]*\]\([^)]*\)\]\(([^)]*)\)")  # [![alt](img)](target)
NBVAL_MARKER = re.compile(r"^[ \t]*#[ \t]*NBVAL_[A-Z_]+[ \t]*\n?", flags=re.M)
DETAILS = re.compile(
    r"^(?P<indent>[ \t]*)<details>\s*<summary>(?P<summary>.*?)</summary>(?P<body>.*?)</details>[ \t]*$",
    flags=re.M | re.S,
)
COLUMN_PX = 760  # a figure wider than this (in pixels at the figure's dpi) is shrunk by the text column
FULL_WIDTH_PX = 1200  # and one wider than this gets the page's full width

# The book's pages, by part of the table of contents; a page listed here but missing is left out
# (teachers.md comes with the grading tools), a page under book/ not listed goes to the last part.
PARTS = [
    ("Reference", ["conventions", "api", "common-errors", "sources"]),
    ("Teaching", ["teachers", "solutions"]),
    ("Running the course", ["install", "commands", "testing", "benchmarks", "publishing"]),
]
GENERATED = {"intro", "solutions"}  # pages this script writes


def readme_section(title: str) -> str:
    """The body of the README's `## title` section, up to the next `## ` heading."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, flags=re.M | re.S)
    if match is None:
        raise SystemExit(f"README.md has no '## {title}' section")
    return match.group(1).strip() + "\n"


def course_map_rows() -> dict[str, list[str]]:
    """Notebook stem -> the cells of its README course-map row (`| [NN](notebooks/NN_x.ipynb) | question | ...`)."""
    rows = {}
    for line in readme_section("Course map").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        for cell in cells[:2]:
            match = re.search(r"\(notebooks/([^)/]+)\.ipynb\)", cell)
            if match:
                rows[match.group(1)] = cells
                break
    return rows


def course_map_question(stem: str, rows: dict[str, list[str]]) -> str:
    """The question of a notebook's course-map row: the first cell after its link that is not a link."""
    cells = rows.get(stem, [])
    for i, cell in enumerate(cells):
        if f"(notebooks/{stem}.ipynb)" in cell:
            for text in cells[i + 1:]:
                if text and "](" not in text:
                    return text
    return ""


def notebook_title(nb: dict, fallback: str) -> str:
    """The first markdown heading of a notebook, without its #s."""
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            for line in "".join(cell["source"]).splitlines():
                if line.startswith("#"):
                    return line.lstrip("#").strip()
    return fallback


def colab_badges(stem: str) -> tuple[str, str]:
    """The Colab addresses of the learner and solved versions, from the README's badges."""
    for line in readme_section("Course map").splitlines():
        if f"(notebooks/{stem}.ipynb)" in line:
            targets = [t for t in BADGE.findall(line) if "colab.research.google.com" in t]
            learner = next((t for t in targets if "/notebooks/solutions/" not in t), "")
            solved = next((t for t in targets if "/notebooks/solutions/" in t), "")
            return learner, solved
    return "", ""


def png_width(data: str | list[str]) -> int:
    """The width in pixels of a base64 PNG, from its IHDR chunk."""
    head = base64.b64decode("".join(data)[:44])
    return struct.unpack(">I", head[16:20])[0]


def details_to_dropdown(text: str) -> str:
    """`<details><summary>S</summary> body </details>` -> a MyST dropdown, at the same indentation.

    Inside raw HTML, MyST renders neither Markdown nor math; inside a dropdown it renders both.
    """

    def replace(match: re.Match) -> str:
        indent = match.group("indent")
        lines = match.group("body").strip().splitlines()
        body = [lines[0].strip()] if lines else []
        for line in lines[1:]:
            body.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
        inner = "\n".join(f"{indent}{line}" if line.strip() else "" for line in body)
        summary = re.sub(r"<[^>]+>", "", match.group("summary")).strip() or "Answer"
        return f"\n{indent}:::{{dropdown}} {summary}\n{inner}\n{indent}:::\n"

    return DETAILS.sub(replace, text)


TEX_WORDS = {
    r"\tau": "τ", r"\cdot": "·", r"\times": "×", r"\approx": "≈", r"\le": "≤", r"\ge": "≥", r"\to": "→",
    r"\lVert": "‖", r"\rVert": "‖", r"\partial": "∂", r"\sum": "Σ", r"\top": "ᵀ", r"\infty": "∞",
    r"\pm": "±", r"\in": "∈", r"\neq": "≠", r"\,": " ", r"\;": " ", r"\!": "",
}
ALT_CHARS = 280  # an alt text longer than this keeps the caption's last sentences that fit


def tex_as_text(tex: str) -> str:
    """A formula of the prose as a screen reader can read it: `\\sqrt{d_k}` -> `√d_k`, `\\tau` -> `τ`."""
    tex = re.sub(r"\\sqrt\{([^{}]*)\}", r"√\1", tex)
    tex = re.sub(r"\^\{?\\top\}?", "ᵀ", tex)
    for command, text in sorted(TEX_WORDS.items(), key=lambda kv: -len(kv[0])):
        tex = re.sub(re.escape(command) + r"(?![A-Za-z])", text, tex)
    tex = re.sub(r"\\[A-Za-z]+\s*", "", tex)  # \mathbf, \operatorname, \left, ...: their argument stays
    return tex.replace("{", "").replace("}", "")


def plain_text(markdown: str) -> str:
    """Markdown prose as the words a screen reader reads: no markup, links as their text, math as text."""
    text = re.sub(r"!\[[^\]]*\]\([^)]*\)", "", markdown)  # pictures
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links: their text
    text = re.sub(r"\$\$?([^$]+)\$\$?", lambda m: tex_as_text(m.group(1)), text)
    text = re.sub(r"<[^>]+>", "", text)
    text = re.sub(r"(\*\*|__|\*|`)", "", text)
    text = re.sub(r"(?<!\w)_([^_]+)_(?!\w)", r"\1", text)
    return " ".join(text.split())


def caption(cells: list[dict], index: int) -> str:
    """What the figure of cell `index` shows, in the notebook's own words: the last paragraph of the prose
    before it (the sentence that says what the next cell shows), else the first of the prose after it."""
    before = next((c for c in reversed(cells[:index]) if c["cell_type"] == "markdown"), None)
    after = next((c for c in cells[index + 1:] if c["cell_type"] == "markdown"), None)
    paragraphs = [p for p in re.split(r"\n\s*\n", "".join(before["source"]) if before else "") if p.strip()]
    if paragraphs:
        text = plain_text(paragraphs[-1].lstrip("#").strip())
    elif after is not None:
        first = [p for p in re.split(r"\n\s*\n", "".join(after["source"])) if p.strip()]
        text = plain_text(first[0].lstrip("#").strip()) if first else ""
    else:
        text = ""
    if len(text) > ALT_CHARS:  # the last sentences that fit, else the last sentence cut at a word
        sentences = re.split(r"(?<=[.!?:])\s+(?=[A-Z0-9(])", text)
        kept = ""
        for sentence in reversed(sentences):
            if len(sentence) + len(kept) + 1 > ALT_CHARS:
                break
            kept = f"{sentence} {kept}".strip()
        text = kept or text[-ALT_CHARS:].split(" ", 1)[-1]
    text = re.sub(r"[:;,]$", ".", text.strip())
    return text or "A figure drawn by the code above."


def colab_url(notebook: Path) -> str:
    """The notebook's "Open in Colab" address, from the course's repository (pyproject.toml)."""
    rel = notebook.relative_to(ROOT).as_posix()
    repo = repository_url().removeprefix("https://github.com/")
    return f"https://colab.research.google.com/github/{repo}/blob/main/{rel}"


def setup_versions(cell: dict) -> str:
    """The setup cell's stored version line, "python 3.11.7 | torch 2.13.0 | ...", as "python 3.11.7, torch ..."."""
    for output in cell.get("outputs", []):
        text = "".join(output.get("text", "")) if output.get("output_type") == "stream" else ""
        for line in text.splitlines():
            if line.startswith("python ") and " | " in line:
                return ", ".join(part.strip() for part in line.split(" | "))
    return ""


def stage_notebook(src: Path, dst: Path, solved: bool = False) -> None:
    """Copy a notebook for the site: markers out, collapsed cells folded, answers and wide figures fixed."""
    nb = json.loads(src.read_text(encoding="utf-8"))
    cells = nb["cells"]
    # The setup cell installs attnlib on Colab: nothing to read on the site. Its place goes to a line under the
    # title: the notebook's Colab link and the versions its outputs were made with.
    setup = next((c for c in cells if c["cell_type"] == "code"), None)
    if setup is not None and "google.colab" not in "".join(setup["source"]):
        setup = None  # a notebook whose first code cell is not the setup cell keeps it
    versions = setup_versions(setup) if setup is not None else ""
    install = "../" * (len(src.relative_to(NOTEBOOKS).parts) - 1) + "../install.md"
    run_it = (
        f"[Open in Colab]({colab_url(src)}) to run this notebook in your browser, or run it on your machine"
        f" with `make lab` ([installing the course]({install}))."
        + (f" The outputs on this page were made with {versions}." if versions else "")
    )
    titled = False
    for index, cell in enumerate(cells):
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            source = details_to_dropdown(source)
            if not titled and source.lstrip().startswith("# "):
                first, _, rest = source.lstrip().partition("\n")
                source = f"{first}{' (solved)' if solved else ''}\n\n{run_it}\n{rest}"
                titled = True
            cell["source"] = source
            continue
        if cell["cell_type"] != "code":
            continue
        cell["source"] = NBVAL_MARKER.sub("", source)
        metadata = cell.setdefault("metadata", {})
        tags = metadata.setdefault("tags", [])
        if cell is setup and "remove-cell" not in tags:
            tags.append("remove-cell")
        # Jupyter's own `source_hidden` means nothing to myst-nb; its `hide-input` tag gives the same:
        # the code folded behind a click, the output shown.
        if metadata.get("jupyter", {}).get("source_hidden") and "hide-input" not in tags:
            tags.append("hide-input")
        figures = [o for o in cell.get("outputs", []) if "image/png" in o.get("data", {})]
        if figures:
            # the alt text: what the figure shows, in the words of the prose around it (not a file name)
            metadata.setdefault("mystnb", {}).setdefault("image", {})["alt"] = caption(cells, index)
        for output in figures:
            width = png_width(output["data"]["image/png"])
            # Any width makes Sphinx link the image to its full-size file (html_scaled_image_link): a click,
            # or a tap on a phone, opens it alone, to zoom into. A figure wider than the column is shrunk to it.
            output.setdefault("metadata", {}).setdefault("image/png", {})["width"] = (
                "100%" if width > COLUMN_PX else f"{width}px")
            if width > FULL_WIDTH_PX and "full-width" not in tags:
                tags.append("full-width")
    if not titled:
        cells.insert(0, {"cell_type": "markdown", "metadata": {}, "source": run_it})
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


# The figure each notebook's card shows: the first image output of the first cell whose source holds
# this phrase. A notebook not listed here, or whose phrase is gone, shows its first figure of a card's
# shape (wider than high, not a long strip), else its first figure.
CARD_FIGURES = {  # a phrase of the code cell whose figure is the notebook's card: a main-line figure
    "01": "show_heatmaps(self_weights",
    "02": "rows sum to 1",
    "03": "Dot products grow with the width",
    "04": "show_heatmaps(weights, positions, positions, titles=sentences",
    "05": "The six steps of vec_mha",  # split -> attend -> merge on the running example (section 6)
    "06": "show_alignment(run_weights",  # the trained reader's alignment on the running example
    "07": "sinusoidal encodings, E = ",
    "08": "white tiles skipped",
    "09": "attention sink",
    "10": "Two-layer attention-only model",  # the loss curves and the phase change
}


def thumbnail(nb: dict, number: str, dst: Path) -> str | None:
    """Save one of the notebook's stored figures as its card's picture; return what it shows (None: no figure)."""
    figures = [
        (i, "".join(c["source"]), o["data"]["image/png"]) for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code"
        for o in c.get("outputs", []) if "image/png" in o.get("data", {})
    ]
    if not figures:
        return None

    def card_shaped(png) -> bool:
        head = base64.b64decode("".join(png)[:44])
        width, height = struct.unpack(">II", head[16:24])
        return width >= 500 and 1.3 <= width / height <= 3.5

    phrase = CARD_FIGURES.get(number)
    index, _, chosen = (
        next((f for f in figures if phrase and phrase in f[1]), None)
        or next((f for f in figures if card_shaped(f[2])), None)
        or figures[0]
    )
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_bytes(base64.b64decode("".join(chosen)))
    return caption(nb["cells"], index)


def readme_intro() -> str:
    """The README's introduction (before its first `## `), without its title, pictures and badges."""
    intro = (ROOT / "README.md").read_text(encoding="utf-8").split("\n## ", 1)[0]
    intro = intro.split("\n", 1)[1]
    keep = [
        line for line in intro.splitlines()
        if "badge" not in line and "(Colab:" not in line and not line.startswith("![")
    ]
    return "\n".join(keep).strip() + "\n"


def landing_page(learner: list[Path], solved: set[str]) -> str:
    rows = course_map_rows()
    cards, solved_rows = [], []
    for path in learner:
        stem = path.stem
        nb = json.loads(path.read_text(encoding="utf-8"))
        title = notebook_title(nb, stem)
        question = course_map_question(stem, rows)
        colab, colab_solved = colab_badges(stem)
        number = stem.split("_", 1)[0]
        heading = question or title.split("·", 1)[-1].strip()
        card = [f":::{{grid-item-card}} Notebook {number}", ":class-card: course-card"]
        shows = thumbnail(nb, number, STAGE / "_static" / "map" / f"{stem}.png")
        if shows is not None:
            card += [f":img-top: _static/map/{stem}.png", f":img-alt: {shows}"]
        card += ["", f"**[{heading}](notebooks/{stem}.ipynb)**", ""]
        card += [f"[Open in Colab]({colab})" if colab else "", ":::"]
        cards.append("\n".join(card))
        if stem in solved:
            links = f"[solved](notebooks/solutions/{stem}.ipynb)"
            if colab_solved:
                links += f" · [open in Colab]({colab_solved})"
            solved_rows.append(f"| {title} | {links} |")
    parts = [
        "# Attention, from the matrices up\n",
        "```{image} images/title.png\n:alt: A sentence's attention scores, the same scores with the future masked,"
        " and the weights after softmax\n:class: title-image\n:target: images/title.png\n```\n",
        readme_intro(),
        "## Course map\n",
        "Open the notebooks in order: each one asks one question and answers it with small cases you can"
        " predict, then exercises. Each page shows the notebook as it was last run, outputs and all.\n",
        "::::{grid} 1 1 2 2\n:gutter: 3\n\n" + "\n\n".join(cards) + "\n::::\n",
    ]
    if solved_rows:
        parts.append(
            ":::{dropdown} Solved notebooks (for teachers)\n:class-container: solved-notebooks\n\n"
            "The same notebooks with every exercise solved; see [For teachers](solutions.md).\n\n"
            "| notebook | solved version |\n|---|---|\n" + "\n".join(solved_rows) + "\n:::\n"
        )
    parts.append(
        "## Where to go next\n\n"
        "- [Shapes and masks](conventions.md): the shape legend and the one mask polarity of the course.\n"
        "- [attnlib API](api.md) and [common errors](common-errors.md): the helper package every notebook"
        " imports.\n"
        "- [Sources](sources.md): the documents and papers the course follows.\n"
        "- [Installing the course](install.md) on Linux, macOS, Windows, conda, Binder or Colab.\n"
    )
    return "\n".join(parts)


def solutions_page(solved: list[Path]) -> str:
    lines = [
        "# Solved notebooks\n",
        "Each notebook with every exercise solved, as a teacher reads it. They are the source of the learner",
        "notebooks: each solution sits between `### BEGIN SOLUTION` and `### END SOLUTION`, as nbgrader",
        "spells it, and `make exercises` makes the learner versions from them.\n",
    ]
    for path in solved:
        nb = json.loads(path.read_text(encoding="utf-8"))
        lines.append(f"- [{notebook_title(nb, path.stem)}](notebooks/solutions/{path.stem}.ipynb)")
    return "\n".join(lines) + "\n"


def api_reference() -> str:
    names = __import__("attnlib").__all__
    # eval-rst: autodoc writes reStructuredText, which a MyST page would read as Markdown.
    # A class's own methods; extra_repr is torch's printing hook, nothing a learner calls.
    cls = ".. autoclass:: attnlib.{}\n   :members:\n   :exclude-members: extra_repr\n"
    directives = "```{eval-rst}\n" + "\n".join(
        cls.format(name) if name[0].isupper() else f".. autofunction:: attnlib.{name}\n" for name in names
    ) + "```\n"
    return (
        "\n## Reference\n\n"
        "Made from the docstrings (shapes in the course's legend: B, H, Tq, Tk, E, Dh; see\n"
        "[Shapes and masks](conventions.md)).\n\n" + directives
    )


def repository_url() -> str:
    """The course's public address, from pyproject.toml (the one `make colab-links` sets)."""
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["urls"]["Repository"]


def footer() -> str:
    """The footer's line: the course's name, its licence (pyproject.toml) and its repository."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    licence = project.get("license")
    licence = licence if isinstance(licence, str) else (licence or {}).get("text", "")
    return (
        "<p><em>Attention, from the matrices up</em>: a course of Jupyter notebooks"
        + (f", {licence} licence" if licence else "")
        + f". Source, issues and the notebooks to run: <a href=\"{repository_url()}\">{repository_url()}</a>.</p>"
    )


def stage_page(src: Path) -> None:
    """Copy a book/ page, its links written for GitHub made to work on the site.

    ../images/ and ../notebooks/ are in the site too; any other file of the repository (../README.md,
    ../Makefile, ../tests/...) is not, so its link goes to the file on the course's repository.
    """
    text = src.read_text(encoding="utf-8")
    text = re.sub(r"\]\(\.\./(images|notebooks)/", r"](\1/", text)
    text = re.sub(r"\]\(\.\./(?!images/|notebooks/)([^)\s]+)\)", rf"]({repository_url()}/blob/main/\1)", text)
    if src.stem == "api":
        text = text.rstrip("\n") + "\n" + api_reference()
    (STAGE / src.name).write_text(text, encoding="utf-8")


def toc(learner: list[Path], solved: list[Path], pages: set[str]) -> str:
    lines = ["format: jb-book", "root: intro", "parts:", "  - caption: The course", "    chapters:"]
    lines += [f"      - file: notebooks/{p.stem}" for p in learner]
    listed = set()
    for caption, names in PARTS:
        present = [n for n in names if n in pages and (n != "solutions" or solved)]
        if caption == PARTS[-1][0]:
            present += sorted(pages - GENERATED - {n for _, ns in PARTS for n in ns})
        if not present:
            continue
        lines += [f"  - caption: {caption}", "    chapters:"]
        for name in present:
            lines.append(f"      - file: {name}")
            if name == "solutions":
                lines.append("        sections:")
                lines += [f"          - file: notebooks/solutions/{p.stem}" for p in solved]
            listed.add(name)
    return "\n".join(lines) + "\n"


def stage() -> None:
    learner = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
    solved = sorted(NOTEBOOKS.glob("solutions/[0-9][0-9]_*.ipynb"))
    if not learner:
        raise SystemExit("no notebooks in notebooks/")
    shutil.rmtree(STAGE, ignore_errors=True)
    STAGE.mkdir(parents=True)
    for path in learner:
        stage_notebook(path, STAGE / path.relative_to(ROOT))
    for path in solved:
        stage_notebook(path, STAGE / path.relative_to(ROOT), solved=True)
    config = (BOOK / "_config.yml").read_text(encoding="utf-8")
    config = re.sub(r"^(\s*extra_footer:).*$", lambda m: f"{m.group(1)} {json.dumps(footer())}", config,
                    count=1, flags=re.M)
    (STAGE / "_config.yml").write_text(config, encoding="utf-8")
    for folder in ("_static", "_ext", "_templates"):
        if (BOOK / folder).is_dir():
            shutil.copytree(BOOK / folder, STAGE / folder, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "images", STAGE / "images")
    pages = set()
    for page in sorted(BOOK.glob("*.md")):
        if page.stem not in GENERATED:
            stage_page(page)
            pages.add(page.stem)
    if solved:
        (STAGE / "solutions.md").write_text(solutions_page(solved), encoding="utf-8")
        pages.add("solutions")
    (STAGE / "intro.md").write_text(landing_page(learner, {p.stem for p in solved}), encoding="utf-8")
    (STAGE / "_toc.yml").write_text(toc(learner, solved, pages), encoding="utf-8")


def build() -> int:
    bindir = Path(sys.executable).parent
    subprocess.run([bindir / "jupyter-book", "config", "sphinx", str(STAGE)], check=True, stdout=subprocess.DEVNULL)
    shutil.rmtree(SITE, ignore_errors=True)
    WARNINGS.unlink(missing_ok=True)
    command = [
        sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", "-w", str(WARNINGS),
        "-d", str(STAGE / "_doctrees"), str(STAGE), str(SITE),
    ]
    # `jupyter-book config sphinx` does not put the book's local extensions (book/_ext) on the path
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(STAGE / "_ext"), env.get("PYTHONPATH", "")) if p)
    return subprocess.run(command, env=env).returncode


if __name__ == "__main__":
    stage()
    sys.exit(build())
