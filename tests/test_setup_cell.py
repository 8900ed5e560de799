"""The course's address lives in one place, and every notebook's setup cell works on Colab or says why not.

`tests/tools/colab_links.py` makes the README's badges and each notebook's first code cell from
pyproject.toml's `[project.urls] Repository`. These tests fail when anything drifted from that
setting, and run the setup cell as Colab would (a stubbed `google.colab`) against an address
that cannot be reached.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "tools"))
import colab_links  # noqa: E402

UNREACHABLE = "https://127.0.0.1:9/nobody/attention-course"  # port 9 (discard): nothing listens, refused at once


def copy_course(tmp_path: Path) -> Path:
    """The files colab_links reads and writes, copied so a test may change them."""
    root = tmp_path / "course"
    shutil.copytree(ROOT / "notebooks", root / "notebooks", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    for name in ("README.md", "pyproject.toml"):
        shutil.copy(ROOT / name, root / name)
    return root


def run_setup_cell(source: str, *, colab: bool, tmp_path: Path) -> subprocess.CompletedProcess:
    """Run a setup cell's code in a fresh Python, with or without a stubbed google.colab module."""
    prelude = "import sys, types\n"
    if colab:  # Colab's kernel has imported google.colab before the first cell runs
        prelude += "sys.modules['google'] = types.ModuleType('google')\n"
        prelude += "sys.modules['google.colab'] = types.ModuleType('google.colab')\n"
    script = tmp_path / "setup_cell.py"
    script.write_text(prelude + source + "\n")
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, env=env)


def test_badges_and_setup_cells_match_the_repository_setting():
    problems = colab_links.drift()
    assert not problems, "run `make colab-links` (see the README's 'Publishing the course'):\n" + "\n".join(problems)


def test_the_setting_is_a_github_repository():
    assert colab_links.read_repo().count("/") == 1


def test_drift_is_reported_for_a_stale_setup_cell_and_a_stale_badge(tmp_path):
    root = copy_course(tmp_path)
    nb_path = sorted((root / "notebooks").glob("*.ipynb"))[0]
    nb = nbformat.read(nb_path, as_version=4)
    first = colab_links.first_code_cell(nb)
    first.source = first.source.replace(colab_links.read_repo(root), "someone/else")
    nbformat.write(nb, nb_path)
    readme = root / "README.md"
    readme.write_text(readme.read_text().replace(f"github/{colab_links.read_repo(root)}/", "github/someone/else/", 1))
    problems = colab_links.drift(root)
    assert any(nb_path.name in p and "setup cell" in p for p in problems), problems
    assert any(p.startswith("README.md: a Colab or Binder badge") for p in problems), problems


def test_a_notebook_missing_from_the_course_map_is_reported(tmp_path):
    root = copy_course(tmp_path)
    src = sorted((root / "notebooks").glob("*.ipynb"))[0]
    shutil.copy(src, root / "notebooks" / "99_not_in_the_map.ipynb")
    assert "README.md: no Colab badge for notebooks/99_not_in_the_map.ipynb" in colab_links.drift(root)


def test_one_command_moves_every_badge_and_setup_cell_to_a_new_address(tmp_path):
    root = copy_course(tmp_path)
    colab_links.write_repo("new-owner/new.course", root)
    assert colab_links.drift(root), "changing the setting alone must leave drift for the check to find"
    changed = colab_links.rewrite(root)
    assert "README.md" in changed and any(c.startswith("notebooks/") for c in changed)
    assert colab_links.drift(root) == []
    readme = (root / "README.md").read_text()
    assert "github/new-owner/new.course/blob/main/notebooks/" in readme
    assert "https://mybinder.org/v2/gh/new-owner/new.course/HEAD" in readme
    for path in colab_links.notebook_paths(root):
        first = colab_links.first_code_cell(nbformat.read(path, as_version=4))
        assert 'REPO = "https://github.com/new-owner/new.course"' in first.source


@pytest.mark.parametrize("bad", ["no-slash", "a/b/c", "owner/na me", ""])
def test_a_malformed_address_is_refused(tmp_path, bad):
    root = copy_course(tmp_path)
    with pytest.raises(ValueError, match="owner/name"):
        colab_links.write_repo(bad, root)


def test_setup_cell_on_colab_with_an_unreachable_address_explains_instead_of_failing(tmp_path):
    source = colab_links.setup_cell_source("nobody/attention-course").replace(
        'REPO = "https://github.com/nobody/attention-course"', f'REPO = "{UNREACHABLE}"')
    assert UNREACHABLE in source
    result = run_setup_cell(source, colab=True, tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "installing attnlib from the course's repository (about a minute)..."
    assert lines[1:3] == ["attnlib could not be installed. Run this line in a new cell,", "then run this cell again:"]
    assert lines[3] == f'!pip install "git+{UNREACHABLE}"'
    assert lines[4].startswith("python ") and "| torch " in lines[4]


def test_setup_cell_outside_colab_installs_nothing_and_prints_versions(tmp_path):
    result = run_setup_cell(colab_links.setup_cell_source(colab_links.read_repo()), colab=False, tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "installing" not in result.stdout
    line, = result.stdout.splitlines()
    for package in ("torch", "numpy", "matplotlib", "seaborn", "attnlib"):
        assert f"| {package} " in line and f"{package} not installed" not in line
