"""Benchmark attnlib's attention against PyTorch's own: time and peak memory, as a table.

    python tests/tools/bench_attention.py                # the full table (under 2 minutes on 2 idle cores)
    python tests/tools/bench_attention.py --quick        # T=256 and the MHA case only, fewer rounds
    python tests/tools/bench_attention.py --lengths 256 1024 --rounds 7

Cases (float32, CPU, torch's default number of threads, inference: ``torch.no_grad()``):

- ``scaled_dot_product_attention`` at B=8, H=8, Dh=64, T in {256, 1024, 2048}, self-shaped
  (Tq = Tk = T), no mask: attnlib against ``F.scaled_dot_product_attention`` forced to the
  math backend (``sdpa_kernel(SDPBackend.MATH)``: the same algorithm, it materialises the
  (B, H, T, T) weights too) and against its default backend (on CPU a fused flash-style
  kernel that never stores the weights, so it is expected to be faster and smaller).
- ``MultiHeadAttention`` at B=8, T=512, E=512, H=8 (after ``from_torch``, ``eval()``) against
  ``torch.nn.MultiheadAttention(..., need_weights=True, average_attn_weights=False)``, which
  returns the same (B, H, T, T) weights.

Time: ``torch.utils.benchmark.Timer``; the implementations of a case are timed in
interleaved rounds (a, b, c, a, b, c, ...) so that a change in machine load hits all of
them alike, each round runs the call ``number`` times (enough for about 0.2 s), and the
table shows the median over rounds. "attnlib / this" is attnlib's median time divided by
this implementation's: 1.00 for attnlib itself, above 1 when attnlib is slower.

Peak memory: each (implementation, case) runs once more in a fresh subprocess, which
builds the inputs, warms the implementation up on a tiny input (one-time allocations are
not counted), resets the kernel's peak-RSS mark (``echo 5 > /proc/self/clear_refs``),
reads its resident set size, calls the implementation once and reads the peak resident
set size ``VmHWM`` from ``/proc/self/status``. The table shows the difference: the memory
the call itself added at its peak, output (and weights) included. Why not tracemalloc:
it cannot see torch's allocations (psutil is not installed either). Why not
``resource.getrusage(...).ru_maxrss``: on Linux a child inherits its parent's peak across
fork and exec, so after the parent has run T=2048 every child reports the parent's peak
and a growth of 0; where /proc is missing (macOS) the script falls back to ``ru_maxrss``
growth, which is right only while the parent stays smaller than the child.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import platform
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils.benchmark import Timer

import attnlib

B, H, DH = 8, 8, 64  # the SDPA case: batch, heads, head width
MHA_B, MHA_T, MHA_E, MHA_H = 8, 512, 512, 8  # the MultiHeadAttention case
LENGTHS = (256, 1024, 2048)
TARGET = 1.2  # attnlib may take at most this times as long as torch's math backend / nn.MultiheadAttention

SDPA_IMPLS = {
    "attnlib": "attnlib scaled_dot_product_attention",
    "math": "F.scaled_dot_product_attention, math backend",
    "default": "F.scaled_dot_product_attention, default backend",
}
MHA_IMPLS = {
    "attnlib": "attnlib MultiHeadAttention",
    "torch": "nn.MultiheadAttention, need_weights=True",
}


def sdpa_call(impl: str, t: int, seed: int = 0) -> Callable[[], object]:
    """A zero-argument call of one SDPA implementation on (B, H, T, Dh) float32 inputs."""
    gen = torch.Generator().manual_seed(seed)
    query, key, value = (torch.randn(B, H, t, DH, generator=gen) for _ in range(3))  # (B, H, T, Dh)

    def run() -> object:
        with torch.no_grad():
            if impl == "attnlib":
                return attnlib.scaled_dot_product_attention(query, key, value)  # (output, weights)
            if impl == "math":
                with sdpa_kernel(SDPBackend.MATH):
                    return F.scaled_dot_product_attention(query, key, value)
            return F.scaled_dot_product_attention(query, key, value)

    return run


def mha_call(impl: str, t: int = MHA_T, seed: int = 0) -> Callable[[], object]:
    """A zero-argument self-attention call of one MHA implementation on (B, T, E) float32 input."""
    torch.manual_seed(seed)
    reference = torch.nn.MultiheadAttention(MHA_E, MHA_H, batch_first=True).eval()
    x = torch.randn(MHA_B, t, MHA_E)  # (B, T, E)
    if impl == "attnlib":
        module = attnlib.MultiHeadAttention.from_torch(reference).eval()

        def run() -> object:
            with torch.no_grad():
                return module(x, x, x)  # (output (B, T, E), weights (B, H, T, T))
    else:

        def run() -> object:
            with torch.no_grad():
                return reference(x, x, x, need_weights=True, average_attn_weights=False)

    return run


def build(kind: str, impl: str, t: int) -> Callable[[], object]:
    return sdpa_call(impl, t) if kind == "sdpa" else mha_call(impl, t)


def rss_mib() -> tuple[float, float]:
    """(current, peak) resident set size of this process in MiB, from /proc or ru_maxrss."""
    try:
        status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
        return int(status["VmRSS"].split()[0]) / 2**10, int(status["VmHWM"].split()[0]) / 2**10
    except (OSError, KeyError):
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
        peak = rss / 2**20 if platform.system() == "Darwin" else rss / 2**10
        return peak, peak


def reset_peak_rss() -> None:
    """Set the kernel's peak-RSS mark (VmHWM) to the current RSS, where Linux allows it."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


def child(kind: str, impl: str, t: int) -> None:
    """Run in a fresh subprocess: print the peak memory one call adds, as JSON."""
    build(kind, impl, 16)()  # warm-up on a tiny input: lazy initialisation is not counted
    run = build(kind, impl, t)  # allocates the inputs (and the module)
    gc.collect()
    reset_peak_rss()
    before, _ = rss_mib()
    result = run()
    _, peak = rss_mib()
    del result
    print(json.dumps({"peak_mib": peak - before, "baseline_mib": before}))


def peak_memory_mib(kind: str, impl: str, t: int) -> float:
    """The peak memory one call adds, measured in a fresh subprocess (see the module docstring)."""
    cmd = [sys.executable, __file__, "--child", kind, impl, str(t)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])["peak_mib"]


def time_interleaved(calls: dict[str, Callable[[], object]], rounds: int) -> dict[str, float]:
    """Median seconds per call of each implementation, timed in interleaved rounds."""
    timers, numbers = {}, {}
    for name, run in calls.items():
        start = time.perf_counter()
        run()  # warm-up, and a first estimate of the time per call
        numbers[name] = max(1, round(0.2 / (time.perf_counter() - start)))  # about 0.2 s per round
        timers[name] = Timer("run()", globals={"run": run}, num_threads=torch.get_num_threads(), label=name)
    times: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(rounds):
        for name, timer in timers.items():
            times[name].append(timer.timeit(numbers[name]).median)
    return {name: statistics.median(ts) for name, ts in times.items()}


def check_same_result(calls: dict[str, Callable[[], object]]) -> None:
    """The implementations must agree (output, and weights where torch returns them) before timing."""
    results = {impl: run() for impl, run in calls.items()}
    ours = results.pop("attnlib")
    for impl, result in results.items():
        theirs = (result,) if isinstance(result, torch.Tensor) else result
        for a, b, what in zip(ours, theirs, ("output", "weights")):
            torch.testing.assert_close(a, b, atol=1e-4, rtol=1e-4, msg=lambda m, w=what, i=impl: f"{w}: {i}: {m}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=list(LENGTHS), help="the SDPA sequence lengths T")
    parser.add_argument("--rounds", type=int, default=5, help="timing rounds per case (the median is reported)")
    parser.add_argument("--quick", action="store_true", help="T=256 and the MHA case only, 3 rounds")
    parser.add_argument("--no-memory", action="store_true", help="skip the peak-memory subprocesses")
    parser.add_argument("--no-mha", action="store_true", help="skip the MultiHeadAttention case")
    parser.add_argument("--child", nargs=3, metavar=("KIND", "IMPL", "T"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], args.child[1], int(args.child[2]))
        return 0
    if args.quick:
        args.lengths, args.rounds = [256], 3

    cases = [("sdpa", t, list(SDPA_IMPLS)) for t in args.lengths]
    if not args.no_mha:
        if hasattr(attnlib, "MultiHeadAttention"):
            cases.append(("mha", MHA_T, list(MHA_IMPLS)))
        else:
            print("attnlib has no MultiHeadAttention yet: the MHA case is skipped\n")

    start = time.perf_counter()
    rows, verdicts = [], []
    for kind, t, impls in cases:
        calls = {impl: build(kind, impl, t) for impl in impls}
        check_same_result(calls)
        medians = time_interleaved(calls, args.rounds)
        if kind == "sdpa":
            name = f"SDPA B={B} H={H} Dh={DH} T={t}"
            weights_mib = B * H * t * t * 4 / 2**20
        else:
            name = f"MHA B={MHA_B} T={t} E={MHA_E} H={MHA_H}"
            weights_mib = MHA_B * MHA_H * t * t * 4 / 2**20
        labels = SDPA_IMPLS if kind == "sdpa" else MHA_IMPLS
        for i, impl in enumerate(impls):
            peak = math.nan if args.no_memory else peak_memory_mib(kind, impl, t)
            ratio = medians["attnlib"] / medians[impl]
            rows.append((name if i == 0 else "", f"{weights_mib:.0f}", labels[impl], f"{medians[impl] * 1e3:.1f}",
                         f"{ratio:.2f}", "-" if math.isnan(peak) else f"{peak:.0f}"))
            if impl in ("math", "torch"):
                verdicts.append((name, labels[impl], ratio))
        print(f"  done: {kind} T={t} ({time.perf_counter() - start:.0f} s)", file=sys.stderr, flush=True)

    header = ("case", "weights MiB", "implementation", "median ms", "attnlib / this", "peak MiB")
    widths = [max(len(header[i]), *(len(r[i]) for r in rows)) for i in range(len(header))]
    print(f"torch {torch.__version__}, CPU ({torch.backends.cpu.get_cpu_capability()}), "
          f"{torch.get_num_threads()} threads, float32, no_grad; median of {args.rounds} interleaved rounds.")
    print("peak MiB: resident-memory growth at the peak of one call, in a fresh process (VmHWM after a "
          "clear_refs reset, minus RSS before the call; output and weights included).\n")
    print("| " + " | ".join(h.ljust(w) for h, w in zip(header, widths)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in rows:
        cells = [c.ljust(w) if i in (0, 2) else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))]
        print("| " + " | ".join(cells) + " |")
    print()
    for name, label, ratio in verdicts:
        status = "meets" if ratio <= TARGET else "MISSES"
        print(f"{status} the {TARGET}x target: attnlib / {label} = {ratio:.2f} ({name})")
    print(f"\nbenchmark took {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
