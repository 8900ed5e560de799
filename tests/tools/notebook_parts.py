"""A notebook's three parts, as DESIGN.md's "Notebook structure and budget" lays them out.

    python tests/tools/notebook_parts.py [NAME ...]   # a table: main line cells, words, minutes, sections

Every learner notebook is, in this order:

1. the **main line**: the title cell, the setup and imports, the numbered sections (``## 1. ...``) with
   the exercises next to their material; it ends at the heading ``## What you now know``;
2. ``## What you now know`` (at most 5 lines) and ``## Self-check`` (at most 5 questions);
3. ``## Going deeper`` (optional material, ``###`` subsections), ``## Appendix`` (collapsed checks) and
   ``## References``.

The budget of the main line: at most 55 cells and 2,000 words of prose; each numbered section 3 to 6
cells besides its exercises, with at most one ``# check:`` cell. Its reading time is estimated as
``words / 100 + code cells / 2`` minutes (100 words a minute for prose with formulas, half a minute to
run and read a code cell's result): the full budget, 2,000 words and about 30 code cells, is 35 minutes.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"

MAX_CELLS, MAX_WORDS = 55, 2000
SECTION_CELLS = (3, 6)  # a numbered section, its exercises not counted
MAX_CHECKS_PER_SECTION = 1
MAX_SUMMARY_LINES, MAX_QUESTIONS = 5, 5
MAX_GOING_DEEPER = 40
WORDS_PER_MINUTE, MINUTES_PER_CODE_CELL = 100, 0.5
# The part headings, in order; "Going deeper" may be absent from a notebook with nothing optional.
HEADINGS = ("What you now know", "Self-check", "Going deeper", "Appendix", "References")
OPTIONAL = {"Going deeper"}


def source(cell: dict) -> str:
    text = cell.get("source", "")
    return "".join(text) if isinstance(text, list) else text


def words(cell: dict) -> int:
    """Words of a markdown cell's prose: tags and markup (# * ` |) do not count."""
    return len(re.sub(r"<[^>]+>|[#*`|]", " ", source(cell)).split())


def heading(cell: dict) -> str | None:
    """The text of a markdown cell's level-2 heading (its first line), else None."""
    if cell.get("cell_type") != "markdown":
        return None
    m = re.match(r"\s*##\s+(.+)", source(cell))
    return m.group(1).strip() if m and not source(cell).lstrip().startswith("###") else None


def is_check(cell: dict) -> bool:
    return cell.get("cell_type") == "code" and source(cell).lstrip().startswith("# check")


def is_exercise(cell: dict) -> bool:
    """An exercise's prompt (markdown starting **Exercise), stub or check cell (a call to an nbNN checker)."""
    text = source(cell).lstrip()
    if cell.get("cell_type") == "markdown":
        return text.startswith("**Exercise")
    return ("### BEGIN SOLUTION" in text or "# YOUR CODE HERE" in text
            or re.match(r"nb\d\d\w*\.check_\w+\(", text) is not None)


@dataclass
class Section:
    title: str
    cells: list[dict] = field(default_factory=list)

    @property
    def lesson_cells(self) -> int:
        return sum(not is_exercise(c) for c in self.cells)

    @property
    def checks(self) -> int:
        return sum(is_check(c) for c in self.cells)


@dataclass
class Parts:
    path: Path
    cells: list[dict]
    starts: dict[str, int]  # part heading -> index of its cell

    @property
    def end(self) -> int | None:
        return self.starts.get("What you now know")

    @property
    def main_line(self) -> list[dict]:
        return self.cells[: self.end] if self.end is not None else self.cells

    @property
    def words(self) -> int:
        return sum(words(c) for c in self.main_line if c.get("cell_type") == "markdown")

    @property
    def code_cells(self) -> int:
        return sum(c.get("cell_type") == "code" for c in self.main_line)

    @property
    def minutes(self) -> float:
        return self.words / WORDS_PER_MINUTE + MINUTES_PER_CODE_CELL * self.code_cells

    def part(self, name: str) -> list[dict]:
        """The cells from heading ``name`` up to the next part heading (empty when absent)."""
        if name not in self.starts:
            return []
        start = self.starts[name]
        later = [i for i in self.starts.values() if i > start]
        return self.cells[start: min(later) if later else len(self.cells)]

    def sections(self) -> list[Section]:
        """The numbered sections of the main line (``## 1. ...``), each with its cells."""
        out: list[Section] = []
        for cell in self.main_line:
            title = heading(cell)
            if title is not None and re.match(r"\d+[.)]?\s", title):
                out.append(Section(title))
            if out:
                out[-1].cells.append(cell)
        return out


def read(path: Path) -> Parts:
    cells = json.loads(path.read_text())["cells"]
    starts: dict[str, int] = {}
    for i, cell in enumerate(cells):
        title = heading(cell)
        if title is None:
            continue
        for name in HEADINGS:
            if title.lower().startswith(name.lower()) and name not in starts:
                starts[name] = i
    return Parts(path, cells, starts)


def problems(parts: Parts) -> list[str]:
    """Everything in which a learner notebook departs from the structure and the budget (empty when none)."""
    out = []
    missing = [h for h in HEADINGS if h not in parts.starts and h not in OPTIONAL]
    if missing:
        out.append(f"missing the heading(s) {', '.join('## ' + h for h in missing)}")
    order = [parts.starts[h] for h in HEADINGS if h in parts.starts]
    if order != sorted(order):
        out.append(f"the part headings are not in the order {' / '.join(HEADINGS)}")
    if parts.end is None:
        return out
    if len(parts.main_line) > MAX_CELLS:
        out.append(f"main line of {len(parts.main_line)} cells (budget {MAX_CELLS})")
    if parts.words > MAX_WORDS:
        out.append(f"main line of {parts.words} words of prose (budget {MAX_WORDS})")
    sections = parts.sections()
    if not sections:
        out.append("no numbered section (## 1. ...) in the main line")
    low, high = SECTION_CELLS
    for s in sections:
        if not low <= s.lesson_cells <= high:
            out.append(f"section '{s.title}' has {s.lesson_cells} cells besides its exercises (budget {low}-{high})")
        if s.checks > MAX_CHECKS_PER_SECTION:
            out.append(f"section '{s.title}' has {s.checks} '# check:' cells (at most {MAX_CHECKS_PER_SECTION}; "
                       "move the others to the appendix)")
    summary = parts.part("What you now know")
    lines = [ln for c in summary for ln in source(c).splitlines()[1:] if ln.strip()] if summary else []
    if len(lines) > MAX_SUMMARY_LINES:
        out.append(f"'What you now know' has {len(lines)} lines (at most {MAX_SUMMARY_LINES})")
    questions = sum(source(c).count("<details") for c in parts.part("Self-check"))
    if not 1 <= questions <= MAX_QUESTIONS:
        out.append(f"the self-check has {questions} questions with hidden answers (1 to {MAX_QUESTIONS})")
    deeper = parts.part("Going deeper")
    if len(deeper) > MAX_GOING_DEEPER:
        out.append(f"'Going deeper' has {len(deeper)} cells (about {MAX_GOING_DEEPER} at most; "
                   "make it a notebook of its own, NNb_...)")
    return out


def learner_notebooks() -> list[Path]:
    return sorted(NOTEBOOKS.glob("[0-9][0-9]*.ipynb"))


def main(argv: list[str]) -> int:
    paths = [p for p in learner_notebooks() if not argv or any(a in p.name for a in argv)]
    print(f"{'notebook':<40} {'cells':>5} {'words':>6} {'min':>5} {'sections':>8}  problems")
    for path in paths:
        parts = read(path)
        print(f"{path.name:<40} {len(parts.main_line):>5} {parts.words:>6} {parts.minutes:>5.0f} "
              f"{len(parts.sections()):>8}  {len(problems(parts))}")
        for p in problems(parts):
            print(f"    - {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
