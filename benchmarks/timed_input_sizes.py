"""How much memory each operator's timed inputs take on a backend, without drawing them.

``python benchmarks/timed_input_sizes.py [--backend nvidia] [--top 12]``

draws every timed case's inputs (the backend's timed tiers and dtypes, shown cases only) on
torch's ``meta`` device, which keeps shapes and dtypes but no data, and prints, per operator,
the bytes of the three input sets a timed case is handed (``checker.TIMING_SEEDS``) summed over
its timed cases, and its largest case: what a judge and its runner hold between handing the
sets over and timing them (``checker.TIMED_BATCH_BYTES`` batches them). Operators whose input
makers cannot draw on ``meta`` are counted and named.
"""

from __future__ import annotations

import argparse
import statistics

from kgb_core.evaluation.checker import TIMING_SEEDS
from kgb_core.evaluation.job_memory import storage_bytes, timed_cases
from kgb_core.operators import InputContext
from kgb_core.plugins import load_registry

GIB = 1 << 30


def timed_bytes(spec, quirks) -> tuple[int, int, bool]:
    """(all timed cases' input sets, the largest case's, whether every case could be drawn)."""
    cases, complete = [], True
    for case, dtype in timed_cases(spec, quirks):
        try:
            inputs = spec.make_inputs(InputContext(case, dtype, 0, "meta"))
        except Exception:  # noqa: BLE001 - an input maker that needs real values
            complete = False
            continue
        cases.append(storage_bytes(inputs) * len(TIMING_SEEDS))
    return sum(cases), max(cases, default=0), complete


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", default="nvidia")
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args()
    registry = load_registry()
    quirks = registry.backend(args.backend).quirks
    rows, partial = [], []
    for spec in registry.operators():
        total, largest, complete = timed_bytes(spec, quirks)
        rows.append((total, largest, spec.id))
        if not complete:
            partial.append(spec.id)
    rows.sort()
    totals = [total for total, _, _ in rows]
    print(f"{len(rows)} operators on {args.backend}: timed input sets (three per case) per "
          f"operator, median {statistics.median(totals) / GIB:.2f} GiB; over 1 GiB "
          f"{sum(t > GIB for t in totals)}, over 2 GiB {sum(t > 2 * GIB for t in totals)}, "
          f"over 4 GiB {sum(t > 4 * GIB for t in totals)}")
    print(f"largest {args.top}:")
    for total, largest, op in rows[-args.top:]:
        print(f"  {total / GIB:7.2f} GiB in all, largest case {largest / GIB:6.2f} GiB  {op}")
    if partial:
        print(f"{len(partial)} operator(s) with a case that cannot be drawn on meta (not "
              f"counted): {', '.join(partial)}")


if __name__ == "__main__":
    main()
