"""Operators per minute of a reference sweep, and where a candidate's time goes.

Two modes:

``python benchmarks/sweep_throughput.py --backend cpu [--source aten ...] [--limit N]``
    runs ``kgb run --method reference`` (a real subprocess, a fresh store, seed 0, timing on
    unless ``--no-timing``) over every operator of the sources (all of them by default) and
    prints operators per minute, the wall time against the evaluation time the store recorded
    per result (what is left is process start, plugin loading, the store), and the slowest
    operators.

``python benchmarks/sweep_throughput.py --backend cpu --profile 40 [--repeat-op aten.neg]``
    evaluates the reference kernels of 40 operators spread over the sources through a judge
    *in this process* (``Judge``), under cProfile, and prints the functions with the most
    cumulative and own time: the per-candidate cost to remove. The runners stay processes of
    their own (candidate code never runs in a judge), so their work shows as waiting. With
    ``--repeat-op``, one operator's reference kernel that many times, after a warm-up: the
    per-candidate cost table's "same candidate" row (``worker_overhead.py``), taken apart.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def spread(op_ids: list[str], count: int) -> list[str]:
    """``count`` operators spread evenly over the list (so every source and family shows); all
    of them where ``count`` is 0 (no limit)."""
    if not count or count >= len(op_ids):
        return op_ids
    step = len(op_ids) / count
    return [op_ids[int(i * step)] for i in range(count)]


def sweep(args: argparse.Namespace) -> None:
    from kgb_core.plugins import load_registry
    from kgb_core.report import render_table

    registry = load_registry()
    specs = [s for s in registry.operators(args.source or []) if s.reference_kernel is not None]
    op_ids = spread([s.id for s in specs], args.limit)
    with tempfile.TemporaryDirectory() as scratch:
        # A kept store (--db) may hold earlier runs: this sweep is always a new run in it, and
        # only that run's rows are counted.
        db = Path(args.db) if args.db else Path(scratch) / "throughput.db"
        command = [sys.executable, "-m", "kgb_core", "run", "--method", "reference",
                   "--backend", args.backend, "--seed", "0", "--db", str(db)]
        if args.no_timing:
            command.append("--no-timing")
        for op_id in op_ids:
            command += ["--op", op_id]
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, cwd=str(REPO),
                              env={**os.environ, "PYTHONPATH": os.pathsep.join(
                                  [str(REPO), os.environ.get("PYTHONPATH", "")])})
        wall = time.perf_counter() - started
        if done.returncode != 0:
            raise SystemExit(f"kgb run exited {done.returncode}:\n{done.stderr[-3000:]}")
        conn = sqlite3.connect(db)
        rows = conn.execute("SELECT op, source, verdict, duration_s FROM results WHERE run_id = "
                            "(SELECT MAX(id) FROM runs)").fetchall()
        conn.close()
    evaluated = sum(r[3] or 0.0 for r in rows)
    passed = sum(1 for r in rows if r[2] == "pass")
    by_source: dict[str, list[float]] = {}
    for _op, source, _verdict, duration in rows:
        by_source.setdefault(source, []).append(duration or 0.0)
    print(f"backend {args.backend}, {len(rows)} operators ({passed} pass), timing "
          f"{'off' if args.no_timing else 'on'}, seed 0")
    table = [["all", len(rows), f"{wall:.1f}", f"{60.0 * len(rows) / wall:.1f}",
              f"{wall / len(rows):.2f}", f"{evaluated:.1f}",
              f"{wall - evaluated:.1f}"]]
    for source, durations in sorted(by_source.items()):
        table.append([source, len(durations), "-", "-", f"{sum(durations) / len(durations):.2f}",
                      f"{sum(durations):.1f}", "-"])
    print(render_table(["sources", "operators", "wall s", "operators/min", "s/operator",
                        "evaluation s (stored)", "rest s (start, plugins, store)"], table))
    slowest = sorted(rows, key=lambda r: -(r[3] or 0.0))[:args.top]
    print("\nslowest operators")
    print(render_table(["op", "verdict", "evaluation s"],
                       [[op, verdict, f"{duration:.2f}"] for op, _s, verdict, duration in slowest]))
    if args.json:
        Path(args.json).write_text(json.dumps({
            "backend": args.backend, "operators": len(rows), "passed": passed, "wall_s": wall,
            "operators_per_minute": 60.0 * len(rows) / wall, "evaluation_s": evaluated,
            "timing": not args.no_timing}, indent=2))


def profile(args: argparse.Namespace) -> None:
    from kgb_core.plugins import load_registry
    from kgb_core.report import render_table

    registry = load_registry()
    backend = registry.backend(args.backend)
    for key, value in backend.worker_environment().items():
        os.environ.setdefault(key, value)
    if os.environ.get("TRITON_INTERPRET") and "triton" in sys.modules:
        raise SystemExit("triton was imported before TRITON_INTERPRET was set")
    from kgb_core.evaluation.judge import Judge

    judge = Judge(backend, registry)
    if args.repeat_op:  # the cost table's "same candidate": one operator, warmed up first
        chosen = [registry.operator(args.repeat_op)] * args.profile
        judge.evaluate_spec(chosen[0], chosen[0].reference_kernel(), seeds=[0],
                            timing=not args.no_timing)
    else:
        specs = [s for s in registry.operators(args.source or [])
                 if s.reference_kernel is not None]
        chosen = [registry.operator(op_id)
                  for op_id in spread([s.id for s in specs], args.profile)]
    profiler = cProfile.Profile()
    verdict_counts: dict[str, int] = {}
    from kgb_core.evaluation.runners import RunnerChannel, RunnerTemplate

    from phase_clock import PhaseClock

    # The judge's side: the runner's own work shows inside the requests (with the exchange
    # files both ways); the rest is the judge drawing inputs, running references, comparing.
    phases = (PhaseClock().watch(RunnerTemplate, "spawn", "fork a runner")
              .watch(RunnerChannel, "wait_ready", "runner start (device setup)")
              .watch(RunnerChannel, "request", lambda a: f"request {a[1].get('op')}")
              .watch(RunnerChannel, "finish", "runner exit (asked, waited for)")
              .watch(RunnerChannel, "close", "channel closed, runner reaped"))
    started = time.perf_counter()
    with phases:
        profiler.enable()
        for spec in chosen:
            result = judge.evaluate_spec(spec, spec.reference_kernel(), seeds=[0],
                                         timing=not args.no_timing)
            verdict_counts[result.verdict] = verdict_counts.get(result.verdict, 0) + 1
        profiler.disable()
    wall = time.perf_counter() - started
    judge.close()
    print(f"profiled {len(chosen)} candidates through an in-process judge on {args.backend} "
          f"(each runner's own work shows as the judge waiting on its channel): {wall:.1f} s "
          f"({wall / len(chosen):.2f} s each), verdicts {verdict_counts}")
    print(render_table(["phase (judge's side)", "times", "s, all", "s per candidate"],
                       phases.rows(len(chosen), wall=wall, nested=("request exit",))),
          flush=True)
    for order in ("cumulative", "tottime"):
        stream = io.StringIO()
        stats = pstats.Stats(profiler, stream=stream)
        stats.strip_dirs().sort_stats(order).print_stats(args.top)
        print(f"\n== by {order}")
        print("\n".join(line for line in stream.getvalue().splitlines()[6:] if line.strip()))
    if args.dump:
        profiler.dump_stats(args.dump)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--source", action="append", help="only these sources (repeatable)")
    parser.add_argument("--limit", type=int, default=0,
                        help="sweep only this many operators, spread over the sources")
    parser.add_argument("--no-timing", action="store_true")
    parser.add_argument("--profile", type=int, default=0,
                        help="profile this many candidates in-process instead of sweeping")
    parser.add_argument("--repeat-op", help="with --profile: this operator's reference kernel "
                                            "each time, after one evaluation to warm up")
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--dump", help="write the cProfile stats here")
    parser.add_argument("--json", help="write the sweep's numbers here")
    parser.add_argument("--db", help="keep the sweep's results in this store (default: a "
                                     "temporary one)")
    args = parser.parse_args()
    (profile if args.profile else sweep)(args)


if __name__ == "__main__":
    main()
