"""Make the learner notebooks from the solved ones: `make exercises`.

    python tests/tools/make_exercises.py [NAME ...]   # write notebooks/NN_*.ipynb and execute them
    python tests/tools/make_exercises.py --check      # exit 1 if a learner notebook is stale

The solved notebooks in notebooks/solutions/ are the source. In their code cells each solution
sits between two marker lines, spelled as nbgrader spells them so a teacher can run nbgrader on
the same files:

    ### BEGIN SOLUTION
    ...the answer...
    ### END SOLUTION

The learner version replaces each such block by `# YOUR CODE HERE` at the block's indentation
(followed by `pass` inside an indented block, so a function body stays valid), and is otherwise
the same notebook. The stub of an exercise is written so that the untouched learner version runs
top to bottom: a variable's placeholder (`= None`) stands before its solution block, a function's
block ends its body (so it returns None). The learner notebooks are then executed in a fresh kernel
so their stored outputs show what a learner sees first: the checkers saying "not attempted yet".
`--check` compares only the cell sources (nbval checks the outputs).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_notebooks import NOTEBOOKS, clean_metadata, execute  # noqa: E402

SOLUTIONS = NOTEBOOKS / "solutions"
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
STUB = "# YOUR CODE HERE"


def strip_solutions(source: str, where: str = "cell") -> str:
    """A code cell's source with every solution block replaced by its stub."""
    out, inside = [], False
    for number, line in enumerate(source.split("\n"), 1):
        marker = line.strip()
        if marker == BEGIN:
            if inside:
                raise ValueError(f"{where}, line {number}: {BEGIN} inside another solution block")
            inside = True
            indent = line[: len(line) - len(line.lstrip())]
            out.append(indent + STUB)
            if indent:
                out.append(indent + "pass")
        elif marker == END:
            if not inside:
                raise ValueError(f"{where}, line {number}: {END} without {BEGIN}")
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise ValueError(f"{where}: {BEGIN} without {END}")
    return "\n".join(out)


def learner_version(solved: nbformat.NotebookNode, name: str) -> nbformat.NotebookNode:
    """The learner notebook: the solved one with its solution blocks stubbed (outputs of stubbed cells cleared)."""
    nb = nbformat.from_dict(solved)
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and BEGIN in cell.source:
            cell.source = strip_solutions(cell.source, f"{name} cell {index}")
            cell.outputs = []
    return nb


def pairs(names: list[str]) -> list[tuple[Path, Path]]:
    solved = sorted(SOLUTIONS.glob("*.ipynb"))
    return [(s, NOTEBOOKS / s.name) for s in solved if not names or any(n in s.name for n in names)]


def stale(solved_path: Path, learner_path: Path) -> list[str]:
    """Why the learner notebook is not what the solved one makes (empty when it is)."""
    if not learner_path.exists():
        return [f"{learner_path.name}: missing"]
    made = learner_version(nbformat.read(solved_path, as_version=4), solved_path.name)
    have = nbformat.read(learner_path, as_version=4)
    made_sources = [(c.cell_type, c.source) for c in made.cells]
    have_sources = [(c.cell_type, c.source) for c in have.cells]
    if made_sources != have_sources:
        return [f"notebooks/{learner_path.name}: stale; run make exercises (it is made from notebooks/solutions/)"]
    return []


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    parser.add_argument("names", nargs="*")
    args = parser.parse_args(argv)
    todo = pairs(args.names)
    if args.check:
        problems = [p for s, learner in todo for p in stale(s, learner)]
        print("\n".join(problems) if problems else f"{len(todo)} learner notebooks up to date")
        return 1 if problems else 0
    for solved_path, learner_path in todo:
        nb = learner_version(nbformat.read(solved_path, as_version=4), solved_path.name)
        nbformat.write(nb, learner_path)
        executed = execute(learner_path)
        clean_metadata(executed)
        nbformat.write(executed, learner_path)
        print(f"wrote and executed notebooks/{learner_path.name}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
