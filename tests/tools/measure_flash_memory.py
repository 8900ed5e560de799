"""Peak memory of flash_attention with a float16 (Tk,) bias, measured in a fresh process.

Usage: python tests/tools/measure_flash_memory.py [T] [H]

Each measurement runs in its own Python process (so that no earlier allocation is counted): it makes
float16 query, key, value (1, H, T, 64) and a float16 (T,) bias, records the peak resident set size
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``, Linux: KiB), runs flash_attention forward and backward,
and reports how far the peak rose above that baseline. For comparison the same is done with torch's
SDPA (whose CPU kernel for a float mask is not O(T) in memory) and with attnlib's
scaled_dot_product_attention (which stores the (T, T) weights by design).
"""

from __future__ import annotations

import subprocess
import sys

CHILD = r"""
import resource, sys, torch
import attnlib as A
torch.manual_seed(0)
t, h, which = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
q, k, v = (torch.randn(1, h, t, 64).half().requires_grad_() for _ in range(3))
bias = torch.randn(t).half()  # (Tk,): one bias per key, 2 * T bytes
if which == "flash":
    f = lambda: A.flash_attention(q, k, v, attn_mask=bias)
elif which == "attnlib_sdpa":
    f = lambda: A.scaled_dot_product_attention(q, k, v, attn_mask=bias)[0]
else:
    f = lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=bias.expand(t, t))
small = [x[..., :64, :].detach().clone().requires_grad_() for x in (q, k, v)]
A.flash_attention(*small, attn_mask=bias[:64]).sum().backward()  # warm up the kernels and the allocator
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
f().float().sum().backward()
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print((after - before) / 1024)
"""


def peak_mib(t: int, h: int, which: str) -> float:
    out = subprocess.run([sys.executable, "-c", CHILD, str(t), str(h), which], capture_output=True, text=True,
                         check=True)
    return float(out.stdout.strip())


if __name__ == "__main__":
    t = int(sys.argv[1]) if len(sys.argv) > 1 else 8192
    h = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    inputs = 3 * h * t * 64 * 2 / 2**20
    print(f"T = {t}, H = {h}, Dh = 64, float16; inputs {inputs:.1f} MiB; a (T, T) float32 matrix per head "
          f"{t * t * 4 / 2**20:.0f} MiB")
    for which in ("flash", "attnlib_sdpa", "torch_sdpa"):
        print(f"{which:>13}: peak RSS rose by {peak_mib(t, h, which):.1f} MiB (forward + backward)")
