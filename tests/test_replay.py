"""The replay rules of the notebooks (DESIGN.md), and the fake clock `make test` replays them with.

- No stored output prints a number at rounding level in e-notation (a max difference such as
  1.4e-07): its digits depend on the CPU, its BLAS code path and the thread count. Such a number is
  asserted and printed as the bound it stays under ("below 1e-6").
- tests/replay/sitecustomize.py: in a Jupyter kernel started with COURSE_FAKE_CLOCK=1 every reading
  of time.perf_counter, time.time, time.monotonic (and their _ns variants) and timeit.default_timer
  by the notebook's code is exactly one second after the previous one; outside a kernel, or
  without the variable, the clocks are the real ones.
- `make test` replays the learner notebooks under the second numeric setting with that clock.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from jupyter_client.manager import start_new_kernel

ROOT = Path(__file__).resolve().parents[1]
REPLAY = ROOT / "tests" / "replay"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb")) + sorted((ROOT / "notebooks" / "solutions").glob("*.ipynb"))
# A number with a fraction and a negative exponent, as f"{x:.1e}" prints a tiny difference: 1.4e-07, 2.50e-5.
ROUNDING_LEVEL = re.compile(r"\d\.\d+e-\d+", re.IGNORECASE)
CLOCKS = """
import time, timeit
readings = [time.perf_counter(), time.perf_counter(), time.monotonic(), time.monotonic(), time.time(), time.time(),
            timeit.default_timer(), timeit.default_timer(), time.perf_counter_ns() / 1e9, time.perf_counter_ns() / 1e9,
            time.monotonic_ns() / 1e9, time.monotonic_ns() / 1e9, time.time_ns() / 1e9, time.time_ns() / 1e9]
print([round(b - a, 3) for a, b in zip(readings[::2], readings[1::2])])
"""


def text_outputs(cell) -> str:
    parts = []
    for output in cell.get("outputs", []):
        text = output.get("text") or output.get("data", {}).get("text/plain", "")
        parts.append("".join(text) if isinstance(text, list) else text)
    return "".join(parts)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.relative_to(ROOT / "notebooks").as_posix() for p in NOTEBOOKS])
def test_no_stored_output_prints_rounding_level_digits(path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    found = []
    for index, cell in enumerate(cells):
        ignored = "NBVAL_IGNORE_OUTPUT" in "".join(cell["source"]) or "nbval-ignore-output" in cell["metadata"].get(
            "tags", [])
        if cell["cell_type"] != "code" or ignored:
            continue
        found += [(index, m.group()) for m in ROUNDING_LEVEL.finditer(text_outputs(cell))]
    assert found == [], f"cells print rounding-level digits (assert a bound and print it instead): {found}"


def kernel_differences(env: dict[str, str]) -> list[float]:
    """Start a Jupyter kernel with env, read every clock twice in it, return the differences."""
    manager, client = start_new_kernel(kernel_name="python3", env=env)
    try:
        outputs = []
        client.execute_interactive(CLOCKS, timeout=60, output_hook=lambda msg: outputs.append(msg))
        text = "".join(m["content"].get("text", "") for m in outputs if m["msg_type"] == "stream")
        return json.loads(text)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def replay_env(**extra: str) -> dict[str, str]:
    path = os.pathsep.join(filter(None, [str(REPLAY), os.environ.get("PYTHONPATH")]))
    env = {k: v for k, v in os.environ.items() if k != "COURSE_FAKE_CLOCK"}
    return dict(env, PYTHONPATH=path, **extra)


def test_fake_clock_in_a_kernel_steps_one_second_per_reading():
    assert kernel_differences(replay_env(COURSE_FAKE_CLOCK="1")) == [1.0] * 7


BAR = """
import io, json
from tqdm import tqdm
out = io.StringIO()
for _ in tqdm(range(200), file=out):
    pass
print(json.dumps(out.getvalue().count("\\r")))
"""


def bar_redraws(env: dict[str, str]) -> int:
    """How often a tqdm bar over 200 items redraws in a kernel started with env."""
    manager, client = start_new_kernel(kernel_name="python3", env=env)
    try:
        outputs = []
        client.execute_interactive(BAR, timeout=60, output_hook=lambda msg: outputs.append(msg))
        return json.loads("".join(m["content"].get("text", "") for m in outputs if m["msg_type"] == "stream"))
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def test_fake_clock_keeps_progress_bars_to_their_first_and_last_redraw():
    """At one second per reading a bar would redraw at every item: a flood of messages that nbval, reading the
    kernel's output only after the cell, may lose the end of. With the fake clock it draws at its start and end."""
    assert bar_redraws(replay_env(COURSE_FAKE_CLOCK="1")) == 2


def test_kernel_clock_is_real_without_the_variable():
    differences = kernel_differences(replay_env())
    assert all(0 <= d < 0.5 for d in differences), differences


def test_fake_clock_only_in_kernels():
    """pytest itself (nbval's timeouts) and any other process keep the real clock."""
    code = "import time; a = time.perf_counter(); print(time.perf_counter() - a < 0.5)"
    done = subprocess.run([sys.executable, "-c", code], env=replay_env(COURSE_FAKE_CLOCK="1"),
                          capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "True"


def test_make_test_replays_learner_notebooks_under_second_setting_and_fake_clock():
    makefile = (ROOT / "Makefile").read_text()
    recipe = makefile[makefile.index("\ntest: "):].split("\n\n")[0]
    lines = [line for line in recipe.replace("\\\n", " ").splitlines() if "pytest" in line]
    assert any("notebooks/solutions" in line and "OMP_NUM_THREADS=1" in line for line in lines), lines
    other_cpu = re.search(r"^OTHER_CPU := (.*)$", makefile, re.M).group(1).split()
    assert set(other_cpu) == {"ATEN_CPU_CAPABILITY=default", "MKL_CBWR=COMPATIBLE", "OMP_NUM_THREADS=2"}, other_cpu
    assert any("$(OTHER_CPU)" in line and "COURSE_FAKE_CLOCK=1" in line
               and "tests/replay" in line and "--ignore=notebooks/solutions" in line for line in lines), lines


def _test_cpus_runs(tmp_path, *make_args) -> list[tuple[str, str, str]]:
    """What `make test-cpus` would run, with a stand-in python that prints its kernels, MKL path and arguments."""
    fake = tmp_path / "python"
    fake.write_text('#!/bin/sh\necho "RUN ${ATEN_CPU_CAPABILITY:-native} ${MKL_CBWR:-unset} $*"\n')
    fake.chmod(0o755)
    result = subprocess.run(["make", "-s", "-o", "setup", "test-cpus", f"PY={fake}", *make_args], cwd=ROOT,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    runs = []
    for line in result.stdout.splitlines():
        if line.startswith("RUN "):
            level, mkl, args = line.split(" ", 3)[1:]
            versions = "learner" if "--ignore=notebooks/solutions" in args else (
                "solutions" if " notebooks/solutions " in f" {args} " else "both")
            assert "--nbval" in args and "-n 2" in args and "--dist loadfile" in args, args
            runs.append((level, mkl, versions))
    return runs


def test_make_test_cpus_replays_both_versions_under_three_kernel_levels(tmp_path):
    assert _test_cpus_runs(tmp_path) == [("default", "COMPATIBLE", "both"), ("avx2", "COMPATIBLE", "both"),
                                         ("native", "COMPATIBLE", "both")]


def test_ci_skips_only_what_make_test_replayed_already(tmp_path):
    """CI's CPU_DONE names make test's two replays; every other level and version is still replayed."""
    ci = (ROOT / ".ci" / "run").read_text()
    line = next(x for x in ci.splitlines() if x.startswith("make test-cpus"))
    done = re.search(r'CPU_DONE="([^"]*)"', line).group(1)
    assert sorted(done.split()) == ["default:learner", "native:solutions"]
    assert ci.index("make test\n") < ci.index("make test-cpus")
    assert _test_cpus_runs(tmp_path, f"CPU_DONE={done}") == [
        ("default", "COMPATIBLE", "solutions"), ("avx2", "COMPATIBLE", "both"), ("native", "COMPATIBLE", "learner")]
