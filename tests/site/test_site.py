"""The website `make site` built into build/site/: a page per notebook, every figure, no warning.

Run by `make site` after the build (tests/conftest.py keeps tests/site/ out of `make test`).
The expected pages and figures are read from the notebooks in the repository, not from the
build's own table of contents, so a notebook the build left out fails here.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "build" / "site"
WARNINGS = ROOT / "build" / "site-warnings.txt"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")) + sorted(
    (ROOT / "notebooks" / "solutions").glob("[0-9][0-9]_*.ipynb")
)
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
    assert "Course map" in html
    for path in NOTEBOOKS:
        assert f'href="{path.relative_to(ROOT).with_suffix(".html").as_posix()}"' in html, path.name


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
