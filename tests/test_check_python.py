"""The setup refuses a Python the pins cannot install on, first, with the command to run instead."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "tools"))
import check_python  # noqa: E402


@pytest.mark.parametrize("version", [(3, 11, 7), (3, 12, 0), (3, 14, 2)])
def test_pythons_the_pins_have_wheels_for_are_accepted(version):
    assert check_python.problem(version, "python3") is None


@pytest.mark.parametrize("version", [(3, 10, 14), (3, 9, 6), (3, 15, 0), (2, 7, 18)])
def test_other_pythons_are_refused_with_what_to_run(version):
    message = check_python.problem(version, "/usr/bin/python3")
    assert f"/usr/bin/python3 is Python {version[0]}.{version[1]}" in message
    assert "Python 3.11 to 3.14" in message
    assert "make lab PYTHON=python3.11" in message


def test_this_python_passes_the_check():
    assert subprocess.run([sys.executable, str(ROOT / "tests" / "tools" / "check_python.py")]).returncode == 0


def test_make_names_a_missing_python_before_creating_anything(tmp_path):
    venv = tmp_path / "venv"
    result = subprocess.run(["make", "-s", "setup", "PYTHON=python3.999", f"VENV={venv}"],
                            cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "python3.999 not found" in result.stdout and "PYTHON=python3.11" in result.stdout
    assert not venv.exists()
