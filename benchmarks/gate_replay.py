"""A measured sweep's jobs replayed through the device's memory gate, on this machine's clock.

``python benchmarks/gate_replay.py`` takes the jobs of an eight-worker H100 sweep
(``results/h100-full-sweep-d0799ab-rows.txt``: each operator's evaluation seconds, the need the
gate admitted it by, and the judge's and runner's device peaks) and runs them again through
kgb's own gate (``devices._DeviceGate``, the code a sweep's pool uses), one thread a worker,
each job sleeping its measured seconds (scaled down by ``--scale``) while it holds its need.
It prints the replayed wall and the workers' waits for memory, by admission rule and by where
the needs come from:

- ``in order``: every job admitted in the order it came (kgb before 4b3ae03);
- ``passing``: a job that fits may pass the first one waiting for its first
  ``PASS_PATIENCE_S`` (what kgb does now);
- needs as that sweep's model read them, as the model reads them now, and as a later sweep
  reads them from the stored peaks (``peak_store.py``: the peak with ``OBSERVED_MARGIN``).

What it leaves out, so read it as an estimate of the gate's part, not as a sweep's rate: a
job's seconds are held fixed, where on the GPU they hold waits for the device's lock that grow
with the jobs sharing it (every timing holds the device alone); the first row, which replays
the sweep as it ran, says how far the replay is from that sweep's wall (471 s).
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from full_sweep import _interleaved  # noqa: E402  (this folder: a script's own is on its path)
from kgb_core.evaluation import devices  # noqa: E402
from kgb_core.evaluation.job_memory import (OBSERVED_MARGIN, modelled_bytes,  # noqa: E402
                                            shared_capacity)

GIB = 1 << 30
ROWS = Path(__file__).parent / "results" / "h100-full-sweep-d0799ab-rows.txt"


def read_jobs(path: Path) -> list[dict[str, Any]]:
    """Each row's operator, seconds, peaks and the need that sweep admitted it by: the rows
    d0799ab's sweep wrote, or ``full_sweep.py --rows``'s (``operator_rows``: with each job's
    wait for memory and no need, ``then`` None). A row whose peaks were not counted (a job
    cut at the deadline) is left out."""
    jobs = []
    lines = path.read_text().splitlines()
    # full_sweep's own rows name their columns in one header line, memory_wait_s among them.
    written = next((line.lstrip("# ").split() for line in lines
                    if line.startswith("#") and "memory_wait_s" in line), None)
    for line in lines:
        if line.startswith("#") or not line.strip():
            continue
        fields = line.split()
        if written is not None:
            row = dict(zip(written, fields))
            if row.get("peak_judge_gib", "-") == "-" or row.get("peak_runner_gib", "-") == "-":
                continue
            jobs.append({"op": row["op"], "seconds": float(row["duration_s"]),
                         "lock_wait": float(row["device_wait_s"]),
                         "peak": (float(row["peak_judge_gib"])
                                  + float(row["peak_runner_gib"])) * GIB,
                         "then": None})
            continue
        jobs.append({"op": fields[0], "seconds": float(fields[2]),
                     "lock_wait": float(fields[4]),
                     "peak": (float(fields[6]) + float(fields[7])) * GIB,
                     "then": float(fields[8]) * GIB})
    return jobs


def in_sweep_order(jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The order the sweep handed them out (``full_sweep._interleaved``)."""
    by_op = {str(job["op"]): job for job in jobs}
    return [by_op[op] for op in _interleaved(list(by_op))]


def replay(jobs: list[dict[str, Any]], needs: list[int], workers: int, capacity: int,
           patience: float, scale: float) -> tuple[float, float, int]:
    """Wall seconds, seconds waited for memory, jobs admitted ahead: on the measured clock."""
    gate = devices._DeviceGate()
    gate.capacity = capacity
    gate.pass_patience_s = patience / scale
    queue = list(zip(jobs, needs))
    lock = threading.Lock()

    def work() -> None:
        while True:
            with lock:
                if not queue:
                    return
                job, need = queue.pop(0)
            with gate.shared(need):
                time.sleep(float(job["seconds"]) / scale)

    began = time.monotonic()
    threads = [threading.Thread(target=work) for _ in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return (time.monotonic() - began) * scale, gate.memory_waited_s * scale, gate.passed


def bound(jobs: list[dict[str, Any]], needs: list[int], workers: int, capacity: int) -> float:
    """The least wall any admission rule could reach: the workers' seconds spread evenly, or
    the jobs' bytes times seconds packed into the capacity with none of it left free (a job
    larger than the capacity counts as the capacity: it runs alone)."""
    seconds = [float(j["seconds"]) for j in jobs]
    packed = sum(min(need, capacity) * s for need, s in zip(needs, seconds)) / capacity
    return max(sum(seconds) / workers, packed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", default=str(ROWS))
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--scale", type=float, default=40.0,
                        help="measured seconds per replayed second")
    parser.add_argument("--peak-margin", type=float, default=OBSERVED_MARGIN,
                        help="stored peaks times this (kgb's OBSERVED_MARGIN by default)")
    parser.add_argument("--without-lock-waits", action="store_true",
                        help="each job's seconds less its waits for the device's lock (the "
                             "other judges' timings), during which it held its memory idle")
    parser.add_argument("--device-gib", type=float, nargs="+", default=[79.2, 139.8],
                        help="device sizes to replay on (H100 80GB, H200)")
    args = parser.parse_args()

    from kgb_core.plugins import load_registry

    registry = load_registry()
    quirks = registry.backend("nvidia").quirks
    jobs = in_sweep_order(read_jobs(Path(args.rows)))
    if args.without_lock_waits:
        jobs = [{**j, "seconds": float(j["seconds"]) - float(j["lock_wait"])}
                for j in jobs]
    needs = {
        **({"that sweep's model": [int(j["then"]) for j in jobs]}
           if all(j["then"] is not None for j in jobs) else {}),
        "the model now": [modelled_bytes(registry.operator(str(j["op"])), quirks) for j in jobs],
        "stored peaks": [int(float(j["peak"]) * args.peak_margin) for j in jobs],
    }
    work = sum(float(j["seconds"]) for j in jobs)
    print(f"{len(jobs)} jobs from {Path(args.rows).name}, {work:.0f} s of evaluation in all"
          f"{' less the waits for the device lock' if args.without_lock_waits else ''}, "
          f"{args.workers} workers (at least {work / args.workers:.0f} s with no waits); "
          f"replayed at 1/{args.scale:g} of the measured clock")
    print("bound s: no schedule beats the larger of the work over the workers and the needs'"
          " GiB-seconds over the device's shared capacity")
    print(f"{'device':>8}  {'needs from':<20} {'admitted':<10} {'wall s':>7} {'bound s':>8} "
          f"{'waited s':>9} {'ahead':>6}")
    for gib in args.device_gib:
        capacity = shared_capacity(int(gib * GIB), args.workers)
        for name, values in needs.items():
            for rule, patience in (("in order", 0.0), ("passing", devices.PASS_PATIENCE_S)):
                wall, waited, ahead = replay(jobs, values, args.workers, capacity, patience,
                                             args.scale)
                print(f"{gib:>6.1f}G  {name:<20} {rule:<10} {wall:>7.0f} "
                      f"{bound(jobs, values, args.workers, capacity):>8.0f} {waited:>9.0f} "
                      f"{ahead:>6}", flush=True)


if __name__ == "__main__":
    main()
