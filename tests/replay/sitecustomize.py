"""A fake clock for the replay of the notebooks: no stored output, and no assert, may depend on timing.

`make test` replays the learner notebooks with this folder on PYTHONPATH and COURSE_FAKE_CLOCK set
to a step in seconds (1 there). Python imports `sitecustomize` at start-up; in a Jupyter kernel
(`python -m ipykernel_launcher`) this one replaces time.perf_counter, time.time, time.monotonic,
their _ns variants and timeit.default_timer by a clock that advances by the step at every reading
made by the notebook's code. Every timed call then "takes" exactly one step, whatever the machine
and its load, so a cell that asserts a time, a ratio of times or a speed-up fails on every run,
and loops that time themselves (torch.utils.benchmark's autorange) still end. With a large step
(1 s) an autorange stops after a few readings; a tiny one (1 ms) would make it loop for ever.

A progress bar (tqdm) reads the clock too: at one step per reading it would redraw at every iteration,
thousands of widget messages in a training cell, more than ZeroMQ queues while nbval waits for the
cell to finish (it reads the kernel's output only afterwards), so the last ones, the cell's "idle"
among them, could be dropped ("Timeout of 5 seconds exceeded waiting for output"). With the fake
clock a bar therefore redraws only when it starts and ends (TQDM_MININTERVAL, unless already set).

The kernel's own machinery (its event loop, ZeroMQ, threads, logging) keeps the real clock: a
reading is faked only when the code that asks is not one of those packages. In any other process,
or without COURSE_FAKE_CLOCK, this module does nothing but hand over to another sitecustomize
further down sys.path, if there is one.
"""

from __future__ import annotations

import os
import sys

# Packages that keep the real clock: the kernel's event loop and messaging, which schedule with it.
REAL_CLOCK_PACKAGES = frozenset({
    "asyncio", "selectors", "threading", "queue", "concurrent", "logging", "socket", "ssl",
    "tornado", "zmq", "ipykernel", "IPython", "jupyter_client", "jupyter_core", "traitlets", "comm",
    "debugpy", "ipyparallel", "psutil",
})


def _in_kernel() -> bool:
    """True in a Jupyter kernel: `python -m ipykernel_launcher -f ...` (sys.orig_argv, Python 3.10+)."""
    return any("ipykernel" in arg for arg in getattr(sys, "orig_argv", sys.argv))


def install(step: float) -> None:
    """Replace the clocks of the time and timeit modules by the fake one (step seconds per reading)."""
    import time
    import timeit

    real = {name: getattr(time, name) for name in ("perf_counter", "time", "monotonic")}
    start = {name: clock() for name, clock in real.items()}
    readings = [0]  # shared by every clock: each reading by the notebook's code is one step later

    def make(name: str, ns: bool):
        real_clock = real[name]

        def clock():
            caller = sys._getframe(1).f_globals.get("__name__") or ""
            if caller.partition(".")[0] in REAL_CLOCK_PACKAGES:
                value = real_clock()
            else:
                readings[0] += 1
                value = start[name] + readings[0] * step
            return int(value * 1_000_000_000) if ns else value

        clock.__name__ = f"{name}_ns" if ns else name
        clock.__doc__ = f"Fake {clock.__name__}: {step} s more at every reading (tests/replay/sitecustomize.py)."
        return clock

    os.environ.setdefault("TQDM_MININTERVAL", "1e9")  # seconds between two redraws of a progress bar
    for name in real:
        setattr(time, name, make(name, ns=False))
        setattr(time, f"{name}_ns", make(name, ns=True))
    timeit.default_timer = time.perf_counter


def _chain() -> None:
    """Run the next sitecustomize on sys.path (this module shadows it), if there is one."""
    import importlib.machinery
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is not None and spec.loader is not None and spec.origin != os.path.abspath(__file__):
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


_chain()
if os.environ.get("COURSE_FAKE_CLOCK") and _in_kernel():
    install(float(os.environ["COURSE_FAKE_CLOCK"]))
