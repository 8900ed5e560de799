"""attnlib's packaging: pyproject.toml builds with no deprecation warning, its licence an SPDX expression.

setuptools 77 reads `license = "MIT"` (PEP 639) and warns about the older table, `license = { text = "MIT" }`:
"By 2027-Feb-18, you need to update your project ... or your builds will no longer be supported", after
which `pip install -e .` (and so `make lab` and `make test`) would fail. The build here is the one `make
setup` runs, in pip's isolated build environment with the setuptools that pyproject.toml asks for.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]


def test_the_licence_is_an_spdx_expression_and_the_build_requires_a_setuptools_that_reads_it():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["project"]["license"] == "MIT"
    [setuptools] = [r for r in pyproject["build-system"]["requires"] if r.startswith("setuptools")]
    assert setuptools.replace(" ", "") == "setuptools>=77", setuptools


def test_attnlib_builds_without_a_deprecation_warning_and_says_its_licence(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--verbose", "--wheel-dir", str(tmp_path), str(ROOT)],
        capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    log = done.stdout + done.stderr
    assert "SetuptoolsDeprecationWarning" not in log, log[log.index("SetuptoolsDeprecationWarning") - 200:][:1500]
    [wheel] = tmp_path.glob("attnlib-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        metadata = archive.read(next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    assert "License-Expression: MIT" in metadata.splitlines()
