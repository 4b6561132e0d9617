"""``kgb report --compare A B``: two methods side by side, operator by operator.

A side is a method label in the store (``--db``), or another store file holding one label. For
each (operator, backend) either side tried: solved by both, by one only, or by neither, each
side's best speedup, and their ratio (A over B: above 1, A's kernel is faster). Operators where
the two differ come first, so the answer to "what does A solve that B does not" is on top.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Sequence

from kgb_core.backends import backend_label
from kgb_core.errors import UserError
from kgb_core.labels import method_label
from kgb_core.report import OperatorOutcome, operator_outcomes, render_table, verdict_counts
from kgb_core.stats import geometric_mean

BOTH, ONLY_A, ONLY_B, NEITHER = "both", "only A", "only B", "neither"
_ORDER = {ONLY_A: 0, ONLY_B: 1, BOTH: 2, NEITHER: 3}


@dataclass
class ComparedOperator:
    op: str
    backend: str
    solved: str                     # both, only A, only B, neither
    a_verdicts: list[str] | None    # None: that side never tried the operator here
    b_verdicts: list[str] | None
    a_speedup: float | None
    b_speedup: float | None
    ratio: float | None             # a_speedup / b_speedup where both were timed


@dataclass
class Comparison:
    a: str
    b: str
    operators: list[ComparedOperator]

    def counts(self) -> dict[str, int]:
        counted = Counter(o.solved for o in self.operators)
        return {key: counted.get(key, 0) for key in (BOTH, ONLY_A, ONLY_B, NEITHER)}

    def ratio_geomean(self) -> float | None:
        return geometric_mean(o.ratio for o in self.operators if o.ratio)

    def to_dict(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "counts": self.counts(),
                "speedup_ratio_geomean": self.ratio_geomean(),
                "operators": [asdict(o) for o in self.operators]}


def side_rows(spec: str, rows: Sequence[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """(label, its rows) for one side: a label among ``rows``, or a store file with one label."""
    labels = sorted({method_label(row) for row in rows})
    if spec in labels:
        return spec, [row for row in rows if method_label(row) == spec]
    path = Path(spec)
    if path.is_file():
        from kgb_core.store import ResultStore

        with ResultStore(path) as store:
            theirs = store.results()
        found = sorted({method_label(row) for row in theirs})
        if len(found) != 1:
            raise UserError(f"--compare: {spec} holds {len(found)} method labels "
                            f"({', '.join(found) or 'no results'}); name a label of one store "
                            f"instead: kgb report --db {spec} --compare LABEL_A LABEL_B")
        return found[0], theirs
    raise UserError(f"--compare: {spec!r} is neither a method label in this store "
                    f"({', '.join(labels) or 'no results'}) nor a store file")


def compare(a_spec: str, b_spec: str, rows: Sequence[dict[str, Any]]) -> Comparison:
    a_label, a_rows = side_rows(a_spec, rows)
    b_label, b_rows = side_rows(b_spec, rows)

    def by_key(outcomes: list[OperatorOutcome]) -> dict[tuple[str, str], OperatorOutcome]:
        return {(o.op, backend_label(o.backend, o.emulates)): o for o in outcomes
                if not o.skipped}

    a_of, b_of = by_key(operator_outcomes(a_rows)), by_key(operator_outcomes(b_rows))
    compared = []
    for op, backend in sorted(set(a_of) | set(b_of)):
        a, b = a_of.get((op, backend)), b_of.get((op, backend))
        a_ok, b_ok = bool(a and a.correct), bool(b and b.correct)
        solved = BOTH if a_ok and b_ok else ONLY_A if a_ok else ONLY_B if b_ok else NEITHER
        a_speed = a.best_speedup if a_ok else None
        b_speed = b.best_speedup if b_ok else None
        compared.append(ComparedOperator(
            op=op, backend=backend, solved=solved,
            a_verdicts=a.verdicts if a else None, b_verdicts=b.verdicts if b else None,
            a_speedup=a_speed, b_speedup=b_speed,
            ratio=a_speed / b_speed if a_speed and b_speed else None))
    compared.sort(key=lambda o: (_ORDER[o.solved], -(abs(_log_ratio(o.ratio))), o.op, o.backend))
    return Comparison(a=a_label, b=b_label, operators=compared)


def _log_ratio(ratio: float | None) -> float:
    return math.log(ratio) if ratio else 0.0


def render_comparison(comparison: Comparison) -> str:
    def verdicts(found: list[str] | None) -> str:
        return "not tried" if found is None else verdict_counts(found)

    rows = [[o.op, o.backend, o.solved, verdicts(o.a_verdicts), verdicts(o.b_verdicts),
             o.a_speedup, o.b_speedup, o.ratio] for o in comparison.operators]
    counts = comparison.counts()
    ratio = comparison.ratio_geomean()
    timed = sum(1 for o in comparison.operators if o.ratio)
    head = (f"A = {comparison.a}, B = {comparison.b}: solved by both {counts[BOTH]}, only A "
            f"{counts[ONLY_A]}, only B {counts[ONLY_B]}, neither {counts[NEITHER]}"
            + (f"; speedup A/B geomean {ratio:.3g} over the {timed} operators timed on both"
               if ratio else ""))
    table = render_table(["op", "backend", "solved", "A verdicts", "B verdicts", "A speedup",
                          "B speedup", "A/B"], rows)
    return head + "\n\n" + table
