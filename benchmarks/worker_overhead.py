"""Per-candidate cost of the sandbox, and the harness's overhead against the kernel work it times.

``python benchmarks/worker_overhead.py --backend cpu --candidates 5`` prints two tables.

1. **Sandbox cost**: the reference kernel of one small operator (``--op``), checked on one
   seed without timing, with a fresh worker per candidate against a reused one: mostly process
   start, torch/triton import and device setup (fresh) versus only the job's own work (reused).

2. **Overhead against kernel time** (``--timed-ops``, default a handful of ATen operators whose
   large cases run 50 us and more on a GPU): each operator's reference kernel evaluated *with*
   timing, fresh and reused worker. For one evaluation,
   - *kernel work* is what the timer measured: over every timed case, candidate and baseline,
     the median times the repetitions (``sum(median_ms * repetitions)``);
   - *overhead* is the evaluation's wall time minus that kernel work: worker start (fresh),
     correctness trials, anti-cheat probes, inputs, warm-ups, cache flushes, IPC;
   - *overhead %* is overhead over kernel work, the issue's target being at most 5 % for kernels
     of 50 us and more. A row whose candidate median is under 50 us is shown, but marked.

On the CPU backend the kernels run in Triton's interpreter: the second table then describes the
interpreter's pipeline, not a GPU's.
"""

from __future__ import annotations

import argparse
import time

from kgb_core.evaluation.pool import EvaluationSettings, Evaluator
from kgb_core.plugins import load_registry
from kgb_core.report import render_table

DEFAULT_TIMED_OPS = "aten.add,aten.softmax,aten.mm,aten.sum,aten.layer_norm"
KERNEL_FLOOR_MS = 0.05
TARGET_OVERHEAD_PCT = 5.0


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


def kernel_work_ms(timings: list[dict]) -> float:
    """What the timer measured in one evaluation: median x repetitions, candidate and baseline."""
    return sum(t[side]["median_ms"] * t[side]["repetitions"] for t in timings
               for side in ("candidate", "reference"))


def timed_overhead(backend_name: str, op_id: str, reuse: bool) -> dict:
    registry = load_registry()
    backend = registry.backend(backend_name)
    source = registry.operator(op_id).reference_kernel()
    settings = EvaluationSettings(seeds=(0,), timing=True, worker_reuse=reuse)
    with Evaluator.for_backend(backend, settings) as evaluator:
        if reuse:
            evaluator.start()
            evaluator.evaluate(op_id, source)  # a warm worker: kernel compiled and cached
        started = time.perf_counter()
        result = evaluator.evaluate(op_id, source)
        wall_ms = (time.perf_counter() - started) * 1e3
    if not result.passed:
        raise SystemExit(f"{op_id}: {result.verdict}: {result.message}")
    work = kernel_work_ms(result.timings)
    medians = [t["candidate"]["median_ms"] for t in result.timings]
    return {"op": op_id, "worker": "reused" if reuse else "fresh", "wall_ms": wall_ms,
            "kernel_work_ms": work, "overhead_ms": wall_ms - work,
            "overhead_pct": 100.0 * (wall_ms - work) / work if work > 0 else None,
            "timed_cases": len(result.timings),
            "smallest_candidate_ms": min(medians) if medians else None,
            "timer": result.timing_label}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--op", default="aten.neg")
    parser.add_argument("--candidates", type=int, default=5)
    parser.add_argument("--timed-ops", default=DEFAULT_TIMED_OPS,
                        help="comma-separated operators for the overhead-vs-kernel table "
                             "('' to skip it)")
    args = parser.parse_args()
    fresh = seconds_per_candidate(args.backend, args.op, args.candidates, reuse=False)
    reused = seconds_per_candidate(args.backend, args.op, args.candidates, reuse=True)
    print(f"backend {args.backend}, op {args.op}, {args.candidates} candidates each")
    print(render_table(["worker", "s per candidate"],
                       [["fresh per candidate", f"{fresh:.3f}"], ["reused", f"{reused:.3f}"],
                        ["saved by reuse", f"{fresh - reused:.3f}"]]))
    ops = [op for op in args.timed_ops.split(",") if op]
    if not ops:
        return
    rows = [timed_overhead(args.backend, op, reuse) for op in ops for reuse in (False, True)]
    print(f"\noverhead against the kernel work the timer measured (target <= "
          f"{TARGET_OVERHEAD_PCT:g} % for kernels of {KERNEL_FLOOR_MS * 1e3:g} us and more)")
    table = []
    for row in rows:
        big = (row["smallest_candidate_ms"] or 0) >= KERNEL_FLOOR_MS
        pct = row["overhead_pct"]
        verdict = ("-" if pct is None else
                   ("yes" if pct <= TARGET_OVERHEAD_PCT else "no") if big else "(< 50 us)")
        table.append([row["op"], row["worker"], row["timed_cases"],
                      f"{row['smallest_candidate_ms']:.4g}", f"{row['wall_ms']:.1f}",
                      f"{row['kernel_work_ms']:.1f}", f"{row['overhead_ms']:.1f}",
                      "-" if pct is None else f"{pct:.0f}", verdict])
    print(render_table(["op", "worker", "timed cases", "smallest cand ms", "wall ms",
                        "kernel work ms", "overhead ms", "overhead %", "within target"], table))
    print(f"timer: {rows[0]['timer']}")


if __name__ == "__main__":
    main()
