"""Every probe draw of every reference kernel: does each one pass?

The judge's rewritten-inputs probe and ghost replay each take one (case, dtype) of the probe
pool at random (``kgb_core.evaluation.checker.probe_pool``), so a reference sweep tries one
draw per operator and a draw on which a correct kernel fails shows up only now and then: the
scaled_dot_product_attention reference failed CI at fcc2ab8 when the probe drew
causal_head_dim_24 in bf16, one draw in twelve. This audit evaluates each reference once per
entry of its pool, with that entry forced (``EvaluationSettings.probe_draw``), and lists every
evaluation that did not pass.

``python benchmarks/probe_draw_audit.py --backend cpu [--source aten ...] [--op ID ...]
[--workers 2]``; the last line reads ``operators N, evaluations M, not passed K, wall S s``.
About 2,850 evaluations for the 305 operators: some 25 minutes with two workers on a 2-core
CPU machine.
"""

from __future__ import annotations

import argparse
import queue
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kgb_core.evaluation.checker import probe_pool, runnable_cases  # noqa: E402
from kgb_core.evaluation.evaluator import EvaluationSettings, Evaluator  # noqa: E402
from kgb_core.plugins import load_registry  # noqa: E402


def _jobs(registry, backend, sources: list[str], ops: list[str]) -> list[tuple[str, int, str]]:
    """(operator id, draw, label of the drawn case) for every entry of every pool."""
    quirks = backend.quirks
    specs = ([registry.operator(op) for op in ops] if ops
             else registry.operators(sources=sources))
    jobs = []
    for spec in specs:
        runnable = runnable_cases(spec, quirks)
        if not runnable:
            continue
        for draw, (case, dtype) in enumerate(probe_pool(spec, runnable)):
            jobs.append((spec.id, draw, f"{case.name}/{dtype}"))
    return jobs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--source", action="append", default=[])
    parser.add_argument("--op", action="append", default=[])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout-s", type=float, default=600.0)
    args = parser.parse_args()

    registry = load_registry()
    backend = registry.backend(args.backend)
    jobs = _jobs(registry, backend, args.source, args.op)
    operators = len({op for op, _, _ in jobs})
    print(f"# probe draw audit: {operators} operators, {len(jobs)} evaluations, backend "
          f"{args.backend}, {args.workers} workers", flush=True)
    todo: queue.Queue = queue.Queue()
    for job in sorted(jobs, key=lambda job: job[1]):  # draw by draw
        todo.put(job)
    failures: list[tuple[str, int, str, str, str]] = []
    lock = threading.Lock()
    done = [0]
    started = time.monotonic()

    def work() -> None:
        # One evaluator at a time, for one draw (settings are an evaluator's): the jobs come
        # draw by draw, so each thread starts a new one about once per draw.
        evaluator, its_draw = None, None
        try:
            while True:
                try:
                    op, draw, label = todo.get_nowait()
                except queue.Empty:
                    return
                if draw != its_draw:
                    if evaluator is not None:
                        evaluator.close()
                    evaluator, its_draw = Evaluator.for_backend(backend, EvaluationSettings(
                        seeds=(0,), timeout_s=args.timeout_s, timing=False,
                        probe_draw=draw)), draw
                result = evaluator.evaluate(op, registry.operator(op).reference_kernel())
                with lock:
                    done[0] += 1
                    if result.verdict != "pass":
                        failures.append((op, draw, label, result.verdict, result.message))
                        print(f"NOT PASSED {op} draw {draw} ({label}): {result.verdict}: "
                              f"{result.message[:400]}", flush=True)
                    if done[0] % 100 == 0:
                        print(f"[{done[0]}/{len(jobs)}] {time.monotonic() - started:.0f} s",
                              flush=True)
        finally:
            if evaluator is not None:
                evaluator.close()

    threads = [threading.Thread(target=work) for _ in range(max(1, args.workers))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.monotonic() - started
    for op, draw, label, verdict, message in sorted(failures):
        print(f"{op}\tdraw {draw}\t{label}\t{verdict}\t{message[:200]}")
    print(f"operators {operators}, evaluations {len(jobs)}, not passed {len(failures)}, "
          f"wall {wall:.0f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
