"""Speedup of a stored sweep by operator category: where a chip's kernels win and lose.

``python benchmarks/speedup_by_category.py --db .device/h200.db --source aten``

The report's MS view gives one geomean per source; a closing note or a vendor wants to know
whether a low geomean comes from GEMMs, reductions or 5 µs pointwise kernels. Each operator
counts once, in the first of ``CATEGORIES`` among its tags (an operator tagged ``pointwise``
and ``activation`` is pointwise), so the rows add up to the source's operators. The outcomes
are the report's own (the latest row per result key, ``fast_p`` over every operator tried).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from kgb_core.plugins import load_registry  # noqa: E402
from kgb_core.report import OperatorOutcome, operator_outcomes, render_table  # noqa: E402
from kgb_core.report import INTERPRETER, backend_kind  # noqa: E402
from kgb_core.reports.views import fast_p  # noqa: E402
from kgb_core.stats import geometric_mean  # noqa: E402
from kgb_core.store import ResultStore  # noqa: E402

# Most specific first: a softmax is also a reduction, a pooling op also a movement.
CATEGORIES = ("attention", "conv", "pool", "gemm", "matmul", "norm", "softmax", "loss", "scan",
              "sort", "reduction", "index", "scatter", "creation", "movement", "view", "pointwise")


def category_of(tags: frozenset[str] | set[str]) -> str:
    return next((name for name in CATEGORIES if name in tags), "other")


def category_rows(outcomes: list[OperatorOutcome], categories: dict[str, str]) -> list[list[str]]:
    groups: dict[str, list[OperatorOutcome]] = {}
    for outcome in outcomes:
        groups.setdefault(categories.get(outcome.op, "other"), []).append(outcome)
    rows = []
    for name, members in [*sorted(groups.items()), ("all", outcomes)]:
        speedups = [o.best_speedup for o in members if o.correct and o.best_speedup]
        geomean = geometric_mean(speedups)
        rows.append([name, str(len(members)), str(sum(o.correct for o in members)),
                     f"{geomean:.3g}" if geomean else "-",
                     f"{min(speedups):.3g}" if speedups else "-",
                     f"{max(speedups):.3g}" if speedups else "-",
                     f"{fast_p(members, 1.0):.2f}", f"{fast_p(members, 2.0):.2f}"])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--source", default="aten")
    parser.add_argument("--method", default="reference")
    parser.add_argument("--backend", default="nvidia")
    args = parser.parse_args()
    rows = [row for row in ResultStore(args.db).results()
            if (row["source"], row["method"], row["backend"])
            == (args.source, args.method, args.backend)]
    if not rows:
        sys.exit(f"no {args.method} results for {args.source} on {args.backend} in {args.db}")
    categories = {spec.id: category_of(spec.tags)
                  for spec in load_registry().operators([args.source], [])}
    outcomes = operator_outcomes(rows)
    print(f"{args.source} / {args.method} / {args.backend}: {args.db}")
    print(render_table(["category", "ops", "pass", "geomean speedup", "min", "max", "fast_1",
                        "fast_2"], category_rows(outcomes, categories)))
    if any(backend_kind(o.emulates, o.timing_labels) == INTERPRETER for o in outcomes):
        print("note: timed in Triton's interpreter on the CPU: these speedups measure the "
              "interpreter, not a chip, and are no performance result.")


if __name__ == "__main__":
    main()
