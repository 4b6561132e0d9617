"""Per-candidate cost of the sandbox: a fresh worker per candidate against a reused one.

``python benchmarks/worker_overhead.py --backend cpu --candidates 5``. Each candidate is the
reference kernel of one small operator, checked on one seed without timing, so what the table
shows is mostly process start, torch/triton import and device setup (fresh) versus only the
job's own work (reused).
"""

from __future__ import annotations

import argparse
import time

from kgb_core.evaluation.pool import EvaluationSettings, Evaluator
from kgb_core.plugins import load_registry
from kgb_core.report import render_table


def seconds_per_candidate(backend_name: str, op_id: str, candidates: int, reuse: bool) -> float:
    registry = load_registry()
    backend = registry.backend(backend_name)
    source = registry.operator(op_id).reference_kernel()
    settings = EvaluationSettings(seeds=(0,), timing=False, worker_reuse=reuse)
    with Evaluator.for_backend(backend, settings) as evaluator:
        if reuse:
            evaluator.start()  # a sweep starts its worker once, before the first candidate
            evaluator.evaluate(op_id, source)  # and compiles the kernel once
        started = time.perf_counter()
        for _ in range(candidates):
            result = evaluator.evaluate(op_id, source)
            if not result.passed:
                raise SystemExit(f"{op_id}: {result.verdict}: {result.message}")
        return (time.perf_counter() - started) / candidates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--op", default="aten.neg")
    parser.add_argument("--candidates", type=int, default=5)
    args = parser.parse_args()
    fresh = seconds_per_candidate(args.backend, args.op, args.candidates, reuse=False)
    reused = seconds_per_candidate(args.backend, args.op, args.candidates, reuse=True)
    print(f"backend {args.backend}, op {args.op}, {args.candidates} candidates each")
    print(render_table(["worker", "s per candidate"],
                       [["fresh per candidate", f"{fresh:.3f}"], ["reused", f"{reused:.3f}"],
                        ["saved by reuse", f"{fresh - reused:.3f}"]]))


if __name__ == "__main__":
    main()
