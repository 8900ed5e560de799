"""Print mutmut's results per attnlib module: mutants, killed, survived, kill rate.

Run by ``make mutants`` after ``mutmut run``; reads the ``mutants/`` directory that mutmut
leaves (one ``<module>.py.meta`` JSON file per module, holding each mutant's exit code).
A mutant counts as killed when a test failed (or timed out, or crashed) with it in place;
one that no test reaches ("no tests") counts as survived. ``--survivors`` lists the
survivors' names; ``mutmut show NAME`` prints a survivor's diff.

    python tests/tools/mutants_report.py [--survivors] [--dir mutants]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

KILLED = {1, 3, 24, -24, 36, 152, 255, -9, -11}  # a test failed, pytest errored, timed out or crashed
SURVIVED = {0, 5, 33}  # every selected test passed, or no test reached the mutant


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default="mutants", help="mutmut's work directory (default: mutants)")
    parser.add_argument("--survivors", action="store_true", help="list every surviving mutant")
    args = parser.parse_args()
    metas = sorted(Path(args.dir).rglob("*.py.meta"))
    if not metas:
        print(f"no mutmut results under {args.dir}/: run `mutmut run` first", file=sys.stderr)
        return 1
    rows, survivors = [], []
    for meta in metas:
        codes = json.loads(meta.read_text())["exit_code_by_key"]
        if not codes:
            continue
        killed = sum(code in KILLED for code in codes.values())
        survived = [name for name, code in codes.items() if code in SURVIVED]
        unchecked = len(codes) - killed - len(survived)
        module = str(meta.relative_to(args.dir)).removesuffix(".meta")
        rows.append((module, len(codes), killed, len(survived), unchecked))
        survivors += survived
    print(f"{'module':<22} {'mutants':>7} {'killed':>7} {'survived':>8} {'other':>6} {'kill rate':>9}")
    for module, total, killed, survived, other in [*rows, ("total", *map(sum, zip(*(r[1:] for r in rows))))]:
        rate = f"{100 * killed / (killed + survived):.1f}%" if killed + survived else "-"
        print(f"{module:<22} {total:>7} {killed:>7} {survived:>8} {other:>6} {rate:>9}")
    print("other = not checked, skipped or suspicious (not counted in the kill rate)")
    if args.survivors:
        print("\nsurvivors (mutmut show NAME prints the change):")
        print("\n".join(f"  {name}" for name in survivors))
    return 0


if __name__ == "__main__":
    sys.exit(main())
