"""Sphinx extension of the course's website: what the themes leave for a phone and a screen reader.

- Inline code breaks at its dots, underscores and slashes: `torch.nn.functional.scaled_dot_product_attention`
  gets a <wbr> (a line-break opportunity that is not a character: copying the name copies the name) after
  each, so it wraps on a phone instead of widening the page, and a table's column is never squeezed to
  break it mid-word (course.css lets a name break anywhere only when even its parts are too wide).
- myst-nb's "Show code cell source" toggle is named by its visible text: its aria-label "Toggle hidden
  content" is dropped (axe-core's label-content-name-mismatch: a voice user says what they see).
- The sidebar's expand arrows (pydata-sphinx-theme's <summary> with only an icon) get a name, "Show the
  pages under <title>" (axe-core's summary-name).
- A script the page would load twice loads once: sphinx-thebe (which Jupyter Book always adds; the site does
  not use Thebe) registers its inline settings twice, and the second `const THEBE_JS_URL` is a SyntaxError
  on every page.
- The empty corner of a pandas table's header row is an empty data cell, not a header with no text
  (axe-core's empty-table-header).

The theme's search and colour-mode buttons and its logo are fixed by templates in book/_templates/.
"""

from __future__ import annotations

import re

CODE = re.compile(r'(<code class="docutils literal notranslate">)(.*?)(</code>)', flags=re.S)
PRE_TEXT = re.compile(r'(<span class="pre">)([^<]*)(</span>)')
BREAK_AFTER = re.compile(r"(?<=[A-Za-z0-9])([._/])(?=[A-Za-z0-9])")
TOGGLE = '<summary aria-label="Toggle hidden content">'
NAMELESS_SUMMARY = re.compile(
    r'(<a class="[^"]*\breference internal\b[^"]*" href="[^"]*">(?P<title>[^<]*)</a>\s*<details(?: open="open")?>\s*)'
    r"<summary>"
)
THEAD = re.compile(r"<thead>.*?</thead>", flags=re.S)


def break_inline_code(html: str) -> str:
    """A <wbr> after each dot, underscore or slash inside inline code, where a name goes on after it."""

    def code(match: re.Match) -> str:
        inner = PRE_TEXT.sub(lambda m: m.group(1) + BREAK_AFTER.sub(r"\1<wbr>", m.group(2)) + m.group(3),
                             match.group(2))
        return match.group(1) + inner + match.group(3)

    return CODE.sub(code, html)


def name_toggles(html: str) -> str:
    return html.replace(TOGGLE, "<summary>")


def no_empty_headers(html: str) -> str:
    return THEAD.sub(lambda m: re.sub(r"<th>\s*</th>", "<td></td>", m.group(0)), html)


def name_sidebar_arrows(html: str) -> str:
    def summary(match: re.Match) -> str:
        title = match.group("title").strip()
        return f'{match.group(1)}<summary aria-label="Show the pages under {title}">'

    return NAMELESS_SUMMARY.sub(summary, html)


def unique_scripts(scripts: list) -> list:
    """The page's scripts, each once (a script is its file and its attributes, the inline body included,
    whatever its priority)."""
    seen, kept = set(), []
    for script in scripts:
        attributes = getattr(script, "attributes", {})
        filename = str(getattr(script, "filename", script) or "")  # an inline script's is None or ""
        key = (filename, tuple(sorted((k, str(v)) for k, v in attributes.items())))
        if key not in seen:
            seen.add(key)
            kept.append(script)
    return kept


def on_page(app, pagename, templatename, context, doctree) -> None:
    if "script_files" in context:
        context["script_files"] = unique_scripts(context["script_files"])
    if "body" in context:
        context["body"] = no_empty_headers(name_toggles(break_inline_code(context["body"])))
    toctree = context.get("generate_toctree_html")
    if toctree is not None and not getattr(toctree, "course_site", False):

        def generate_toctree_html(*args, **kwargs):
            return name_sidebar_arrows(str(toctree(*args, **kwargs)))

        generate_toctree_html.course_site = True
        context["generate_toctree_html"] = generate_toctree_html


def setup(app):
    # after pydata-sphinx-theme's own handler (priority 500), which puts generate_toctree_html in the context
    app.connect("html-page-context", on_page, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
