"""The website `make site` built into build/site/: a page per notebook, every figure, no warning.

Run by `make site` after the build (tests/conftest.py keeps tests/site/ out of `make test`).
The expected pages and figures are read from the notebooks in the repository, not from the
build's own table of contents, so a notebook the build left out fails here. Each defect the site
once had has a test that keeps it fixed: raw `$...$` in the self-check answers, nbval's markers in
the code, wide figures shrunk to the column, two "Parameters" lists per API entry, formulas as plain
text, every title twice in the sidebar, a README that was also the reference manual.
"""

from __future__ import annotations

import html as htmllib
import json
import re
import struct
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "build" / "site"
WARNINGS = ROOT / "build" / "site-warnings.txt"
LEARNER = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
SOLVED = sorted((ROOT / "notebooks" / "solutions").glob("[0-9][0-9]_*.ipynb"))
NOTEBOOKS = LEARNER + SOLVED
# The README's reference parts, moved to the site: each a page under book/, linked from the README.
MOVED_PAGES = ["install", "conventions", "api", "common-errors", "sources", "commands", "testing",
               "benchmarks", "publishing"]
IDS = [p.relative_to(ROOT / "notebooks").as_posix() for p in NOTEBOOKS]


class Images(HTMLParser):
    """The src of every <img> inside the page's article (the theme's own images are outside it)."""

    def __init__(self):
        super().__init__()
        self.depth = 0
        self.srcs: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "article" or self.depth:
            self.depth += tag not in ("img", "br", "hr", "input", "meta", "link", "source", "wbr")
        if tag == "img" and self.depth:
            self.srcs.append(attrs.get("src", ""))

    def handle_endtag(self, tag):
        if self.depth and tag not in ("img", "br", "hr", "input", "meta", "link", "source", "wbr"):
            self.depth -= 1


def page_of(path: Path) -> Path:
    return SITE / path.relative_to(ROOT).with_suffix(".html")


def image_outputs(path: Path) -> int:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return sum(
        1 for c in nb["cells"] if c["cell_type"] == "code"
        for o in c.get("outputs", []) if any(k.startswith("image/") for k in o.get("data", {}))
    )


def test_the_build_gave_no_warning():
    assert WARNINGS.exists(), "build/site-warnings.txt is missing: run `make site`"
    assert WARNINGS.read_text(encoding="utf-8").strip() == ""


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_every_notebook_has_its_page_with_every_figure(path):
    page = page_of(path)
    assert page.exists(), f"no page for {path.name}"
    html = page.read_text(encoding="utf-8")
    parser = Images()
    parser.feed(html)
    figures = [s for s in parser.srcs if re.search(r"_images/.*\.png$", s)]
    assert len(figures) == image_outputs(path), f"{page.name}: {len(figures)} figures, stored {image_outputs(path)}"
    for src in figures:
        file = (page.parent / src).resolve()
        assert file.is_file() and file.stat().st_size > 1000, f"{page.name}: figure {src} missing or empty"


def test_landing_page_is_the_course_map_and_links_every_notebook():
    html = (SITE / "intro.html").read_text(encoding="utf-8")
    article = html[html.index("<article"):html.index("</article>")]
    assert "Course map" in article
    for path in NOTEBOOKS:
        assert f'href="{path.relative_to(ROOT).with_suffix(".html").as_posix()}"' in article, path.name


def test_landing_page_has_a_title_image_and_a_card_with_a_figure_per_notebook():
    html = (SITE / "intro.html").read_text(encoding="utf-8")
    article = html[html.index("<article"):html.index("</article>")]
    parser = Images()
    parser.feed(html)
    assert any("title" in src and (SITE / src).is_file() for src in parser.srcs), "no title image"
    cards = re.findall(r'<div class="sd-card [^"]*course-card.*?(?=<div class="sd-card |\Z)', article, flags=re.S)
    assert len(cards) == len(LEARNER), f"{len(cards)} cards for {len(LEARNER)} notebooks"
    for path, card in zip(LEARNER, cards):
        assert f'href="notebooks/{path.stem}.html"' in card, f"the card of {path.name} does not link it"
        src = re.search(r'<img[^>]*src="([^"]+)"', card)
        assert src and (SITE / src.group(1)).stat().st_size > 1000, f"the card of {path.name} has no figure"


def test_solved_notebooks_are_in_a_collapsed_part_of_the_landing_page():
    html = (SITE / "intro.html").read_text(encoding="utf-8")
    article = html[html.index("<article"):html.index("</article>")]
    for path in SOLVED:
        link = f'href="notebooks/solutions/{path.stem}.html"'
        assert link in article, path.name
        before = article[:article.index(link)]
        assert before.rfind("<details") > before.rfind("</details>"), f"{path.name} is not inside a <details>"
        opening = before[before.rfind("<details"):]
        assert not re.match(r"<details[^>]*\bopen\b", opening), f"{path.name}: its <details> is open"


def sidebar(page: Path) -> str:
    html = page.read_text(encoding="utf-8")
    start = html.index('bd-docs-nav"')
    return html[start:html.index("</nav>", start)]


@pytest.mark.parametrize("page", ["intro.html", "notebooks/01_toy_qkv.html", "api.html"])
def test_the_sidebar_lists_every_title_once_and_folds_the_solved_notebooks(page):
    nav = sidebar(SITE / page)
    titles = [re.sub(r"<[^>]+>", "", t).strip() for t in re.findall(r"<a [^>]*>(.*?)</a>", nav, flags=re.S)]
    repeated = sorted({t for t in titles if titles.count(t) > 1})
    assert not repeated, f"{page}: the sidebar lists these titles twice: {repeated}"
    for path in SOLVED:
        link = nav.index(f'solutions/{path.stem}.html"')
        before = nav[:link]
        assert before.rfind("<details") > before.rfind("</details>"), f"{path.name} is not folded"
        assert not re.match(r"<details[^>]*\bopen\b", before[before.rfind("<details"):]), f"{path.name} unfolded"


def test_api_page_documents_every_public_name():
    import attnlib

    html = (SITE / "api.html").read_text(encoding="utf-8")
    for name in attnlib.__all__:
        assert f'id="attnlib.{name}"' in html, f"no autodoc entry for attnlib.{name}"


def test_sources_page_names_the_papers():
    html = (SITE / "sources.html").read_text(encoding="utf-8")
    assert re.search(r"Attention\s+Is\s+All\s+You\s+Need", html)
    assert re.search(r"Neural\s+Machine\s+Translation\s+by\s+Jointly\s+Learning", html)


def test_math_renders_offline():
    """MathJax is served from the site itself (sphinx-mathjax-offline), no page loads it from a CDN."""
    pages = list(SITE.rglob("*.html"))
    assert pages
    for page in pages:
        html = page.read_text(encoding="utf-8")
        for src in re.findall(r'<script[^>]*src="([^"]*mathjax[^"]*)"', html, flags=re.I):
            assert not src.startswith(("http:", "https:", "//")), f"{page.name} loads MathJax from {src}"
            assert (page.parent / src.split("?")[0]).resolve().is_file(), f"{page.name}: {src} missing"
    one = (SITE / "notebooks" / "03_scaling_variance.html").read_text(encoding="utf-8")
    assert re.search(r'<script[^>]*src="[^"]*mathjax[^"]*"', one, flags=re.I), "no MathJax on a page with math"


def markdown_sources(path: Path) -> list[str]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"]


def dropdowns(html: str) -> list[str]:
    return re.findall(r'<details class="[^"]*sd-dropdown.*?</details>', html, flags=re.S)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_self_check_answers_are_dropdowns_with_their_math_rendered(path):
    answers = [a for s in markdown_sources(path) for a in re.findall(r"<details>.*?</details>", s, flags=re.S)]
    html = page_of(path).read_text(encoding="utf-8")
    boxes = dropdowns(html)
    assert len(boxes) == len(answers), f"{len(boxes)} dropdowns on the page, {len(answers)} answers in the notebook"
    for answer, box in zip(answers, boxes):
        text = re.sub(r"<[^>]+>", "", box)
        assert not re.search(r"\$[^$\n]+\$", text), f"raw TeX left in an answer: {text.strip()[:120]}"
        if re.search(r"\$[^$\n]+\$", answer):
            assert 'class="math' in box, f"an answer's math is not rendered: {text.strip()[:120]}"


def test_the_answers_of_02_and_03_show_rendered_math():
    """The two pages the review saw with a raw `$q \\cdot k$`."""
    for stem in ("02_softmax_axes", "03_scaling_variance"):
        html = (SITE / "notebooks" / f"{stem}.html").read_text(encoding="utf-8")
        boxes = dropdowns(html)
        assert any('class="math' in box for box in boxes), stem
        assert not any("$q \\cdot k" in re.sub(r"<[^>]+>", "", box) for box in boxes), stem


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_no_test_marker_is_shown(path):
    html = page_of(path).read_text(encoding="utf-8")
    assert not re.search(r"NBVAL_[A-Z_]+", html), re.search(r".{60}NBVAL_[A-Z_]+.{20}", html, flags=re.S)


def png_width(file: Path) -> int:
    return struct.unpack(">I", file.read_bytes()[16:20])[0]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_wide_figures_get_room_and_open_full_size_on_a_click(path):
    page = page_of(path)
    html = page.read_text(encoding="utf-8")
    cells = re.split(r'(?=<div class="cell[ "])', html)
    for cell in cells:
        for src in re.findall(r'<img[^>]*src="([^"]*_images/[^"]+\.png)"', cell):
            width = png_width((page.parent / src).resolve())
            if width > 760:
                assert re.search(rf'<a [^>]*href="{re.escape(src)}"[^>]*>\s*<img[^>]*src="{re.escape(src)}"', cell), (
                    f"{page.name}: a {width} px figure is shrunk to the column with no link to its full size")
            if width > 1200:
                assert "tag_full-width" in cell.split(">", 1)[0], f"{page.name}: a {width} px figure is not full width"


def test_the_heads_grid_of_09_is_full_width():
    """The 6 x 12 grid of MiniLM's heads (2,586 px) the review found unreadable in the 688 px column."""
    page = SITE / "notebooks" / "09_pretrained_transformers.html"
    html = page.read_text(encoding="utf-8")
    widths = [png_width((page.parent / s).resolve()) for s in re.findall(r'src="(\.\./_images/[^"]+\.png)"', html)]
    assert max(widths) > 2000
    assert html.count("tag_full-width") >= 1


def api_entries() -> dict[str, str]:
    """id -> the HTML of one autodoc entry up to the next entry (a class's up to its first method)."""
    html = (SITE / "api.html").read_text(encoding="utf-8")
    parts = re.split(r'<dt class="sig sig-object py" id="([^"]+)"', html)
    return dict(zip(parts[1::2], parts[2::2]))


def test_every_api_entry_has_one_parameters_list():
    entries = api_entries()
    assert len(entries) >= 19
    for name, entry in entries.items():
        count = len(re.findall(r">Parameters<", entry))
        assert count <= 1, f"{name} has {count} 'Parameters' lists"
        names = re.findall(r"<li><p><strong>(\w+)</strong>", entry.split(">Returns<")[0].split(">Raises<")[0])
        assert len(names) == len(set(names)), f"{name} lists a parameter twice: {names}"


@pytest.mark.parametrize("name", ["scaled_dot_product_attention", "flash_attention", "AdditiveAttention",
                                  "sinusoidal_positions", "apply_rope"])
def test_docstring_formulas_are_rendered_as_math(name):
    entry = api_entries()[f"attnlib.{name}"]
    assert 'class="math' in entry, f"attnlib.{name}: no formula rendered"
    text = re.sub(r"<[^>]+>", "", entry)
    for plain in ("K^T", "w_v^T", "sqrt(E)", "base ** ("):
        assert plain not in text, f"attnlib.{name}: {plain!r} left as plain text"


def test_api_tables_wrap_instead_of_overflowing():
    """Tables sit in the theme's scrolling box; inline code breaks at the <wbr> after its dots and underscores.

    (tests/e2e/test_site_browser.py measures the pages at 390 px: no page is wider than the phone.)
    """
    html = (SITE / "api.html").read_text(encoding="utf-8")
    css = re.search(r'<link[^>]*href="(_static/course\.css)[^"]*"', html)
    assert css, "api.html does not load _static/course.css"
    rules = (SITE / css.group(1)).read_text(encoding="utf-8")
    assert re.search(r"code\.literal span\.pre\s*\{[^}]*white-space:\s*normal", rules), "span.pre never wraps"
    assert re.search(r"code\.literal\s*\{[^}]*overflow-wrap:\s*break-word", rules)
    assert not re.search(r"\.bd-article table\s*\{[^}]*display:\s*block", rules), "a table made its own scroller"
    assert re.search(r'<div class="pst-scrollable-table-container">\s*<table', html)
    assert "scaled_<wbr>dot_<wbr>product_<wbr>attention" in html, "no break points in inline code"


@pytest.mark.parametrize("name", MOVED_PAGES)
def test_the_readme_links_each_moved_page_and_the_site_has_it(name):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"](book/{name}.md)" in readme, f"the README does not link book/{name}.md"
    assert (ROOT / "book" / f"{name}.md").is_file()
    page = SITE / f"{name}.html"
    assert page.is_file(), f"no {name}.html in the site"
    assert f'href="{name}.html"' in sidebar(SITE / "intro.html"), f"{name}.html is not in the table of contents"


def test_book_pages_added_later_are_in_the_site():
    """Every book/*.md, e.g. the teachers' page, gets its page and its place in the table of contents."""
    nav = sidebar(SITE / "intro.html")
    for page in (ROOT / "book").glob("*.md"):
        assert (SITE / f"{page.stem}.html").is_file(), f"book/{page.name} has no page"
        assert f'href="{page.stem}.html"' in nav, f"book/{page.name} is not in the table of contents"


def test_the_readme_is_a_door_whose_links_work_on_github():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 150, f"README.md has {len(readme.splitlines())} lines"
    for target in re.findall(r"\]\((?!https?:|#)([^)\s#]+)", readme):
        assert (ROOT / target).exists(), f"README.md links {target}, which does not exist"
    for page in (ROOT / "book").glob("*.md"):
        for target in re.findall(r"\]\((?!https?:|#)([^)\s#]+)", page.read_text(encoding="utf-8")):
            assert (page.parent / target).exists(), f"book/{page.name} links {target}, which does not exist"


def test_the_course_map_is_one_table_with_a_row_per_notebook():
    """build_site.py reads the questions from it; the rows are `| [NN](notebooks/NN_x.ipynb) | question | ...`."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Course map", 1)[1].split("\n## ", 1)[0]
    page = (SITE / "intro.html").read_text(encoding="utf-8")
    article = page[page.index("<article"):page.index("</article>")]
    text = " ".join(htmllib.unescape(re.sub(r"<[^>]+>", " ", article)).replace("’", "'").split())
    for path in LEARNER:
        row = re.search(rf"^\| \[\d\d\]\(notebooks/{path.name}\) \| ([^|]+) \|", section, flags=re.M)
        assert row and row.group(1).strip(), f"no course-map row for {path.name}"
        assert row.group(1).strip() in text, f"the landing page does not ask {row.group(1).strip()!r}"


def test_links_of_book_pages_to_other_repository_files_go_to_the_repository():
    """../images/ and ../notebooks/ are in the site; ../README.md is not, so it links to the repository's copy."""
    import tomllib

    repo = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["urls"]["Repository"]
    source = (ROOT / "book" / "install.md").read_text(encoding="utf-8")
    assert "](../README.md#start-here)" in source
    html = (SITE / "install.html").read_text(encoding="utf-8")
    assert f'href="{repo}/blob/main/README.md#start-here"' in html
    conventions = (SITE / "conventions.html").read_text(encoding="utf-8")
    assert re.search(r'<img[^>]*src="_images/causal_alignments[^"]*\.png"', conventions), "the causal-mask figure"


# What a phone and a screen reader need (issue 33). The browser test (tests/e2e/test_site_browser.py) runs
# axe-core and measures the pages; these check the HTML the build wrote.

def colab_link(path: Path) -> str:
    import tomllib

    repo = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["urls"]["Repository"]
    rel = path.relative_to(ROOT).as_posix()
    return f"https://colab.research.google.com/github/{repo.removeprefix('https://github.com/')}/blob/main/{rel}"


def article(page: Path) -> str:
    html = page.read_text(encoding="utf-8")
    return html[html.index("<article"):html.index("</article>")]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_every_notebook_page_opens_in_colab_and_leaves_the_setup_cell_out(path):
    text = article(page_of(path))
    link = re.search(rf'<a [^>]*href="{re.escape(colab_link(path))}"[^>]*>([^<]*)</a>', text)
    assert link and link.group(1) == "Open in Colab", f"{path.name}: no Open in Colab link to {colab_link(path)}"
    assert text.index(link.group(0)) < text.index("</h1>") + 2000, f"{path.name}: the Colab link is not under the title"
    assert "Setup: run this cell first" not in text, f"{path.name}: the setup cell is on the page"
    assert re.search(r"made with python 3\.\d+\.\d+, torch ", text), f"{path.name}: no line saying the versions"


def words(text: str) -> set[str]:
    return {w.lower() for w in re.findall(r"[A-Za-z]{3,}", text)}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_figures_have_alt_text_from_the_notebook_prose_and_open_full_size(path):
    """Alt text is the sentence that leads into the figure, not the image's hashed file name; a tap zooms."""
    text = article(page_of(path))
    prose = words(" ".join(markdown_sources(path)))
    images = re.findall(r'(<a [^>]*href="([^"]+)"[^>]*>\s*)?<img ([^>]*src="([^"]*_images/[^"]+\.png)"[^>]*)>', text)
    assert len(images) == image_outputs(path)
    for link, href, attrs, src in images:
        alt = htmllib.unescape(re.search(r'alt="([^"]*)"', attrs).group(1))
        assert alt and not re.search(r"\.(png|svg|jpe?g)\b|_images/", alt), f"{path.name}: alt {alt!r} for {src}"
        alt_words = words(alt)
        assert len(alt_words) >= 3, f"{path.name}: alt {alt!r} says nothing"
        foreign = alt_words - prose
        assert len(foreign) <= len(alt_words) // 10, f"{path.name}: alt {alt!r} has words not in the prose: {foreign}"
        assert link and href == src, f"{path.name}: {src} does not link to its full-size file"


def test_the_course_map_cards_say_what_their_figure_shows():
    text = article(SITE / "intro.html")
    cards = re.findall(r'<img [^>]*class="sd-card-img-top"[^>]*>', text)
    alts = [htmllib.unescape(re.search(r'alt="([^"]*)"', card).group(1)) for card in cards]
    assert len(alts) == len(LEARNER)
    for path, alt in zip(LEARNER, alts):
        assert "a figure of notebook" not in alt and len(words(alt)) >= 3, f"card of {path.name}: alt {alt!r}"


def test_toggles_and_sidebar_arrows_are_named_by_what_they_do():
    """The code toggles named by their visible text, the sidebar's arrows by the pages they open."""
    for page in [SITE / "intro.html", SITE / "solutions.html"] + [page_of(p) for p in LEARNER]:
        html = page.read_text(encoding="utf-8")
        assert 'aria-label="Toggle hidden content"' not in html, page.name
        nav = sidebar(page)
        for summary in re.findall(r"<summary[^>]*>", nav):
            assert re.search(r'aria-label="Show the pages under [^"]+"', summary), f"{page.name}: {summary}"
        search = re.search(r'<button class="btn search-button-field[^>]*>', html).group(0)
        assert "aria-label" not in search, f"{page.name}: the search button's name leaves its shortcut out"


def test_every_page_has_a_favicon_a_colour_mode_each_script_once_and_a_footer_naming_the_course():
    pages = [p for p in SITE.rglob("*.html") if "_static" not in p.parts and p.name != "index.html"]
    assert len(pages) >= len(NOTEBOOKS) + len(MOVED_PAGES)
    for page in pages:
        html = page.read_text(encoding="utf-8")
        icon = re.search(r'<link rel="icon" href="([^"]+)"', html)
        assert icon and (page.parent / icon.group(1)).resolve().is_file(), f"{page.name}: no favicon"
        assert 'localStorage.getItem("mode") || "auto"' in html, f"{page.name}: no default colour mode"
        inline = re.findall(r"<script>(.*?)</script>", html, flags=re.S)
        twice = sorted({s[:60] for s in inline if inline.count(s) > 1})
        assert not twice, f"{page.name}: inline scripts loaded twice (a `const` declared twice is an error): {twice}"
        footer = html[html.index('<footer class="bd-footer-content'):]
        footer = " ".join(re.sub(r"<[^>]+>", " ", footer[:footer.index("</footer>")]).split())
        assert "Attention, from the matrices up" in footer and "By The course" not in footer, f"{page.name}: {footer}"


def test_api_page_lists_every_parameter_and_every_name_in_its_contents_rail():
    """One entry per parameter of every public function and method; one link per public name in the rail."""
    import inspect

    import attnlib

    html = (SITE / "api.html").read_text(encoding="utf-8")
    rail = html[html.index('class="page-toc'):]
    rail = rail[:rail.index("</nav>")]
    entries = api_entries()
    checked = 0
    for name in attnlib.__all__:
        assert f'href="#attnlib.{name}"' in rail, f"the contents rail has no entry for {name}"
        obj = getattr(attnlib, name)
        targets = [(name, obj)]
        if inspect.isclass(obj):
            targets += [(f"{name}.{m}", getattr(obj, m)) for m in vars(obj) if f"attnlib.{name}.{m}" in entries
                        and callable(getattr(obj, m))]
        for label, target in targets:
            if not callable(target):
                continue
            params = [p for p in inspect.signature(target).parameters.values()
                      if p.name not in ("self", "cls") and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
            if not params:
                continue
            entry = entries[f"attnlib.{label}"]
            fields = entry.split(">Parameters<", 1)
            assert len(fields) == 2, f"{label}: no Parameters list"
            block = re.split(r'<dt class="field-(?:odd|even)">', fields[1], maxsplit=1)[0]
            documented = re.findall(r"<strong>(\w+)</strong>", block)
            missing = [p.name for p in params if p.name not in documented]
            assert not missing, f"{label}: no entry for the parameters {missing} (entries: {documented})"
            checked += 1
    assert checked >= 20


def test_each_card_shows_a_figure_of_its_notebooks_main_line():
    """The landing card's figure is named by a phrase of its code cell; that cell must exist and be in the main line."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("build_site", ROOT / "tests" / "tools" / "build_site.py")
    build_site = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build_site)
    for number, phrase in build_site.CARD_FIGURES.items():
        path = next((ROOT / "notebooks").glob(f"{number}_*.ipynb"))
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        end = next(i for i, c in enumerate(cells) if "".join(c["source"]).startswith("## What you now know"))
        hits = [i for i, c in enumerate(cells) if c["cell_type"] == "code" and phrase in "".join(c["source"])
                and any("image/png" in o.get("data", {}) for o in c.get("outputs", []))]
        assert hits and hits[0] < end, f"{path.name}: no main-line figure in a cell containing {phrase!r} ({hits})"
