"""Per-candidate cost of a fresh runner, and the harness's overhead against the kernel work it times.

``python benchmarks/worker_overhead.py --backend cpu --candidates 5`` prints two tables.

1. **Per-candidate cost**: seconds per candidate through one long-lived judge, each candidate in
   a fresh runner forked from the pre-imported template, in the OS sandbox (as every sweep
   runs); the same without the sandbox (``KGB_SANDBOX=none``); and with a fresh judge per
   candidate (``worker_reuse=False``: torch imported twice per candidate, judge and template).
   Two workloads: the same candidate (``--op``'s reference kernel) again and again, and
   ``--distinct`` operators' reference kernels once each (a sweep's reality: every candidate's
   kernels compile anyway). ``--baseline-tree DIR`` adds the same rows measured with an older kgb
   checkout (``git worktree add DIR b11daf7``: the worker that ran candidates in its own process,
   reused or fresh), run from that tree in a subprocess, so one table compares them.

2. **Overhead against kernel time** (``--timed-ops``, default a handful of ATen operators whose
   large cases run 50 us and more on a GPU): each operator's reference kernel evaluated *with*
   timing, fresh and reused judge. For one evaluation,
   - *kernel work* is what the timer measured: over every timed case, candidate and baseline,
     the median times the repetitions (``sum(median_ms * repetitions)``);
   - *overhead* is the evaluation's wall time minus that kernel work: judge start (fresh),
     runner start, correctness trials, anti-cheat probes, inputs, warm-ups, cache flushes, IPC;
   - *overhead %* is overhead over kernel work, the issue's target being at most 5 % for kernels
     of 50 us and more. A row whose candidate median is under 50 us is shown, but marked.

On the CPU backend the kernels run in Triton's interpreter: the second table then describes the
interpreter's pipeline, not a GPU's.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

from kgb_core.evaluation.evaluator import EvaluationSettings, Evaluator
from kgb_core.plugins import load_registry
from kgb_core.report import render_table

DEFAULT_TIMED_OPS = "aten.add,aten.softmax,aten.mm,aten.sum,aten.layer_norm"
DEFAULT_DISTINCT = "aten.relu,aten.add,aten.mul,aten.exp,aten.abs,aten.sigmoid"
KERNEL_FLOOR_MS = 0.05
TARGET_OVERHEAD_PCT = 5.0

# Runs in a subprocess, in this tree or in a baseline tree: seconds per candidate, as JSON, for
# the distinct operators (each once, from a fresh judge: what a sweep's first candidates pay)
# and then the same candidate repeated (after one warm-up, as a warm worker would have it). One
# process measures both, so each setup starts its judge and runner template once.
_MEASURE = """
import json, sys, time
try:
    from kgb_core.evaluation.evaluator import EvaluationSettings, Evaluator
except ImportError:  # a tree from before evaluation/pool.py was renamed
    from kgb_core.evaluation.pool import EvaluationSettings, Evaluator
from kgb_core.plugins import load_registry
backend_name, op, distinct, repeat, reuse = sys.argv[1], sys.argv[2], sys.argv[3].split(","), int(sys.argv[4]), sys.argv[5] == "1"
registry = load_registry()
settings = EvaluationSettings(seeds=(0,), timing=False, worker_reuse=reuse)


def per_candidate(evaluator, sources):
    started = time.perf_counter()
    for op_id, source in sources:
        result = evaluator.evaluate(op_id, source)
        if not result.passed:
            raise SystemExit(f"{op_id}: {result.verdict}: {result.message}")
    return (time.perf_counter() - started) / len(sources), result


with Evaluator.for_backend(registry.backend(backend_name), settings) as evaluator:
    info = evaluator.start() if reuse else {}
    apart, _ = per_candidate(evaluator, [(o, registry.operator(o).reference_kernel())
                                         for o in distinct])
    same_source = (op, registry.operator(op).reference_kernel())
    evaluator.evaluate(*same_source)  # compiled once, as a warm worker would have it
    same, result = per_candidate(evaluator, [same_source] * repeat)
print(json.dumps({"same": same, "apart": apart,
                  "sandbox": getattr(result, "sandbox", "") or "in-process"}))
"""


def seconds_per_candidate(backend_name: str, op: str, distinct: list[str], repeat: int,
                          reuse: bool, tree: str | None = None,
                          env: dict[str, str] | None = None) -> dict:
    """Measured in a subprocess: of this tree, or of ``tree`` (an older kgb checkout)."""
    environment = {**os.environ, **(env or {})}
    if tree:
        environment["PYTHONPATH"] = os.path.abspath(tree)
    done = subprocess.run([sys.executable, "-c", _MEASURE, backend_name, op, ",".join(distinct),
                           str(repeat), "1" if reuse else "0"], capture_output=True, text=True,
                          env=environment, cwd=os.path.abspath(tree) if tree else None)
    if done.returncode != 0:
        raise SystemExit(f"measuring {op} and {distinct} in {tree or 'this tree'} failed:\n"
                         f"{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def cost_rows(args: argparse.Namespace) -> list[list[str]]:
    distinct = [op for op in args.distinct.split(",") if op]
    setups = [("this kgb: judge reused, fresh runner per candidate", None, True, {})]
    if args.baseline_tree:  # second: the comparison the target is about
        setups += [("baseline tree: worker reused", args.baseline_tree, True, {})]
    setups += [("this kgb, KGB_SANDBOX=none", None, True, {"KGB_SANDBOX": "none"}),
               ("this kgb: fresh judge per candidate", None, False, {})]
    if args.baseline_tree:
        setups += [("baseline tree: fresh worker per candidate", args.baseline_tree, False, {})]
    if args.skip_fresh:  # the seconds-long rows, when time is short (a device call)
        setups = [setup for setup in setups if setup[2]]
    rows = []
    for label, tree, reuse, env in setups:
        measured = seconds_per_candidate(args.backend, args.op, distinct, args.candidates, reuse,
                                         tree, env)
        rows.append([label, measured["sandbox"], f"{measured['same']:.3f}",
                     f"{measured['apart']:.3f}"])
        # A line as each setup is measured, so a run cut short still says what it measured.
        print("measured | " + " | ".join(rows[-1]), flush=True)
    return rows


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
    return {"op": op_id, "worker": "judge reused" if reuse else "fresh judge", "wall_ms": wall_ms,
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
    parser.add_argument("--distinct", default=DEFAULT_DISTINCT,
                        help="comma-separated operators whose reference kernels are evaluated "
                             "once each")
    parser.add_argument("--baseline-tree", default=None,
                        help="an older kgb checkout to measure the same rows with")
    parser.add_argument("--skip-fresh", action="store_true",
                        help="leave out the rows with a fresh judge or worker per candidate")
    parser.add_argument("--timed-ops", default=DEFAULT_TIMED_OPS,
                        help="comma-separated operators for the overhead-vs-kernel table "
                             "('' to skip it)")
    args = parser.parse_args()
    print(f"backend {args.backend}; same candidate: {args.op} x {args.candidates} (after one "
          f"warm-up); distinct: {args.distinct}")
    print(render_table(["setup", "sandbox", "s per candidate (same)",
                        "s per candidate (distinct)"], cost_rows(args)))
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
