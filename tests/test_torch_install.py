"""The setup installs the CPU build of torch, never the CUDA one, on an ordinary Linux laptop.

On PyPI, `torch==2.13.0` for Linux is the CUDA build: it pulls several GB of nvidia packages.
The Makefile installs torch on its own from PyTorch's CPU wheel index instead. This machine
cannot reach either public index, so these tests give pip two small local indexes of the same
shape (a "PyPI" whose Linux torch requires an nvidia package, and a "CPU index" whose
torch==2.13.0+cpu does not) and ask pip, with `--dry-run --report`, what the Makefile's own
command line would install. pip's configuration files are switched off, so the machine's local
wheels cannot hide a wrong command.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NVIDIA = "nvidia-cublas-cu12"


def make_wheel(folder: Path, name: str, version: str, requires: tuple[str, ...] = ()) -> Path:
    """A minimal pure-Python wheel whose metadata names its dependencies."""
    dist = name.replace("-", "_")
    path = folder / f"{dist}-{version}-py3-none-any.whl"
    info = f"{dist}-{version}.dist-info"
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    metadata += "".join(f"Requires-Dist: {r}\n" for r in requires)
    wheel = "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(f"{info}/METADATA", metadata)
        z.writestr(f"{info}/WHEEL", wheel)
        z.writestr(f"{info}/RECORD", f"{info}/METADATA,,\n{info}/WHEEL,,\n{info}/RECORD,,\n")
    return path


def make_index(root: Path, wheels: dict[str, list[tuple[str, tuple[str, ...]]]]) -> str:
    """A PEP 503 "simple" index on disk: root/simple/<name>/index.html links to root/files/."""
    files = root / "files"
    files.mkdir(parents=True)
    for name, versions in wheels.items():
        page = root / "simple" / name
        page.mkdir(parents=True)
        links = [make_wheel(files, name, v, req).name for v, req in versions]
        page.joinpath("index.html").write_text(
            "<!DOCTYPE html><html><body>\n"
            + "".join(f'<a href="../../files/{f}">{f}</a>\n' for f in links) + "</body></html>\n")
    return (root / "simple").as_uri()


@pytest.fixture(scope="module")
def indexes(tmp_path_factory) -> dict[str, str]:
    base = tmp_path_factory.mktemp("indexes")
    linux_cuda = (f'{NVIDIA}==12.9.1.4; platform_system == "Linux"', "filelock")
    pypi = make_index(base / "pypi", {
        "torch": [("2.13.0", linux_cuda), ("2.14.1", linux_cuda)],
        NVIDIA: [("12.9.1.4", ())],
        "filelock": [("3.20.0", ())],
    })
    cpu = make_index(base / "cpu", {
        "torch": [("2.13.0+cpu", ("filelock",)), ("2.14.1+cpu", ("filelock",))],
        "filelock": [("3.20.0", ())],
    })
    return {"pypi": pypi, "cpu": cpu}


def pip_dry_run(args: list[str], tmp_path: Path, default_index: str) -> dict[str, str]:
    """What `pip install <args>` would install, as {name: version}, with default_index as PyPI."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_INDEX_URL=default_index, PIP_DISABLE_PIP_VERSION_CHECK="1")
    report = tmp_path / "report.json"
    cmd = [sys.executable, *args, "--dry-run", "--ignore-installed", "--no-cache-dir", "--report", str(report)]
    subprocess.run(cmd, check=True, capture_output=True, text=True, env=env, timeout=120)
    return {i["metadata"]["name"]: i["metadata"]["version"] for i in json.loads(report.read_text())["install"]}


def makefile_torch_install(**overrides: str) -> list[str]:
    """The arguments the Makefile gives `$(PY)` to install torch, with make variables overridden."""
    out = subprocess.run(
        ["make", "-s", "--no-print-directory", "--eval", "print-torch-install: ; @echo $(TORCH_INSTALL)",
         "print-torch-install", *(f"{k}={v}" for k, v in overrides.items())],
        cwd=ROOT, check=True, capture_output=True, text=True).stdout
    return out.split()


def test_the_makefile_installs_torch_from_the_cpu_index_by_default():
    args = makefile_torch_install()
    assert args[args.index("--index-url") + 1] == "https://download.pytorch.org/whl/cpu"
    assert args[-1] == "torch==2.13.0"
    assert "torch==2.13.0" in (ROOT / "requirements.txt").read_text().splitlines()


def test_the_makefiles_torch_install_brings_no_nvidia_package(indexes, tmp_path):
    args = makefile_torch_install(TORCH_INDEX=indexes["cpu"])
    installed = pip_dry_run(args, tmp_path, default_index=indexes["pypi"])
    assert installed == {"torch": "2.13.0+cpu", "filelock": "3.20.0"}


def test_plain_pypi_torch_brings_nvidia_packages_so_the_check_above_can_fail(indexes, tmp_path):
    installed = pip_dry_run(["-m", "pip", "install", "torch==2.13.0"], tmp_path, default_index=indexes["pypi"])
    assert installed["torch"] == "2.13.0" and NVIDIA in installed


def test_environment_yml_prefers_the_cpu_build_over_pypis(indexes, tmp_path):
    """Binder and conda read environment.yml: PyPI plus PyTorch's CPU index as an extra index."""
    text = (ROOT / "environment.yml").read_text()
    extra = re.search(r"--extra-index-url (\S+)", text).group(1)
    assert extra == "https://download.pytorch.org/whl/cpu"
    assert re.search(r"^\s+- torch==2\.13\.0$", text, re.M)
    args = ["-m", "pip", "install", "--extra-index-url", indexes["cpu"], "torch==2.13.0"]
    installed = pip_dry_run(args, tmp_path, default_index=indexes["pypi"])
    assert installed["torch"] == "2.13.0+cpu" and NVIDIA not in installed  # a local label sorts above the plain release


def test_requirements_pin_is_satisfied_by_the_installed_cpu_build(tmp_path):
    """After the CPU build is in, requirements.txt's torch==2.13.0 must not trigger a reinstall from PyPI."""
    import torch

    assert torch.__version__.startswith("2.13.0")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1")
    report = tmp_path / "report.json"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-index", "--dry-run", "--report", str(report),
                    "torch==2.13.0"], check=True, capture_output=True, env=env, timeout=120)
    assert json.loads(report.read_text())["install"] == []
