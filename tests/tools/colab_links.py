"""The course's public address in one place, and everything made from it.

    python tests/tools/colab_links.py                      # rewrite badges and setup cells from the setting
    python tests/tools/colab_links.py --repo owner/name    # change the setting, then rewrite
    python tests/tools/colab_links.py --check              # list what drifted from the setting; exit 1 if any

The setting is pyproject.toml's `[project.urls] Repository` (https://github.com/owner/name).
Made from it: the Colab badge of every notebook in the README's course map, the README's
Binder badge, and the first code cell of every notebook, the setup cell that installs attnlib
on Colab. `make colab-links REPO=owner/name` runs this script; `make test` runs the check
(tests/test_setup_cell.py).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import nbformat
import tomllib

ROOT = Path(__file__).resolve().parents[2]
REPO_PATTERN = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}"
SETTING = re.compile(r'^(Repository\s*=\s*)"https://github\.com/(' + REPO_PATTERN + r')"', re.M)
COLAB = re.compile(r"https://colab\.research\.google\.com/github/" + REPO_PATTERN + r"/blob/main/notebooks/")
BINDER = re.compile(r"https://mybinder\.org/v2/gh/" + REPO_PATTERN + r"/HEAD")

SETUP_CELL = '''\
# Setup: run this cell first (no need to read it). On Colab it installs attnlib,
# the course's helper package, in about a minute; `make lab` has installed it already.
import importlib
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version

import torch

REPO = "https://github.com/{repo}"
if "google.colab" in sys.modules:
    print("installing attnlib from the course's repository (about a minute)...")
    pip = [sys.executable, "-m", "pip", "install", "--quiet", f"git+{{REPO}}"]
    try:
        done = subprocess.run(pip, capture_output=True, timeout=600)
        installed = done.returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        installed = False
    importlib.invalidate_caches()
    if not installed:
        print("attnlib could not be installed. Run this line in a new cell,")
        print("then run this cell again:")
        print(f'!pip install "git+{{REPO}}"')


def installed_version(name):
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


# One thread: the course's tensors are small, so one thread is as quick as several,
# and on a busy laptop a notebook slows down with the load instead of stalling on
# threads that wait for each other.
torch.set_num_threads(1)
packages = ("torch", "numpy", "matplotlib", "seaborn", "attnlib")
versions = " | ".join(f"{{p}} {{installed_version(p)}}" for p in packages)
print("python", sys.version.split()[0], "|", versions)'''
IGNORE_TAG = "nbval-ignore-output"  # nbval leaves the output alone: versions differ from machine to machine


def read_repo(root: Path = ROOT) -> str:
    """The course's address as "owner/name", read from pyproject.toml."""
    url = tomllib.loads((root / "pyproject.toml").read_text())["project"]["urls"]["Repository"]
    match = re.fullmatch(r"https://github\.com/(" + REPO_PATTERN + ")", url)
    if not match:
        raise ValueError(f"pyproject.toml: [project.urls] Repository must be https://github.com/owner/name, got {url}")
    return match.group(1)


def write_repo(repo: str, root: Path = ROOT) -> None:
    """Set pyproject.toml's Repository to https://github.com/<repo>."""
    repo = repo.removeprefix("https://github.com/").strip("/")
    if not re.fullmatch(REPO_PATTERN, repo):
        raise ValueError(f"REPO must be owner/name (a GitHub repository), got {repo!r}")
    path = root / "pyproject.toml"
    text, count = SETTING.subn(lambda m: f'{m.group(1)}"https://github.com/{repo}"', path.read_text())
    if count != 1:
        raise ValueError("pyproject.toml has no [project.urls] Repository line to change")
    path.write_text(text)


def setup_cell_source(repo: str) -> str:
    """The first code cell of every notebook, for the course at github.com/<repo>."""
    return SETUP_CELL.format(repo=repo)


def notebook_paths(root: Path = ROOT) -> list[Path]:
    """Every notebook a learner or teacher opens: notebooks/*.ipynb and notebooks/*/*.ipynb."""
    folder = root / "notebooks"
    paths = list(folder.glob("*.ipynb")) + list(folder.glob("*/*.ipynb"))
    return sorted(p for p in paths if ".ipynb_checkpoints" not in p.parts)


def render_readme(text: str, repo: str) -> str:
    """The README with every Colab and Binder badge pointing at github.com/<repo>."""
    text = COLAB.sub(f"https://colab.research.google.com/github/{repo}/blob/main/notebooks/", text)
    return BINDER.sub(f"https://mybinder.org/v2/gh/{repo}/HEAD", text)


def first_code_cell(nb: nbformat.NotebookNode) -> nbformat.NotebookNode | None:
    return next((c for c in nb.cells if c.cell_type == "code"), None)


def drift(root: Path = ROOT) -> list[str]:
    """What disagrees with the setting: one line per problem, empty when all agree."""
    repo = read_repo(root)
    problems = []
    readme = (root / "README.md").read_text()
    if render_readme(readme, repo) != readme:
        problems.append(f"README.md: a Colab or Binder badge does not point at {repo}")
    if len(BINDER.findall(readme)) != 1:
        problems.append("README.md: needs exactly one Binder badge")
    for path in notebook_paths(root):
        name = path.relative_to(root / "notebooks").as_posix()
        if f"https://colab.research.google.com/github/{repo}/blob/main/notebooks/{name})" not in readme:
            problems.append(f"README.md: no Colab badge for notebooks/{name}")
        cell = first_code_cell(nbformat.read(path, as_version=4))
        if cell is None or cell.source != setup_cell_source(repo):
            problems.append(f"notebooks/{name}: the first code cell is not the setup cell for {repo}")
        elif not cell.metadata.get("jupyter", {}).get("source_hidden"):
            problems.append(f"notebooks/{name}: the setup cell's source is not collapsed")
        elif IGNORE_TAG not in cell.metadata.get("tags", []):
            problems.append(f"notebooks/{name}: the setup cell lacks the tag {IGNORE_TAG}")
    return problems


def rewrite(root: Path = ROOT) -> list[str]:
    """Rewrite the README's badges and every setup cell from the setting; return the files changed."""
    repo = read_repo(root)
    changed = []
    readme_path = root / "README.md"
    readme = readme_path.read_text()
    if render_readme(readme, repo) != readme:
        readme_path.write_text(render_readme(readme, repo))
        changed.append("README.md")
    for path in notebook_paths(root):
        nb = nbformat.read(path, as_version=4)
        cell = first_code_cell(nb)
        if cell is None:
            raise ValueError(f"{path.name} has no code cell to hold the setup")
        before = (cell.source, dict(cell.metadata))
        cell.source = setup_cell_source(repo)
        cell.metadata.setdefault("jupyter", {})["source_hidden"] = True
        if IGNORE_TAG not in cell.metadata.setdefault("tags", []):
            cell.metadata["tags"].append(IGNORE_TAG)
        if (cell.source, dict(cell.metadata)) != before:
            nbformat.write(nb, path)
            changed.append(path.relative_to(root).as_posix())
    return changed


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", help="owner/name of the course's GitHub repository")
    parser.add_argument("--check", action="store_true", help="only list what drifted; exit 1 if anything did")
    args = parser.parse_args(argv)
    if args.check:
        problems = drift()
        print("\n".join(problems) if problems else f"badges and setup cells point at {read_repo()}")
        return 1 if problems else 0
    if args.repo:
        write_repo(args.repo)
    changed = rewrite()
    print(f"course address: https://github.com/{read_repo()}")
    print("rewrote: " + (", ".join(changed) if changed else "nothing (already up to date)"))
    problems = drift()
    for line in problems:  # what rewriting cannot fix, e.g. a notebook missing from the course map
        print(line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
