"""Notebook 10's numbers over several seeds: do its asserts hold with margin? (Not run by `make test`.)

    OMP_NUM_THREADS=1 PYTHONPATH=$PWD python tests/tools/seed_spread_10.py 0 1 2 3

Runs the code cells of notebooks/solutions/10_induction_heads.ipynb up to section 6 (SmolLM2, which
trains nothing) once per seed, with `SEED = 0` replaced by the seed and the progress bar left out,
and prints per seed the losses, the two head scores (layers x heads), the ablations, the one-layer
model, and which check cells failed. About a minute per seed on one core.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import matplotlib
import nbformat

matplotlib.use("Agg")
NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "solutions" / "10_induction_heads.ipynb"
PROGRESS = "tqdm(range(steps), file=sys.stdout, mininterval=2, ncols=80)"


def cells_before_smollm2() -> list[str]:
    sources = []
    for cell in nbformat.read(NOTEBOOK, as_version=4).cells:
        if cell.cell_type == "markdown" and cell.source.startswith("## 6."):
            break
        if cell.cell_type == "code" and "google.colab" not in cell.source and not cell.source.startswith("nb10."):
            sources.append(cell.source.replace(PROGRESS, "range(steps)"))
    return sources


def main(seeds: list[int]) -> None:
    sources = cells_before_smollm2()
    for seed in seeds:
        ns: dict = {}
        failed, start = [], time.perf_counter()
        for source in sources:
            try:
                exec(compile(source.replace("SEED = 0", f"SEED = {seed}"), "cell", "exec"), ns)
            except AssertionError:
                failed.append(source.splitlines()[0])
        second = ns["smooth"][:, 1]
        drop = int((second < 2.5).nonzero()[0]) * 10 if (second < 2.5).any() else None
        prev, prefix = (ns[name].numpy().round(2).tolist() for name in ("prev_score", "prefix_score"))
        print(f"seed {seed} ({time.perf_counter() - start:.0f} s): first copy {ns['trained_first']:.2f}, "
              f"second copy {ns['trained_second']:.2f}, below 2.5 at step {drop} | previous-token {prev} "
              f"prefix-matching {prefix} | previous-token head zeroed {ns['no_prev_second']:.2f}, induction heads "
              f"zeroed {ns['no_induction_second']:.2f}, one layer {ns['one_second']:.2f} | failed checks: {failed}",
              flush=True)


if __name__ == "__main__":
    main([int(s) for s in sys.argv[1:]] or [0, 1, 2, 3])
