"""`make e2e` stops everything it started when its runner is stopped from outside.

The browser test is started on two notebooks in a pytest of its own (its output in a temporary
folder, E2E_OUT), and stopped once JupyterLab, a kernel, Playwright's driver and Chromium all run,
while the first notebook is still running: with SIGTERM (what a CI timeout or a stopped parent
sends), with SIGINT (Ctrl-C) and with SIGKILL (no teardown possible), sent to the runner alone. The
runner must end within 120 s (not go on to the next notebook), and then none of the processes it
started may be alive: every descendant of the runner seen until the signal, and every process whose
command line names the run's temporary folder (the kernels' connection files, Chromium's profile),
also those started after the last look.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

ROOT = Path(__file__).resolve().parents[2]
# Two notebooks: the first (the slowest, it trains two models) still runs at the signal, and a runner
# that went on to the second after it (as a SIGTERM turned into a failed test once did) fails the test.
NOTEBOOKS = "06_additive or 07_positional"
KINDS = ("JupyterLab", "kernel", "Playwright driver", "Chromium")


def kind(process: psutil.Process) -> str | None:
    try:
        command = " ".join(process.cmdline())
        name = process.name()
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return None
    if "ipykernel_launcher" in command:
        return "kernel"
    if "jupyterlab" in command:
        return "JupyterLab"
    if "chromium" in name or "chromium" in command.split(" ")[0]:
        return "Chromium"
    if "run-driver" in command:
        return "Playwright driver"
    return None


def naming(folder: Path) -> list[psutil.Process]:
    """The processes whose command line names folder."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        if str(folder) in " ".join(process.info["cmdline"] or ()):
            found.append(process)
    return found


def alive(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL], ids=lambda s: s.name)
def test_stopped_runner_leaves_no_process(tmp_path, signum):
    out = tmp_path / "e2e"
    log = open(tmp_path / "runner.log", "w")
    command = [sys.executable, "-m", "pytest", str(ROOT / "tests" / "e2e" / "test_lab.py"), "-k", NOTEBOOKS,
               "-p", "no:cacheprovider", "-q"]
    # SIGINT back to its default in the runner, as in a terminal: a shell starts a background job (make e2e
    # under `&`, nohup) with SIGINT ignored, and Python keeps it ignored.
    runner = subprocess.Popen(command, cwd=ROOT, env=dict(os.environ, E2E_OUT=str(out)), stdout=log,
                              stderr=subprocess.STDOUT, start_new_session=True,
                              preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    seen: dict[int, psutil.Process] = {}
    kinds: set[str | None] = set()  # of the processes seen alive
    try:
        deadline, ready_since = time.monotonic() + 300, None
        while True:
            assert runner.poll() is None, f"the runner ended by itself; see {tmp_path / 'runner.log'}"
            for process in psutil.Process(runner.pid).children(recursive=True) + naming(out):
                seen.setdefault(process.pid, process)
            kinds |= {kind(p) for p in seen.values() if alive(p)}
            if ready_since is None and set(KINDS) <= kinds:
                ready_since = time.monotonic()
            if ready_since is not None and time.monotonic() > ready_since + 8:  # Run All has restarted the kernel
                break
            assert time.monotonic() < deadline, f"after 300 s only {sorted(filter(None, kinds))} run"
            time.sleep(0.5)
        runner.send_signal(signum)
        try:
            runner.wait(timeout=120)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the runner still runs 120 s after {signal.Signals(signum).name}")
        # After SIGTERM or SIGINT the runner's teardown has stopped everything before it exits (2 s for a
        # process started at the last moment); after SIGKILL, JupyterLab gets SIGTERM from Linux and needs a
        # few seconds to shut its kernels down.
        grace = time.monotonic() + (30 if signum == signal.SIGKILL else 2)
        while True:
            time.sleep(1)
            for process in naming(out):
                seen.setdefault(process.pid, process)
            survivors = [(p.pid, kind(p), " ".join(p.cmdline())[:120]) for p in seen.values() if alive(p)]
            if not survivors or time.monotonic() > grace:
                break
        assert survivors == [], f"still running after {signal.Signals(signum).name} to the runner: {survivors}"
        if signum != signal.SIGKILL:  # SIGKILL allows no teardown: Linux's SIGTERM to JupyterLab has to do
            assert runner.returncode == 2, f"pytest's code for an interrupted session is 2, got {runner.returncode}"
        assert kinds >= set(KINDS), kinds
    finally:
        log.close()
        for process in [psutil.Process(runner.pid)] if runner.poll() is None else []:
            process.kill()
        for process in seen.values():  # never leave a survivor behind this test
            if alive(process):
                process.kill()
