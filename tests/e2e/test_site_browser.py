"""The course's website in a real browser, at a phone's width (390 px) and a laptop's (1366 px).

`make e2e` builds the site first when it is older than its sources (`make site` builds and tests the HTML;
this test looks at what a reader's browser makes of it). Every page of build/site/ is served over HTTP and
opened in headless Chromium (the `browser` fixture of conftest.py), each time with empty local storage, as
a first visit; then
- no page is wider than the window (no sideways scrolling on a phone): tables and code scroll or wrap
  inside their own box;
- axe-core (from the npm registry, pinned in tests/e2e/package.json and package-lock.json, installed by
  `make e2e` with npm ci) finds no serious or critical violation, and no content outside a landmark (its
  `region` rule, moderate);
- no figure's alt text is empty or a file name; each notebook's page shows its "Open in Colab" link;
- the page loads a favicon and logs no error to the console (the theme's "invalid theme mode" was one);
- on the API page every public name of attnlib is visible in the contents rail.
One screenshot per page and width goes to build/e2e/site/ (also when an assertion fails).
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import threading
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "build" / "site"
OUT = Path(os.environ.get("E2E_OUT") or ROOT / "build" / "e2e").resolve() / "site"
AXE = Path(__file__).resolve().parent / "node_modules" / "axe-core" / "axe.min.js"
WIDTHS = [390, 1366]

LEARNER = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
SOLVED = sorted((ROOT / "notebooks" / "solutions").glob("[0-9][0-9]_*.ipynb"))
# Every page the site must have, read from the repository (not from the build, so a page the build left
# out fails here): the landing page, one per notebook, one per book/*.md, and Sphinx's search and index.
PAGES = (
    ["intro.html"]
    + [p.relative_to(ROOT).with_suffix(".html").as_posix() for p in LEARNER + SOLVED]
    + [f"{p.stem}.html" for p in sorted((ROOT / "book").glob("*.md"))]
    + (["solutions.html"] if SOLVED else [])
    + ["search.html", "genindex.html"]
)

AXE_JS = """async () => {
  const result = await axe.run(document);
  return result.violations.map(v => ({id: v.id, impact: v.impact,
    nodes: v.nodes.slice(0, 3).map(n => n.target.join(' ') + ' ' + n.html.slice(0, 120))}));
}"""
# What a screen reader says for each figure of the article.
ALTS_JS = "() => [...document.querySelectorAll('article img')].map(i => [i.getAttribute('alt'), i.src])"


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def site():
    """build/site/ served on a free local port; yields its address."""
    if not (SITE / "intro.html").is_file():
        pytest.fail(f"{SITE} has no intro.html: build the site first (make site; make e2e does it when stale)")
    if not AXE.is_file():
        pytest.fail(f"{AXE} is missing: make e2e installs it (npm ci --prefix tests/e2e)")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(SITE)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


def colab_url(page_name: str) -> str:
    repo = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["urls"]["Repository"]
    notebook = page_name.removesuffix(".html") + ".ipynb"
    return f"https://colab.research.google.com/github/{repo.removeprefix('https://github.com/')}/blob/main/{notebook}"


@pytest.mark.parametrize("width", WIDTHS, ids=lambda w: f"{w}px")
@pytest.mark.parametrize("name", PAGES)
def test_site_page_reads_on_a_phone_and_a_screen_reader(browser, site, name, width):
    page = browser.new_page()
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    shot = OUT / str(width) / (name.replace("/", "_").removesuffix(".html") + ".png")
    try:
        page.set_viewport_size({"width": width, "height": 844 if width < 500 else 900})
        page.add_init_script("window.localStorage.clear()")  # a first visit: no colour mode chosen yet
        response = page.goto(f"{site}/{name}", wait_until="load")
        assert response is not None and response.ok, f"{name}: {response and response.status}"

        wide = page.evaluate("""() => [document.documentElement.scrollWidth,
          [...document.querySelectorAll('article *')].filter(e => e.getBoundingClientRect().right > innerWidth + 1
            && !e.closest('.pst-scrollable-table-container, pre, .cell_output, .highlight, mjx-container'))
            .slice(0, 3).map(e => e.tagName + ' ' + (e.textContent || '').trim().slice(0, 60))]""")
        assert wide[0] <= width, f"{name} is {wide[0]} px wide in a {width} px window; sticking out: {wide[1]}"

        page.add_script_tag(path=str(AXE))
        violations = page.evaluate(AXE_JS)
        bad = [v for v in violations if v["impact"] in ("serious", "critical") or v["id"] == "region"]
        assert bad == [], f"{name} at {width} px: axe-core finds\n" + json.dumps(bad, indent=1)

        for alt, src in page.evaluate(ALTS_JS):
            assert alt and alt.strip(), f"{name}: the figure {src} has no alt text"
            assert not re.search(r"\.(png|svg|jpe?g|gif)\b|_images/", alt), f"{name}: alt text {alt!r} is a file name"

        if name.startswith("notebooks/"):
            link = page.get_by_role("link", name="Open in Colab", exact=True)
            assert link.count() == 1, f"{name}: {link.count()} 'Open in Colab' links"
            assert link.get_attribute("href") == colab_url(name)
            assert link.is_visible()

        icon = page.evaluate("""async () => { const l = document.querySelector('link[rel~="icon"]');
          return l ? (await fetch(l.href)).ok : false; }""")
        assert icon, f"{name}: no favicon"

        if name == "api.html" and width >= 1200:  # the contents rail is shown beside the text from 1200 px
            import attnlib

            hidden = [n for n in attnlib.__all__
                      if not page.locator(f'.bd-sidebar-secondary a[href="#attnlib.{n}"]').is_visible()]
            assert hidden == [], f"the API page's contents rail does not show {hidden}"

        page.wait_for_timeout(200)  # a late error (a script after load) still counts
        assert errors == [], f"{name}: console errors {errors}"
    finally:
        shot.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(shot))
        page.close()
