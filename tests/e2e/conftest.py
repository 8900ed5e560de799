"""Fixtures of the browser test: a JupyterLab server and a headless Debian Chromium driven by Playwright.

Run by `make e2e` only (tests/conftest.py keeps tests/e2e/ out of `make test`'s collection).
The server serves a copy of notebooks/ in build/e2e/work/, so JupyterLab's autosave can never
write new outputs into the repository's notebooks, and keeps its settings, workspaces and
runtime files under build/e2e/ too. Both the server and the browser are stopped at the end of
the session, also when a test fails.
"""

from __future__ import annotations

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

import pytest

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "build" / "e2e"
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
    # A SIGTERM (a CI timeout, `kill`) ends pytest through the finally blocks below, so the server
    # and the browser stop with it.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    log = open(OUT / "jupyterlab.log", "w")
    server = subprocess.Popen(command, cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT)
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
        server.terminate()  # JupyterLab shuts its kernels down on SIGTERM
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium, headless, through Playwright (never a browser Playwright downloads)."""
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: `make e2e` installs Debian's chromium (apt-get install chromium)")
    profile = OUT / "chromium-profile"
    shutil.rmtree(profile, ignore_errors=True)
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile), executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 1000},
        )
        try:
            yield context
        finally:
            context.close()
