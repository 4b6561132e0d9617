"""How much of a folder of another benchmark's problems kgb can run on the CPU backend.

``python benchmarks/problem_import.py DIR [DIR ...]`` (a KernelBench checkout's
``KernelBench/level1``, ``level2``), or ``--source gpumode DIR`` (GPU MODE's
``problems/pmpp``): each folder through the source, as ``kgb ops`` lists it, then for every
operator its small cases (held-out ones included) drawn and its reference run through the
problem host on the CPU, as the judge does before it checks a candidate there. Prints one line
per problem that fails a step, and per folder: problems,
operators, operators with a small case, operators whose small cases ran, and the slowest.
The importer's bar (issue 23): at least 95 % of level 1 and level 2 run.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path


def main() -> None:
    from kgb_core.operators import InputContext
    from kgb_core.plugins import load_registry

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--source", default="kernelbench", choices=("kernelbench", "gpumode"))
    args = parser.parse_args()
    registry = load_registry()
    source = registry.source(args.source)
    for folder in args.folders:
        files = (sorted(p for p in folder.glob("*.py") if not p.name.startswith("_"))
                 if args.source == "kernelbench" else
                 sorted(p for p in folder.iterdir() if (p / "task.yml").is_file()))
        with warnings.catch_warnings(record=True) as refused:
            warnings.simplefilter("always")
            source.configure({"path": str(folder)})
            started = time.monotonic()
            specs = source.operators()
            listed_s = time.monotonic() - started
        for warning in refused:
            print(f"  not an operator: {warning.message}")
        with_small = [spec for spec in specs if any(c.tier == "small" for c in spec.cases)]
        ran, slowest = 0, []
        for spec in with_small:
            started = time.monotonic()
            try:
                for case in spec.cases_in(("small",)):
                    inputs = spec.make_inputs(InputContext(case, spec.dtypes[0], 0, "cpu"))
                    spec.reference(*inputs)
            except Exception as error:  # noqa: BLE001 - each failure is a line of the report
                print(f"  {spec.id}: small case failed: {type(error).__name__}: "
                      f"{str(error)[:200]}")
                continue
            ran += 1
            slowest.append((time.monotonic() - started, spec.id))
        slowest.sort(reverse=True)
        print(f"{folder}: {len(files)} problems, {len(specs)} operators "
              f"(listed in {listed_s:.1f} s), "
              f"{len(with_small)} with a small case, {ran} ran on the CPU "
              f"({100.0 * ran / max(1, len(files)):.1f} % of the problems); slowest: "
              + ", ".join(f"{name} {seconds:.1f} s" for seconds, name in slowest[:3]))


if __name__ == "__main__":
    main()
