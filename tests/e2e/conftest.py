"""Fixtures of the browser test: a JupyterLab server and a headless Debian Chromium driven by Playwright.

Run by `make e2e` only (tests/conftest.py keeps tests/e2e/ out of `make test`'s collection).
The server serves a copy of notebooks/ in build/e2e/work/, so JupyterLab's autosave can never
write new outputs into the repository's notebooks, and keeps its settings, workspaces and
runtime files under build/e2e/ too (E2E_OUT names another folder: tests/e2e/test_cleanup.py's runs).

Both the server and the browser are stopped at the end of the session, also when a test fails and
when the runner is stopped from outside: SIGTERM (a CI timeout, `kill`, a stopped parent) is turned
into the KeyboardInterrupt that SIGINT (Ctrl-C) already raises, so pytest ends the session through
its normal teardown. Each fixture then stops its whole process tree (JupyterLab and the kernels it
started in their own sessions; Playwright's driver and Chromium's processes), and a last sweep at the
end of the session stops any process this runner started that is still alive. JupyterLab also gets
SIGTERM from Linux if the runner dies without any teardown (SIGKILL).
"""

from __future__ import annotations

import ctypes
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import psutil
import pytest

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(os.environ.get("E2E_OUT") or ROOT / "build" / "e2e").resolve()
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
# What this machine's Chromium needs headless, as root, on a closed network: no sandbox (root),
# and none of the background connections (updates, sync, field trials) that would be refused.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
# Settings for the test's JupyterLab: draw every cell (no virtual scrolling), so each figure is
# in the page to be measured, and no news or update check (a toast asking about them, and a fetch
# this closed network refuses).
LAB_SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": '{"windowingMode": "none"}',
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings":
        '{"fetchNews": "false", "checkForUpdates": false}',
}


def _interrupt(signum, frame):
    """SIGTERM: end the session the way Ctrl-C does, through pytest's teardown (later SIGTERMs are ignored)."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise KeyboardInterrupt(f"signal {signum}")


def pytest_configure(config):
    signal.signal(signal.SIGTERM, _interrupt)


def pytest_unconfigure(config):
    """The last sweep: stop every process this runner started that is still alive."""
    stop_tree(psutil.Process().children(recursive=True))


def stop_tree(processes, timeout: float = 10) -> None:
    """SIGTERM to each process, SIGKILL to those still alive after timeout seconds, then reap them."""
    alive = []
    for process in processes:
        try:
            process.terminate()
            alive.append(process)
        except psutil.NoSuchProcess:
            pass
    _, alive = psutil.wait_procs(alive, timeout=timeout)
    for process in alive:
        try:
            process.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(alive, timeout=timeout)


def descendants(processes) -> list:
    """Every process below these (children, their children, ...), as they are now."""
    found = []
    for process in processes:
        try:
            found += process.children(recursive=True)
        except psutil.NoSuchProcess:
            pass
    return found


def _die_with_parent() -> None:
    """In the child, before exec: Linux sends it SIGTERM when the runner dies, even by SIGKILL."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG
    except (AttributeError, OSError):  # not Linux: the teardown and the last sweep still stop it
        pass


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def lab():
    """Start JupyterLab on a free port with a generated token; yield (base url, token, work dir)."""
    work = OUT / "work"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(ROOT / "notebooks", work / "notebooks", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    settings = OUT / "lab-settings"
    shutil.rmtree(settings, ignore_errors=True)
    for name, text in LAB_SETTINGS.items():
        (settings / name).parent.mkdir(parents=True, exist_ok=True)
        (settings / name).write_text(text)
    port, token = free_port(), secrets.token_hex(16)
    env = dict(
        os.environ,
        OMP_NUM_THREADS="1",
        JUPYTERLAB_SETTINGS_DIR=str(settings),
        JUPYTERLAB_WORKSPACES_DIR=str(OUT / "lab-workspaces"),
        JUPYTER_RUNTIME_DIR=str(OUT / "lab-runtime"),
    )
    command = [
        sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
        "--port-retries=0", f"--ServerApp.root_dir={work / 'notebooks'}", f"--IdentityProvider.token={token}",
        "--LabApp.expose_app_in_browser=True", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    if os.geteuid() == 0:
        command.append("--allow-root")
    log = open(OUT / "jupyterlab.log", "w")
    server = subprocess.Popen(command, cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT,
                              preexec_fn=_die_with_parent if sys.platform == "linux" else None)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if server.poll() is not None:
                raise RuntimeError(f"JupyterLab exited with code {server.returncode}; see {OUT / 'jupyterlab.log'}")
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=5):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"JupyterLab did not answer on port {port} within 120 s") from None
                time.sleep(0.5)
        yield base, token, work
    finally:
        # The kernels run in sessions of their own, so they are found as the server's descendants,
        # before the server stops; JupyterLab shuts them down itself on SIGTERM, stop_tree catches the rest.
        try:
            tree = psutil.Process(server.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            tree = []
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        stop_tree(tree)
        log.close()


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium, headless, through Playwright (never a browser Playwright downloads)."""
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: `make e2e` installs Debian's chromium (apt-get install chromium)")
    profile = OUT / "chromium-profile"
    shutil.rmtree(profile, ignore_errors=True)
    before = {p.pid for p in psutil.Process().children()}
    driver, chromium = [], []
    try:
        with sync_playwright() as playwright:
            # Playwright's driver: the child process this runner started just now; Chromium runs under it.
            driver = [p for p in psutil.Process().children() if p.pid not in before]
            context = playwright.chromium.launch_persistent_context(
                str(profile), executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
                viewport={"width": 1280, "height": 1000},
            )
            try:
                yield context
            finally:
                chromium = descendants(driver)
                try:
                    context.close()
                except Exception:  # an interrupted driver may not answer any more: stop_tree ends it below
                    pass
    finally:
        stop_tree(chromium + [p for p in descendants(driver) if p not in chromium])  # Chromium's processes
        stop_tree(driver)
